//! OpenAI-compatible recognition: `POST {base}/audio/transcriptions` with the audio as
//! a WAV upload (OpenAI, Groq, faster-whisper-server, whisper.cpp server, LocalAI; the
//! service itself: [`super::cloud`]); with `stt.streaming`, each utterance is also
//! streamed to `{base}/realtime` ([`super::realtime`]) as it is heard.

use super::cloud::{Api, Service};
use super::realtime::Realtime;
use super::{Probe, RecognitionStream, Recognizer, Task};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, VoiceSettings};

/// The model used when `stt.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "gpt-4o-mini-transcribe";
/// The env variable read when `stt.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// Recognition through an OpenAI-compatible transcription endpoint.
#[derive(Debug)]
pub struct OpenAiRecognizer {
    service: Service,
    url: String,
    model: String,
    language: String,
    /// Where utterances are streamed, when they are.
    realtime: Option<Realtime>,
}

impl OpenAiRecognizer {
    /// Set up from the voice settings. OpenAI's own base needs a key; any other base
    /// (a local server) may run without one.
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<OpenAiRecognizer, SpeechError> {
        let service = Service::new(
            config,
            Api::OpenAi,
            Task::Recognition,
            &s.stt_base_url,
            &s.stt_api_key_env,
            DEFAULT_KEY_ENV,
        )?;
        let base = service.base();
        let model = super::or_default(&s.stt_model, DEFAULT_MODEL);
        let language = s.stt_language.trim().to_string();
        let realtime = super::streams(s)
            .then(|| Realtime::new(base, &model, &language, service.key().cloned()))
            .flatten();
        Ok(OpenAiRecognizer {
            url: format!("{base}/audio/transcriptions"),
            model,
            language,
            realtime,
            service,
        })
    }
}

#[async_trait::async_trait]
impl Recognizer for OpenAiRecognizer {
    fn name(&self) -> &'static str {
        Api::OpenAi.name()
    }

    fn probe(&self) -> Option<&Probe> {
        Some(self.service.probe())
    }

    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError> {
        let fields = [
            ("model", &*self.model),
            ("response_format", "json"),
            ("language", &self.language),
        ];
        self.service.transcribe(&self.url, pcm, &fields).await
    }

    fn stream(&self) -> Option<RecognitionStream> {
        self.realtime.as_ref().and_then(Realtime::open)
    }
}
