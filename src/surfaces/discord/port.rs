//! The Discord port the discord_* tools call (registered on READY): channel history, as
//! the person asking may read it, the members of this guild only, voice, and server
//! management (the server read fresh, one change applied: `manage.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use serenity::all::{ChannelId, ChannelType, GuildId, MessagePagination, Permissions, UserId};

use crate::session::{Place, SessionId};
use crate::tools::discord::{
    ApiError, Change, DiscordPort, Guild, Link, PortError, VoiceAction, VoiceLink,
};
use crate::turn::TurnContext;

use super::rest::Rest;

use super::Bot;

/// A channel id written as `123` or as a mention `<#123>`.
fn channel_id(raw: &str) -> Option<u64> {
    raw.trim()
        .trim_start_matches("<#")
        .trim_end_matches('>')
        .parse()
        .ok()
}

/// The channel of the turn's conversation, read from its typed session (as the surface
/// that received the words built it), never parsed from its name.
fn here(session: &SessionId) -> Result<u64, PortError> {
    session
        .discord_channel_id()
        .ok_or_else(|| PortError::NotHere("This conversation is not a Discord channel.".into()))
}

/// The server the turn's conversation is in: none for a DM (the surface said so when the
/// words came), else the one `guild_of` finds its channel in.
fn server_of(
    session: &SessionId,
    guild_of: impl FnOnce(u64) -> Option<GuildId>,
) -> Option<GuildId> {
    match session.place() {
        Place::DiscordChannel { channel, .. } => guild_of(channel),
        Place::DiscordDm { .. } | Place::Page | Place::Terminal | Place::V1 | Place::Elsewhere => {
            None
        }
    }
}

/// The HTTP client, while connected.
fn http(bot: &Bot) -> Result<&Arc<serenity::http::Http>, PortError> {
    bot.http().ok_or(PortError::NotConnected)
}

/// The port, over the surface's state, with its REST client for server management.
pub(crate) struct Port(pub Arc<Bot>, Rest);

impl Port {
    /// The port of `bot`.
    pub(crate) fn new(bot: Arc<Bot>) -> Port {
        let rest = Rest::new(&bot.settings.token, bot.settings.api_base.as_deref());
        Port(bot, rest)
    }

    /// The server of the turn's conversation (none for a DM), from the cache.
    fn server(&self, session: &SessionId) -> Option<GuildId> {
        server_of(session, |channel| self.guild_of(channel))
    }

    /// The guild of this session's channel, and the channel.
    fn guild_here(&self, session: &SessionId) -> Result<(GuildId, u64), PortError> {
        let here = here(session)?;
        let guild = self.server(session).ok_or_else(|| {
            PortError::NotHere(
                "This conversation is not in a server, so there is no server to manage.".into(),
            )
        })?;
        Ok((guild, here))
    }

    fn guild_of(&self, channel: u64) -> Option<GuildId> {
        let cache = self.0.cache.get()?;
        let id = ChannelId::new(channel.max(1));
        cache.guilds().into_iter().find(|g| {
            cache.guild(*g).is_some_and(|guild| {
                guild.channels.contains_key(&id) || guild.threads.iter().any(|t| t.id == id)
            })
        })
    }

    /// Whether `channel` is a voice or stage channel, from the cache.
    fn is_voice_channel(&self, channel: u64) -> bool {
        let Some(cache) = self.0.cache.get() else {
            return false;
        };
        let id = ChannelId::new(channel.max(1));
        cache.guilds().into_iter().any(|g| {
            cache.guild(g).is_some_and(|guild| {
                guild
                    .channels
                    .get(&id)
                    .is_some_and(|c| matches!(c.kind, ChannelType::Voice | ChannelType::Stage))
            })
        })
    }

    /// Whether `user` may read `channel` (view + read history), from the cache; a
    /// thread is judged as its parent channel.
    fn user_may_read(&self, user: u64, channel: u64, guild: GuildId) -> bool {
        let Some(cache) = self.0.cache.get() else {
            return false;
        };
        let Some(g) = cache.guild(guild) else {
            return false;
        };
        let Some(member) = g.members.get(&UserId::new(user.max(1))) else {
            return false;
        };
        let id = ChannelId::new(channel.max(1));
        let id = g
            .threads
            .iter()
            .find(|t| t.id == id)
            .and_then(|t| t.parent_id)
            .unwrap_or(id);
        let Some(ch) = g.channels.get(&id) else {
            return false;
        };
        let p = g.user_permissions_in(ch, member);
        p.contains(Permissions::VIEW_CHANNEL | Permissions::READ_MESSAGE_HISTORY)
    }
}

#[async_trait]
impl DiscordPort for Port {
    async fn link(&self) -> Link {
        let shards = match self.0.shard_links.lock() {
            Ok(g) => g.iter().map(|(id, up)| (*id, *up)).collect(),
            Err(p) => p.into_inner().iter().map(|(id, up)| (*id, *up)).collect(),
        };
        let mut voice = Vec::new();
        for (guild, channel) in self.0.rooms.list() {
            let connected = match self.0.songbird.get(GuildId::new(guild.max(1))) {
                Some(call) => call.lock().await.current_connection().is_some(),
                None => false,
            };
            voice.push(VoiceLink {
                guild,
                channel,
                connected,
            });
        }
        Link { shards, voice }
    }

    async fn read_history(
        &self,
        turn: &TurnContext,
        channel: Option<&str>,
        limit: usize,
    ) -> Result<String, PortError> {
        let bot = &self.0;
        let here = here(&turn.session)?;
        let target = match channel {
            Some(c) => channel_id(c).ok_or_else(|| {
                PortError::BadArgument(format!("'{c}' is not a channel id. Nothing was read."))
            })?,
            None => here,
        };
        if target != here {
            let (Some(gh), Some(gt)) = (self.server(&turn.session), self.guild_of(target)) else {
                return Err(PortError::BadArgument(
                    "That channel is not in this server, so nothing was read.".into(),
                ));
            };
            // The person this turn speaks for, fixed when it was created; not a Discord
            // person (nobody in particular) may read no other channel.
            let asker = turn.origin().discord_user().unwrap_or(0);
            if gh != gt || !self.user_may_read(asker, target, gt) {
                return Err(PortError::Forbidden(
                    "The person asking cannot read that channel, so nothing was read.".into(),
                ));
            }
        }
        let http = http(bot)?;
        let mut out = Vec::new();
        let mut before = None;
        while out.len() < limit {
            let n = u8::try_from((limit - out.len()).min(100)).unwrap_or(100);
            let page = http
                .get_messages(
                    ChannelId::new(target.max(1)),
                    before.map(MessagePagination::Before),
                    Some(n),
                )
                .await
                .map_err(|e| {
                    PortError::Discord(format!(
                        "Discord would not give the history ({e}). Nothing was read."
                    ))
                })?;
            let got = page.len();
            before = page.last().map(|m| m.id);
            out.extend(page);
            if got < usize::from(n) {
                break;
            }
        }
        out.reverse();
        let lines: Vec<String> = out
            .iter()
            .map(|m| {
                format!(
                    "[{}] {}: {}",
                    m.timestamp,
                    m.author
                        .global_name
                        .clone()
                        .unwrap_or_else(|| m.author.name.clone()),
                    m.content
                )
            })
            .collect();
        Ok(if lines.is_empty() {
            "No messages.".into()
        } else {
            lines.join("\n")
        })
    }

    async fn people(&self, turn: &TurnContext, query: Option<&str>) -> Result<String, PortError> {
        let bot = &self.0;
        here(&turn.session)?;
        let guild = self.server(&turn.session).ok_or_else(|| {
            PortError::NotHere(
                "This conversation is not in a server, so there are no members to list.".into(),
            )
        })?;
        let members = http(bot)?
            .get_guild_members(guild, Some(1000), None)
            .await
            .map_err(|e| {
                PortError::Discord(format!("Discord would not list the members ({e})."))
            })?;
        let q = query.map(str::to_lowercase);
        let lines: Vec<String> = members
            .iter()
            .filter(|m| {
                q.as_ref().is_none_or(|q| {
                    m.user.name.to_lowercase().contains(q)
                        || m.nick
                            .as_deref()
                            .is_some_and(|n| n.to_lowercase().contains(q))
                        || m.user
                            .global_name
                            .as_deref()
                            .is_some_and(|n| n.to_lowercase().contains(q))
                })
            })
            .map(|m| {
                format!(
                    "{} (id {}){}",
                    m.display_name(),
                    m.user.id,
                    if m.user.bot { ", a bot" } else { "" }
                )
            })
            .collect();
        Ok(if lines.is_empty() {
            "Nobody matches.".into()
        } else {
            lines.join("\n")
        })
    }

    async fn voice(
        &self,
        turn: &TurnContext,
        action: VoiceAction,
        channel: Option<&str>,
    ) -> Result<String, PortError> {
        let bot = &self.0;
        here(&turn.session)?;
        let guild = self
            .server(&turn.session)
            .ok_or_else(|| {
                PortError::NotHere("Voice works in a server, not in direct messages.".into())
            })?
            .get();
        match action {
            VoiceAction::Status => Ok(match bot.rooms.channel_in(guild) {
                Some(c) => format!("I'm in the voice channel <#{c}>."),
                None => "I'm not in a voice channel in this server.".into(),
            }),
            VoiceAction::Leave => super::voice::rooms::leave_after_turn(bot, guild)
                .await
                .map_err(|why| PortError::Discord(why.to_string())),
            VoiceAction::Join => {
                let target = match channel {
                    Some(c) => channel_id(c).ok_or_else(|| {
                        PortError::BadArgument(format!(
                            "'{c}' is not a channel id. Nothing was done."
                        ))
                    })?,
                    None => {
                        // The voice channel of the person this turn speaks for.
                        let asker = turn.origin().discord_user().unwrap_or(0);
                        super::voice::rooms::channel_of_user(bot, guild, asker).ok_or_else(
                            || {
                                PortError::BadArgument(
                                    "The person asking is not in a voice channel here; name one to join."
                                        .into(),
                                )
                            },
                        )?
                    }
                };
                if self.guild_of(target).map(|g| g.get()) != Some(guild) {
                    return Err(PortError::BadArgument(
                        "That voice channel is not in this server.".into(),
                    ));
                }
                if !self.is_voice_channel(target) {
                    return Err(PortError::BadArgument(format!(
                        "<#{target}> is not a voice channel. Nothing was done."
                    )));
                }
                // A failure names the channel it was for: the one the person asked.
                super::voice::rooms::join(bot, guild, target)
                    .await
                    .map_err(|why| PortError::Discord(format!("<#{target}>: {why}")))
            }
        }
    }

    async fn guild(&self, turn: &TurnContext) -> Result<Guild, PortError> {
        let (guild, here) = self.guild_here(&turn.session)?;
        let bot = &self.0;
        let me = bot.me.get().copied().unwrap_or(0);
        let (name, owner) = bot
            .cache
            .get()
            .and_then(|c| c.guild(guild).map(|g| (g.name.clone(), g.owner_id.get())))
            .unwrap_or_default();
        super::manage::read(&self.1, guild.get(), (name, owner, me, here))
            .await
            .map_err(|why| PortError::Discord(why.to_string()))
    }

    async fn apply(&self, turn: &TurnContext, change: &Change) -> Result<Option<u64>, ApiError> {
        let (guild, _) = self.guild_here(&turn.session).map_err(|why| ApiError {
            status: 0,
            code: 0,
            message: why.to_string(),
        })?;
        super::manage::apply(&self.1, guild.get(), change).await
    }

    fn may_read(&self, turn: &TurnContext, channel: u64) -> bool {
        let Some(user) = turn.origin().discord_user() else {
            return false;
        };
        let Some(guild) = self.guild_of(channel) else {
            return false;
        };
        // Only a channel of this conversation's own server.
        self.server(&turn.session) == Some(guild) && self.user_may_read(user, channel, guild)
    }

    fn guild_id(&self, turn: &TurnContext) -> Option<u64> {
        self.guild_here(&turn.session).ok().map(|(g, _)| g.get())
    }

    fn file_limit(&self, turn: &TurnContext) -> u64 {
        use serenity::all::PremiumTier;
        let tier = self.guild_here(&turn.session).ok().and_then(|(g, _)| {
            let cache = self.0.cache.get()?;
            cache.guild(g).map(|g| g.premium_tier)
        });
        match tier {
            Some(PremiumTier::Tier2) => 50 * 1024 * 1024,
            Some(PremiumTier::Tier3) => 100 * 1024 * 1024,
            _ => crate::tools::discord::FILE_LIMIT,
        }
    }

    async fn send_file(
        &self,
        turn: &TurnContext,
        name: &str,
        bytes: Vec<u8>,
        text: Option<&str>,
    ) -> Result<String, PortError> {
        let here = here(&turn.session)?;
        let http = http(&self.0)?;
        let size = bytes.len();
        let mut msg = serenity::all::CreateMessage::new()
            .add_file(serenity::all::CreateAttachment::bytes(bytes, name))
            .allowed_mentions(serenity::all::CreateAllowedMentions::new());
        if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
            msg = msg.content(t);
        }
        ChannelId::new(here.max(1))
            .send_message(http, msg)
            .await
            .map_err(|e| {
                PortError::Discord(format!(
                    "Discord would not take the file ({e}). Nothing was sent."
                ))
            })?;
        Ok(format!("Sent {name} ({size} bytes) to this channel."))
    }

    async fn post_embed(
        &self,
        turn: &TurnContext,
        title: &str,
        body: &str,
    ) -> Result<(), PortError> {
        let here = here(&turn.session)?;
        let http = http(&self.0)?;
        let embed = serenity::all::CreateEmbed::new()
            .title(crate::tools::clip_chars(title, 250))
            .description(crate::tools::clip_chars(body, 4000));
        let msg = serenity::all::CreateMessage::new()
            .embed(embed)
            .allowed_mentions(serenity::all::CreateAllowedMentions::new());
        ChannelId::new(here.max(1))
            .send_message(http, msg)
            .await
            .map(|_| ())
            .map_err(|e| PortError::Discord(format!("the plan could not be shown ({e})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache that finds every channel in server 1, whatever it is asked.
    fn everywhere_in_server_1(_channel: u64) -> Option<GuildId> {
        Some(GuildId::new(1))
    }

    #[test]
    fn the_port_reads_the_channel_from_the_typed_session_and_a_dm_is_in_no_server() {
        assert_eq!(here(&SessionId::discord_channel(200)), Ok(200));
        assert_eq!(here(&SessionId::discord_person(200, 7)), Ok(200));
        assert_eq!(here(&SessionId::discord_dm(9)), Ok(9));
        let in_server = server_of(&SessionId::discord_channel(200), everywhere_in_server_1);
        assert_eq!(in_server, Some(GuildId::new(1)));
        // The surface said it was a DM: no server, whatever the cache would answer.
        assert_eq!(
            server_of(&SessionId::discord_dm(9), everywhere_in_server_1),
            None
        );
        // Where it lives decides, not what its name spells.
        for elsewhere in [
            SessionId::page("discord:5"),
            SessionId::terminal("discord:5"),
            SessionId::v1("discord:5"),
            SessionId::parse("s1"),
        ] {
            assert!(here(&elsewhere).is_err(), "{elsewhere}");
            assert_eq!(server_of(&elsewhere, everywhere_in_server_1), None);
        }
    }
}
