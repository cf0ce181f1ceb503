//! Guards that keep the store's record of what is under way honest while Kotoba lives:
//! a running turn or waiting card is unmarked when it ends however it ends (its future
//! dropped included), and an executed row is completed with its outcome, or as
//! interrupted when the turn was cut. Only a crash leaves them open, for the next
//! start-up to close (docs/engine.md §6). The store is async and a drop cannot wait,
//! so what a drop writes goes to a task of its own ([`later`]).

use std::sync::Arc;

use kotoba_store::{Approver, Store, StoreError};

/// The detail of an executed row whose turn was cut while it ran (barge-in, /stop).
pub(super) const INTERRUPTED_RUN_DETAIL: &str =
    "interrupted: the turn was cut while it ran, and it was ended";

/// Which table a mark is in (what unmarks it).
#[derive(Clone, Copy)]
enum Mark {
    /// A turn or a card (`Store::close_inflight`).
    Inflight,
    /// A background job (`Store::close_job`).
    Job,
}

/// A turn, card or background job marked as under way; unmarked on drop (it ended
/// however it ended). Only a crash leaves the mark, for the next start-up to close.
pub(crate) struct Underway {
    store: Arc<Store>,
    id: Option<i64>,
    unmark: Mark,
}

impl Underway {
    fn new(
        store: &Arc<Store>,
        marked: Result<i64, StoreError>,
        what: &str,
        unmark: Mark,
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
    pub(crate) async fn turn(store: &Arc<Store>, session: &str) -> Underway {
        let what = format!("the turn of {session}");
        Underway::new(store, store.open_turn(session).await, &what, Mark::Inflight)
    }

    /// A turn already marked as running (`Store::begin_turn`'s mark `id`).
    pub(crate) fn turn_marked(store: &Arc<Store>, id: i64) -> Underway {
        Underway {
            store: store.clone(),
            id: Some(id),
            unmark: Mark::Inflight,
        }
    }

    /// The mark, taken: its owner removes it now (`Store::end_turn`), so dropping this
    /// removes nothing.
    pub(crate) fn take(&mut self) -> Option<i64> {
        self.id.take()
    }

    /// Mark an approval card as waiting.
    pub(crate) async fn card(
        store: &Arc<Store>,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Underway {
        let marked = store.open_card(session, tool, action, risk).await;
        let what = format!("a card of {session}");
        Underway::new(store, marked, &what, Mark::Inflight)
    }

    /// Mark background job `run_id` of `session` as running (a crash leaves it to be
    /// announced at the next start-up).
    pub(crate) async fn job(
        store: &Arc<Store>,
        run_id: &str,
        session: &str,
        goal: &str,
    ) -> Underway {
        let marked = store.open_job(run_id, session, goal).await;
        let what = format!("the job of {session}");
        Underway::new(store, marked, &what, Mark::Job)
    }
}

impl Drop for Underway {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let (store, mark) = (self.store.clone(), self.unmark);
            self.store.write_later(async move {
                let unmarked = match mark {
                    Mark::Inflight => store.close_inflight(id).await,
                    Mark::Job => store.close_job(id).await,
                };
                if let Err(e) = unmarked {
                    tracing::warn!("unmarking what ended: {e}");
                }
            });
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
    pub(crate) async fn start(
        store: &Arc<Store>,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Running {
        let id = store
            .audit_started(session, tool, action, risk)
            .await
            .map_err(|e| tracing::error!("writing the audit trail: {e}"))
            .ok();
        Running {
            store: store.clone(),
            id,
        }
    }

    /// Complete the row with its outcome; `None` removes it (nothing reached the
    /// machine after all: it could not start, was refused or deferred).
    pub(crate) async fn finish(mut self, outcome: Option<(Approver, &str)>) {
        if let Some(id) = self.id.take() {
            if let Err(e) = self.store.audit_finished(id, outcome).await {
                tracing::error!("completing the audit trail: {e}");
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let store = self.store.clone();
            self.store.write_later(async move {
                let outcome = Some((Approver::ExecutedFailed, INTERRUPTED_RUN_DETAIL));
                if let Err(e) = store.audit_finished(id, outcome).await {
                    tracing::error!("completing the audit trail: {e}");
                }
            });
        }
    }
}
