//! Voice activity detection on 20 ms frames of 16 kHz mono: earshot's neural detector,
//! gated by the frame's level above an adaptive noise floor and, at onset, by how
//! noise-like (spectrally flat) the frame is, with hysteresis.

use super::audio::HEAR_FRAME;

/// Judges one 20 ms frame of 16 kHz mono ([`HEAR_FRAME`] samples) at a time, in order;
/// it keeps state between frames, so use one per speaker.
pub trait VoiceDetector: Send {
    /// Whether this frame is speech.
    fn is_speech(&mut self, frame: &[i16]) -> bool;
    /// Forget the stream so far (a new speaker or a new stream).
    fn reset(&mut self) {}
}

/// The voice detector the room uses.
pub fn detector() -> Box<dyn VoiceDetector> {
    Box::new(Vad::new())
}

/// Samples earshot judges at a time (16 ms).
const HOP: usize = 256;
/// Points in the spectrum used for the level and flatness (zero-padded frame).
const FFT: usize = 512;
/// Spectrum bins (31.25 Hz each) of the bands used: 250 Hz to 7750 Hz, in bands of
/// 10 bins (312.5 Hz).
const FIRST_BIN: usize = 8;
const BAND_BINS: usize = 10;
const BANDS: usize = 24;
/// earshot's score to start speech, and to stay in it.
const ENTER: f32 = 0.5;
const STAY: f32 = 0.35;
/// The quietest speech (band level in dB below full scale).
const FLOOR_DB: f32 = -55.0;
/// Speech stands this far above the noise floor.
const SNR_DB: f32 = 6.0;
/// Speech does not start on a frame flatter than this (white-ish noise is ~0.9).
const MAX_ONSET_FLATNESS: f32 = 0.6;
/// The noise floor is the quietest frame of the last this-many frames (1.5 s).
const FLOOR_FRAMES: usize = 75;

/// What one frame's spectrum says.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spectrum {
    /// Power in 250 Hz–7.75 kHz, in dB below a full-scale sine.
    level_db: f32,
    /// Geometric over arithmetic mean of the band powers (1: flat, as white noise).
    flatness: f32,
}

/// A radix-2 FFT of [`FFT`] points with its tables.
#[derive(Debug, Clone)]
struct Fourier {
    window: Vec<f32>,
    cos: Vec<f32>,
    sin: Vec<f32>,
    re: Vec<f32>,
    im: Vec<f32>,
}

impl Fourier {
    fn new() -> Self {
        let tau = 2.0 * std::f64::consts::PI;
        let window = (0..HEAR_FRAME)
            .map(|i| (0.5 - 0.5 * (tau * i as f64 / HEAR_FRAME as f64).cos()) as f32)
            .collect();
        let cos = (0..FFT / 2)
            .map(|k| (tau * k as f64 / FFT as f64).cos() as f32)
            .collect();
        let sin = (0..FFT / 2)
            .map(|k| -(tau * k as f64 / FFT as f64).sin() as f32)
            .collect();
        Fourier {
            window,
            cos,
            sin,
            re: vec![0.0; FFT],
            im: vec![0.0; FFT],
        }
    }

    /// The level and flatness of one frame (Hann window, zero-padded).
    fn spectrum(&mut self, frame: &[i16]) -> Spectrum {
        self.re.fill(0.0);
        self.im.fill(0.0);
        for ((re, &s), w) in self.re.iter_mut().zip(frame).zip(&self.window) {
            *re = f32::from(s) / 32_768.0 * w;
        }
        self.transform();
        let mut bands = [0.0f64; BANDS];
        for (b, band) in bands.iter_mut().enumerate() {
            let from = FIRST_BIN + b * BAND_BINS;
            *band = (from..from + BAND_BINS)
                .map(|k| f64::from(self.re[k] * self.re[k] + self.im[k] * self.im[k]))
                .sum::<f64>()
                + 1e-12;
        }
        let total: f64 = bands.iter().sum();
        let mean = total / BANDS as f64;
        let geo = (bands.iter().map(|p| p.ln()).sum::<f64>() / BANDS as f64).exp();
        // A full-scale sine puts this much in the positive bins (Parseval).
        let window_power: f64 = self.window.iter().map(|w| f64::from(w * w)).sum();
        let full = FFT as f64 * window_power / 4.0;
        Spectrum {
            level_db: (10.0 * (total / full).log10()) as f32,
            flatness: (geo / mean) as f32,
        }
    }

    /// In-place iterative radix-2 FFT of `re`/`im`.
    fn transform(&mut self) {
        let bits = FFT.trailing_zeros();
        for i in 0..FFT {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if j > i {
                self.re.swap(i, j);
                self.im.swap(i, j);
            }
        }
        let mut len = 2;
        while len <= FFT {
            let step = FFT / len;
            for start in (0..FFT).step_by(len) {
                for k in 0..len / 2 {
                    let (wr, wi) = (self.cos[k * step], self.sin[k * step]);
                    let (a, b) = (start + k, start + k + len / 2);
                    let tr = self.re[b] * wr - self.im[b] * wi;
                    let ti = self.re[b] * wi + self.im[b] * wr;
                    self.re[b] = self.re[a] - tr;
                    self.im[b] = self.im[a] - ti;
                    self.re[a] += tr;
                    self.im[a] += ti;
                }
            }
            len *= 2;
        }
    }
}

/// earshot's score, gated by level, noise floor and (at onset) flatness, with
/// hysteresis. earshot judges 16 ms hops; a 20 ms frame's score is the highest of the
/// hops it completes.
pub struct Vad {
    earshot: Box<earshot::Detector>,
    /// Samples short of a hop.
    carry: Vec<i16>,
    /// The last hop's score (for a frame too short to complete one).
    score: f32,
    fourier: Fourier,
    /// Band levels of the last [`FLOOR_FRAMES`] frames, oldest first.
    levels: std::collections::VecDeque<f32>,
    speaking: bool,
}

impl Default for Vad {
    fn default() -> Self {
        Vad::new()
    }
}

impl Vad {
    /// A fresh detector.
    pub fn new() -> Vad {
        Vad {
            earshot: earshot::Detector::default_boxed(),
            carry: Vec::with_capacity(HOP + HEAR_FRAME),
            score: 0.0,
            fourier: Fourier::new(),
            levels: std::collections::VecDeque::with_capacity(FLOOR_FRAMES + 1),
            speaking: false,
        }
    }

    /// earshot's score for this frame.
    fn score(&mut self, frame: &[i16]) -> f32 {
        self.carry.extend_from_slice(frame);
        let mut best: Option<f32> = None;
        let mut used = 0;
        while self.carry.len() - used >= HOP {
            let s = self.earshot.predict_i16(&self.carry[used..used + HOP]);
            used += HOP;
            best = Some(best.map_or(s, |b: f32| b.max(s)));
        }
        self.carry.drain(..used);
        if let Some(s) = best {
            self.score = s;
        }
        self.score
    }

    /// The noise floor: the quietest recent frame, this one included.
    fn floor(&mut self, level_db: f32) -> f32 {
        if self.levels.len() == FLOOR_FRAMES {
            self.levels.pop_front();
        }
        self.levels.push_back(level_db);
        self.levels.iter().copied().fold(f32::INFINITY, f32::min)
    }
}

impl VoiceDetector for Vad {
    fn is_speech(&mut self, frame: &[i16]) -> bool {
        let score = self.score(frame);
        let spectrum = self.fourier.spectrum(frame);
        let floor = self.floor(spectrum.level_db);
        let loud = spectrum.level_db >= FLOOR_DB && spectrum.level_db >= floor + SNR_DB;
        self.speaking = if self.speaking {
            loud && score >= STAY
        } else {
            loud && score >= ENTER && spectrum.flatness <= MAX_ONSET_FLATNESS
        };
        self.speaking
    }

    fn reset(&mut self) {
        self.earshot.reset();
        self.carry.clear();
        self.score = 0.0;
        self.levels.clear();
        self.speaking = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speech::test_audio::{espeak, frames, noise, silence, tone};

    /// The detector's judgement of each frame of `pcm`.
    fn judge(pcm: &[i16]) -> Vec<bool> {
        let mut vad = detector();
        frames(pcm).iter().map(|f| vad.is_speech(f)).collect()
    }

    fn count(judged: &[bool]) -> usize {
        judged.iter().filter(|&&s| s).count()
    }

    /// The frames of `pcm` that carry sound (peak above `level`).
    fn sounding(pcm: &[i16], level: u16) -> Vec<bool> {
        frames(pcm)
            .iter()
            .map(|f| f.iter().any(|s| s.unsigned_abs() > level))
            .collect()
    }

    fn mix(a: &[i16], b: &[i16]) -> Vec<i16> {
        a.iter().zip(b).map(|(x, y)| x.saturating_add(*y)).collect()
    }

    #[test]
    fn phrases_spoken_by_espeak_are_speech() {
        for text in [
            "Hello there, what time is it in Tokyo?",
            "yes",
            "Stop talking please",
            "okay",
        ] {
            let pcm = [silence(0.5), espeak(text), silence(1.0)].concat();
            let judged = judge(&pcm);
            let voiced = sounding(&pcm, 500);
            let both = judged
                .iter()
                .zip(&voiced)
                .filter(|(j, v)| **j && **v)
                .count();
            assert!(
                both * 10 >= count(&voiced) * 7,
                "{text:?}: {both} of {} sounding frames judged speech",
                count(&voiced)
            );
            // Nothing before the phrase or long after it.
            let first = voiced.iter().position(|&v| v).unwrap_or(0);
            let last = voiced.iter().rposition(|&v| v).unwrap_or(0);
            assert!(
                judged[..first].iter().all(|&s| !s),
                "{text:?}: speech before it"
            );
            assert!(
                judged[last + 3..].iter().all(|&s| !s),
                "{text:?}: speech after it"
            );
        }
    }

    #[test]
    fn speech_in_low_noise_is_still_speech() {
        let phrase = espeak("Yes, she sells sea shells by the sea shore");
        let pcm = [
            noise(0.5, 300, 1),
            mix(&phrase, &noise(9.0, 300, 2)),
            noise(1.0, 300, 3),
        ]
        .concat();
        let judged = judge(&pcm);
        let phrase_frames = phrase.len() / HEAR_FRAME;
        let inside = count(&judged[25..25 + phrase_frames]);
        assert!(
            inside * 2 >= phrase_frames,
            "{inside} of {phrase_frames} frames"
        );
        assert_eq!(count(&judged[..25]), 0, "noise before the phrase");
        assert_eq!(
            count(&judged[25 + phrase_frames + 3..]),
            0,
            "noise after the phrase"
        );
    }

    #[test]
    fn digital_silence_is_not_speech() {
        assert_eq!(count(&judge(&silence(3.0))), 0);
    }

    #[test]
    fn low_white_noise_is_not_speech() {
        for (amplitude, seed) in [(100, 1), (300, 2), (1000, 3)] {
            assert_eq!(
                count(&judge(&noise(3.0, amplitude, seed))),
                0,
                "±{amplitude}"
            );
            // Also after a stretch of digital silence, where earshot alone is fooled.
            let after = [silence(1.0), noise(3.0, amplitude, seed)].concat();
            assert_eq!(count(&judge(&after)), 0, "±{amplitude} after silence");
        }
    }

    #[test]
    fn a_steady_50hz_hum_is_not_speech() {
        for amplitude in [1000, 8000, 20_000] {
            let pcm = [silence(0.5), tone(3.0, 50.0, amplitude)].concat();
            assert_eq!(count(&judge(&pcm)), 0, "hum at ±{amplitude}");
        }
    }

    #[test]
    fn a_reset_detector_judges_as_a_new_one() {
        let pcm = [silence(0.3), espeak("good morning"), noise(0.5, 300, 5)].concat();
        let fresh = judge(&pcm);
        let mut vad = detector();
        for f in frames(&[espeak("something else first"), noise(0.7, 2000, 6)].concat()) {
            vad.is_speech(&f);
        }
        vad.reset();
        let again: Vec<bool> = frames(&pcm).iter().map(|f| vad.is_speech(f)).collect();
        assert_eq!(again, fresh);
    }

    #[test]
    fn frames_of_other_sizes_are_judged_too() {
        let pcm = [silence(0.5), espeak("hello there"), silence(0.5)].concat();
        let mut vad = detector();
        let judged: Vec<bool> = pcm.chunks(160).map(|f| vad.is_speech(f)).collect();
        let n = count(&judged);
        assert!(n > 20, "{n} half frames judged speech");
    }
}
