//! Her secrets stay hers: what every process she starts (shell, Python, MCP servers,
//! the local recognizer, espeak-ng) inherits from her environment, less her secrets.
//!
//! - **Her own**, never passed: `DISCORD_TOKEN`, `KOTOBA_DATABASE_URL`, every `KOTOBA_*`
//!   name holding a secret word (`KOTOBA_API_KEY`, `KOTOBA_WEB_PASSWORD`,
//!   `KOTOBA_WEB_TOKEN`, `KOTOBA_MASTER_KEY`, …) and the variables her model and speech
//!   keys are read from (`api_key_env`, `stt.api_key_env`, `tts.api_key_env`,
//!   `realtime.api_key_env`, `OPENAI_API_KEY`, `ELEVENLABS_API_KEY`).
//! - **Looks secret**, withheld unless `shell.env_keep` names it (a name or a `*`
//!   pattern): any name holding KEY, TOKEN, SECRET, PASSWORD or PASSWD.
//! - What a caller sets on the command itself (an MCP server's `env` from settings, a
//!   saved secret `get_credential` exposes as `KOTOBA_SECRET_<NAME>`) still reaches it.

use std::ffi::OsString;
use std::sync::{Arc, OnceLock};

use kotoba_core::config::Config;

/// Words that make a variable's name look secret.
pub const SECRET_WORDS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"];

/// Her own secrets by name, whatever the settings say.
const OWN: &[&str] = &[
    "DISCORD_TOKEN",
    "KOTOBA_DATABASE_URL",
    "OPENAI_API_KEY",
    "ELEVENLABS_API_KEY",
];

/// The configuration the policy reads live (`api_key_env` names, `shell.env_keep`);
/// set once by [`crate::app::App::build`]. Without it the fixed rules apply and nothing
/// that looks secret is kept.
static CONFIG: OnceLock<Arc<Config>> = OnceLock::new();

/// Read the policy's settings from `config` from now on (the first call wins).
pub fn follow(config: &Arc<Config>) {
    let _ = CONFIG.set(config.clone());
}

/// The policy in effect now.
#[derive(Debug, Clone, Default)]
pub struct ChildEnv {
    /// The variables her model and speech keys are read from.
    key_names: Vec<String>,
    /// `shell.env_keep`: names or `*` patterns passed on though they look secret.
    keep: Vec<String>,
}

impl ChildEnv {
    /// The policy `config` gives now.
    pub fn of(config: &Config) -> ChildEnv {
        let s = config.settings();
        let v = &s.voice;
        let key_names = [
            &s.api_key_env,
            &v.stt_api_key_env,
            &v.tts_api_key_env,
            &v.realtime_api_key_env,
        ]
        .into_iter()
        .filter(|n| !n.trim().is_empty())
        .cloned()
        .collect();
        ChildEnv {
            key_names,
            keep: s.shell_env_keep,
        }
    }

    /// The policy of the configuration [`follow`] named, else the fixed rules.
    pub fn current() -> ChildEnv {
        CONFIG.get().map(|c| ChildEnv::of(c)).unwrap_or_default()
    }

    /// Whether `name` is one of her own secrets (never passed, whatever `env_keep` says).
    pub fn is_own(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        OWN.contains(&upper.as_str())
            || self.key_names.iter().any(|k| k.eq_ignore_ascii_case(name))
            || (upper.starts_with("KOTOBA_") && looks_secret(&upper))
    }

    /// Whether a child does not get `name` from her environment.
    pub fn withholds(&self, name: &str) -> bool {
        self.is_own(name)
            || (looks_secret(&name.to_ascii_uppercase())
                && !self.keep.iter().any(|p| glob(p, name)))
    }

    /// The names of her environment a child does not get.
    pub fn withheld(&self) -> Vec<OsString> {
        std::env::vars_os()
            .map(|(k, _)| k)
            .filter(|k| k.to_str().is_none_or(|k| self.withholds(k)))
            .collect()
    }

    /// Take what a child must not get out of `cmd`'s inherited environment, leaving
    /// what the caller set on `cmd` itself.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        let set: Vec<OsString> = cmd
            .get_envs()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.to_os_string())
            .collect();
        for name in self.withheld() {
            if !set.contains(&name) {
                cmd.env_remove(name);
            }
        }
    }

    /// `shell.env_keep`, for `doctor`.
    pub fn kept(&self) -> &[String] {
        &self.keep
    }
}

fn looks_secret(upper: &str) -> bool {
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// `pattern` (with `*` for any run of characters) matches all of `name`; case-sensitive
/// like the environment.
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(keep: &[&str], keys: &[&str]) -> ChildEnv {
        ChildEnv {
            key_names: keys.iter().map(|s| s.to_string()).collect(),
            keep: keep.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn her_own_secrets_are_withheld_even_when_env_keep_names_them() {
        let p = policy(&["*", "DISCORD_TOKEN"], &["MY_LLM"]);
        for name in [
            "DISCORD_TOKEN",
            "KOTOBA_API_KEY",
            "KOTOBA_WEB_PASSWORD",
            "KOTOBA_WEB_TOKEN",
            "KOTOBA_MASTER_KEY",
            "KOTOBA_DATABASE_URL",
            "OPENAI_API_KEY",
            "ELEVENLABS_API_KEY",
            "MY_LLM",
        ] {
            assert!(p.is_own(name) && p.withholds(name), "{name}");
        }
        assert!(!p.withholds("GITHUB_TOKEN"), "kept by *");
    }

    #[test]
    fn names_that_look_secret_are_withheld_unless_kept_and_ordinary_ones_pass() {
        let p = policy(&["GITHUB_TOKEN", "AWS_*_KEY_ID"], &[]);
        for name in [
            "NPM_TOKEN",
            "STRIPE_SECRET",
            "db_password",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(p.withholds(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "KOTOBA_HOME",
            "KOTOBA_CHILD_OF",
            "GITHUB_TOKEN",
            "AWS_ACCESS_KEY_ID",
        ] {
            assert!(!p.withholds(name), "{name}");
        }
    }

    #[test]
    fn a_pattern_matches_whole_names_only() {
        assert!(
            glob("AWS_*", "AWS_KEY") && glob("*_TOKEN", "GH_TOKEN") && glob("A*B*C", "AxxBxxC")
        );
        assert!(!glob("AWS_*", "MY_AWS_KEY") && !glob("*_TOKEN", "GH_TOKENS") && !glob("A*A", "A"));
        assert!(glob("EXACT", "EXACT") && !glob("EXACT", "EXACTLY"));
    }

    #[test]
    fn what_the_caller_sets_on_the_command_still_reaches_the_child() {
        let p = policy(&[], &[]);
        let mut cmd = std::process::Command::new("true");
        cmd.env("GITHUB_TOKEN", "from-settings");
        p.apply(&mut cmd);
        let set: Vec<_> = cmd.get_envs().collect();
        assert!(
            set.iter().any(|(k, v)| *k == "GITHUB_TOKEN" && v.is_some()),
            "{set:?}"
        );
    }
}
