//! Audio framing and exact resampling: 20 ms frames of 16 kHz mono i16 in (what the
//! room hears), 20 ms frames of 48 kHz stereo f32 out (what songbird plays).

use std::time::Duration;

/// The rate speech recognition hears.
pub const HEAR_RATE: u32 = 16_000;
/// One frame of audio time.
pub const FRAME: Duration = Duration::from_millis(20);
/// Samples in one heard frame (16 kHz mono, 20 ms).
pub const HEAR_FRAME: usize = 320;
/// The rate songbird plays.
pub const PLAY_RATE: u32 = 48_000;
/// Interleaved samples in one played frame (48 kHz stereo, 20 ms).
pub const PLAY_FRAME: usize = 1920;
