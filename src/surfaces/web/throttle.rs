//! Wrong passwords slow down: the login form, a bearer `Authorization` header and a
//! `?token=` are guesses. Each client address gets [`FREE_TRIES`] wrong ones, and all
//! addresses together [`SHARED_FREE_TRIES`] (one machine has many loopback addresses);
//! past either, the next try must wait — [`FIRST_WAIT`], doubling with each wrong one, at
//! most [`MAX_WAIT`] — and a try during the wait is refused unchecked, even with the
//! right password. A right password forgets the address's failures and the shared
//! count; so do [`FORGET_AFTER`] without a wrong one. The session cookie and the token
//! are never counted or slowed (`auth.rs`), so no one can lock the owner out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use tokio::time::Instant;

/// Wrong passwords an address may send before it has to wait.
pub(crate) const FREE_TRIES: u32 = 5;
/// Wrong passwords all addresses together may send before every one has to wait.
pub(crate) const SHARED_FREE_TRIES: u32 = 20;
/// The wait after the first wrong password past the free ones.
pub(crate) const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(300);
/// How long an address's failures are kept after its last wrong password.
pub(crate) const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);
/// Addresses kept at most (past it, the quiet ones are forgotten first).
const KEEP: usize = 10_000;

/// The wrong passwords of one address, or of all together.
#[derive(Clone, Copy, Debug)]
struct Failures {
    /// Wrong passwords since the last right one (or since they were forgotten).
    count: u32,
    /// When the last wrong one came.
    last: Instant,
    /// No try before this.
    until: Instant,
}

impl Failures {
    fn new(now: Instant) -> Failures {
        Failures {
            count: 0,
            last: now,
            until: now,
        }
    }

    /// One more wrong one at `now`, with `free` tries before the waits start.
    fn add(&mut self, now: Instant, free: u32) {
        if now.saturating_duration_since(self.last) >= FORGET_AFTER {
            self.count = 0;
        }
        self.count += 1;
        self.last = now;
        if self.count >= free {
            let doublings = (self.count - free).min(16);
            self.until = now + (FIRST_WAIT * 2u32.pow(doublings)).min(MAX_WAIT);
        }
    }

    fn wait(&self, now: Instant) -> Option<Duration> {
        (self.until > now).then(|| self.until - now)
    }
}

/// Both counts change together on every guess: one lock.
#[derive(Debug, Default)]
struct Counts {
    /// By client address (None when the server did not say: one shared entry).
    by_addr: HashMap<Option<IpAddr>, Failures>,
    /// Every address's wrong passwords together.
    all: Option<Failures>,
}

/// The failures of every address that sent a wrong password lately.
#[derive(Debug, Default)]
pub(crate) struct LoginThrottle {
    counts: Mutex<Counts>,
}

impl LoginThrottle {
    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long `addr` must still wait before a try at `now` (None: it may try): the
    /// longer of its own wait and the shared one.
    pub(crate) fn wait(&self, addr: Option<IpAddr>, now: Instant) -> Option<Duration> {
        let c = self.counts();
        let own = c.by_addr.get(&addr).and_then(|f| f.wait(now));
        let all = c.all.and_then(|f| f.wait(now));
        own.max(all)
    }

    /// `addr` sent a wrong password at `now`.
    pub(crate) fn failed(&self, addr: Option<IpAddr>, now: Instant) {
        let mut c = self.counts();
        if c.by_addr.len() >= KEEP {
            c.by_addr
                .retain(|_, f| now.saturating_duration_since(f.last) < FORGET_AFTER);
            if c.by_addr.len() >= KEEP {
                c.by_addr.clear();
            }
        }
        c.by_addr
            .entry(addr)
            .or_insert_with(|| Failures::new(now))
            .add(now, FREE_TRIES);
        c.all
            .get_or_insert_with(|| Failures::new(now))
            .add(now, SHARED_FREE_TRIES);
    }

    /// `addr` gave the right password: its failures and the shared count are forgotten.
    pub(crate) fn succeeded(&self, addr: Option<IpAddr>) {
        let mut c = self.counts();
        c.by_addr.remove(&addr);
        c.all = None;
    }
}

/// The client's address, when the server records it (`kotoba serve` does).
pub(crate) struct ClientAddr(pub(crate) Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr(client_addr(&parts.extensions)))
    }
}

/// The client's address from a request's extensions.
pub(crate) fn client_addr(extensions: &axum::http::Extensions) -> Option<IpAddr> {
    extensions
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip())
}

/// Whole seconds to wait, rounded up (what `Retry-After` says).
pub(crate) fn seconds(wait: Duration) -> u64 {
    wait.as_millis().div_ceil(1000).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u8) -> Option<IpAddr> {
        Some(IpAddr::from([10, 0, 0, n]))
    }

    #[tokio::test(start_paused = true)]
    async fn five_wrong_passwords_are_free_then_each_waits_longer_up_to_five_minutes() {
        let t = LoginThrottle::default();
        let a = addr(1);
        for _ in 0..FREE_TRIES - 1 {
            t.failed(a, Instant::now());
            assert_eq!(t.wait(a, Instant::now()), None, "still free");
        }
        let mut expected = FIRST_WAIT;
        for _ in 0..12 {
            t.failed(a, Instant::now());
            assert_eq!(t.wait(a, Instant::now()), Some(expected));
            tokio::time::advance(expected).await;
            assert_eq!(t.wait(a, Instant::now()), None, "the wait ends");
            expected = (expected * 2).min(MAX_WAIT);
        }
        assert_eq!(expected, MAX_WAIT, "the wait stops growing at five minutes");
    }

    #[tokio::test(start_paused = true)]
    async fn a_right_password_or_a_quarter_hour_of_quiet_forgets_the_failures_and_other_addresses_are_not_slowed(
    ) {
        let t = LoginThrottle::default();
        for _ in 0..FREE_TRIES {
            t.failed(addr(1), Instant::now());
        }
        assert!(t.wait(addr(1), Instant::now()).is_some());
        assert_eq!(t.wait(addr(2), Instant::now()), None, "another address");
        t.succeeded(addr(1));
        assert_eq!(
            t.wait(addr(1), Instant::now()),
            None,
            "forgotten on success"
        );

        for _ in 0..FREE_TRIES {
            t.failed(addr(3), Instant::now());
        }
        tokio::time::advance(FORGET_AFTER).await;
        t.failed(addr(3), Instant::now());
        assert_eq!(
            t.wait(addr(3), Instant::now()),
            None,
            "after a quiet quarter hour the count starts again"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn wrong_passwords_spread_over_many_addresses_meet_the_shared_budget() {
        let t = LoginThrottle::default();
        // Twenty loopback addresses, each under its own free tries.
        let mut sent = 0;
        'spread: for round in 0..FREE_TRIES - 1 {
            for n in 1..=20u8 {
                if t.wait(addr(n), Instant::now()).is_some() {
                    break 'spread;
                }
                t.failed(addr(n), Instant::now());
                sent += 1;
                let _ = round;
            }
        }
        assert_eq!(sent, SHARED_FREE_TRIES, "the shared budget stops them");
        assert!(
            t.wait(addr(200), Instant::now()).is_some(),
            "a fresh address waits too"
        );
        tokio::time::advance(FIRST_WAIT).await;
        assert_eq!(t.wait(addr(200), Instant::now()), None, "the wait ends");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(seconds(Duration::from_millis(1)), 1);
        assert_eq!(seconds(Duration::from_millis(1500)), 2);
        assert_eq!(seconds(Duration::from_secs(300)), 300);
    }
}
