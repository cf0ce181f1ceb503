//! Sessions: a concurrent map of conversations, each with one turn at a time, its
//! transcript (loaded from the store on first use) and its own event bus, whose
//! receiver count is `has_listener`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::context::{Line, Transcript};
use crate::llm::Item;
use crate::protocol::{Event, Frame};
use crate::store::Store;

/// Sessions named with this prefix are the terminal's (a name only: where a turn came
/// from is its `Origin`).
pub const LOCAL_SESSION_PREFIX: &str = "terminal:";

/// Sessions named with this prefix were born in a Discord channel, thread or DM (a
/// name only: where a turn came from is its `Origin`).
pub const DISCORD_SESSION_PREFIX: &str = "discord:";

/// How many frames a slow listener may fall behind before it loses some.
const BUS_CAPACITY: usize = 256;
/// At most this many stored lines after the summary are loaded with a session (a
/// conversation stored by a version that never compacted may be longer: its first turn
/// compacts what was loaded).
const LOAD_LINES: usize = 2_000;

/// One conversation.
pub struct Session {
    /// Its id (a Discord channel, a page session, the terminal's): where frames go.
    pub id: String,
    /// Every frame of its turns, jobs and cards; its receivers are the surfaces
    /// watching it ([`Session::has_listener`]).
    bus: broadcast::Sender<Arc<Event>>,
    /// One turn at a time: a new turn waits here for the running one to end.
    pub(crate) turn_lock: tokio::sync::Mutex<()>,
    /// The turn running now, set and cleared in one step by its [`TurnGuard`].
    running: Mutex<Option<Running>>,
    /// The conversation the model sees next: the summary of its oldest lines and every
    /// line after it (docs/engine.md, "Long conversations").
    transcript: Mutex<Transcript>,
    /// Whether a background job runs in it (the chip stays on after a turn).
    job_running: AtomicBool,
    /// How many times its turn was stopped ([`Session::stops`]): a voice room goes
    /// quiet with a stop even after the turn's words were all written.
    stops: tokio::sync::watch::Sender<u64>,
}

/// What a running turn leaves on its session while it runs; they change together. Whom
/// the turn speaks for is not here: it travels with the turn, never on its session.
struct Running {
    /// Cancels the turn (a replacing turn, a barge-in, a stop).
    cancel: CancellationToken,
    /// The turn's private copy of the frames (a /v1 reply and a voice room stream from
    /// it); not a listener, so it never makes `has_listener` true.
    tap: Option<mpsc::UnboundedSender<Arc<Event>>>,
}

/// The running turn's mark on its session: set by [`Session::begin`] (cancel token and
/// tap together) and cleared together when the turn ends or its future is dropped.
pub(crate) struct TurnGuard<'a>(&'a Session);

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        *lock(&self.0.running) = None;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Session {
    fn new(id: &str, transcript: Transcript) -> Session {
        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        Session {
            id: id.to_string(),
            bus,
            turn_lock: tokio::sync::Mutex::new(()),
            running: Mutex::new(None),
            transcript: Mutex::new(transcript),
            job_running: AtomicBool::new(false),
            stops: tokio::sync::watch::channel(0).0,
        }
    }

    /// Changes each time a stop names this session's turn (`Engine::stop` with
    /// `StopScope::Turn`), whether or not a turn was running. Not a listener.
    pub fn stops(&self) -> tokio::sync::watch::Receiver<u64> {
        self.stops.subscribe()
    }

    /// Count a stop of this session's turn.
    pub(crate) fn note_stop(&self) {
        self.stops.send_modify(|n| *n += 1);
    }

    /// Listen to this session's frames.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.bus.subscribe()
    }

    /// Whether anyone is listening (a page open on it, the terminal, a Discord channel).
    pub fn has_listener(&self) -> bool {
        self.bus.receiver_count() > 0
    }

    /// Put a frame on the bus (dropped silently when nobody listens).
    pub fn emit(&self, run_id: Option<&str>, frame: Frame) {
        let event = Arc::new(Event {
            run_id: run_id.map(str::to_string),
            frame,
        });
        if let Some(tap) = lock(&self.running).as_ref().and_then(|r| r.tap.as_ref()) {
            let _ = tap.send(event.clone());
        }
        let _ = self.bus.send(event);
    }

    /// Mark a turn as running, cancelled by `cancel`, its frames copied to `tap`: both
    /// at once, cleared at once when the guard drops.
    pub(crate) fn begin(
        &self,
        cancel: CancellationToken,
        tap: Option<mpsc::UnboundedSender<Arc<Event>>>,
    ) -> TurnGuard<'_> {
        *lock(&self.running) = Some(Running { cancel, tap });
        TurnGuard(self)
    }

    /// The person's last words in this conversation (what a hidden announce turn is
    /// anchored to, so the one-request-one-run guard still recognises a re-emission).
    pub fn last_user_request(&self) -> Option<String> {
        lock(&self.transcript)
            .lines
            .iter()
            .rev()
            .find_map(|l| match &l.item {
                Item::User { text } => Some(text.clone()),
                _ => None,
            })
    }

    /// Whether a background job runs in this session (the chip stays on).
    pub fn job_running(&self) -> bool {
        self.job_running.load(Ordering::SeqCst)
    }

    /// Mark a background job as running or not.
    pub fn set_job_running(&self, on: bool) {
        self.job_running.store(on, Ordering::SeqCst);
    }

    /// Cancel the turn running now, if any (supersede, barge-in); true when one was.
    pub fn cancel_running(&self) -> bool {
        match lock(&self.running).as_ref() {
            Some(r) => {
                r.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// The conversation so far as model items: the summary's note (when it was
    /// compacted), then its lines.
    pub fn history(&self) -> Vec<Item> {
        lock(&self.transcript).items()
    }

    /// Read or change the conversation under its lock (never held across an await).
    pub(crate) fn with_transcript<R>(&self, f: impl FnOnce(&mut Transcript) -> R) -> R {
        f(&mut lock(&self.transcript))
    }

    /// Start afresh: `archive` (the store's part) runs under the conversation's lock,
    /// so a compaction finishing meanwhile is dropped, never saved over the fresh start.
    pub(crate) fn reset<E>(&self, archive: impl FnOnce() -> Result<(), E>) -> Result<(), E> {
        let mut t = lock(&self.transcript);
        archive()?;
        t.clear();
        Ok(())
    }

    /// Append lines to the conversation.
    pub(crate) fn push_history(&self, lines: impl IntoIterator<Item = Line>) {
        lock(&self.transcript).lines.extend(lines);
    }
}

/// Every session of the process.
#[derive(Default)]
pub struct Sessions {
    map: DashMap<String, Arc<Session>>,
}

impl Sessions {
    /// The session `id`, created (with its stored transcript) on first use.
    pub fn get_or_load(&self, id: &str, store: &Store) -> Arc<Session> {
        if let Some(s) = self.map.get(id) {
            return s.clone();
        }
        let loaded = store.summary(id).and_then(|summary| {
            let after = summary.as_ref().map_or(0, |s| s.upto_id);
            let lines = store.lines_after(id, after, LOAD_LINES)?;
            Ok(Transcript::loaded(summary, lines))
        });
        let transcript = loaded.unwrap_or_else(|e| {
            tracing::warn!("loading the transcript of {id}: {e}");
            Transcript::default()
        });
        self.map
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(Session::new(id, transcript)))
            .clone()
    }

    /// The session `id` if it is loaded.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.map.get(id).map(|s| s.clone())
    }

    /// How many sessions are loaded.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is loaded.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
