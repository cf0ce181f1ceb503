//! End of utterance, per speaker, counted in audio time.
//!
//! One [`Endpointer`] per speaker takes that speaker's 20 ms frames (or a silent tick
//! when Discord sent nothing) and says when speech started, when an utterance is
//! complete, and when a burst was too short to be speech.

use std::collections::VecDeque;
use std::time::Duration;

use super::audio::{FRAME, HEAR_FRAME};
use super::vad::VoiceDetector;
use crate::config::VoiceSettings;

/// Voiced frames in a row that confirm speech has started (40 ms).
const ONSET_FRAMES: u64 = 2;
/// Audio kept from before the onset (200 ms).
const PRE_ROLL_FRAMES: usize = 10;
/// The detector confirms speech on its voiced part; an unvoiced lead-in ("s" of
/// "stop", "h" of "hello") of up to this many frames just before it, clearly louder
/// than the quiet before, counts as speech too (100 ms).
const MAX_LEAD_FRAMES: usize = 5;
/// A lead-in frame stands this many times (in RMS) above the quietest frame kept
/// from before it (10 dB)…
const LEAD_OVER_QUIET: f64 = 3.16;
/// …and above this RMS (about -60 dB below full scale).
const LEAD_MIN_RMS: f64 = 33.0;
/// Frames kept while idle.
const RECENT_FRAMES: usize = PRE_ROLL_FRAMES + MAX_LEAD_FRAMES + ONSET_FRAMES as usize;
/// Silence kept after the last voiced frame (200 ms).
const TAIL_FRAMES: u64 = 10;
/// An utterance this long commits even while the speaker is still talking.
pub const MAX_UTTERANCE: Duration = Duration::from_secs(30);

/// Words after which a pause is a breath, not the end: "and", "but", "um"…
pub const TRAILING_WORDS: &[&str] = &[
    "and", "but", "or", "nor", "so", "um", "umm", "uh", "uhh", "er", "erm", "hmm", "because",
    "cause", "then", "like", "with", "to", "the", "a", "an", "of", "for", "if", "than", "plus",
    "also", "my", "your", "our", "their",
];

/// Whether an utterance's last word (punctuation stripped, case-folded) is a trailing
/// word, so the speaker is likely to go on (the room waits the unsure time).
pub fn ends_unsure(text: &str) -> bool {
    let Some(last) = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .rfind(|w| !w.is_empty())
    else {
        return false;
    };
    let last = last.to_lowercase();
    TRAILING_WORDS.contains(&last.as_str())
}

/// When an utterance ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointSettings {
    /// Silence after the last speech that commits an utterance (1.0 s).
    pub silence: Duration,
    /// The silence that commits when unsure: speech shorter than `short_speech`
    /// (2.0 s).
    pub unsure: Duration,
    /// Bursts with less speech than this are dropped (0.35 s).
    pub min_speech: Duration,
    /// Speech shorter than this is unsure (1.2 s).
    pub short_speech: Duration,
}

impl Default for EndpointSettings {
    fn default() -> Self {
        EndpointSettings {
            silence: Duration::from_millis(1000),
            unsure: Duration::from_millis(2000),
            min_speech: Duration::from_millis(350),
            short_speech: Duration::from_millis(1200),
        }
    }
}

impl EndpointSettings {
    /// From the `voice.*` settings; a value that is not a valid duration (negative,
    /// not a number) keeps its default. `short_speech` stays 1.2 s.
    pub fn from_voice(v: &VoiceSettings) -> Self {
        let d = EndpointSettings::default();
        let secs = |x: f64, default: Duration| Duration::try_from_secs_f64(x).unwrap_or(default);
        EndpointSettings {
            silence: secs(v.silence_commit, d.silence),
            unsure: secs(v.unsure_commit, d.unsure),
            min_speech: secs(v.min_speech, d.min_speech),
            short_speech: d.short_speech,
        }
    }
}

/// One complete utterance from one speaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Utterance {
    /// 16 kHz mono: up to 200 ms before the onset, the speech, and up to 200 ms of
    /// the silence after it.
    pub pcm: Vec<i16>,
    /// From the onset to the end of the last voiced frame.
    pub speech: Duration,
    /// The frame index of the onset (the first voiced frame).
    pub started_at: u64,
    /// The frame index at which it committed.
    pub ended_at: u64,
}

/// What one frame told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// Speech started (confirmed): stop talking over them.
    Started,
    /// An utterance is complete.
    Committed(Utterance),
    /// What started was too short to be speech (a cough, a click): nothing to hear.
    Dropped,
}

/// An utterance being heard.
#[derive(Debug)]
struct Open {
    /// The first voiced frame.
    onset: u64,
    /// The last voiced frame.
    last_voiced: u64,
    /// Audio since the pre-roll began.
    pcm: Vec<i16>,
    /// The frame index of `pcm`'s first frame, and where each frame ends in `pcm`.
    first_frame: u64,
    ends: Vec<usize>,
}

impl Open {
    fn add(&mut self, frame: &[i16]) {
        self.pcm.extend_from_slice(frame);
        self.ends.push(self.pcm.len());
    }
}

/// One speaker's end of utterance, in audio time: each [`Endpointer::push`] or
/// [`Endpointer::silence`] is one 20 ms frame.
pub struct Endpointer {
    settings: EndpointSettings,
    detector: Box<dyn VoiceDetector>,
    /// Frames seen.
    now: u64,
    /// While idle: the latest frames (pre-roll and a possible onset).
    recent: VecDeque<Vec<i16>>,
    /// While idle: voiced frames in a row, up to the latest.
    run: u64,
    open: Option<Open>,
    silent: Vec<i16>,
}

impl std::fmt::Debug for Endpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpointer")
            .field("settings", &self.settings)
            .field("now", &self.now)
            .field("in_speech", &self.in_speech())
            .finish_non_exhaustive()
    }
}

fn rms(frame: &[i16]) -> f64 {
    let sum: f64 = frame.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / frame.len().max(1) as f64).sqrt()
}

/// How many of the last `frames` (those just before a confirmed onset, oldest first)
/// are an unvoiced lead-in: up to [`MAX_LEAD_FRAMES`] in a row at the end, each well
/// above the quietest frame before them.
fn lead_in<'a>(frames: impl Iterator<Item = &'a Vec<i16>>) -> usize {
    let levels: Vec<f64> = frames.map(|f| rms(f)).collect();
    let mut lead = 0;
    for (i, &level) in levels.iter().enumerate().rev().take(MAX_LEAD_FRAMES) {
        let quiet = levels[..i].iter().copied().fold(f64::INFINITY, f64::min);
        let quiet = if quiet.is_finite() { quiet } else { 0.0 };
        if level < LEAD_MIN_RMS || level < quiet * LEAD_OVER_QUIET {
            break;
        }
        lead += 1;
    }
    lead
}

/// The length of `frames` frames.
fn span(frames: u64) -> Duration {
    FRAME * u32::try_from(frames).unwrap_or(u32::MAX)
}

impl Endpointer {
    /// An endpointer with these settings and this speaker's own detector.
    pub fn new(settings: EndpointSettings, detector: Box<dyn VoiceDetector>) -> Self {
        Endpointer {
            settings,
            detector,
            now: 0,
            recent: VecDeque::with_capacity(RECENT_FRAMES),
            run: 0,
            open: None,
            silent: vec![0; HEAR_FRAME],
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> EndpointSettings {
        self.settings
    }

    /// Change the settings; an utterance being heard ends by the new ones.
    pub fn set_settings(&mut self, settings: EndpointSettings) {
        self.settings = settings;
    }

    /// One 20 ms frame from this speaker ([`HEAR_FRAME`] samples of 16 kHz mono).
    pub fn push(&mut self, frame: &[i16]) -> Option<Heard> {
        let at = self.now;
        self.now += 1;
        let voiced = self.detector.is_speech(frame);
        let Some(open) = self.open.as_mut() else {
            return self.idle(at, frame, voiced);
        };
        open.add(frame);
        if voiced {
            open.last_voiced = at;
        }
        let (onset, last_voiced) = (open.onset, open.last_voiced);
        let speech = span(last_voiced - onset + 1);
        let quiet = span(at - last_voiced);
        let wait = if speech < self.settings.short_speech {
            self.settings.unsure
        } else {
            self.settings.silence
        };
        if quiet >= wait || span(at - onset + 1) >= MAX_UTTERANCE {
            return Some(self.end(at));
        }
        None
    }

    /// A tick with nothing from this speaker (Discord sends nothing while someone is
    /// silent): a silent frame.
    pub fn silence(&mut self) -> Option<Heard> {
        let silent = std::mem::take(&mut self.silent);
        let heard = self.push(&silent);
        self.silent = silent;
        heard
    }

    /// Whether an utterance has started and not yet ended.
    pub fn in_speech(&self) -> bool {
        self.open.is_some()
    }

    /// How long the open utterance has been quiet since its last voiced frame (zero
    /// when none is open).
    pub fn quiet_for(&self) -> Duration {
        self.open.as_ref().map_or(Duration::ZERO, |o| {
            FRAME * self.now.saturating_sub(o.last_voiced + 1) as u32
        })
    }

    /// The speech heard so far in the open utterance: its first voiced frame to its
    /// last (zero when none is open).
    pub fn speech_so_far(&self) -> Duration {
        self.open.as_ref().map_or(Duration::ZERO, |o| {
            FRAME * (o.last_voiced.saturating_sub(o.onset) + 1) as u32
        })
    }

    /// Frames seen (audio time, in frames).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Forget the utterance being heard and the detector's state; audio time keeps
    /// counting.
    pub fn reset(&mut self) {
        self.open = None;
        self.recent.clear();
        self.run = 0;
        self.detector.reset();
    }

    /// A frame while no utterance is open: watch for an onset.
    fn idle(&mut self, at: u64, frame: &[i16], voiced: bool) -> Option<Heard> {
        if self.recent.len() == RECENT_FRAMES {
            self.recent.pop_front();
        }
        self.recent.push_back(frame.to_vec());
        self.run = if voiced { self.run + 1 } else { 0 };
        if self.run < ONSET_FRAMES {
            return None;
        }
        let run = usize::try_from(self.run).unwrap_or(usize::MAX);
        let before = self.recent.len().saturating_sub(run);
        let lead = lead_in(self.recent.range(..before));
        let onset = at + 1 - self.run - lead as u64;
        // Keep the pre-roll before the onset, the lead-in and the run.
        let skip = before.saturating_sub(lead + PRE_ROLL_FRAMES);
        let mut open = Open {
            onset,
            last_voiced: at,
            pcm: Vec::with_capacity(HEAR_FRAME * 50 * 5),
            first_frame: at + 1 - (self.recent.len() - skip) as u64,
            ends: Vec::new(),
        };
        for f in self.recent.drain(..).skip(skip) {
            open.add(&f);
        }
        self.run = 0;
        self.open = Some(open);
        Some(Heard::Started)
    }

    /// The open utterance ends at frame `at`: committed, or dropped when too short.
    fn end(&mut self, at: u64) -> Heard {
        let Some(open) = self.open.take() else {
            return Heard::Dropped;
        };
        let speech = span(open.last_voiced - open.onset + 1);
        if speech < self.settings.min_speech {
            return Heard::Dropped;
        }
        let keep_to = (open.last_voiced + TAIL_FRAMES).min(at);
        let frames_kept = usize::try_from(keep_to + 1 - open.first_frame).unwrap_or(usize::MAX);
        let cut = match frames_kept.checked_sub(1).and_then(|i| open.ends.get(i)) {
            Some(&end) => end,
            None => open.pcm.len(),
        };
        let mut pcm = open.pcm;
        pcm.truncate(cut);
        Heard::Committed(Utterance {
            pcm,
            speech,
            started_at: open.onset,
            ended_at: at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speech::test_audio::{espeak, frames, noise, silence};
    use crate::speech::vad::detector;

    /// Every event with the frame index it came on.
    fn feed(ep: &mut Endpointer, pcm: &[i16]) -> Vec<(u64, Heard)> {
        frames(pcm)
            .iter()
            .filter_map(|f| {
                let at = ep.now();
                ep.push(f).map(|h| (at, h))
            })
            .collect()
    }

    fn endpointer() -> Endpointer {
        Endpointer::new(EndpointSettings::default(), detector())
    }

    fn committed(events: &[(u64, Heard)]) -> Vec<Utterance> {
        events
            .iter()
            .filter_map(|(_, h)| match h {
                Heard::Committed(u) => Some(u.clone()),
                _ => None,
            })
            .collect()
    }

    fn starts(events: &[(u64, Heard)]) -> Vec<u64> {
        events
            .iter()
            .filter(|(_, h)| *h == Heard::Started)
            .map(|(at, _)| *at)
            .collect()
    }

    /// The first and last frames of `pcm` that carry sound (a peak above `level`).
    fn sound_span(pcm: &[i16], level: u16) -> (u64, u64) {
        let loud: Vec<bool> = frames(pcm)
            .iter()
            .map(|f| f.iter().any(|s| s.unsigned_abs() > level))
            .collect();
        let first = loud.iter().position(|&l| l).unwrap_or(0) as u64;
        let last = loud.iter().rposition(|&l| l).unwrap_or(0) as u64;
        (first, last)
    }

    fn mix(a: &[i16], b: &[i16]) -> Vec<i16> {
        a.iter().zip(b).map(|(x, y)| x.saturating_add(*y)).collect()
    }

    fn near(got: u64, want: u64, slack: u64, what: &str) {
        assert!(
            got.abs_diff(want) <= slack,
            "{what}: frame {got}, expected {want} ± {slack}"
        );
    }

    const SENTENCE: &str = "Hello there, what time is it in Tokyo right now?";

    #[test]
    fn a_phrase_commits_after_one_second_of_silence() {
        let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
        let (first, last) = sound_span(&pcm, 0);
        let events = feed(&mut endpointer(), &pcm);
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        let u = &utterances[0];
        near(u.ended_at, last + 50, 2, "commit");
        near(u.started_at, first, 2, "onset");
        let speech_frames = (u.speech.as_millis() / 20) as u64;
        near(speech_frames, last - first + 1, 3, "speech length");
        // Pre-roll (10 frames), the speech, and a 200 ms tail.
        let frames_kept = (u.pcm.len() / HEAR_FRAME) as u64;
        near(frames_kept, speech_frames + 20, 1, "kept audio");
        assert_eq!(starts(&events).len(), 1);
    }

    #[test]
    fn a_phrase_in_noise_commits_after_one_second_of_noise() {
        let phrase = espeak(SENTENCE);
        let pcm = [
            noise(0.6, 300, 1),
            mix(&phrase, &noise(9.0, 300, 2)),
            noise(3.0, 300, 3),
        ]
        .concat();
        let first = 30;
        let (_, phrase_last) = sound_span(&phrase, 0);
        let last = first + phrase_last;
        let events = feed(&mut endpointer(), &pcm);
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        near(utterances[0].ended_at, last + 50, 2, "commit");
        near(utterances[0].started_at, first, 3, "onset");
    }

    #[test]
    fn speech_onset_is_confirmed_within_three_frames() {
        for text in ["No, wait!", "Okay, listen", "Manami, hold on", "yes please"] {
            let pcm = [silence(0.4), espeak(text), silence(2.5)].concat();
            let (first, _) = sound_span(&pcm, 0);
            let events = feed(&mut endpointer(), &pcm);
            let started = starts(&events);
            assert_eq!(started.len(), 1, "{text:?}: {events:?}");
            assert!(
                started[0] >= first && started[0] < first + 3,
                "{text:?}: started on frame {}, sound from frame {first}",
                started[0]
            );
        }
    }

    #[test]
    fn an_unvoiced_lead_in_counts_as_speech_from_its_first_frame() {
        // The "s" of "stop" is confirmed with the vowel after it, and the utterance
        // (and its length) still begins at the "s", so "stop" is not dropped as short.
        for text in ["Stop, stop!", "stop"] {
            let pcm = [silence(0.4), espeak(text), silence(2.5)].concat();
            let (first, last) = sound_span(&pcm, 0);
            let events = feed(&mut endpointer(), &pcm);
            let started = starts(&events);
            assert_eq!(started.len(), 1, "{text:?}: {events:?}");
            assert!(
                started[0] < first + 7,
                "{text:?}: started on frame {}",
                started[0]
            );
            let u = committed(&events);
            assert_eq!(u.len(), 1, "{text:?}: {events:?}");
            near(u[0].started_at, first, 1, "onset");
            near(
                (u[0].speech.as_millis() / 20) as u64,
                last - first + 1,
                2,
                "length",
            );
        }
    }

    #[test]
    fn a_short_phrase_commits_after_two_seconds_of_silence() {
        // espeak's bare "yes" is 0.34 s of sound, under the 0.35 s minimum.
        let phrase = espeak("yes please");
        let pcm = [silence(0.5), phrase, silence(4.0)].concat();
        let (_, last) = sound_span(&pcm, 0);
        let events = feed(&mut endpointer(), &pcm);
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        let u = &utterances[0];
        assert!(u.speech < Duration::from_millis(1200), "{:?}", u.speech);
        near(u.ended_at, last + 100, 2, "commit");
    }

    #[test]
    fn a_cough_shorter_than_the_minimum_commits_nothing() {
        let mut syllable: Vec<i16> = espeak("pah")
            .iter()
            .map(|&s| (i32::from(s) * 8).clamp(-32_768, 32_767) as i16)
            .collect();
        let (first, _) = sound_span(&syllable, 0);
        syllable.drain(..first as usize * HEAR_FRAME);
        syllable.truncate(3200);
        let pcm = [
            silence(0.5),
            noise(0.2, 12_000, 4),
            silence(2.5),
            syllable,
            silence(2.5),
        ]
        .concat();
        let mut ep = endpointer();
        let events = feed(&mut ep, &pcm);
        assert!(committed(&events).is_empty(), "{events:?}");
        // Whatever started was dropped.
        let dropped = events.iter().filter(|(_, h)| *h == Heard::Dropped).count();
        assert_eq!(starts(&events).len(), dropped, "{events:?}");
        assert!(!ep.in_speech());
    }

    #[test]
    fn two_speakers_fed_interleaved_are_kept_apart() {
        let long = espeak(SENTENCE);
        let short = espeak("Sounds good to me");
        // Bob starts 0.8 s after Alice; each sends nothing while silent.
        let alice = [silence(0.2), long.clone()].concat();
        let bob = [silence(1.0), short.clone()].concat();
        let (alice_frames, bob_frames) = (frames(&alice), frames(&bob));
        let mut a = endpointer();
        let mut b = endpointer();
        let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
        for tick in 0..alice_frames.len().max(bob_frames.len()) + 200 {
            let at = tick as u64;
            let heard_a = match alice_frames.get(tick) {
                Some(f) => a.push(f),
                None => a.silence(),
            };
            let heard_b = match bob_frames.get(tick) {
                Some(f) => b.push(f),
                None => b.silence(),
            };
            got_a.extend(heard_a.map(|h| (at, h)));
            got_b.extend(heard_b.map(|h| (at, h)));
        }
        let (ua, ub) = (committed(&got_a), committed(&got_b));
        assert_eq!((ua.len(), ub.len()), (1, 1), "{got_a:?} {got_b:?}");
        let (a_first, a_last) = sound_span(&alice, 0);
        let (b_first, b_last) = sound_span(&bob, 0);
        near(ua[0].started_at, a_first, 2, "Alice's onset");
        near(ub[0].started_at, b_first, 2, "Bob's onset");
        near(ua[0].ended_at, a_last + 50, 2, "Alice's commit");
        let b_wait = if ub[0].speech < Duration::from_millis(1200) {
            100
        } else {
            50
        };
        near(ub[0].ended_at, b_last + b_wait, 2, "Bob's commit");
        near(
            (ua[0].speech.as_millis() / 20) as u64,
            a_last - a_first + 1,
            3,
            "Alice's length",
        );
        near(
            (ub[0].speech.as_millis() / 20) as u64,
            b_last - b_first + 1,
            3,
            "Bob's length",
        );
    }

    #[test]
    fn a_short_pause_mid_sentence_keeps_one_utterance() {
        let first = espeak("I was thinking about the weather");
        let second = espeak("and whether it will rain tomorrow");
        let pcm = [
            silence(0.3),
            first.clone(),
            silence(0.6),
            second,
            silence(3.0),
        ]
        .concat();
        let (start, last) = sound_span(&pcm, 0);
        let events = feed(&mut endpointer(), &pcm);
        assert_eq!(starts(&events).len(), 1, "{events:?}");
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        near(utterances[0].started_at, start, 2, "onset");
        near(utterances[0].ended_at, last + 50, 2, "commit");
    }

    #[test]
    fn a_shorter_silence_setting_moves_the_commit() {
        let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
        let (_, last) = sound_span(&pcm, 0);
        let settings = EndpointSettings {
            silence: Duration::from_millis(500),
            ..EndpointSettings::default()
        };
        let events = feed(&mut Endpointer::new(settings, detector()), &pcm);
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        near(utterances[0].ended_at, last + 25, 2, "commit");

        // And a longer unsure wait moves a short phrase's commit.
        let short = [silence(0.5), espeak("yes please"), silence(4.0)].concat();
        let (_, last) = sound_span(&short, 0);
        let settings = EndpointSettings {
            unsure: Duration::from_millis(3000),
            ..EndpointSettings::default()
        };
        let events = feed(&mut Endpointer::new(settings, detector()), &short);
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        near(utterances[0].ended_at, last + 150, 2, "unsure commit");
    }

    /// A detector that hears speech in any frame with sound: the rules alone.
    struct Loud;

    impl VoiceDetector for Loud {
        fn is_speech(&mut self, frame: &[i16]) -> bool {
            frame.iter().any(|&s| s != 0)
        }
    }

    fn voiced(n: usize) -> Vec<Vec<i16>> {
        vec![vec![1000; HEAR_FRAME]; n]
    }

    fn run(ep: &mut Endpointer, voiced_frames: usize, silent_frames: usize) -> Vec<(u64, Heard)> {
        let mut events = Vec::new();
        for f in voiced(voiced_frames) {
            let at = ep.now();
            events.extend(ep.push(&f).map(|h| (at, h)));
        }
        for _ in 0..silent_frames {
            let at = ep.now();
            events.extend(ep.silence().map(|h| (at, h)));
        }
        events
    }

    #[test]
    fn a_very_long_utterance_commits_at_thirty_seconds() {
        let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
        let events = run(&mut ep, 1600, 0);
        let utterances = committed(&events);
        assert_eq!(utterances.len(), 1, "{events:?}");
        assert_eq!(utterances[0].ended_at, 1499);
        assert_eq!(utterances[0].speech, MAX_UTTERANCE);
        // The talk goes on: a new utterance has started.
        assert_eq!(starts(&events), [1, 1501]);
        assert!(ep.in_speech());
    }

    #[test]
    fn speech_just_under_the_minimum_is_dropped_and_just_over_is_kept() {
        // 0.34 s of speech: dropped after the unsure wait.
        let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
        let events = run(&mut ep, 17, 150);
        assert_eq!(events, [(1, Heard::Started), (16 + 100, Heard::Dropped)]);
        // 0.36 s: committed.
        let events = run(&mut ep, 18, 150);
        assert_eq!(committed(&events).len(), 1, "{events:?}");
    }

    #[test]
    fn speech_longer_than_short_speech_waits_only_the_silence() {
        let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
        let events = run(&mut ep, 60, 120);
        let u = committed(&events);
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].ended_at, 59 + 50);
        let events = run(&mut ep, 59, 120);
        let u = committed(&events);
        assert_eq!(u[0].ended_at, u[0].started_at + 58 + 100);
    }

    #[test]
    fn the_utterance_keeps_200ms_before_and_200ms_after_the_speech() {
        let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
        let mut events = Vec::new();
        for _ in 0..30 {
            events.extend(ep.silence());
        }
        let mut marked = voiced(70);
        marked[0][0] = 7;
        for f in &marked {
            events.extend(ep.push(f));
        }
        for _ in 0..60 {
            events.extend(ep.silence());
        }
        let Some(Heard::Committed(u)) = events.last() else {
            panic!("{events:?}")
        };
        assert_eq!(u.pcm.len(), (10 + 70 + 10) * HEAR_FRAME);
        assert_eq!(u.pcm[10 * HEAR_FRAME], 7);
        assert_eq!((u.started_at, u.ended_at), (30, 30 + 69 + 50));
        assert_eq!(u.speech, Duration::from_millis(1400));
    }

    #[test]
    fn new_settings_apply_to_the_utterance_being_heard() {
        let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
        let events = run(&mut ep, 80, 10);
        assert_eq!(starts(&events), [1]);
        ep.set_settings(EndpointSettings {
            silence: Duration::from_millis(300),
            ..EndpointSettings::default()
        });
        let events = run(&mut ep, 0, 10);
        let u = committed(&events);
        assert_eq!(u.len(), 1, "{events:?}");
        assert_eq!(u[0].ended_at, 79 + 15);
    }

    #[test]
    fn a_reset_forgets_the_utterance_but_not_the_clock() {
        let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
        run(&mut ep, 40, 0);
        assert!(ep.in_speech());
        ep.reset();
        assert!(!ep.in_speech());
        assert_eq!(ep.now(), 40);
        assert!(committed(&run(&mut ep, 0, 200)).is_empty());
        assert_eq!(ep.now(), 240);
    }

    #[test]
    fn settings_come_from_the_voice_settings() {
        let v = VoiceSettings {
            silence_commit: 0.5,
            unsure_commit: 1.5,
            min_speech: 0.2,
            ..VoiceSettings::default()
        };
        let s = EndpointSettings::from_voice(&v);
        assert_eq!(s.silence, Duration::from_millis(500));
        assert_eq!(s.unsure, Duration::from_millis(1500));
        assert_eq!(s.min_speech, Duration::from_millis(200));
        assert_eq!(s.short_speech, Duration::from_millis(1200));
        assert_eq!(
            EndpointSettings::from_voice(&VoiceSettings::default()),
            EndpointSettings::default()
        );
        let bad = VoiceSettings {
            silence_commit: -1.0,
            unsure_commit: f64::NAN,
            ..VoiceSettings::default()
        };
        assert_eq!(
            EndpointSettings::from_voice(&bad),
            EndpointSettings::default()
        );
    }

    #[test]
    fn a_trailing_word_at_the_end_makes_it_unsure() {
        assert!(ends_unsure("I went to the store and"));
        assert!(ends_unsure("so I was thinking, um..."));
        assert!(ends_unsure("Because AND,"));
        assert!(ends_unsure("call my mom but"));
        assert!(!ends_unsure("What time is it?"));
        assert!(!ends_unsure("and that's all"));
        assert!(!ends_unsure(""));
        assert!(!ends_unsure("... !"));
    }
}
