//! Audio framing and exact resampling: 20 ms frames of 16 kHz mono i16 in (what the
//! room hears), 20 ms frames of 48 kHz stereo f32 out (what songbird plays).

use std::collections::VecDeque;
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

/// Zero crossings of the sinc on each side of the filter's centre.
const ZERO_CROSSINGS: f64 = 24.0;
/// The pass band ends at this fraction of the lower of the two Nyquist rates.
const ROLLOFF: f64 = 0.9;
/// Kaiser window shape (about 80 dB of stop band).
const KAISER_BETA: f64 = 8.0;
/// Above this many coefficients the phase table is not kept and each output's
/// coefficients are computed when needed (only odd rate pairs get there).
const MAX_TABLE: usize = 1 << 20;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The modified Bessel function of the first kind, order 0 (for the Kaiser window).
fn bessel_i0(x: f64) -> f64 {
    let mut sum = 1.0;
    let mut term = 1.0;
    let half = x / 2.0;
    for k in 1..64 {
        let f = half / f64::from(k);
        term *= f * f;
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

/// The low-pass kernel's taps for one output whose time lies `frac` (in [0, 1)) of an
/// input sample after the window's centre sample, normalised to a DC gain of 1.
fn phase_taps(frac: f64, taps: usize, cutoff: f64, width: f64, into: &mut [f32]) {
    let half = (taps / 2) as f64;
    let norm = bessel_i0(KAISER_BETA);
    let mut sum = 0.0;
    let mut row = vec![0.0f64; taps];
    for (m, c) in row.iter_mut().enumerate() {
        let d = m as f64 - half + 1.0 - frac;
        let r = d / width;
        if r.abs() >= 1.0 {
            continue;
        }
        let x = 2.0 * cutoff * d;
        let sinc = if x.abs() < 1e-12 {
            1.0
        } else {
            (std::f64::consts::PI * x).sin() / (std::f64::consts::PI * x)
        };
        let window = bessel_i0(KAISER_BETA * (1.0 - r * r).sqrt()) / norm;
        *c = 2.0 * cutoff * sinc * window;
        sum += *c;
    }
    for (out, c) in into.iter_mut().zip(row) {
        *out = if sum.abs() > 0.0 {
            (c / sum) as f32
        } else {
            0.0
        };
    }
}

/// A streaming mono resampler from any rate to any rate: a windowed-sinc (Kaiser)
/// low-pass at an exact rational ratio, polyphase, with its history carried across
/// chunks.
///
/// Output sample `k` stands at input time `k * from / to` (output 0 lines up with input
/// 0: no delay). Each output depends only on the input around it, so the output is
/// bit-for-bit the same however the input is split into chunks. After
/// [`Resampler::finish`] the stream has produced exactly `ceil(n * to / from)` samples
/// for `n` samples in. Equal rates pass samples through unchanged.
#[derive(Clone)]
pub struct Resampler {
    /// Output samples per `down` input samples (the reduced ratio).
    up: u64,
    /// Input samples per `up` output samples.
    down: u64,
    /// Taps per output (even; centred on the output's time).
    taps: usize,
    /// Cutoff in cycles per input sample.
    cutoff: f64,
    /// The kernel's half width in input samples.
    width: f64,
    /// `up` rows of `taps` coefficients, or empty when computed on demand.
    table: Vec<f32>,
    /// Input history: `buf[0]` is the input sample at absolute index `start`.
    buf: Vec<f32>,
    start: i64,
    /// The next output: the input sample at or before its time, and its phase
    /// (its time is `centre + phase / up`).
    centre: i64,
    phase: u64,
    /// Input samples taken since the stream began, and outputs given.
    taken: u64,
    given: u64,
    /// Scratch row for on-demand coefficients.
    scratch: Vec<f32>,
}

impl std::fmt::Debug for Resampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resampler")
            .field("ratio", &format_args!("{}/{}", self.up, self.down))
            .field("taps", &self.taps)
            .field("taken", &self.taken)
            .field("given", &self.given)
            .finish_non_exhaustive()
    }
}

impl Resampler {
    /// A resampler from `from` Hz to `to` Hz (a rate of 0 is taken as 1).
    pub fn new(from: u32, to: u32) -> Resampler {
        let (from, to) = (u64::from(from.max(1)), u64::from(to.max(1)));
        let g = gcd(from, to);
        let (up, down) = (to / g, from / g);
        let cutoff = 0.5 * (up as f64 / down as f64).min(1.0) * ROLLOFF;
        let width = ZERO_CROSSINGS / (2.0 * cutoff);
        let taps = if up == down {
            0
        } else {
            2 * (width.ceil() as usize).max(1)
        };
        let mut table = Vec::new();
        let rows = usize::try_from(up).unwrap_or(usize::MAX);
        if up != down && rows.saturating_mul(taps) <= MAX_TABLE {
            table = vec![0.0; rows * taps];
            for (p, row) in table.chunks_exact_mut(taps).enumerate() {
                phase_taps(p as f64 / up as f64, taps, cutoff, width, row);
            }
        }
        let mut r = Resampler {
            up,
            down,
            taps,
            cutoff,
            width,
            table,
            buf: Vec::new(),
            start: 0,
            centre: 0,
            phase: 0,
            taken: 0,
            given: 0,
            scratch: vec![0.0; taps],
        };
        r.reset();
        r
    }

    /// Whether samples pass through unchanged (equal rates).
    fn passthrough(&self) -> bool {
        self.up == self.down
    }

    /// The output count a stream of `n` input samples ends with:
    /// `ceil(n * to / from)` (with the ratio reduced; the same number).
    pub fn output_len(&self, n: u64) -> u64 {
        let num = u128::from(n) * u128::from(self.up);
        let den = u128::from(self.down);
        u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX)
    }

    /// Resample one chunk, appending what is ready to `out`. Outputs that need input
    /// not yet seen wait for the next chunk or for [`Resampler::finish`].
    pub fn push(&mut self, input: &[f32], out: &mut Vec<f32>) {
        self.taken += input.len() as u64;
        if self.passthrough() {
            self.given += input.len() as u64;
            out.extend_from_slice(input);
            return;
        }
        self.buf.extend_from_slice(input);
        self.drain(out, u64::MAX);
    }

    /// End the stream: the tail is filtered against silence and given, so the
    /// stream has produced exactly [`Resampler::output_len`] samples. The resampler
    /// then starts a new stream, as after [`Resampler::reset`].
    pub fn finish(&mut self, out: &mut Vec<f32>) {
        if !self.passthrough() {
            let total = self.output_len(self.taken);
            let half = (self.taps / 2) as i64;
            // Silence after the end: enough for the last output's window.
            let last = self.start + self.buf.len() as i64;
            let needed = self.centre_of(total.saturating_sub(1)) + half + 1;
            if needed > last {
                let more = usize::try_from(needed - last).unwrap_or(0);
                self.buf.resize(self.buf.len() + more, 0.0);
            }
            self.drain(out, total);
        }
        self.reset();
    }

    /// Forget the stream: history, position and counts.
    pub fn reset(&mut self) {
        let half = self.taps / 2;
        self.buf.clear();
        // Silence before the start, so output 0 has a full window.
        self.buf.resize(half.saturating_sub(1), 0.0);
        self.start = -(half.saturating_sub(1) as i64);
        self.centre = 0;
        self.phase = 0;
        self.taken = 0;
        self.given = 0;
    }

    /// The input sample at or before output `k`'s time.
    fn centre_of(&self, k: u64) -> i64 {
        let t = u128::from(k) * u128::from(self.down) / u128::from(self.up);
        i64::try_from(t).unwrap_or(i64::MAX)
    }

    /// Give every output whose window is in `buf`, up to `limit` outputs in all, and
    /// drop the history no later output needs.
    fn drain(&mut self, out: &mut Vec<f32>, limit: u64) {
        let half = (self.taps / 2) as i64;
        let end = self.start + self.buf.len() as i64;
        while self.given < limit && self.centre + half < end {
            let from = usize::try_from(self.centre - half + 1 - self.start).unwrap_or(0);
            let window = &self.buf[from..from + self.taps];
            let row: &[f32] = if self.table.is_empty() {
                phase_taps(
                    self.phase as f64 / self.up as f64,
                    self.taps,
                    self.cutoff,
                    self.width,
                    &mut self.scratch,
                );
                &self.scratch
            } else {
                let p = self.phase as usize * self.taps;
                &self.table[p..p + self.taps]
            };
            out.push(dot(window, row));
            self.given += 1;
            self.phase += self.down;
            self.centre += (self.phase / self.up) as i64;
            self.phase %= self.up;
        }
        let keep_from = self.centre - half + 1 - self.start;
        if keep_from > 0 {
            let n = usize::try_from(keep_from).unwrap_or(0).min(self.buf.len());
            self.buf.drain(..n);
            self.start += n as i64;
        }
    }
}

/// The dot product of two equal-length rows, in a fixed order (eight lanes, then the
/// tail), so it vectorises and is the same every time.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, c)| x * c)
        .sum();
    for (x, c) in a8.zip(b8) {
        for ((lane, x), c) in lanes.iter_mut().zip(x).zip(c) {
            *lane += x * c;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Interleaved stereo i16 to mono f32 in [-1, 1] (the channels averaged). A trailing
/// odd sample (half a stereo frame) is ignored.
pub fn downmix_stereo_i16(interleaved: &[i16]) -> Vec<f32> {
    interleaved
        .chunks_exact(2)
        .map(|lr| (f32::from(lr[0]) + f32::from(lr[1])) / 65_536.0)
        .collect()
}

/// i16 samples to f32 in [-1, 1) (divided by 32768).
pub fn i16_to_f32(pcm: &[i16]) -> Vec<f32> {
    pcm.iter().map(|&s| f32::from(s) / 32_768.0).collect()
}

/// f32 samples to i16: times 32768, rounded, clamped to the i16 range. The inverse
/// of [`i16_to_f32`] for every i16.
pub fn f32_to_i16(pcm: &[f32]) -> Vec<i16> {
    pcm.iter()
        .map(|&s| {
            let v = (s * 32_768.0).round();
            if v.is_nan() {
                0
            } else {
                v.clamp(-32_768.0, 32_767.0) as i16
            }
        })
        .collect()
}

/// What the room hears from one speaker: 48 kHz stereo i16 in, whole frames of
/// 16 kHz mono i16 ([`HEAR_FRAME`] samples) out, the remainder carried to the next
/// push.
#[derive(Debug, Clone)]
pub struct Hearing {
    resampler: Resampler,
    /// A left sample waiting for its right.
    odd: Option<i16>,
    /// Resampled samples short of a frame.
    pending: Vec<i16>,
    scratch: Vec<f32>,
}

impl Default for Hearing {
    fn default() -> Self {
        Hearing::new()
    }
}

impl Hearing {
    /// A fresh stream.
    pub fn new() -> Hearing {
        Hearing {
            resampler: Resampler::new(PLAY_RATE, HEAR_RATE),
            odd: None,
            pending: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Take decoded 48 kHz stereo; give the complete heard frames now ready.
    pub fn push(&mut self, interleaved: &[i16]) -> Vec<Vec<i16>> {
        let mut rest = interleaved;
        let mut mono = Vec::with_capacity(interleaved.len() / 2 + 1);
        if let (Some(left), Some((&right, tail))) = (self.odd, rest.split_first()) {
            mono.extend(downmix_stereo_i16(&[left, right]));
            self.odd = None;
            rest = tail;
        }
        mono.extend(downmix_stereo_i16(rest));
        if rest.len() % 2 == 1 {
            self.odd = rest.last().copied();
        }
        self.scratch.clear();
        self.resampler.push(&mono, &mut self.scratch);
        self.pending.extend(f32_to_i16(&self.scratch));
        let whole = self.pending.len() / HEAR_FRAME * HEAR_FRAME;
        let frames = self.pending[..whole]
            .chunks_exact(HEAR_FRAME)
            .map(<[i16]>::to_vec)
            .collect();
        self.pending.drain(..whole);
        frames
    }
}

/// What she says: mono i16 at any rate in, 48 kHz stereo interleaved f32 frames of
/// [`PLAY_FRAME`] samples out.
#[derive(Debug, Clone)]
pub struct Playout {
    resampler: Resampler,
    queue: VecDeque<f32>,
    scratch: Vec<f32>,
}

impl Playout {
    /// A player for mono PCM at `rate` Hz.
    pub fn new(rate: u32) -> Playout {
        Playout {
            resampler: Resampler::new(rate, PLAY_RATE),
            queue: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    fn queue_scratch(&mut self) {
        for &s in &self.scratch {
            let s = s.clamp(-1.0, 1.0);
            self.queue.push_back(s);
            self.queue.push_back(s);
        }
        self.scratch.clear();
    }

    /// Queue mono PCM at this player's rate.
    pub fn push(&mut self, pcm: &[i16]) {
        self.scratch.clear();
        self.resampler.push(&i16_to_f32(pcm), &mut self.scratch);
        self.queue_scratch();
    }

    /// One complete frame, if one is queued.
    pub fn pop(&mut self) -> Option<Vec<f32>> {
        if self.queue.len() < PLAY_FRAME {
            return None;
        }
        Some(self.queue.drain(..PLAY_FRAME).collect())
    }

    /// The speech is over: flush the resampler's tail and pad the last partial frame
    /// with silence, so everything queued pops as whole frames.
    pub fn finish(&mut self) {
        self.scratch.clear();
        self.resampler.finish(&mut self.scratch);
        self.queue_scratch();
        let partial = self.queue.len() % PLAY_FRAME;
        if partial != 0 {
            self.queue
                .resize(self.queue.len() + PLAY_FRAME - partial, 0.0);
        }
    }

    /// Complete frames queued.
    pub fn pending_frames(&self) -> usize {
        self.queue.len() / PLAY_FRAME
    }

    /// Drop everything queued and start a new stream (barge-in).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.resampler.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sine(hz: f64, rate: u32, secs: f64, amp: f64) -> Vec<f32> {
        let n = (f64::from(rate) * secs) as usize;
        (0..n)
            .map(|i| {
                (amp * (2.0 * std::f64::consts::PI * hz * i as f64 / f64::from(rate)).sin()) as f32
            })
            .collect()
    }

    /// The amplitude of the `hz` component (Goertzel).
    fn goertzel(x: &[f32], hz: f64, rate: u32) -> f64 {
        let w = 2.0 * std::f64::consts::PI * hz / f64::from(rate);
        let coeff = 2.0 * w.cos();
        let (mut s1, mut s2) = (0.0f64, 0.0f64);
        for &v in x {
            let s = f64::from(v) + coeff * s1 - s2;
            s2 = s1;
            s1 = s;
        }
        let power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
        2.0 * power.max(0.0).sqrt() / x.len() as f64
    }

    fn rms(x: &[f32]) -> f64 {
        (x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len().max(1) as f64).sqrt()
    }

    fn whole(from: u32, to: u32, x: &[f32]) -> Vec<f32> {
        let mut r = Resampler::new(from, to);
        let mut out = Vec::new();
        r.push(x, &mut out);
        r.finish(&mut out);
        out
    }

    /// The middle of a signal, away from the edges' transients.
    fn middle(x: &[f32]) -> &[f32] {
        &x[x.len() / 4..x.len() * 3 / 4]
    }

    const PAIRS: [(u32, u32); 6] = [
        (48_000, 16_000),
        (22_050, 48_000),
        (24_000, 48_000),
        (16_000, 48_000),
        (44_100, 48_000),
        (44_100, 16_000),
    ];

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_samples_bit_for_bit(
            pair in 0..PAIRS.len(),
            signal in proptest::collection::vec(-1.0f32..1.0, 0..3000),
            cuts in proptest::collection::vec(0usize..700, 0..12),
        ) {
            let (from, to) = PAIRS[pair];
            let expected = whole(from, to, &signal);
            let mut r = Resampler::new(from, to);
            let mut out = Vec::new();
            let mut rest = &signal[..];
            for cut in cuts {
                let (chunk, tail) = rest.split_at(cut.min(rest.len()));
                r.push(chunk, &mut out);
                rest = tail;
            }
            r.push(rest, &mut out);
            r.finish(&mut out);
            let bits = |v: &[f32]| v.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&out), bits(&expected));
            prop_assert_eq!(out.len() as u64, r.output_len(signal.len() as u64));
        }

        #[test]
        fn the_output_length_is_the_input_length_times_the_ratio_rounded_up(
            pair in 0..PAIRS.len(),
            n in 0usize..5000,
        ) {
            let (from, to) = PAIRS[pair];
            let out = whole(from, to, &vec![0.25; n]);
            let expected = (n as u64 * u64::from(to)).div_ceil(u64::from(from));
            prop_assert_eq!(out.len() as u64, expected);
        }
    }

    #[test]
    fn equal_rates_pass_samples_through_unchanged() {
        let x = sine(440.0, 16_000, 0.1, 0.5);
        assert_eq!(whole(16_000, 16_000, &x), x);
        assert_eq!(whole(48_000, 48_000, &x), x);
    }

    #[test]
    fn a_stream_after_finish_or_reset_starts_afresh() {
        let x = sine(300.0, 22_050, 0.05, 0.5);
        let first = whole(22_050, 48_000, &x);
        let mut r = Resampler::new(22_050, 48_000);
        let mut out = Vec::new();
        r.push(&x, &mut out);
        r.finish(&mut out);
        out.clear();
        r.push(&[0.9; 77], &mut out);
        r.reset();
        out.clear();
        r.push(&x, &mut out);
        r.finish(&mut out);
        assert_eq!(out, first);
    }

    #[test]
    fn a_1khz_tone_keeps_its_frequency_and_amplitude_from_48k_to_16k() {
        let x = sine(1000.0, 48_000, 1.0, 0.5);
        let y = whole(48_000, 16_000, &x);
        assert_eq!(y.len(), 16_000);
        let mid = middle(&y);
        let at_1k = goertzel(mid, 1000.0, 16_000);
        assert!((at_1k - 0.5).abs() < 0.01, "1 kHz amplitude {at_1k}");
        assert!(goertzel(mid, 1200.0, 16_000) < 0.01);
        // Zero crossings: 2 per cycle, 1000 cycles per second.
        let crossings = mid
            .windows(2)
            .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
            .count();
        let expected = 2.0 * 1000.0 * mid.len() as f64 / 16_000.0;
        assert!(
            (crossings as f64 - expected).abs() <= 2.0,
            "{crossings} vs {expected}"
        );
        // And it lines up in time: output k is input 3k.
        for k in (4000..12_000).step_by(997) {
            assert!(
                (y[k] - x[3 * k]).abs() < 0.01,
                "sample {k}: {} vs {}",
                y[k],
                x[3 * k]
            );
        }
    }

    #[test]
    fn a_10khz_tone_at_48k_is_strongly_attenuated_at_16k() {
        let x = sine(10_000.0, 48_000, 1.0, 0.5);
        let y = whole(48_000, 16_000, &x);
        // 10 kHz would fold to 6 kHz.
        let level = rms(middle(&y)) / rms(&x);
        assert!(level < 1e-3, "alias level {level} (want below -60 dB)");
        assert!(goertzel(middle(&y), 6000.0, 16_000) < 5e-4);
    }

    #[test]
    fn a_440hz_tone_survives_22050_to_48000() {
        let x = sine(440.0, 22_050, 1.0, 0.5);
        let y = whole(22_050, 48_000, &x);
        assert_eq!(y.len(), 48_000);
        let mid = middle(&y);
        let at = goertzel(mid, 440.0, 48_000);
        assert!((at - 0.5).abs() < 0.01, "440 Hz amplitude {at}");
        assert!(goertzel(mid, 880.0, 48_000) < 1e-3);
        assert!(
            goertzel(mid, 22_050.0 - 440.0, 48_000) < 1e-3,
            "image of the tone"
        );
    }

    #[test]
    fn i16_and_f32_convert_both_ways_exactly_and_clamp() {
        let all: Vec<i16> = (i16::MIN..=i16::MAX).step_by(7).chain([i16::MAX]).collect();
        assert_eq!(f32_to_i16(&i16_to_f32(&all)), all);
        assert_eq!(
            f32_to_i16(&[2.0, -2.0, f32::NAN, 0.5 / 32_768.0]),
            [32_767, -32_768, 0, 1]
        );
        assert_eq!(
            downmix_stereo_i16(&[16_384, -16_384, 16_384, 16_384, 5]),
            [0.0, 0.5]
        );
    }

    #[test]
    fn hearing_gives_whole_16k_frames_and_carries_the_rest() {
        let mut hearing = Hearing::new();
        // 20 ms of 48 kHz stereo, split oddly (even mid-stereo-pair).
        let frame: Vec<i16> = (0..PLAY_FRAME * 5)
            .map(|i| ((i / 2) % 200) as i16 * 50)
            .collect();
        let mut frames = Vec::new();
        for chunk in frame.chunks(777) {
            frames.extend(hearing.push(chunk));
        }
        assert!(frames.iter().all(|f| f.len() == HEAR_FRAME));
        // 100 ms in: 4 whole frames out, the rest waits for the filter's lookahead.
        assert_eq!(frames.len(), 4);
        let more = hearing.push(&vec![0; PLAY_FRAME]);
        assert_eq!(more.len(), 1);
        // Same as resampling the downmix in one piece.
        let mono = downmix_stereo_i16(&frame);
        let mut r = Resampler::new(PLAY_RATE, HEAR_RATE);
        let mut out = Vec::new();
        r.push(&mono, &mut out);
        let want = f32_to_i16(&out);
        let got: Vec<i16> = frames.concat();
        assert_eq!(got[..], want[..got.len()]);
    }

    #[test]
    fn playout_gives_whole_stereo_frames_and_pads_the_last_with_silence() {
        let mut play = Playout::new(24_000);
        // 50 ms at 24 kHz: 2.5 frames at 48 kHz.
        let tone: Vec<i16> = f32_to_i16(&sine(440.0, 24_000, 0.05, 0.5));
        play.push(&tone);
        assert_eq!(play.pending_frames(), 2);
        let first = play.pop().unwrap_or_default();
        assert_eq!(first.len(), PLAY_FRAME);
        // Stereo: left equals right.
        assert!(first.chunks_exact(2).all(|lr| lr[0] == lr[1]));
        play.finish();
        assert_eq!(play.pending_frames(), 2);
        let _second = play.pop();
        let last = play.pop().unwrap_or_default();
        assert_eq!(last.len(), PLAY_FRAME);
        // 2400 stereo pairs in all: the last frame holds 480 pairs, then silence.
        assert!(last[960..].iter().all(|&s| s == 0.0));
        assert!(last[..960].iter().any(|&s| s != 0.0));
        assert_eq!(play.pop(), None);
    }

    #[test]
    fn clearing_playout_drops_what_is_queued() {
        let mut play = Playout::new(16_000);
        play.push(&vec![1000; 16_000]);
        assert!(play.pending_frames() > 40);
        play.clear();
        assert_eq!(play.pending_frames(), 0);
        assert_eq!(play.pop(), None);
        play.push(&vec![1000; 320]);
        play.finish();
        assert_eq!(play.pending_frames(), 1);
    }
}
