//! The loopback Discord: a test server that speaks Discord's REST (`/api/v10/...`) and
//! gateway (WebSocket: HELLO, IDENTIFY, READY, GUILD_CREATE, heartbeats, RESUME, voice
//! state updates) so serenity connects to it exactly as it would to Discord. A test
//! sends messages, slash commands and button presses as users and reads back the REST
//! calls the bot made (replies, embeds, components, edits, ephemeral flags).

pub mod manage;
pub mod payloads;
pub mod rig;
mod server;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::routing::{any, get};
use axum::serve::ListenerExt;
use axum::Router;
use kotoba::config::Config;

use crate::model_server::ScriptedModel;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

use payloads::MessageSpec;

/// The bot's user id.
pub const BOT: u64 = 900;
/// The application id.
pub const APP: u64 = 901;
/// The test guild.
pub const GUILD: u64 = 100;
/// A text channel of the test guild.
pub const GENERAL: u64 = 200;
/// A second text channel.
pub const OTHER: u64 = 201;
/// A home channel (configured in [`FakeDiscord::config`]).
pub const HOME: u64 = 202;
/// A voice channel in the guild.
pub const LOUNGE: u64 = 210;
/// A second voice channel in the guild.
pub const STUDIO: u64 = 211;
/// A DM channel with [`OWNER`].
pub const DM: u64 = 300;
/// The owner (in KOTOBA_DISCORD_OWNER_IDS).
pub const OWNER: u64 = 1;
/// A guest: a member who is not an owner.
pub const GUEST: u64 = 2;
/// Another guest.
pub const CAROL: u64 = 3;
/// A role the bot wears.
pub const BOT_ROLE: u64 = 700;
/// A private text channel of the crowd guild ([`FakeDiscord::start_crowd`]): only
/// [`OWNER`] (by an overwrite) and administrators may see it.
pub const VAULT: u64 = 203;
/// A second configured owner in the crowd guild (not let into [`VAULT`]).
pub const OWNER2: u64 = 4;
/// An administrator of the crowd guild who is not an owner.
pub const ADMIN: u64 = 5;
/// More guests of the crowd guild.
pub const GUESTS: [u64; 3] = [6, 7, 8];
/// The administrators' role in the crowd guild.
pub const ADMIN_ROLE: u64 = 701;

/// The name each test user goes by.
pub fn name_of(id: u64) -> &'static str {
    match id {
        OWNER => "olive",
        GUEST => "gus",
        CAROL => "carol",
        OWNER2 => "omar",
        ADMIN => "ada",
        6 => "gil",
        7 => "gia",
        8 => "guy",
        _ => "someone",
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// One REST call the bot made.
#[derive(Debug, Clone)]
pub struct Call {
    /// GET, POST, PATCH, PUT, DELETE.
    pub method: String,
    /// The path, e.g. `/api/v10/channels/200/messages`.
    pub path: String,
    /// The JSON body (or a multipart body's `payload_json`), Null when none.
    pub body: Value,
    /// The raw body.
    pub raw: String,
    /// When it arrived.
    pub at: Instant,
    /// The Authorization header.
    pub authorization: Option<String>,
    /// The id of the message a POST created.
    pub message_id: Option<String>,
}

impl Call {
    /// Whether this is `method` on a path ending with `suffix`.
    pub fn is(&self, method: &str, suffix: &str) -> bool {
        self.method == method && self.path.ends_with(suffix)
    }

    /// Every embed's text (title, description, fields, footer) joined.
    pub fn embed_text(&self) -> String {
        let mut out = String::new();
        let embeds = self
            .body
            .get("embeds")
            .or_else(|| self.body.get("data").and_then(|d| d.get("embeds")));
        for e in embeds.and_then(Value::as_array).into_iter().flatten() {
            for k in ["title", "description"] {
                if let Some(s) = e[k].as_str() {
                    out.push_str(s);
                    out.push('\n');
                }
            }
            for f in e["fields"].as_array().into_iter().flatten() {
                out.push_str(f["name"].as_str().unwrap_or(""));
                out.push('\n');
                out.push_str(f["value"].as_str().unwrap_or(""));
                out.push('\n');
            }
            if let Some(s) = e["footer"]["text"].as_str() {
                out.push_str(s);
            }
        }
        out
    }

    /// Every button's custom id (with its disabled flag).
    pub fn buttons(&self) -> Vec<(String, String, bool)> {
        let comps = self
            .body
            .get("components")
            .or_else(|| self.body.get("data").and_then(|d| d.get("components")));
        let mut out = Vec::new();
        for row in comps.and_then(Value::as_array).into_iter().flatten() {
            for b in row["components"].as_array().into_iter().flatten() {
                out.push((
                    b["custom_id"].as_str().unwrap_or("").to_string(),
                    b["label"].as_str().unwrap_or("").to_string(),
                    b["disabled"].as_bool().unwrap_or(false),
                ));
            }
        }
        out
    }

    /// The message content (or an interaction reply's).
    pub fn content(&self) -> String {
        self.body
            .get("content")
            .or_else(|| self.body.get("data").and_then(|d| d.get("content")))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }

    /// Whether an interaction reply is private (flag 64).
    pub fn ephemeral(&self) -> bool {
        let flags = self.body["data"]["flags"].as_u64().unwrap_or(0);
        flags & 64 != 0
    }
}

pub(crate) enum GwCmd {
    Dispatch(Value),
    Drop,
}

pub(crate) struct GuildDef {
    pub id: u64,
    pub payload: Value,
    pub members: Vec<Value>,
}

pub(crate) struct Shared {
    addr: Mutex<Option<SocketAddr>>,
    pub bot_id: u64,
    pub app_id: u64,
    pub heartbeat_ms: u64,
    pub calls: Mutex<Vec<Call>>,
    pub notify: Notify,
    /// The live gateway connections of each shard (two while sessions overlap, as when
    /// a process takes over a shard whose holder has not yet let go: Discord sends both
    /// every event).
    pub conns: Mutex<std::collections::HashMap<u32, Vec<mpsc::UnboundedSender<GwCmd>>>>,
    /// Every dispatch with its sequence number and the shard it went to (RESUME replays
    /// a shard's own).
    pub sent: Mutex<Vec<(u64, u32, Value)>>,
    /// The last sequence number of each shard's session.
    pub seqs: Mutex<std::collections::HashMap<u32, u64>>,
    /// How many shards GET /gateway/bot recommends.
    pub shard_count: std::sync::atomic::AtomicU32,
    /// The `max_concurrency` GET /gateway/bot says (identify buckets).
    pub max_concurrency: std::sync::atomic::AtomicU32,
    /// The shard count the bot identified with (events are routed by it).
    pub identified_total: std::sync::atomic::AtomicU32,
    /// Each IDENTIFY's shard, in the order they arrived, with when.
    pub identified: Mutex<Vec<(u32, Instant)>>,
    /// The guild of each channel of the extra guilds ([`FakeDiscord::add_guilds`]).
    pub channel_guilds: Mutex<std::collections::HashMap<u64, u64>>,
    pub ids: AtomicU64,
    pub guilds: Mutex<Vec<GuildDef>>,
    pub history: Mutex<Vec<Value>>,
    pub identifies: AtomicUsize,
    pub resumes: AtomicUsize,
    pub intents: Mutex<Option<u64>>,
    pub privileged_refused: AtomicBool,
    /// While set, every request is refused as if the network were down (503).
    pub down: AtomicBool,
    pub replay_overlap: AtomicU64,
    /// The application's flags (GET /applications/@me): its privileged intents.
    pub app_flags: AtomicU64,
    pub voice_updates: Mutex<Vec<Value>>,
    /// The endpoint VOICE_SERVER_UPDATE names (None: a port that is no voice server).
    pub voice_endpoint: Mutex<Option<String>>,
    /// The channel of each interaction, by its token (a followup or an edit of the
    /// original response answers with a message in that channel, as Discord's does).
    pub interaction_channels: Mutex<std::collections::HashMap<String, String>>,
    /// The guild's live channels and roles, and queued faults (`manage.rs`).
    pub server: Mutex<manage::Server>,
}

impl Shared {
    pub(crate) fn addr(&self) -> String {
        lock(&self.addr).map(|a| a.to_string()).unwrap_or_default()
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::SeqCst)
    }

    pub(crate) fn ready_payload(&self) -> Value {
        let guilds: Vec<Value> = lock(&self.guilds)
            .iter()
            .map(|g| json!({"id": g.id.to_string(), "unavailable": true}))
            .collect();
        json!({
            "v": 10, "user": payloads::user(self.bot_id, "Kotoba", true), "guilds": guilds,
            "session_id": "fake-session", "resume_gateway_url": format!("ws://{}/gateway", self.addr()),
            "shard": [0, 1], "application": {"id": self.app_id.to_string(), "flags": 0}
        })
    }

    /// The READY of shard `shard` of `total`: only that shard's guilds.
    pub(crate) fn ready_for(&self, shard: u32, total: u32) -> Value {
        let mut ready = self.ready_payload();
        let guilds: Vec<Value> = lock(&self.guilds)
            .iter()
            .filter(|g| shard_of(g.id, total) == shard)
            .map(|g| json!({"id": g.id.to_string(), "unavailable": true}))
            .collect();
        ready["guilds"] = json!(guilds);
        ready["shard"] = json!([shard, total]);
        ready["session_id"] = json!(format!("fake-session-{shard}"));
        ready
    }

    /// The shard an event goes to: its guild's, or shard 0 for a DM.
    pub(crate) fn shard_for(&self, d: &Value) -> u32 {
        let total = self.identified_total.load(Ordering::SeqCst).max(1);
        let guild = d["guild_id"]
            .as_str()
            .and_then(|g| g.parse::<u64>().ok())
            .or_else(|| d["guild_id"].as_u64());
        guild.map_or(0, |g| shard_of(g, total))
    }

    /// Give a dispatch its sequence number and remember it (for shard `shard`) for
    /// RESUME.
    pub(crate) fn stamp_for(&self, shard: u32, t: &str, d: Value) -> Value {
        // Each shard's session numbers its own events, as Discord's do.
        let s = {
            let mut seqs = lock(&self.seqs);
            let n = seqs.entry(shard).or_insert(0);
            *n += 1;
            *n
        };
        let v = json!({"op": 0, "t": t, "s": s, "d": d});
        lock(&self.sent).push((s, shard, v.clone()));
        v
    }

    /// [`Shared::stamp_for`] the shard the event's guild is on.
    pub(crate) fn stamp(&self, t: &str, d: Value) -> Value {
        let shard = self.shard_for(&d);
        self.stamp_for(shard, t, d)
    }
}

/// The shard Discord sends a guild's events to.
pub fn shard_of(guild: u64, total: u32) -> u32 {
    ((guild >> 22) % u64::from(total.max(1))) as u32
}

/// The running loopback Discord.
pub struct FakeDiscord {
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Options of a message a test sends.
#[derive(Default, Clone)]
pub struct Msg {
    /// Reply to this message (a JSON message object).
    pub reply_to: Option<Value>,
    /// Mention these users (id, name).
    pub mentions: Vec<(u64, String)>,
    /// @everyone.
    pub everyone: bool,
    /// Attachments.
    pub attachments: Vec<Value>,
    /// From a bot.
    pub bot: bool,
}

impl FakeDiscord {
    /// Bind 127.0.0.1:0 with one guild (general, other, home; owner, guest, carol).
    pub async fn start() -> FakeDiscord {
        FakeDiscord::start_with(41_250).await
    }

    /// Like [`FakeDiscord::start`] with a given heartbeat interval.
    pub async fn start_with(heartbeat_ms: u64) -> FakeDiscord {
        let members = vec![
            payloads::member(OWNER, "olive", &[], None),
            payloads::member(GUEST, "gus", &[], None),
            payloads::member(CAROL, "carol", &[], None),
        ];
        FakeDiscord::start_guild(heartbeat_ms, members, Vec::new(), Vec::new()).await
    }

    /// The guild of [`FakeDiscord::start`] with more people and a private channel:
    /// owners [`OWNER`] and [`OWNER2`], administrator [`ADMIN`], guests [`GUEST`],
    /// [`CAROL`] and [`GUESTS`]; [`VAULT`] hidden from @everyone, shown to [`OWNER`].
    pub async fn start_crowd() -> FakeDiscord {
        let mut members: Vec<Value> = [OWNER, GUEST, CAROL, OWNER2]
            .into_iter()
            .chain(GUESTS)
            .map(|id| payloads::member(id, name_of(id), &[], None))
            .collect();
        members.push(payloads::member(ADMIN, name_of(ADMIN), &[ADMIN_ROLE], None));
        // VIEW_CHANNEL (1 << 10) | READ_MESSAGE_HISTORY (1 << 16)
        let see = (1u64 << 10) | (1 << 16);
        let mut vault = payloads::text_channel(VAULT, GUILD, "vault");
        vault["permission_overwrites"] = json!([
            {"id": GUILD.to_string(), "type": 0, "allow": "0", "deny": see.to_string()},
            {"id": OWNER.to_string(), "type": 1, "allow": see.to_string(), "deny": "0"}
        ]);
        // ADMINISTRATOR (1 << 3)
        let admins = payloads::role(ADMIN_ROLE, "admins", 1 << 3);
        FakeDiscord::start_guild(41_250, members, vec![vault], vec![admins]).await
    }

    /// Start with the test guild's members `members` (the bot is added), its channels
    /// (general, other, home, lounge, studio) plus `channels`, and roles (hers) plus
    /// `roles`.
    async fn start_guild(
        heartbeat_ms: u64,
        members: Vec<Value>,
        extra_channels: Vec<Value>,
        extra_roles: Vec<Value>,
    ) -> FakeDiscord {
        let mut members = members;
        // Her own member object says bot, as Discord's does (voice counts her out).
        let mut me = payloads::member(BOT, "Kotoba", &[BOT_ROLE], None);
        me["user"]["bot"] = json!(true);
        members.push(me);
        let mut channels = vec![
            payloads::text_channel(GENERAL, GUILD, "general"),
            payloads::text_channel(OTHER, GUILD, "other"),
            payloads::text_channel(HOME, GUILD, "home"),
            payloads::voice_channel(LOUNGE, GUILD, "lounge"),
            payloads::voice_channel(STUDIO, GUILD, "studio"),
        ];
        channels.extend(extra_channels);
        let mut roles = vec![payloads::role(BOT_ROLE, "kotoba", 0)];
        roles.extend(extra_roles);
        let payload = payloads::guild(GUILD, OWNER, &channels, &members, &roles);
        let server = manage::Server {
            channels: channels.clone(),
            roles: payload["roles"].as_array().cloned().unwrap_or_default(),
            ..manage::Server::default()
        };
        let guild = GuildDef {
            id: GUILD,
            payload,
            members,
        };
        let shared = Arc::new(Shared {
            addr: Mutex::new(None),
            bot_id: BOT,
            app_id: APP,
            heartbeat_ms,
            calls: Mutex::new(Vec::new()),
            notify: Notify::new(),
            conns: Mutex::new(std::collections::HashMap::new()),
            sent: Mutex::new(Vec::new()),
            seqs: Mutex::new(std::collections::HashMap::new()),
            shard_count: std::sync::atomic::AtomicU32::new(1),
            max_concurrency: std::sync::atomic::AtomicU32::new(1),
            identified_total: std::sync::atomic::AtomicU32::new(1),
            identified: Mutex::new(Vec::new()),
            channel_guilds: Mutex::new(std::collections::HashMap::new()),
            ids: AtomicU64::new(10_000),
            guilds: Mutex::new(vec![guild]),
            history: Mutex::new(Vec::new()),
            identifies: AtomicUsize::new(0),
            resumes: AtomicUsize::new(0),
            intents: Mutex::new(None),
            privileged_refused: AtomicBool::new(false),
            down: AtomicBool::new(false),
            replay_overlap: AtomicU64::new(0),
            // Message Content and Server Members switched on (the "limited" bits of an
            // application in fewer than 100 servers).
            app_flags: AtomicU64::new((1 << 15) | (1 << 19)),
            voice_updates: Mutex::new(Vec::new()),
            voice_endpoint: Mutex::new(None),
            interaction_channels: Mutex::new(std::collections::HashMap::new()),
            server: Mutex::new(server),
        });
        let app = Router::new()
            .route("/gateway", get(server::gateway))
            .fallback(any(server::rest))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the loopback Discord");
        let addr = listener.local_addr().expect("its address");
        *lock(&shared.addr) = Some(addr);
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeDiscord { shared, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn api_base(&self) -> String {
        format!("http://{}", self.shared.addr())
    }

    /// Set the application's flags (its privileged intents) as GET /applications/@me
    /// says them.
    pub fn set_app_flags(&self, flags: u64) {
        self.shared.app_flags.store(flags, Ordering::SeqCst);
    }

    /// Refuse privileged intents at IDENTIFY (close 4014), as Discord does when they
    /// are not enabled in the developer portal.
    pub fn refuse_privileged_intents(&self) {
        self.shared.privileged_refused.store(true, Ordering::SeqCst);
    }

    /// Refuse every request (503) while `down`, as an unreachable Discord would.
    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
    }

    /// On RESUME, also replay this many events the client had already seen.
    pub fn replay_overlap(&self, n: u64) {
        self.shared.replay_overlap.store(n, Ordering::SeqCst);
    }

    /// The env a kotoba Config needs to talk to this fake (token, api base, owner,
    /// home channel), on top of `base` (e.g. a scripted model's).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("DISCORD_TOKEN".into(), "test-token".into()),
            ("KOTOBA_DISCORD_API_BASE".into(), self.api_base()),
            ("KOTOBA_DISCORD_OWNER_IDS".into(), OWNER.to_string()),
            ("KOTOBA_DISCORD_HOME_CHANNELS".into(), HOME.to_string()),
        ]
    }

    /// A config for data folder `home` with `model` (chat) and this fake; `extra`
    /// replaces or adds variables.
    pub fn config(
        &self,
        home: &Path,
        model: &ScriptedModel,
        extra: &[(&str, &str)],
    ) -> Arc<Config> {
        let mut env: Vec<(String, String)> = model
            .env("chat")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        env.extend(self.env());
        for (k, v) in extra {
            env.retain(|(ek, _)| ek != k);
            env.push((k.to_string(), v.to_string()));
        }
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Config::for_home(home, &pairs)
    }

    /// Every REST call so far.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.shared.calls).clone()
    }

    /// From now on, a join is sent to the voice server at `endpoint` (`127.0.0.1:PORT`,
    /// e.g. [`crate::voice::FakeVoice::endpoint`]) instead of one that is not.
    pub fn use_voice_server(&self, endpoint: String) {
        *lock(&self.shared.voice_endpoint) = Some(endpoint);
    }

    /// The voice state updates (gateway opcode 4) the bot sent, oldest first.
    pub fn voice_updates(&self) -> Vec<Value> {
        lock(&self.shared.voice_updates).clone()
    }

    /// How many IDENTIFYs and RESUMEs arrived.
    pub fn identifies(&self) -> usize {
        self.shared.identifies.load(Ordering::SeqCst)
    }

    /// How many RESUMEs arrived.
    pub fn resumes(&self) -> usize {
        self.shared.resumes.load(Ordering::SeqCst)
    }

    /// The intents of the last IDENTIFY.
    pub fn intents(&self) -> Option<u64> {
        *lock(&self.shared.intents)
    }

    /// Wait (≤ `secs`) for a call matching `pred` among calls from index `from` on.
    pub async fn wait_for_from(
        &self,
        from: usize,
        secs: u64,
        pred: impl Fn(&Call) -> bool,
    ) -> Call {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let notified = self.shared.notify.notified();
            if let Some(c) = lock(&self.shared.calls).iter().skip(from).find(|c| pred(c)) {
                return c.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let seen: Vec<String> = self
                    .calls()
                    .iter()
                    .map(|c| format!("{} {} {}", c.method, c.path, c.body))
                    .collect();
                panic!(
                    "no matching call within {secs} s; calls:\n{}",
                    seen.join("\n")
                );
            }
            let _ = tokio::time::timeout(left.min(Duration::from_millis(200)), notified).await;
        }
    }

    /// Wait (≤ 10 s) for a call matching `pred`.
    pub async fn wait_for(&self, pred: impl Fn(&Call) -> bool) -> Call {
        self.wait_for_from(0, 10, pred).await
    }

    /// Wait until a gateway connection is identified (or resumed) and live.
    pub async fn wait_connected(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let notified = self.shared.notify.notified();
            if lock(&self.shared.conns)
                .get(&0)
                .is_some_and(|c| c.iter().any(|c| !c.is_closed()))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the bot never connected to the gateway"
            );
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }

    /// Wait until the bot registered its slash commands (its start-up is done).
    pub async fn wait_ready(&self) {
        self.wait_connected().await;
        self.wait_for(|c| c.method == "PUT" && c.path.contains("/commands"))
            .await;
    }

    /// `user` is now in voice channel `channel` (None: left voice), as Discord tells.
    pub fn voice_state(&self, user: u64, channel: Option<u64>) {
        let name = name_of(user);
        self.dispatch(
            "VOICE_STATE_UPDATE",
            json!({
                "guild_id": GUILD.to_string(),
                "channel_id": channel.map(|c| c.to_string()),
                "user_id": user.to_string(),
                "member": payloads::member(user, name, &[], None),
                "session_id": format!("vs{user}"),
                "deaf": false, "mute": false, "self_deaf": false, "self_mute": false,
                "self_video": false, "suppress": false, "request_to_speak_timestamp": null
            }),
        );
    }

    /// Dispatch an event to the live connection (kept for RESUME replay either way).
    pub fn dispatch(&self, t: &str, d: Value) {
        if t == "INTERACTION_CREATE" {
            if let (Some(token), Some(channel)) = (d["token"].as_str(), d["channel_id"].as_str()) {
                lock(&self.shared.interaction_channels).insert(token.into(), channel.into());
            }
        }
        let shard = self.shared.shard_for(&d);
        let v = self.shared.stamp_for(shard, t, d);
        for tx in lock(&self.shared.conns).get(&shard).into_iter().flatten() {
            let _ = tx.send(GwCmd::Dispatch(v.clone()));
        }
    }

    /// Close every live gateway connection abruptly (the bot must RESUME).
    pub fn drop_gateway(&self) {
        for (_, txs) in lock(&self.shared.conns).drain() {
            for tx in txs {
                let _ = tx.send(GwCmd::Drop);
            }
        }
    }

    /// A user writes `content` in `channel` (guild channels; [`DM`] is a DM). Returns
    /// the message object (so a test can reply to it).
    pub fn say(&self, channel: u64, author: u64, content: &str, opts: Msg) -> Value {
        let id = self.shared.next_id();
        let guild = self.guild_of(channel);
        let spec = MessageSpec {
            id,
            channel,
            guild,
            author,
            author_name: name_of(author),
            author_bot: opts.bot,
            content,
            referenced: opts.reply_to,
            mentions: opts
                .mentions
                .iter()
                .map(|(id, n)| payloads::user(*id, n, *id == BOT))
                .collect(),
            mention_everyone: opts.everyone,
            attachments: opts.attachments,
        };
        let mut msg = payloads::message(&spec);
        if msg.get("member").is_some() {
            // A guild message's member carries the author's roles, as Discord's does.
            let roles: Vec<String> = self.roles_of(author).iter().map(u64::to_string).collect();
            msg["member"]["roles"] = json!(roles);
        }
        lock(&self.shared.history).push(msg.clone());
        self.dispatch("MESSAGE_CREATE", msg.clone());
        msg
    }

    /// A user writes `content` in `channel` while the bot is away, `age` seconds ago:
    /// the message is in the channel's history but no gateway event carries it.
    pub fn said_while_away(
        &self,
        channel: u64,
        author: u64,
        content: &str,
        mention: bool,
        age: i64,
    ) -> Value {
        let id = self.shared.next_id();
        let mentions = if mention {
            vec![payloads::user(BOT, "Kotoba", true)]
        } else {
            Vec::new()
        };
        let text = if mention {
            format!("<@{BOT}> {content}")
        } else {
            content.to_string()
        };
        let spec = MessageSpec {
            id,
            channel,
            guild: self.guild_of(channel),
            author,
            author_name: name_of(author),
            author_bot: false,
            content: &text,
            referenced: None,
            mentions,
            mention_everyone: false,
            attachments: Vec::new(),
        };
        let mut msg = payloads::message(&spec);
        msg["timestamp"] = serde_json::json!(payloads::ago(age));
        lock(&self.shared.history).push(msg.clone());
        msg
    }

    /// Users mention her in `channel`, one line each, in this order (their ids
    /// increase), but the gateway delivers the events newest first, as a busy gateway's
    /// handlers may see them.
    pub fn mentions_delivered_newest_first(&self, channel: u64, lines: &[(u64, &str)]) {
        let msgs: Vec<Value> = lines
            .iter()
            .map(|(author, content)| {
                let text = format!("<@{BOT}> {content}");
                let spec = MessageSpec {
                    id: self.shared.next_id(),
                    channel,
                    guild: self.guild_of(channel),
                    author: *author,
                    author_name: name_of(*author),
                    author_bot: false,
                    content: &text,
                    referenced: None,
                    mentions: vec![payloads::user(BOT, "Kotoba", true)],
                    mention_everyone: false,
                    attachments: Vec::new(),
                };
                payloads::message(&spec)
            })
            .collect();
        for msg in msgs.into_iter().rev() {
            lock(&self.shared.history).push(msg.clone());
            self.dispatch("MESSAGE_CREATE", msg);
        }
    }

    /// A user mentions her: `<@BOT> content`.
    pub fn mention(&self, channel: u64, author: u64, content: &str) -> Value {
        self.say(
            channel,
            author,
            &format!("<@{BOT}> {content}"),
            Msg {
                mentions: vec![(BOT, "Kotoba".into())],
                ..Msg::default()
            },
        )
    }

    /// The roles member `user` holds now.
    fn roles_of(&self, user: u64) -> Vec<u64> {
        lock(&self.shared.guilds)
            .iter()
            .flat_map(|g| g.members.iter())
            .find(|m| m["user"]["id"].as_str().and_then(|s| s.parse::<u64>().ok()) == Some(user))
            .and_then(|m| m["roles"].as_array().cloned())
            .map(|r| r.iter().filter_map(|x| x.as_str()?.parse().ok()).collect())
            .unwrap_or_default()
    }

    fn presser(&self, user: u64, permissions: u64) -> Value {
        // Discord's interaction member carries the member's roles.
        let roles = self.roles_of(user);
        payloads::member(user, name_of(user), &roles, Some(permissions))
    }

    /// A new interaction of Discord's `kind` (2 command, 3 component, 5 modal submit)
    /// from `user` holding `permissions` in `channel`, without its data; with its id.
    fn interaction(&self, kind: u8, channel: u64, user: u64, permissions: u64) -> (u64, Value) {
        let id = self.shared.next_id();
        let guild = self.guild_of(channel);
        let i = payloads::interaction_base(
            kind,
            id,
            APP,
            channel,
            guild,
            &self.presser(user, permissions),
            &format!("tok{id}"),
        );
        (id, i)
    }

    /// `user` presses the button `custom_id` on the bot's message `message` (a JSON
    /// message as the bot posted it). Returns the interaction id.
    pub fn press(&self, channel: u64, message_id: &str, custom_id: &str, user: u64) -> u64 {
        self.press_holding(channel, message_id, custom_id, user, 1 << 10 | 1 << 11)
    }

    /// Like [`FakeDiscord::press`], the presser holding `permissions` in the channel (as
    /// Discord computes them into the interaction's member).
    pub fn press_holding(
        &self,
        channel: u64,
        message_id: &str,
        custom_id: &str,
        user: u64,
        permissions: u64,
    ) -> u64 {
        let data = json!({"custom_id": custom_id, "component_type": 2});
        self.component(channel, message_id, data, user, permissions)
    }

    /// `user` picks `values` in the select menu `custom_id` on the bot's message
    /// `message_id` (a string select, component_type 3). Returns the interaction id.
    pub fn select(
        &self,
        channel: u64,
        message_id: &str,
        custom_id: &str,
        values: &[&str],
        user: u64,
    ) -> u64 {
        let data = json!({"custom_id": custom_id, "component_type": 3, "values": values});
        self.component(channel, message_id, data, user, 1 << 10 | 1 << 11)
    }

    /// A MESSAGE_COMPONENT interaction with `data` on the bot's message `message_id`.
    fn component(
        &self,
        channel: u64,
        message_id: &str,
        data: Value,
        user: u64,
        permissions: u64,
    ) -> u64 {
        let (id, mut i) = self.interaction(3, channel, user, permissions);
        i["data"] = data;
        i["message"] = json!({
            "id": message_id, "channel_id": channel.to_string(),
            "author": payloads::user(BOT, "Kotoba", true), "content": "", "timestamp": payloads::TS,
            "edited_timestamp": null, "tts": false, "mention_everyone": false, "mentions": [],
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": false, "type": 0,
            "flags": 0, "components": []
        });
        self.dispatch("INTERACTION_CREATE", i);
        id
    }

    /// `user` submits the modal `custom_id` with one text field `field` holding `value`,
    /// as Discord sends a MODAL_SUBMIT (interaction type 5). Returns the interaction id.
    pub fn submit_modal(
        &self,
        channel: u64,
        custom_id: &str,
        field: &str,
        value: &str,
        user: u64,
    ) -> u64 {
        let (id, mut i) = self.interaction(5, channel, user, 1 << 10 | 1 << 11);
        i["data"] = json!({
            "custom_id": custom_id,
            "components": [{"type": 1, "components": [
                {"type": 4, "custom_id": field, "value": value}
            ]}]
        });
        self.dispatch("INTERACTION_CREATE", i);
        id
    }

    /// `user` runs the slash command `name` with `options` (Discord's option JSON),
    /// holding `permissions` (e.g. 1<<5 for Manage Server). Returns the interaction id.
    pub fn slash(
        &self,
        channel: u64,
        user: u64,
        name: &str,
        options: Value,
        permissions: u64,
    ) -> u64 {
        let (id, mut i) = self.interaction(2, channel, user, permissions);
        i["data"] = json!({"id": "5000", "name": name, "type": 1, "options": options});
        self.dispatch("INTERACTION_CREATE", i);
        id
    }

    /// Calls whose path ends in `/interactions/{id}/tok{id}/callback`.
    pub fn callback_of(&self, interaction: u64) -> Option<Call> {
        let suffix = format!("/interactions/{interaction}/tok{interaction}/callback");
        self.calls().into_iter().find(|c| c.path.ends_with(&suffix))
    }

    /// Wait for the callback of `interaction`.
    pub async fn wait_callback(&self, interaction: u64) -> Call {
        let suffix = format!("/interactions/{interaction}/tok{interaction}/callback");
        self.wait_for(move |c| c.path.ends_with(&suffix)).await
    }

    /// Put role `id` (`name`, `permissions`, `position`) in the guild, replacing one of
    /// the same id.
    pub fn set_role(&self, id: u64, name: &str, permissions: u64, position: i64) {
        let mut r = payloads::role(id, name, permissions);
        r["position"] = json!(position);
        let mut server = lock(&self.shared.server);
        server.roles.retain(|x| x["id"] != json!(id.to_string()));
        server.roles.push(r);
    }

    /// Put text channel `id` named `name` in the guild.
    pub fn add_channel(&self, id: u64, name: &str) {
        lock(&self.shared.server)
            .channels
            .push(payloads::text_channel(id, GUILD, name));
    }

    /// Give member `user` the role `role`.
    pub fn give_member_role(&self, user: u64, role: u64) {
        let mut guilds = lock(&self.shared.guilds);
        for m in guilds.iter_mut().flat_map(|g| g.members.iter_mut()) {
            if m["user"]["id"] == json!(user.to_string()) {
                if let Some(list) = m["roles"].as_array_mut() {
                    list.push(json!(role.to_string()));
                }
            }
        }
    }

    /// Answer the next matching call with this fault.
    pub fn queue_fault(&self, fault: manage::Fault) {
        lock(&self.shared.server).faults.push_back(fault);
    }

    /// The guild's channels now.
    pub fn channels(&self) -> Vec<Value> {
        lock(&self.shared.server).channels.clone()
    }

    /// The forum posts made so far.
    pub fn threads(&self) -> Vec<Value> {
        lock(&self.shared.server).threads.clone()
    }

    /// The guild's roles now.
    pub fn roles(&self) -> Vec<Value> {
        lock(&self.shared.server).roles.clone()
    }

    /// The guild's members now.
    pub fn members(&self) -> Vec<Value> {
        lock(&self.shared.guilds)
            .iter()
            .flat_map(|g| g.members.clone())
            .collect()
    }
}

impl FakeDiscord {
    /// The guild a channel is in (None: the DM).
    pub fn guild_of(&self, channel: u64) -> Option<u64> {
        if channel == DM {
            return None;
        }
        Some(
            lock(&self.shared.channel_guilds)
                .get(&channel)
                .copied()
                .unwrap_or(GUILD),
        )
    }

    /// Recommend `n` shards (GET /gateway/bot), as Discord does for a bot in many
    /// guilds.
    pub fn recommend_shards(&self, n: u32) {
        self.shared.shard_count.store(n, Ordering::SeqCst);
    }

    /// Add `count` guilds spread over the shards (guild k's id is `(k + 1) << 22 | 7`, so
    /// it is on shard `(k + 1) % N`), each with one text channel (returned, in order) and
    /// the owner and a guest as members.
    pub fn add_guilds(&self, count: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for k in 0..count {
            let (guild, channel) = (((k + 1) << 22) | 7, 50_000_000 + k);
            let mut me = payloads::member(BOT, "Kotoba", &[], None);
            me["user"]["bot"] = json!(true);
            let members = vec![
                payloads::member(OWNER, "olive", &[], None),
                payloads::member(GUEST, "gus", &[], None),
                me,
            ];
            let channels = vec![payloads::text_channel(channel, guild, "general")];
            let payload = payloads::guild(guild, OWNER, &channels, &members, &[]);
            lock(&self.shared.guilds).push(GuildDef {
                id: guild,
                payload,
                members,
            });
            lock(&self.shared.channel_guilds).insert(channel, guild);
            out.push((guild, channel));
        }
        out
    }

    /// Say `max_concurrency` is `n` (GET /gateway/bot): shards in `n` identify buckets.
    pub fn set_max_concurrency(&self, n: u32) {
        self.shared.max_concurrency.store(n, Ordering::SeqCst);
    }

    /// Each IDENTIFY with its shard and when it came, in order.
    pub fn identify_times(&self) -> Vec<(u32, Instant)> {
        lock(&self.shared.identified).clone()
    }

    /// The shards that identified, in order.
    pub fn identified_shards(&self) -> Vec<u32> {
        lock(&self.shared.identified)
            .iter()
            .map(|(s, _)| *s)
            .collect()
    }

    /// Wait until every shard of `total` has a live connection.
    pub async fn wait_shards(&self, total: u32, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let notified = self.shared.notify.notified();
            let live = lock(&self.shared.conns)
                .iter()
                .filter(|(s, c)| **s < total && c.iter().any(|c| !c.is_closed()))
                .count();
            if live == total as usize {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "only {live} of {total} shards connected within {within:?}"
            );
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }
}
