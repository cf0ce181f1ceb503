//! The room's boundary: 20 ms ticks of heard frames per person in (16 kHz mono i16),
//! 20 ms frames of 48 kHz stereo f32 out. songbird sits on the far side in production
//! and the tests sit there instead (songbird's driver cannot run without Discord).

/// What the room heard in one 20 ms tick: each person who sent audio, with one frame
/// of 16 kHz mono ([`crate::speech::audio::HEAR_FRAME`] samples). People who were
/// silent this tick are absent; bots and unknown streams never appear.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Heard {
    /// (user id, frame).
    pub frames: Vec<(u64, Vec<i16>)>,
}

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
