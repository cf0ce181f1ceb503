//! Test audio: phrases spoken by espeak-ng, silence, seeded noise and tones at 16 kHz
//! mono, cut into heard frames.

// Test support: a missing espeak-ng or a bad WAV is a failed test.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use super::audio::{f32_to_i16, i16_to_f32, Resampler, HEAR_FRAME, HEAR_RATE};
use super::wav;
use std::process::Command;

/// `text` spoken by espeak-ng (its default English voice), at 16 kHz mono.
///
/// Panics when espeak-ng is missing, saying how to install it.
pub fn espeak(text: &str) -> Vec<i16> {
    let output = match Command::new("espeak-ng")
        .args(["--stdout", "--", text])
        .output()
    {
        Ok(output) => output,
        Err(e) => panic!(
            "espeak-ng is needed by the voice tests and could not run ({e}): \
             apt-get install espeak-ng (scripts/system-deps installs it)"
        ),
    };
    assert!(
        output.status.success(),
        "espeak-ng failed on {text:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pcm = match wav::decode(&output.stdout) {
        Ok(pcm) => pcm,
        Err(e) => panic!("espeak-ng's WAV for {text:?}: {e}"),
    };
    let mut resampler = Resampler::new(pcm.rate, HEAR_RATE);
    let mut out = Vec::new();
    resampler.push(&i16_to_f32(&pcm.mono()), &mut out);
    resampler.finish(&mut out);
    f32_to_i16(&out)
}

/// `secs` of digital silence.
pub fn silence(secs: f64) -> Vec<i16> {
    vec![0; samples(secs)]
}

/// `secs` of white noise, uniform in ±`amplitude` (in i16 units), the same for the
/// same seed.
pub fn noise(secs: f64, amplitude: i16, seed: u64) -> Vec<i16> {
    // splitmix64: small, seeded, the same everywhere.
    let mut state = seed;
    let amp = f64::from(amplitude);
    (0..samples(secs))
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
            ((unit * 2.0 - 1.0) * amp).round() as i16
        })
        .collect()
}

/// `secs` of a sine at `hz`, peak `amplitude` (in i16 units).
pub fn tone(secs: f64, hz: f64, amplitude: i16) -> Vec<i16> {
    let rate = f64::from(HEAR_RATE);
    (0..samples(secs))
        .map(|i| {
            let t = i as f64 / rate;
            (f64::from(amplitude) * (2.0 * std::f64::consts::PI * hz * t).sin()).round() as i16
        })
        .collect()
}

/// Heard frames of [`HEAR_FRAME`] samples; the last is padded with silence.
pub fn frames(pcm: &[i16]) -> Vec<Vec<i16>> {
    pcm.chunks(HEAR_FRAME)
        .map(|chunk| {
            let mut frame = chunk.to_vec();
            frame.resize(HEAR_FRAME, 0);
            frame
        })
        .collect()
}

fn samples(secs: f64) -> usize {
    (secs * f64::from(HEAR_RATE)).round().max(0.0) as usize
}
