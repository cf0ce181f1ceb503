//! The Discord read tools (discord_read_history, discord_people). They never import
//! serenity: they call a [`DiscordPort`] that the Discord surface registers in a
//! [`PortSlot`] while it is connected, and they are offered only while one is there.

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::protocol::{Risk, StepKind};

use super::args::{opt_str, opt_u64};
use super::Behaviour;
use super::{Availability, Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};

/// How many messages discord_read_history reads when not told.
pub const HISTORY_DEFAULT: usize = 100;
/// The most it reads in one call.
pub const HISTORY_MAX: usize = 400;

/// What the Discord surface does for the read tools. Each answer is text for the
/// model, or one sentence saying why not (the asker may not read that channel, …).
#[async_trait]
pub trait DiscordPort: Send + Sync {
    /// The last `limit` messages of `channel` (a channel id; `None`: this session's
    /// channel), oldest first, as the person asking this turn may read them.
    async fn read_history(
        &self,
        session: &str,
        channel: Option<&str>,
        limit: usize,
    ) -> Result<String, String>;

    /// Members of this session's guild (only), filtered by `query` when given.
    async fn people(&self, session: &str, query: Option<&str>) -> Result<String, String>;

    /// Join, leave or describe the voice room of this session's guild (the
    /// discord_voice tool). Join goes to `channel` (a voice channel id) or else to the
    /// voice channel of the person asking. The answer is one sentence either way.
    async fn voice(
        &self,
        session: &str,
        action: VoiceAction,
        channel: Option<&str>,
    ) -> Result<String, String> {
        let _ = (session, action, channel);
        Err("Voice is not available here.".into())
    }
}

/// What discord_voice is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoiceAction {
    /// Join (or move to) a voice channel.
    Join,
    /// Leave the voice channel (after the turn and playback end).
    Leave,
    /// Say where she is.
    Status,
}

/// Where the surface puts its port while connected (empty otherwise).
#[derive(Clone, Default)]
pub struct PortSlot(Arc<RwLock<Option<Arc<dyn DiscordPort>>>>);

impl PortSlot {
    /// Register (or, with `None`, withdraw) the port.
    pub fn set(&self, port: Option<Arc<dyn DiscordPort>>) {
        match self.0.write() {
            Ok(mut g) => *g = port,
            Err(p) => *p.into_inner() = port,
        }
    }

    /// The port, when the bot is connected.
    pub fn get(&self) -> Option<Arc<dyn DiscordPort>> {
        match self.0.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

fn spec(name: &str, description: &str, params: Value, lines: [&str; 4]) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        family: "discord".to_string(),
        risk: Risk::Read,
        step_kind: StepKind::for_tool(name),
        timeout: None,
        takes_timeout_arg: false,
        scope: Scope::Both,
        lines: ToolLines {
            announce: Some(lines[0].to_string()),
            heartbeat: vec![lines[1].to_string(), lines[1].to_string()],
            after: Some(lines[2].to_string()),
            fail: Some(lines[3].to_string()),
        },
        parameters: params,
        // Reading the channel or its people touches nothing of the host.
        behaviour: Behaviour::guest(),
    }
}

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
        match port.read_history(&ctx.session, channel, limit).await {
            Ok(text) => ToolOutput::ok(text),
            Err(why) => ToolOutput::refused(why),
        }
    }
}

/// discord_people: the members of this guild.
pub struct People {
    spec: ToolSpec,
    port: PortSlot,
}

impl People {
    /// The tool, reading through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Part of a name to look for; everyone when left out."}
            },
            "additionalProperties": false
        });
        People {
            spec: spec(
                "discord_people",
                "List the members of this Discord server (only this one), optionally matching a name.",
                params,
                ["Let me look at who's here.", "Still looking…", "Found them.", "I couldn't list the members."],
            ),
            port,
        }
    }
}

#[async_trait]
impl Tool for People {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, _ctx: &Availability<'_>) -> bool {
        self.port.get().is_some()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let query = match opt_str(&args, "query", "discord_people") {
            Ok(q) => q,
            Err(r) => return r,
        };
        let Some(port) = self.port.get() else {
            return ToolOutput::refused("Discord is not connected, so nobody was listed.");
        };
        match port.people(&ctx.session, query).await {
            Ok(text) => ToolOutput::ok(text),
            Err(why) => ToolOutput::refused(why),
        }
    }
}

/// Register both read tools on `registry`, reading through `port`.
pub fn register(registry: &mut super::Registry, port: &PortSlot) {
    registry.register(Arc::new(ReadHistory::new(port.clone())));
    registry.register(Arc::new(People::new(port.clone())));
    registry.register(Arc::new(super::discord_voice::DiscordVoice::new(
        port.clone(),
    )));
}
