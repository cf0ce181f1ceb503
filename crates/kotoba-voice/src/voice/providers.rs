//! A room's speech providers, set up the same way for every surface: the recognizer
//! `stt.provider` names (one that cannot be set up answers every utterance with why,
//! so the room says it once), the local model warmed before it is needed, and the synthesizer with
//! espeak-ng standing in when the configured one cannot be set up.

use std::sync::Arc;

use async_trait::async_trait;

use crate::speech::stt::{self, Recognizer};
use crate::speech::tts::{self, Synthesizer};
use crate::speech::SpeechError;
use kotoba_core::config::Config;

/// What a room hears and speaks with.
pub struct Providers {
    /// Speech recognition.
    pub recognizer: Arc<dyn Recognizer>,
    /// Speech synthesis.
    pub synthesizer: Arc<dyn Synthesizer>,
    /// When espeak-ng stands in for the configured voice, or the realtime session
    /// cannot be set up: the sentences saying why, to show where the room is.
    pub stood_in: Option<String>,
    /// With `voice_mode: realtime`, where each person's realtime session opens.
    pub realtime: Option<crate::speech::realtime_voice::RealtimeConfig>,
}

/// The providers the live settings name.
pub fn providers(config: &Config) -> Providers {
    let recognizer: Arc<dyn Recognizer> =
        stt::recognizer(config).unwrap_or_else(|e| Arc::new(Broken(e)));
    let (synthesizer, why) = tts::synthesizer_or_floor(config);
    let mut stood_in = why.map(|why| {
        tracing::warn!("voice: {why}; speaking with espeak-ng instead");
        format!("{why} I'll speak with espeak-ng until that is fixed.")
    });
    let settings = config.settings();
    let realtime = match settings.voice_mode {
        kotoba_core::config::VoiceMode::Realtime => {
            match crate::speech::realtime_voice::RealtimeConfig::from_settings(
                config,
                &settings.voice,
            ) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::warn!("voice: {e}");
                    let line = format!("{e} I'll answer with my usual voice until that is fixed.");
                    stood_in = Some(match stood_in {
                        Some(s) => format!("{s} {line}"),
                        None => line,
                    });
                    None
                }
            }
        }
        _ => None,
    };
    Providers {
        recognizer,
        synthesizer,
        stood_in,
        realtime,
    }
}

impl Providers {
    /// Load the local recognizer's model now, not on the first thing someone says
    /// (a Discord join; the page's first heard audio). Other providers need nothing.
    pub fn warm(&self) {
        if self.recognizer.name() == "local" {
            let warm = self.recognizer.clone();
            tokio::spawn(async move {
                let _ = warm.transcribe(&[0; 1600]).await;
            });
        }
    }
}

/// A recognizer that could not be set up: every utterance says why.
struct Broken(SpeechError);

#[async_trait]
impl Recognizer for Broken {
    fn name(&self) -> &'static str {
        "unavailable"
    }
    async fn transcribe(&self, _pcm: &[i16]) -> Result<String, SpeechError> {
        Err(self.0.clone())
    }
}
