//! The turn as a state machine: every decision of the seeds' loop in one pure
//! function, [`TurnState::step`], which takes an [`Event`] (the model replied, a card
//! settled, a tool finished, a heartbeat tick, its budget ran out, the turn was cut)
//! and returns the [`Effect`]s to carry out (ask the model, open a card, run a tool,
//! draw a frame, keep a record, end). No `await`, no clock, no I/O in here: the driver
//! (`engine/turn.rs`) performs the effects and feeds back what came of them, for every
//! surface and for background jobs alike (docs/engine.md, "The turn as a state
//! machine").
//!
//! What the core decides: the iterations and their caps, the words-only last one,
//! the door of each call and its refusal sentences, the per-tool caps and the
//! exact-repeat memo, step zero, which calls are rows and which are peeks, the
//! announce / after / fail lines and the heartbeat curve, outcomes from witnesses,
//! deferral ending the turn, and every row closing exactly once (interrupted when the
//! turn is cut).

mod call;
pub(crate) mod rows;
mod verdict;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_props;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::llm::{Item, ModelReply, ToolCall};
use crate::tools::{Ended, Tool, ToolOutput};
use kotoba_core::config::Settings;
use kotoba_core::protocol::{Frame, Mode, Outcome, Risk, StepRow, TurnStatus};
use kotoba_core::turn::TurnContext;

use super::budget::{Caps, Spent};
use super::narration::Narrator;
use call::Call;
use rows::Rows;

pub use call::{
    companion_only_sentence, not_active_sentence, switched_off_sentence, unknown_sentence,
    withheld_sentence, work_only_sentence,
};
pub(crate) use verdict::{gate_action, Edit, GateEnd};

/// The sentence the turn ends with when its iterations ran out.
pub(crate) const OUT_OF_STEPS: &str =
    "I ran out of steps for this turn before finishing, so this is not done yet.";

/// How a loop ended.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopEnd {
    /// Her words.
    pub text: String,
    /// Completed, capped, error or interrupted.
    pub status: TurnStatus,
}

/// What the core reads of the tools: lookups in the registry as it stands, no I/O.
pub(crate) trait Catalog: Send + Sync {
    /// The registered tool of this name.
    fn find(&self, name: &str) -> Option<Arc<dyn Tool>>;
    /// The configured MCP server whose tool this unregistered name is.
    fn server_of(&self, name: &str) -> Option<String>;
    /// Work mode: the tools of the MCP servers this job activated (and the browser's).
    fn active(&self) -> Vec<Arc<dyn Tool>>;
}

/// What happened, fed to [`TurnState::step`].
pub(crate) enum Event {
    /// The turn begins.
    Start,
    /// The model answered the request the core asked for.
    Replied(ModelReply),
    /// The model request failed: the sentence the person reads.
    ModelFailed(String),
    /// The gate let a call happen, or not (a card settled, or a rule decided).
    Gated {
        /// The call.
        call_id: String,
        /// What the gate decided.
        end: GateEnd,
    },
    /// A tool's run ended (its output already redacted of secrets).
    Finished {
        /// The call.
        call_id: String,
        /// What it handed back.
        output: ToolOutput,
    },
    /// A heartbeat tick while a tool runs (every `HEARTBEAT_TICK`).
    Tick {
        /// The call running.
        call_id: String,
        /// Whether the turn waits on a person now (a job's card): the beats wait.
        blocked: bool,
    },
    /// A running tool reached its budget: the driver stopped it.
    BudgetSpent {
        /// The call.
        call_id: String,
    },
    /// The turn was cut (barge-in, a newer request, a stop, shutdown).
    Cancelled,
}

/// What the driver must do, in order.
pub(crate) enum Effect {
    /// Put a frame on the turn's bus.
    Emit(Frame),
    /// Ask the model, over the turn's items, offering the core's tools unless
    /// `words_only`; its deltas go out as they arrive (after a paragraph break when
    /// `separate`). Answered by [`Event::Replied`] or [`Event::ModelFailed`].
    Ask {
        /// Words from earlier replies were written: the new ones start a paragraph.
        separate: bool,
        /// No tools are offered on this request.
        words_only: bool,
    },
    /// Put a call through the gate (maybe a card). Answered by [`Event::Gated`].
    Gate {
        /// The call.
        call_id: String,
        /// Its tool.
        tool: Arc<dyn Tool>,
        /// Its arguments.
        args: Value,
    },
    /// Run a call. Answered by [`Event::Finished`], [`Event::Tick`]s while it runs,
    /// or [`Event::BudgetSpent`].
    Run(RunOrder),
    /// Keep a record.
    Persist(Persist),
    /// A job's meter counts one more step.
    CountStep,
    /// Deferred runners waiting for their pending row to be drawn may go on.
    Release,
    /// The working chip goes off, unless a background job runs in the session.
    WorkingOff,
    /// The turn is over.
    End(LoopEnd),
}

/// One call to run.
pub(crate) struct RunOrder {
    /// The call.
    pub call_id: String,
    /// Its tool.
    pub tool: Arc<dyn Tool>,
    /// The arguments that run (an approved edit's, when edited on the card).
    pub args: Value,
    /// How long it may run.
    pub budget: Duration,
    /// Who approved its card, when one was answered.
    pub approved_by: Option<String>,
}

impl std::fmt::Debug for Effect {
    /// Tools by name (a tool is not `Debug`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Effect::Emit(frame) => f.debug_tuple("Emit").field(frame).finish(),
            Effect::Ask {
                separate,
                words_only,
            } => f
                .debug_struct("Ask")
                .field("separate", separate)
                .field("words_only", words_only)
                .finish(),
            Effect::Gate {
                call_id,
                tool,
                args,
            } => f
                .debug_struct("Gate")
                .field("call_id", call_id)
                .field("tool", &tool.spec().name)
                .field("args", args)
                .finish(),
            Effect::Run(o) => f
                .debug_struct("Run")
                .field("call_id", &o.call_id)
                .field("tool", &o.tool.spec().name)
                .field("args", &o.args)
                .field("budget", &o.budget)
                .field("approved_by", &o.approved_by)
                .finish(),
            Effect::Persist(p) => f.debug_tuple("Persist").field(p).finish(),
            Effect::CountStep => f.write_str("CountStep"),
            Effect::Release => f.write_str("Release"),
            Effect::WorkingOff => f.write_str("WorkingOff"),
            Effect::End(end) => f.debug_tuple("End").field(end).finish(),
        }
    }
}

/// A record the driver keeps.
#[derive(Debug)]
pub(crate) enum Persist {
    /// An action is about to reach the machine: its executed row, written first.
    RunStarted {
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The exact line.
        line: String,
        /// The tool's risk.
        risk: Risk,
    },
    /// That action ended.
    RunFinished {
        /// The call.
        call_id: String,
        /// How it ended.
        ended: Ended,
        /// Its outcome.
        outcome: Outcome,
    },
    /// A closed step: its record, and for a turn its row as drawn (kept beside its
    /// lines; a job's panel is its own record).
    Step {
        /// The tool.
        tool: String,
        /// The exact line.
        line: String,
        /// Its outcome.
        outcome: Outcome,
        /// Its row result.
        result: String,
        /// The row to keep (a turn's), else `None`.
        row: Option<StepRow>,
    },
    /// A turn's row cut open: kept as interrupted.
    Interrupted(StepRow),
}

/// Where the turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// [`Event::Start`] not seen yet.
    NotStarted,
    /// Waiting on the model.
    Asking,
    /// Working through a reply's calls (one in flight at most).
    Calls,
    /// Over: every event is ignored.
    Ended,
}

/// One turn's state: everything its decisions read and change.
pub(crate) struct TurnState<'a> {
    /// Whom it speaks for and its axes.
    ctx: Arc<TurnContext>,
    /// The settings snapshot taken at the door.
    settings: Arc<Settings>,
    /// The tool registry, looked up by name.
    catalog: &'a dyn Catalog,
    /// Its caps (companion or work).
    caps: Caps,
    /// What it spent of them, and the exact-repeat memo.
    spent: Spent,
    /// Announce, heartbeat and after/fail lines for its register.
    narrator: Narrator<'a>,
    /// The tools offered to its person (a guest's: the allow-list only).
    offered: Vec<Arc<dyn Tool>>,
    /// The conversation the model reads: history, the person's line, replies, results
    /// (shared with the request out, never copied for it).
    items: Arc<Vec<Item>>,
    /// Her words so far, one entry per reply or sentence.
    texts: Vec<String>,
    /// Model requests asked so far.
    iteration: u32,
    /// This iteration offers no tools (caps spent, or the last iteration).
    words_only: bool,
    /// Where it stands.
    stage: Stage,
    /// The reply's calls not dispatched yet.
    batch: VecDeque<ToolCall>,
    /// The call in flight (at the gate or running).
    call: Option<Call>,
    /// Its rows, peek and chip.
    rows: Rows,
    /// A call was deferred: the turn ends after this batch.
    deferred: bool,
}

impl<'a> TurnState<'a> {
    /// A turn over `items` for `ctx`, offering `offered`, under `caps`.
    pub(crate) fn new(
        ctx: Arc<TurnContext>,
        settings: Arc<Settings>,
        catalog: &'a dyn Catalog,
        (caps, narrator): (Caps, Narrator<'a>),
        offered: Vec<Arc<dyn Tool>>,
        items: Vec<Item>,
    ) -> Self {
        TurnState {
            ctx,
            settings,
            catalog,
            caps,
            spent: Spent::default(),
            narrator,
            offered,
            items: Arc::new(items),
            texts: Vec::new(),
            iteration: 0,
            words_only: false,
            stage: Stage::NotStarted,
            batch: VecDeque::new(),
            call: None,
            rows: Rows::default(),
            deferred: false,
        }
    }

    /// The items the next request carries, shared (the driver fits them to the window
    /// and hands them back with [`TurnState::set_items`]).
    pub(crate) fn items(&self) -> Arc<Vec<Item>> {
        self.items.clone()
    }

    /// The items as the driver fitted them (compacted, shortened, summarised).
    pub(crate) fn set_items(&mut self, items: Arc<Vec<Item>>) {
        self.items = items;
    }

    /// The items, to change (copied first only if a request still shares them).
    pub(crate) fn items_mut(&mut self) -> &mut Vec<Item> {
        Arc::make_mut(&mut self.items)
    }

    /// The tools offered now.
    pub(crate) fn offered(&self) -> &[Arc<dyn Tool>] {
        &self.offered
    }

    /// Whether the turn is over.
    pub(crate) fn ended(&self) -> bool {
        self.stage == Stage::Ended
    }

    /// The one decision function: `event` in, effects out, in order.
    pub(crate) fn step(&mut self, event: Event) -> Vec<Effect> {
        let mut out = Vec::new();
        match (self.stage, event) {
            (Stage::Ended, _) => {}
            (_, Event::Cancelled) => {
                self.end(&mut out, TurnStatus::Interrupted);
            }
            (Stage::NotStarted, Event::Start) => self.next_iteration(&mut out),
            (Stage::Asking, Event::Replied(reply)) => self.replied(&mut out, reply),
            (Stage::Asking, Event::ModelFailed(sentence)) => {
                self.say(&mut out, sentence);
                self.end(&mut out, TurnStatus::Error);
            }
            (Stage::Calls, Event::Gated { call_id, end }) if self.is_current(&call_id, false) => {
                self.gated(&mut out, end);
            }
            (Stage::Calls, Event::Finished { call_id, output })
                if self.is_current(&call_id, true) =>
            {
                self.finish_call(&mut out, output);
            }
            (Stage::Calls, Event::BudgetSpent { call_id }) if self.is_current(&call_id, true) => {
                if let Some(output) = self.call.as_ref().map(Call::past_budget) {
                    self.finish_call(&mut out, output);
                }
            }
            (Stage::Calls, Event::Tick { call_id, blocked }) if self.is_current(&call_id, true) => {
                if let Some(call) = self.call.as_mut() {
                    call.beat(&mut out, blocked);
                }
            }
            // Anything else answers nothing the turn asked: ignored.
            _ => {}
        }
        out
    }

    /// Whether `call_id` is the call in flight, at the gate (`running: false`) or
    /// running.
    fn is_current(&self, call_id: &str, running: bool) -> bool {
        self.call
            .as_ref()
            .is_some_and(|c| c.id == call_id && c.running == running)
    }

    /// Her sentence, written and remembered.
    fn say(&mut self, out: &mut Vec<Effect>, text: String) {
        out.push(Effect::Emit(Frame::TextDelta { text: text.clone() }));
        self.texts.push(text);
    }

    /// Ask the model again, or end when the iterations are spent.
    fn next_iteration(&mut self, out: &mut Vec<Effect>) {
        if self.iteration >= self.caps.max_iter {
            self.say(out, OUT_OF_STEPS.to_string());
            self.end(out, TurnStatus::Capped);
            return;
        }
        self.iteration += 1;
        self.offer_active_tools();
        self.words_only =
            self.spent.tools_spent(&self.caps) || self.iteration == self.caps.max_iter;
        self.stage = Stage::Asking;
        out.push(Effect::Ask {
            separate: !self.texts.is_empty(),
            words_only: self.words_only,
        });
    }

    /// Work mode: the tools of the MCP servers this job activated are offered from the
    /// next request on; a switched-off `mcp:<server>` stays off.
    fn offer_active_tools(&mut self) {
        if self.ctx.mode != Mode::Work {
            return;
        }
        for tool in self.catalog.active() {
            let spec = tool.spec();
            let offered = self.offered.iter().any(|t| t.spec().name == spec.name);
            if !offered && !self.settings.disabled_toolsets.contains(&spec.family) {
                self.offered.push(tool);
            }
        }
    }

    /// The model answered.
    fn replied(&mut self, out: &mut Vec<Effect>, reply: ModelReply) {
        let text = reply.text();
        if !text.trim().is_empty() {
            self.texts.push(text);
        }
        let calls: Vec<ToolCall> = reply.tool_calls().into_iter().cloned().collect();
        self.items_mut().extend(reply.items);
        if calls.is_empty() {
            // A chain a cap cut is never reported as done.
            let status = match self.words_only && self.iteration > 1 {
                true => TurnStatus::Capped,
                false => TurnStatus::Completed,
            };
            self.end(out, status);
            return;
        }
        if self.words_only {
            // Tools were withdrawn, yet it called some: nothing runs, the chain is cut.
            self.say(out, OUT_OF_STEPS.to_string());
            self.end(out, TurnStatus::Capped);
            return;
        }
        self.stage = Stage::Calls;
        self.batch = calls.into();
        self.next_call(out);
    }

    /// Dispatch the batch's next call; past its last, end a deferring turn or ask again.
    fn next_call(&mut self, out: &mut Vec<Effect>) {
        while let Some(call) = self.batch.pop_front() {
            match self.admit(out, &call) {
                Ok(()) => return, // in flight: its gate or run answers
                Err(text) => self.items_mut().push(Item::ToolResult {
                    call_id: call.call_id,
                    output: text,
                }),
            }
        }
        if self.deferred {
            // The card is up and a detached runner waits for it: the turn ends here.
            self.say(out, super::deferred::ASKED_ON_SCREEN.to_string());
            self.end(out, TurnStatus::Completed);
            return;
        }
        self.next_iteration(out);
    }

    /// The turn is over: what is still open closes as interrupted, and it ends.
    fn end(&mut self, out: &mut Vec<Effect>, status: TurnStatus) {
        self.stage = Stage::Ended;
        self.batch.clear();
        self.call = None;
        self.rows.finish(out, self.ctx.run_id.is_none());
        out.push(Effect::End(LoopEnd {
            text: self.texts.join("\n\n"),
            status,
        }));
    }
}

/// Whether `out` ends the turn.
#[cfg(test)]
pub(crate) fn ends(out: &[Effect]) -> bool {
    out.iter().any(|e| matches!(e, Effect::End(_)))
}
