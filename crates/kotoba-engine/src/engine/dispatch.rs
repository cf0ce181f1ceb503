//! The driver's side of one call: the context a tool runs with (its turn, paths,
//! secrets, frames), the gate it goes through, its run under the budget the core set
//! (with a heartbeat tick fed to the core every `HEARTBEAT_TICK`), and the records the
//! core asks to keep. What any of it
//! means is the core's to decide (`core/call.rs`).

use std::sync::Arc;

use serde_json::Value;

use crate::tools::{FrameSink, Tool, ToolContext, ToolOutput};
use kotoba_core::protocol::Answerers;

use super::core::{Effect, Event, GateEnd, Persist, RunOrder};
use super::narration::HEARTBEAT_TICK;
use super::turn::Driver;

/// Replace every unlocked secret's value in a tool's output: values never reach the
/// model, a row, a transcript or a channel.
fn redact(text: &mut String, secrets: &[(String, String)]) {
    for (var, value) in secrets {
        if value.len() >= 4 && text.contains(value.as_str()) {
            *text = text.replace(value.as_str(), &format!("[secret ${var}]"));
        }
    }
}

impl Driver<'_> {
    /// The context one call of this turn runs with.
    fn tool_context(&self, call_id: &str, approved_by: Option<String>) -> ToolContext {
        ToolContext {
            turn: self.door.ctx.clone(),
            call_id: call_id.to_string(),
            paths: self.door.paths.clone(),
            engine: self.engine.port(),
            secret_env: self.engine.secret_env(&self.session.id),
            settings: self.door.settings.clone(),
            frames: Some(self.frame_sink()),
            store: Some(self.engine.store.clone()),
            reminders: Some(self.engine.reminder_hub.clone()),
            approved_by,
        }
    }

    /// Put one call through the gate; what it decided, as the core's event.
    pub(super) async fn gate_call(
        &mut self,
        call_id: String,
        tool: &Arc<dyn Tool>,
        args: &Value,
    ) -> Event {
        let tool_ctx = self.tool_context(&call_id, None);
        let mut end = self.gate(tool, &call_id, args, &tool_ctx).await;
        if let GateEnd::Stop(out) | GateEnd::Deferred(out) = &mut end {
            redact(&mut out.text, &tool_ctx.secret_env);
        }
        Event::Gated { call_id, end }
    }

    /// Run one call under its budget; a heartbeat tick goes to the core every
    /// `HEARTBEAT_TICK` while it runs, and the beats it returns are drawn at once.
    pub(super) async fn run_call(&mut self, order: RunOrder) -> Event {
        let RunOrder {
            call_id,
            tool,
            args,
            budget,
            approved_by,
        } = order;
        let tool_ctx = self.tool_context(&call_id, approved_by);
        let work = tool.run(args, &tool_ctx);
        tokio::pin!(work);
        let deadline = tokio::time::sleep(budget);
        tokio::pin!(deadline);
        let start = tokio::time::Instant::now() + HEARTBEAT_TICK;
        let mut tick = tokio::time::interval_at(start, HEARTBEAT_TICK);
        loop {
            tokio::select! {
                out = &mut work => {
                    let mut output: ToolOutput = out;
                    redact(&mut output.text, &tool_ctx.secret_env);
                    return Event::Finished { call_id, output };
                }
                _ = &mut deadline => return Event::BudgetSpent { call_id },
                _ = tick.tick() => {
                    let blocked = self.blocked.is_blocked();
                    let beats = self.core.step(Event::Tick { call_id: call_id.clone(), blocked });
                    for effect in beats {
                        if let Effect::Emit(frame) = effect {
                            self.emit(frame);
                        }
                    }
                }
            }
        }
    }

    /// Keep one record.
    pub(super) async fn persist(&mut self, p: Persist) {
        match p {
            Persist::RunStarted {
                call_id,
                tool,
                line,
                risk,
            } => {
                let running =
                    super::gating::start_run(self.engine, &self.session.id, &tool, &line, risk)
                        .await;
                self.running.insert(call_id, running);
            }
            Persist::RunFinished {
                call_id,
                ended,
                outcome,
            } => {
                if let Some(running) = self.running.remove(&call_id) {
                    super::gating::finish_run(running, &ended, outcome).await;
                }
            }
            Persist::Step {
                tool,
                line,
                outcome,
                result,
                row,
            } => {
                self.engine
                    .record_step(
                        &self.session.id,
                        (&tool, &line),
                        outcome,
                        &result,
                        row.as_ref(),
                    )
                    .await;
            }
            Persist::Interrupted(row) => {
                super::turn::keep_interrupted(self.engine, &self.session.id, row)
            }
        }
    }

    /// A sink that puts a tool's own frames on this turn's bus with its run_id.
    fn frame_sink(&self) -> FrameSink {
        let session = self.session.clone();
        let run_id = self.door.ctx.run_id.clone();
        FrameSink::new(move |frame| session.emit(run_id.as_deref(), frame))
    }

    /// Who may answer a host card in this session, resolved at the turn's door.
    pub(super) fn answerers(&self) -> Answerers {
        self.door.answerers.clone()
    }
}
