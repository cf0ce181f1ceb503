//! Speaking: [`SongbirdOut`] is the room's [`AudioOut`] on a songbird call. Frames go to
//! a shared queue; a live songbird track reads them back as raw 48 kHz stereo f32
//! ([`QueueReader`] behind songbird's `RawAdapter`). Reads never wait: an empty queue
//! reads as silence, and after [`IDLE_END`] silent frames the track ends; the next frame
//! starts a new one, handed to songbird already parsed so its first frame goes out on
//! songbird's next 20 ms tick. `stop` empties the queue and stops the track at once.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use songbird::events::{Event, EventContext, EventHandler, TrackEvent};
use songbird::input::{codecs, Input, RawAdapter};
use songbird::tracks::TrackHandle;
use songbird::Call;
use symphonia::core::io::MediaSource;

use crate::speech::audio::{PLAY_FRAME, PLAY_RATE};
use crate::voice::boundary::AudioOut;

/// Silent frames (20 ms each) a track plays with nothing queued before it ends: 1 s.
pub const IDLE_END: u32 = 50;
/// The most audio that may wait in the queue (3 minutes); frames beyond it are dropped
/// and counted (the room paces itself well below this).
pub const MAX_QUEUED: usize = 3 * 60 * 50;

/// Bytes of one 20 ms frame (48 kHz stereo f32).
const FRAME_BYTES: usize = PLAY_FRAME * 4;

/// The queue between the room and the track.
#[derive(Debug, Default)]
struct Queue {
    /// Frames not yet read, as little-endian f32 bytes.
    frames: VecDeque<Vec<u8>>,
    /// Bumped by every stop and every track end: an older reader reads its end.
    generation: u64,
    /// A track of the current generation is playing (or starting).
    live: bool,
    /// Silent frames read back to back.
    idle: u32,
}

type Shared = Arc<Mutex<Queue>>;

fn lock(q: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    match q.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// A track's view of the queue: 48 kHz stereo f32 little-endian bytes, in order.
pub struct QueueReader {
    queue: Shared,
    generation: u64,
    pending: Vec<u8>,
    at: usize,
}

impl QueueReader {
    /// The next frame (or a silent one) into `pending`; false at the end of the track.
    fn refill(&mut self) -> bool {
        self.pending.clear();
        self.at = 0;
        let mut q = lock(&self.queue);
        if q.generation != self.generation {
            return false;
        }
        if let Some(frame) = q.frames.pop_front() {
            q.idle = 0;
            self.pending = frame;
            return true;
        }
        if q.idle >= IDLE_END {
            q.live = false;
            q.generation += 1;
            return false;
        }
        q.idle += 1;
        self.pending.resize(FRAME_BYTES, 0);
        true
    }
}

impl Read for QueueReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.at >= self.pending.len() && !self.refill() {
            return Ok(0);
        }
        // At most what is left of one frame: the mixer never reads ahead of time.
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Seek for QueueReader {
    fn seek(&mut self, _pos: SeekFrom) -> io::Result<u64> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

impl MediaSource for QueueReader {
    fn is_seekable(&self) -> bool {
        false
    }

    fn byte_len(&self) -> Option<u64> {
        None
    }
}

/// Starts and stops the track that reads the queue (songbird in production).
pub trait Player: Send + Sync + 'static {
    /// Play a new track reading `reader`; `ended` is called once when it stops.
    fn play(&self, reader: QueueReader, ended: Ended);
    /// Stop the current track now.
    fn stop(&self);
}

/// Tells the queue a track of one generation has stopped (so the next frame starts a
/// new one).
#[derive(Clone)]
pub struct Ended {
    queue: Shared,
    generation: u64,
}

impl Ended {
    /// The track is over.
    pub fn now(&self) {
        let mut q = lock(&self.queue);
        if q.generation == self.generation {
            q.live = false;
            q.generation += 1;
        }
    }
}

/// The room's [`AudioOut`] on a songbird call.
pub struct SongbirdOut {
    queue: Shared,
    player: Arc<dyn Player>,
    dropped: AtomicU64,
}

impl SongbirdOut {
    /// Play on `call` (tracks start on the current tokio runtime).
    pub fn new(call: Arc<tokio::sync::Mutex<Call>>) -> SongbirdOut {
        SongbirdOut::with_player(Arc::new(SongbirdPlayer {
            call,
            runtime: tokio::runtime::Handle::try_current().ok(),
            current: Arc::new(Mutex::new(None)),
        }))
    }

    /// Play through `player`.
    pub fn with_player(player: Arc<dyn Player>) -> SongbirdOut {
        SongbirdOut {
            queue: Arc::new(Mutex::new(Queue::default())),
            player,
            dropped: AtomicU64::new(0),
        }
    }

    /// Frames queued and not yet played.
    pub fn queued(&self) -> usize {
        lock(&self.queue).frames.len()
    }

    /// Whether a track is playing (it plays silence for [`IDLE_END`] frames after the
    /// last frame).
    pub fn is_live(&self) -> bool {
        lock(&self.queue).live
    }

    /// Frames dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl AudioOut for SongbirdOut {
    fn queued(&self) -> Option<usize> {
        Some(SongbirdOut::queued(self))
    }

    fn frame(&self, pcm: &[f32]) {
        if pcm.is_empty() {
            // (An empty frame would read as the end of the track.)
            return;
        }
        let mut bytes = Vec::with_capacity(pcm.len() * 4);
        for s in pcm {
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        let start = {
            let mut q = lock(&self.queue);
            if q.frames.len() >= MAX_QUEUED {
                drop(q);
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!("voice: playback queue full; {n} frames dropped so far");
                }
                return;
            }
            q.frames.push_back(bytes);
            if q.live {
                None
            } else {
                q.live = true;
                q.idle = 0;
                Some(q.generation)
            }
        };
        if let Some(generation) = start {
            let queue = self.queue.clone();
            let reader = QueueReader {
                queue: queue.clone(),
                generation,
                pending: Vec::new(),
                at: 0,
            };
            self.player.play(reader, Ended { queue, generation });
        }
    }

    fn stop(&self) {
        {
            let mut q = lock(&self.queue);
            q.frames.clear();
            q.generation += 1;
            q.live = false;
            q.idle = 0;
        }
        self.player.stop();
    }
}

/// Plays on a songbird call: one track at a time, from a `RawAdapter` over the queue.
struct SongbirdPlayer {
    call: Arc<tokio::sync::Mutex<Call>>,
    runtime: Option<tokio::runtime::Handle>,
    /// The newest track, with its generation.
    current: Arc<Mutex<Option<(u64, TrackHandle)>>>,
}

type Slot = Mutex<Option<(u64, TrackHandle)>>;

fn slot(m: &Slot) -> MutexGuard<'_, Option<(u64, TrackHandle)>> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Player for SongbirdPlayer {
    fn play(&self, reader: QueueReader, ended: Ended) {
        let Some(rt) = &self.runtime else {
            tracing::warn!("voice: no runtime to start playback on");
            ended.now();
            return;
        };
        let (call, current) = (self.call.clone(), self.current.clone());
        rt.spawn(async move {
            let Some(input) = playable(reader) else {
                ended.now();
                return;
            };
            let handle = call.lock().await.play_input(input);
            for event in [TrackEvent::End, TrackEvent::Error] {
                if handle
                    .add_event(Event::Track(event), OnEnd(ended.clone()))
                    .is_err()
                {
                    // The track is already gone.
                    ended.now();
                }
            }
            // Tasks may run out of order: only a newer track replaces the current one.
            let generation = ended.generation;
            let mut current = slot(&current);
            match current.as_ref() {
                Some((newer, _)) if *newer > generation => {
                    let _ = handle.stop();
                }
                _ => {
                    if let Some((_, old)) = current.replace((generation, handle)) {
                        let _ = old.stop();
                    }
                }
            }
        });
    }

    fn stop(&self) {
        if let Some((_, handle)) = slot(&self.current).take() {
            let _ = handle.stop();
        }
    }
}

/// The queue as a songbird input already parsed (its raw header read here: no file,
/// no network), so the mixer plays it in the very tick it takes the track, instead of
/// parsing it on its thread pool and starting a tick later.
fn playable(reader: QueueReader) -> Option<Input> {
    match Input::from(RawAdapter::new(reader, PLAY_RATE, 2)) {
        Input::Live(live, rec) => {
            match live.promote(codecs::get_codec_registry(), codecs::get_probe()) {
                Ok(parsed) => Some(Input::Live(parsed, rec)),
                Err(e) => {
                    tracing::warn!("voice: her voice could not be set up for playback: {e}");
                    None
                }
            }
        }
        lazy @ Input::Lazy(_) => Some(lazy),
    }
}

struct OnEnd(Ended);

#[async_trait]
impl EventHandler for OnEnd {
    async fn act(&self, _ctx: &EventContext<'_>) -> Option<Event> {
        self.0.now();
        None
    }
}

#[cfg(test)]
mod tests;
