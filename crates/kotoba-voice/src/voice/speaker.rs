//! Her voice: lines to say, in order → the spoken filter → synthesis (the next line is
//! synthesised while the one before it plays) → 48 kHz frames in a queue that the
//! room's clock hands to the [`AudioOut`](super::boundary::AudioOut). `hush` drops
//! everything at once (barge-in).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::speech::audio::Playout;
use crate::speech::filter::spoken;
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
        }
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
    frames: FrameQueue,
    pending: Arc<AtomicUsize>,
    notes: mpsc::UnboundedSender<SpeakerNote>,
) {
    let mut ahead: Option<Synthesis> = None;
    let mut closed = false;
    loop {
        let current = match ahead.take() {
            Some(s) => s,
            None if closed => return,
            None => match lines.recv().await {
                Some(line) => synthesise(&synth, line),
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
                        line = lines.recv(), if ahead.is_none() && !closed => match line {
                            Some(line) => ahead = Some(synthesise(&synth, line)),
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
