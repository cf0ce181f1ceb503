//! Kotoba's voice floor, with no Discord types: hearing and speaking (resampling, voice
//! activity, endpointing, wake words, recognition and synthesis providers, the realtime
//! session) and the voice room, surface-neutral: heard audio per speaker in, her voice
//! out. Discord and the page each drive a room through its boundary. It stands on core
//! and the engine, and never imports serenity, songbird or axum.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// Speech, with no Discord types: resampling (`audio.rs`), WAV, voice activity, endpointing,
/// the spoken filter (`filter/`), wake words, recognition (`stt/`), synthesis (`tts/`).
pub mod speech;
/// The voice room, surface-neutral: heard audio per speaker in, her voice out; Discord
/// and the page each drive it through its boundary.
pub mod voice;
