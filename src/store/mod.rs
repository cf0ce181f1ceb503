//! SQLite store in the data folder: WAL, migrations by `user_version`. Holds the
//! transcripts (with full-text search), the audit trail, saved grants and reminders;
//! the keystore joins later.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

mod audit;
pub mod clock;
mod grants;
mod inflight;
mod jobs;
pub mod keystore;
mod people;
mod reminders;
mod search;
mod seen;
mod summaries;

pub use audit::{Approver, AuditRow};
pub use grants::{Grant, GrantScope};
pub use inflight::{Recovered, CUT_TURN_LINE};
pub use jobs::cut_job_line;
pub use people::PersonFact;
pub use search::SearchHit;
pub use seen::DrawnCard;
pub use summaries::Summary;

/// Why the store failed. Callers log it; a turn never fails because a line was not saved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no (locked, corrupt, disk full, …).
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The data folder could not be made.
    #[error("store folder: {0}")]
    Io(#[from] std::io::Error),
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

/// The database. One connection behind a mutex: every call is short.
pub struct Store {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

const MIGRATIONS: &[&str] = &[
    // 1: transcripts and their full-text index.
    "CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        role TEXT NOT NULL,
        author TEXT NOT NULL,
        text TEXT NOT NULL,
        hidden INTEGER NOT NULL DEFAULT 0,
        at_ms INTEGER NOT NULL
     );
     CREATE INDEX messages_session ON messages(session, id);
     CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', content_rowid='id');
     CREATE TRIGGER messages_ai AFTER INSERT ON messages WHEN new.hidden = 0 BEGIN
        INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
     END;",
    // 2: the audit trail and saved grants.
    "CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        session TEXT NOT NULL,
        tool TEXT NOT NULL,
        action TEXT NOT NULL,
        risk TEXT NOT NULL,
        approved INTEGER NOT NULL,
        approver TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
     );
     CREATE INDEX audit_session ON audit_log(session, id);
     CREATE TABLE grants (
        id INTEGER PRIMARY KEY,
        pattern TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('exact', 'family')),
        granted_by TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        UNIQUE(pattern, scope)
     );",
    // 3: the keystore (values sealed with AES-256-GCM).
    "CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        nonce BLOB NOT NULL,
        sealed BLOB NOT NULL,
        at_ms INTEGER NOT NULL
     );",
    // 4: reminders (cronjob), delivered where they were set; `done` once a one-off fired
    // or was removed.
    "CREATE TABLE reminders (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        text TEXT NOT NULL,
        due_ms INTEGER NOT NULL,
        every_secs INTEGER,
        register TEXT NOT NULL,
        channel TEXT NOT NULL,
        done INTEGER NOT NULL DEFAULT 0,
        at_ms INTEGER NOT NULL
     );
     CREATE INDEX reminders_due ON reminders(done, due_ms);",
    // 5: what was under way, so a restart after a crash can close it (docs/engine.md §6):
    // executed rows still running, turns still running, approval cards still waiting;
    // `owner` is the pid of the Kotoba that wrote the row.
    "ALTER TABLE audit_log ADD COLUMN running INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE audit_log ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
     CREATE INDEX audit_running ON audit_log(running) WHERE running = 1;
     CREATE TABLE inflight (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('turn', 'card')),
        session TEXT NOT NULL,
        tool TEXT NOT NULL DEFAULT '',
        action TEXT NOT NULL DEFAULT '',
        risk TEXT NOT NULL DEFAULT '',
        owner INTEGER NOT NULL,
        at_ms INTEGER NOT NULL
     );",
    // 6: the newest Discord message she saw in each channel, so a restart catches up on
    // what was said while she was down and never answers a message twice
    // (docs/discord.md, catch-up).
    "CREATE TABLE discord_seen (
        channel INTEGER PRIMARY KEY,
        last_id INTEGER NOT NULL,
        at_ms INTEGER NOT NULL
     );",
    // 7: approval cards drawn on Discord and not yet settled, so a restart can settle
    // the ones a dead run left (buttons disabled, "nothing ran"); `card` is the card as
    // JSON, `owner` the pid of the Kotoba that drew it.
    "CREATE TABLE discord_cards (
        request_id TEXT PRIMARY KEY,
        channel INTEGER NOT NULL,
        message INTEGER NOT NULL,
        dm INTEGER NOT NULL,
        card TEXT NOT NULL,
        owner INTEGER NOT NULL,
        at_ms INTEGER NOT NULL
     );",
    // 8: background jobs under way (so a restart can announce the ones a crash cut),
    // and what a restart has to tell a surface that cannot read the transcript back
    // (a Discord channel): one notice each, taken once.
    "CREATE TABLE jobs_underway (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        session TEXT NOT NULL,
        goal TEXT NOT NULL,
        owner INTEGER NOT NULL,
        at_ms INTEGER NOT NULL
     );
     CREATE TABLE restart_notices (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        text TEXT NOT NULL,
        at_ms INTEGER NOT NULL
     );",
    // 9: who set a reminder (the turn's author; on Discord `name (user id)`), so its
    // delivery mentions them (docs/tools.md); rows stored before it keep '' (unknown).
    "ALTER TABLE reminders ADD COLUMN asker TEXT NOT NULL DEFAULT '';",
    // 10: what she remembers about the members of a Discord server (one short fact each,
    // how she knows it), and server plans: the changes of a plan, and the journal of the
    // ones applied (so a stopped run resumes and nothing is applied twice).
    "CREATE TABLE people_facts (
        id INTEGER PRIMARY KEY,
        guild INTEGER NOT NULL,
        user INTEGER NOT NULL,
        name TEXT NOT NULL,
        fact TEXT NOT NULL,
        source TEXT NOT NULL,
        by TEXT NOT NULL,
        at_ms INTEGER NOT NULL
     );
     CREATE INDEX people_facts_of ON people_facts(guild, user, id);
     CREATE TABLE discord_plans (
        id TEXT PRIMARY KEY,
        session TEXT NOT NULL,
        guild INTEGER NOT NULL,
        changes TEXT NOT NULL,
        at_ms INTEGER NOT NULL
     );
     CREATE TABLE discord_plan_done (
        plan TEXT NOT NULL,
        step INTEGER NOT NULL,
        result TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        PRIMARY KEY (plan, step)
     );",
    // 11: a grant's time box (docs/gate.md, grants): unix ms on the grant clock, NULL
    // until revoked.
    "ALTER TABLE grants ADD COLUMN expires_at_ms INTEGER;",
    // 12: a long conversation's summaries (docs/engine.md, "Long conversations"): the
    // lines from_id..=upto_id of a session, summarised; the newest row is the one in use.
    "CREATE TABLE summaries (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        from_id INTEGER NOT NULL,
        upto_id INTEGER NOT NULL,
        text TEXT NOT NULL,
        at_ms INTEGER NOT NULL
     );
     CREATE INDEX summaries_session ON summaries(session, id);",
];

pub use clock::now_ms;

impl Store {
    /// Open (or create) the database at `path` and bring its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let conn = Connection::open(path)?;
        Self::init(conn)
    }

    /// An in-memory store (benchmarks, unit tests).
    pub fn in_memory() -> Result<Store, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> Result<Store, StoreError> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            let tx = conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Append one line to a session's transcript; its row id. Hidden lines
    /// (`__work_done__`) are stored for the record but never shown or searched.
    pub fn append_message(
        &self,
        session: &str,
        role: &str,
        author: &str,
        text: &str,
        hidden: bool,
    ) -> Result<i64, StoreError> {
        let ids = self.append_lines(session, &[(role, author, text, hidden)])?;
        Ok(ids.first().copied().unwrap_or_default())
    }

    /// Append several lines (role, author, text, hidden) in one transaction: one commit
    /// for a whole turn. Their row ids, in order.
    pub fn append_lines(
        &self,
        session: &str,
        lines: &[(&str, &str, &str, bool)],
    ) -> Result<Vec<i64>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let mut ids = Vec::with_capacity(lines.len());
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO messages(session, role, author, text, hidden, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            let at = now_ms();
            for (role, author, text, hidden) in lines {
                stmt.execute(params![session, role, author, text, *hidden as i64, at])?;
                ids.push(tx.last_insert_rowid());
            }
        }
        tx.commit()?;
        Ok(ids)
    }

    /// The last `limit` visible lines of a session, oldest first.
    pub fn history(&self, session: &str, limit: usize) -> Result<Vec<StoredMessage>, StoreError> {
        self.lines_after(session, 0, limit)
    }

    /// The last `limit` visible lines of a session whose id is above `after`, oldest
    /// first (what a summary covering lines up to `after` leaves to load).
    pub fn lines_after(
        &self,
        session: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, role, author, text, at_ms FROM messages
             WHERE session = ?1 AND hidden = 0 AND id > ?2
             ORDER BY id DESC LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows: Vec<StoredMessage> = stmt
            .query_map(params![session, after, limit], |r| {
                Ok(StoredMessage {
                    id: r.get(0)?,
                    role: r.get(1)?,
                    author: r.get(2)?,
                    text: r.get(3)?,
                    at_ms: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        rows.reverse();
        Ok(rows)
    }

    /// Move a session's lines and summaries under `<session>#archived-<ms>`: kept (and
    /// searchable), but no longer its conversation (a fresh one, e.g. Discord's `/new`).
    pub fn archive_session(&self, session: &str) -> Result<(), StoreError> {
        let archived = format!("{session}#archived-{}", now_ms());
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "UPDATE messages SET session = ?1 WHERE session = ?2",
            params![archived, session],
        )?;
        tx.execute(
            "UPDATE summaries SET session = ?1 WHERE session = ?2",
            params![archived, session],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Whether a session has any stored line.
    pub fn has_session(&self, session: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT 1 FROM messages WHERE session = ?1 LIMIT 1",
                [session],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_survives_reopening_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        {
            let s = Store::open(&path).unwrap();
            s.append_message("s1", "user", "ann", "hello", false)
                .unwrap();
            s.append_message("s1", "assistant", "kotoba", "hi ann", false)
                .unwrap();
            s.append_message("s1", "user", "system", "__work_done__", true)
                .unwrap();
        }
        let s = Store::open(&path).unwrap();
        let h = s.history("s1", 10).unwrap();
        assert_eq!(
            h.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
            ["hello", "hi ann"]
        );
        assert!(s.history("s2", 10).unwrap().is_empty());
    }
}
