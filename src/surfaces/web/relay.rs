//! The hidden announce turn: when a `work_done` frame (a background job or a deferred
//! run ended) reaches a session that has the page open, the server fires one hidden
//! `__work_done__` turn for it — once per run_id, however many pages are open — so she
//! tells the person what happened. The sentinel is never stored in the transcript; the
//! engine anchors the turn to the person's last request, so a re-emission of a deferred
//! call in it opens no second card.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use crate::engine::{Engine, WORK_DONE_SENTINEL};
use crate::protocol::{Channel, Register, TurnRequest};

/// How many run_ids are remembered (older ones could fire again; they never recur).
const REMEMBERED: usize = 4096;

/// Fires each run's announce turn once.
pub struct WorkDoneRelay {
    engine: Arc<Engine>,
    fired: Mutex<(HashSet<String>, VecDeque<String>)>,
}

impl WorkDoneRelay {
    /// A relay over `engine`.
    pub fn new(engine: Arc<Engine>) -> WorkDoneRelay {
        WorkDoneRelay {
            engine,
            fired: Mutex::new((HashSet::new(), VecDeque::new())),
        }
    }

    /// True the first time `run_id` is seen.
    fn first_time(&self, run_id: &str) -> bool {
        let mut g = match self.fired.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let (set, order) = &mut *g;
        if !set.insert(run_id.to_string()) {
            return false;
        }
        order.push_back(run_id.to_string());
        while order.len() > REMEMBERED {
            if let Some(old) = order.pop_front() {
                set.remove(&old);
            }
        }
        true
    }

    /// The hidden turn's text: the sentinel, then what happened, for her to tell.
    pub fn announce_text(run_id: &str, ok: bool, summary: &str) -> String {
        format!(
            "{WORK_DONE_SENTINEL}\nBackground run {run_id} has ended ({}): {summary}\n\
             Tell the person what happened, briefly and in your own words.",
            if ok { "it worked" } else { "it did not work" }
        )
    }

    /// Fire the announce turn for `run_id` in engine session `session`, unless it fired
    /// already. Typed on the page: channel text; register voice unless text-only.
    pub fn fire(&self, session: &str, run_id: &str, ok: bool, summary: &str, register: Register) {
        if !self.first_time(run_id) {
            return;
        }
        let req = TurnRequest {
            session: session.to_string(),
            text: Self::announce_text(run_id, ok, summary),
            author: "kotoba".into(),
            register,
            channel: Channel::Text,
            el_call_bound: Some(false),
            replace_running: false,
            hidden: true,
        };
        let engine = self.engine.clone();
        tokio::spawn(async move {
            engine.run_turn(req).await;
        });
    }
}
