//! Speech: what the voice room hears and says, with no Discord types. Audio framing
//! and exact resampling ([`audio`]), WAV ([`wav`]), voice activity ([`vad`]) and
//! per-speaker end of utterance ([`endpoint`]), recognition providers ([`stt`]),
//! synthesis providers ([`tts`]), the spoken filter and sentence streaming
//! ([`filter`]), who an utterance is for ([`wake`]), and a realtime speech-to-speech
//! session ([`realtime_voice`]).

pub mod audio;
pub mod consent;
pub mod endpoint;
pub mod filter;
pub mod realtime_voice;
pub mod stt;
/// Test audio (espeak-ng phrases, silence, noise, tones), for this crate's tests and,
/// with the `testing` feature, for the tests of the surfaces above.
#[cfg(any(test, feature = "testing"))]
pub mod test_audio;
pub mod tts;
pub mod vad;
pub mod wake;
pub mod wav;

/// A speech provider failed: one sentence naming the provider and, where there is
/// one, the fix (a key to set, a package to install).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpeechError(pub String);

impl SpeechError {
    /// An error with this sentence.
    pub fn new(sentence: impl Into<String>) -> Self {
        SpeechError(sentence.into())
    }
}
