//! ElevenLabs recognition: `POST {base}/v1/speech-to-text` with the audio as a WAV
//! upload, the key in `xi-api-key`.

use reqwest::multipart::Form;

use super::{
    api_key, elevenlabs_root, on_host, or_default, transcription, wav_part, Probe, Recognizer,
    Task, ELEVENLABS_BASE,
};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, Secret, VoiceSettings};

/// The model used when `stt.model` is empty.
pub(super) const DEFAULT_MODEL: &str = "scribe_v1";
/// The env variable read when `stt.api_key_env` is empty.
pub(super) const DEFAULT_KEY_ENV: &str = "ELEVENLABS_API_KEY";

const NAME: &str = "elevenlabs";

/// Recognition through ElevenLabs speech-to-text.
#[derive(Debug)]
pub struct ElevenLabsRecognizer {
    http: reqwest::Client,
    url: String,
    model: String,
    language: String,
    key: Option<Secret>,
    /// Where the doctor asks whether the server answers.
    probe: Probe,
}

impl ElevenLabsRecognizer {
    /// Set up from the voice settings; ElevenLabs' own base needs a key.
    pub fn new(config: &Config, s: &VoiceSettings) -> Result<ElevenLabsRecognizer, SpeechError> {
        let root = elevenlabs_root(&or_default(&s.stt_base_url, ELEVENLABS_BASE));
        let key_env = or_default(&s.stt_api_key_env, DEFAULT_KEY_ENV);
        let key = api_key(config, &key_env);
        if key.is_none() && on_host(&root, "api.elevenlabs.io") {
            return Err(SpeechError::new(format!(
                "Speech recognition (elevenlabs) needs an API key: set {key_env} (stt.api_key_env names the variable)."
            )));
        }
        Ok(ElevenLabsRecognizer {
            http: super::http_client(),
            url: format!("{root}/v1/speech-to-text"),
            model: or_default(&s.stt_model, DEFAULT_MODEL),
            language: s.stt_language.trim().to_string(),
            probe: Probe::elevenlabs(Task::Recognition, &root, key.clone(), &key_env),
            key,
        })
    }
}

#[async_trait::async_trait]
impl Recognizer for ElevenLabsRecognizer {
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
            .text("model_id", self.model.clone());
        if !self.language.is_empty() {
            form = form.text("language_code", self.language.clone());
        }
        let mut request = self.http.post(&self.url).multipart(form);
        if let Some(k) = key {
            request = request.header("xi-api-key", &k.0);
        }
        transcription(request, NAME, &self.url, key).await
    }
}
