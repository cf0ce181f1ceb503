//! One cloud speech service under all four HTTP providers: the OpenAI-compatible API
//! and ElevenLabs, each for recognition (stt) and for synthesis (tts). What differs
//! between the four is only the path and the body of their one request; everything
//! around it is the same logic and lives here once: where the service is (`*.base_url`
//! or the API's own), whose key it takes (`*.api_key_env`) and whether its own host
//! refuses to run without one, how the key is sent (`Authorization: Bearer` or
//! `xi-api-key`), where `kotoba doctor` asks ([`Probe`]), the upload of a transcription
//! and its `{"text"}` reply, and a synthesis reply's status and streamed bytes.

use futures::stream::BoxStream;
use futures::StreamExt;
use reqwest::multipart::{Form, Part};

use super::{
    api_key, elevenlabs_root, failed, http_client, http_failed, on_host, or_default, send_failed,
    Probe, Task, ELEVENLABS_BASE, OPENAI_BASE, RATE, REQUEST_TIMEOUT,
};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, Secret};

/// Which cloud API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// An OpenAI-compatible server (OpenAI, Groq, a local Whisper or Kokoro server):
    /// the key as a bearer token; OpenAI's own host needs one, a local server may not.
    OpenAi,
    /// ElevenLabs: the key in `xi-api-key`; its own host needs one.
    ElevenLabs,
}

impl Api {
    /// The provider's name, as `stt.provider` / `tts.provider` spell it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::ElevenLabs => "elevenlabs",
        }
    }

    /// The API's own host, where a key is required.
    fn own_host(self) -> &'static str {
        match self {
            Api::OpenAi => "api.openai.com",
            Api::ElevenLabs => "api.elevenlabs.io",
        }
    }

    /// The base a setting names (or the API's own): an OpenAI-compatible base without
    /// its trailing `/`, ElevenLabs' root without `/v1`.
    fn base(self, setting: &str) -> String {
        match self {
            Api::OpenAi => or_default(setting, OPENAI_BASE)
                .trim_end_matches('/')
                .to_string(),
            Api::ElevenLabs => elevenlabs_root(&or_default(setting, ELEVENLABS_BASE)),
        }
    }

    /// `request` carrying `key` the way this API takes it (nothing without a key).
    pub(crate) fn authorize(
        self,
        request: reqwest::RequestBuilder,
        key: Option<&Secret>,
    ) -> reqwest::RequestBuilder {
        match (key, self) {
            (None, _) => request,
            (Some(k), Api::OpenAi) => request.bearer_auth(&k.0),
            (Some(k), Api::ElevenLabs) => request.header("xi-api-key", &k.0),
        }
    }
}

/// One provider's service: its API, the direction it works in, its base and its key.
#[derive(Debug)]
pub(crate) struct Service {
    api: Api,
    task: Task,
    http: reqwest::Client,
    base: String,
    key: Option<Secret>,
    /// Where the doctor asks whether the server answers.
    probe: Probe,
}

impl Service {
    /// Set up from a direction's settings: `base_url` and `key_env` as written (empty:
    /// the API's own base, and `default_key_env`). The API's own host without a key is
    /// refused in one sentence naming the variable to set.
    pub(crate) fn new(
        config: &Config,
        api: Api,
        task: Task,
        base_url: &str,
        key_env: &str,
        default_key_env: &str,
    ) -> Result<Service, SpeechError> {
        let base = api.base(base_url);
        let key_env = or_default(key_env, default_key_env);
        let key = api_key(config, &key_env);
        if key.is_none() && on_host(&base, api.own_host()) {
            let prefix = task.setting_prefix();
            let elsewhere = match api {
                Api::OpenAi => format!(", or point {prefix}.base_url at a local server"),
                Api::ElevenLabs => String::new(),
            };
            return Err(SpeechError::new(format!(
                "{} ({}) needs an API key: set {key_env} ({prefix}.api_key_env names the variable){elsewhere}.",
                task.label(),
                api.name()
            )));
        }
        Ok(Service {
            api,
            task,
            http: http_client(),
            probe: Probe::new(task, api, &base, key.clone(), &key_env),
            base,
            key,
        })
    }

    /// The base requests are made under (see [`Api`]).
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// The key, when one is set.
    pub(crate) fn key(&self) -> Option<&Secret> {
        self.key.as_ref()
    }

    /// Where the doctor asks whether the server answers.
    pub(crate) fn probe(&self) -> &Probe {
        &self.probe
    }

    /// A `POST` to `url` carrying the key.
    pub(crate) fn post(&self, url: &str) -> reqwest::RequestBuilder {
        self.api.authorize(self.http.post(url), self.key())
    }

    /// Upload `pcm` (16 kHz mono) to `url` as the `file` part (`audio.wav`) of a form
    /// with `fields` (an empty one is left out), and read the `text` of the JSON reply;
    /// any failure is one sentence naming the provider, never the key.
    pub(crate) async fn transcribe(
        &self,
        url: &str,
        pcm: &[i16],
        fields: &[(&'static str, &str)],
    ) -> Result<String, SpeechError> {
        let (name, key) = (self.api.name(), self.key());
        let audio = Part::bytes(crate::speech::wav::encode(pcm, RATE))
            .file_name("audio.wav")
            .mime_str("audio/wav")
            .map_err(|e| failed(self.task, name, &e.to_string(), key))?;
        let mut form = Form::new().part("file", audio);
        for (field, value) in fields.iter().filter(|(_, v)| !v.is_empty()) {
            form = form.text(*field, value.to_string());
        }
        let reply = self
            .post(url)
            .multipart(form)
            .timeout(REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(|e| send_failed(self.task, name, url, &e, key))?;
        let status = reply.status();
        let body = reply
            .text()
            .await
            .map_err(|e| send_failed(self.task, name, url, &e, key))?;
        if !status.is_success() {
            return Err(http_failed(self.task, name, status, &body, key));
        }
        text_of(&body)
            .ok_or_else(|| failed(self.task, name, "the reply had no \"text\" field", key))
    }

    /// Send a synthesis `request` (to `url`) and hand back its reply once it answered
    /// 2xx; a request that fails, times out or is refused is one sentence naming the
    /// provider, never the key.
    pub(crate) async fn speech(
        &self,
        request: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<reqwest::Response, SpeechError> {
        let (name, key) = (self.api.name(), self.key());
        let reply = match tokio::time::timeout(REQUEST_TIMEOUT, request.send()).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(send_failed(self.task, name, url, &e, key)),
            Err(_) => {
                let why = format!(
                    "no answer from {url} within {} s",
                    REQUEST_TIMEOUT.as_secs()
                );
                return Err(failed(self.task, name, &why, key));
            }
        };
        let status = reply.status();
        if !status.is_success() {
            let body = tokio::time::timeout(REQUEST_TIMEOUT, reply.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(http_failed(self.task, name, status, &body, key));
        }
        Ok(reply)
    }

    /// The body of a synthesis reply from `url`, as byte chunks; a chunk that breaks
    /// off is one sentence naming the provider.
    pub(crate) fn audio(
        &self,
        reply: reqwest::Response,
        url: &str,
    ) -> BoxStream<'static, Result<Vec<u8>, SpeechError>> {
        let (task, name, url) = (self.task, self.api.name(), url.to_string());
        reply
            .bytes_stream()
            .map(move |chunk| {
                chunk
                    .map(|b| b.to_vec())
                    .map_err(|e| send_failed(task, name, &url, &e, None))
            })
            .boxed()
    }
}

/// The `text` of a `{"text": ...}` reply, trimmed.
fn text_of(body: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()?
        .get("text")?
        .as_str()
        .map(|t| t.trim().to_string())
}
