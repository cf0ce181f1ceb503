//! discord_read_history: read a channel's recent messages through the port.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{spec, PortSlot, HISTORY_DEFAULT, HISTORY_MAX};
use crate::tools::args::{opt_str, opt_u64};
use crate::tools::{Availability, Tool, ToolContext, ToolOutput, ToolSpec};

/// discord_read_history: read a channel's recent messages.
pub struct ReadHistory {
    spec: ToolSpec,
    port: PortSlot,
}

impl ReadHistory {
    /// The tool, reading through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "channel_id": {"type": "string", "description": "The channel to read; this conversation's channel when left out."},
                "limit": {"type": "integer", "description": "How many messages (default 100, at most 400)."}
            },
            "additionalProperties": false
        });
        ReadHistory {
            spec: spec(
                "discord_read_history",
                "Read the recent messages of a Discord channel (this one by default) that the person asking can read.",
                params,
                ["Let me scroll back.", "Still reading…", "Read it.", "I couldn't read that channel."],
            ),
            port,
        }
    }
}

#[async_trait]
impl Tool for ReadHistory {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, _ctx: &Availability<'_>) -> bool {
        self.port.get().is_some()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let name = "discord_read_history";
        let (channel, limit) = match (
            opt_str(&args, "channel_id", name),
            opt_u64(&args, "limit", name),
        ) {
            (Ok(c), Ok(l)) => (c, l),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        let limit = limit
            .map(|l| usize::try_from(l).unwrap_or(HISTORY_MAX))
            .unwrap_or(HISTORY_DEFAULT)
            .clamp(1, HISTORY_MAX);
        let Some(port) = self.port.get() else {
            return ToolOutput::refused("Discord is not connected, so nothing was read.");
        };
        match port.read_history(&ctx.turn, channel, limit).await {
            Ok(text) => ToolOutput::ok(text),
            Err(why) => ToolOutput::refused(why.to_string()),
        }
    }
}
