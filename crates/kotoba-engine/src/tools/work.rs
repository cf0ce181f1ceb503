//! start_work and cancel_work: the mode controls (companion only). start_work returns
//! at once with the narrow "launched, nothing done yet" sentence; cancel_work stops the
//! session's job (the terminal's /stop and Discord's stop call the same code).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::req_str;
use super::Behaviour;
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Risk, StepKind};

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        family: "core".into(),
        risk: Risk::Write,
        step_kind: StepKind::Tool,
        timeout: None,
        takes_timeout_arg: false,
        scope: Scope::CompanionOnly,
        lines: if name == "start_work" {
            ToolLines::of(
                "I'll get that going in the background.",
                &["Setting it up.", "Nearly started."],
                "It's running in the background now.",
                "I couldn't start that job.",
            )
        } else {
            ToolLines::of(
                "Stopping the job.",
                &["Stopping it.", "Almost stopped."],
                "It's stopped.",
                "I couldn't stop it.",
            )
        },
        parameters,
        behaviour: Behaviour::default(),
    }
}

fn no_engine(name: &str) -> ToolOutput {
    ToolOutput::refused(format!(
        "'{name}' cannot reach the engine here, so NOTHING was started or stopped."
    ))
}

/// `start_work`: launch a background job.
pub struct StartWork {
    spec: ToolSpec,
}

impl Default for StartWork {
    fn default() -> Self {
        StartWork {
            spec: spec(
                "start_work",
                "Start a background job for work that needs several steps, the browser, running code or a \
                 new capability. It returns at once; the conversation goes on and the result is announced \
                 when the job ends. One job at a time per conversation.",
                json!({
                    "type": "object",
                    "properties": {"goal": {"type": "string", "description": "What the job must achieve, in one or two sentences."}},
                    "required": ["goal"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

#[async_trait]
impl Tool for StartWork {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let goal = match req_str(&args, "goal", "start_work") {
            Ok(g) if !g.trim().is_empty() => g.trim(),
            Ok(_) => {
                return ToolOutput::refused("start_work: the goal is empty. Nothing was started.")
            }
            Err(refusal) => return refusal,
        };
        let Some(engine) = &ctx.engine else {
            return no_engine("start_work");
        };
        match engine.start_work(ctx, goal).await {
            Ok(sentence) => ToolOutput::ok(sentence),
            Err(sentence) => ToolOutput::refused(sentence.to_string()),
        }
    }
}

/// `cancel_work`: stop the session's background job.
pub struct CancelWork {
    spec: ToolSpec,
}

impl Default for CancelWork {
    fn default() -> Self {
        CancelWork {
            spec: spec(
                "cancel_work",
                "Stop the background job running in this conversation and cancel every approval card still \
                 waiting here, when the person asks you to stop (also when no job runs).",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
        }
    }
}

#[async_trait]
impl Tool for CancelWork {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, _args: Value, ctx: &ToolContext) -> ToolOutput {
        let Some(engine) = &ctx.engine else {
            return no_engine("cancel_work");
        };
        match engine.cancel_work(ctx) {
            Ok(sentence) => ToolOutput::ok(sentence),
            Err(sentence) => ToolOutput::refused(sentence.to_string()),
        }
    }
}
