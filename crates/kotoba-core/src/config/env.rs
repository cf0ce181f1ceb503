//! The one table of environment variables Kotoba reads: each name, how the README
//! shows its default, and its doc line. A variable that overrides a settings.yaml key
//! names the key and takes its default from it; the companion caps come from
//! `caps.rs`. [`Config`](super::Config) loads exactly these names.

use super::caps::CAPS;
use serde_yaml_ng::Value;

use super::keys::{self, Key};
use super::settings::Settings;

/// What a variable's default is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvDefault {
    /// Its own, as the README's default cell shows it.
    Shown(&'static str),
    /// It overrides this settings.yaml key: the key's default.
    Setting(&'static str),
}

/// One environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVar {
    /// The variable's name.
    pub name: &'static str,
    /// Its default.
    pub default: EnvDefault,
    /// One line saying what it is for.
    pub doc: &'static str,
}

/// The log filter, read by `main` before the configuration is loaded.
pub const LOG_ENV: &str = "KOTOBA_LOG";

/// The PostgreSQL store shared by every process of one bot; unset: SQLite in the data
/// folder.
pub const DATABASE_URL_ENV: &str = "KOTOBA_DATABASE_URL";

/// The Discord owners added to the `owners` setting, read once at start.
pub const OWNER_IDS_ENV: &str = "KOTOBA_DISCORD_OWNER_IDS";

/// The variable that picks the log format: `json` (one JSON object a line), else text.
pub const LOG_FORMAT_ENV: &str = "KOTOBA_LOG_FORMAT";

const fn own(name: &'static str, default: &'static str, doc: &'static str) -> EnvVar {
    EnvVar {
        name,
        default: EnvDefault::Shown(default),
        doc,
    }
}

const fn sets(name: &'static str, key: &'static str) -> EnvVar {
    EnvVar {
        name,
        default: EnvDefault::Setting(key),
        doc: "overrides the settings.yaml key of the same meaning",
    }
}

/// Every variable but the companion caps ([`CAPS`]).
pub const ENV: &[EnvVar] = &[
    own("KOTOBA_HOME", "`~/.kotoba`", "the data folder"),
    own(
        "KOTOBA_SETTINGS",
        "`$KOTOBA_HOME/settings.yaml`",
        "the settings file",
    ),
    own(
        DATABASE_URL_ENV,
        "none (SQLite: `$KOTOBA_HOME/kotoba.db`)",
        "a PostgreSQL URL (`postgres://user:password@host:5432/kotoba`): every process of one bot shares that store (docs/deploy.md)",
    ),
    sets("KOTOBA_LLM_BASE_URL", "base_url"),
    sets("KOTOBA_LLM_API", "api"),
    sets("KOTOBA_MODEL", "model"),
    sets("KOTOBA_REASONING_EFFORT", "reasoning_effort"),
    own(
        "OPENAI_API_KEY",
        "none",
        "the model key (the name is the api_key_env setting)",
    ),
    own(
        "KOTOBA_MASTER_KEY",
        "none (then `$KOTOBA_HOME/keystore.key`, created with mode 0600 on first use)",
        "the keystore's master key: base64 of 32 bytes",
    ),
    sets("KOTOBA_WEB_SEARCH_URL", "web_search_url"),
    own("DISCORD_TOKEN", "none", "the bot token"),
    own(
        OWNER_IDS_ENV,
        "none",
        "Discord owner ids, added to the owners setting",
    ),
    own(
        "KOTOBA_DISCORD_GUILDS",
        "none (every guild)",
        "the guild allow-list",
    ),
    own(
        "KOTOBA_DISCORD_HOME_CHANNELS",
        "none",
        "channels where she answers without a mention",
    ),
    sets("KOTOBA_DISCORD_API_BASE", "discord.api_base"),
    own(
        "KOTOBA_DISCORD_SHARDS",
        "none (every shard, in this process)",
        "`i-j/N`: this process runs shards i to j of N; `auto/N`: it claims free shards of N through the shared store (docs/deploy.md)",
    ),
    own(
        LOG_ENV,
        "`info` for serve, `warn` otherwise",
        "the log filter (tracing EnvFilter syntax)",
    ),
    own(
        LOG_FORMAT_ENV,
        "text",
        "`json` writes each log line as one JSON object (for a log collector)",
    ),
    sets("KOTOBA_WEB_ADDR", "web_addr"),
    sets("KOTOBA_WEB_PASSWORD", "web_password"),
    sets("KOTOBA_WEB_AUTH", "web_auth"),
    own(
        "KOTOBA_WEB_TOKEN",
        "none (then `$KOTOBA_HOME/web_token`, created with mode 0600 at the first start)",
        "the page's token (with no web_password): `Authorization: Bearer <token>`, or open `/?token=<token>` once",
    ),
    own("KOTOBA_API_KEY", "none", "the bearer key /v1 requires"),
    sets("KOTOBA_STT_PROVIDER", "stt.provider"),
    sets("KOTOBA_STT_BASE_URL", "stt.base_url"),
    sets("KOTOBA_TTS_PROVIDER", "tts.provider"),
    sets("KOTOBA_TTS_BASE_URL", "tts.base_url"),
    own(
        "ELEVENLABS_API_KEY",
        "none",
        "the ElevenLabs key (the name is the stt/tts api_key_env setting)",
    ),
];

/// Every name Kotoba reads: [`ENV`] and the companion caps.
pub fn names() -> impl Iterator<Item = &'static str> {
    ENV.iter()
        .map(|v| v.name)
        .chain(CAPS.iter().map(|c| c.name))
}

/// Each variable that overrides a settings.yaml key, with its key.
pub(super) fn overrides() -> impl Iterator<Item = (&'static str, &'static Key)> {
    ENV.iter().filter_map(|v| match v.default {
        EnvDefault::Setting(key) => keys::find(key).map(|k| (v.name, k)),
        EnvDefault::Shown(_) => None,
    })
}

/// Every variable with the README's default cell for it.
pub fn readme_defaults() -> Vec<(&'static str, String)> {
    let own = ENV.iter().map(|v| {
        let default = match v.default {
            EnvDefault::Shown(text) => text.to_string(),
            EnvDefault::Setting(key) => {
                keys::find(key).map(Key::readme_default).unwrap_or_default()
            }
        };
        (v.name, default)
    });
    let caps = CAPS
        .iter()
        .map(|c| (c.name, format!("`{}`", c.default_value())));
    own.chain(caps).collect()
}

/// The owners [`OWNER_IDS_ENV`] adds (ids separated by commas or blanks, each as the
/// `owners` setting takes one), read once at start; a bad id adds none of them (the safe
/// side: nobody extra becomes an owner), and the sentence saying so names the variable.
pub(super) fn owner_ids(raw: Option<&str>) -> (Vec<u64>, Option<String>) {
    let ids: Result<Vec<u64>, _> = super::id_list(raw)
        .iter()
        .map(|r| super::people::user_id(r))
        .collect();
    match ids {
        Ok(ids) => (ids, None),
        Err(e) => (
            Vec::new(),
            Some(format!(
                "{OWNER_IDS_ENV}: {e}; it adds no owner until it is fixed"
            )),
        ),
    }
}

/// Log `said` once per process: the environment is read again with every look at the
/// settings, and a bad variable is one problem, said once.
pub(super) fn warn_once(said: String) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut g = match SAID.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if !g.contains(&said) {
        tracing::warn!("{said}");
        g.push(said);
    }
}

impl Settings {
    /// Apply environment overrides (an env variable beats the file): each variable of
    /// [`ENV`](ENV) that overrides a key. A bad env value is ignored with a
    /// warning naming it, or falls to the safe side for a key that protects the owner
    /// (`keys::safe_side`).
    pub fn apply_env<'a>(&mut self, get: impl Fn(&str) -> Option<&'a str>) {
        for (env, key) in overrides() {
            if let Some(v) = get(env) {
                if let Err(e) = (key.apply)(self, &Value::String(v.to_string())) {
                    let said = match keys::safe_side(key.name, self, &format!("{env}: {e}")) {
                        Some(fell) => format!("{env}: {e}; {fell}"),
                        None => format!("{env}: {e}"),
                    };
                    warn_once(said);
                }
            }
        }
    }
}
