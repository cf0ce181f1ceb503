//! Whether a speech provider's server answers and takes the key, for `kotoba doctor`:
//! one `GET` of its model list (`{base}/models` on an OpenAI-compatible server,
//! `{root}/v1/models` on ElevenLabs), the key sent as the provider takes it.

use std::time::Duration;

use super::cloud::Api;
use super::{failed, send_failed, server_message, Task};
use crate::speech::SpeechError;
use kotoba_core::config::Secret;

/// How long the doctor waits for a provider's server.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(8);

/// Where and how to ask one provider whether it answers.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Hearing or speaking, for the sentence.
    task: Task,
    /// The provider's API: its name for the sentence, and how the key is sent.
    api: Api,
    /// The model list's URL.
    url: String,
    /// The key, when one is set (a local server may need none).
    key: Option<Secret>,
    /// The variable the key is read from, named when the key is refused.
    key_env: String,
}

impl Probe {
    /// The provider at `base` (an OpenAI-compatible base, or ElevenLabs' root without
    /// `/v1`): its model list, asked with `key` as the API takes it.
    pub(crate) fn new(
        task: Task,
        api: Api,
        base: &str,
        key: Option<Secret>,
        key_env: &str,
    ) -> Probe {
        let base = base.trim_end_matches('/');
        let url = match api {
            Api::OpenAi => format!("{base}/models"),
            Api::ElevenLabs => format!("{base}/v1/models"),
        };
        Probe {
            task,
            api,
            url,
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
        let key = self.key.as_ref();
        let request = super::http_client().get(&self.url).timeout(REACH_TIMEOUT);
        let request = self.api.authorize(request, key);
        let provider = self.api.name();
        let reply = request
            .send()
            .await
            .map_err(|e| send_failed(self.task, provider, &self.url, &e, key))?;
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
        Err(failed(self.task, provider, &format!("{said}; {fix}"), key))
    }
}
