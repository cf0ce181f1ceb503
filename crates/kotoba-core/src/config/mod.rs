//! Configuration: the data folder and its paths, companion caps read once from the
//! environment, and settings.yaml whose live keys are re-read on use (validated key by
//! key: a bad value names the key and keeps the last good one). The keys are one table
//! (`keys.rs`), the environment variables another (`env.rs`); the README is checked
//! against both (`readme.rs`).

mod caps;
mod edit;
pub mod env;
pub mod keys;
pub mod listing;
mod live;
pub mod mcp;
pub mod password;
mod people;
#[cfg(test)]
mod readme;
mod settings;
mod shared;
mod value_error;
mod values;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use caps::CompanionCaps;
pub use settings::{
    ApiStyle, DiscordSessions, RealtimeProvider, RoleToolsets, Secret, SettingError, Settings,
    SttProvider, SttStreaming, TtsProvider, VoiceMode, VoiceSettings, WebAuth, WORK_TIMEOUT,
};
pub use shared::{SharedError, SharedSettings};
pub use value_error::ValueError;

/// Where things live.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The data folder (`KOTOBA_HOME`, default `~/.kotoba`).
    pub home: PathBuf,
    /// settings.yaml (`KOTOBA_SETTINGS`, default `<home>/settings.yaml`).
    pub settings: PathBuf,
    /// The SQLite database.
    pub db: PathBuf,
    /// Memory Markdown files.
    pub memory: PathBuf,
}

impl Paths {
    /// Paths under one data folder.
    pub fn under(home: &Path, settings: Option<PathBuf>) -> Paths {
        Paths {
            home: home.to_path_buf(),
            settings: settings.unwrap_or_else(|| home.join("settings.yaml")),
            db: home.join("kotoba.db"),
            memory: home.join("memory"),
        }
    }
}

/// The process's configuration, loaded once and shared as `Arc`.
#[derive(Debug)]
pub struct Config {
    /// Where things live.
    pub paths: Paths,
    /// Companion caps, read once at start.
    pub caps: CompanionCaps,
    /// The environment as it was at start (every override is read from here).
    env: HashMap<String, String>,
    /// settings.yaml as last read, and the keys saved for every process.
    live: Mutex<live::LiveState>,
    /// The owners `KOTOBA_DISCORD_OWNER_IDS` adds, parsed once at start, and why it
    /// adds none when an id in it is bad.
    env_owners: (Vec<u64>, Option<String>),
    /// Where settings saved here reach the bot's other processes (the shared store);
    /// unset with a store of this process's own.
    shared: std::sync::OnceLock<Arc<dyn SharedSettings>>,
}

impl Config {
    /// Load from the process environment (main only; tests use [`Config::from_env_map`]).
    pub fn from_process_env() -> Arc<Config> {
        let env: HashMap<String, String> = env::names()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        Config::from_env_map(env)
    }

    /// Build from an explicit map of environment values.
    pub fn from_env_map(env: HashMap<String, String>) -> Arc<Config> {
        let home = env
            .get("KOTOBA_HOME")
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(default_home);
        let settings = env
            .get("KOTOBA_SETTINGS")
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from);
        let paths = Paths::under(&home, settings);
        let caps = CompanionCaps::from_env(|k| env.get(k).cloned());
        let env_owners = env::owner_ids(env.get(env::OWNER_IDS_ENV).map(String::as_str));
        if let Some(said) = &env_owners.1 {
            env::warn_once(said.clone());
        }
        Arc::new(Config {
            paths,
            caps,
            env,
            live: Mutex::new(live::LiveState::default()),
            env_owners,
            shared: std::sync::OnceLock::new(),
        })
    }

    /// A config for tests: data folder `home`, the given env values, nothing else.
    pub fn for_home(home: &Path, extra_env: &[(&str, &str)]) -> Arc<Config> {
        let mut env: HashMap<String, String> = extra_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.insert("KOTOBA_HOME".into(), home.display().to_string());
        Config::from_env_map(env)
    }

    /// The PostgreSQL store's URL (`KOTOBA_DATABASE_URL`), when one is set.
    pub fn database_url(&self) -> Option<&str> {
        self.env(env::DATABASE_URL_ENV)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    }

    /// One environment value as it was at start.
    pub fn env(&self, key: &str) -> Option<&str> {
        self.env.get(key).map(String::as_str)
    }

    /// The live settings: settings.yaml re-read when it changed, each key validated,
    /// environment overrides applied on top.
    pub fn settings(&self) -> Settings {
        let mut live = self.lock_live();
        live.refresh(&self.paths.settings);
        let mut s = live.current.clone();
        s.apply_env(|k| self.env(k));
        s
    }

    /// The workspace her commands run in and the gate checks paths against: the
    /// `workspace` setting, else `<home>/workspace`.
    pub fn workspace(&self, settings: &Settings) -> PathBuf {
        settings
            .workspace
            .clone()
            .unwrap_or_else(|| self.paths.home.join("workspace"))
    }

    /// The live workspace, created when missing, so the gate judges a fresh data
    /// folder's paths against a folder that exists (`serve` at start-up and
    /// `gate explain` both go through here).
    pub fn ensure_workspace(&self) -> std::io::Result<PathBuf> {
        let ws = self.workspace(&self.settings());
        std::fs::create_dir_all(&ws)?;
        Ok(ws)
    }

    /// Warnings from the last read of settings.yaml (bad keys, unreadable file), after
    /// a bad `KOTOBA_DISCORD_OWNER_IDS`'s.
    pub fn settings_warnings(&self) -> Vec<String> {
        let mut live = self.lock_live();
        live.refresh(&self.paths.settings);
        let env = self.env_owners.1.iter().cloned();
        env.chain(live.warnings.iter().cloned()).collect()
    }

    /// Validate and write one key of settings.yaml, and, with a shared store, keep it
    /// there for every process too. A bad value is refused with an error naming the
    /// key, and nothing is written.
    pub fn set(&self, key: &str, value: &str) -> Result<(), SettingError> {
        let hashed;
        let value = match key {
            // The page's password is kept as a hash, never as its text.
            "web_password" => {
                let plain = match live::check_key(key, value)? {
                    serde_yaml_ng::Value::String(text) => text,
                    _ => value.trim().to_string(),
                };
                let plain = plain.as_str();
                if plain.is_empty() || password::is_hash(plain) {
                    value
                } else {
                    let h = password::hash(plain).map_err(|reason| SettingError::Password {
                        key: key.to_string(),
                        reason,
                    })?;
                    hashed = serde_json::Value::String(h).to_string();
                    &hashed
                }
            }
            _ => value,
        };
        live::write_key(&self.paths.settings, key, value)?;
        let Some(shared) = self.shared.get() else {
            return Ok(());
        };
        shared
            .save(key, value)
            .map_err(|reason| SettingError::Shared {
                key: key.to_string(),
                reason,
            })?;
        self.lock_live().set_shared_key(key, value);
        Ok(())
    }

    /// Share settings with the bot's other processes through `shared`: what is saved
    /// here is kept there, and what is kept there wins over settings.yaml from the next
    /// [`Config::refresh_shared`] on (the environment still wins over both).
    pub fn share_settings(&self, shared: Arc<dyn SharedSettings>) {
        if self.shared.set(shared).is_ok() {
            self.refresh_shared();
        }
    }

    /// Whether settings are also kept in a store shared by every process.
    pub fn shares_settings(&self) -> bool {
        self.shared.get().is_some()
    }

    /// Read the keys saved for every process again (each turn starts with this). When
    /// the store does not answer, the keys last read stay.
    pub fn refresh_shared(&self) {
        let Some(shared) = self.shared.get() else {
            return;
        };
        match shared.load() {
            Ok(keys) => self.lock_live().set_shared(&keys),
            Err(e) => {
                tracing::warn!("settings saved for every process: {e}; keeping the last read")
            }
        }
    }

    fn lock_live(&self) -> std::sync::MutexGuard<'_, live::LiveState> {
        match self.live.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Validate `value` for `key` as [`Config::set`] would, writing nothing (a save of
    /// several keys checks them all before it writes one).
    pub fn check(&self, key: &str, value: &str) -> Result<(), SettingError> {
        live::check_key(key, value).map(|_| ())
    }

    /// The listing of every live settings.yaml key (docs/surfaces.md).
    pub fn listing(&self) -> Vec<listing::Listed> {
        self.refresh_shared();
        let mut listed = listing::listing(&self.settings(), |key| self.overridden_by(key));
        let warnings = self.settings_warnings();
        for l in &mut listed {
            let named = format!("setting '{}'", l.key);
            l.warning = warnings.iter().find(|w| w.starts_with(&named)).cloned();
        }
        listed
    }

    /// The environment variable set here that wins over settings.yaml key `key`.
    pub fn overridden_by(&self, key: &str) -> Option<&'static str> {
        env::overrides()
            .find(|(var, k)| k.name == key && self.env(var).is_some_and(|v| !v.trim().is_empty()))
            .map(|(var, _)| var)
    }

    /// Every owner's Discord user id: the live `owners` setting plus
    /// `KOTOBA_DISCORD_OWNER_IDS` (comma or space separated, read at start), each once.
    /// Owners use every tool and answer host cards. Each is validated where it is read:
    /// a bad id names its key or variable and adds no owner (the safe side).
    pub fn owners(&self) -> Vec<u64> {
        self.owners_in(&self.settings())
    }

    /// [`Config::owners`] as `settings` (a turn's snapshot) say.
    pub fn owners_in(&self, settings: &Settings) -> Vec<u64> {
        let mut ids = settings.owners.clone();
        for id in &self.env_owners.0 {
            if !ids.contains(id) {
                ids.push(*id);
            }
        }
        ids
    }

    /// The API key for the model, from the env name the settings name.
    pub fn api_key(&self) -> Option<String> {
        self.api_key_in(&self.settings())
    }

    /// [`Config::api_key`] as `settings` (a turn's snapshot) name it.
    pub fn api_key_in(&self, settings: &Settings) -> Option<String> {
        let name = &settings.api_key_env;
        self.env(name)
            .map(str::to_string)
            .or_else(|| std::env::var(name).ok())
            .filter(|k| !k.trim().is_empty())
    }
}

/// Split an id list such as `"1, 2 3"` into its ids.
pub fn id_list(raw: Option<&str>) -> Vec<String> {
    raw.unwrap_or("")
        .split(|c: char| c == ',' || c.is_whitespace())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn default_home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".kotoba")
}
