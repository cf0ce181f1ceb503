//! The gate inside the loop: classify an exec action, route it (allowlist → grants →
//! auto-safe → ask), ask inline or defer when the turn cannot block, save "always"
//! answers, and write the audit trail (one row per decision, one per run). A deferred
//! card's wait and run are [`deferred_run`].

mod deferred_run;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::tools::{Ended, Gating, MayAnswer, Prepared, Tool, ToolContext, ToolOutput};
use kotoba_core::protocol::{
    Answerers, Card, CardKind, Decision, Ending, Frame, Outcome, Phase, Risk, StepRow,
};
use kotoba_core::turn::TurnContext;
use kotoba_store::{Approver, GrantScope};

use super::approval::policy::{route, Route};
use super::approval::{refusal_sentence, AskEnd, CardWait};
use super::core::{gate_action, Edit, GateEnd};
use super::deferred::{awaiting_sentence, dedupe_key, deferred_sentence, KeyState};
use super::inflight::{Running, Underway};
use super::output::{outcome_of, row_full_output, row_result};
use super::transport::{approval_window, el_agent_turn, tool_budget, DEFERRED_WINDOW};
use super::turn::Driver;
use super::Engine;
use deferred_run::DeferredRun;
use kotoba_gate::{classify, Decision as Classified};

/// How many times one call's card may come back because its edit was dangerous.
const MAX_EDIT_ROUNDS: usize = 4;

/// The arguments of `args` with `line` in the field the tool's gating reads.
fn with_line(tool: &dyn Tool, args: &Value, line: &str) -> Option<Value> {
    let field = match tool.spec().behaviour.gating {
        Gating::Command(arg) | Gating::Code(arg) => arg,
        Gating::ByRisk | Gating::Card => return None,
    };
    let mut args = args.clone();
    args.as_object_mut()?
        .insert(field.to_string(), Value::String(line.to_string()));
    Some(args)
}

/// The line the person edited on the card, when it is not blank and not `asked`.
fn edit_of(end: &AskEnd, asked: &str) -> Option<String> {
    match end {
        AskEnd::Decided { edited, .. } => edited
            .as_deref()
            .map(str::trim)
            .filter(|e| !e.is_empty() && *e != asked.trim())
            .map(str::to_string),
        _ => None,
    }
}

/// An edited `line` put through the gate again: the call's arguments with it in place
/// and how the gate reads it; `None` when the tool has no line to edit.
fn regated(
    tool: &dyn Tool,
    args: &Value,
    line: &str,
    workspace: &std::path::Path,
) -> Option<(Value, Classified)> {
    let args = with_line(tool, args, line)?;
    let (_, action) = gate_action(tool, &args);
    let class = classify(&action, workspace, true);
    Some((args, class))
}

/// The sentence the model is told when the person declined with a reason.
fn declined_with_reason(tool: &str, reason: &str) -> String {
    format!(
        "The person DECLINED '{tool}' on the approval card, so NOTHING ran and there is no result. \
         Their reason, in their own words: \"{reason}\". Take it into account: do not retry the same \
         thing or route around it; answer them in the first person and in their language."
    )
}

fn risk_word(risk: Risk) -> &'static str {
    match risk {
        Risk::Read => "read",
        Risk::Write => "write",
        Risk::Exec => "exec",
        Risk::Network => "network",
    }
}

/// The audit approver of an ask that ended.
fn approver_of(end: &AskEnd) -> (bool, Approver, String) {
    match end {
        AskEnd::Decided {
            decision,
            by,
            via,
            reason,
            edited,
            for_s,
        } => {
            let mut detail = format!("{decision:?} by {by}");
            if !via.is_empty() {
                detail.push_str(&format!(" ({via})"));
            }
            if let Some(s) = for_s {
                detail.push_str(&format!(" for {s} s"));
            }
            if let Some(r) = reason {
                detail.push_str(&format!("; reason: {r}"));
            }
            if let Some(e) = edited {
                detail.push_str(&format!("; edited by {by} to: {e}"));
            }
            (decision.approves(), Approver::User, detail)
        }
        AskEnd::Expired => (
            false,
            Approver::Expired,
            "the card expired unanswered".into(),
        ),
        AskEnd::Unreachable => (false, Approver::Error, "nobody could be asked".into()),
        AskEnd::Dismissed => (false, Approver::Dismissed, "the card went away".into()),
    }
}

/// Record one audit row; a store failure is logged, never a yes.
#[allow(clippy::too_many_arguments)]
async fn audit(
    engine: &Engine,
    session: &str,
    tool: &str,
    line: &str,
    risk: Risk,
    approved: bool,
    approver: Approver,
    detail: &str,
) {
    kotoba_core::metrics::metrics().decision(approver.as_str());
    if let Err(e) = engine
        .store
        .audit(
            session,
            tool,
            line,
            risk_word(risk),
            approved,
            approver,
            detail,
        )
        .await
    {
        tracing::error!("writing the audit trail: {e}");
    }
}

/// Files the `dismissed` decision of an inline card whose turn was dropped while it
/// waited (barge-in, a newer request, shutdown): every gate decision is one audit row
/// (engine.md §6), also when the future never resumes. Disarmed once the ask returns.
struct DismissedIfCut<'a> {
    engine: &'a Engine,
    session: &'a str,
    tool: &'a str,
    line: &'a str,
    risk: Risk,
    armed: bool,
}

impl Drop for DismissedIfCut<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // A drop cannot wait: the row is written on a task of its own, which the
        // process awaits before it exits (`Store::finish_later`).
        kotoba_core::metrics::metrics().decision(Approver::Dismissed.as_str());
        let store = self.engine.store.clone();
        let (session, tool, line) = (
            self.session.to_string(),
            self.tool.to_string(),
            self.line.to_string(),
        );
        let risk = risk_word(self.risk);
        self.engine.store.write_later(async move {
            let written = store
                .audit(
                    &session,
                    &tool,
                    &line,
                    risk,
                    false,
                    Approver::Dismissed,
                    "the card went away: the turn was cut (barge-in or a newer request)",
                )
                .await;
            if let Err(e) = written {
                tracing::error!("writing the audit trail: {e}");
            }
        });
    }
}

/// Save the "always" an answer asked for, when the card offered it.
async fn save_grant(engine: &Engine, end: &AskEnd, line: &str, classified: &Classified) {
    let AskEnd::Decided {
        decision,
        by,
        for_s,
        ..
    } = end
    else {
        return;
    };
    let saved = match decision {
        Decision::AlwaysExact if classified.can_always_exact => {
            engine
                .store
                .add_grant_for(line, GrantScope::Exact, by, *for_s)
                .await
        }
        Decision::AlwaysFamily if classified.can_always => match classified.family.as_deref() {
            Some(family) => {
                engine
                    .store
                    .add_grant_for(family, GrantScope::Family, by, *for_s)
                    .await
            }
            None => Ok(()),
        },
        _ => Ok(()),
    };
    if let Err(e) = saved {
        tracing::error!("saving a grant: {e}");
    }
}

/// The executed row of a run about to start, written before it starts (so a crash
/// mid-run leaves a row saying it reached the machine).
pub(super) async fn start_run(
    engine: &Engine,
    session: &str,
    tool: &str,
    line: &str,
    risk: Risk,
) -> Running {
    Running::start(&engine.store, session, tool, line, risk_word(risk)).await
}

/// Complete a run's row: `executed` or `executed:failed` with its exit code; removed when
/// nothing reached the machine after all (could not start, refused, deferred).
pub(super) async fn finish_run(run: Running, ended: &Ended, outcome: Outcome) {
    let exit_code = match ended {
        Ended::Ok { exit_code } | Ended::Failed { exit_code } => *exit_code,
        _ => {
            run.finish(None).await;
            return;
        }
    };
    let approver = match outcome == Outcome::Failed {
        true => Approver::ExecutedFailed,
        false => Approver::Executed,
    };
    let detail = exit_code.map(|c| format!("exit {c}")).unwrap_or_default();
    run.finish(Some((approver, &detail))).await;
}

/// What one card shows as its action and who else may answer it.
#[derive(Clone)]
pub(super) struct CardFor {
    /// The action the card lists (the exact line, or a carded tool's own listing).
    action: String,
    /// Who else may answer, as a carded tool declared.
    may_answer: Option<MayAnswer>,
}

/// The answerers of a card: the session's usual ones, widened by what the tool declared.
fn widened(base: Answerers, may: Option<&MayAnswer>) -> Answerers {
    let Some(may) = may else { return base };
    let (owners, local, approvers) = match base {
        Answerers::Owners { ids, approvers } => (ids, false, approvers),
        Answerers::Local => (Vec::new(), true, Vec::new()),
        Answerers::Holders {
            owners,
            local,
            approvers,
            ..
        } => (owners, local, approvers),
    };
    Answerers::Holders {
        owners,
        local,
        asker: may.asker.clone(),
        asker_needs: may.asker_needs.clone(),
        anyone_with: may.anyone_with.clone(),
        approvers,
    }
}

impl Driver<'_> {
    fn card(
        &self,
        tool: &str,
        shown: &CardFor,
        risk: Risk,
        classified: &Classified,
        window: Duration,
    ) -> Card {
        let answerers = widened(self.answerers(), shown.may_answer.as_ref());
        let nobody = matches!(&answerers, Answerers::Owners { ids, approvers } if ids.is_empty() && approvers.is_empty());
        let mut why = self.door.ctx.user_request.clone().unwrap_or_default();
        if nobody {
            why.push_str(
                "\n(No Discord owner is configured, so nobody on Discord can answer this card: answer \
                 it on the web page or at the terminal, or set the `owners` setting or \
                 KOTOBA_DISCORD_OWNER_IDS.)",
            );
        }
        Card {
            request_id: format!("card-{:016x}", rand::random::<u64>()),
            session: self.session.id.clone(),
            kind: CardKind::Approval,
            tool: tool.to_string(),
            action: shown.action.clone(),
            why,
            risk,
            can_always: classified.can_always,
            family: classified
                .can_always
                .then(|| classified.family.clone())
                .flatten(),
            can_always_exact: classified.can_always_exact,
            no_always_reason: classified.no_always_reason.clone(),
            expires_at_ms: 0,
            window_secs: window.as_secs(),
            answerers,
            secret: false,
            can_edit: false,
            danger: match &classified.verdict {
                kotoba_gate::Verdict::Dangerous { label } => Some(label.clone()),
                _ => None,
            },
        }
    }

    /// Run the gate for one action call. Reads never come here, but for a guest's call
    /// of a tool their role grants.
    pub(super) async fn gate(
        &mut self,
        tool: &Arc<dyn Tool>,
        call_id: &str,
        args: &Value,
        tool_ctx: &ToolContext,
    ) -> GateEnd {
        let spec = tool.spec();
        let (line, action) = gate_action(tool.as_ref(), args);
        let session = self.session.id.clone();
        let mut shown = CardFor {
            action: line.clone(),
            may_answer: None,
        };
        if spec.behaviour.gating == Gating::Card {
            // A carded tool reads its call first: it may refuse parts of it (or all of
            // it) before any card, and says what the card lists and who may answer.
            match tool.prepare(args, tool_ctx).await {
                Prepared::Done(out) => return GateEnd::Stop(out),
                Prepared::Ask { action, may_answer } => {
                    shown = CardFor { action, may_answer };
                }
            }
        }
        // A guest's call of a tool their role grants asks every time (docs/discord.md,
        // "Role tool sets"): no allowlist, grant or auto-safe route, and no "always".
        let asks_every_call = super::door::asks_every_call(&self.door.ctx, spec);
        if spec.risk != Risk::Exec && spec.behaviour.gating != Gating::Card && !asks_every_call {
            // Writes are confined to the workspace or memory folder by the tools themselves;
            // network tools only fetch. Recorded, not carded.
            audit(
                self.engine,
                &session,
                &spec.name,
                &line,
                spec.risk,
                true,
                Approver::AutoSafe,
                "confined by the tool",
            )
            .await;
            return GateEnd::Proceed { approved_by: None };
        }
        // One request, one run (engine.md §5): a request already deferred in this session
        // is answered by where it stands, on every path — an announce turn's inline
        // re-emission opens no second card, and a saved "always" cannot run it twice.
        let key = dedupe_key(self.door.ctx.user_request.as_deref(), &line);
        if let Some(k) = &key {
            match self.engine.deferred.state(&session, k) {
                Some(KeyState::Awaiting) => {
                    // Still waiting on its card: pending, never refused (nobody said no).
                    return GateEnd::Stop(ToolOutput::pending(awaiting_sentence(&spec.name)));
                }
                Some(KeyState::Settled(sentence)) => {
                    return GateEnd::Stop(ToolOutput::refused(sentence))
                }
                None => {}
            }
        }
        let mut classified = classify(&action, &self.door.paths.workspace, true);
        if asks_every_call {
            classified.can_always = false;
            classified.can_always_exact = false;
            classified.no_always_reason =
                Some("a member's call through their role's tool set asks every time".into());
        }
        // A carded tool asks every time: no allowlist, grant or auto-safe route.
        let routed = match spec.behaviour.gating {
            _ if asks_every_call => Route::Ask,
            Gating::Card => Route::Ask,
            _ => route(&line, &classified, &self.door.settings, &self.engine.store).await,
        };
        if let Route::Run(approver) = routed {
            audit(
                self.engine,
                &session,
                &spec.name,
                &line,
                spec.risk,
                true,
                approver,
                &classified.reasons.join("; "),
            )
            .await;
            return GateEnd::Proceed { approved_by: None };
        }
        let cannot_block = el_agent_turn(tool_ctx) == Some(true) && self.session.has_listener();
        if cannot_block && spec.behaviour.deferrable {
            return self
                .defer(tool, call_id, args, &shown, key, &classified, tool_ctx)
                .await;
        }
        let window = approval_window(self.door.ctx.channel, self.door.ctx.el_call_bound);
        // The line on the card, and who edited it there: an edit that is not dangerous
        // runs on that answer; a dangerous one never does — it goes back on a new card
        // saying it was edited (docs/gate.md, "Answers").
        let (mut asked, mut asked_class) = (line.clone(), classified);
        let mut edited_by: Option<String> = None;
        for _ in 0..MAX_EDIT_ROUNDS {
            let listed = match asked == line {
                true => shown.clone(),
                false => CardFor {
                    action: asked.clone(),
                    may_answer: shown.may_answer.clone(),
                },
            };
            let mut card = self.card(&spec.name, &listed, spec.risk, &asked_class, window);
            card.can_edit = with_line(tool.as_ref(), args, &asked).is_some();
            if let Some(by) = &edited_by {
                card.why = format!(
                    "Edited on the card by {by}: this is not the line she proposed, and the gate \
                     calls it dangerous, so it asks again.\n\n{}",
                    card.why
                );
            }
            let end = self
                .ask_inline(&spec.name, spec.risk, &asked, card, window)
                .await;
            if let Some(ending) = end.ending() {
                let sentence = match &end {
                    AskEnd::Decided {
                        reason: Some(reason),
                        ..
                    } => declined_with_reason(&spec.name, reason),
                    _ => refusal_sentence(ending, &spec.name, window),
                };
                return GateEnd::Stop(ToolOutput::refused_with(ending, sentence));
            }
            let by = match &end {
                AskEnd::Decided { by, .. } => by.clone(),
                _ => String::new(),
            };
            let Some(new) = edit_of(&end, &asked) else {
                save_grant(self.engine, &end, &asked, &asked_class).await;
                if asked == line {
                    return GateEnd::Proceed {
                        approved_by: Some(by),
                    };
                }
                return self.edited(
                    tool.as_ref(),
                    args,
                    &asked,
                    edited_by.as_deref().unwrap_or(&by),
                );
            };
            let Some((_, new_class)) =
                regated(tool.as_ref(), args, &new, &self.door.paths.workspace)
            else {
                return GateEnd::Proceed {
                    approved_by: Some(by),
                };
            };
            if new_class.dangerous_label().is_none() {
                return self.edited(tool.as_ref(), args, &new, &by);
            }
            edited_by = Some(by);
            asked = new;
            asked_class = new_class;
        }
        GateEnd::Stop(ToolOutput::refused(format!(
            "'{}' was edited on its card {MAX_EDIT_ROUNDS} times into lines the gate calls dangerous, \
             so NOTHING ran. Ask the person what they want run.",
            spec.name
        )))
    }

    /// The approved edit of a call: its arguments, the line, and what the model is told.
    fn edited(&self, tool: &dyn Tool, args: &Value, line: &str, by: &str) -> GateEnd {
        match with_line(tool, args, line) {
            Some(args) => GateEnd::Edited(Edit {
                args,
                line: line.to_string(),
                note: format!(
                    "[{by} EDITED this on the approval card before approving it. What ran is NOT what \
                     you proposed; it was exactly:\n{line}\n]\n"
                ),
                by: by.to_string(),
            }),
            None => GateEnd::Proceed {
                approved_by: Some(by.to_string()),
            },
        }
    }

    /// Ask one card inline and write its decision row; a turn cut while it waits is
    /// recorded `dismissed`.
    async fn ask_inline(
        &mut self,
        tool: &str,
        risk: Risk,
        line: &str,
        card: Card,
        window: Duration,
    ) -> AskEnd {
        let session = self.session.id.clone();
        let waiting =
            Underway::card(&self.engine.store, &session, tool, line, risk_word(risk)).await;
        let end = {
            let _blocked = self.blocked.block();
            let mut unsettled = DismissedIfCut {
                engine: self.engine,
                session: &session,
                tool,
                line,
                risk,
                armed: true,
            };
            let end = self.engine.cards.ask(&self.session, card, window).await;
            unsettled.armed = false;
            end
        };
        let (approved, approver, detail) = approver_of(&end);
        audit(
            self.engine,
            &session,
            tool,
            line,
            risk,
            approved,
            approver,
            &detail,
        )
        .await;
        drop(waiting);
        end
    }

    /// Show the card, end the turn, and leave the wait to a detached runner.
    #[allow(clippy::too_many_arguments)]
    async fn defer(
        &mut self,
        tool: &Arc<dyn Tool>,
        call_id: &str,
        args: &Value,
        shown: &CardFor,
        key: Option<String>,
        classified: &Classified,
        tool_ctx: &ToolContext,
    ) -> GateEnd {
        let name = tool.spec().name.clone();
        let session = self.session.id.clone();
        let line = gate_action(tool.as_ref(), args).0;
        let line = line.as_str();
        let mut card = self.card(&name, shown, tool.spec().risk, classified, DEFERRED_WINDOW);
        card.can_edit = with_line(tool.as_ref(), args, line).is_some();
        let Some(wait) = self
            .engine
            .cards
            .post(&self.session, card, DEFERRED_WINDOW)
            .await
        else {
            audit(
                self.engine,
                &session,
                &name,
                line,
                tool.spec().risk,
                false,
                Approver::Error,
                "nobody could be asked",
            )
            .await;
            let sentence = refusal_sentence(Ending::Unreachable, &name, DEFERRED_WINDOW);
            return GateEnd::Stop(ToolOutput::refused_with(Ending::Unreachable, sentence));
        };
        let Some(engine) = self.engine.me.upgrade() else {
            return GateEnd::Stop(ToolOutput::refused(refusal_sentence(
                Ending::Policy,
                &name,
                DEFERRED_WINDOW,
            )));
        };
        if let Some(k) = &key {
            self.engine.deferred.set(&session, k, KeyState::Awaiting);
        }
        let waiting = Underway::card(
            &self.engine.store,
            &session,
            &name,
            line,
            risk_word(tool.spec().risk),
        )
        .await;
        let (release, released) = oneshot::channel();
        self.releases.push(release);
        // The runner acts for the person whose turn drew the card, and never inherits
        // the /v1 mark (it is detached).
        let mut ctx = tool_ctx.clone();
        ctx.turn = Arc::new(TurnContext {
            el_call_bound: Some(false),
            ..(*tool_ctx.turn).clone()
        });
        let run = DeferredRun {
            engine,
            tool: tool.clone(),
            args: args.clone(),
            ctx,
            row: StepRow {
                id: call_id.to_string(),
                tool: name.clone(),
                step_kind: tool.spec().step_kind,
                action: tool.action_line(args),
                phase: Phase::Done,
                outcome: None,
                ending: None,
                result: None,
                full_output: None,
                clipped: false,
            },
            line: line.to_string(),
            key,
            classified: classified.clone(),
            wait: Some(wait),
            underway: Some(waiting),
            released: Some(released),
            cancel: self.engine.deferred.cancel_token(&session),
            waiting: Some(self.engine.deferred.enter_waiting(&session)),
        };
        tokio::spawn(run.run());
        GateEnd::Deferred(ToolOutput::pending(deferred_sentence(&name)))
    }
}
