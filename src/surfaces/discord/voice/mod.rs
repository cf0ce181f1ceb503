//! The voice room (voice.md): songbird joins and leaves through [`call`], [`receive`]
//! turns songbird's ticks into [`boundary::Heard`] (and [`arrival`] hears a person
//! start as their packets arrive), [`playback`] plays
//! [`boundary::AudioOut`] frames; the room itself (endpointing, wake, turns, speech,
//! barge-in, captions, watchdog) lives above the boundary and never sees songbird.

pub mod arrival;
pub mod boundary;
pub mod call;
pub mod latency;
pub mod members;
pub mod playback;
pub mod receive;
pub mod room;
pub mod rooms;
mod speaker;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_consent;
#[cfg(test)]
mod tests_early;
#[cfg(test)]
mod tests_turns;
