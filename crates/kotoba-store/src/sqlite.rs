//! The embedded backend: one SQLite file in the data folder (WAL), its schema brought up
//! to date by `user_version`, one connection: a call holds it under the store's async
//! lock, and each statement runs as a job on the blocking pool while the call awaits
//! it, so no runtime thread waits on the file. Statements are prepared once and
//! cached.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection};

use super::db::{Row, Val};
use super::StoreError;

/// The schema, one step per version (`PRAGMA user_version`); never edit a step that shipped.
pub(super) const MIGRATIONS: &[&str] = &[
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
    // 13: Discord messages claimed for an answer, so one message is answered once even
    // when two processes briefly hold its shard (docs/deploy.md).
    "CREATE TABLE discord_claims (
        message INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL
     );
     CREATE INDEX discord_claims_at ON discord_claims(at_ms);",
    // 14: Discord shard leases and the processes alive (docs/deploy.md, auto/N).
    "CREATE TABLE discord_shard_leases (
        shard INTEGER PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_ms INTEGER NOT NULL
     );
     CREATE TABLE instances (
        id TEXT PRIMARY KEY,
        seen_ms INTEGER NOT NULL
     );",
    // 15: her memory's facts, for a store shared by processes (with SQLite alone her
    // memory stays Markdown files; the table is there so both schemas match).
    "CREATE TABLE memory_facts (
        id INTEGER PRIMARY KEY,
        topic TEXT NOT NULL,
        text TEXT NOT NULL,
        key TEXT NOT NULL,
        date TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        UNIQUE(topic, key)
     );",
    // 16: the approval cards waiting in each process and the answer given to each, so a
    // card drawn in one process can be answered from another (docs/deploy.md).
    "CREATE TABLE cards_open (
        request_id TEXT PRIMARY KEY,
        session TEXT NOT NULL,
        card TEXT NOT NULL,
        owner INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL,
        answer TEXT,
        by_name TEXT,
        via TEXT,
        claimed_by INTEGER
     );
     CREATE INDEX cards_open_owner ON cards_open(owner);",
    // 17: settings saved for every process of the bot (docs/deploy.md); read only
    // with a shared store, here so both schemas match.
    "CREATE TABLE settings_shared (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        at_ms INTEGER NOT NULL
     );",
    // 18: whose turn it is to IDENTIFY in each of Discord's identify buckets (shard id
    // modulo max_concurrency), so processes starting shards together take turns.
    "CREATE TABLE discord_identify (
        bucket INTEGER PRIMARY KEY,
        holder TEXT NOT NULL,
        until_ms INTEGER NOT NULL
     );",
    // 19: where she heard each fact about a person and who told her (0: not known, told
    // to owners only), so a turn is given only what its person could have heard.
    "ALTER TABLE people_facts ADD COLUMN heard_in INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE people_facts ADD COLUMN told_by INTEGER NOT NULL DEFAULT 0;",
    // 20: a notebook for every person: each memory fact is the owner's ('') or a
    // person's (their Discord id), unique within its notebook.
    "CREATE TABLE memory_facts_by_notebook (
        id INTEGER PRIMARY KEY,
        notebook TEXT NOT NULL DEFAULT '',
        topic TEXT NOT NULL,
        text TEXT NOT NULL,
        key TEXT NOT NULL,
        date TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        UNIQUE(notebook, topic, key)
     );
     INSERT INTO memory_facts_by_notebook(id, topic, text, key, date, at_ms)
        SELECT id, topic, text, key, date, at_ms FROM memory_facts;
     DROP TABLE memory_facts;
     ALTER TABLE memory_facts_by_notebook RENAME TO memory_facts;",
    // 21: the Discord DMs each person had with her, so a person who asks to be
    // forgotten loses those conversations whole (docs/discord.md, "Forget me").
    "CREATE TABLE discord_dms (
        \"user\" INTEGER NOT NULL,
        session TEXT NOT NULL,
        PRIMARY KEY (\"user\", session)
     );",
    // 22: a turn's step rows kept beside its lines, as the surfaces drew them
    // (store/steps.rs): the row's id and the row, on its hidden `step` line.
    "ALTER TABLE messages ADD COLUMN step_id TEXT;
     ALTER TABLE messages ADD COLUMN step_row TEXT;",
];

/// Open a connection's schema: WAL, a busy wait, every migration not yet applied.
pub(super) fn init(conn: &mut Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // What is deleted is overwritten, not merely unlinked (a person's erase).
    conn.pragma_update(None, "secure_delete", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Val::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Val::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Val::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Val::Blob(v) => ToSqlOutput::Borrowed(ValueRef::Blob(v)),
        })
    }
}

fn val_of(v: ValueRef<'_>) -> Val {
    match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        // No column holds a real; one read as an integer keeps its whole part.
        ValueRef::Real(f) => Val::Int(f as i64),
        ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Val::Blob(b.to_vec()),
    }
}

/// The SQLite connection, whose statements run on the blocking pool: one call holds it
/// at a time (the store's async lock), and each statement is one blocking job.
pub(crate) struct Worker {
    /// The one connection (its lock is only ever taken on the blocking pool).
    conn: std::sync::Arc<std::sync::Mutex<Connection>>,
    /// A transaction was left open by a caller that went away: the next job rolls it
    /// back first.
    roll_back: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Worker {
    /// Hand `conn` to the blocking pool's jobs.
    pub(super) fn start(conn: Connection) -> Result<Worker, StoreError> {
        Ok(Worker {
            conn: std::sync::Arc::new(std::sync::Mutex::new(conn)),
            roll_back: Default::default(),
        })
    }

    /// Run `f` on the connection on the blocking pool (a paused test clock does not
    /// move meanwhile), after any rollback a caller that went away left behind.
    async fn job<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (conn, roll_back) = (self.conn.clone(), self.roll_back.clone());
        tokio::task::spawn_blocking(move || f(&ready(&conn, &roll_back)))
            .await
            .map_err(|_| StoreError::Closed)?
    }

    /// Run a statement; rows changed.
    pub(super) async fn execute(&self, sql: &str, args: &[Val]) -> Result<u64, StoreError> {
        let (sql, args) = (sql.to_owned(), args.to_vec());
        self.job(move |c| execute(c, &sql, &args)).await
    }

    /// Run a query; its rows.
    pub(super) async fn query(&self, sql: &str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        let (sql, args) = (sql.to_owned(), args.to_vec());
        self.job(move |c| query(c, &sql, &args)).await
    }

    /// Run statements without arguments.
    pub(super) async fn batch(&self, sql: &str) -> Result<(), StoreError> {
        let sql = sql.to_owned();
        self.job(move |c| c.execute_batch(&sql).map_err(StoreError::from))
            .await
    }

    /// Roll the open transaction back before the next job, and soon (a transaction
    /// whose caller went away).
    pub(super) fn roll_back_later(&self) {
        self.roll_back
            .store(true, std::sync::atomic::Ordering::Release);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let (conn, roll_back) = (self.conn.clone(), self.roll_back.clone());
            rt.spawn_blocking(move || drop(ready(&conn, &roll_back)));
        }
    }
}

/// The connection, locked (on the blocking pool), with any rollback a caller that went
/// away left behind done first.
fn ready<'a>(
    conn: &'a std::sync::Mutex<Connection>,
    roll_back: &std::sync::atomic::AtomicBool,
) -> std::sync::MutexGuard<'a, Connection> {
    let conn = match conn.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if roll_back.swap(false, std::sync::atomic::Ordering::AcqRel) {
        let _ = conn.execute_batch("ROLLBACK");
    }
    conn
}

/// A transaction open on the connection: dropped before [`OpenTx::close`] (its caller
/// went away mid-way), it is rolled back ahead of any later statement.
pub(super) struct OpenTx<'a>(pub(super) &'a Worker);

impl OpenTx<'_> {
    /// The transaction ended (committed or rolled back).
    pub(super) fn close(self) {
        std::mem::forget(self);
    }
}

impl Drop for OpenTx<'_> {
    fn drop(&mut self) {
        self.0.roll_back_later();
    }
}

fn execute(conn: &Connection, sql: &str, args: &[Val]) -> Result<u64, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    Ok(stmt.execute(params_from_iter(args.iter()))? as u64)
}

fn query(conn: &Connection, sql: &str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let n = stmt.column_count();
    let mut rows = stmt.query(params_from_iter(args.iter()))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            vals.push(val_of(r.get_ref(i)?));
        }
        out.push(Row(vals));
    }
    Ok(out)
}
