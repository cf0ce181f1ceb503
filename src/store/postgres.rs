//! The shared backend: a PostgreSQL server named by `KOTOBA_DATABASE_URL`, so several
//! Kotoba processes (on one machine or many) share one store. The store's calls are
//! synchronous, as SQLite's are; each PostgreSQL connection lives on its own thread (the
//! `postgres` client, over tokio-postgres, blocks on a runtime of its own and so cannot
//! be driven from inside hers). A call checks a connection out of the pool, sends it
//! statements and waits for each answer; a transaction keeps the same connection from
//! BEGIN to COMMIT. A connection that broke is opened again on its next statement.

use std::collections::HashMap;
use std::error::Error;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

use bytes::BytesMut;
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use postgres::{Client, NoTls, Statement};

use super::db::{Conn, Dialect, Row, Val};
use super::StoreError;

/// How a process reaches the shared store (`store.*` settings, read at start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// Connections kept (`store.pool_size`): enough for the turns, cards and Discord
    /// events that write at once.
    pub pool_size: usize,
    /// How long to wait for a connection (`store.connect_timeout`), unless the URL says.
    pub connect_timeout: std::time::Duration,
    /// How long one statement may run before the server cancels it
    /// (`store.statement_timeout`); `None`: no limit.
    pub statement_timeout: Option<std::time::Duration>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            pool_size: 16,
            connect_timeout: std::time::Duration::from_secs(10),
            statement_timeout: Some(std::time::Duration::from_secs(30)),
        }
    }
}

/// What a connection's thread is asked to do.
enum Op {
    /// Run a statement; rows changed.
    Execute,
    /// Run a query; its rows.
    Query,
    /// Run statements without arguments (BEGIN, COMMIT, a migration).
    Batch,
}

/// One request to a connection's thread, with where to answer.
struct Job {
    op: Op,
    sql: String,
    args: Vec<Val>,
    reply: mpsc::Sender<Result<Answer, StoreError>>,
}

/// A connection thread's answer.
enum Answer {
    Changed(u64),
    Rows(Vec<Row>),
    Done,
}

/// One connection: the way to its thread.
struct Worker {
    jobs: mpsc::Sender<Job>,
}

/// The connections of this process. `free` and `ready` change together: a call takes a
/// worker from `free`, or waits on `ready` until one is put back.
pub(super) struct Pool {
    /// Where the connections go, kept for a listening connection of its own.
    config: Box<postgres::Config>,
    /// The workers not checked out now.
    free: Mutex<Vec<Worker>>,
    /// Signalled when a worker is put back.
    ready: Condvar,
    /// How many connections it keeps.
    pub(super) size: usize,
}

impl Pool {
    /// The pool for `url`; each connection is made at its first statement.
    pub(super) fn connect(url: &str, options: &StoreOptions) -> Result<Pool, StoreError> {
        let mut config: postgres::Config = url.parse().map_err(StoreError::Postgres)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        if let Some(limit) = options.statement_timeout {
            let mut opts = config.get_options().unwrap_or("").to_string();
            if !opts.contains("statement_timeout") {
                opts.push_str(&format!(" -c statement_timeout={}", limit.as_millis()));
                config.options(opts.trim());
            }
        }
        let size = options.pool_size.max(1);
        let mut workers = Vec::with_capacity(size);
        for _ in 0..size {
            workers.push(spawn(config.clone())?);
        }
        Ok(Pool {
            config: Box::new(config),
            free: Mutex::new(workers),
            ready: Condvar::new(),
            size,
        })
    }

    /// Check a connection out until the returned guard drops.
    pub(super) fn get(&self) -> PgConn<'_> {
        let mut free = match self.free.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        loop {
            if let Some(worker) = free.pop() {
                return PgConn {
                    pool: self,
                    worker: Some(worker),
                    in_tx: false,
                };
            }
            free = match self.ready.wait(free) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }
}

impl Pool {
    /// Wake the receiver each time `channel` is notified (`LISTEN`), on a connection of
    /// its own kept on its own thread until the receiver is dropped. A broken connection
    /// is opened again after a second; what was notified meanwhile is lost, so the
    /// listener also looks for itself now and then.
    pub(super) fn listen(&self, channel: &str) -> tokio::sync::mpsc::UnboundedReceiver<()> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let config = (*self.config).clone();
        let listen = format!("LISTEN {channel}");
        let spawned = std::thread::Builder::new()
            .name("kotoba-listen".into())
            .spawn(move || listen_until_dropped(&config, &listen, &tx));
        if let Err(e) = spawned {
            tracing::warn!("store: no thread to listen on: {e}");
        }
        rx
    }
}

/// A listening connection's thread: forward each notification as a wake-up, until
/// nobody receives them.
fn listen_until_dropped(
    config: &postgres::Config,
    listen: &str,
    wake: &tokio::sync::mpsc::UnboundedSender<()>,
) {
    use postgres::fallible_iterator::FallibleIterator;
    let tick = std::time::Duration::from_secs(1);
    while !wake.is_closed() {
        let mut client = match open(config).and_then(|mut c| {
            c.batch_execute(listen)?;
            Ok(c)
        }) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("store: listening ({listen}): {e}");
                std::thread::sleep(tick);
                continue;
            }
        };
        // Connected again: whatever was notified while it was down is looked for now.
        let _ = wake.send(());
        loop {
            let next = client.notifications().timeout_iter(tick).next();
            match next {
                Ok(Some(_)) => {
                    if wake.send(()).is_err() {
                        return;
                    }
                }
                Ok(None) if client.is_closed() => break,
                Ok(None) if wake.is_closed() => return,
                Ok(None) => {}
                Err(_) => break,
            }
        }
    }
}

/// Where a PostgreSQL URL points, without its password: `host:port/database`.
pub fn database_label(url: &str) -> String {
    let Ok(config) = url.parse::<postgres::Config>() else {
        return "an unreadable URL".into();
    };
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("{host}:{port}/{db}")
}

/// Open one connection.
fn open(config: &postgres::Config) -> Result<Client, StoreError> {
    Ok(config.connect(NoTls)?)
}

/// Start a connection's thread; it connects at its first job.
fn spawn(config: postgres::Config) -> Result<Worker, StoreError> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("kotoba-postgres".into())
        .spawn(move || serve(config, rx))?;
    Ok(Worker { jobs: tx })
}

/// A connection's thread: answer jobs until the pool is dropped, reconnecting when the
/// connection broke.
fn serve(config: postgres::Config, jobs: mpsc::Receiver<Job>) {
    let mut client: Option<Client> = None;
    let mut prepared: HashMap<String, Statement> = HashMap::new();
    while let Ok(job) = jobs.recv() {
        if client.as_ref().is_none_or(Client::is_closed) {
            prepared.clear();
            client = match open(&config) {
                Ok(c) => Some(c),
                Err(e) => {
                    let _ = job.reply.send(Err(e));
                    continue;
                }
            };
        }
        let Some(c) = client.as_mut() else { continue };
        let answer = run(c, &mut prepared, &job);
        let _ = job.reply.send(answer);
    }
}

fn run(
    client: &mut Client,
    prepared: &mut HashMap<String, Statement>,
    job: &Job,
) -> Result<Answer, StoreError> {
    if let Op::Batch = job.op {
        client.batch_execute(&job.sql)?;
        return Ok(Answer::Done);
    }
    let stmt = match prepared.get(&job.sql) {
        Some(s) => s.clone(),
        None => {
            let s = client.prepare(&placeholders(&job.sql))?;
            prepared.insert(job.sql.clone(), s.clone());
            s
        }
    };
    let args: Vec<&(dyn ToSql + Sync)> =
        job.args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
    match job.op {
        Op::Execute => Ok(Answer::Changed(client.execute(&stmt, &args)?)),
        _ => {
            let rows = client.query(&stmt, &args)?;
            rows.iter()
                .map(row_of)
                .collect::<Result<_, _>>()
                .map(Answer::Rows)
        }
    }
}

/// SQLite's `?N` placeholders as PostgreSQL's `$N` (outside quoted text).
pub(super) fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn row_of(row: &postgres::Row) -> Result<Row, StoreError> {
    let mut vals = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let v = match *col.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Val::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)?
                .map(|v| Val::Int(v.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)?
                .map(|v| Val::Int(v.into())),
            Type::BOOL => row.try_get::<_, Option<bool>>(i)?.map(Val::from),
            Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Val::Blob),
            _ => row.try_get::<_, Option<String>>(i)?.map(Val::Text),
        };
        vals.push(v.unwrap_or(Val::Null));
    }
    Ok(Row(vals))
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(v) => match *ty {
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => v.to_string().to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Val::Text(v) => v.as_str().to_sql(ty, out),
            Val::Blob(v) => v.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A connection checked out of the pool; put back when dropped.
pub(super) struct PgConn<'a> {
    /// Where it goes back.
    pool: &'a Pool,
    /// Always `Some` until dropped.
    worker: Option<Worker>,
    /// A transaction is open: rolled back if the guard drops before it ends (a panic).
    in_tx: bool,
}

impl PgConn<'_> {
    fn ask(&self, op: Op, sql: &str, args: &[Val]) -> Result<Answer, StoreError> {
        let Some(worker) = self.worker.as_ref() else {
            return Err(StoreError::Closed);
        };
        let (reply, answer) = mpsc::channel();
        worker
            .jobs
            .send(Job {
                op,
                sql: sql.to_owned(),
                args: args.to_vec(),
                reply,
            })
            .map_err(|_| StoreError::Closed)?;
        answer.recv().map_err(|_| StoreError::Closed)?
    }

    /// Run statements that take no arguments (a migration).
    pub(super) fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.ask(Op::Batch, sql, &[]).map(|_| ())
    }

    /// Open a transaction on this connection.
    pub(super) fn begin(&mut self) -> Result<(), StoreError> {
        self.batch("BEGIN")?;
        self.in_tx = true;
        Ok(())
    }

    /// End the open transaction: COMMIT, or ROLLBACK when `keep` is false.
    pub(super) fn end(&mut self, keep: bool) -> Result<(), StoreError> {
        self.in_tx = false;
        self.batch(if keep { "COMMIT" } else { "ROLLBACK" })
    }
}

impl Drop for PgConn<'_> {
    fn drop(&mut self) {
        if self.in_tx {
            let _ = self.end(false);
        }
        if let Some(worker) = self.worker.take() {
            let mut free = match self.pool.free.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            free.push(worker);
            self.pool.ready.notify_one();
        }
    }
}

impl Conn for PgConn<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, args: &[Val]) -> Result<u64, StoreError> {
        match self.ask(Op::Execute, sql, args)? {
            Answer::Changed(n) => Ok(n),
            _ => Ok(0),
        }
    }

    fn query(&mut self, sql: &str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        match self.ask(Op::Query, sql, args)? {
            Answer::Rows(rows) => Ok(rows),
            _ => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_placeholders_become_dollars_outside_quoted_text() {
        assert_eq!(
            placeholders("SELECT '?1' FROM t WHERE a = ?1 AND b = ?12"),
            "SELECT '?1' FROM t WHERE a = $1 AND b = $12"
        );
    }
}
