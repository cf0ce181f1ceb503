//! ElevenLabs synthesis: `POST {base}/v1/text-to-speech/{voice_id}/stream` with
//! `output_format=pcm_24000`, the key in `xi-api-key`; s16le 24 kHz mono, streamed.

use futures::StreamExt;
use serde_json::json;

use super::{nothing_to_say, speech_reply, voice_from, AudioReader, Synthesizer, Voice};
use crate::speech::stt::{
    api_key, elevenlabs_root, http_client, on_host, or_default, send_failed, Probe, Task,
    ELEVENLABS_BASE,
};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, Secret, VoiceSettings};

/// The model used when `tts.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "eleven_flash_v2_5";
/// The voice id used when `tts.voice` is empty (the premade voice "Rachel").
pub(super) const DEFAULT_VOICE: &str = "21m00Tcm4TlvDq8ikWAM";
/// The env variable read when `tts.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "ELEVENLABS_API_KEY";
/// The rate asked for (`pcm_24000`).
pub(super) const PCM_RATE: u32 = 24_000;

const NAME: &str = "elevenlabs";

/// Synthesis through ElevenLabs' streaming endpoint.
#[derive(Debug)]
pub struct ElevenLabsSynthesizer {
    http: reqwest::Client,
    url: String,
    model: String,
    key: Option<Secret>,
    /// Where the doctor asks whether the server answers.
    probe: Probe,
}

impl ElevenLabsSynthesizer {
    /// Set up from the voice settings; ElevenLabs' own base needs a key, and the voice
    /// must be a voice id (letters, digits, `_` or `-`).
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<ElevenLabsSynthesizer, SpeechError> {
        let root = elevenlabs_root(&or_default(&s.tts_base_url, ELEVENLABS_BASE));
        let key_env = or_default(&s.tts_api_key_env, DEFAULT_KEY_ENV);
        let key = api_key(config, &key_env);
        if key.is_none() && on_host(&root, "api.elevenlabs.io") {
            return Err(SpeechError::new(format!(
                "Speech synthesis (elevenlabs) needs an API key: set {key_env} (tts.api_key_env names the variable)."
            )));
        }
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
            http: http_client(),
            url: format!("{root}/v1/text-to-speech/{voice}/stream?output_format=pcm_{PCM_RATE}"),
            model: or_default(&s.tts_model, DEFAULT_MODEL),
            probe: Probe::elevenlabs(Task::Synthesis, &root, key.clone(), &key_env),
            key,
        })
    }
}

#[async_trait::async_trait]
impl Synthesizer for ElevenLabsSynthesizer {
    fn name(&self) -> &'static str {
        NAME
    }

    fn probe(&self) -> Option<&Probe> {
        Some(&self.probe)
    }

    async fn synthesize(&self, text: &str) -> Result<Voice, SpeechError> {
        if text.trim().is_empty() {
            return Err(nothing_to_say(NAME));
        }
        let key = self.key.as_ref();
        let body = json!({ "text": text, "model_id": self.model });
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::ACCEPT, "audio/pcm")
            .json(&body);
        if let Some(k) = key {
            request = request.header("xi-api-key", &k.0);
        }
        let reply = speech_reply(request, NAME, &self.url, key).await?;
        let url = self.url.clone();
        let bytes = reply
            .bytes_stream()
            .map(move |chunk| {
                chunk
                    .map(|b| b.to_vec())
                    .map_err(|e| send_failed(Task::Synthesis, NAME, &url, &e, None))
            })
            .boxed();
        voice_from(NAME, bytes, AudioReader::pcm(PCM_RATE)).await
    }
}
