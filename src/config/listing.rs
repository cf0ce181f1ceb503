//! The settings listing the page's Settings panel (`GET /api/settings`) and `kotoba chat
//! --settings` show: every live settings.yaml key with its value, the four work caps
//! apart under "Advanced (work)" (docs/surfaces.md). The companion caps are read from
//! the environment only and are not settings, so they are in neither.

use serde::Serialize;

use super::settings::{ApiStyle, Settings, SttProvider, TtsProvider, VoiceMode, KEYS};

/// The work caps, shown under "Advanced (work)".
pub const WORK_KEYS: &[&str] = &[
    "work_max_iter",
    "work_max_tool_calls",
    "work_fail_limit",
    "work_timeout",
];

/// The keys whose value is a structure edited in settings.yaml, listed by name only.
const READ_ONLY_KEYS: &[&str] = &["mcp_servers", "mcp_catalogue"];

/// The keys whose value is never shown.
const SECRET_KEYS: &[&str] = &["web_password"];

/// Which part of the listing a key is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Everything but the work caps.
    General,
    /// The work caps: "Advanced (work)".
    Work,
}

impl Group {
    /// The heading a person reads.
    pub fn title(self) -> &'static str {
        match self {
            Group::General => "Settings",
            Group::Work => "Advanced (work)",
        }
    }
}

/// One key of the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// The settings.yaml key.
    pub key: &'static str,
    /// Its live value as text a save accepts back (lists as `[a, b]`); a secret's is
    /// empty.
    pub value: String,
    /// Its group.
    pub group: Group,
    /// A secret: the value is hidden; `set` says whether there is one.
    pub secret: bool,
    /// Whether a secret is set (false for the others).
    pub set: bool,
    /// Shown, but edited in settings.yaml (a structure), not from the panel.
    pub read_only: bool,
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|i| serde_json::to_string(i).unwrap_or_default())
        .collect();
    format!("[{}]", quoted.join(", "))
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

/// The value of `key` in `s` as text.
fn value_of(s: &Settings, key: &str) -> String {
    let v = &s.voice;
    match key {
        "model" => s.model.clone(),
        "base_url" => s.base_url.clone(),
        "api" => match s.api {
            ApiStyle::Responses => "responses",
            ApiStyle::Chat => "chat",
        }
        .into(),
        "api_key_env" => s.api_key_env.clone(),
        "reasoning_effort" => s.reasoning_effort.clone(),
        "voice_mode" => match s.voice_mode {
            VoiceMode::Local => "local",
            VoiceMode::Agent => "agent",
        }
        .into(),
        "work_max_iter" => s.work_max_iter.to_string(),
        "work_max_tool_calls" => s.work_max_tool_calls.to_string(),
        "work_fail_limit" => s.work_fail_limit.to_string(),
        "work_timeout" => s.work_timeout.to_string(),
        "disabled_toolsets" => list(&s.disabled_toolsets),
        "workspace" => s
            .workspace
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        "owners" => list(&s.owners),
        "allowlist" => list(&s.allowlist),
        "force_ask" => s.force_ask.to_string(),
        "web_search_url" => opt(&s.web_search_url),
        "mcp_servers" => list(
            &s.mcp_servers
                .iter()
                .map(|m| m.name.clone())
                .collect::<Vec<_>>(),
        ),
        "mcp_catalogue" => list(
            &s.mcp_catalogue
                .iter()
                .map(|m| m.server.name.clone())
                .collect::<Vec<_>>(),
        ),
        "discord.api_base" => opt(&s.discord_api_base),
        "web_addr" => s.web_addr.clone(),
        "stt.provider" => match v.stt_provider {
            SttProvider::OpenAi => "openai",
            SttProvider::ElevenLabs => "elevenlabs",
            SttProvider::Local => "local",
        }
        .into(),
        "stt.base_url" => v.stt_base_url.clone(),
        "stt.model" => v.stt_model.clone(),
        "stt.api_key_env" => v.stt_api_key_env.clone(),
        "stt.language" => v.stt_language.clone(),
        "stt.python" => v.stt_python.clone(),
        "tts.provider" => match v.tts_provider {
            TtsProvider::OpenAi => "openai",
            TtsProvider::ElevenLabs => "elevenlabs",
            TtsProvider::Espeak => "espeak",
        }
        .into(),
        "tts.base_url" => v.tts_base_url.clone(),
        "tts.model" => v.tts_model.clone(),
        "tts.voice" => v.tts_voice.clone(),
        "tts.api_key_env" => v.tts_api_key_env.clone(),
        "voice.silence_commit" => v.silence_commit.to_string(),
        "voice.unsure_commit" => v.unsure_commit.to_string(),
        "voice.min_speech" => v.min_speech.to_string(),
        "voice.aliases" => list(&v.aliases),
        "voice.idle_leave" => v.idle_leave.to_string(),
        _ => String::new(),
    }
}

/// Every settings.yaml key with its live value, in the order of [`KEYS`].
pub fn listing(s: &Settings) -> Vec<Listed> {
    KEYS.iter()
        .map(|&key| {
            let secret = SECRET_KEYS.contains(&key);
            Listed {
                key,
                value: if secret {
                    String::new()
                } else {
                    value_of(s, key)
                },
                group: if WORK_KEYS.contains(&key) {
                    Group::Work
                } else {
                    Group::General
                },
                secret,
                set: secret && s.web_password.is_some(),
                read_only: READ_ONLY_KEYS.contains(&key),
            }
        })
        .collect()
}

/// The listing as lines a person reads: the general keys, then "Advanced (work)".
pub fn lines(listed: &[Listed]) -> Vec<String> {
    let mut out = Vec::new();
    for group in [Group::General, Group::Work] {
        out.push(format!("{}:", group.title()));
        for l in listed.iter().filter(|l| l.group == group) {
            let value = match (l.secret, l.set) {
                (true, true) => "(set)".to_string(),
                (true, false) => "(not set)".to_string(),
                _ => l.value.clone(),
            };
            out.push(format!("  {}: {value}", l.key));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_holds_every_key_the_work_caps_apart_and_no_secret_or_companion_cap() {
        let s = Settings {
            web_password: Some(super::super::Secret("hunter2".into())),
            ..Settings::default()
        };
        let listed = listing(&s);
        assert_eq!(listed.len(), KEYS.len());
        let work: Vec<&str> = listed
            .iter()
            .filter(|l| l.group == Group::Work)
            .map(|l| l.key)
            .collect();
        assert_eq!(work, WORK_KEYS);
        let text = lines(&listed).join("\n");
        assert!(
            text.contains("Advanced (work):\n  work_max_iter: 40"),
            "{text}"
        );
        assert!(text.contains("web_password: (set)") && !text.contains("hunter2"));
        assert!(!text.contains("KOTOBA_MAX_TOOL_CALLS") && !text.contains("per_tool"));
    }
}
