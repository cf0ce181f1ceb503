//! Time spent blocked on a person (cards, questions): heartbeats are postponed while
//! it runs, and a background job's compute budget is wall time minus it.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// Counts open waits on a person and sums the time they held.
#[derive(Debug, Default)]
pub struct PersonWait {
    open: AtomicUsize,
    spans: Mutex<(Duration, Option<Instant>)>,
}

impl PersonWait {
    fn spans(&self) -> std::sync::MutexGuard<'_, (Duration, Option<Instant>)> {
        match self.spans.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Whether a person must resolve something right now.
    pub fn is_blocked(&self) -> bool {
        self.open.load(Ordering::SeqCst) > 0
    }

    /// All time spent blocked so far, including a wait still open.
    pub fn waited(&self) -> Duration {
        let s = self.spans();
        s.0 + s.1.map(|since| since.elapsed()).unwrap_or_default()
    }

    /// Mark a wait open until the returned guard drops.
    pub fn block(self: &Arc<Self>) -> Blocked {
        if self.open.fetch_add(1, Ordering::SeqCst) == 0 {
            self.spans().1 = Some(Instant::now());
        }
        Blocked(self.clone())
    }
}

/// An open wait on a person; dropping it closes the wait.
pub struct Blocked(Arc<PersonWait>);

impl Drop for Blocked {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::SeqCst) == 1 {
            let mut s = self.0.spans();
            if let Some(since) = s.1.take() {
                s.0 += since.elapsed();
            }
        }
    }
}

/// What a background job's loop reports to its runner.
#[derive(Debug, Default)]
pub struct JobMeter {
    /// Time blocked on a person, not charged to the budget.
    pub wait: Arc<PersonWait>,
    /// Action rows opened so far (the job card's step count).
    pub steps: AtomicU32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn time_blocked_on_a_person_is_summed_across_nested_waits() {
        let w = Arc::new(PersonWait::default());
        tokio::time::sleep(Duration::from_secs(5)).await;
        {
            let _a = w.block();
            let _b = w.block();
            assert!(w.is_blocked());
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        assert!(!w.is_blocked());
        tokio::time::sleep(Duration::from_secs(7)).await;
        assert_eq!(w.waited(), Duration::from_secs(30));
    }
}
