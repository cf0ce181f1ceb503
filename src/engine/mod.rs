//! The engine: sessions, the one agentic loop, cards and narration. It knows turns,
//! tools, cards and frames, and never imports a surface (serenity, songbird, axum).

pub mod approval;
pub mod budget;
pub mod deferred;
mod dispatch;
pub mod gate;
mod gating;
pub mod narration;
pub mod output;
pub mod rows;
pub mod session;
pub mod transport;
pub mod turn;

use std::sync::{Arc, Weak};

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::llm::{Item, ModelClient};
use crate::protocol::{Decision, Frame, Mode, TurnRequest, TurnResult, TurnStatus};
use crate::soul::Soul;
use crate::store::Store;
use crate::tools::Registry;

pub use approval::{AnswerError, Answerer, AskEnd, CardBoard};
pub use dispatch::{
    companion_only_sentence, switched_off_sentence, unknown_sentence, withheld_sentence,
    work_only_sentence,
};
pub use session::{Session, Sessions};
pub use turn::{LoopEnd, TurnContext};

/// The sentinel of the hidden announce turn a surface fires when a job ends.
pub const WORK_DONE_SENTINEL: &str = "__work_done__";

/// One engine per process, shared by every surface as `Arc<Engine>`.
pub struct Engine {
    /// Configuration.
    pub config: Arc<Config>,
    pub(crate) model: Arc<dyn ModelClient>,
    pub(crate) tools: Registry,
    pub(crate) soul: Soul,
    /// The durable store.
    pub store: Arc<Store>,
    /// Every loaded session.
    pub sessions: Sessions,
    /// Every open card.
    pub cards: Arc<CardBoard>,
    /// Deferred requests (one request, one run) and their waiting runners.
    pub deferred: Arc<deferred::Deferred>,
    shutdown: CancellationToken,
    /// This engine, for detached runners that must outlive a turn.
    me: Weak<Engine>,
}

impl Engine {
    /// Build an engine from its parts.
    pub fn new(
        config: Arc<Config>,
        model: Arc<dyn ModelClient>,
        tools: Registry,
        soul: Soul,
        store: Arc<Store>,
    ) -> Arc<Engine> {
        Arc::new_cyclic(|me| Engine {
            config,
            model,
            tools,
            soul,
            store,
            sessions: Sessions::default(),
            cards: Arc::new(CardBoard::default()),
            deferred: Arc::new(deferred::Deferred::default()),
            shutdown: CancellationToken::new(),
            me: me.clone(),
        })
    }

    /// The tools registered.
    pub fn tools(&self) -> &Registry {
        &self.tools
    }

    /// The session `id`, loaded from the store on first use.
    pub fn session(&self, id: &str) -> Arc<Session> {
        self.sessions.get_or_load(id, &self.store)
    }

    /// Answer a card on behalf of `who`.
    pub fn answer_card(
        &self,
        request_id: &str,
        decision: Decision,
        who: &Answerer,
    ) -> Result<(), AnswerError> {
        self.cards.answer(request_id, decision, who)
    }

    /// Every saved grant, for the slash command and the web page.
    pub fn grants(&self) -> Result<Vec<crate::store::Grant>, crate::store::StoreError> {
        self.store.grants()
    }

    /// Revoke a saved grant by id; false when there was none.
    pub fn revoke_grant(&self, id: i64) -> Result<bool, crate::store::StoreError> {
        self.store.revoke_grant(id)
    }

    /// The newest audit rows (of one session when given), newest first.
    pub fn audit_trail(
        &self,
        session: Option<&str>,
        limit: usize,
    ) -> Result<Vec<crate::store::AuditRow>, crate::store::StoreError> {
        self.store.audit_rows(session, limit)
    }

    /// Cut every running turn (process shutdown): their rows close as interrupted.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Run one turn: one at a time per session (a new one waits, unless it replaces the
    /// running one). The turn's frames go to the session's bus; the result comes back.
    pub async fn run_turn(&self, req: TurnRequest) -> TurnResult {
        self.run_turn_tapped(req, None).await
    }

    /// [`Engine::run_turn`], and every frame emitted on the session while this turn holds
    /// it (from its `turn_started` to its `turn_done`) is also sent to `tap`. The tap is
    /// not a listener: it never makes `has_listener` true (a /v1 reply streams from it).
    pub async fn run_turn_tapped(
        &self,
        req: TurnRequest,
        tap: Option<tokio::sync::mpsc::UnboundedSender<Arc<crate::protocol::Event>>>,
    ) -> TurnResult {
        let session = self.session(&req.session);
        if req.replace_running {
            session.cancel_running();
        }
        let _turn = session.turn_lock.lock().await;
        let _tap = TapGuard::set(&session, tap);
        let cancel = self.shutdown.child_token();
        session.set_current(Some(cancel.clone()));
        let turn_id = format!("turn-{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff);
        let run_id: Option<String> = None;
        session.emit(
            run_id.as_deref(),
            Frame::TurnStarted {
                turn_id: turn_id.clone(),
            },
        );
        if !req.hidden {
            if let Err(e) =
                self.store
                    .append_message(&session.id, "user", &req.author, &req.text, false)
            {
                tracing::warn!("saving a user line: {e}");
            }
        }
        let mut items = session.history();
        items.push(Item::User {
            text: req.text.clone(),
        });
        let ctx = TurnContext {
            register: req.register,
            channel: req.channel,
            el_call_bound: req.el_call_bound,
            mode: Mode::Companion,
            run_id: None,
            // A hidden announce turn re-derives the person's last request, so its
            // re-emission of a deferred call meets the one-request-one-run guard.
            user_request: if req.hidden {
                session.last_user_request()
            } else {
                Some(req.text.clone())
            },
        };
        let end = tokio::select! {
            end = turn::run_loop(self, session.clone(), ctx, items) => end,
            _ = cancel.cancelled() => LoopEnd { text: String::new(), status: TurnStatus::Interrupted },
        };
        session.set_current(None);
        // A hidden turn's sentinel never reaches the transcript; her answer does.
        let mut lines = Vec::new();
        if !req.hidden {
            lines.push(Item::User {
                text: req.text.clone(),
            });
        }
        if !end.text.is_empty() {
            lines.push(Item::Assistant {
                text: end.text.clone(),
            });
            if let Err(e) =
                self.store
                    .append_message(&session.id, "assistant", "kotoba", &end.text, false)
            {
                tracing::warn!("saving her line: {e}");
            }
        }
        session.push_history(lines);
        session.emit(
            None,
            Frame::TurnDone {
                turn_id,
                text: end.text.clone(),
                status: end.status,
            },
        );
        TurnResult {
            text: end.text,
            status: end.status,
        }
    }
}

/// Clears a session's tap when the turn that set it ends (or its future is dropped).
struct TapGuard<'a>(&'a session::Session, bool);

impl<'a> TapGuard<'a> {
    fn set(
        session: &'a session::Session,
        tap: Option<tokio::sync::mpsc::UnboundedSender<Arc<crate::protocol::Event>>>,
    ) -> TapGuard<'a> {
        let on = tap.is_some();
        if on {
            session.set_tap(tap);
        }
        TapGuard(session, on)
    }
}

impl Drop for TapGuard<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.set_tap(None);
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_cards;
#[cfg(test)]
mod tests_gate;
