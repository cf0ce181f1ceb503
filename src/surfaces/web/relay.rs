//! The hidden announce turn: when a `work_done` frame (a background job or a deferred
//! run ended) reaches a session that has the page open, the server asks the engine for
//! that run's announce turn. The engine runs it once per run_id, however many pages are
//! open, never stores the `__work_done__` sentinel, and anchors the turn to the
//! person's last request, so a re-emission of a deferred call in it opens no second card.

use std::sync::Arc;

use crate::engine::Engine;
use crate::protocol::Register;

/// Asks the engine for each run's one announce turn.
pub struct WorkDoneRelay {
    engine: Arc<Engine>,
}

impl WorkDoneRelay {
    /// A relay over `engine`.
    pub fn new(engine: Arc<Engine>) -> WorkDoneRelay {
        WorkDoneRelay { engine }
    }

    /// Fire the announce turn for `run_id` in engine session `session` (the engine
    /// refuses a second one). Typed on the page: register voice unless text-only.
    pub fn fire(&self, session: &str, run_id: &str, summary: &str, register: Register) {
        let (engine, session) = (self.engine.clone(), session.to_string());
        let (run_id, summary) = (run_id.to_string(), summary.to_string());
        tokio::spawn(async move {
            engine
                .announce_work(&session, &run_id, &summary, register)
                .await;
        });
    }
}
