//! Her voice: lines to say, in order → the spoken filter → synthesis (the next line is
//! synthesised while the one before it plays) → 48 kHz frames in a queue that the
//! room's clock hands to the [`AudioOut`](super::boundary::AudioOut). `hush` drops
//! everything at once (barge-in). The first sentence of an answer asked ahead can be
//! synthesised before it is certain ([`Speaker::prepare`]): held unplayed, it is taken
//! when that same line is said, and dropped otherwise.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::speech::audio::Playout;
use crate::speech::filter::{spoken, Sentences};
use crate::speech::tts::{Synthesizer, Voice};
use crate::speech::SpeechError;

/// What the speaker tells the room.
#[derive(Debug)]
pub(super) enum SpeakerNote {
    /// New frames are queued (the room hands them out at once when idle).
    Audio,
    /// A line's synthesis answered with its first audio after this long.
    Synthesised(std::time::Duration),
    /// Synthesis failed for a line (the room says so once in the text chat).
    Failed(SpeechError),
}

/// Frames waiting to be handed to the AudioOut.
pub(super) type FrameQueue = Arc<Mutex<VecDeque<Vec<f32>>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Aborts a spawned task when dropped (a hushed line's synthesis stops too).
struct Aborting<T>(JoinHandle<T>);

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A line synthesised ahead, unplayed.
struct Ready {
    /// Its words after the spoken filter (what the pipeline is given to say).
    words: String,
    synthesis: Synthesis,
}

/// The line made ready ahead, as the pipeline finds it.
enum Ahead {
    /// Being prepared: the answer's first sentence is not known yet.
    Waiting,
    /// Synthesis has begun.
    Ready(Ready),
    /// Nothing ahead, or it was taken or dropped: a late preparation is dropped.
    Closed,
}

type AheadSlot = Arc<Mutex<Ahead>>;

/// Her voice in one room.
pub(super) struct Speaker {
    synth: Arc<dyn Synthesizer>,
    notes: mpsc::UnboundedSender<SpeakerNote>,
    frames: FrameQueue,
    /// Lines accepted and not yet fully turned into frames.
    pending: Arc<AtomicUsize>,
    lines: Option<mpsc::UnboundedSender<String>>,
    task: Option<Aborting<()>>,
    /// Audio another voice made (a realtime model's answer, 24 kHz), being turned
    /// into frames as it streams in.
    stream: Option<Playout>,
    /// The first sentence of an answer asked ahead, synthesised unplayed; the
    /// pipeline takes it for its next line when the words are the same.
    ahead: AheadSlot,
    /// Finding and synthesising that sentence (dropped: cancelled).
    preparing: Option<Aborting<()>>,
}

impl Speaker {
    /// A quiet speaker using `synth`; notes go to `notes`.
    pub(super) fn new(
        synth: Arc<dyn Synthesizer>,
        notes: mpsc::UnboundedSender<SpeakerNote>,
    ) -> Self {
        Speaker {
            synth,
            notes,
            frames: Arc::new(Mutex::new(VecDeque::new())),
            pending: Arc::new(AtomicUsize::new(0)),
            lines: None,
            task: None,
            stream: None,
            ahead: Arc::new(Mutex::new(Ahead::Closed)),
            preparing: None,
        }
    }

    /// Synthesise the first sentence of `words` (an answer asked ahead, as it streams)
    /// now, held unplayed: if the next line said is that sentence, it plays at once;
    /// otherwise it is dropped unheard.
    pub(super) fn prepare(&mut self, mut words: watch::Receiver<String>) {
        self.unprepare();
        *lock(&self.ahead) = Ahead::Waiting;
        let slot = self.ahead.clone();
        let synth = self.synth.clone();
        self.preparing = Some(Aborting(tokio::spawn(async move {
            let Some(line) = first_sentence(&mut words).await else {
                return;
            };
            let words = spoken(&line);
            if words.trim().is_empty() {
                return;
            }
            let mut ahead = lock(&slot);
            if matches!(*ahead, Ahead::Waiting) {
                let synthesis = synthesise(&synth, words.clone());
                *ahead = Ahead::Ready(Ready { words, synthesis });
            }
        })));
    }

    /// Drop what was made ready ahead (the person went on, or another answer came).
    pub(super) fn unprepare(&mut self) {
        self.preparing = None;
        *lock(&self.ahead) = Ahead::Closed;
    }

    /// Play audio already spoken at `rate` (a realtime model's answer) as it streams
    /// in, after whatever is queued; [`Speaker::end_stream`] flushes its tail.
    pub(super) fn play(&mut self, pcm: &[i16], rate: u32) {
        let stream = self.stream.get_or_insert_with(|| Playout::new(rate));
        stream.push(pcm);
        queue(stream, &self.frames, &self.notes);
    }

    /// The streamed audio is over: its last frames are queued.
    pub(super) fn end_stream(&mut self) {
        if let Some(mut stream) = self.stream.take() {
            stream.finish();
            queue(&mut stream, &self.frames, &self.notes);
        }
    }

    /// Say `line` after whatever is already queued (after the spoken filter; a line
    /// with nothing speakable is skipped). Returns whether anything was queued.
    pub(super) fn say(&mut self, line: &str) -> bool {
        let words = spoken(line);
        if words.trim().is_empty() {
            return false;
        }
        let tx = match &self.lines {
            Some(tx) if !tx.is_closed() => tx.clone(),
            _ => self.start(),
        };
        self.pending.fetch_add(1, Ordering::SeqCst);
        if tx.send(words).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    fn start(&mut self) -> mpsc::UnboundedSender<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(pipeline(
            rx,
            self.synth.clone(),
            self.ahead.clone(),
            self.frames.clone(),
            self.pending.clone(),
            self.notes.clone(),
        ));
        self.lines = Some(tx.clone());
        self.task = Some(Aborting(task));
        tx
    }

    /// Stop at once: queued frames and lines are dropped, synthesis in flight is cut.
    pub(super) fn hush(&mut self) {
        self.unprepare();
        self.lines = None;
        self.task = None;
        self.stream = None;
        // Fresh queues: a cut task that still runs for a moment fills orphans.
        self.pending = Arc::new(AtomicUsize::new(0));
        self.frames = Arc::new(Mutex::new(VecDeque::new()));
    }

    /// The next frame to play, if one is ready.
    pub(super) fn pop_frame(&self) -> Option<Vec<f32>> {
        lock(&self.frames).pop_front()
    }

    /// Whether she is talking or about to: frames queued or lines being synthesised.
    pub(super) fn speaking(&self) -> bool {
        self.pending.load(Ordering::SeqCst) > 0 || !lock(&self.frames).is_empty()
    }
}

type Synthesis = Aborting<(Result<Voice, SpeechError>, std::time::Duration)>;

/// The first sentence of an answer as it streams in `words` (its whole text when it
/// ends before a sentence does); `None` when it ends with no words.
async fn first_sentence(words: &mut watch::Receiver<String>) -> Option<String> {
    let mut sentences = Sentences::new();
    let mut seen = 0;
    loop {
        {
            let text = words.borrow_and_update();
            let new = text.get(seen..).unwrap_or_default();
            seen = text.len();
            if let Some(first) = sentences.push(new).into_iter().next() {
                return Some(first);
            }
        }
        let ended = words.has_changed().is_err();
        if ended || words.changed().await.is_err() {
            // The answer ended: what is left is its first line.
            let text = words.borrow_and_update();
            let mut lines = sentences.push(text.get(seen..).unwrap_or_default());
            lines.extend(sentences.finish());
            return lines.into_iter().next();
        }
    }
}

/// The synthesis of `line`: the one made ready ahead when it is that line, else a new
/// one. Either way nothing stays ahead.
fn take_or_synthesise(ahead: &AheadSlot, synth: &Arc<dyn Synthesizer>, line: String) -> Synthesis {
    match std::mem::replace(&mut *lock(ahead), Ahead::Closed) {
        Ahead::Ready(ready) if ready.words == line => ready.synthesis,
        _ => synthesise(synth, line),
    }
}

fn synthesise(synth: &Arc<dyn Synthesizer>, line: String) -> Synthesis {
    let synth = synth.clone();
    Aborting(tokio::spawn(async move {
        let t0 = tokio::time::Instant::now();
        let voice = synth.synthesize(&line).await;
        (voice, t0.elapsed())
    }))
}

/// Lines in, frames out; one synthesis runs ahead of the line being played.
async fn pipeline(
    mut lines: mpsc::UnboundedReceiver<String>,
    synth: Arc<dyn Synthesizer>,
    ahead: AheadSlot,
    frames: FrameQueue,
    pending: Arc<AtomicUsize>,
    notes: mpsc::UnboundedSender<SpeakerNote>,
) {
    let mut next: Option<Synthesis> = None;
    let mut closed = false;
    loop {
        let current = match next.take() {
            Some(s) => s,
            None if closed => return,
            None => match lines.recv().await {
                Some(line) => take_or_synthesise(&ahead, &synth, line),
                None => return,
            },
        };
        let mut handle = current;
        let voice = match (&mut handle.0).await {
            Ok((v, took)) => {
                if v.is_ok() {
                    let _ = notes.send(SpeakerNote::Synthesised(took));
                }
                v
            }
            Err(e) => Err(SpeechError::new(format!("Speech synthesis stopped ({e})."))),
        };
        match voice {
            Ok(voice) => {
                let mut playout = Playout::new(voice.rate);
                let mut audio = voice.audio;
                loop {
                    tokio::select! {
                        chunk = audio.next() => match chunk {
                            Some(Ok(pcm)) => {
                                playout.push(&pcm);
                                queue(&mut playout, &frames, &notes);
                            }
                            Some(Err(e)) => {
                                let _ = notes.send(SpeakerNote::Failed(e));
                                break;
                            }
                            None => {
                                playout.finish();
                                queue(&mut playout, &frames, &notes);
                                break;
                            }
                        },
                        line = lines.recv(), if next.is_none() && !closed => match line {
                            Some(line) => next = Some(take_or_synthesise(&ahead, &synth, line)),
                            None => closed = true,
                        },
                    }
                }
            }
            Err(e) => {
                let _ = notes.send(SpeakerNote::Failed(e));
            }
        }
        let _ = pending.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
}

fn queue(playout: &mut Playout, frames: &FrameQueue, notes: &mpsc::UnboundedSender<SpeakerNote>) {
    let mut any = false;
    {
        let mut q = lock(frames);
        while let Some(f) = playout.pop() {
            q.push_back(f);
            any = true;
        }
    }
    if any {
        let _ = notes.send(SpeakerNote::Audio);
    }
}
