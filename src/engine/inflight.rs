//! Guards that keep the store's record of what is under way honest while Kotoba lives:
//! a running turn or waiting card is unmarked when it ends however it ends (its future
//! dropped included), and an executed row is completed with its outcome, or as
//! interrupted when the turn was cut. Only a crash leaves them open, for the next
//! start-up to close (docs/engine.md §6).

use std::sync::Arc;

use crate::store::{Approver, Store, StoreError};

/// The detail of an executed row whose turn was cut while it ran (barge-in, /stop).
pub const INTERRUPTED_RUN_DETAIL: &str =
    "interrupted: the turn was cut while it ran, and it was ended";

/// A turn, card or background job marked as under way; unmarked on drop (it ended
/// however it ended). Only a crash leaves the mark, for the next start-up to close.
pub(crate) struct Underway {
    store: Arc<Store>,
    id: Option<i64>,
    unmark: fn(&Store, i64) -> Result<(), StoreError>,
}

impl Underway {
    fn new(
        store: &Arc<Store>,
        marked: Result<i64, StoreError>,
        what: &str,
        unmark: fn(&Store, i64) -> Result<(), StoreError>,
    ) -> Underway {
        let id = marked
            .map_err(|e| tracing::warn!("marking {what} as under way: {e}"))
            .ok();
        Underway {
            store: store.clone(),
            id,
            unmark,
        }
    }

    /// Mark a turn in `session` as running.
    pub(crate) fn turn(store: &Arc<Store>, session: &str) -> Underway {
        let what = format!("the turn of {session}");
        Underway::new(
            store,
            store.open_turn(session),
            &what,
            Store::close_inflight,
        )
    }

    /// A turn already marked as running (`Store::begin_turn`'s mark `id`).
    pub(crate) fn turn_marked(store: &Arc<Store>, id: i64) -> Underway {
        Underway {
            store: store.clone(),
            id: Some(id),
            unmark: Store::close_inflight,
        }
    }

    /// The mark, taken: its owner removes it now (`Store::end_turn`), so dropping this
    /// removes nothing.
    pub(crate) fn take(&mut self) -> Option<i64> {
        self.id.take()
    }

    /// Mark an approval card as waiting.
    pub(crate) fn card(
        store: &Arc<Store>,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Underway {
        let marked = store.open_card(session, tool, action, risk);
        let what = format!("a card of {session}");
        Underway::new(store, marked, &what, Store::close_inflight)
    }

    /// Mark background job `run_id` of `session` as running (a crash leaves it to be
    /// announced at the next start-up).
    pub(crate) fn job(store: &Arc<Store>, run_id: &str, session: &str, goal: &str) -> Underway {
        let marked = store.open_job(run_id, session, goal);
        let what = format!("the job of {session}");
        Underway::new(store, marked, &what, Store::close_job)
    }
}

impl Drop for Underway {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            if let Err(e) = (self.unmark)(&self.store, id) {
                tracing::warn!("unmarking what ended: {e}");
            }
        }
    }
}

/// An `executed` row written as its command starts; completed by [`Running::finish`],
/// or as `executed:failed`, interrupted, when dropped first.
pub(crate) struct Running {
    store: Arc<Store>,
    id: Option<i64>,
}

impl Running {
    /// Write the row now, before the command starts.
    pub(crate) fn start(
        store: &Arc<Store>,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Running {
        let id = store
            .audit_started(session, tool, action, risk)
            .map_err(|e| tracing::error!("writing the audit trail: {e}"))
            .ok();
        Running {
            store: store.clone(),
            id,
        }
    }

    /// Complete the row with its outcome; `None` removes it (nothing reached the
    /// machine after all: it could not start, was refused or deferred).
    pub(crate) fn finish(mut self, outcome: Option<(Approver, &str)>) {
        if let Some(id) = self.id.take() {
            if let Err(e) = self.store.audit_finished(id, outcome) {
                tracing::error!("completing the audit trail: {e}");
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let outcome = Some((Approver::ExecutedFailed, INTERRUPTED_RUN_DETAIL));
            if let Err(e) = self.store.audit_finished(id, outcome) {
                tracing::error!("completing the audit trail: {e}");
            }
        }
    }
}
