//! settings.yaml on disk: reading it live (re-read when it changed; each key of the
//! table validated on its own, a bad value keeping its last good one and naming the
//! key; a nested section read as its dotted keys) and writing one checked key in place,
//! keeping the file's comments.

use std::path::Path;
use std::time::SystemTime;

use serde_yaml_ng::{Mapping, Value};

use super::keys::{self, KEYS};
use super::settings::{SettingError, Settings};
use super::ValueError;

/// A nested section (`stt: {provider: local}`) read as its dotted keys
/// (`stt.provider: local`); a dotted key written flat wins over the nested one.
fn flatten_sections(map: &mut Mapping) {
    for section in keys::sections() {
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
    /// The file's modification time and length at the last read: unchanged, no re-read.
    stamp: Option<(SystemTime, u64)>,
    /// Whether the file was read at all yet.
    read_once: bool,
    /// The keys saved for every process in the shared store (each wins over the file's).
    shared: Mapping,
    /// `shared` changed since the last read: read again even if the file did not.
    shared_changed: bool,
    /// The settings as last read, each bad key at its last good value.
    pub(super) current: Settings,
    /// What the last read found wrong, one sentence per key.
    pub(super) warnings: Vec<String>,
}

impl LiveState {
    /// Re-read the file if it changed since the last read.
    pub(super) fn refresh(&mut self, path: &Path) {
        let stamp = std::fs::metadata(path)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        if self.read_once && stamp == self.stamp && !self.shared_changed {
            return;
        }
        self.read_once = true;
        self.stamp = stamp;
        self.shared_changed = false;
        self.warnings.clear();
        // No file: defaults (a deleted file returns to defaults), under the shared keys.
        let text = match stamp.map(|_| std::fs::read_to_string(path)) {
            None => String::new(),
            Some(Ok(t)) => t,
            Some(Err(e)) => {
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
        for (k, v) in &self.shared {
            map.insert(k.clone(), v.clone());
        }
        let mut next = Settings::default();
        for key in KEYS {
            let Some(v) = map.get(key.name) else {
                continue;
            };
            match (key.apply)(&mut next, v) {
                Ok(skipped) => {
                    for w in skipped {
                        self.warn(w);
                    }
                }
                Err(reason) => {
                    let name = key.name;
                    // A secret's bad value is never repeated (a log, the page).
                    let reason = if key.shown == keys::Shown::Secret {
                        ValueError::Hidden
                    } else {
                        reason
                    };
                    match keys::safe_side(name, &mut next, &reason.to_string()) {
                        Some(fell) => self.warn(format!("setting '{name}': {reason}; {fell}")),
                        None => {
                            // Keep the last good value of this key.
                            (key.keep)(&mut next, &self.current);
                            self.warn(format!(
                                "setting '{name}': {reason}; keeping {name} as it was"
                            ));
                        }
                    }
                }
            }
        }
        for k in map.keys() {
            if let Some(k) = k.as_str() {
                if keys::find(k).is_none() {
                    self.warn(format!("setting '{k}' is not a setting; ignored"));
                }
            }
        }
        self.current = next;
    }

    /// The keys saved for every process, as the shared store holds them now (YAML
    /// text each); read again at the next use when they changed.
    pub(super) fn set_shared(&mut self, keys: &[(String, String)]) {
        let mut shared = Mapping::new();
        for (k, v) in keys {
            shared.insert(Value::String(k.clone()), yaml_value(v));
        }
        if shared != self.shared {
            self.shared = shared;
            self.shared_changed = true;
        }
    }

    /// One key saved for every process here, before the store is read again.
    pub(super) fn set_shared_key(&mut self, key: &str, value: &str) {
        self.shared
            .insert(Value::String(key.to_string()), yaml_value(value));
        self.shared_changed = true;
    }

    fn warn(&mut self, w: String) {
        tracing::warn!("{w}");
        self.warnings.push(w);
    }
}

/// YAML text as its value; text that is not YAML is a string.
fn yaml_value(text: &str) -> Value {
    serde_yaml_ng::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Validate `value` (YAML text) for `key`, writing nothing; the value as YAML.
pub(super) fn check_key(key: &str, value: &str) -> Result<Value, SettingError> {
    let Some(k) = keys::find(key) else {
        return Err(SettingError::UnknownKey(key.to_string()));
    };
    let v = yaml_value(value);
    let mut probe = Settings::default();
    (k.apply)(&mut probe, &v).map_err(|reason| SettingError::BadValue {
        key: key.to_string(),
        reason,
    })?;
    Ok(v)
}

/// Validate `value` (YAML text) for `key` and write it into the file at `path`, in
/// place: the rest of the file — comments, order, other keys — stays as written
/// (`edit.rs`). Should the edited text not read back as the value (a file laid out
/// in a way the in-place edit does not know), the file is written whole instead.
pub(super) fn write_key(path: &Path, key: &str, value: &str) -> Result<(), SettingError> {
    let v = check_key(key, value)?;
    let io = |e: String| SettingError::Io {
        path: path.display().to_string(),
        reason: e,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e.to_string())),
    };
    let mut map: Mapping = serde_yaml_ng::from_str::<Option<Mapping>>(&text)
        .map_err(|e| io(e.to_string()))?
        .unwrap_or_default();
    let one_line = serde_json::to_value(&v)
        .and_then(|j| serde_json::to_string(&j))
        .map_err(|e| io(e.to_string()))?;
    let edited = super::edit::set_key(&text, key, &one_line);
    let reads_back = serde_yaml_ng::from_str::<Option<Mapping>>(&edited)
        .ok()
        .flatten()
        .is_some_and(|mut m| {
            flatten_sections(&mut m);
            m.get(key) == Some(&v)
        });
    let out = if reads_back {
        edited
    } else {
        map.insert(Value::String(key.to_string()), v);
        serde_yaml_ng::to_string(&map).map_err(|e| io(e.to_string()))?
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
    }
    let tmp = path.with_extension("yaml.tmp");
    std::fs::write(&tmp, out).map_err(|e| io(e.to_string()))?;
    std::fs::rename(&tmp, path).map_err(|e| io(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ApiStyle, SttProvider, TtsProvider};

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
    fn a_bad_owner_id_names_the_key_and_leaves_no_owner_from_the_setting_or_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.yaml");
        write(&settings, "owners: [\"12\", \"<@14>\"]\n");
        let good = [("KOTOBA_DISCORD_OWNER_IDS", "11 <@13>, 12")];
        let config = crate::config::Config::for_home(dir.path(), &good);
        assert_eq!(config.owners(), [12, 14, 11, 13], "each once, as u64");
        assert!(config.settings_warnings().is_empty());
        // A bad id in the variable adds none of its ids; the setting's still stand.
        let bad = [("KOTOBA_DISCORD_OWNER_IDS", "11, gus")];
        let config = crate::config::Config::for_home(dir.path(), &bad);
        assert_eq!(config.owners(), [12, 14]);
        assert_eq!(
            config.settings_warnings(),
            ["KOTOBA_DISCORD_OWNER_IDS: must be Discord user ids (123 or <@123>), got \"gus\"; it adds no owner until it is fixed"]
        );
        // A bad id in the setting falls to the safe side: no owner from it at all.
        write(&settings, "owners: [\"12\", \"gus\"]\n# changed\n");
        let config = crate::config::Config::for_home(dir.path(), &good);
        assert_eq!(config.owners(), [11, 13, 12], "the variable's alone");
        assert_eq!(
            config.settings_warnings(),
            ["setting 'owners': must be Discord user ids (123 or <@123>), got \"gus\"; no owner answers host cards from Discord until it is fixed"]
        );
        assert_eq!(
            config
                .listing()
                .iter()
                .find(|l| l.key == "owners")
                .map(|l| l.warning.is_some()),
            Some(true)
        );
    }

    #[test]
    fn a_bad_value_of_a_key_that_protects_the_owner_falls_to_the_safe_side() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        let mut live = LiveState::default();
        write(&path, "force_ask: false\nowners: [\"1\"]\nallowlist: [\"make\"]\nbase_url: http://127.0.0.1:11434/v1\n");
        live.refresh(&path);
        assert!(!live.current.force_ask);
        assert_eq!(live.current.base_url_refused, None);
        write(
            &path,
            "force_ask: perhaps\nowners: {a: 1}\nallowlist: {b: 2}\nbase_url: localhost:11434\nweb_password: {c: 3}\n",
        );
        live.refresh(&path);
        let lock = live
            .current
            .web_password
            .clone()
            .expect("a bad web_password locks the page");
        assert!(lock.0.len() >= 32, "a password no one can guess");
        assert_ne!(lock.0, "{c: 3}");
        assert!(
            !live.warnings.iter().any(|w| w.contains("c: 3")),
            "a secret's bad value is never repeated: {:?}",
            live.warnings
        );
        assert!(live.current.force_ask, "a bad force_ask asks");
        assert!(
            live.current.owners.is_empty(),
            "a bad owners list names no owner"
        );
        assert!(
            live.current.allowlist.is_empty(),
            "a bad allowlist lets nothing through"
        );
        assert!(
            live.current
                .base_url_refused
                .as_deref()
                .is_some_and(|w| w.contains("base_url")),
            "a bad base_url calls no model: {:?}",
            live.current.base_url_refused
        );
        for key in [
            "force_ask",
            "owners",
            "allowlist",
            "base_url",
            "web_password",
        ] {
            assert!(
                live.warnings.iter().any(|w| w.contains(key)),
                "{key}: {:?}",
                live.warnings
            );
        }
        // Any other key keeps its last good value.
        write(&path, "work_max_iter: 12\n");
        live.refresh(&path);
        write(&path, "work_max_iter: many\n# pad\n");
        live.refresh(&path);
        assert_eq!(live.current.work_max_iter, 12);
        assert_eq!(live.current.base_url_refused, None, "fixed: called again");
    }

    #[test]
    fn a_malformed_model_address_in_the_environment_calls_no_model_at_all() {
        let mut s = Settings::default();
        s.apply_env(|name| (name == "KOTOBA_LLM_BASE_URL").then_some("localhost:11434/v1"));
        assert_eq!(s.base_url, "https://api.openai.com/v1");
        let why = s.base_url_refused.expect("refused");
        assert!(why.contains("KOTOBA_LLM_BASE_URL"), "{why}");
    }

    #[test]
    fn yaml_1_1_booleans_read_as_booleans_so_force_ask_yes_asks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        let mut live = LiveState::default();
        for (word, on) in [
            ("yes", true),
            ("off", false),
            ("On", true),
            ("n", false),
            ("true", true),
        ] {
            write(&path, &format!("force_ask: {word}\n# {word}\n"));
            live.refresh(&path);
            assert_eq!(live.current.force_ask, on, "force_ask: {word}");
            assert!(live.warnings.is_empty(), "{word}: {:?}", live.warnings);
        }
        write(&path, "force_ask: perhaps\n");
        live.refresh(&path);
        assert!(
            live.current.force_ask,
            "a bad value keeps the last good one"
        );
        assert!(live.warnings.iter().any(|w| w.contains("force_ask")));
    }

    #[test]
    fn context_keys_read_nested_and_a_bad_window_or_fraction_keeps_the_last_good_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.yaml");
        let mut live = LiveState::default();
        assert_eq!(
            live.current.context_window, None,
            "the model's own by default"
        );
        write(&path, "context:\n  window: 8000\n  compact_at: 0.5\n");
        live.refresh(&path);
        assert_eq!(live.current.context_window, Some(8000));
        assert_eq!(live.current.context_compact_at, 0.5);
        write(&path, "context:\n  window: 10\n  compact_at: 2\n# pad\n");
        live.refresh(&path);
        assert_eq!(live.current.context_window, Some(8000), "last good kept");
        assert_eq!(live.current.context_compact_at, 0.5, "last good kept");
        for key in ["context.window", "context.compact_at"] {
            assert!(
                live.warnings.iter().any(|w| w.contains(key)),
                "{key}: {:?}",
                live.warnings
            );
        }
        write(&path, "context.window: ''\n");
        live.refresh(&path);
        assert_eq!(live.current.context_window, None, "empty: the model's own");
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
}
