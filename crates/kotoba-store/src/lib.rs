//! The store: transcripts (with full-text search), summaries, the audit trail, grants,
//! reminders, jobs, cards, seen marks, people facts, plans and the keystore (and the
//! erase of everything kept about one person). One
//! interface with two backends: SQLite in the data folder (the default, nothing to set
//! up) or PostgreSQL at `KOTOBA_DATABASE_URL` (shared by every process of one bot).
//! Every method is written once, against store/db.rs.

use rusqlite::Connection;
use std::path::Path;

mod audit;
mod cards_open;
pub mod clock;
pub mod conn;
pub mod db;
mod erase;
mod grants;
mod inflight;
mod jobs;
pub mod keystore;
mod later;
mod leases;
mod memory;
mod people;
mod pg_schema;
mod postgres;
mod reminders;
mod search;
mod seen;
mod settings;
mod sqlite;
mod steps;
mod summaries;
/// The backends every store test runs against, for this crate's tests and (with the
/// `testing` feature) for the tests of the crates above.
#[cfg(any(test, feature = "testing"))]
pub mod testing;

use conn::{Conn, Link};
use db::{args, Row};

pub use audit::{Approver, AuditRow};
pub use cards_open::{ClaimedAnswer, WaitingCard};
pub use erase::{Erased, REMOVED};
pub use grants::{Grant, GrantScope};
pub use inflight::{Recovered, CUT_TURN_LINE};
pub use jobs::cut_job_line;
pub use leases::{Liveness, ALIVE_TTL_MS};
pub use memory::MemoryRow;
pub use people::PersonFact;
pub use search::SearchHit;
pub use seen::DrawnCard;
pub use steps::Shown;
pub use summaries::Summary;

/// Why the store failed. Callers log it; a turn never fails because a line was not saved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no (locked, corrupt, disk full, …).
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL said no, or could not be reached (`KOTOBA_DATABASE_URL`).
    #[error("store (PostgreSQL): {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// No pooled PostgreSQL connection could be had (none made in time, or the pool
    /// is closed).
    #[error("store (PostgreSQL pool): {0}")]
    Pool(deadpool_postgres::PoolError),
    /// The pool could not be set up from the `store.*` settings.
    #[error("store (PostgreSQL pool): {0}")]
    PoolSetup(#[from] deadpool_postgres::BuildError),
    /// A row did not hold what the store wrote there (a column of another type).
    #[error("store: column {index} is not {wanted}")]
    Column {
        /// The column, counted from 0.
        index: usize,
        /// What the store expected.
        wanted: &'static str,
    },
    /// The SQLite connection's thread is gone (the process is shutting down).
    #[error("store: the database connection closed")]
    Closed,
    /// The data folder could not be made.
    #[error("store folder: {0}")]
    Io(#[from] std::io::Error),
}

impl StoreError {
    /// Whether this says the database cannot be reached or written at all (a server
    /// gone, a connection refused or closed, a file that cannot be written), rather
    /// than that one statement was refused.
    pub fn is_unreachable(&self) -> bool {
        use rusqlite::ErrorCode;
        match self {
            // A PostgreSQL error with no SQLSTATE came from the connection, not the server.
            StoreError::Postgres(e) => e.code().is_none(),
            StoreError::Closed | StoreError::Io(_) | StoreError::Pool(_) => true,
            StoreError::PoolSetup(_) => false,
            StoreError::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(
                    ErrorCode::DiskFull
                        | ErrorCode::SystemIoFailure
                        | ErrorCode::ReadOnly
                        | ErrorCode::CannotOpen
                        | ErrorCode::DatabaseBusy
                        | ErrorCode::DatabaseLocked
                )
            ),
            StoreError::Column { .. } => false,
        }
    }
}

/// One stored line of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Its row id: lines of every session are numbered in one rising sequence, so a
    /// summary names the lines it covers by id.
    pub id: i64,
    /// `user` or `assistant`.
    pub role: String,
    /// Who said it.
    pub author: String,
    /// What was said.
    pub text: String,
    /// Unix milliseconds.
    pub at_ms: i64,
}

/// The database, whichever backend holds it.
pub struct Store {
    /// Where the rows are.
    db: Db,
    /// Who this process is in the rows it writes (`owner` columns, leases,
    /// heartbeats): its pid on SQLite (one process per data folder), a random number on
    /// PostgreSQL (pids repeat across machines).
    owner: i64,
    /// Round trips to the database so far: each statement on PostgreSQL (a
    /// transaction's BEGIN and COMMIT too), each call holding the connection on SQLite.
    round_trips: std::sync::atomic::AtomicU64,
    /// Whether the last call reached the database (false after an error saying it
    /// cannot be reached or written, true again after the next call that worked).
    reachable: std::sync::atomic::AtomicBool,
    /// Whether a probe of an unreachable database is under way ([`Store::probe`]).
    probing: std::sync::atomic::AtomicBool,
    /// Discord seen marks waiting to be written together, off the answer's path.
    seen_later: std::sync::Mutex<seen::SeenLater>,
    /// Writes a drop handed over, awaited before the process exits.
    later: later::Later,
}

/// Where the store lives.
enum Db {
    /// The SQLite file: one connection on its own thread, held by one call at a time
    /// (the async lock; a transaction's statements never interleave with another's).
    Sqlite(tokio::sync::Mutex<sqlite::Worker>),
    /// A PostgreSQL server: a pool of connections.
    Postgres(Box<postgres::Pool>),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

pub use clock::now_ms;
pub use postgres::{database_label, StoreOptions};

impl Store {
    /// Open (or create) the SQLite database at `path` and bring its schema up to date
    /// (at start, on the calling thread; every later statement runs on the
    /// connection's own thread).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Self::sqlite(Connection::open(path)?)
    }

    /// An in-memory SQLite store (benchmarks, unit tests).
    pub fn in_memory() -> Result<Store, StoreError> {
        Self::sqlite(Connection::open_in_memory()?)
    }

    fn sqlite(mut conn: Connection) -> Result<Store, StoreError> {
        sqlite::init(&mut conn)?;
        Ok(Store {
            db: Db::Sqlite(tokio::sync::Mutex::new(sqlite::Worker::start(conn)?)),
            owner: i64::from(std::process::id()),
            round_trips: Default::default(),
            reachable: std::sync::atomic::AtomicBool::new(true),
            probing: Default::default(),
            seen_later: Default::default(),
            later: Default::default(),
        })
    }

    /// Connect to the PostgreSQL server at `url` (`postgres://user:pass@host/db`) and
    /// bring its schema up to date.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        Self::connect_with(url, &StoreOptions::default()).await
    }

    /// [`Store::connect`] with the `store.*` settings.
    pub async fn connect_with(url: &str, options: &StoreOptions) -> Result<Store, StoreError> {
        let pool = postgres::Pool::connect(url, options)?;
        let store = Store {
            db: Db::Postgres(Box::new(pool)),
            owner: rand::random::<i64>().rem_euclid(1 << 62) + 1,
            round_trips: Default::default(),
            reachable: std::sync::atomic::AtomicBool::new(true),
            probing: Default::default(),
            seen_later: Default::default(),
            later: Default::default(),
        };
        // The first statement connects: a wrong URL or an unreachable server is said now.
        // Migrating holds a connection alone (its advisory lock and transactions).
        if let Db::Postgres(pool) = &store.db {
            let mut conn = pool.get().await?;
            let mut c = Conn {
                link: Link::Postgres(&mut conn),
                trips: &store.round_trips,
            };
            pg_schema::migrate(&mut c).await?;
            drop(conn);
            pool.warm().await;
        }
        Ok(store)
    }

    /// Who this process is in the rows it writes.
    pub fn owner(&self) -> i64 {
        self.owner
    }

    /// How many round trips this store has made: each statement on PostgreSQL (a
    /// transaction's BEGIN and COMMIT included), each call holding the connection on
    /// SQLite.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many connections it keeps (1 for SQLite's one connection).
    pub fn pool_size(&self) -> usize {
        match &self.db {
            Db::Sqlite(_) => 1,
            Db::Postgres(pool) => pool.size,
        }
    }

    /// One round trip to the database, timed (`SELECT 1`): the median of `n`.
    pub async fn ping(&self, n: usize) -> Result<std::time::Duration, StoreError> {
        let mut times = Vec::with_capacity(n.max(1));
        for _ in 0..n.max(1) {
            let start = std::time::Instant::now();
            self.run(async |c| c.query("SELECT 1", &[]).await).await?;
            times.push(start.elapsed());
        }
        times.sort();
        Ok(times[times.len() / 2])
    }

    /// Whether the database answered the last call (`/health`'s `store`).
    pub fn is_reachable(&self) -> bool {
        self.reachable.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the database answered the last call; while it did not, a probe tries it
    /// again in a task of its own (one at a time), so a surface sees it come back
    /// without waiting for a turn.
    pub fn reachable_now(self: &std::sync::Arc<Self>) -> bool {
        let reachable = self.is_reachable();
        if !reachable {
            self.probe();
        }
        reachable
    }

    fn probe(self: &std::sync::Arc<Self>) {
        use std::sync::atomic::Ordering;
        if self.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let store = self.clone();
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            self.probing.store(false, Ordering::Release);
            return;
        };
        rt.spawn(async move {
            let _ = store.ping(1).await;
            store.probing.store(false, Ordering::Release);
        });
    }

    /// Note what a call's outcome says of the database.
    fn note<R>(&self, out: Result<R, StoreError>) -> Result<R, StoreError> {
        match &out {
            Ok(_) => self
                .reachable
                .store(true, std::sync::atomic::Ordering::Relaxed),
            Err(e) if e.is_unreachable() => {
                if self
                    .reachable
                    .swap(false, std::sync::atomic::Ordering::Relaxed)
                {
                    tracing::error!("store unreachable: {e}");
                }
            }
            Err(_) => {}
        }
        out
    }

    /// A wake-up each time `channel` is notified (PostgreSQL, on a listening connection
    /// of its own, and once each time it is made); `None` on SQLite.
    fn listen(&self, channel: &str) -> Option<tokio::sync::mpsc::UnboundedReceiver<()>> {
        match &self.db {
            Db::Postgres(pool) => Some(pool.listen(channel)),
            Db::Sqlite(_) => None,
        }
    }

    /// Whether other processes share this store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        matches!(self.db, Db::Postgres(_))
    }

    /// The backend's name, as `kotoba doctor` says it.
    pub fn backend(&self) -> &'static str {
        match self.db {
            Db::Sqlite(_) => "SQLite",
            Db::Postgres(_) => "PostgreSQL",
        }
    }

    /// Run `f` on a connection (one call: no other call of this process interleaves on
    /// SQLite; on PostgreSQL, a shared client pipelines statements of other calls
    /// between `f`'s, so what must stay together goes in [`Store::tx`]).
    pub(crate) async fn run<R>(
        &self,
        f: impl AsyncFnOnce(&mut Conn<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let out = self.run_unnoted(f).await;
        self.note(out)
    }

    /// [`Store::run`] on PostgreSQL (where `f` sends one statement), [`Store::tx`] on
    /// SQLite (where it runs several that must be kept together).
    pub(crate) async fn one_or_tx<R>(
        &self,
        f: impl AsyncFnOnce(&mut Conn<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        match self.db {
            Db::Sqlite(_) => self.tx(f).await,
            Db::Postgres(_) => self.run(f).await,
        }
    }

    async fn run_unnoted<R>(
        &self,
        f: impl AsyncFnOnce(&mut Conn<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let trips = &self.round_trips;
        match &self.db {
            Db::Sqlite(m) => {
                // One call holding the local connection is one trip, however many
                // statements it runs.
                trips.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let worker = m.lock().await;
                let mut c = Conn {
                    link: Link::Sqlite(&worker),
                    trips,
                };
                f(&mut c).await
            }
            Db::Postgres(pool) => {
                let mut conn = pool.shared().await?;
                let mut c = Conn {
                    link: Link::Postgres(&mut conn),
                    trips,
                };
                f(&mut c).await
            }
        }
    }

    /// Run `f` in one transaction: all of it is kept, or none of it (also when the
    /// caller stops waiting halfway).
    pub(crate) async fn tx<R>(
        &self,
        f: impl AsyncFnOnce(&mut Conn<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let out = self.tx_unnoted(f).await;
        self.note(out)
    }

    async fn tx_unnoted<R>(
        &self,
        f: impl AsyncFnOnce(&mut Conn<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let trips = &self.round_trips;
        match &self.db {
            Db::Sqlite(m) => {
                trips.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let worker = m.lock().await;
                worker.batch("BEGIN IMMEDIATE").await?;
                // Rolled back unless it gets to its end (a caller gone mid-way).
                let open = sqlite::OpenTx(&worker);
                let mut c = Conn {
                    link: Link::Sqlite(&worker),
                    trips,
                };
                let out = f(&mut c).await;
                let ended = match &out {
                    Ok(_) => worker.batch("COMMIT").await,
                    Err(_) => worker.batch("ROLLBACK").await,
                };
                open.close();
                ended?;
                out
            }
            Db::Postgres(pool) => {
                // BEGIN and COMMIT are a round trip each (counted as sent).
                let mut conn = pool.get().await?;
                let mut c = Conn {
                    link: Link::Postgres(&mut conn),
                    trips,
                };
                c.batch("BEGIN").await?;
                let out = f(&mut c).await;
                c.batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" })
                    .await?;
                out
            }
        }
    }

    /// Append one line to a session's transcript; its row id. Hidden lines
    /// (`__work_done__`) are stored for the record but never shown or searched.
    pub async fn append_message(
        &self,
        session: &str,
        role: &str,
        author: &str,
        text: &str,
        hidden: bool,
    ) -> Result<i64, StoreError> {
        let ids = self
            .append_lines(session, &[(role, author, text, hidden)])
            .await?;
        Ok(ids.first().copied().unwrap_or_default())
    }

    /// Append several lines (role, author, text, hidden) in one statement: all kept or
    /// none, one round trip. Their row ids, in order.
    pub async fn append_lines(
        &self,
        session: &str,
        lines: &[(&str, &str, &str, bool)],
    ) -> Result<Vec<i64>, StoreError> {
        if lines.is_empty() {
            return Ok(Vec::new());
        }
        let at = now_ms();
        let mut sql = String::from(
            "INSERT INTO messages(session, role, author, text, hidden, at_ms) VALUES ",
        );
        let mut values: Vec<db::Val> = vec![session.into(), at.into()];
        for (i, (role, author, text, hidden)) in lines.iter().enumerate() {
            let n = values.len();
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!(
                "(?1, ?{}, ?{}, ?{}, ?{}, ?2)",
                n + 1,
                n + 2,
                n + 3,
                n + 4
            ));
            values.extend([
                (*role).into(),
                (*author).into(),
                (*text).into(),
                (*hidden).into(),
            ]);
        }
        sql.push_str(" RETURNING id");
        let rows = self.run(async |c| c.query(&sql, &values).await).await?;
        // Ids rise in the order the rows were written; RETURNING's order is not promised.
        let mut ids = rows
            .iter()
            .map(|r| r.int(0))
            .collect::<Result<Vec<_>, _>>()?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// The last `limit` visible lines of a session, oldest first.
    pub async fn history(
        &self,
        session: &str,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        self.lines_after(session, 0, limit).await
    }

    /// The last `limit` visible lines of a session whose id is above `after`, oldest
    /// first (what a summary covering lines up to `after` leaves to load).
    pub async fn lines_after(
        &self,
        session: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT id, role, author, text, at_ms FROM messages
                 WHERE session = ?1 AND hidden = 0 AND id > ?2
                 ORDER BY id DESC LIMIT ?3",
                    args![session, after, limit],
                )
                .await
            })
            .await?;
        let mut lines = rows
            .iter()
            .map(|r| {
                Ok(StoredMessage {
                    id: r.int(0)?,
                    role: r.text(1)?,
                    author: r.text(2)?,
                    text: r.text(3)?,
                    at_ms: r.int(4)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        lines.reverse();
        Ok(lines)
    }

    /// Move a session's lines and summaries under `<session>#archived-<ms>`: kept (and
    /// searchable), but no longer its conversation (a fresh one, e.g. Discord's `/new`).
    pub async fn archive_session(&self, session: &str) -> Result<(), StoreError> {
        let archived = format!("{session}#archived-{}", now_ms());
        self.tx(async |c| {
            c.execute(
                "UPDATE messages SET session = ?1 WHERE session = ?2",
                args![&archived, session],
            )
            .await?;
            c.execute(
                "UPDATE summaries SET session = ?1 WHERE session = ?2",
                args![&archived, session],
            )
            .await?;
            Ok(())
        })
        .await
    }

    /// Whether a session has any stored line.
    pub async fn has_session(&self, session: &str) -> Result<bool, StoreError> {
        self.run(async |c| {
            c.query_opt(
                "SELECT 1 FROM messages WHERE session = ?1 LIMIT 1",
                args![session],
            )
            .await
        })
        .await
        .map(|r| r.is_some())
    }
}

/// Rows read into values, or the first column that did not hold what was written.
fn rows_into<T>(
    rows: Vec<Row>,
    f: impl Fn(&Row) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_statement_past_store_statement_timeout_is_cancelled_and_the_pool_is_sized_by_its_setting(
    ) {
        let Some(url) = testing::postgres_url() else {
            return;
        };
        let options = StoreOptions {
            pool_size: 3,
            statement_timeout: Some(std::time::Duration::from_millis(300)),
            ..StoreOptions::default()
        };
        let s = Store::connect_with(&url, &options).await.unwrap();
        assert_eq!(s.pool_size(), 3);
        assert!(s
            .run(async |c| c.query("SELECT 1 FROM pg_sleep(2)", &[]).await)
            .await
            .is_err());
        assert!(s
            .run(async |c| c.query("SELECT 1 FROM pg_sleep(0.01)", &[]).await)
            .await
            .is_ok());
        assert!(s.ping(3).await.unwrap() < std::time::Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_transcript_survives_reopening_the_store() {
        for db in testing::each() {
            {
                let s = db.open().await;
                s.append_message("s1", "user", "ann", "hello", false)
                    .await
                    .unwrap();
                s.append_message("s1", "assistant", "kotoba", "hi ann", false)
                    .await
                    .unwrap();
                s.append_message("s1", "user", "system", "__work_done__", true)
                    .await
                    .unwrap();
            }
            let s = db.open().await;
            let h = s.history("s1", 10).await.unwrap();
            assert_eq!(
                h.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
                ["hello", "hi ann"],
                "{}",
                db.name
            );
            assert!(s.history("s2", 10).await.unwrap().is_empty());
        }
    }
}
