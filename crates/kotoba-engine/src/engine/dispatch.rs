//! Dispatch of one tool call: door refusals, caps and the repeat memo, then the run
//! itself — row or peek, announce, the approval card for exec, the tool budget, the
//! heartbeat — and the outcome from witnesses (engine.md §2, §3).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::llm::ToolCall;
use crate::tools::{FrameSink, Scope, Tool, ToolContext, ToolOutput};
use kotoba_core::protocol::{Answerers, Frame, Mode, Outcome, SayKind};

use super::budget::{
    call_key, cap_reached_note, per_tool_cap_sentence, repeat_sentence, turn_cap_sentence,
};
use super::gating::{finish_run, gate_action, start_run, GateEnd};
use super::narration::{HeartbeatClock, HeartbeatPlan, HEARTBEAT_TICK};
use super::output::{model_text, outcome_of, row_full_output, row_result};
use super::rows::RowClose;
use super::transport::tool_budget;
use super::turn::Loop;

/// The sentence when a job's first call is not the skill that matches it.
pub(super) fn step_zero_sentence(skill: &str) -> String {
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

/// Replace every unlocked secret's value in a tool's output: values never reach the
/// model, a row, a transcript or a channel.
fn redact(text: &mut String, secrets: &[(String, String)]) {
    for (var, value) in secrets {
        if value.len() >= 4 && text.contains(value.as_str()) {
            *text = text.replace(value.as_str(), &format!("[secret ${var}]"));
        }
    }
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

impl Loop<'_> {
    /// The door: is this name callable in this turn at all?
    fn door(&mut self, name: &str) -> Result<Arc<dyn Tool>, Shut> {
        let Some(tool) = self.engine.tools.find(name) else {
            // A configured MCP server's tool: work-only, and deferred until activated.
            let server = self.engine.tools.source().and_then(|m| m.server_of(name));
            return Err(match (server, self.ctx.mode) {
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

    /// Dispatch one call and return what the model reads.
    pub(super) async fn dispatch(&mut self, call: &ToolCall) -> String {
        let name = call.name.as_str();
        let tool = match self.door(name) {
            Ok(t) => t,
            Err(shut) => return shut.to_string(),
        };
        if self.spent.tool_calls >= self.caps.max_tool_calls {
            return turn_cap_sentence(self.caps.max_tool_calls);
        }
        let cap = self.caps.for_tool(tool.spec());
        let count = self.spent.count_tool(name);
        if count > cap {
            return per_tool_cap_sentence(name, cap);
        }
        let args = match parse_args(&call.arguments) {
            Ok(a) => a,
            Err(why) => {
                return format!(
                    "'{name}' was NOT run: {why}. Call it again with valid JSON arguments."
                );
            }
        };
        if let Some(skill) = self.ctx.step_zero.as_deref() {
            let opened = tool.spec().behaviour.opens_skill;
            let is_view =
                opened.is_some_and(|arg| args.get(arg).and_then(Value::as_str) == Some(skill));
            if self.spent.tool_calls == 0 && !is_view {
                return step_zero_sentence(skill);
            }
        }
        let key = call_key(name, &args);
        if let Some(earlier) = self.spent.earlier(&key) {
            return repeat_sentence(name, earlier);
        }
        self.spent.tool_calls += 1;
        let (out, outcome) = self.run_call(&tool, &call.call_id, args).await;
        if outcome == Outcome::Failed {
            self.spent.failures += 1;
            if tool.withdraw_after_failure() {
                self.offered.retain(|t| t.spec().name != name);
            }
        }
        self.spent.remember(key, outcome);
        let mut text = model_text(tool.spec().behaviour.output_cap, &out, outcome);
        if count == cap {
            if let Some(note) = cap_reached_note(tool.spec(), cap) {
                text.push_str(&note);
            }
        }
        text
    }

    /// Run a call that passed the door: row or peek, announce, gate, budget, heartbeat.
    async fn run_call(
        &mut self,
        tool: &Arc<dyn Tool>,
        call_id: &str,
        args: Value,
    ) -> (ToolOutput, Outcome) {
        let spec = tool.spec();
        // A role-granted host tool in a guest's turn asks even to read.
        let is_action = spec.risk.is_action() || super::turn::asks_every_call(&self.ctx, spec);
        if is_action {
            let action = tool.action_line(&args);
            self.rows.open(call_id, &spec.name, spec.step_kind, &action);
            if let Some(meter) = &self.ctx.meter {
                meter
                    .steps
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            self.emit(Frame::Face {
                expression: spec.behaviour.focus_face.into(),
            });
        } else {
            self.rows.set_peek(Some(&spec.name));
        }
        if let Some(line) = self.narrator.announce(spec) {
            self.emit(Frame::Say {
                kind: SayKind::Announce,
                text: line,
            });
        }
        let budget = tool_budget(spec, &args, self.ctx.channel, self.ctx.el_call_bound);
        let plan = self.narrator.heartbeat(spec);
        let mut tool_ctx = ToolContext {
            turn: self.ctx.clone(),
            call_id: call_id.to_string(),
            paths: self.paths.clone(),
            engine: self.engine.port(),
            secret_env: self.engine.secret_env(&self.session.id),
            settings: self.settings.clone(),
            frames: Some(self.frame_sink()),
            store: Some(self.engine.store.clone()),
            reminders: Some(self.engine.reminder_hub.clone()),
            approved_by: None,
        };
        let mut args = args;
        let mut edit_note = None;
        let gated = if is_action {
            match self.gate(tool, call_id, &args, &tool_ctx).await {
                GateEnd::Proceed { approved_by } => {
                    tool_ctx.approved_by = approved_by;
                    None
                }
                GateEnd::Stop(out) => Some(out),
                GateEnd::Edited(edit) => {
                    // The row shows what actually runs; the model is told it was edited.
                    args = edit.args;
                    self.rows.set_action(call_id, &tool.action_line(&args));
                    edit_note = Some(edit.note);
                    tool_ctx.approved_by = Some(edit.by);
                    debug_assert_eq!(gate_action(tool.as_ref(), &args).0, edit.line);
                    None
                }
            }
        } else {
            None
        };
        let line = is_action.then(|| gate_action(tool.as_ref(), &args).0);
        let out = match gated {
            Some(out) => out,
            None => {
                // The executed row is written before the command starts (docs/engine.md §6).
                let running = match line.as_ref() {
                    Some(line) => Some(
                        start_run(self.engine, &self.session.id, &spec.name, line, spec.risk).await,
                    ),
                    None => None,
                };
                let work = tool.run(args, &tool_ctx);
                let out = self.with_heartbeat(work, budget, &spec.name, plan).await;
                if let Some(running) = running {
                    finish_run(running, &out).await;
                }
                out
            }
        };
        let mut out = out;
        redact(&mut out.text, &tool_ctx.secret_env);
        let outcome = outcome_of(&out);
        if is_action {
            let (full_output, clipped) = row_full_output(spec.behaviour.output_cap, &out);
            let result = row_result(spec.step_kind, &out, outcome);
            let close = RowClose {
                outcome,
                ending: out.refusal(),
                result: result.clone(),
                full_output,
                clipped,
            };
            // A turn's row is kept as it will be drawn, then drawn; a job's step is kept
            // as its record only.
            let row = self.rows.closed(call_id, close);
            let keep = row.as_ref().filter(|_| self.ctx.run_id.is_none());
            self.engine
                .record_step(
                    &self.session.id,
                    (&spec.name, line.as_deref().unwrap_or_default()),
                    outcome,
                    &result,
                    keep,
                )
                .await;
            if let Some(row) = row {
                self.rows.close(row);
            }
            for release in self.releases.drain(..) {
                let _ = release.send(());
            }
        }
        if outcome == Outcome::Failed {
            self.emit(Frame::Face {
                expression: "fail".into(),
            });
        }
        let confirm = match outcome {
            Outcome::Ok => self
                .narrator
                .confirm(spec, SayKind::After)
                .map(|l| (SayKind::After, l)),
            Outcome::Failed => self
                .narrator
                .confirm(spec, SayKind::Fail)
                .map(|l| (SayKind::Fail, l)),
            _ => None,
        };
        if let Some((kind, text)) = confirm {
            self.emit(Frame::Say { kind, text });
        }
        // The model learns the person edited the line (the row already shows it).
        if let Some(note) = edit_note {
            out.text.insert_str(0, &note);
        }
        (out, outcome)
    }

    /// A sink that puts a tool's own frames on this turn's bus with its run_id.
    fn frame_sink(&self) -> FrameSink {
        let session = self.session.clone();
        let run_id = self.ctx.run_id.clone();
        FrameSink::new(move |frame| session.emit(run_id.as_deref(), frame))
    }

    /// Who may answer a host card in this session: the configured owners; a local
    /// session (the terminal) is its owner's by construction.
    pub(super) fn answerers(&self) -> Answerers {
        self.engine.answerers_for(&self.ctx.person)
    }

    /// Drive `work` under its budget, polling every 3 s for heartbeats.
    async fn with_heartbeat<F>(
        &self,
        work: F,
        budget: Duration,
        name: &str,
        plan: HeartbeatPlan,
    ) -> ToolOutput
    where
        F: Future<Output = ToolOutput>,
    {
        tokio::pin!(work);
        let deadline = tokio::time::sleep(budget);
        tokio::pin!(deadline);
        let start = tokio::time::Instant::now() + HEARTBEAT_TICK;
        let mut tick = tokio::time::interval_at(start, HEARTBEAT_TICK);
        let mut clock = HeartbeatClock::default();
        loop {
            tokio::select! {
                out = &mut work => return out,
                _ = &mut deadline => {
                    let secs = budget.as_secs();
                    return ToolOutput::exited(124, format!(
                        "'{name}' ran past its budget of {secs} s and was stopped. Do not retry the same call."
                    ));
                }
                _ = tick.tick() => {
                    let blocked = self.blocked.is_blocked();
                    if let Some(n) = clock.tick(blocked) {
                        if let Some(text) = plan.beat(n) {
                            self.emit(Frame::Say { kind: SayKind::Heartbeat, text });
                        }
                    }
                }
            }
        }
    }
}
