//! The row tracker of one turn: opens and closes step rows, owns the peek and the
//! working chip, and — as a guard — closes every open row as `interrupted` when the
//! turn's future is dropped (barge-in, supersede, shutdown).

use std::collections::BTreeMap;
use std::sync::Arc;

use kotoba_core::protocol::{Ending, Frame, Outcome, Phase, StepKind, StepRow};

use super::session::Session;

/// Open rows, peek and chip of one turn (or one job).
pub struct RowTracker {
    session: Arc<Session>,
    run_id: Option<String>,
    open: BTreeMap<String, StepRow>,
    chip_on: bool,
    peek: Option<String>,
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
    /// A tracker emitting on `session`'s bus, marking frames with `run_id`.
    pub fn new(session: Arc<Session>, run_id: Option<String>) -> Self {
        RowTracker {
            session,
            run_id,
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

    /// Close an open row with its outcome.
    pub fn close(&mut self, id: &str, close: RowClose) {
        let Some(mut row) = self.open.remove(id) else {
            return;
        };
        row.phase = Phase::Done;
        row.outcome = Some(close.outcome);
        row.ending = close.ending;
        row.result = Some(close.result);
        row.full_output = Some(close.full_output);
        row.clipped = close.clipped;
        self.emit(Frame::Step(row));
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
            self.emit(Frame::Step(row));
        }
        self.set_peek(None);
        if self.chip_on && !self.session.job_running() {
            self.emit(Frame::Working { on: false });
        }
    }
}

impl Drop for RowTracker {
    fn drop(&mut self) {
        self.finish();
    }
}
