//! ElevenLabs synthesis: `POST {base}/v1/text-to-speech/{voice_id}/stream` with
//! `output_format=pcm_24000`, the key in `xi-api-key` (the service itself:
//! [`crate::speech::stt::cloud`]); s16le 24 kHz mono, streamed.

use serde_json::json;

use super::{nothing_to_say, voice_from, AudioReader, Synthesizer, Voice};
use crate::speech::stt::cloud::{Api, Service};
use crate::speech::stt::{or_default, Probe, Task};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, VoiceSettings};

/// The model used when `tts.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "eleven_flash_v2_5";
/// The voice id used when `tts.voice` is empty (the premade voice "Rachel").
pub(super) const DEFAULT_VOICE: &str = "21m00Tcm4TlvDq8ikWAM";
/// The env variable read when `tts.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "ELEVENLABS_API_KEY";
/// The rate asked for (`pcm_24000`).
pub(super) const PCM_RATE: u32 = 24_000;

/// Synthesis through ElevenLabs' streaming endpoint.
#[derive(Debug)]
pub struct ElevenLabsSynthesizer {
    service: Service,
    url: String,
    model: String,
}

impl ElevenLabsSynthesizer {
    /// Set up from the voice settings; ElevenLabs' own base needs a key, and the voice
    /// must be a voice id (letters, digits, `_` or `-`).
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<ElevenLabsSynthesizer, SpeechError> {
        let service = Service::new(
            config,
            Api::ElevenLabs,
            Task::Synthesis,
            &s.tts_base_url,
            &s.tts_api_key_env,
            DEFAULT_KEY_ENV,
        )?;
        let voice = or_default(&s.tts_voice, DEFAULT_VOICE);
        if !voice
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(SpeechError::new(format!(
                "tts.voice {voice:?} is not an ElevenLabs voice id (letters and digits, such as {DEFAULT_VOICE})."
            )));
        }
        Ok(ElevenLabsSynthesizer {
            url: format!(
                "{}/v1/text-to-speech/{voice}/stream?output_format=pcm_{PCM_RATE}",
                service.base()
            ),
            model: or_default(&s.tts_model, DEFAULT_MODEL),
            service,
        })
    }
}

#[async_trait::async_trait]
impl Synthesizer for ElevenLabsSynthesizer {
    fn name(&self) -> &'static str {
        Api::ElevenLabs.name()
    }

    fn probe(&self) -> Option<&Probe> {
        Some(self.service.probe())
    }

    async fn synthesize(&self, text: &str) -> Result<Voice, SpeechError> {
        let name = self.name();
        if text.trim().is_empty() {
            return Err(nothing_to_say(name));
        }
        let body = json!({ "text": text, "model_id": self.model });
        let request = self
            .service
            .post(&self.url)
            .header(reqwest::header::ACCEPT, "audio/pcm")
            .json(&body);
        let reply = self.service.speech(request, &self.url).await?;
        let bytes = self.service.audio(reply, &self.url);
        voice_from(name, bytes, AudioReader::pcm(PCM_RATE)).await
    }
}
