//! OpenAI-compatible synthesis: `POST {base}/audio/speech` asking for raw PCM
//! (s16le 24 kHz mono), streamed. Servers that answer with a WAV instead (some Kokoro
//! and Piper servers) are read by their header.

use futures::StreamExt;
use serde_json::json;

use super::{nothing_to_say, speech_reply, voice_from, AudioReader, Synthesizer, Voice};
use crate::speech::stt::{
    api_key, failed, http_client, on_host, or_default, send_failed, Probe, Task, OPENAI_BASE,
};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, Secret, VoiceSettings};

/// The model used when `tts.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "gpt-4o-mini-tts";
/// The voice used when `tts.voice` is empty.
pub(super) const DEFAULT_VOICE: &str = "alloy";
/// The env variable read when `tts.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";
/// The rate of OpenAI's `pcm` format.
pub(super) const PCM_RATE: u32 = 24_000;

const NAME: &str = "openai";

/// Synthesis through an OpenAI-compatible speech endpoint.
#[derive(Debug)]
pub struct OpenAiSynthesizer {
    http: reqwest::Client,
    url: String,
    model: String,
    voice: String,
    key: Option<Secret>,
    /// Where the doctor asks whether the server answers.
    probe: Probe,
}

impl OpenAiSynthesizer {
    /// Set up from the voice settings. OpenAI's own base needs a key; any other base
    /// (a local server) may run without one.
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<OpenAiSynthesizer, SpeechError> {
        let base = or_default(&s.tts_base_url, OPENAI_BASE);
        let base = base.trim_end_matches('/');
        let key_env = or_default(&s.tts_api_key_env, DEFAULT_KEY_ENV);
        let key = api_key(config, &key_env);
        if key.is_none() && on_host(base, "api.openai.com") {
            return Err(SpeechError::new(format!(
                "Speech synthesis (openai) needs an API key: set {key_env} (tts.api_key_env names the variable), or point tts.base_url at a local server."
            )));
        }
        Ok(OpenAiSynthesizer {
            http: http_client(),
            url: format!("{base}/audio/speech"),
            model: or_default(&s.tts_model, DEFAULT_MODEL),
            voice: or_default(&s.tts_voice, DEFAULT_VOICE),
            probe: Probe::openai(Task::Synthesis, base, key.clone(), &key_env),
            key,
        })
    }
}

#[async_trait::async_trait]
impl Synthesizer for OpenAiSynthesizer {
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
        let body = json!({
            "model": self.model,
            "input": text,
            "voice": self.voice,
            "response_format": "pcm",
        });
        let mut request = self.http.post(&self.url).json(&body);
        if let Some(k) = key {
            request = request.bearer_auth(&k.0);
        }
        let reply = speech_reply(request, NAME, &self.url, key).await?;
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
            return Err(failed(Task::Synthesis, NAME, &why, key));
        } else {
            AudioReader::sniff(PCM_RATE)
        };
        let url = self.url.clone();
        let bytes = reply.bytes_stream().map(move |chunk| {
            chunk
                .map(|b| b.to_vec())
                .map_err(|e| send_failed(Task::Synthesis, NAME, &url, &e, None))
        });
        let bytes = bytes.boxed();
        voice_from(NAME, bytes, reader).await
    }
}
