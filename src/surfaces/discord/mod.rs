//! The Discord text surface: a serenity gateway client in the same process as the other
//! surfaces. It turns Discord messages into turns and the engine's frames into Discord
//! messages (replies, live step cards, approval cards, slash command answers); it
//! never decides an outcome, a window or a refusal — the engine does (discord.md).
//!
//! Flow: [`handler`] receives gateway events and dispatches only; [`chat`] applies the
//! answer [`rules`], runs the turn and posts the [`reply`]; [`view`] follows each
//! session's frames into [`steps`] and [`cards`]; [`press`] answers buttons;
//! [`commands`] holds the slash commands; [`port`] serves the discord_* read tools;
//! [`remind`] posts due reminders where they were set.

mod answer;
mod approve;
pub mod attachments;
pub mod cards;
mod catch_up;
mod chat;
pub mod check;
pub mod commands;
mod handler;
mod identify;
mod lease;
mod manage;
mod port;
mod press;
mod remind;
pub mod render;
pub mod reply;
mod rest;
pub mod rules;
mod send;
pub mod sessions;
pub mod shards;
pub mod steps;
mod view;
pub mod voice;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use dashmap::DashMap;
use serenity::all::{GatewayIntents, Http, HttpBuilder};
use serenity::Client;
use songbird::SerenityInit;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::config::{id_list, Config};
use crate::engine::Engine;
use crate::tools::discord::PortSlot;

/// The Discord settings, read once at start from the environment (and the
/// `discord.api_base` setting).
#[derive(Clone)]
pub struct DiscordSettings {
    /// The bot token (never logged, never shown).
    token: String,
    /// The guild allow-list (empty: every guild).
    pub guilds: Vec<u64>,
    /// Channels where she answers every message.
    pub home_channels: Vec<u64>,
    /// Another Discord-compatible server (None: Discord itself).
    pub api_base: Option<String>,
    /// The shards this process runs (`KOTOBA_DISCORD_SHARDS`), or why the value was
    /// refused (then Discord stays off: a guess could answer another process's guilds).
    pub shards: Result<shards::ShardPlan, shards::ShardsError>,
}

impl std::fmt::Debug for DiscordSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordSettings")
            .field("token", &"<hidden>")
            .field("guilds", &self.guilds)
            .field("home_channels", &self.home_channels)
            .field("api_base", &self.api_base)
            .field("shards", &self.shards)
            .finish()
    }
}

fn ids(raw: Option<&str>) -> Vec<u64> {
    id_list(raw).iter().filter_map(|s| s.parse().ok()).collect()
}

impl DiscordSettings {
    /// The settings when a token is configured (`DISCORD_TOKEN`), else `None`.
    pub fn from_config(config: &Config) -> Option<DiscordSettings> {
        let token = config
            .env("DISCORD_TOKEN")
            .map(str::trim)
            .filter(|t| !t.is_empty())?;
        Some(Self::with_token(config, token.to_string()))
    }

    /// The settings with `DISCORD_TOKEN`, else with the token saved in the keystore
    /// under [`KEYSTORE_TOKEN`]; `None` when neither is there.
    pub async fn resolve(engine: &Engine) -> Option<DiscordSettings> {
        if let Some(settings) = Self::from_config(engine.config()) {
            return Some(settings);
        }
        let token = engine.saved_secret(KEYSTORE_TOKEN).await?;
        let token = token.trim();
        (!token.is_empty()).then(|| Self::with_token(engine.config(), token.to_string()))
    }

    fn with_token(config: &Config, token: String) -> DiscordSettings {
        DiscordSettings {
            token,
            guilds: ids(config.env("KOTOBA_DISCORD_GUILDS")),
            home_channels: ids(config.env("KOTOBA_DISCORD_HOME_CHANNELS")),
            api_base: config.settings().discord_api_base,
            shards: shards::ShardPlan::parse(config.env(shards::SHARDS_ENV)),
        }
    }
}

/// The keystore name a Discord token may be saved under (instead of `DISCORD_TOKEN`).
pub const KEYSTORE_TOKEN: &str = "discord-token";

/// Why the Discord surface stopped; each message is one sentence naming the fix.
#[derive(Debug, thiserror::Error)]
pub enum DiscordError {
    /// No token is configured.
    #[error("Discord is off: set DISCORD_TOKEN to your bot's token, or save it in the keystore as 'discord-token' (Developer Portal → your application → Bot → Reset Token).")]
    NoToken,
    /// Discord refused the token (gateway close 4004 or HTTP 401).
    #[error("Discord refused the bot token: put a valid token in DISCORD_TOKEN (Developer Portal → your application → Bot → Reset Token).")]
    TokenRefused,
    /// The privileged intents are not enabled (gateway close 4013/4014).
    #[error("Discord refused the bot's intents: enable the Message Content and Server Members intents (Developer Portal → your application → Bot → Privileged Gateway Intents), then restart.")]
    IntentsMissing,
    /// `KOTOBA_DISCORD_SHARDS` is not a shard setting.
    #[error("{0}")]
    Shards(#[from] shards::ShardsError),
    /// Anything else (network, a server that is not Discord).
    #[error("The Discord connection failed ({0}); check the network and KOTOBA_DISCORD_API_BASE.")]
    Other(String),
}

/// The intents she needs: guilds, guild messages, direct messages, message content,
/// guild members, voice states.
pub fn intents() -> GatewayIntents {
    GatewayIntents::GUILDS
        | GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
        | GatewayIntents::GUILD_MEMBERS
        | GatewayIntents::GUILD_VOICE_STATES
}

/// The stored name of a Discord channel's, thread's or DM's session (`discord:<channel>`).
pub fn session_of(channel: u64) -> String {
    crate::session::SessionId::discord_channel(channel).into_name()
}

/// The channel a stored Discord session name names (a channel's, or a person's in it:
/// `discord:<channel>:<user>`, `sessions.rs`), read by the one parser
/// ([`crate::session::SessionId::parse`]); for the stored names of cards, reminders and
/// restart notices. A turn's channel is read from its typed session, never from here.
pub fn channel_of(session: &str) -> Option<u64> {
    crate::session::SessionId::parse(session).discord_channel_id()
}

/// How many message ids are remembered to answer each message once.
const SEEN_CAP: usize = 4096;

/// The surface's shared state. Nothing here says who a turn speaks for: that is fixed
/// in each turn's request when the message arrives, and travels with the turn.
pub(crate) struct Bot {
    /// The engine every message becomes a turn of.
    pub engine: Arc<Engine>,
    /// The token, guilds, home channels and API base it runs with (owners are read live
    /// from the configuration: [`Bot::is_owner`]).
    pub settings: DiscordSettings,
    /// Where the port the discord_* tools call is registered while connected.
    pub port_slot: PortSlot,
    /// The REST client, set on READY.
    pub http: OnceLock<Arc<Http>>,
    /// serenity's cache (guilds, channels, members, roles), set on READY: permissions
    /// and voice states are read from it.
    pub cache: OnceLock<Arc<serenity::cache::Cache>>,
    /// Her own user id, set on READY.
    pub me: OnceLock<u64>,
    /// Per channel, the person she just answered and when: their next line within the
    /// follow-up window is for her without a mention (`rules.rs`).
    pub follow: DashMap<u64, rules::FollowUp>,
    /// Per server channel, the lines others wrote there since her last reply there (at
    /// most `discord.channel_context`, newest kept): her next turn in that channel
    /// takes them as what was said around her (`chat.rs`).
    pub around: DashMap<u64, VecDeque<crate::protocol::Said>>,
    /// With `discord.sessions: person`, per server channel its recent lines, for each
    /// person's session there (`sessions.rs`).
    pub channel_logs: DashMap<u64, sessions::ChannelLog>,
    /// With `discord.sessions: person`, how far each person's session has read its
    /// channel's log.
    pub read_upto: DashMap<String, u64>,
    /// Message ids seen (bounded, in order): a resumed gateway's replay is answered once.
    seen: Mutex<(VecDeque<u64>, HashSet<u64>)>,
    /// Per channel, the newest message id an earlier run of Kotoba had seen, read once
    /// before the gateway connects: a live message at or before it is a replay of one
    /// already answered. Messages of this run are told apart by id (`first_sight`),
    /// never by order: the gateway's events may be handled out of order.
    seen_before_start: HashMap<u64, u64>,
    /// DM channels already noted in the store as their person's (`Store::note_dm`, so a
    /// person forgotten loses them whole): noted once per process.
    pub dms_noted: DashMap<u64, ()>,
    /// Sessions with a frame follower (`view.rs`) running: one per session.
    pub views: DashMap<String, ()>,
    /// Whole outputs kept for the "Full output" button, with who may see them.
    pub outputs: view::Outputs,
    /// When the surface started (`/status` uptime).
    pub started: tokio::time::Instant,
    /// Ends the surface (process shutdown).
    pub shutdown: CancellationToken,
    /// The voice rooms, one per guild.
    pub rooms: voice::rooms::Rooms,
    /// Each shard this process runs and whether its gateway is connected, as the
    /// shard report last saw it (`shards::report`, every second): `/health` reads it.
    pub shard_links: Mutex<std::collections::BTreeMap<u32, bool>>,
    /// songbird's voice manager, registered on the serenity client (join and leave go
    /// through [`voice::call`] only).
    pub songbird: Arc<songbird::Songbird>,
    /// Due reminders, subscribed before the gateway connects; READY takes it and starts
    /// [`remind::deliver`].
    pub reminders: Mutex<Option<tokio::sync::broadcast::Receiver<crate::protocol::Reminder>>>,
}

impl Bot {
    /// Drop what this surface holds in memory of `user`'s words (they were forgotten):
    /// their overheard lines waiting for her next turn, their lines in the channels'
    /// logs, a follow-up window opened for them.
    pub(crate) fn forget_lines_of(&self, user: u64) {
        for mut lines in self.around.iter_mut() {
            lines.retain(|said| remind::asker_id(&said.author) != Some(user));
        }
        for mut log in self.channel_logs.iter_mut() {
            log.forget(user);
        }
        self.follow.retain(|_, f| f.author != user);
        self.read_upto
            .retain(|session, _| sessions::person_of(session) != Some(user));
    }

    /// The tool families `user`'s roles in `guild` grant beyond the guest list
    /// (`discord.role_toolsets`, read live): `roles` as the event carried them, else
    /// the cache's. None for an owner (who has every tool), in a DM, or for a member
    /// whose roles are not known.
    pub(crate) fn granted(
        &self,
        guild: Option<u64>,
        user: u64,
        roles: Option<Vec<u64>>,
    ) -> Vec<String> {
        let Some(guild) = guild.filter(|_| !self.is_owner(user)) else {
            return Vec::new();
        };
        let sets = self.engine.config().settings().discord_role_toolsets;
        if sets.0.is_empty() {
            return Vec::new();
        }
        let roles = roles.or_else(|| {
            let cache = self.cache.get()?;
            let g = cache.guild(serenity::all::GuildId::new(guild.max(1)))?;
            let m = g.members.get(&serenity::all::UserId::new(user.max(1)))?;
            Some(m.roles.iter().map(|r| r.get()).collect())
        });
        sets.granted(&roles.unwrap_or_default())
    }

    /// Whether a live message was already seen by an earlier run (at or before the
    /// newest id that run recorded in its channel).
    pub(crate) fn seen_before_start(&self, channel: u64, id: u64) -> bool {
        self.seen_before_start
            .get(&channel)
            .is_some_and(|last| id <= *last)
    }

    /// First time this message id is seen? (A resumed gateway may replay events.)
    pub(crate) fn first_sight(&self, id: u64) -> bool {
        let mut g = match self.seen.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let (order, set) = &mut *g;
        if !set.insert(id) {
            return false;
        }
        order.push_back(id);
        if order.len() > SEEN_CAP {
            if let Some(old) = order.pop_front() {
                set.remove(&old);
            }
        }
        true
    }

    /// Whether `user` is an owner: one of the configuration's owners (the live `owners`
    /// setting and `KOTOBA_DISCORD_OWNER_IDS`, each id validated there), as they stand
    /// now.
    pub(crate) fn is_owner(&self, user: u64) -> bool {
        self.engine.config().owners().contains(&user)
    }

    /// The HTTP client once connected.
    pub(crate) fn http(&self) -> Option<&Arc<Http>> {
        self.http.get()
    }
}

/// Build the serenity client for `settings` (HTTP pointed at `api_base` when set).
async fn client(bot: Arc<Bot>) -> Result<Client, DiscordError> {
    let s = &bot.settings;
    let mut http = HttpBuilder::new(&s.token);
    if let Some(base) = &s.api_base {
        // serenity's own rate limiter ignores the proxy: the server behind it limits.
        http = http.proxy(base.clone()).ratelimiter_disabled(true);
    }
    let songbird = bot.songbird.clone();
    serenity::client::ClientBuilder::new_with_http(http.build(), intents())
        .event_handler(handler::Handler(bot))
        .register_songbird_with(songbird)
        .await
        .map_err(|e| classify(&e))
}

fn classify(e: &serenity::Error) -> DiscordError {
    use serenity::gateway::GatewayError;
    match e {
        serenity::Error::Gateway(GatewayError::InvalidAuthentication) => DiscordError::TokenRefused,
        serenity::Error::Gateway(
            GatewayError::DisallowedGatewayIntents | GatewayError::InvalidGatewayIntents,
        ) => DiscordError::IntentsMissing,
        serenity::Error::Http(h) if h.status_code().map(|c| c.as_u16()) == Some(401) => {
            DiscordError::TokenRefused
        }
        other => DiscordError::Other(other.to_string()),
    }
}

/// Run the Discord surface until `shutdown` fires or the connection fails ([`start`]
/// connects again with backoff).
/// The error is one sentence naming the fix.
pub async fn run(
    engine: Arc<Engine>,
    port: PortSlot,
    shutdown: CancellationToken,
) -> Result<(), DiscordError> {
    let settings = DiscordSettings::resolve(&engine)
        .await
        .ok_or(DiscordError::NoToken)?;
    let plan = settings.shards.clone()?;
    let reminders = Mutex::new(Some(engine.reminders()));
    let seen_before_start = match engine.store().discord_seen_channels().await {
        Ok(seen) => seen.into_iter().collect(),
        Err(e) => {
            tracing::warn!("Discord: reading the messages seen before this start: {e}");
            HashMap::new()
        }
    };
    let bot = Arc::new(Bot {
        engine,
        settings,
        port_slot: port,
        http: OnceLock::new(),
        cache: OnceLock::new(),
        me: OnceLock::new(),
        follow: DashMap::new(),
        around: DashMap::new(),
        channel_logs: DashMap::new(),
        read_upto: DashMap::new(),
        seen: Mutex::new((VecDeque::new(), HashSet::new())),
        seen_before_start,
        dms_noted: DashMap::new(),
        views: DashMap::new(),
        outputs: view::Outputs::default(),
        started: tokio::time::Instant::now(),
        shutdown: shutdown.clone(),
        rooms: voice::rooms::Rooms::default(),
        shard_links: Mutex::default(),
        songbird: voice::call::manager(),
        reminders,
    });
    let forgets = Arc::downgrade(&bot);
    bot.engine.on_forget(
        "discord",
        Box::new(move |user| {
            if let Some(bot) = forgets.upgrade() {
                bot.forget_lines_of(user);
            }
        }),
    );
    let mut client = client(bot.clone()).await?;
    let shards = client.shard_manager.clone();
    tracing::info!("Discord: running {}", plan.describe());
    let report = tokio::spawn(shards::report(client.shard_manager.clone(), bot.clone()));
    let result = tokio::select! {
        r = shards::start(&mut client, &bot, plan) => r.map_err(|e| classify(&e)),
        _ = shutdown.cancelled() => {
            voice::rooms::leave_all(&bot).await;
            shards.shutdown_all().await;
            if let shards::ShardPlan::Auto { total } = plan {
                lease::release_all(&bot, total).await;
            }
            Ok(())
        }
    };
    report.abort();
    // The seen marks still waiting are written before she goes (catch-up reads them).
    bot.engine.store().flush_seen_later().await;
    crate::metrics::metrics().set_shards(Default::default());
    bot.port_slot.set(None);
    result
}

/// Start the Discord surface in the background when a token is configured (`kotoba
/// serve` calls this). A fatal error is logged as one sentence naming the fix.
pub async fn start(app: &App, shutdown: CancellationToken) -> Option<tokio::task::JoinHandle<()>> {
    if DiscordSettings::resolve(&app.engine).await.is_none() {
        tracing::info!("{}", DiscordError::NoToken);
        return None;
    }
    let (engine, port) = (app.engine.clone(), app.discord_port.clone());
    Some(tokio::spawn(async move {
        let mut attempt: u32 = 0;
        loop {
            let began = tokio::time::Instant::now();
            let end = run(engine.clone(), port.clone(), shutdown.clone()).await;
            if shutdown.is_cancelled() {
                return;
            }
            match end {
                // Only the owner can fix these: retrying would be refused the same way.
                Err(
                    e @ (DiscordError::TokenRefused
                    | DiscordError::IntentsMissing
                    | DiscordError::Shards(_)
                    | DiscordError::NoToken),
                ) => {
                    tracing::error!("{e}");
                    return;
                }
                Err(e) => tracing::warn!("{e}"),
                Ok(()) => tracing::warn!("Discord: the connection ended"),
            }
            // A connection that held a while starts the backoff over.
            if began.elapsed() > RECONNECT_MAX {
                attempt = 0;
            }
            let wait = reconnect_wait(attempt);
            attempt = attempt.saturating_add(1);
            tracing::info!("Discord: connecting again in {} s", wait.as_secs());
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }))
}

/// The longest wait between two attempts to reach Discord.
const RECONNECT_MAX: std::time::Duration = std::time::Duration::from_secs(60);

/// The wait before reconnect attempt `attempt` (0-based): 1 s, 2 s, 4 s … at most a
/// minute, forever: a service that starts before the network comes up connects when it
/// does.
fn reconnect_wait(attempt: u32) -> std::time::Duration {
    std::time::Duration::from_secs(1u64 << attempt.min(6)).min(RECONNECT_MAX)
}
