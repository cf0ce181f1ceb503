//! A deferred card's detached runner: it waits for the answer after the turn ended,
//! writes the decision row, runs the call (or the line as edited on the card, unless
//! the gate calls that dangerous), completes the pending row in place and announces
//! the end with a `work_done` of its own run_id.

use super::*;

/// Everything a detached deferred runner needs; it owns its parts.
pub(super) struct DeferredRun {
    pub(super) engine: Arc<Engine>,
    pub(super) tool: Arc<dyn Tool>,
    pub(super) args: Value,
    pub(super) ctx: ToolContext,
    pub(super) row: StepRow,
    pub(super) line: String,
    pub(super) key: Option<String>,
    pub(super) classified: Classified,
    pub(super) wait: Option<CardWait>,
    /// The card's mark as waiting in the store, dropped once its decision is audited.
    pub(super) underway: Option<Underway>,
    pub(super) released: Option<oneshot::Receiver<()>>,
    /// Fired by cancel_work: a runner still waiting on its card gives up.
    pub(super) cancel: tokio_util::sync::CancellationToken,
    /// Counts this runner as waiting until its card is settled.
    pub(super) waiting: Option<crate::engine::deferred::WaitingRunner>,
}

impl DeferredRun {
    fn settle(&self, sentence: String) {
        if let Some(k) = &self.key {
            self.engine
                .deferred
                .set(self.ctx.session(), k, KeyState::Settled(sentence));
        }
    }

    async fn finish_row(&self, out: &ToolOutput, outcome: Outcome) -> String {
        let mut row = self.row.clone();
        let (full, clipped) = row_full_output(self.tool.spec().behaviour.output_cap, out);
        let result = row_result(row.step_kind, out, outcome);
        row.outcome = Some(outcome);
        row.ending = out.refusal();
        row.result = Some(result.clone());
        row.full_output = Some(full);
        row.clipped = clipped;
        self.engine.complete_step(self.ctx.session(), &row).await;
        self.session_emit(None, Frame::Step(row)).await;
        result
    }

    async fn session_emit(&self, run_id: Option<&str>, frame: Frame) {
        self.engine
            .session(self.ctx.session())
            .await
            .emit(run_id, frame);
    }

    pub(super) async fn run(mut self) {
        if let Some(released) = self.released.take() {
            let _ = released.await; // the loop has closed the row as pending
        }
        let Some(wait) = self.wait.take() else { return };
        let cancel = self.cancel.clone();
        let (end, cancelled) = tokio::select! {
            end = wait.wait() => (end, false),
            // Dropping the wait settles the card as dismissed.
            _ = cancel.cancelled() => (AskEnd::Dismissed, true),
        };
        self.waiting = None; // the card is settled: no longer waiting
        let spec = self.tool.spec();
        let (name, risk) = (spec.name.clone(), spec.risk);
        let (approved, approver, detail) = approver_of(&end);
        audit(
            &self.engine,
            self.ctx.session(),
            &name,
            &self.line,
            risk,
            approved,
            approver,
            &detail,
        )
        .await;
        drop(self.underway.take());
        if let Some(ending) = end.ending() {
            let sentence = refusal_sentence(ending, &name, DEFERRED_WINDOW);
            self.settle(sentence.clone());
            let out = ToolOutput::refused_with(ending, sentence.clone());
            self.finish_row(&out, Outcome::Refused).await;
            if cancelled {
                return; // a requested stop announces nothing
            }
            let summary = format!("'{name}' did not run ({ending:?}). {sentence}");
            self.announce(true, summary).await;
            return;
        }
        let mut edit_note = String::new();
        match edit_of(&end, &self.line) {
            // Edited on the card: a line the gate does not call dangerous runs instead of
            // hers (an "always" is not saved for it); a dangerous one never runs on that
            // answer, and with nobody waiting to be asked again it is refused.
            Some(new) => {
                let by = match &end {
                    AskEnd::Decided { by, .. } => by.clone(),
                    _ => String::new(),
                };
                let workspace = self.ctx.paths.workspace.clone();
                if let Some((new_args, class)) =
                    regated(self.tool.as_ref(), &self.args, &new, &workspace)
                {
                    if class.dangerous_label().is_some() {
                        let sentence = format!(
                            "'{name}' was edited on its card by {by} into a line the gate calls \
                             dangerous, so NOTHING ran. Ask the person what they want run."
                        );
                        self.settle(sentence.clone());
                        self.finish_row(&ToolOutput::refused(sentence.clone()), Outcome::Refused)
                            .await;
                        self.announce(true, format!("'{name}' did not run. {sentence}"))
                            .await;
                        return;
                    }
                    self.args = new_args;
                    self.row.action = self.tool.action_line(&self.args);
                    edit_note = format!(", EDITED on the card by {by} into exactly: {new}");
                    self.line = new;
                }
            }
            None => save_grant(&self.engine, &end, &self.line, &self.classified).await,
        }
        if let AskEnd::Decided { by, .. } = &end {
            self.ctx.approved_by = Some(by.clone());
        }
        // Settled before the runner starts, so a re-emission mid-run cannot run it twice.
        self.settle(format!(
            "This exact '{name}' request was approved and is running or has run; its result is \
             announced separately. Do NOT run it again."
        ));
        let budget = tool_budget(spec, &self.args, self.ctx.turn.channel, Some(false));
        let running = start_run(&self.engine, self.ctx.session(), &name, &self.line, risk).await;
        let out =
            match tokio::time::timeout(budget, self.tool.run(self.args.clone(), &self.ctx)).await {
                Ok(out) => out,
                Err(_) => ToolOutput::exited(
                    124,
                    format!(
                        "'{name}' ran past its budget of {} s and was stopped.",
                        budget.as_secs()
                    ),
                ),
            };
        let outcome = outcome_of(&out);
        finish_run(running, &out.ended, outcome).await;
        let result = self.finish_row(&out, outcome).await;
        let summary = if out.nothing_ran() {
            format!("'{name}' was approved but could not start, so nothing ran: {result}")
        } else {
            format!(
                "'{name}' ran after approval{edit_note} ({}): {result}",
                if outcome == Outcome::Ok {
                    "ok"
                } else {
                    "failed"
                }
            )
        };
        self.settle(format!(
            "This exact '{name}' request ALREADY ran after approval ({summary}). Do NOT run it again."
        ));
        self.announce(outcome == Outcome::Ok, summary).await;
    }

    /// Announce the end through a work_done frame with this runner's own run_id.
    async fn announce(&self, ok: bool, summary: String) {
        let run_id = format!("{:08x}", rand::random::<u32>());
        // Its announce speaks for the person whose turn drew the card.
        self.engine.jobs.started_by(&run_id, &self.ctx.turn.person);
        self.session_emit(Some(&run_id), Frame::WorkDone { ok, summary })
            .await;
    }
}
