//! ElevenLabs recognition: `POST {base}/v1/speech-to-text` with the audio as a WAV
//! upload, the key in `xi-api-key` (the service itself: [`super::cloud`]).

use super::cloud::{Api, Service};
use super::{Probe, Recognizer, Task};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, VoiceSettings};

/// The model used when `stt.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "scribe_v1";
/// The env variable read when `stt.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "ELEVENLABS_API_KEY";

/// Recognition through ElevenLabs speech-to-text.
#[derive(Debug)]
pub struct ElevenLabsRecognizer {
    service: Service,
    url: String,
    model: String,
    language: String,
}

impl ElevenLabsRecognizer {
    /// Set up from the voice settings; ElevenLabs' own base needs a key.
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<ElevenLabsRecognizer, SpeechError> {
        let service = Service::new(
            config,
            Api::ElevenLabs,
            Task::Recognition,
            &s.stt_base_url,
            &s.stt_api_key_env,
            DEFAULT_KEY_ENV,
        )?;
        Ok(ElevenLabsRecognizer {
            url: format!("{}/v1/speech-to-text", service.base()),
            model: super::or_default(&s.stt_model, DEFAULT_MODEL),
            language: s.stt_language.trim().to_string(),
            service,
        })
    }
}

#[async_trait::async_trait]
impl Recognizer for ElevenLabsRecognizer {
    fn name(&self) -> &'static str {
        Api::ElevenLabs.name()
    }

    fn probe(&self) -> Option<&Probe> {
        Some(self.service.probe())
    }

    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError> {
        let fields = [
            ("model_id", &*self.model),
            ("language_code", &self.language),
        ];
        self.service.transcribe(&self.url, pcm, &fields).await
    }
}
