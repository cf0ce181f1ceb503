//! The connection a store call holds (store/db.rs's values in, rows out): SQLite's,
//! whose statements run on the blocking pool (store/sqlite.rs), or a pooled PostgreSQL
//! connection (store/postgres.rs). Every statement is awaited; none waits on a runtime
//! thread.

use super::db::{Dialect, Row, Val};
use super::StoreError;

/// A connection held for one store call (or one transaction): SQLite's connection
/// thread (store/sqlite.rs) or a pooled PostgreSQL connection (store/postgres.rs). Its
/// statements are awaited; none waits on a runtime thread.
pub struct Conn<'a> {
    /// Which backend's connection.
    pub(super) link: Link<'a>,
    /// The store's round-trip count ([`super::Store::round_trips`]): each PostgreSQL
    /// statement adds one (SQLite's one trip per call is counted when it is taken).
    pub(super) trips: &'a std::sync::atomic::AtomicU64,
}

/// The backend under a [`Conn`].
pub(super) enum Link<'a> {
    /// SQLite: the way to its connection thread, held exclusively for this call.
    Sqlite(&'a super::sqlite::Worker),
    /// PostgreSQL: a connection checked out of the pool.
    Postgres(&'a mut super::postgres::PgConn),
}

impl Conn<'_> {
    /// Which SQL it speaks.
    pub fn dialect(&self) -> Dialect {
        match self.link {
            Link::Sqlite(_) => Dialect::Sqlite,
            Link::Postgres(_) => Dialect::Postgres,
        }
    }

    fn trip(&self) {
        if let Link::Postgres(_) = self.link {
            self.trips
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Run a statement; how many rows it changed.
    pub async fn execute(&mut self, sql: &str, args: &[Val]) -> Result<u64, StoreError> {
        self.trip();
        match &mut self.link {
            Link::Sqlite(w) => w.execute(sql, args).await,
            Link::Postgres(c) => c.execute(sql, args).await,
        }
    }

    /// Run a query; its rows.
    pub async fn query(&mut self, sql: &str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        self.trip();
        match &mut self.link {
            Link::Sqlite(w) => w.query(sql, args).await,
            Link::Postgres(c) => c.query(sql, args).await,
        }
    }

    /// Run statements that take no arguments (BEGIN, COMMIT, VACUUM, a migration).
    pub async fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.trip();
        match &mut self.link {
            Link::Sqlite(w) => w.batch(sql).await,
            Link::Postgres(c) => c.batch(sql).await,
        }
    }

    /// The first row of a query, if any.
    pub async fn query_opt(&mut self, sql: &str, args: &[Val]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, args).await?.into_iter().next())
    }

    /// Run an INSERT … RETURNING id; the new row's id.
    pub async fn insert(&mut self, sql: &str, args: &[Val]) -> Result<i64, StoreError> {
        match self.query_opt(sql, args).await? {
            Some(row) => row.int(0),
            None => Err(StoreError::Column {
                index: 0,
                wanted: "the new row's id",
            }),
        }
    }
}
