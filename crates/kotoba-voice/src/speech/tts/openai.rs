//! OpenAI-compatible synthesis: `POST {base}/audio/speech` asking for raw PCM
//! (s16le 24 kHz mono), streamed (the service itself: [`crate::speech::stt::cloud`]).
//! Servers that answer with a WAV instead (some Kokoro and Piper servers) are read by
//! their header.

use serde_json::json;

use super::{nothing_to_say, voice_from, AudioReader, Synthesizer, Voice};
use crate::speech::stt::cloud::{Api, Service};
use crate::speech::stt::{failed, or_default, Probe, Task};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, VoiceSettings};

/// The model used when `tts.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "gpt-4o-mini-tts";
/// The voice used when `tts.voice` is empty.
pub(super) const DEFAULT_VOICE: &str = "alloy";
/// The env variable read when `tts.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";
/// The rate of OpenAI's `pcm` format.
pub(super) const PCM_RATE: u32 = 24_000;

/// Synthesis through an OpenAI-compatible speech endpoint.
#[derive(Debug)]
pub struct OpenAiSynthesizer {
    service: Service,
    url: String,
    model: String,
    voice: String,
}

impl OpenAiSynthesizer {
    /// Set up from the voice settings. OpenAI's own base needs a key; any other base
    /// (a local server) may run without one.
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<OpenAiSynthesizer, SpeechError> {
        let service = Service::new(
            config,
            Api::OpenAi,
            Task::Synthesis,
            &s.tts_base_url,
            &s.tts_api_key_env,
            DEFAULT_KEY_ENV,
        )?;
        Ok(OpenAiSynthesizer {
            url: format!("{}/audio/speech", service.base()),
            model: or_default(&s.tts_model, DEFAULT_MODEL),
            voice: or_default(&s.tts_voice, DEFAULT_VOICE),
            service,
        })
    }
}

#[async_trait::async_trait]
impl Synthesizer for OpenAiSynthesizer {
    fn name(&self) -> &'static str {
        Api::OpenAi.name()
    }

    fn probe(&self) -> Option<&Probe> {
        Some(self.service.probe())
    }

    async fn synthesize(&self, text: &str) -> Result<Voice, SpeechError> {
        let name = self.name();
        if text.trim().is_empty() {
            return Err(nothing_to_say(name));
        }
        let body = json!({
            "model": self.model,
            "input": text,
            "voice": self.voice,
            "response_format": "pcm",
        });
        let request = self.service.post(&self.url).json(&body);
        let reply = self.service.speech(request, &self.url).await?;
        let kind = reply
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let reader = if kind.contains("wav") || kind.contains("wave") {
            AudioReader::wav()
        } else if ["mpeg", "mp3", "ogg", "opus", "aac", "flac", "json", "html"]
            .iter()
            .any(|k| kind.contains(k))
        {
            let why = format!("the server sent {kind}, not PCM or WAV audio");
            return Err(failed(Task::Synthesis, name, &why, self.service.key()));
        } else {
            AudioReader::sniff(PCM_RATE)
        };
        voice_from(name, self.service.audio(reply, &self.url), reader).await
    }
}
