//! run_loop: one turn's iterations — ask the model, dispatch the calls, feed results
//! back — until the model answers in words or a cap withdraws the tools.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::llm::{FunctionSpec, Item, LlmError, ModelReply, ModelRequest};
use crate::soul::build_system_prompt;
use crate::tools::{Availability, Scope, Tool, ToolPaths};
use kotoba_core::config::Settings;
use kotoba_core::protocol::{Frame, Mode, TurnStatus};
use kotoba_core::turn::{Access, TurnContext};

use super::budget::{Caps, Spent};
use super::narration::Narrator;
use super::rows::RowTracker;
use super::session::Session;
use super::Engine;

/// How a loop ended.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopEnd {
    /// Her words.
    pub text: String,
    /// Completed, capped or error.
    pub status: TurnStatus,
}

/// The state of one running loop.
pub(super) struct Loop<'a> {
    /// The engine: model, tools, store, cards.
    pub(super) engine: &'a Engine,
    /// Where its frames go (its bus); never asked whom the turn speaks for.
    pub(super) session: Arc<Session>,
    /// The turn: whom it speaks for and its axes, shared with every tool call.
    pub(super) ctx: Arc<TurnContext>,
    /// The live settings, read once when the turn starts and shared by every call.
    pub(super) settings: Arc<Settings>,
    /// Its caps (companion or work): iterations, tool calls, failures, per tool.
    pub(super) caps: Caps,
    /// What it spent of them so far, and the exact-repeat memo.
    pub(super) spent: Spent,
    /// Its step rows, peek and chip; closes what is open if the turn is cut.
    pub(super) rows: RowTracker,
    /// Announce, heartbeat and after/fail lines for its register.
    pub(super) narrator: Narrator<'a>,
    /// The tools offered to its person (a guest's: the allow-list only).
    pub(super) offered: Vec<Arc<dyn Tool>>,
    /// This iteration offers no tools (caps spent, or the last iteration).
    pub(super) words_only: bool,
    /// Time blocked on a person (heartbeats wait; a job's budget is not charged).
    pub(super) blocked: Arc<kotoba_core::turn::meter::PersonWait>,
    /// Data folder and workspace, shared by every call.
    pub(super) paths: Arc<ToolPaths>,
    /// Deferred runners waiting for their pending row to be drawn.
    pub(super) releases: Vec<tokio::sync::oneshot::Sender<()>>,
    /// Set when a call was deferred: the turn ends after this batch.
    pub(super) deferred_this_turn: bool,
    /// The model asked ahead of this turn, not used yet.
    pub(super) prepared: Option<super::Speculation>,
    /// How many leading items are the session's conversation (its summary and lines),
    /// compacted durably when the window fills; 0 for a job or a helper, whose items
    /// are all their own.
    pub(super) conversation: usize,
    /// The size of each item already counted this turn, by a hash of its content: a
    /// long job's outputs are tokenized once, not once per iteration.
    pub(super) sizes: std::collections::HashMap<u64, usize>,
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

/// The person's latest lines in `items`, newest first (at most 3).
fn recent_lines(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .rev()
        .filter_map(|i| match i {
            Item::User { text } => Some(text.clone()),
            _ => None,
        })
        .take(3)
        .collect()
}

/// The first model request a companion turn over `items` makes (what
/// [`super::Engine::speculate`] asks ahead of the turn).
pub(super) async fn first_request(
    engine: &Engine,
    ctx: &TurnContext,
    items: &[Item],
) -> ModelRequest {
    let settings = engine.config.settings();
    let recent = recent_lines(items);
    let mut offered = offered_tools(engine, &settings, ctx, &recent);
    if ctx.depth >= 1 {
        offered.retain(|t| t.spec().behaviour.for_helpers);
    }
    if ctx.access() == Access::Guest {
        offered.retain(|t| offered_to_guest(&ctx.person, t.spec()));
    }
    let specs: Vec<&crate::tools::ToolSpec> = offered.iter().map(|t| t.spec()).collect();
    let notes = engine.tools.notes(ctx, &engine.store).await;
    request_for(engine, ctx, &specs, items, &notes)
}

/// The model request for `items` offering `specs`.
fn request_for(
    engine: &Engine,
    ctx: &TurnContext,
    specs: &[&crate::tools::ToolSpec],
    items: &[Item],
    notes: &[String],
) -> ModelRequest {
    let mut system = build_system_prompt(&engine.soul, ctx.register, ctx.mode, specs);
    for note in notes {
        system.push_str("\n\n");
        system.push_str(note);
    }
    let tools = specs
        .iter()
        .map(|s| FunctionSpec {
            name: s.name.clone(),
            description: s.description.clone(),
            parameters: s.parameters.clone(),
        })
        .collect();
    ModelRequest {
        system,
        items: items.to_vec(),
        tools,
    }
}

/// [`run_loop`] with a model reply asked ahead of the turn, used as its first answer
/// when it answers the turn's first request. The first `conversation` of `items` are
/// the session's conversation (its summary and lines).
pub(super) async fn run_loop_prepared(
    engine: &Engine,
    session: Arc<Session>,
    ctx: Arc<TurnContext>,
    (mut items, conversation): (Vec<Item>, usize),
    prepared: Option<super::Speculation>,
) -> LoopEnd {
    let settings = engine.config.settings();
    let caps = match ctx.mode {
        Mode::Companion => Caps::companion(&engine.config.caps),
        Mode::Work => Caps::work(&settings, &engine.config.caps),
    };
    let reasoning = settings.is_reasoning_model();
    let narrator = Narrator::new(&engine.soul, ctx.register, settings.voice_mode, reasoning);
    let workspace = engine.config.workspace(&settings);
    let paths = Arc::new(ToolPaths {
        home: engine.config.paths.home.clone(),
        workspace,
    });
    // A turn's rows are kept beside its lines; a job's panel is its own record.
    let keep = ctx.run_id.is_none().then(|| engine.store.clone());
    let rows = RowTracker::new(session.clone(), ctx.run_id.clone(), keep);
    let recent = recent_lines(&items);
    let mut offered = offered_tools(engine, &settings, &ctx, &recent);
    if let (Mode::Work, Some(mcp)) = (ctx.mode, engine.tools.source()) {
        // The browser server is always active: connected before the first request.
        if let Some(why) = mcp.ensure_always_active().await {
            tracing::warn!(session = %session.id, "{why}");
        }
    }
    if ctx.depth >= 1 {
        offered.retain(|t| t.spec().behaviour.for_helpers); // a helper starts no helper
    }
    let blocked = ctx
        .meter
        .as_ref()
        .map(|m| m.wait.clone())
        .unwrap_or_default();
    if ctx.access() == Access::Guest {
        offered.retain(|t| offered_to_guest(&ctx.person, t.spec()));
    }
    let mut lp = Loop {
        engine,
        session,
        ctx,
        settings: Arc::new(settings),
        caps,
        spent: Spent::default(),
        rows,
        narrator,
        offered,
        words_only: false,
        blocked,
        paths,
        releases: Vec::new(),
        deferred_this_turn: false,
        prepared,
        conversation,
        sizes: std::collections::HashMap::new(),
    };
    let end = lp.iterate(&mut items).await;
    lp.rows.finish();
    end
}

/// The guest allow-list: the tools that declare a guest may be offered them (web,
/// skills, Discord reads, clarify). Host tools (shell, code, files, credentials, the
/// owner's memory, MCP) never declare it.
pub fn guest_may_use(spec: &crate::tools::ToolSpec) -> bool {
    spec.behaviour.guest
}

/// What a guest's turn is offered: the guest allow-list, and the families their roles
/// grant (`discord.role_toolsets`, [`kotoba_core::protocol::Person::granted`]), whose every
/// call asks an owner or approver ([`asks_every_call`]).
pub fn offered_to_guest(
    person: &kotoba_core::protocol::Person,
    spec: &crate::tools::ToolSpec,
) -> bool {
    guest_may_use(spec) || person.granted.contains(&spec.family)
}

/// Whether each call of this tool in this turn asks on a card, whatever its risk and
/// whatever grants, allowlist or auto-safe rules say, with no "always": a guest's call
/// of a tool beyond the guest list (offered to them only by a role's tool set).
pub fn asks_every_call(ctx: &TurnContext, spec: &crate::tools::ToolSpec) -> bool {
    ctx.access() == Access::Guest && !guest_may_use(spec)
}

/// The tools offered this turn: registered, in scope for the mode, not switched off,
/// and passing their own availability check. No keyword router.
fn offered_tools(
    engine: &Engine,
    settings: &Settings,
    ctx: &TurnContext,
    recent: &[String],
) -> Vec<Arc<dyn Tool>> {
    let mode = ctx.mode;
    let avail = Availability {
        mode,
        recent_user_messages: recent,
        settings,
        origin: ctx.origin(),
    };
    engine
        .tools
        .all()
        .iter()
        .filter(|t| {
            let spec = t.spec();
            let in_scope = matches!(
                (spec.scope, mode),
                (Scope::Both, _)
                    | (Scope::CompanionOnly, Mode::Companion)
                    | (Scope::WorkOnly, Mode::Work)
            );
            in_scope && !settings.disabled_toolsets.contains(&spec.family) && t.available(&avail)
        })
        .cloned()
        .collect()
}

impl Loop<'_> {
    async fn iterate(&mut self, items: &mut Vec<Item>) -> LoopEnd {
        let mut texts: Vec<String> = Vec::new();
        // What the tool families note for this turn (the people in it), read once.
        let notes = self.engine.tools.notes(&self.ctx, &self.engine.store).await;
        for iteration in 1..=self.caps.max_iter {
            self.offer_active_mcp_tools();
            let spent = self.spent.tools_spent(&self.caps);
            self.words_only = spent || iteration == self.caps.max_iter;
            let specs: Vec<&crate::tools::ToolSpec> = if self.words_only {
                Vec::new()
            } else {
                self.offered.iter().map(|t| t.spec()).collect()
            };
            let mut req = request_for(self.engine, &self.ctx, &specs, items, &notes);
            let reply = match self.ask_fitted(items, &mut req, !texts.is_empty()).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(session = %self.session.id, "model request failed: {e}");
                    let sentence = e.sentence();
                    self.emit(Frame::TextDelta {
                        text: sentence.clone(),
                    });
                    texts.push(sentence);
                    return LoopEnd {
                        text: texts.join("\n\n"),
                        status: TurnStatus::Error,
                    };
                }
            };
            let text = reply.text();
            if !text.trim().is_empty() {
                texts.push(text);
            }
            let calls: Vec<_> = reply.tool_calls().into_iter().cloned().collect();
            items.extend(reply.items);
            if calls.is_empty() {
                // A chain a cap cut is never reported as done.
                let status = if self.words_only && iteration > 1 {
                    TurnStatus::Capped
                } else {
                    TurnStatus::Completed
                };
                return LoopEnd {
                    text: texts.join("\n\n"),
                    status,
                };
            }
            if self.words_only {
                // Tools were withdrawn, yet it called some: nothing runs, the chain is cut.
                break;
            }
            for call in calls {
                let output = self.dispatch(&call).await;
                items.push(Item::ToolResult {
                    call_id: call.call_id.clone(),
                    output,
                });
            }
            if self.deferred_this_turn {
                // The card is up and a detached runner waits for it: the turn ends here.
                let text = super::deferred::ASKED_ON_SCREEN.to_string();
                self.emit(Frame::TextDelta { text: text.clone() });
                texts.push(text);
                return LoopEnd {
                    text: texts.join("\n\n"),
                    status: TurnStatus::Completed,
                };
            }
        }
        let note = "I ran out of steps for this turn before finishing, so this is not done yet."
            .to_string();
        self.emit(Frame::TextDelta { text: note.clone() });
        texts.push(note);
        LoopEnd {
            text: texts.join("\n\n"),
            status: TurnStatus::Capped,
        }
    }

    /// Work mode: add the tools of the MCP servers this job activated (and the
    /// browser's) that are not offered yet, so activate_tools takes effect from the
    /// next request. MCP tools are work-only; a switched-off `mcp:<server>` stays off.
    fn offer_active_mcp_tools(&mut self) {
        let Some(mcp) = self.engine.tools.source() else {
            return;
        };
        if self.ctx.mode != Mode::Work {
            return;
        }
        for tool in mcp.active_tools(&self.session.id, self.ctx.run_id.as_deref()) {
            let spec = tool.spec();
            let offered = self.offered.iter().any(|t| t.spec().name == spec.name);
            if !offered && !self.settings.disabled_toolsets.contains(&spec.family) {
                self.offered.push(tool);
            }
        }
    }

    pub(super) fn emit(&self, frame: Frame) {
        self.session.emit(self.ctx.run_id.as_deref(), frame);
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
