//! The row tracker of one turn: opens and closes step rows, owns the peek and the
//! working chip, and — as a guard — closes every open row as `interrupted` when the
//! turn's future is dropped (barge-in, supersede, shutdown); a turn's interrupted rows
//! are kept beside its lines like the rows it closed (store/steps.rs).

use std::collections::BTreeMap;
use std::sync::Arc;

use kotoba_core::protocol::{Ending, Frame, Outcome, Phase, StepKind, StepRow};
use kotoba_store::Store;

use super::session::Session;

/// Open rows, peek and chip of one turn (or one job).
pub struct RowTracker {
    /// Where its frames go.
    session: Arc<Session>,
    /// The job's run id on its frames (`None` in a turn).
    run_id: Option<String>,
    /// Where a turn's rows are kept (`None` for a job's: its panel is its record).
    keep: Option<Arc<Store>>,
    /// The rows open now, by id.
    open: BTreeMap<String, StepRow>,
    /// Whether the working chip is on.
    chip_on: bool,
    /// The read tool she is inside.
    peek: Option<String>,
    /// Whether [`RowTracker::finish`] ran.
    finished: bool,
}

/// How a row closes.
#[derive(Debug, Clone)]
pub struct RowClose {
    /// The outcome its witnesses decided.
    pub outcome: Outcome,
    /// The refusal ending, when refused.
    pub ending: Option<Ending>,
    /// The trimmed result for the row.
    pub result: String,
    /// The whole output (capped).
    pub full_output: String,
    /// Whether the whole output was clipped.
    pub clipped: bool,
}

impl RowTracker {
    /// A tracker emitting on `session`'s bus, marking frames with `run_id`; rows it
    /// closes as interrupted are kept in `keep`, when given.
    pub fn new(session: Arc<Session>, run_id: Option<String>, keep: Option<Arc<Store>>) -> Self {
        RowTracker {
            session,
            run_id,
            keep,
            open: BTreeMap::new(),
            chip_on: false,
            peek: None,
            finished: false,
        }
    }

    fn emit(&self, frame: Frame) {
        self.session.emit(self.run_id.as_deref(), frame);
    }

    /// An action starts: clear the peek, turn the chip on (once), open its row.
    pub fn open(&mut self, id: &str, tool: &str, step_kind: StepKind, action: &str) {
        self.set_peek(None);
        if !self.chip_on {
            self.chip_on = true;
            self.emit(Frame::Working { on: true });
            // The once-per-turn chip comes with a determined face; the tool's own
            // focus face follows it.
            self.emit(Frame::Face {
                expression: "determined".into(),
            });
        }
        let row = StepRow {
            id: id.to_string(),
            tool: tool.to_string(),
            step_kind,
            action: action.to_string(),
            phase: Phase::Start,
            outcome: None,
            ending: None,
            result: None,
            full_output: None,
            clipped: false,
        };
        self.emit(Frame::Step(row.clone()));
        self.open.insert(id.to_string(), row);
    }

    /// An open row's action changed (the person edited the command before approving
    /// it): the row is drawn again, still running, with the line that will run.
    pub fn set_action(&mut self, id: &str, action: &str) {
        let Some(row) = self.open.get_mut(id) else {
            return;
        };
        row.action = action.to_string();
        let row = row.clone();
        self.emit(Frame::Step(row));
    }

    /// The open row `id` as `close` closes it, not yet drawn (so it can be kept first).
    pub fn closed(&self, id: &str, close: RowClose) -> Option<StepRow> {
        let mut row = self.open.get(id)?.clone();
        row.phase = Phase::Done;
        row.outcome = Some(close.outcome);
        row.ending = close.ending;
        row.result = Some(close.result);
        row.full_output = Some(close.full_output);
        row.clipped = close.clipped;
        Some(row)
    }

    /// Close an open row, drawn as [`RowTracker::closed`] made it.
    pub fn close(&mut self, row: StepRow) {
        if self.open.remove(&row.id).is_some() {
            self.emit(Frame::Step(row));
        }
    }

    /// Set the peek (a read tool's name), emitted only when the value changes.
    pub fn set_peek(&mut self, tool: Option<&str>) {
        if self.peek.as_deref() == tool {
            return;
        }
        self.peek = tool.map(str::to_string);
        self.emit(Frame::Peek {
            tool: self.peek.clone(),
        });
    }

    /// Whether a row is open.
    pub fn is_open(&self, id: &str) -> bool {
        self.open.contains_key(id)
    }

    /// The turn exits: close what is still open as interrupted, clear the peek, and
    /// switch the chip off unless a background job runs. Runs once (also from Drop).
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let open = std::mem::take(&mut self.open);
        for (_, mut row) in open {
            row.phase = Phase::Done;
            row.outcome = Some(Outcome::Interrupted);
            row.result = Some("(interrupted)".into());
            self.keep_interrupted(&row);
            self.emit(Frame::Step(row));
        }
        self.set_peek(None);
        if self.chip_on && !self.session.job_running() {
            self.emit(Frame::Working { on: false });
        }
    }

    /// Keep an interrupted row beside the turn's lines. This may run while the turn's
    /// future is dropped, so the write is a task of its own (on the runtime, if any).
    fn keep_interrupted(&self, row: &StepRow) {
        let (Some(store), Ok(runtime)) = (&self.keep, tokio::runtime::Handle::try_current()) else {
            return;
        };
        let (store, session, row) = (store.clone(), self.session.id.clone(), row.clone());
        let text = step_record(
            &row.tool,
            &row.action,
            Outcome::Interrupted,
            "(interrupted)",
        );
        runtime.spawn(async move {
            if let Err(e) = store.append_step(&session, &row, &text).await {
                tracing::warn!("keeping an interrupted row of {session}: {e}");
            }
        });
    }
}

/// A step's short record (what a count of steps or an erase reads beside its row).
pub(crate) fn step_record(tool: &str, action: &str, outcome: Outcome, result: &str) -> String {
    format!("{tool} {action:?} → {outcome:?}: {result}")
}

impl Drop for RowTracker {
    fn drop(&mut self) {
        self.finish();
    }
}
