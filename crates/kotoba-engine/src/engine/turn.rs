//! The driver of a turn: it resolves the turn at its [`Door`], feeds the pure core
//! (`core::TurnState::step`) its events and carries out every effect the core returns
//! — asks the model (fitted to the window, its deltas streamed), puts calls through
//! the gate, runs tools under their budgets with heartbeat ticks, keeps records and
//! draws frames — for every surface and for background jobs alike. A turn cut while it
//! waits feeds the core `Cancelled` as it is dropped, so its open rows close as
//! interrupted (docs/engine.md, "The turn as a state machine").

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::llm::{Item, LlmError, ModelReply, ModelRequest};
use crate::tools::{Registry, Tool};
use kotoba_core::protocol::{Frame, Mode};
use kotoba_core::turn::TurnContext;

use super::core::{Catalog, Effect, Event, Persist, TurnState};
use super::door::Door;
use super::inflight::Running;
use super::narration::Narrator;
use super::session::Session;
use super::Engine;

pub use super::core::LoopEnd;

/// The registry as the core looks tools up in it, for one session and job.
struct Lookup<'a> {
    /// The engine's tools.
    registry: &'a Registry,
    /// The session, and the job, whose activated MCP servers count.
    session: &'a str,
    run_id: Option<&'a str>,
}

impl Catalog for Lookup<'_> {
    fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.registry.find(name)
    }

    fn server_of(&self, name: &str) -> Option<String> {
        self.registry.source().and_then(|m| m.server_of(name))
    }

    fn active(&self) -> Vec<Arc<dyn Tool>> {
        match self.registry.source() {
            Some(mcp) => mcp.active_tools(self.session, self.run_id),
            None => Vec::new(),
        }
    }
}

/// One running turn's driver: the effects' side of the turn (its decisions are the
/// core's).
pub(super) struct Driver<'a> {
    /// The engine: model, tools, store, cards.
    pub(super) engine: &'a Engine,
    /// Where its frames go (its bus); never asked whom the turn speaks for.
    pub(super) session: Arc<Session>,
    /// The turn resolved at its door: whom it speaks for and its axes, its settings
    /// snapshot, paths, who may answer its cards, and what its requests carry (the
    /// offered tools are the core's from the start: they change as it goes).
    pub(super) door: Door,
    /// Every decision of the turn, and the conversation the model reads.
    pub(super) core: TurnState<'a>,
    /// Time blocked on a person (heartbeats wait; a job's budget is not charged).
    pub(super) blocked: Arc<kotoba_core::turn::meter::PersonWait>,
    /// Deferred runners waiting for their pending row to be drawn.
    pub(super) releases: Vec<oneshot::Sender<()>>,
    /// The model asked ahead of this turn, not used yet.
    pub(super) prepared: Option<super::Speculation>,
    /// How many leading items are the session's conversation (its summary and lines),
    /// compacted durably when the window fills; 0 for a job or a helper, whose items
    /// are all their own.
    pub(super) conversation: usize,
    /// The size of each item already counted this turn, by a hash of its content: a
    /// long job's outputs are tokenized once, not once per iteration.
    pub(super) sizes: HashMap<u64, usize>,
    /// The executed rows of actions running now, by call id.
    pub(super) running: HashMap<String, Running>,
}

/// Run one loop over `items` (history + the new user line) for the person `ctx` speaks
/// for: a guest's turn is offered only the guest allow-list, so a host tool it calls is
/// refused at the door as withheld. Never panics, never hangs on a model failure:
/// every end is a [`LoopEnd`].
pub(super) async fn run_loop(
    engine: &Engine,
    session: Arc<Session>,
    ctx: Arc<TurnContext>,
    items: Vec<Item>,
) -> LoopEnd {
    run_loop_prepared(engine, session, ctx, (items, 0), None).await
}

/// [`run_loop`] with a model reply asked ahead of the turn, used as its first answer
/// when it answers the turn's first request. The first `conversation` of `items` are
/// the session's conversation (its summary and lines).
pub(super) async fn run_loop_prepared(
    engine: &Engine,
    session: Arc<Session>,
    ctx: Arc<TurnContext>,
    (items, conversation): (Vec<Item>, usize),
    prepared: Option<super::Speculation>,
) -> LoopEnd {
    let mut door = Door::resolve(engine, ctx.clone(), &items).await;
    if let (Mode::Work, Some(mcp)) = (ctx.mode, engine.tools.source()) {
        // The browser server is always active: connected before the first request.
        if let Some(why) = mcp.ensure_always_active().await {
            tracing::warn!(session = %session.id, "{why}");
        }
    }
    let run_id = ctx.run_id.clone();
    let lookup = Lookup {
        registry: &engine.tools,
        session: &session.id,
        run_id: run_id.as_deref(),
    };
    let reasoning = door.settings.is_reasoning_model();
    let narrator = Narrator::new(
        &engine.soul,
        ctx.register,
        door.settings.voice_mode,
        reasoning,
    );
    let core = TurnState::new(
        ctx.clone(),
        door.settings.clone(),
        &lookup,
        (door.caps, narrator),
        std::mem::take(&mut door.offered),
        items,
    );
    let blocked = ctx
        .meter
        .as_ref()
        .map(|m| m.wait.clone())
        .unwrap_or_default();
    let mut driver = Driver {
        engine,
        session: session.clone(),
        door,
        core,
        blocked,
        releases: Vec::new(),
        prepared,
        conversation,
        sizes: HashMap::new(),
        running: HashMap::new(),
    };
    driver.drive().await
}

impl Driver<'_> {
    /// Feed the core from `Start` until it ends, performing its effects in order. The
    /// effect answered by an event (ask, gate, run) is always the last of a step's
    /// (the property test checks it), so nothing waits behind it.
    async fn drive(&mut self) -> LoopEnd {
        let mut effects = self.core.step(Event::Start);
        loop {
            let mut next = None;
            for effect in effects {
                match effect {
                    Effect::End(end) => return end,
                    Effect::Ask {
                        separate,
                        words_only,
                    } => next = Some(self.ask(separate, words_only).await),
                    Effect::Gate {
                        call_id,
                        tool,
                        args,
                    } => next = Some(self.gate_call(call_id, &tool, &args).await),
                    Effect::Run(order) => next = Some(self.run_call(order).await),
                    other => self.perform(other).await,
                }
            }
            let Some(event) = next else {
                // The core asked for nothing and did not end: it cannot go on.
                tracing::error!(session = %self.session.id, "the turn's core stalled");
                if self.core.ended() {
                    return LoopEnd {
                        text: String::new(),
                        status: kotoba_core::protocol::TurnStatus::Error,
                    };
                }
                effects = self.core.step(Event::Cancelled);
                continue;
            };
            effects = self.core.step(event);
        }
    }

    /// Carry out an effect that answers nothing.
    pub(super) async fn perform(&mut self, effect: Effect) {
        match effect {
            Effect::Emit(frame) => self.emit(frame),
            Effect::Persist(p) => self.persist(p).await,
            Effect::CountStep => {
                if let Some(meter) = &self.door.ctx.meter {
                    meter
                        .steps
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
            Effect::Release => {
                for release in self.releases.drain(..) {
                    let _ = release.send(());
                }
            }
            Effect::WorkingOff => {
                if !self.session.job_running() {
                    self.emit(Frame::Working { on: false });
                }
            }
            // Answered effects are the drive loop's.
            Effect::Ask { .. } | Effect::Gate { .. } | Effect::Run(_) | Effect::End(_) => {}
        }
    }

    /// Ask the model the core's request: fitted, its deltas streamed.
    async fn ask(&mut self, separate: bool, words_only: bool) -> Event {
        let tools: Vec<Arc<dyn Tool>> = match words_only {
            true => Vec::new(),
            false => self.core.offered().to_vec(),
        };
        let mut items = self.core.items();
        let mut req = self.door.request(self.engine, &tools, items.clone());
        let asked = self.ask_fitted(&mut items, &mut req, separate).await;
        drop(req); // the core's items are its own again: the next push copies nothing
        self.core.set_items(items);
        match asked {
            Ok(reply) => Event::Replied(reply),
            Err(e) => {
                tracing::warn!(session = %self.session.id, "model request failed: {e}");
                Event::ModelFailed(e.sentence())
            }
        }
    }

    pub(super) fn emit(&self, frame: Frame) {
        self.session.emit(self.door.ctx.run_id.as_deref(), frame);
    }

    /// One model request, its text deltas forwarded to the bus as they arrive.
    pub(super) async fn ask_model(
        &self,
        req: &ModelRequest,
        separate: bool,
        prepared: Option<super::Speculation>,
    ) -> Result<ModelReply, LlmError> {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let request = async {
            let r = match prepared {
                Some(p) => p.finish(&tx).await,
                None => self.engine.model.stream(req, &tx).await,
            };
            drop(tx);
            r
        };
        let forward = async {
            let mut first = true;
            while let Some(delta) = rx.recv().await {
                if first && separate {
                    self.emit(Frame::TextDelta {
                        text: "\n\n".into(),
                    });
                }
                first = false;
                self.emit(Frame::TextDelta { text: delta });
            }
        };
        let (reply, ()) = tokio::join!(request, forward);
        reply
    }
}

/// Keep a turn's interrupted row beside its lines. This may run while the turn's
/// future is dropped, so the write is a task of its own that the process awaits before
/// it exits (`Store::write_later`): a shutdown's cut rows are kept too.
pub(super) fn keep_interrupted(
    engine: &Engine,
    session: &str,
    row: kotoba_core::protocol::StepRow,
) {
    let (store, session) = (engine.store.clone(), session.to_string());
    let text = super::core::rows::step_record(
        &row.tool,
        &row.action,
        kotoba_core::protocol::Outcome::Interrupted,
        "(interrupted)",
    );
    engine.store.write_later(async move {
        if let Err(e) = store.append_step(&session, &row, &text).await {
            tracing::warn!("keeping an interrupted row of {session}: {e}");
        }
    });
}

impl Drop for Driver<'_> {
    /// A turn dropped before its core ended (barge-in, a newer request, a stop,
    /// shutdown): the core is told, and what it returns that needs no waiting is done
    /// now — its open rows drawn and kept as interrupted, the peek and chip cleared.
    fn drop(&mut self) {
        if self.core.ended() {
            return;
        }
        for effect in self.core.step(Event::Cancelled) {
            match effect {
                Effect::Emit(frame) => self.emit(frame),
                Effect::Persist(Persist::Interrupted(row)) => {
                    keep_interrupted(self.engine, &self.session.id, row)
                }
                Effect::WorkingOff if !self.session.job_running() => {
                    self.emit(Frame::Working { on: false });
                }
                _ => {}
            }
        }
    }
}
