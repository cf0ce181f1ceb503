//! The Discord side of voice: one room per guild, bound to its voice channel's
//! text-chat session. Join, move and leave go through [`super::call`]; this file
//! builds the room's parts (providers, songbird playback and receive, the chat side),
//! keeps who is in the channel current, and serves /join, /leave and discord_voice.
//! A call Discord ends from its side (the voice socket closed for good, e.g. 4014, or
//! every reconnect failed; or her voice state says she is in no channel) ends its
//! room with one sentence in the voice channel's text chat.

use std::sync::{Arc, RwLock, Weak};

use async_trait::async_trait;
use dashmap::DashMap;
use serenity::all::{ChannelId, GuildId, UserId, VoiceState};
use songbird::events::context_data::{DisconnectKind, DisconnectReason};
use songbird::model::CloseCode;
use songbird::{CoreEvent, Event, EventContext, EventHandler};
use tokio::sync::oneshot;

use super::members;
use super::receive::Members;
use crate::protocol::Origin;
use crate::speech::endpoint::EndpointSettings;
use crate::surfaces::discord::{send, session_of, view, Bot};
use crate::voice::room::{self, Caption, Control, RoomEnd, RoomParts, RoomSide};

/// A room in a guild.
pub(crate) struct Entry {
    /// The voice channel.
    pub channel: u64,
    control: tokio::sync::mpsc::Sender<Control>,
    members: Arc<RwLock<Members>>,
    /// Which join this is (a move replaces the entry; the old watcher must not remove
    /// the new one).
    epoch: u64,
    /// The call's DAVE state as songbird publishes it, for `/status voice`.
    dave: songbird::driver::DaveWatch,
}

/// Every room of the surface, by guild.
#[derive(Default)]
pub(crate) struct Rooms {
    map: DashMap<u64, Entry>,
    /// Guilds where a join of ours is in flight (her own voice state moves then).
    joining: DashMap<u64, ()>,
    epochs: std::sync::atomic::AtomicU64,
}

impl Rooms {
    /// How many voice rooms are open.
    pub(crate) fn count(&self) -> usize {
        self.map.len()
    }

    /// The voice channel she is in, in `guild`.
    pub(crate) fn channel_in(&self, guild: u64) -> Option<u64> {
        self.map.get(&guild).map(|e| e.channel)
    }

    /// Each room as (guild, voice channel).
    pub(crate) fn list(&self) -> Vec<(u64, u64)> {
        self.map.iter().map(|e| (*e.key(), e.channel)).collect()
    }

    /// The DAVE state of her call in `guild`, if she is in one.
    pub(crate) fn dave_in(&self, guild: u64) -> Option<songbird::driver::DaveStatus> {
        self.map.get(&guild).map(|e| e.dave.status())
    }
}

/// A provider that could not be built: every use says why (the room says it once).
/// The chat around a room: its voice channel's text chat.
struct Side {
    bot: Arc<Bot>,
    guild: u64,
    channel: u64,
}

#[async_trait]
impl RoomSide for Side {
    async fn post(&self, caption: Caption) {
        if let Some(http) = self.bot.http() {
            let line = caption.line();
            send::post(http, ChannelId::new(self.channel.max(1)), None, &line).await;
        }
    }

    fn name_of(&self, user: u64) -> String {
        display_name(&self.bot, self.guild, user)
    }

    fn origin(&self, user: u64) -> Origin {
        Origin::Discord {
            user,
            owner: self.bot.is_owner(user),
        }
    }

    fn author(&self, user: u64) -> String {
        crate::surfaces::discord::remind::author_label(&self.name_of(user), user)
    }

    fn granted(&self, user: u64) -> Vec<String> {
        self.bot.granted(Some(self.guild), user, None)
    }

    async fn before_turn(&self) {
        let session = session_of(self.channel);
        view::ensure(&self.bot, &session, self.channel, false).await;
    }
}

/// How `user` is called in `guild`: their display name there, else their global or
/// user name, else `user ID`.
pub(crate) fn display_name(bot: &Bot, guild: u64, user: u64) -> String {
    let Some(cache) = bot.cache.get() else {
        return format!("user {user}");
    };
    let id = UserId::new(user.max(1));
    if let Some(g) = cache.guild(GuildId::new(guild.max(1))) {
        if let Some(m) = g.members.get(&id) {
            return m.display_name().to_string();
        }
    }
    cache
        .user(id)
        .map(|u| u.global_name.clone().unwrap_or_else(|| u.name.clone()))
        .unwrap_or_else(|| format!("user {user}"))
}

/// Her names in `guild`: display name, username, nickname, plus `voice.aliases`.
fn names(bot: &Bot, guild: u64) -> Vec<String> {
    let mut out = vec!["Kotoba".to_string()];
    if let Some(cache) = bot.cache.get() {
        let me = cache.current_user().clone();
        out.push(me.name.clone());
        if let Some(g) = me.global_name.clone() {
            out.push(g);
        }
        if let Some(g) = cache.guild(GuildId::new(guild.max(1))) {
            if let Some(nick) = g.members.get(&me.id).and_then(|m| m.nick.clone()) {
                out.push(nick);
            }
        }
    }
    out.extend(bot.engine.config().settings().voice.aliases);
    out.sort();
    out.dedup();
    out
}

fn people(bot: &Bot, guild: u64, channel: u64) -> Members {
    match bot.cache.get() {
        Some(cache) => {
            let (humans, bots) = members::people_in(
                cache,
                GuildId::new(guild.max(1)),
                ChannelId::new(channel.max(1)),
            );
            Members { humans, bots }
        }
        None => Members::default(),
    }
}

/// Why a room could not be joined or left: one sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RoomError {
    /// Discord's HTTP client is not up yet.
    #[error("Voice is not ready yet; try again in a moment.")]
    NotReady,
    /// No room runs in this guild.
    #[error("I'm not in a voice channel here.")]
    NoRoom,
    /// The room ended before it heard the request.
    #[error("The voice room has already ended.")]
    Ended,
    /// Joining the call failed.
    #[error(transparent)]
    Call(#[from] super::call::CallError),
}

/// Join (or move to) `channel` in `guild`. The answer is one sentence.
pub(crate) async fn join(bot: &Arc<Bot>, guild: u64, channel: u64) -> Result<String, RoomError> {
    if bot.http().is_none() {
        return Err(RoomError::NotReady);
    }
    let manager = bot.songbird.clone();
    if bot.rooms.channel_in(guild) == Some(channel) {
        return Ok(format!("I'm already in <#{channel}>."));
    }
    bot.rooms.joining.insert(guild, ());
    let joined = super::call::join(
        &manager,
        GuildId::new(guild.max(1)),
        ChannelId::new(channel.max(1)),
    )
    .await;
    bot.rooms.joining.remove(&guild);
    let call = match joined {
        Ok(call) => call,
        Err(why) => {
            // A failed move leaves no call behind, so no room either.
            bot.rooms.map.remove(&guild);
            return Err(why.into());
        }
    };
    start_room(bot, guild, channel, call).await;
    Ok(format!("Joined <#{channel}>. Talk to me!"))
}

/// Start the room for `channel` on a joined `call`. A room already in this guild
/// (she moved) ends without cutting its turn: that turn asked for the move.
async fn start_room(
    bot: &Arc<Bot>,
    guild: u64,
    channel: u64,
    call: Arc<tokio::sync::Mutex<songbird::Call>>,
) {
    if let Some((_, old)) = bot.rooms.map.remove(&guild) {
        let _ = old.control.try_send(Control::Release);
    }
    let config = &bot.engine.config();
    let providers = crate::voice::providers::providers(config);
    providers.warm();
    let voice = config.settings().voice;
    let members = Arc::new(RwLock::new(people(bot, guild, channel)));
    let humans = members.read().map(|m| m.humans.len()).unwrap_or(0);
    let session = crate::session::SessionId::discord_channel(channel);
    let parts = RoomParts {
        engine: bot.engine.clone(),
        session: session.clone(),
        names: names(bot, guild),
        recognizer: providers.recognizer,
        synthesizer: providers.synthesizer,
        out: Arc::new(super::playback::SongbirdOut::new(call.clone())),
        side: Arc::new(Side {
            bot: bot.clone(),
            guild,
            channel,
        }),
        endpoint: EndpointSettings::from_voice(&voice),
        speculate: voice.speculate,
        idle_leave: std::time::Duration::from_secs(voice.idle_leave),
        trace: Some(crate::voice::latency::keeper(config.paths.home.clone())),
        realtime: providers.realtime.clone(),
    };
    let handle = room::spawn(parts, humans);
    if let Some(text) = providers.stood_in {
        if let Some(http) = bot.http() {
            send::post(http, ChannelId::new(channel.max(1)), None, &text).await;
        }
    }
    let epoch = bot
        .rooms
        .epochs
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dave = {
        // A move keeps songbird's call: the old room's receiver goes with the old room.
        let mut c = call.lock().await;
        c.remove_all_global_events();
        let receiver = super::receive::Receiver::new(
            handle.heard.clone(),
            handle.control.clone(),
            members.clone(),
        );
        // A realtime session hears each packet as it arrives, not songbird's ticks.
        let receiver = if providers.realtime.is_some() {
            receiver.with_arrivals(handle.arrived.clone())
        } else {
            receiver
        };
        receiver.attach(&mut c);
        let dropped = Dropped {
            bot: Arc::downgrade(bot),
            guild,
            channel,
            epoch,
        };
        c.add_global_event(Event::Core(CoreEvent::DriverDisconnect), dropped);
        c.dave_watch()
    };
    view::ensure(bot, session.as_str(), channel, false).await;
    bot.rooms.map.insert(
        guild,
        Entry {
            channel,
            control: handle.control.clone(),
            members,
            epoch,
            dave,
        },
    );
    let (bot2, task) = (bot.clone(), handle.task);
    tokio::spawn(async move {
        let end = task.await.unwrap_or(RoomEnd::Dropped);
        let ours = bot2.rooms.map.get(&guild).is_some_and(|e| e.epoch == epoch);
        if ours {
            bot2.rooms.map.remove(&guild);
            let _ = super::call::leave(&bot2.songbird, GuildId::new(guild.max(1))).await;
        }
        if end == RoomEnd::Alone {
            if let Some(http) = bot2.http() {
                let text = "Nobody was left in the voice channel, so I left.";
                send::post(http, ChannelId::new(channel.max(1)), None, text).await;
            }
        }
    });
}

/// Leave the voice channel in `guild`, after the turn and playback end (≤ 30 s).
pub(crate) async fn leave(bot: &Arc<Bot>, guild: u64) -> Result<String, RoomError> {
    let Some(control) = bot.rooms.map.get(&guild).map(|e| e.control.clone()) else {
        // No room, but maybe a half-open call: the wrapper cleans it up either way.
        let _ = super::call::leave(&bot.songbird, GuildId::new(guild.max(1))).await;
        return Err(RoomError::NoRoom);
    };
    // The room's watcher leaves the call once the room has ended.
    let (tx, rx) = oneshot::channel();
    if control.send(Control::Leave(tx)).await.is_ok() {
        let _ = rx.await;
    }
    Ok("Left the voice channel.".into())
}

/// Ask the room in `guild` to leave once her turn and speech are done, without
/// waiting: the discord_voice tool runs inside the very turn the leave waits for.
pub(crate) async fn leave_after_turn(bot: &Arc<Bot>, guild: u64) -> Result<String, RoomError> {
    let Some(control) = bot.rooms.map.get(&guild).map(|e| e.control.clone()) else {
        let _ = super::call::leave(&bot.songbird, GuildId::new(guild.max(1))).await;
        return Err(RoomError::NoRoom);
    };
    let (tx, _rx) = oneshot::channel();
    control
        .send(Control::Leave(tx))
        .await
        .map_err(|_| RoomError::Ended)?;
    Ok("I'll leave the voice channel as soon as I finish speaking.".into())
}

/// Shutdown: every room ends and every call is left (not left half-open on
/// Discord's side until its timeout).
pub(crate) async fn leave_all(bot: &Arc<Bot>) {
    let guilds: Vec<u64> = bot.rooms.map.iter().map(|e| *e.key()).collect();
    bot.rooms.map.clear();
    for guild in guilds {
        let _ = super::call::leave(&bot.songbird, GuildId::new(guild.max(1))).await;
    }
}

/// Someone's voice state changed: keep the room's idea of who is there current.
pub(crate) async fn on_voice_state(bot: &Arc<Bot>, new: &VoiceState) {
    let Some(guild) = new.guild_id.map(|g| g.get()) else {
        return;
    };
    let me = bot.me.get().copied();
    if Some(new.user_id.get()) == me {
        let here = bot.rooms.channel_in(guild);
        match new.channel_id.map(|c| c.get()) {
            None => {
                // She was disconnected (kicked, channel deleted): the room ends and
                // the call is cleaned up.
                if let Some((_, entry)) = bot.rooms.map.remove(&guild) {
                    end_disconnected(bot, guild, entry.channel, DISCONNECTED).await;
                }
            }
            Some(moved)
                if here.is_some_and(|h| h != moved) && !bot.rooms.joining.contains_key(&guild) =>
            {
                // Someone moved her: the room follows to the new channel.
                if let Some(call) = bot.songbird.get(GuildId::new(guild.max(1))) {
                    start_room(bot, guild, moved, call).await;
                }
            }
            _ => {}
        }
        return;
    }
    let Some((channel, members, control)) = bot
        .rooms
        .map
        .get(&guild)
        .map(|e| (e.channel, e.members.clone(), e.control.clone()))
    else {
        return;
    };
    let now = people(bot, guild, channel);
    let humans = now.humans.len();
    if let Ok(mut m) = members.write() {
        *m = now;
    }
    let _ = control.send(Control::Humans(humans)).await;
}

/// What she says in the text chat when Discord ends her call.
pub const DISCONNECTED: &str = "Discord disconnected me from the voice channel, so I left.";

/// What she says when Discord ends the call because it requires end-to-end encryption
/// (DAVE) the connection did not give it (voice close code 4017).
pub const DAVE_REQUIRED: &str = "Discord ended the voice call because it requires end-to-end encryption (DAVE) that this connection could not set up, so I left; /join to try again.";

/// The sentence for a call Discord ended with `reason`.
fn ended_sentence(reason: Option<&DisconnectReason>) -> &'static str {
    match reason {
        Some(DisconnectReason::WsClosed(Some(CloseCode::DaveProtocolRequired))) => DAVE_REQUIRED,
        _ => DISCONNECTED,
    }
}

/// songbird's word that the call's connection is gone for good (not a failed first
/// connect: the join answers that one).
struct Dropped {
    bot: Weak<Bot>,
    guild: u64,
    channel: u64,
    /// The join whose call this is: a later join's room is not ended by it.
    epoch: u64,
}

#[async_trait]
impl EventHandler for Dropped {
    async fn act(&self, ctx: &EventContext<'_>) -> Option<Event> {
        let EventContext::DriverDisconnect(d) = ctx else {
            return None;
        };
        if matches!(d.kind, DisconnectKind::Connect) {
            return None;
        }
        tracing::warn!(
            "voice: the call in channel {} of guild {} dropped ({:?}, {:?})",
            self.channel,
            self.guild,
            d.kind,
            d.reason
        );
        let bot = self.bot.upgrade()?;
        let (guild, channel, epoch) = (self.guild, self.channel, self.epoch);
        let sentence = ended_sentence(d.reason.as_ref());
        tokio::spawn(async move {
            let ours = bot
                .rooms
                .map
                .remove_if(&guild, |_, e| e.epoch == epoch)
                .is_some();
            if ours {
                end_disconnected(&bot, guild, channel, sentence).await;
            }
        });
        None
    }
}

/// Her room in `guild` was taken off the map because Discord ended the call: leave
/// what is left of the call and say so once in the voice channel's text chat.
async fn end_disconnected(bot: &Arc<Bot>, guild: u64, channel: u64, sentence: &str) {
    let _ = super::call::leave(&bot.songbird, GuildId::new(guild.max(1))).await;
    if let Some(http) = bot.http() {
        send::post(http, ChannelId::new(channel.max(1)), None, sentence).await;
    }
}

/// The voice channel `user` is in, in `guild`.
pub(crate) fn channel_of_user(bot: &Bot, guild: u64, user: u64) -> Option<u64> {
    let cache = bot.cache.get()?;
    members::voice_channel_of(cache, GuildId::new(guild.max(1)), UserId::new(user.max(1)))
        .map(|c| c.get())
}
