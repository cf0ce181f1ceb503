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
use kotoba_core::protocol::{Event, Frame};
use kotoba_store::Store;

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
    /// One store write that hangs on the conversation's generation at a time (a fresh
    /// start's archive, a compaction's summary), so a summary of the old conversation is
    /// never saved over the fresh one; held across the write's await.
    pub(crate) store_order: tokio::sync::Mutex<()>,
    /// Whether a background job runs in it (the chip stays on after a turn).
    job_running: AtomicBool,
    /// How many times its turn was stopped ([`Session::stops`]): a voice room goes
    /// quiet with a stop even after the turn's words were all written.
    stops: tokio::sync::watch::Sender<u64>,
    /// How many voice rooms speak in it now ([`Session::enter_call`]): the end of a job
    /// or a deferred run is then said aloud by the room, not written by a text surface.
    calls: std::sync::atomic::AtomicUsize,
}

/// A voice room's mark on its session, held for the room's life.
pub struct CallMark(Arc<Session>);

impl Drop for CallMark {
    fn drop(&mut self) {
        self.0
            .calls
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What a running turn leaves on its session while it runs; they change together. Whom
/// the turn speaks for is not here: it travels with the turn, never on its session.
struct Running {
    /// Cancels the turn (a replacing turn, a barge-in, a stop).
    cancel: CancellationToken,
    /// The turn's private copy of the frames (a /v1 reply and a voice room stream from
    /// it); not a listener, so it never makes `has_listener` true.
    tap: Option<mpsc::UnboundedSender<Arc<Event>>>,
    /// What a listener arriving mid-turn is shown first ([`Session::replay`]).
    so_far: SoFar,
}

/// The running turn as a page reloaded mid-turn must see it: its start, the chip, the
/// words written so far and each step row at its latest.
#[derive(Default)]
struct SoFar {
    /// The turn's id, once it started.
    turn_id: Option<String>,
    /// Whether the working chip is on.
    working: bool,
    /// Her answer so far.
    text: String,
    /// Each row of the turn, at its latest frame, in the order they opened.
    rows: Vec<kotoba_core::protocol::StepRow>,
}

impl SoFar {
    /// Keep what `frame` changes of the turn's picture (a job's frames, with a run id,
    /// are not the turn's).
    fn note(&mut self, run_id: Option<&str>, frame: &Frame) {
        if run_id.is_some() {
            return;
        }
        match frame {
            Frame::TurnStarted { turn_id } => {
                *self = SoFar::default();
                self.turn_id = Some(turn_id.clone());
            }
            Frame::Working { on } => self.working = *on,
            Frame::TextDelta { text } => self.text.push_str(text),
            Frame::Step(row) => match self.rows.iter_mut().find(|r| r.id == row.id) {
                Some(r) => *r = row.clone(),
                None => self.rows.push(row.clone()),
            },
            _ => {}
        }
    }

    /// The frames that draw it again, in order.
    fn frames(&self) -> Vec<Frame> {
        let mut out = Vec::new();
        if let Some(turn_id) = &self.turn_id {
            out.push(Frame::TurnStarted {
                turn_id: turn_id.clone(),
            });
        }
        if self.working {
            out.push(Frame::Working { on: true });
        }
        if !self.text.is_empty() {
            out.push(Frame::TextDelta {
                text: self.text.clone(),
            });
        }
        out.extend(self.rows.iter().cloned().map(Frame::Step));
        out
    }
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
            store_order: tokio::sync::Mutex::new(()),
            job_running: AtomicBool::new(false),
            stops: tokio::sync::watch::channel(0).0,
            calls: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// A voice room speaks in `session` until the mark is dropped.
    pub fn enter_call(session: &Arc<Session>) -> CallMark {
        session
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        CallMark(session.clone())
    }

    /// Whether a voice room speaks in it now.
    pub fn in_call(&self) -> bool {
        self.calls.load(std::sync::atomic::Ordering::SeqCst) > 0
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
        // Under the running turn's lock, so a listener joining ([`Session::watch`])
        // sees each frame either in its replay or live, never both, never neither.
        let mut running = lock(&self.running);
        if let Some(running) = running.as_mut() {
            running.so_far.note(run_id, &event.frame);
            if let Some(tap) = running.tap.as_ref() {
                let _ = tap.send(event.clone());
            }
        }
        let _ = self.bus.send(event);
    }

    /// Listen to this session's frames, starting with what a listener arriving now
    /// must see first: the running turn's start, the working chip, her words so far
    /// and its step rows at their latest (a page reloaded mid-turn draws them again);
    /// with no turn running, the chip when a background job runs.
    pub fn watch(&self) -> (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>) {
        let running = lock(&self.running);
        let frames = match running.as_ref() {
            Some(running) => running.so_far.frames(),
            None if self.job_running() => vec![Frame::Working { on: true }],
            None => Vec::new(),
        };
        let rx = self.bus.subscribe();
        drop(running);
        let replay = frames
            .into_iter()
            .map(|frame| {
                Arc::new(Event {
                    run_id: None,
                    frame,
                })
            })
            .collect();
        (replay, rx)
    }

    /// Mark a turn as running, cancelled by `cancel`, its frames copied to `tap`: both
    /// at once, cleared at once when the guard drops.
    pub(crate) fn begin(
        &self,
        cancel: CancellationToken,
        tap: Option<mpsc::UnboundedSender<Arc<Event>>>,
    ) -> TurnGuard<'_> {
        *lock(&self.running) = Some(Running {
            cancel,
            tap,
            so_far: SoFar::default(),
        });
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

    /// Start afresh: `archive` (the store's part) runs under the session's store
    /// order, so a compaction finishing meanwhile is dropped, never saved over the
    /// fresh start.
    pub(crate) async fn reset<E>(
        &self,
        archive: impl std::future::Future<Output = Result<(), E>>,
    ) -> Result<(), E> {
        let _order = self.store_order.lock().await;
        archive.await?;
        lock(&self.transcript).clear();
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
    /// The session `id`, created (with its stored transcript, awaited) on first use.
    pub async fn get_or_load(&self, id: &str, store: &Store) -> Arc<Session> {
        if let Some(s) = self.map.get(id) {
            return s.clone();
        }
        let transcript = load(id, store).await;
        self.map
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(Session::new(id, transcript)))
            .clone()
    }

    /// Read a loaded session's conversation again from the store (a person was
    /// forgotten, or it could not be read before); a session not loaded is read when
    /// first used.
    pub async fn reload(&self, id: &str, store: &Store) {
        if let Some(s) = self.get(id) {
            let fresh = load(id, store).await;
            lock(&s.transcript).reload(fresh);
        }
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

/// A conversation as the store holds it: its newest summary and the lines after it.
async fn load(id: &str, store: &Store) -> Transcript {
    let loaded = store
        .conversation(id, LOAD_LINES)
        .await
        .map(|(summary, lines)| Transcript::loaded(summary, lines));
    loaded.unwrap_or_else(|e| {
        tracing::warn!("loading the transcript of {id}: {e}");
        // Read again at the next turn (the store may be back by then).
        Transcript::unread()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kotoba_core::protocol::{Outcome, Phase, StepKind, StepRow};

    fn row(id: &str, phase: Phase) -> Frame {
        Frame::Step(StepRow {
            id: id.into(),
            tool: "shell".into(),
            step_kind: StepKind::Shell,
            action: format!("$ {id}"),
            phase,
            outcome: (phase == Phase::Done).then_some(Outcome::Ok),
            ending: None,
            result: None,
            full_output: None,
            clipped: false,
        })
    }

    #[test]
    fn a_listener_joining_mid_turn_first_sees_the_turn_as_it_stands_and_nothing_twice() {
        let s = Session::new("web:x", Transcript::default());
        let (replay, _rx) = s.watch();
        assert!(replay.is_empty(), "no turn, no job: nothing to replay");
        let guard = s.begin(CancellationToken::new(), None);
        s.emit(
            None,
            Frame::TurnStarted {
                turn_id: "t1".into(),
            },
        );
        s.emit(None, Frame::Working { on: true });
        s.emit(
            None,
            Frame::TextDelta {
                text: "Let me ".into(),
            },
        );
        s.emit(None, row("ls", Phase::Start));
        s.emit(None, row("ls", Phase::Done));
        s.emit(
            None,
            Frame::TextDelta {
                text: "look.".into(),
            },
        );
        s.emit(None, row("make", Phase::Start));
        // A job's frame is not the turn's.
        s.emit(Some("job1"), row("job-step", Phase::Start));
        let (replay, mut rx) = s.watch();
        let frames: Vec<Frame> = replay.iter().map(|e| e.frame.clone()).collect();
        assert_eq!(
            frames,
            [
                Frame::TurnStarted {
                    turn_id: "t1".into()
                },
                Frame::Working { on: true },
                Frame::TextDelta {
                    text: "Let me look.".into()
                },
                row("ls", Phase::Done),
                row("make", Phase::Start),
            ]
        );
        // What comes after the join arrives live, once.
        s.emit(None, row("make", Phase::Done));
        assert_eq!(rx.try_recv().unwrap().frame, row("make", Phase::Done));
        assert!(rx.try_recv().is_err());
        drop(guard);
        s.set_job_running(true);
        let (replay, _rx) = s.watch();
        let frames: Vec<Frame> = replay.iter().map(|e| e.frame.clone()).collect();
        assert_eq!(
            frames,
            [Frame::Working { on: true }],
            "a job keeps the chip on"
        );
    }
}
