//! The Discord tools, one file each (discord_read_history, discord_people,
//! discord_voice, discord_guild_read, discord_act, discord_plan, discord_apply_plan,
//! discord_remember_person, discord_send_file). They never import serenity: they call a [`DiscordPort`] that the
//! Discord surface registers in a [`PortSlot`] while it is connected, and they are
//! offered only while one is there.

mod act;
pub mod action;
mod apply_plan;
mod batch;
pub mod change;
mod forum;
pub mod guild;
mod guild_read;
mod history;
mod people;
mod plan;
pub mod remember;
pub mod resolve;
mod send_file;
#[cfg(test)]
mod tests;
pub mod voice;

pub use act::DiscordAct;
pub use apply_plan::ApplyPlan;
pub use change::{ApiError, Change};
pub use guild::Guild;
pub use guild_read::GuildRead;
pub use history::ReadHistory;
pub use people::People;
pub use plan::DiscordPlan;
pub use remember::{PeopleNotes, RememberPerson};
pub use send_file::SendFile;

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde_json::Value;

use crate::tools::{Behaviour, Gating, ToolLines, ToolSpec};
use kotoba_core::protocol::Risk;
use kotoba_core::turn::TurnContext;

/// How many messages discord_read_history reads when not told.
pub const HISTORY_DEFAULT: usize = 100;
/// The most it reads in one call.
pub const HISTORY_MAX: usize = 400;

/// Discord's file size limit for a bot in a server without boosts (10 MiB).
pub const FILE_LIMIT: u64 = 10 * 1024 * 1024;

/// Why the Discord surface did not do what a tool asked. Each variant's text is the one
/// sentence the model is handed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// The conversation is not where this works (not a Discord channel, not in a
    /// server, not available on this surface): the sentence says which.
    #[error("{0}")]
    NotHere(String),
    /// Discord is not connected.
    #[error("Discord is not connected.")]
    NotConnected,
    /// An argument is not what it must be (a channel id, a voice channel): the sentence.
    #[error("{0}")]
    BadArgument(String),
    /// The person the turn speaks for may not do this (read a channel they cannot
    /// see): the sentence. Nothing was done.
    #[error("{0}")]
    Forbidden(String),
    /// Discord refused or failed: the sentence, with Discord's words.
    #[error("{0}")]
    Discord(String),
}

/// What the Discord surface does for the Discord tools. Every call takes the turn it
/// serves: the conversation is `turn.session` and the person asking is `turn.person`,
/// fixed when the turn was created — never whoever spoke last.
#[async_trait]
pub trait DiscordPort: Send + Sync {
    /// The last `limit` messages of `channel` (a channel id; `None`: this session's
    /// channel), oldest first, as the person the turn speaks for may read them.
    async fn read_history(
        &self,
        turn: &TurnContext,
        channel: Option<&str>,
        limit: usize,
    ) -> Result<String, PortError>;

    /// Members of this session's guild (only), filtered by `query` when given.
    async fn people(&self, turn: &TurnContext, query: Option<&str>) -> Result<String, PortError>;

    /// Join, leave or describe the voice room of this session's guild (the
    /// discord_voice tool). Join goes to `channel` (a voice channel id) or else to the
    /// voice channel of the person the turn speaks for. The answer is one sentence.
    async fn voice(
        &self,
        turn: &TurnContext,
        action: VoiceAction,
        channel: Option<&str>,
    ) -> Result<String, PortError> {
        let _ = (turn, action, channel);
        Err(PortError::NotHere("Voice is not available here.".into()))
    }

    /// This session's server, read fresh from Discord: channels, roles, members, its
    /// owner, her own id and the conversation's channel.
    async fn guild(&self, turn: &TurnContext) -> Result<Guild, PortError> {
        let _ = turn;
        Err(PortError::NotHere(
            "Server management is not available here.".into(),
        ))
    }

    /// The id of this session's server, from what the surface already knows (no call).
    fn guild_id(&self, turn: &TurnContext) -> Option<u64> {
        let _ = turn;
        None
    }

    /// Whether the person `turn` speaks for may read `channel` (a channel or thread of
    /// this session's server; a thread as its parent channel), from what the surface
    /// already knows: the same judgement as [`DiscordPort::read_history`]'s. Nobody in
    /// particular, or a channel not known, may read nothing.
    fn may_read(&self, turn: &TurnContext, channel: u64) -> bool {
        let _ = (turn, channel);
        false
    }

    /// The most bytes one file may have in this session's channel.
    fn file_limit(&self, turn: &TurnContext) -> u64 {
        let _ = turn;
        FILE_LIMIT
    }

    /// Send file `name` (`bytes`) with `text` to this session's channel; one sentence.
    async fn send_file(
        &self,
        turn: &TurnContext,
        name: &str,
        bytes: Vec<u8>,
        text: Option<&str>,
    ) -> Result<String, PortError> {
        let _ = (turn, name, bytes, text);
        Err(PortError::NotHere(
            "Sending files is not available here.".into(),
        ))
    }

    /// Post an embed (`title`, `body`) in this session's channel (a plan shown).
    async fn post_embed(
        &self,
        turn: &TurnContext,
        title: &str,
        body: &str,
    ) -> Result<(), PortError> {
        let _ = (turn, title, body);
        Err(PortError::NotHere("Posting is not available here.".into()))
    }

    /// How the gateway shards and voice rooms of this process are connected.
    async fn link(&self) -> Link {
        Link::default()
    }

    /// Apply one change to this session's server; a created channel's or role's id.
    /// Rate limits are waited out, never answered as errors.
    async fn apply(&self, turn: &TurnContext, change: &Change) -> Result<Option<u64>, ApiError> {
        let _ = (turn, change);
        Err(ApiError {
            status: 0,
            code: 0,
            message: "server management is not available here".into(),
        })
    }
}

/// How the surface is connected right now, for `/health` and `/api/status`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Link {
    /// Each gateway shard this process runs, and whether its socket is connected (a
    /// shard resuming or reconnecting is not).
    pub shards: Vec<(u32, bool)>,
    /// Each voice room she is in.
    pub voice: Vec<VoiceLink>,
}

impl Link {
    /// Every shard this process runs is connected (none reported yet counts: READY was
    /// seen, which is what a registered port means).
    pub fn connected(&self) -> bool {
        self.shards.iter().all(|(_, up)| *up)
    }
}

/// One voice room's connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceLink {
    /// The guild.
    pub guild: u64,
    /// The voice channel she is in.
    pub channel: u64,
    /// Whether the voice socket is connected (false while it reconnects).
    pub connected: bool,
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

/// Whether a server tool may be offered: Discord is connected and the conversation is
/// on Discord.
pub(super) fn offered_here(port: &PortSlot, ctx: &crate::tools::Availability<'_>) -> bool {
    port.get().is_some() && matches!(ctx.origin, kotoba_core::protocol::Origin::Discord { .. })
}

/// The spec every Discord read tool shares: family discord, read risk, guests may be
/// offered it.
pub(super) fn spec(name: &str, description: &str, params: Value, lines: [&str; 4]) -> ToolSpec {
    let lines = ToolLines::of(lines[0], &[lines[1], lines[1]], lines[2], lines[3]);
    ToolSpec {
        // Reading the channel or its people touches nothing of the host.
        behaviour: Behaviour::guest(),
        ..ToolSpec::plain(name, description, "discord", Risk::Read, lines, params)
    }
}

/// The spec of a Discord write tool: family discord, write risk, always its own card
/// (a change to a shared place), never an "always", guests may ask for it (who may
/// answer its card is the tool's to say).
pub(super) fn write_spec(
    name: &str,
    description: &str,
    params: Value,
    timeout: std::time::Duration,
    lines: [&str; 4],
) -> ToolSpec {
    let mut s = spec(name, description, params, lines);
    s.risk = Risk::Write;
    s.timeout = Some(timeout);
    s.behaviour.gating = Gating::Card;
    s.behaviour.may_always = false;
    s
}

/// Register the Discord tools on `registry`, reading through `port`.
pub fn register(registry: &mut crate::tools::Registry, port: &PortSlot) {
    registry.register(Arc::new(GuildRead::new(port.clone())));
    registry.register(Arc::new(DiscordAct::new(port.clone())));
    registry.register(Arc::new(DiscordPlan::new(port.clone())));
    registry.register(Arc::new(ApplyPlan::new(port.clone())));
    registry.register(Arc::new(RememberPerson::new(port.clone())));
    registry.register(Arc::new(SendFile::new(port.clone())));
    registry.add_notes(Arc::new(PeopleNotes::new(port.clone())));
    registry.register(Arc::new(ReadHistory::new(port.clone())));
    registry.register(Arc::new(People::new(port.clone())));
    registry.register(Arc::new(voice::DiscordVoice::new(port.clone())));
}
