//! The voice room, surface-neutral (voice.md): heard audio per speaker in at the
//! [`boundary`] (20 ms ticks of 16 kHz mono), her voice out as 48 kHz frames; between
//! them endpointing, recognition, wake and turn-taking, spoken turns, the [`speaker`]
//! streaming her answer sentence by sentence, barge-in, captions, the watchdog, leave
//! and auto-leave ([`room`]), and the last replies' [`latency`]. Discord drives it
//! through songbird (`surfaces::discord::voice`), the page through its voice socket
//! (`surfaces::web::voice`); each surface gives the room a [`room::RoomSide`].

pub mod boundary;
pub mod latency;
pub mod providers;
pub mod room;
mod speaker;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_consent;
#[cfg(test)]
mod tests_early;
#[cfg(test)]
mod tests_stream;
#[cfg(test)]
mod tests_turns;
