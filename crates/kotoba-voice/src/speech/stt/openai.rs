//! OpenAI-compatible recognition: `POST {base}/audio/transcriptions` with the audio as
//! a WAV upload (OpenAI, Groq, faster-whisper-server, whisper.cpp server, LocalAI);
//! with `stt.streaming`, each utterance is also streamed to `{base}/realtime`
//! ([`super::realtime`]) as it is heard.

use reqwest::multipart::Form;

use super::realtime::Realtime;
use super::{
    api_key, on_host, or_default, transcription, wav_part, Probe, RecognitionStream, Recognizer,
    Task, OPENAI_BASE,
};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, Secret, VoiceSettings};

/// The model used when `stt.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "gpt-4o-mini-transcribe";
/// The env variable read when `stt.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

const NAME: &str = "openai";

/// Recognition through an OpenAI-compatible transcription endpoint.
#[derive(Debug)]
pub struct OpenAiRecognizer {
    http: reqwest::Client,
    url: String,
    model: String,
    language: String,
    key: Option<Secret>,
    /// Where utterances are streamed, when they are.
    realtime: Option<Realtime>,
    /// Where the doctor asks whether the server answers.
    probe: Probe,
}

impl OpenAiRecognizer {
    /// Set up from the voice settings. OpenAI's own base needs a key; any other base
    /// (a local server) may run without one.
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<OpenAiRecognizer, SpeechError> {
        let base = or_default(&s.stt_base_url, OPENAI_BASE);
        let base = base.trim_end_matches('/');
        let key_env = or_default(&s.stt_api_key_env, DEFAULT_KEY_ENV);
        let key = api_key(config, &key_env);
        if key.is_none() && on_host(base, "api.openai.com") {
            return Err(SpeechError::new(format!(
                "Speech recognition (openai) needs an API key: set {key_env} (stt.api_key_env names the variable), or point stt.base_url at a local server."
            )));
        }
        let model = or_default(&s.stt_model, DEFAULT_MODEL);
        let language = s.stt_language.trim().to_string();
        let realtime = super::streams(s)
            .then(|| Realtime::new(base, &model, &language, key.clone()))
            .flatten();
        Ok(OpenAiRecognizer {
            http: super::http_client(),
            url: format!("{base}/audio/transcriptions"),
            model,
            language,
            probe: Probe::openai(Task::Recognition, base, key.clone(), &key_env),
            key,
            realtime,
        })
    }
}

#[async_trait::async_trait]
impl Recognizer for OpenAiRecognizer {
    fn name(&self) -> &'static str {
        NAME
    }

    fn probe(&self) -> Option<&Probe> {
        Some(&self.probe)
    }

    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError> {
        let key = self.key.as_ref();
        let audio = wav_part(pcm, NAME, key)?;
        let mut form = Form::new()
            .part("file", audio)
            .text("model", self.model.clone())
            .text("response_format", "json");
        if !self.language.is_empty() {
            form = form.text("language", self.language.clone());
        }
        let mut request = self.http.post(&self.url).multipart(form);
        if let Some(k) = key {
            request = request.bearer_auth(&k.0);
        }
        transcription(request, NAME, &self.url, key).await
    }

    fn stream(&self) -> Option<RecognitionStream> {
        self.realtime.as_ref().and_then(Realtime::open)
    }
}

/// The `text` of a `{"text": ...}` reply, trimmed.
pub(crate) fn text_of(body: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()?
        .get("text")?
        .as_str()
        .map(|t| t.trim().to_string())
}
