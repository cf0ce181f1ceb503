//! One call through the core: the door (is this name callable in this turn at all?),
//! the caps and the exact-repeat memo, step zero, then a row or a peek, the announce
//! line, the gate, the run under its budget with its heartbeat, and the outcome from
//! witnesses — each a decision, each effect handed to the driver (engine.md §2, §3).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::llm::{Item, ToolCall};
use crate::tools::{Scope, Tool, ToolOutput};
use kotoba_core::protocol::{Frame, Mode, Outcome, SayKind};

use super::super::budget::{
    call_key, cap_reached_note, per_tool_cap_sentence, repeat_sentence, turn_cap_sentence,
};
use super::super::narration::{HeartbeatClock, HeartbeatPlan};
use super::super::output::{model_text, outcome_of, row_full_output, row_result};
use super::super::transport::tool_budget;
use super::rows::RowClose;
use super::{gate_action, Effect, GateEnd, Persist, RunOrder, TurnState};

/// The sentence when a job's first call is not the skill that matches it.
pub(crate) fn step_zero_sentence(skill: &str) -> String {
    format!(
        "Step zero: the skill '{skill}' matches this job, so your FIRST call must be skill_view with name \
         '{skill}'. NOTHING ran; call skill_view first, then act."
    )
}

/// The sentence for a tool withheld from this turn.
pub fn withheld_sentence(name: &str) -> String {
    format!(
        "You do not have '{name}' in this conversation, so NOTHING ran and there is no result. \
         Do not describe what it would have returned, and do not tell them it worked."
    )
}

/// The sentence for a tool whose family is switched off.
pub fn switched_off_sentence(name: &str, family: &str) -> String {
    format!(
        "'{name}' is switched OFF in the user's settings (the '{family}' tools), so nothing ran and there is \
         no result. Tell them plainly that those tools are turned off."
    )
}

/// The sentence for a name no tool has.
pub fn unknown_sentence(name: &str) -> String {
    format!("There is no tool called '{name}' — it does not exist, or its server just disconnected. Nothing ran.")
}

/// The sentence for a work-only tool called in a conversation.
pub fn work_only_sentence(name: &str) -> String {
    format!(
        "'{name}' is not part of a conversation — it belongs to a background job. NOTHING ran and there is no result."
    )
}

/// The sentence for a tool of an MCP server this job has not activated.
pub fn not_active_sentence(name: &str, server: &str) -> String {
    format!(
        "'{name}' belongs to the MCP server '{server}', whose tools are not loaded in this job. NOTHING \
         ran. Call activate_tools with server '{server}' first; its tools are offered from the next step."
    )
}

/// The sentence for start_work / cancel_work inside a job.
pub fn companion_only_sentence(name: &str) -> String {
    format!(
        "'{name}' cannot be called from inside a background job: a job cannot start another job or cancel \
         itself. NOTHING ran."
    )
}

/// Why a call's arguments were not read (the model is told, and nothing ran).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadArgs {
    /// JSON, but not an object.
    #[error("the arguments must be a JSON object, got {0}")]
    NotObject(Value),
    /// Not JSON at all (what the reader said).
    #[error("the arguments are not valid JSON ({0})")]
    NotJson(String),
}

fn parse_args(raw: &str) -> Result<Value, BadArgs> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(BadArgs::NotObject(other)),
        Err(e) => Err(BadArgs::NotJson(e.to_string())),
    }
}

/// Why a call did not pass the door; each is the sentence the model reads instead of
/// a result (the sentences are the functions above, which the tests also read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Shut {
    /// No tool has this name.
    #[error("{}", unknown_sentence(.0))]
    Unknown(String),
    /// A work-only tool called in a conversation.
    #[error("{}", work_only_sentence(.0))]
    WorkOnly(String),
    /// A companion-only tool called inside a job.
    #[error("{}", companion_only_sentence(.0))]
    CompanionOnly(String),
    /// A tool of an MCP server this job has not activated.
    #[error("{}", not_active_sentence(.name, .server))]
    NotActive {
        /// The tool.
        name: String,
        /// Its server.
        server: String,
    },
    /// A tool whose family is switched off.
    #[error("{}", switched_off_sentence(.name, .family))]
    SwitchedOff {
        /// The tool.
        name: String,
        /// Its family.
        family: String,
    },
    /// A tool withheld from this turn.
    #[error("{}", withheld_sentence(.0))]
    Withheld(String),
}

/// The call in flight: at the gate, then running.
pub(super) struct Call {
    /// Its id (results and rows are keyed by it).
    pub(super) id: String,
    /// Its tool.
    tool: Arc<dyn Tool>,
    /// The arguments that run (an approved edit's, once edited).
    args: Value,
    /// Its exact-repeat key.
    key: String,
    /// Calls of this tool name in the turn, this one included.
    count: u32,
    /// The tool's per-turn cap.
    cap: u32,
    /// A row (an action, or a role-granted tool in a guest's turn) rather than a peek.
    is_action: bool,
    /// An action's exact line (what the gate judges, the audit and its record keep),
    /// derived once — again only when an edit on its card changes it.
    line: String,
    /// Past the gate and running (its run was ordered).
    pub(super) running: bool,
    /// Its executed row was written (an action that reached the machine).
    run_started: bool,
    /// How long it may run.
    budget: Duration,
    /// What its heartbeat says, and when.
    plan: HeartbeatPlan,
    clock: HeartbeatClock,
    /// "They edited it; this ran instead", told to the model beside the output.
    edit_note: Option<String>,
}

impl Call {
    /// The output of a call stopped at its budget.
    pub(super) fn past_budget(&self) -> ToolOutput {
        let (name, secs) = (&self.tool.spec().name, self.budget.as_secs());
        ToolOutput::exited(
            124,
            format!("'{name}' ran past its budget of {secs} s and was stopped. Do not retry the same call."),
        )
    }

    /// One heartbeat tick: a beat when one is due (the clock counts only time not
    /// blocked on a person).
    pub(super) fn beat(&mut self, out: &mut Vec<Effect>, blocked: bool) {
        if let Some(n) = self.clock.tick(blocked) {
            if let Some(text) = self.plan.beat(n) {
                out.push(Effect::Emit(Frame::Say {
                    kind: SayKind::Heartbeat,
                    text,
                }));
            }
        }
    }
}

impl TurnState<'_> {
    /// The door: is this name callable in this turn at all?
    fn door(&mut self, name: &str) -> Result<Arc<dyn Tool>, Shut> {
        let Some(tool) = self.catalog.find(name) else {
            // A configured MCP server's tool: work-only, and deferred until activated.
            return Err(match (self.catalog.server_of(name), self.ctx.mode) {
                (Some(_), Mode::Companion) => Shut::WorkOnly(name.to_string()),
                (Some(server), Mode::Work) => Shut::NotActive {
                    name: name.to_string(),
                    server,
                },
                (None, _) => {
                    self.spent.failures += 1; // an unknown name is a failure, not a refusal
                    Shut::Unknown(name.to_string())
                }
            });
        };
        let spec = tool.spec();
        if self.settings.disabled_toolsets.contains(&spec.family) {
            return Err(Shut::SwitchedOff {
                name: name.to_string(),
                family: spec.family.clone(),
            });
        }
        match (spec.scope, self.ctx.mode) {
            (Scope::WorkOnly, Mode::Companion) => return Err(Shut::WorkOnly(name.to_string())),
            (Scope::CompanionOnly, Mode::Work) => {
                return Err(Shut::CompanionOnly(name.to_string()))
            }
            _ => {}
        }
        let offered = self.offered.iter().any(|t| t.spec().name == name);
        if !self.words_only && !offered {
            if let Some(server) = spec.family.strip_prefix("mcp:") {
                return Err(Shut::NotActive {
                    name: name.to_string(),
                    server: server.to_string(),
                });
            }
        }
        if self.words_only || !offered {
            return Err(Shut::Withheld(name.to_string()));
        }
        Ok(tool)
    }

    /// Admit one call: `Err` with what the model reads instead of a result when it
    /// does not pass the door, a cap, its arguments, step zero or the repeat memo;
    /// else it is in flight (its row or peek drawn, its gate or run ordered).
    pub(super) fn admit(&mut self, out: &mut Vec<Effect>, call: &ToolCall) -> Result<(), String> {
        let name = call.name.as_str();
        let tool = self.door(name).map_err(|shut| shut.to_string())?;
        if self.spent.tool_calls >= self.caps.max_tool_calls {
            return Err(turn_cap_sentence(self.caps.max_tool_calls));
        }
        let cap = self.caps.for_tool(tool.spec());
        let count = self.spent.count_tool(name);
        if count > cap {
            return Err(per_tool_cap_sentence(name, cap));
        }
        let args = parse_args(&call.arguments).map_err(|why| {
            format!("'{name}' was NOT run: {why}. Call it again with valid JSON arguments.")
        })?;
        if let Some(skill) = self.ctx.step_zero.as_deref() {
            let opened = tool.spec().behaviour.opens_skill;
            let is_view =
                opened.is_some_and(|arg| args.get(arg).and_then(Value::as_str) == Some(skill));
            if self.spent.tool_calls == 0 && !is_view {
                return Err(step_zero_sentence(skill));
            }
        }
        let key = call_key(name, &args);
        if let Some(earlier) = self.spent.earlier(&key) {
            return Err(repeat_sentence(name, earlier));
        }
        self.spent.tool_calls += 1;
        self.begin(out, tool, &call.call_id, args, (key, count, cap));
        Ok(())
    }

    /// An admitted call starts: row or peek, announce, then the gate or the run.
    fn begin(
        &mut self,
        out: &mut Vec<Effect>,
        tool: Arc<dyn Tool>,
        call_id: &str,
        args: Value,
        (key, count, cap): (String, u32, u32),
    ) {
        let spec = tool.spec();
        // A role-granted host tool in a guest's turn asks even to read.
        let is_action =
            spec.risk.is_action() || super::super::door::asks_every_call(&self.ctx, spec);
        if is_action {
            let action = tool.action_line(&args);
            self.rows
                .open(out, call_id, (&spec.name, spec.step_kind), &action);
            if self.ctx.meter.is_some() {
                out.push(Effect::CountStep);
            }
            out.push(Effect::Emit(Frame::Face {
                expression: spec.behaviour.focus_face.into(),
            }));
        } else {
            self.rows.set_peek(out, Some(&spec.name));
        }
        if let Some(line) = self.narrator.announce(spec) {
            out.push(Effect::Emit(Frame::Say {
                kind: SayKind::Announce,
                text: line,
            }));
        }
        let budget = tool_budget(spec, &args, self.ctx.channel, self.ctx.el_call_bound);
        let line = match is_action {
            true => gate_action(tool.as_ref(), &args).0,
            false => String::new(),
        };
        let plan = self.narrator.heartbeat(spec);
        let call = Call {
            id: call_id.to_string(),
            tool,
            args,
            key,
            count,
            cap,
            is_action,
            line,
            running: false,
            run_started: false,
            budget,
            plan,
            clock: HeartbeatClock::default(),
            edit_note: None,
        };
        if is_action {
            out.push(Effect::Gate {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                args: call.args.clone(),
            });
            self.call = Some(call);
        } else {
            self.call = Some(call);
            self.run(out, None);
        }
    }

    /// Order the call in flight to run (an action's executed row first).
    fn run(&mut self, out: &mut Vec<Effect>, approved_by: Option<String>) {
        let Some(call) = self.call.as_mut() else {
            return;
        };
        call.running = true;
        let spec = call.tool.spec();
        if call.is_action {
            // The executed row is written before the command starts (docs/engine.md §6).
            call.run_started = true;
            out.push(Effect::Persist(Persist::RunStarted {
                call_id: call.id.clone(),
                tool: spec.name.clone(),
                line: call.line.clone(),
                risk: spec.risk,
            }));
        }
        out.push(Effect::Run(RunOrder {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            args: call.args.clone(),
            budget: call.budget,
            approved_by,
        }));
    }

    /// The gate decided about the call in flight.
    pub(super) fn gated(&mut self, out: &mut Vec<Effect>, end: GateEnd) {
        match end {
            GateEnd::Proceed { approved_by } => self.run(out, approved_by),
            GateEnd::Edited(edit) => {
                // The row shows what actually runs; the model is told it was edited.
                if let Some(call) = self.call.as_mut() {
                    call.args = edit.args;
                    call.line = edit.line;
                    call.edit_note = Some(edit.note);
                    let action = call.tool.action_line(&call.args);
                    let id = call.id.clone();
                    self.rows.set_action(out, &id, &action);
                }
                self.run(out, Some(edit.by));
            }
            GateEnd::Stop(output) => self.finish_call(out, output),
            GateEnd::Deferred(output) => {
                self.deferred = true;
                self.finish_call(out, output);
            }
        }
    }

    /// The call in flight ended with `output`: its row closes with the outcome its
    /// witnesses decide, the model reads its result, and the batch goes on.
    pub(super) fn finish_call(&mut self, out: &mut Vec<Effect>, mut output: ToolOutput) {
        let Some(call) = self.call.take() else {
            return;
        };
        let spec = call.tool.spec();
        let outcome = outcome_of(&output);
        if call.run_started {
            out.push(Effect::Persist(Persist::RunFinished {
                call_id: call.id.clone(),
                ended: output.ended,
                outcome,
            }));
        }
        if call.is_action {
            let (full_output, clipped) = row_full_output(spec.behaviour.output_cap, &output);
            let result = row_result(spec.step_kind, &output, outcome);
            let close = RowClose {
                outcome,
                ending: output.refusal(),
                result: result.clone(),
                full_output,
                clipped,
            };
            let row = self.rows.close(&call.id, close);
            // A turn's row is kept as it will be drawn, then drawn; a job's step is
            // kept as its record only.
            out.push(Effect::Persist(Persist::Step {
                tool: spec.name.clone(),
                line: call.line.clone(),
                outcome,
                result,
                row: row.clone().filter(|_| self.ctx.run_id.is_none()),
            }));
            if let Some(row) = row {
                out.push(Effect::Emit(Frame::Step(row)));
            }
            out.push(Effect::Release);
        }
        if outcome == Outcome::Failed {
            out.push(Effect::Emit(Frame::Face {
                expression: "fail".into(),
            }));
        }
        let confirm = match outcome {
            Outcome::Ok => Some(SayKind::After),
            Outcome::Failed => Some(SayKind::Fail),
            _ => None,
        };
        if let Some(kind) = confirm {
            if let Some(text) = self.narrator.confirm(spec, kind) {
                out.push(Effect::Emit(Frame::Say { kind, text }));
            }
        }
        // The model learns the person edited the line (the row already shows it).
        if let Some(note) = &call.edit_note {
            output.text.insert_str(0, note);
        }
        if outcome == Outcome::Failed {
            self.spent.failures += 1;
            if call.tool.withdraw_after_failure() {
                self.offered.retain(|t| t.spec().name != spec.name);
            }
        }
        self.spent.remember(call.key.clone(), outcome);
        let mut text = model_text(spec.behaviour.output_cap, &output, outcome);
        if call.count == call.cap {
            if let Some(note) = cap_reached_note(spec, call.cap) {
                text.push_str(&note);
            }
        }
        self.items_mut().push(Item::ToolResult {
            call_id: call.id,
            output: text,
        });
        self.next_call(out);
    }
}
