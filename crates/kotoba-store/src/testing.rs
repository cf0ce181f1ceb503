//! The store's tests run against both backends: a SQLite file in a temporary folder, and
//! a fresh database on the PostgreSQL server the test command started
//! (`KOTOBA_TEST_DATABASE_URL`, a URL without a database name). Outside CI a missing
//! server skips the PostgreSQL half loudly; in CI it fails.

// Test support, compiled only for tests (here, and with the `testing` feature for the
// crates above): a failed set-up is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use super::Store;

/// One backend to run a test against; `open` may be called again to reopen it.
pub struct Fixture {
    /// "sqlite" or "postgres", for assertion messages.
    pub name: &'static str,
    /// The SQLite file, or the PostgreSQL URL.
    target: Target,
    /// Keeps the SQLite folder until the test ends.
    _dir: Option<tempfile::TempDir>,
}

enum Target {
    File(std::path::PathBuf),
    Url(String),
}

impl Fixture {
    /// Open (or reopen) this backend's store.
    pub async fn open(&self) -> Store {
        match &self.target {
            Target::File(p) => Store::open(p).expect("open the SQLite store"),
            Target::Url(u) => Store::connect(u)
                .await
                .expect("connect to the test PostgreSQL"),
        }
    }

    /// The SQLite file (`None` on PostgreSQL).
    pub fn file(&self) -> Option<std::path::PathBuf> {
        match &self.target {
            Target::File(p) => Some(p.clone()),
            Target::Url(_) => None,
        }
    }
}

pub mod postgres;
pub mod proxy;
pub mod thread;

/// A fresh database on the test server, its URL; `None` (said loudly) when there is no
/// server outside CI.
pub fn postgres_url() -> Option<String> {
    postgres::fresh_database("(PostgreSQL half)")
}

/// Two stores on one fresh PostgreSQL database, as two processes would hold them, both
/// alive in the store's eyes (a heartbeat each); `None` without a test server.
pub async fn two_live_processes() -> Option<(std::sync::Arc<Store>, std::sync::Arc<Store>)> {
    let url = postgres_url()?;
    let open = async || {
        let s = Store::connect(&url)
            .await
            .expect("connect to the test PostgreSQL");
        s.heartbeat(&s.owner().to_string(), super::ALIVE_TTL_MS)
            .await
            .expect("a heartbeat");
        std::sync::Arc::new(s)
    };
    Some((open().await, open().await))
}

/// The backends to run a store test against.
pub fn each() -> Vec<Fixture> {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut out = vec![Fixture {
        name: "sqlite",
        target: Target::File(dir.path().join("kotoba.db")),
        _dir: Some(dir),
    }];
    if let Some(url) = postgres_url() {
        out.push(Fixture {
            name: "postgres",
            target: Target::Url(url),
            _dir: None,
        });
    }
    out
}

/// While it lives, a paused test clock moves only when the test advances it: a blocking
/// task in flight keeps tokio from moving it on by itself while the test waits on a
/// real database (PostgreSQL's sockets, whose connect timeout would fire at once).
pub struct HeldClock(#[allow(dead_code)] std::sync::mpsc::Sender<()>);

/// Hold the paused clock still (see [`HeldClock`]).
pub fn hold_clock() -> HeldClock {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    tokio::task::spawn_blocking(move || {
        let _ = rx.recv();
    });
    HeldClock(tx)
}

/// Run `f` on one of `store`'s connections, as the store's own methods do: for a test
/// above the store that must reach its tables directly (a disk filled on purpose, a row
/// counted).
pub async fn raw<R>(
    store: &Store,
    f: impl AsyncFnOnce(&mut super::Conn<'_>) -> Result<R, super::StoreError>,
) -> Result<R, super::StoreError> {
    store.run(f).await
}
