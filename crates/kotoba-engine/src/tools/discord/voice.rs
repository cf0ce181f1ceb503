//! discord_voice: join, move to, or leave a Discord voice channel, or say where she
//! is (90 s). Through the Discord port, like the read tools; offered only while the
//! Discord surface is connected, and not to guests.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use kotoba_core::protocol::{Risk, StepKind};

use super::{PortSlot, VoiceAction};
use crate::tools::args::{opt_str, req_str};
use crate::tools::{
    Availability, Behaviour, Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec,
};

/// The tool's own budget (engine.md: discord_voice 90 s).
pub const TIMEOUT: Duration = Duration::from_secs(90);

/// discord_voice.
pub struct DiscordVoice {
    spec: ToolSpec,
    port: PortSlot,
}

impl DiscordVoice {
    /// The tool, acting through `port`.
    pub fn new(port: PortSlot) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["join", "leave", "status"], "description": "join (or move to) a voice channel, leave it, or say where she is."},
                "channel_id": {"type": "string", "description": "The voice channel to join; the voice channel of the person asking when left out."}
            },
            "required": ["action"],
            "additionalProperties": false
        });
        DiscordVoice {
            spec: ToolSpec {
                name: "discord_voice".into(),
                description: "Join or leave a voice channel in this Discord server, to talk and listen there. 'join' with no channel joins the voice channel of the person asking.".into(),
                family: "discord".into(),
                risk: Risk::Write,
                step_kind: StepKind::Tool,
                timeout: Some(TIMEOUT),
                takes_timeout_arg: false,
                scope: Scope::Both,
                lines: ToolLines {
                    announce: Some("Hopping over to voice.".into()),
                    heartbeat: vec!["One moment…".into()],
                    after: Some("Okay, done.".into()),
                    fail: Some("I couldn't manage the voice channel.".into()),
                },
                parameters,
                behaviour: Behaviour::default(),
            },
            port,
        }
    }
}

/// An `action` that is not join, leave or status (lowercased): the sentence telling the
/// model what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("discord_voice: 'action' must be join, leave or status, not {0:?}. Nothing was done.")]
pub struct UnknownAction(pub String);

/// The action named in `raw`, or why it names none.
pub fn parse_action(raw: &str) -> Result<VoiceAction, UnknownAction> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "join" | "move" => Ok(VoiceAction::Join),
        "leave" => Ok(VoiceAction::Leave),
        "status" => Ok(VoiceAction::Status),
        other => Err(UnknownAction(other.to_string())),
    }
}

#[async_trait]
impl Tool for DiscordVoice {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, _ctx: &Availability<'_>) -> bool {
        self.port.get().is_some()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let name = "discord_voice";
        let (action, channel) = match (
            req_str(&args, "action", name),
            opt_str(&args, "channel_id", name),
        ) {
            (Ok(a), Ok(c)) => (a, c),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        let action = match parse_action(action) {
            Ok(a) => a,
            Err(why) => return ToolOutput::refused(why.to_string()),
        };
        let Some(port) = self.port.get() else {
            return ToolOutput::refused("Discord is not connected, so nothing was done.");
        };
        match port.voice(&ctx.turn, action, channel).await {
            Ok(text) => ToolOutput::ok(text),
            Err(why) => ToolOutput::failed(why.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_voice_action_tells_the_model_what_was_wrong() {
        assert_eq!(parse_action("Join"), Ok(VoiceAction::Join));
        assert_eq!(parse_action("leave"), Ok(VoiceAction::Leave));
        let why = parse_action("dance").unwrap_err().to_string();
        assert!(why.contains("join, leave or status"), "{why}");
    }

    #[test]
    fn discord_voice_has_its_own_ninety_second_budget_and_is_not_a_guest_tool() {
        let tool = DiscordVoice::new(PortSlot::default());
        assert_eq!(tool.spec().timeout, Some(Duration::from_secs(90)));
        assert!(!crate::engine::guest_may_use(tool.spec()));
    }
}
