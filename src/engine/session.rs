//! Sessions: a concurrent map of conversations, each with one turn at a time, its
//! transcript (loaded from the store on first use) and its own event bus, whose
//! receiver count is `has_listener`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::llm::Item;
use crate::protocol::{Event, Frame, Origin};
use crate::store::Store;

/// Sessions named with this prefix are the terminal's (a name only: where a turn came
/// from is its `Origin`).
pub const LOCAL_SESSION_PREFIX: &str = "terminal:";

/// Sessions named with this prefix were born in a Discord channel, thread or DM (a
/// name only: where a turn came from is its `Origin`).
pub const DISCORD_SESSION_PREFIX: &str = "discord:";

/// How many frames a slow listener may fall behind before it loses some.
const BUS_CAPACITY: usize = 256;
/// How many past lines of a conversation the model sees.
pub const HISTORY_LINES: usize = 40;

/// One conversation.
pub struct Session {
    /// Its id.
    pub id: String,
    bus: broadcast::Sender<Arc<Event>>,
    pub(crate) turn_lock: tokio::sync::Mutex<()>,
    current: Mutex<Option<CancellationToken>>,
    history: Mutex<Vec<Item>>,
    job_running: AtomicBool,
    /// The running turn's private copy of the frames (a /v1 reply streams from it);
    /// not a listener, so it never makes `has_listener` true.
    tap: Mutex<Option<mpsc::UnboundedSender<Arc<Event>>>>,
    /// Where its latest turn came from (`None` until someone speaks in it).
    origin: Mutex<Option<Origin>>,
    /// How many times its turn was stopped ([`Session::stops`]): a voice room goes
    /// quiet with a stop even after the turn's words were all written.
    stops: tokio::sync::watch::Sender<u64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Session {
    fn new(id: &str, history: Vec<Item>) -> Session {
        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        Session {
            id: id.to_string(),
            bus,
            turn_lock: tokio::sync::Mutex::new(()),
            current: Mutex::new(None),
            history: Mutex::new(history),
            job_running: AtomicBool::new(false),
            tap: Mutex::new(None),
            origin: Mutex::new(None),
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
        if let Some(tap) = lock(&self.tap).as_ref() {
            let _ = tap.send(event.clone());
        }
        let _ = self.bus.send(event);
    }

    /// Copy every frame to `tap` while it is set (the running turn's own stream).
    pub(crate) fn set_tap(&self, tap: Option<mpsc::UnboundedSender<Arc<Event>>>) {
        *lock(&self.tap) = tap;
    }

    /// The person's last words in this conversation (what a hidden announce turn is
    /// anchored to, so the one-request-one-run guard still recognises a re-emission).
    pub fn last_user_request(&self) -> Option<String> {
        lock(&self.history).iter().rev().find_map(|i| match i {
            Item::User { text } => Some(text.clone()),
            _ => None,
        })
    }

    /// Whether a background job runs in this session (the chip stays on).
    pub fn job_running(&self) -> bool {
        self.job_running.load(Ordering::SeqCst)
    }

    /// Where its latest turn came from; `None` until someone speaks in it (a session
    /// restored after a restart): then its cards go to the configured owners.
    pub fn origin(&self) -> Option<Origin> {
        lock(&self.origin).clone()
    }

    /// Remember where the turn now starting came from.
    pub(crate) fn set_origin(&self, origin: Origin) {
        *lock(&self.origin) = Some(origin);
    }

    /// Mark a background job as running or not.
    pub fn set_job_running(&self, on: bool) {
        self.job_running.store(on, Ordering::SeqCst);
    }

    /// Cancel the turn running now, if any (supersede, barge-in); true when one was.
    pub fn cancel_running(&self) -> bool {
        match lock(&self.current).as_ref() {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    pub(crate) fn set_current(&self, token: Option<CancellationToken>) {
        *lock(&self.current) = token;
    }

    /// The conversation so far as model items (user and assistant lines).
    pub fn history(&self) -> Vec<Item> {
        lock(&self.history).clone()
    }

    /// Forget the in-memory transcript (a fresh conversation).
    pub fn clear_history(&self) {
        lock(&self.history).clear();
    }

    /// Append lines to the in-memory transcript, keeping the last [`HISTORY_LINES`].
    pub(crate) fn push_history(&self, items: impl IntoIterator<Item = Item>) {
        let mut h = lock(&self.history);
        h.extend(items);
        let extra = h.len().saturating_sub(HISTORY_LINES);
        h.drain(..extra);
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
        let history = match store.history(id, HISTORY_LINES) {
            Ok(lines) => lines
                .into_iter()
                .map(|m| match m.role.as_str() {
                    "assistant" => Item::Assistant { text: m.text },
                    _ => Item::User { text: m.text },
                })
                .collect(),
            Err(e) => {
                tracing::warn!("loading the transcript of {id}: {e}");
                Vec::new()
            }
        };
        self.map
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(Session::new(id, history)))
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
