//! Whether a speech provider's server answers and takes the key, for `kotoba doctor`:
//! one `GET` of its model list (`{base}/models` on an OpenAI-compatible server,
//! `{root}/v1/models` on ElevenLabs), the key sent as the provider takes it.

use std::time::Duration;

use super::{failed, send_failed, server_message, Task};
use crate::speech::SpeechError;
use kotoba_core::config::Secret;

/// How long the doctor waits for a provider's server.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(8);

/// How a provider takes its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyHeader {
    /// `Authorization: Bearer …` (OpenAI-compatible servers).
    Bearer,
    /// `xi-api-key: …` (ElevenLabs).
    XiApiKey,
}

/// Where and how to ask one provider whether it answers.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Hearing or speaking, for the sentence.
    task: Task,
    /// The provider's name, for the sentence.
    provider: &'static str,
    /// The model list's URL.
    url: String,
    /// How the key is sent.
    header: KeyHeader,
    /// The key, when one is set (a local server may need none).
    key: Option<Secret>,
    /// The variable the key is read from, named when the key is refused.
    key_env: String,
}

impl Probe {
    /// An OpenAI-compatible server at `base` (ending in `/v1` or wherever its API is).
    pub(crate) fn openai(task: Task, base: &str, key: Option<Secret>, key_env: &str) -> Probe {
        Probe {
            task,
            provider: "openai",
            url: format!("{}/models", base.trim_end_matches('/')),
            header: KeyHeader::Bearer,
            key,
            key_env: key_env.to_string(),
        }
    }

    /// ElevenLabs at `root` (without `/v1`).
    pub(crate) fn elevenlabs(task: Task, root: &str, key: Option<Secret>, key_env: &str) -> Probe {
        Probe {
            task,
            provider: "elevenlabs",
            url: format!("{}/v1/models", root.trim_end_matches('/')),
            header: KeyHeader::XiApiKey,
            key,
            key_env: key_env.to_string(),
        }
    }

    /// The model list's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Ask. Any HTTP reply but 401 and 403 counts as reached (a local server may serve
    /// no model list); a refused key names its variable; no reply within
    /// [`REACH_TIMEOUT`] is not reached. The sentence never holds the key.
    pub async fn reach(&self) -> Result<(), SpeechError> {
        let mut request = super::http_client().get(&self.url).timeout(REACH_TIMEOUT);
        if let Some(k) = &self.key {
            request = match self.header {
                KeyHeader::Bearer => request.bearer_auth(&k.0),
                KeyHeader::XiApiKey => request.header("xi-api-key", &k.0),
            };
        }
        let key = self.key.as_ref();
        let reply = request
            .send()
            .await
            .map_err(|e| send_failed(self.task, self.provider, &self.url, &e, key))?;
        let status = reply.status();
        if status != reqwest::StatusCode::UNAUTHORIZED && status != reqwest::StatusCode::FORBIDDEN {
            return Ok(());
        }
        let body = reply.text().await.unwrap_or_default();
        let said = match server_message(&body) {
            Some(m) => format!("HTTP {} — {}", status.as_u16(), m.trim_end_matches('.')),
            None => format!("HTTP {}", status.as_u16()),
        };
        let fix = if self.key.is_some() {
            format!("its server refused the key in {}: check it", self.key_env)
        } else {
            format!("its server wants a key: set {}", self.key_env)
        };
        Err(failed(
            self.task,
            self.provider,
            &format!("{said}; {fix}"),
            key,
        ))
    }
}
