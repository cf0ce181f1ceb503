//! Kotoba's test kit: what the binary crate's tests and benchmarks drive the real code
//! against. Loopback servers that speak the real protocols — Discord's gateway and REST
//! ([`discord`]), Discord voice with DAVE ([`voice`]), the model over both wire APIs
//! ([`model_server`], answering from the engine's one scripted model), speech and the
//! realtime session ([`speech_server`]), PostgreSQL ([`postgres`]) and a latency proxy
//! ([`proxy`]) — one server-thread helper ([`thread`]), a web site to read
//! ([`page_server`]), and one rig per surface: the page and `/v1` in process ([`web`]),
//! Discord in process ([`discord::rig`]), the binary as a child ([`process`]); the
//! engine's own rig is `kotoba_engine::engine::testing`.
// Everything here is test code: a failed fixture is a failed test, so unwraps and panics
// are how it reports.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod discord;
pub mod model_server;
pub mod page_server;
pub mod process;
pub mod speech_server;
pub mod voice;
pub mod web;

/// The one scripted model: every test and benchmark answers from it.
pub use kotoba_engine::engine::testing::Script;
/// The real PostgreSQL server the test command started: a fresh database per test.
pub use kotoba_store::testing::postgres;
/// A latency proxy in front of a server (PostgreSQL), that can be cut and restored.
pub use kotoba_store::testing::proxy;
/// The one way a loopback server runs on a thread and runtime of its own.
pub use kotoba_store::testing::thread;

use std::time::{Duration, Instant};

/// Wait until `check` holds, polling every 25 ms; fail after `within`, saying `what`.
/// How long it took.
pub async fn until(what: &str, within: Duration, mut check: impl AsyncFnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < within,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    start.elapsed()
}

/// Wait until `find` finds something, polling every 25 ms; fail after `within`, saying
/// `what`.
pub async fn until_some<T>(
    what: &str,
    within: Duration,
    mut find: impl AsyncFnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(t) = find().await {
            return t;
        }
        assert!(
            start.elapsed() < within,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
