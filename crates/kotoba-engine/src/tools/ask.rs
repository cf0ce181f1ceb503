//! ask_user and clarify. In a conversation a question is the answer: she asks it in
//! words and the reply is the next turn. In a background job there is no next turn, so
//! both put an input card on screen and block (ask_user 300 s, clarify 180 s); a
//! question that no surface can draw is refused before it is asked.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::req_str;
use super::port::Asked;
use super::Behaviour;
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Ending, Mode, Risk, StepKind};

/// `ask_user` or `clarify`: the same mechanism, two windows.
pub struct Ask {
    spec: ToolSpec,
    window: Duration,
}

impl Ask {
    fn new(name: &str, description: &str, window: Duration, behaviour: Behaviour) -> Ask {
        Ask {
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                family: "core".into(),
                risk: Risk::Read,
                step_kind: StepKind::Tool,
                timeout: Some(window + Duration::from_secs(5)),
                takes_timeout_arg: false,
                scope: Scope::Both,
                lines: ToolLines::of(
                    "I need to ask you something.",
                    &["Waiting for your answer.", "Still waiting on you."],
                    "Thanks.",
                    "I couldn't ask that.",
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {"question": {"type": "string", "description": "The question, short and specific."}},
                    "required": ["question"],
                    "additionalProperties": false
                }),
                behaviour,
            },
            window,
        }
    }

    /// `ask_user`: a question whose answer the work needs (300 s in a job).
    pub fn ask_user() -> Ask {
        Ask::new(
            "ask_user",
            "Ask the person a question whose answer you need to go on (in a background job this shows a card and waits).",
            kotoba_core::protocol::ASK_USER_WINDOW,
            Behaviour::default(),
        )
    }

    /// `clarify`: resolve an ambiguity in the request (180 s in a job).
    pub fn clarify() -> Ask {
        Ask::new(
            "clarify",
            "Ask the person to clarify an ambiguous request before acting (in a background job this shows a card and waits).",
            kotoba_core::protocol::CLARIFY_WINDOW,
            // Asking what they meant touches nothing of the host.
            Behaviour::guest(),
        )
    }
}

#[async_trait]
impl Tool for Ask {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let name = self.spec.name.as_str();
        let question = match req_str(&args, "question", name) {
            Ok(q) if !q.trim().is_empty() => q.trim(),
            Ok(_) => {
                return ToolOutput::refused(format!(
                    "{name}: the question is empty. Nothing was asked."
                ))
            }
            Err(refusal) => return refusal,
        };
        if ctx.turn.mode == Mode::Companion {
            return ToolOutput::ok(format!(
                "Ask it in your reply, in your own words: \"{question}\". Their answer will arrive as their next message."
            ));
        }
        let Some(engine) = &ctx.engine else {
            return ToolOutput::refused_with(
                Ending::Unreachable,
                format!("{name}: nobody can be asked here, so nothing was asked."),
            );
        };
        match engine.ask_person(ctx, name, question, self.window, false).await {
            Asked::Answered(text) => ToolOutput::ok(format!("They answered: {text}")),
            Asked::Skipped => ToolOutput::refused_with(
                Ending::Declined,
                format!("{name}: they skipped the question without answering. Decide with what you have, or stop and report."),
            ),
            Asked::Unreachable => ToolOutput::refused_with(
                Ending::Unreachable,
                format!("{name}: no one is watching this conversation to answer a card, so the question was NOT asked. Decide with what you have, or stop and report."),
            ),
            Asked::Expired => ToolOutput::refused_with(
                Ending::Unanswered,
                format!("{name}: the question card expired after {} s without an answer. Decide with what you have, or stop and report.", self.window.as_secs()),
            ),
            Asked::Dismissed => ToolOutput::refused_with(Ending::Dismissed, format!("{name}: the question card went away unanswered.")),
        }
    }
}
