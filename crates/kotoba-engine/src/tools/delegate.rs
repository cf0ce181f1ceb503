//! delegate (work only, 420 s): hand one or two sub-tasks to helpers that run the same
//! loop (depth 1, at most two at once, duplicate goals removed before launch).

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{Behaviour, CapGroup};
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Risk, StepKind};

/// `delegate`.
pub struct Delegate {
    spec: ToolSpec,
}

impl Default for Delegate {
    fn default() -> Self {
        Delegate {
            spec: ToolSpec {
                name: "delegate".into(),
                description:
                    "Hand independent sub-tasks to helpers that work in parallel (at most two at \
                              once) and report back. Each task must stand on its own."
                        .into(),
                family: "subagent".into(),
                risk: Risk::Write,
                step_kind: StepKind::Tool,
                timeout: Some(Duration::from_secs(420)),
                takes_timeout_arg: false,
                scope: Scope::WorkOnly,
                lines: ToolLines::of(
                    "I'll split this up with some helpers.",
                    &[
                        "The helpers are still working.",
                        "Still waiting on the helpers.",
                    ],
                    "The helpers are done.",
                    "A helper didn't finish.",
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {"tasks": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4,
                                             "description": "One goal per helper."}},
                    "required": ["tasks"],
                    "additionalProperties": false
                }),
                // A helper costs a whole sub-loop, and a helper never starts another.
                behaviour: Behaviour {
                    cap_group: CapGroup::Helpers,
                    for_helpers: false,
                    ..Behaviour::default()
                },
            },
        }
    }
}

#[async_trait]
impl Tool for Delegate {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let tasks: Vec<String> = match args.get("tasks") {
            Some(Value::Array(items)) if !items.is_empty() => {
                match items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                {
                    Some(t) => t,
                    None => {
                        return ToolOutput::refused(
                            "delegate: every task must be a string. Nothing was started.",
                        )
                    }
                }
            }
            _ => {
                return ToolOutput::refused(
                    "delegate: 'tasks' must be a non-empty list of goals. Nothing was started.",
                )
            }
        };
        if ctx.turn.depth >= 1 {
            return ToolOutput::refused(
                "delegate: a helper cannot start helpers of its own. NOTHING ran.",
            );
        }
        let Some(engine) = &ctx.engine else {
            return ToolOutput::refused("delegate: the engine is not reachable here. NOTHING ran.");
        };
        let results = engine.delegate(ctx, tasks).await;
        let all_ok = !results.is_empty() && results.iter().all(|r| r.ok);
        let text = results
            .iter()
            .map(|r| {
                format!(
                    "- [{}] {}: {}",
                    if r.ok { "ok" } else { "FAILED" },
                    r.goal,
                    r.summary
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        if all_ok {
            ToolOutput::ok(text)
        } else {
            ToolOutput::failed(format!("Not every helper succeeded:\n{text}"))
        }
    }
}
