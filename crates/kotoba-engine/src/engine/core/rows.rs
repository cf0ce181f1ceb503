//! The step rows of one turn as state: which rows are open, the peek and the working
//! chip. Each change returns the frames it draws (and, when a turn's row is cut, what
//! to keep); nothing here emits, awaits or stores — the driver does (docs/engine.md,
//! "The turn as a state machine").

use std::collections::BTreeMap;

use kotoba_core::protocol::{Ending, Frame, Outcome, Phase, StepKind, StepRow};

use super::{Effect, Persist};

/// Open rows, peek and chip of one turn (or one job).
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// The rows open now, by call id (a row opens when its call starts and closes
    /// once, with its outcome).
    open: BTreeMap<String, StepRow>,
    /// Whether the working chip is on (turned on by the first row, once).
    chip_on: bool,
    /// The read tool she is inside, drawn as the peek.
    peek: Option<String>,
}

/// How a row closes.
#[derive(Debug, Clone)]
pub(crate) struct RowClose {
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

impl Rows {
    /// An action starts: clear the peek, turn the chip on (once), open its row.
    pub(crate) fn open(
        &mut self,
        out: &mut Vec<Effect>,
        id: &str,
        (tool, step_kind): (&str, StepKind),
        action: &str,
    ) {
        self.set_peek(out, None);
        if !self.chip_on {
            self.chip_on = true;
            out.push(Effect::Emit(Frame::Working { on: true }));
            // The once-per-turn chip comes with a determined face; the tool's own
            // focus face follows it.
            out.push(Effect::Emit(Frame::Face {
                expression: "determined".into(),
            }));
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
        out.push(Effect::Emit(Frame::Step(row.clone())));
        self.open.insert(id.to_string(), row);
    }

    /// An open row's action changed (the person edited the line before approving it):
    /// the row is drawn again, still running, with the line that will run.
    pub(crate) fn set_action(&mut self, out: &mut Vec<Effect>, id: &str, action: &str) {
        let Some(row) = self.open.get_mut(id) else {
            return;
        };
        row.action = action.to_string();
        out.push(Effect::Emit(Frame::Step(row.clone())));
    }

    /// Close the open row `id` as `close` says; the closed row, to keep and to draw
    /// (`None` when it was not open).
    pub(crate) fn close(&mut self, id: &str, close: RowClose) -> Option<StepRow> {
        let mut row = self.open.remove(id)?;
        row.phase = Phase::Done;
        row.outcome = Some(close.outcome);
        row.ending = close.ending;
        row.result = Some(close.result);
        row.full_output = Some(close.full_output);
        row.clipped = close.clipped;
        Some(row)
    }

    /// Set the peek (a read tool's name), drawn only when the value changes.
    pub(crate) fn set_peek(&mut self, out: &mut Vec<Effect>, tool: Option<&str>) {
        if self.peek.as_deref() == tool {
            return;
        }
        self.peek = tool.map(str::to_string);
        out.push(Effect::Emit(Frame::Peek {
            tool: self.peek.clone(),
        }));
    }

    /// Whether any row is open.
    #[cfg(test)]
    pub(crate) fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The turn ends: every row still open closes as interrupted (kept, when `keep`),
    /// the peek clears, and the chip goes off unless a job runs (the driver knows).
    pub(crate) fn finish(&mut self, out: &mut Vec<Effect>, keep: bool) {
        for (_, mut row) in std::mem::take(&mut self.open) {
            row.phase = Phase::Done;
            row.outcome = Some(Outcome::Interrupted);
            row.result = Some("(interrupted)".into());
            if keep {
                out.push(Effect::Persist(Persist::Interrupted(row.clone())));
            }
            out.push(Effect::Emit(Frame::Step(row)));
        }
        self.set_peek(out, None);
        if std::mem::take(&mut self.chip_on) {
            out.push(Effect::WorkingOff);
        }
    }
}

/// A step's short record (what a count of steps or an erase reads beside its row).
pub(crate) fn step_record(tool: &str, action: &str, outcome: Outcome, result: &str) -> String {
    format!("{tool} {action:?} → {outcome:?}: {result}")
}
