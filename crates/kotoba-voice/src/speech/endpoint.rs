//! End of utterance, per speaker, counted in audio time.
//!
//! One [`Endpointer`] per speaker takes that speaker's 20 ms frames (or a silent tick
//! when Discord sent nothing) and says when speech started, when an utterance is
//! complete, and when a burst was too short to be speech.

use std::collections::VecDeque;
use std::time::Duration;

use super::audio::{FRAME, HEAR_FRAME};
use super::vad::VoiceDetector;
use kotoba_core::config::VoiceSettings;

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

/// Last words that leave a request open even without a trailing word: a preposition,
/// a verb or a question word waiting for what follows ("what about", "I want").
const OPEN_ENDS: &[&str] = &[
    "about", "at", "in", "on", "from", "into", "onto", "by", "is", "are", "was", "were", "want",
    "need", "would", "could", "can", "will", "what", "where", "when", "how", "who", "which",
    "that", "this", "i", "we", "you", "it's", "let's", "please",
];

/// Whether `text` (what was said so far, as recognised) is a complete request: it ends
/// a sentence or a question (".", "?" or "!", not an ellipsis) and its last word is
/// neither a trailing word ([`ends_unsure`]) nor one that leaves it open ("about",
/// "want", "what"…). Words without punctuation are never complete.
pub fn is_complete(text: &str) -> bool {
    let t = text.trim_end();
    if t.ends_with("...") || t.ends_with('…') || !t.ends_with(['.', '?', '!']) {
        return false;
    }
    if ends_unsure(t) {
        return false;
    }
    let last = t
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        .rfind(|w| !w.is_empty());
    last.is_some_and(|w| !OPEN_ENDS.contains(&w.to_lowercase().as_str()))
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
    /// A pause this long in an utterance says [`Heard::Paused`] with the audio so far,
    /// to be recognised early (0.3 s; zero: never).
    pub early_pause: Duration,
    /// The silence that commits once the words so far were found a complete request
    /// ([`Endpointer::complete_at`]; 0.6 s).
    pub early_commit: Duration,
}

impl Default for EndpointSettings {
    fn default() -> Self {
        EndpointSettings {
            silence: Duration::from_millis(1000),
            unsure: Duration::from_millis(2000),
            min_speech: Duration::from_millis(350),
            short_speech: Duration::from_millis(1200),
            early_pause: Duration::from_millis(200),
            early_commit: Duration::from_millis(600),
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
            early_pause: secs(v.early_pause, d.early_pause),
            early_commit: secs(v.early_commit, d.early_commit),
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
    /// The frame index at which it committed (for [`Heard::Paused`]: the frame of the
    /// pause).
    pub ended_at: u64,
}

impl Utterance {
    /// The frame index of its last voiced frame.
    pub fn last_voiced(&self) -> u64 {
        let frames = (self.speech.as_millis() / FRAME.as_millis()) as u64;
        self.started_at + frames.saturating_sub(1)
    }
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
    /// The open utterance has paused for `early_pause`: its audio so far (still open;
    /// it goes on if they speak again). Once per pause.
    Paused(Utterance),
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
    /// The words up to this last voiced frame were found a complete request: the
    /// early commit applies while no voice came after it.
    complete_at: Option<u64>,
    /// This utterance's short pause, when sooner than `early_pause`
    /// ([`Endpointer::pause_sooner`]).
    sooner: Option<Duration>,
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

/// Whether `pcm` holds any sound a recognizer could hear words in: an RMS over
/// [`LEAD_MIN_RMS`] (about -60 dB below full scale). Digital silence, and the
/// near-silence of a quiet line, have none.
pub fn has_sound(pcm: &[i16]) -> bool {
    rms(pcm) >= LEAD_MIN_RMS
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
        let wait = if open.complete_at == Some(last_voiced) {
            self.settings.early_commit
        } else if speech < self.settings.short_speech {
            self.settings.unsure
        } else {
            self.settings.silence
        };
        if quiet >= wait || span(at - onset + 1) >= MAX_UTTERANCE {
            return Some(self.end(at));
        }
        let early = match open.sooner {
            Some(d) => d.min(self.settings.early_pause),
            None => self.settings.early_pause,
        };
        if !early.is_zero()
            && quiet >= early
            && quiet - early < FRAME
            && speech >= self.settings.min_speech
        {
            return Some(Heard::Paused(self.so_far(at)));
        }
        None
    }

    /// The words up to last voiced frame `last_voiced` are a complete request: the
    /// open utterance commits at `early_commit` of silence, unless they spoke again
    /// since that frame (then this changes nothing).
    pub fn complete_at(&mut self, last_voiced: u64) {
        if let Some(open) = self.open.as_mut() {
            if open.last_voiced == last_voiced {
                open.complete_at = Some(last_voiced);
            }
        }
    }

    /// The open utterance pauses ([`Heard::Paused`]) after `pause` of quiet when that is
    /// sooner than `early_pause` (its words cost nothing more to ask for: a streamed
    /// recognizer has heard them); never when pauses are off (`early_pause` zero).
    pub fn pause_sooner(&mut self, pause: Duration) {
        if let Some(open) = self.open.as_mut() {
            open.sooner = Some(pause);
        }
    }

    /// The open utterance's last voiced frame, if one is open.
    pub fn last_voiced(&self) -> Option<u64> {
        self.open.as_ref().map(|o| o.last_voiced)
    }

    /// A tick with nothing from this speaker (Discord sends nothing while someone is
    /// silent): a silent frame.
    pub fn silence(&mut self) -> Option<Heard> {
        let silent = std::mem::take(&mut self.silent);
        let heard = self.push(&silent);
        self.silent = silent;
        heard
    }

    /// The open utterance's audio so far as a commit now would give it: from its
    /// pre-roll to at most [`TAIL_FRAMES`] after its last voiced frame, so a pause adds
    /// nothing more (empty when none is open).
    pub fn heard(&self) -> &[i16] {
        let Some(o) = self.open.as_ref() else {
            return &[];
        };
        let keep_to = (o.last_voiced + TAIL_FRAMES).min(self.now.saturating_sub(1));
        let frames = usize::try_from((keep_to + 1).saturating_sub(o.first_frame)).unwrap_or(0);
        match frames.checked_sub(1).and_then(|i| o.ends.get(i)) {
            Some(&end) => &o.pcm[..end.min(o.pcm.len())],
            None => &o.pcm,
        }
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
            complete_at: None,
            sooner: None,
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
        Heard::Committed(cut(open, at))
    }

    /// The open utterance as it stands at frame `at` (it stays open).
    fn so_far(&self, at: u64) -> Utterance {
        match &self.open {
            Some(open) => cut(
                Open {
                    pcm: open.pcm.clone(),
                    ends: open.ends.clone(),
                    ..*open
                },
                at,
            ),
            None => Utterance {
                pcm: Vec::new(),
                speech: Duration::ZERO,
                started_at: at,
                ended_at: at,
            },
        }
    }
}

/// `open` as an utterance ending at frame `at`: the pre-roll, the speech and up to
/// [`TAIL_FRAMES`] of the silence after it.
fn cut(open: Open, at: u64) -> Utterance {
    let speech = span(open.last_voiced - open.onset + 1);
    let keep_to = (open.last_voiced + TAIL_FRAMES).min(at);
    let frames_kept = usize::try_from(keep_to + 1 - open.first_frame).unwrap_or(usize::MAX);
    let end = match frames_kept.checked_sub(1).and_then(|i| open.ends.get(i)) {
        Some(&end) => end,
        None => open.pcm.len(),
    };
    let mut pcm = open.pcm;
    pcm.truncate(end);
    Utterance {
        pcm,
        speech,
        started_at: open.onset,
        ended_at: at,
    }
}

#[cfg(test)]
mod tests;
