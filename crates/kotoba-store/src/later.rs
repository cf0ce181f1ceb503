//! Writes a drop could not wait for: a guard's `Drop` (a turn's unmark, an interrupted
//! executed row, a dismissed card's audit row, a settled card) cannot `await`, so its
//! write runs on a task of its own — counted here, so a process that ends (the
//! terminal after Ctrl-C, `serve` after its signal) awaits every write already handed
//! over before it exits, and a row a drop promised is never lost to the exit.

use super::Store;
use std::future::Future;
use std::sync::atomic::Ordering;

/// The writes handed over and not yet finished.
#[derive(Debug, Default)]
pub(super) struct Later {
    /// How many are still running.
    pending: std::sync::atomic::AtomicUsize,
    /// Woken each time the count falls to zero.
    idle: tokio::sync::Notify,
}

/// Counts one write as finished however its task ends (done, or dropped with the
/// runtime).
struct Finished(std::sync::Arc<Store>);

impl Drop for Finished {
    fn drop(&mut self) {
        if self.0.later.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.later.idle.notify_waiters();
        }
    }
}

impl Store {
    /// Run `write` on a task of its own, counted until it finishes
    /// ([`Store::finish_later`] awaits it). With no runtime left (the process is ending
    /// without a graceful stop) it is left for the next start-up to close, as a crash's
    /// would be.
    pub fn write_later(
        self: &std::sync::Arc<Self>,
        write: impl Future<Output = ()> + Send + 'static,
    ) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        self.later.pending.fetch_add(1, Ordering::AcqRel);
        let finished = Finished(self.clone());
        rt.spawn(async move {
            let _finished = finished;
            write.await;
        });
    }

    /// Write what waits to be written: the seen marks noted for later, then every write
    /// handed to [`Store::write_later`] (and any they hand over meanwhile) to its end.
    /// A process awaits this before it exits.
    pub async fn finish_later(&self) {
        self.flush_seen_later().await;
        loop {
            let idle = self.later.idle.notified();
            if self.later.pending.load(Ordering::Acquire) == 0 {
                return;
            }
            idle.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn a_process_that_finishes_its_later_writes_finds_every_row_a_drop_handed_over() {
        for db in crate::testing::each() {
            let store = Arc::new(db.open().await);
            for n in 0..3u64 {
                let s = store.clone();
                store.write_later(async move {
                    // Slower than the caller: only waiting for it finds the row.
                    tokio::time::sleep(Duration::from_millis(50 * (n + 1))).await;
                    s.mark_discord_seen(n + 1, 7).await.unwrap();
                });
            }
            store.finish_later().await;
            let mut seen = store.discord_seen_channels().await.unwrap();
            seen.sort();
            assert_eq!(seen, vec![(1, 7), (2, 7), (3, 7)], "{}", db.name);
            // With nothing pending it returns at once.
            tokio::time::timeout(Duration::from_secs(1), store.finish_later())
                .await
                .expect("nothing pending");
        }
    }
}
