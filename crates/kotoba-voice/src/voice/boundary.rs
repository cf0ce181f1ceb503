//! The room's boundary: 20 ms ticks of heard frames per person in (16 kHz mono i16),
//! each person's audio as their packets arrive ([`Arrived`], where the surface has
//! packets), 20 ms frames of 48 kHz stereo f32 out. songbird sits on the far side in
//! production and the tests sit there instead (songbird's driver cannot run without
//! Discord).

use std::time::Duration;

/// What the room heard in one 20 ms tick: each person who sent audio, with one frame
/// of 16 kHz mono ([`crate::speech::audio::HEAR_FRAME`] samples). People who were
/// silent this tick are absent; bots and unknown streams never appear.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Heard {
    /// (user id, frame).
    pub frames: Vec<(u64, Vec<i16>)>,
}

/// One person's audio as one of their packets arrived, ahead of any playout buffer or
/// tick: 16 kHz mono, in the stream's order (a lost packet concealed in its place, a
/// late or repeated one left out), so what a person said arrives once, whole. A
/// realtime session hears a person from these alone once any came (the ticks still
/// feed their ear); a person whose packets stop for [`QUIET_AFTER`] is silent, and the
/// room counts that silence in audio time from when their packets would have come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arrived {
    /// Who sent it.
    pub user: u64,
    /// Its audio (any length; 20 ms is [`crate::speech::audio::HEAR_FRAME`] samples).
    pub pcm: Vec<i16>,
}

/// No packet from a person for this long: they stopped sending (a client stops after
/// its silence frames), and the room counts silence for them. A packet lost before it
/// is concealed only when its successor comes sooner than this.
pub const QUIET_AFTER: Duration = Duration::from_millis(60);

/// Where her voice goes.
pub trait AudioOut: Send + Sync + 'static {
    /// One 20 ms frame of 48 kHz stereo interleaved f32
    /// ([`crate::speech::audio::PLAY_FRAME`] samples), in playing order.
    fn frame(&self, pcm: &[f32]);
    /// Drop whatever is queued and not yet played: she goes quiet at once.
    fn stop(&self);
    /// How many handed frames are not played yet, when the player knows (the room
    /// then paces by it instead of by its own estimate).
    fn queued(&self) -> Option<usize> {
        None
    }
    /// Whether whoever listens muted her (the page's mute): then nothing is
    /// synthesised and her turns are the written register.
    fn muted(&self) -> bool {
        false
    }
}
