//! Dispatch of one tool call: door refusals, caps and the repeat memo, then the run
//! itself — row or peek, announce, the approval card for exec, the tool budget, the
//! heartbeat — and the outcome from witnesses (engine.md §2, §3).

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::llm::ToolCall;
use crate::protocol::{Answerers, Frame, Mode, Outcome, SayKind};
use crate::tools::{Scope, Tool, ToolContext, ToolOutput};

use super::budget::{call_key, per_tool_cap_sentence, repeat_sentence, turn_cap_sentence};
use super::gating::{audit_run, gate_action, GateEnd};
use super::narration::{HeartbeatClock, HeartbeatPlan, HEARTBEAT_TICK};
use super::output::{model_text, outcome_of, row_full_output, row_result};
use super::rows::RowClose;
use super::transport::tool_budget;
use super::turn::Loop;

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

/// The sentence for start_work / cancel_work inside a job.
pub fn companion_only_sentence(name: &str) -> String {
    format!(
        "'{name}' cannot be called from inside a background job: a job cannot start another job or cancel \
         itself. NOTHING ran."
    )
}

/// Counts a blocking wait on a person while alive (heartbeats are postponed).
pub(super) struct Blocked(Arc<AtomicUsize>);

impl Blocked {
    pub(super) fn new(counter: &Arc<AtomicUsize>) -> Blocked {
        counter.fetch_add(1, Ordering::SeqCst);
        Blocked(counter.clone())
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn parse_args(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("the arguments must be a JSON object, got {other}")),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}

impl Loop<'_> {
    /// The door: is this name callable in this turn at all? `Err` is the sentence.
    fn door(&mut self, name: &str) -> Result<Arc<dyn Tool>, String> {
        let Some(tool) = self.engine.tools.get(name).cloned() else {
            self.spent.failures += 1; // an unknown name is a failure, not a refusal
            return Err(unknown_sentence(name));
        };
        let spec = tool.spec();
        if self.settings.disabled_toolsets.contains(&spec.family) {
            return Err(switched_off_sentence(name, &spec.family));
        }
        match (spec.scope, self.ctx.mode) {
            (Scope::WorkOnly, Mode::Companion) => return Err(work_only_sentence(name)),
            (Scope::CompanionOnly, Mode::Work) => return Err(companion_only_sentence(name)),
            _ => {}
        }
        if self.words_only || !self.offered.iter().any(|t| t.spec().name == name) {
            return Err(withheld_sentence(name));
        }
        Ok(tool)
    }

    /// Dispatch one call and return what the model reads.
    pub(super) async fn dispatch(&mut self, call: &ToolCall) -> String {
        let name = call.name.as_str();
        let tool = match self.door(name) {
            Ok(t) => t,
            Err(sentence) => return sentence,
        };
        if self.spent.tool_calls >= self.caps.max_tool_calls {
            return turn_cap_sentence(self.caps.max_tool_calls);
        }
        let cap = self.caps.for_tool(name);
        if self.spent.count_tool(name) > cap {
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
        let key = call_key(name, &args);
        if let Some(earlier) = self.spent.earlier(&key) {
            return repeat_sentence(name, earlier);
        }
        self.spent.tool_calls += 1;
        let (out, outcome) = self.run_call(&tool, &call.call_id, args).await;
        if outcome == Outcome::Failed {
            self.spent.failures += 1;
        }
        self.spent.remember(key, outcome);
        model_text(name, &out, outcome)
    }

    /// Run a call that passed the door: row or peek, announce, gate, budget, heartbeat.
    async fn run_call(
        &mut self,
        tool: &Arc<dyn Tool>,
        call_id: &str,
        args: Value,
    ) -> (ToolOutput, Outcome) {
        let spec = tool.spec();
        let is_action = spec.risk.is_action();
        if is_action {
            let action = tool.action_line(&args);
            self.rows.open(call_id, &spec.name, spec.step_kind, &action);
            self.emit(Frame::Face {
                expression: "focus".into(),
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
        let tool_ctx = ToolContext {
            session: self.session.id.clone(),
            call_id: call_id.to_string(),
            register: self.ctx.register,
            channel: self.ctx.channel,
            el_call_bound: self.ctx.el_call_bound,
            mode: self.ctx.mode,
            run_id: self.ctx.run_id.clone(),
            user_request: self.ctx.user_request.clone(),
            paths: self.paths.clone(),
        };
        let gated = if is_action {
            match self.gate(tool, call_id, &args, &tool_ctx).await {
                GateEnd::Proceed => None,
                GateEnd::Stop(out) => Some(out),
            }
        } else {
            None
        };
        let line = is_action.then(|| gate_action(tool.as_ref(), &args).0);
        let out = match gated {
            Some(out) => out,
            None => {
                let work = tool.run(args, &tool_ctx);
                let out = self.with_heartbeat(work, budget, &spec.name, plan).await;
                if let Some(line) = &line {
                    audit_run(
                        self.engine,
                        &self.session.id,
                        &spec.name,
                        line,
                        spec.risk,
                        &out,
                    );
                }
                out
            }
        };
        let outcome = outcome_of(&out);
        if is_action {
            let (full_output, clipped) = row_full_output(&spec.name, &out);
            let close = RowClose {
                outcome,
                ending: out.refused,
                result: row_result(spec.step_kind, &out, outcome),
                full_output,
                clipped,
            };
            self.rows.close(call_id, close);
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
        (out, outcome)
    }

    /// Who may answer a host card in this session: the configured owners; a local
    /// session (the terminal) is its owner's by construction.
    pub(super) fn answerers(&self) -> Answerers {
        // The terminal and the web page (password-checked, or loopback-only with none
        // set) are their owner's by construction; every other session names the owners.
        if self.session.id.starts_with("terminal:") || self.session.id.starts_with("web:") {
            Answerers::Local
        } else {
            Answerers::Owners {
                ids: self.settings.owners.clone(),
            }
        }
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
                    let mut out = ToolOutput::failed(format!(
                        "'{name}' ran past its budget of {secs} s and was stopped. Do not retry the same call."
                    ));
                    out.exit_code = Some(124);
                    return out;
                }
                _ = tick.tick() => {
                    let blocked = self.blocked.load(Ordering::SeqCst) > 0;
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
