//! Speech recognition providers (`stt.provider`): an OpenAI-compatible transcription
//! endpoint (and OpenAI's realtime transcription, streamed, `stt.streaming`),
//! ElevenLabs, and faster-whisper in a local Python worker. Also the HTTP
//! pieces both directions share: the key lookup, the client, the cloud service under
//! every HTTP provider ([`cloud`]), and the one-sentence failure that names the
//! provider and never the key.

pub(crate) mod cloud;
mod elevenlabs;
mod local;
mod openai;
mod probe;
mod realtime;
mod stream;

use std::sync::Arc;
use std::time::Duration;

pub use elevenlabs::ElevenLabsRecognizer;
pub use local::LocalRecognizer;
pub use openai::OpenAiRecognizer;
pub use probe::{Probe, REACH_TIMEOUT};
pub(crate) use realtime::{open_socket, Socket as RealtimeSocket};
pub use realtime::{
    REALTIME_RATE, REPLY_TIMEOUT as STREAM_REPLY_TIMEOUT, REST_AFTER_FAILURE as STREAM_REST,
};
pub use stream::RecognitionStream;
#[cfg(test)]
pub(crate) use stream::{refuse, Command};

use super::SpeechError;
use kotoba_core::config::{Config, Secret, SttProvider, SttStreaming, VoiceSettings};

/// Turns speech into text.
#[async_trait::async_trait]
pub trait Recognizer: Send + Sync {
    /// The provider's name: "openai", "elevenlabs" or "local".
    fn name(&self) -> &'static str;

    /// The words in `pcm` (16 kHz mono i16), trimmed; empty when nothing was said.
    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError>;

    /// Where `kotoba doctor` asks whether the provider's server answers; `None`: it
    /// runs on this machine.
    fn probe(&self) -> Option<&Probe> {
        None
    }

    /// A stream for one utterance, heard as it is spoken, where the provider offers
    /// streaming (and `stt.streaming` allows it); `None`: only [`Recognizer::transcribe`].
    fn stream(&self) -> Option<RecognitionStream> {
        None
    }
}

/// `stt.provider`'s name as the settings spell it.
pub fn provider_name(p: SttProvider) -> &'static str {
    match p {
        SttProvider::OpenAi => "openai",
        SttProvider::ElevenLabs => "elevenlabs",
        SttProvider::Local => "local",
    }
}

/// Whether these settings stream recognition (`stt.streaming`): only `openai` has a
/// stream; `auto` uses it on OpenAI's own host, `on` at any base.
pub fn streams(s: &VoiceSettings) -> bool {
    let base = or_default(&s.stt_base_url, OPENAI_BASE);
    s.stt_provider == SttProvider::OpenAi
        && match s.stt_streaming {
            SttStreaming::On => true,
            SttStreaming::Off => false,
            SttStreaming::Auto => on_host(base.trim_end_matches('/'), "api.openai.com"),
        }
}

/// The recognizer `stt.provider` names, set up from the live settings. A missing key
/// for a provider's own cloud service is refused here, in one sentence.
pub fn recognizer(config: &Config) -> Result<Arc<dyn Recognizer>, SpeechError> {
    let s = config.settings().voice;
    Ok(match s.stt_provider {
        SttProvider::OpenAi => Arc::new(OpenAiRecognizer::new(config, &s)?),
        SttProvider::ElevenLabs => Arc::new(ElevenLabsRecognizer::new(config, &s)?),
        SttProvider::Local => Arc::new(LocalRecognizer::new(config, &s)),
    })
}

/// How long one provider request may take (recognition), or wait for its next bytes
/// (synthesis).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The rate recognition hears.
pub(crate) const RATE: u32 = 16_000;

/// OpenAI's API base, where a key is required.
pub(crate) const OPENAI_BASE: &str = "https://api.openai.com/v1";
/// ElevenLabs' API base, where a key is required.
pub(crate) const ELEVENLABS_BASE: &str = "https://api.elevenlabs.io";

/// The key in the env variable `name`: the value Kotoba started with, else the process
/// environment now. Blank counts as missing.
pub(crate) fn api_key(config: &Config, name: &str) -> Option<Secret> {
    config
        .env(name)
        .map(str::to_string)
        .or_else(|| std::env::var(name).ok())
        .filter(|k| !k.trim().is_empty())
        .map(|k| Secret(k.trim().to_string()))
}

/// `setting`, or `default` when it is empty.
pub(crate) fn or_default(setting: &str, default: &str) -> String {
    let t = setting.trim();
    if t.is_empty() {
        default.to_string()
    } else {
        t.to_string()
    }
}

/// `base` (trailing slash trimmed) is on `host`, a provider's own cloud service.
pub(crate) fn on_host(base: &str, host: &str) -> bool {
    reqwest::Url::parse(base)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.eq_ignore_ascii_case(host)))
        .unwrap_or(false)
}

/// ElevenLabs' base without a trailing `/v1` (both spellings are accepted).
pub(crate) fn elevenlabs_root(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b).to_string()
}

/// The HTTP client speech providers share (no overall timeout: callers set theirs).
pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "speech HTTP client builder failed; using the default");
            reqwest::Client::new()
        })
}

/// Which way a provider was working, for the failure sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Task {
    /// Speech to text.
    Recognition,
    /// Text to speech.
    Synthesis,
}

impl Task {
    fn label(self) -> &'static str {
        match self {
            Task::Recognition => "Speech recognition",
            Task::Synthesis => "Speech synthesis",
        }
    }

    /// The settings' prefix of this direction's provider keys.
    fn setting_prefix(self) -> &'static str {
        match self {
            Task::Recognition => "stt",
            Task::Synthesis => "tts",
        }
    }
}

/// "Speech recognition (openai) failed: {reason}." — one line, one sentence, with the
/// key (and anything shaped like an OpenAI key) hidden.
pub(crate) fn failed(
    task: Task,
    provider: &str,
    reason: &str,
    key: Option<&Secret>,
) -> SpeechError {
    let reason = redact(&one_line(reason), key);
    let mut s = format!("{} ({provider}) failed: {reason}", task.label());
    if !s.ends_with(['.', '!', '?']) {
        s.push('.');
    }
    SpeechError::new(s)
}

/// A non-success HTTP reply as one sentence: the status and the server's message.
pub(crate) fn http_failed(
    task: Task,
    provider: &str,
    status: reqwest::StatusCode,
    body: &str,
    key: Option<&Secret>,
) -> SpeechError {
    let reason = match server_message(body) {
        Some(m) => format!("HTTP {} — {m}", status.as_u16()),
        None => format!(
            "HTTP {} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )
        .trim()
        .to_string(),
    };
    failed(task, provider, &reason, key)
}

/// A request that got no HTTP reply (refused, timed out, cut off) as one sentence.
pub(crate) fn send_failed(
    task: Task,
    provider: &str,
    url: &str,
    e: &reqwest::Error,
    key: Option<&Secret>,
) -> SpeechError {
    let reason = if e.is_timeout() {
        format!(
            "no answer from {url} within {} s",
            REQUEST_TIMEOUT.as_secs()
        )
    } else {
        // The innermost cause says what went wrong ("Connection refused"); reqwest's
        // own text only repeats the URL.
        let mut cause = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            cause = s.to_string();
            source = s.source();
        }
        if e.is_connect() {
            format!("could not connect to {url} ({cause})")
        } else {
            format!("the request to {url} broke off ({cause})")
        }
    };
    failed(task, provider, &reason, key)
}

/// The human part of an error body: OpenAI's `{"error": {"message"}}`, ElevenLabs'
/// `{"detail": {"message"}}` or `{"detail": "..."}`, a bare `{"message"}`, or a short
/// plain-text body; only its first sentence.
pub(crate) fn server_message(body: &str) -> Option<String> {
    let body = body.trim();
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let pick = |v: &serde_json::Value| -> Option<String> {
                match v {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Object(_) => v
                        .get("message")
                        .and_then(|m| m.as_str())
                        .map(str::to_string),
                    _ => None,
                }
            };
            v.get("error")
                .and_then(pick)
                .or_else(|| v.get("detail").and_then(pick))
                .or_else(|| {
                    v.get("message")
                        .and_then(|m| m.as_str())
                        .map(str::to_string)
                })
        });
    let text = match from_json {
        Some(t) => t,
        None if body.is_empty() || body.starts_with(['{', '[', '<']) => return None,
        None => body.to_string(),
    };
    let text = one_line(&text);
    let first = match text.find(". ") {
        Some(i) => &text[..=i],
        None => text.as_str(),
    };
    let first = first.trim();
    if first.is_empty() {
        return None;
    }
    const MAX: usize = 240;
    if first.chars().count() > MAX {
        let cut: String = first.chars().take(MAX).collect();
        return Some(format!("{}…", cut.trim_end()));
    }
    Some(first.to_string())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Hide the key and any word shaped like an OpenAI key (`sk-…`, even masked); a hidden
/// word at the end is dropped with the colon before it.
pub(crate) fn redact(s: &str, key: Option<&Secret>) -> String {
    let key = key.map(|k| k.0.as_str()).filter(|k| k.len() >= 4);
    let words: Vec<&str> = s.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for w in &words {
        let bare = w.trim_start_matches(['(', '"', '\'']);
        let secret = bare.starts_with("sk-") || key.is_some_and(|k| w.contains(k));
        out.push(if secret {
            "***".into()
        } else {
            (*w).to_string()
        });
    }
    while out.last().is_some_and(|w| w == "***") {
        out.pop();
    }
    let mut joined = out.join(" ");
    if let Some(k) = key {
        joined = joined.replace(k, "***");
    }
    let trimmed = joined.trim_end().trim_end_matches(':').trim_end();
    trimmed.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_openai_error_body_gives_its_first_sentence_without_the_masked_key() {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-test-***-abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error"}}"#;
        let e = http_failed(
            Task::Recognition,
            "openai",
            reqwest::StatusCode::UNAUTHORIZED,
            body,
            None,
        );
        assert_eq!(
            e.0,
            "Speech recognition (openai) failed: HTTP 401 — Incorrect API key provided."
        );
    }

    #[test]
    fn the_key_never_appears_in_a_failure() {
        let key = Secret("very-secret-key-123".into());
        let e = failed(
            Task::Synthesis,
            "elevenlabs",
            "HTTP 401 — key very-secret-key-123 is not valid",
            Some(&key),
        );
        assert!(!e.0.contains("very-secret-key-123"), "{e}");
        assert!(e
            .0
            .starts_with("Speech synthesis (elevenlabs) failed: HTTP 401"));
    }

    #[test]
    fn elevenlabs_detail_bodies_and_plain_text_are_read() {
        assert_eq!(
            server_message(
                r#"{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}"#
            )
            .as_deref(),
            Some("Invalid API key")
        );
        assert_eq!(
            server_message(r#"{"detail":"Not Found"}"#).as_deref(),
            Some("Not Found")
        );
        assert_eq!(
            server_message("model not loaded\n").as_deref(),
            Some("model not loaded")
        );
        assert_eq!(server_message("<html>502</html>"), None);
    }

    #[test]
    fn a_status_without_a_message_gives_its_reason_phrase() {
        let e = http_failed(
            Task::Recognition,
            "openai",
            reqwest::StatusCode::BAD_GATEWAY,
            "",
            None,
        );
        assert_eq!(
            e.0,
            "Speech recognition (openai) failed: HTTP 502 Bad Gateway."
        );
    }

    #[test]
    fn a_providers_debug_output_hides_its_key() {
        let home = std::env::temp_dir();
        let config = Config::for_home(&home, &[("OPENAI_API_KEY", "sk-debug-secret-1")]);
        let s = kotoba_core::config::VoiceSettings::default();
        let r = OpenAiRecognizer::new(&config, &s).unwrap();
        let shown = format!("{r:?}");
        assert!(
            !shown.contains("sk-debug-secret-1") && shown.contains("***"),
            "{shown}"
        );
    }

    #[test]
    fn only_the_providers_own_hosts_need_a_key() {
        assert!(on_host(OPENAI_BASE, "api.openai.com"));
        assert!(!on_host("http://127.0.0.1:8000/v1", "api.openai.com"));
        assert_eq!(elevenlabs_root("https://x.test/v1/"), "https://x.test");
        assert_eq!(elevenlabs_root(ELEVENLABS_BASE), ELEVENLABS_BASE);
    }
}
