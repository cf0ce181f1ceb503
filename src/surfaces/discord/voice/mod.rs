//! Discord's side of the voice room (voice.md): songbird joins and leaves through
//! [`call`], [`receive`] turns songbird's ticks into [`crate::voice::boundary::Heard`]
//! (and [`arrival`] hears a person start as their packets arrive), [`playback`] plays
//! [`crate::voice::boundary::AudioOut`] frames, [`rooms`] keeps one room per guild and
//! is the room's [`crate::voice::room::RoomSide`]. The room itself lives in
//! [`crate::voice`] and never sees songbird.

pub mod arrival;
pub mod call;
pub mod members;
pub mod playback;
pub mod receive;
pub mod rooms;
