//! The shared backend: a PostgreSQL server named by `KOTOBA_DATABASE_URL`, so several
//! Kotoba processes (on one machine or many) share one store. Its connections are
//! tokio-postgres clients in a deadpool pool: a call checks one out, awaits each
//! statement (prepared once per connection and cached), and puts it back; a transaction
//! keeps the same connection from BEGIN to COMMIT. A connection found closed is not
//! handed out again; the pool opens a new one. Nothing here blocks a runtime thread.

use std::error::Error;

use bytes::BytesMut;
use deadpool_postgres::{Manager, ManagerConfig, Object, RecyclingMethod};
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use tokio_postgres::NoTls;

use super::db::{Row, Val};
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

/// The connections of this process: a deadpool pool of tokio-postgres clients.
pub(super) struct Pool {
    /// Where the connections go, kept for a listening connection of its own.
    config: tokio_postgres::Config,
    /// The pooled clients.
    pool: deadpool_postgres::Pool,
    /// How many connections it keeps at most.
    pub(super) size: usize,
    /// Clients taken from the pool and shared by every call outside a transaction:
    /// tokio-postgres pipelines the statements of calls made at once on one
    /// connection, so a burst waits on round trips side by side, not in a queue.
    shared: std::sync::Mutex<Vec<Option<std::sync::Arc<Object>>>>,
    /// Which shared client the next call takes (round robin).
    next: std::sync::atomic::AtomicUsize,
}

impl Pool {
    /// The pool for `url`; each connection is made when first needed.
    pub(super) fn connect(url: &str, options: &StoreOptions) -> Result<Pool, StoreError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(StoreError::Postgres)?;
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
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                // A closed client is never handed out; checking each with a query
                // would cost a round trip per call.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(size)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            // A connection not made in time says the database cannot be reached.
            .create_timeout(Some(options.connect_timeout))
            .build()?;
        // A quarter of the pool is shared (at least one); the rest serves transactions.
        let shared = (size / 4).max(1);
        Ok(Pool {
            config,
            pool,
            size,
            shared: std::sync::Mutex::new(vec![None; shared]),
            next: Default::default(),
        })
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Option<std::sync::Arc<Object>>>> {
        match self.shared.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// A shared client for a call outside a transaction (its statements may be
    /// pipelined with other calls'); one found closed is replaced from the pool.
    pub(super) async fn shared(&self) -> Result<PgConn, StoreError> {
        let n = self.slots().len().max(1);
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n;
        let open = self
            .slots()
            .get(i)
            .cloned()
            .flatten()
            .filter(|c| !c.is_closed());
        let client = match open {
            Some(c) => c,
            None => {
                let fresh = std::sync::Arc::new(self.object().await?);
                if let Some(slot) = self.slots().get_mut(i) {
                    *slot = Some(fresh.clone());
                }
                fresh
            }
        };
        Ok(PgConn {
            client: Some(Client::Shared(client)),
            in_tx: false,
        })
    }

    /// Open every shared client now, side by side, so the first calls after start do
    /// not each wait for a connection to be made.
    pub(super) async fn warm(&self) {
        let n = self.slots().len();
        let opened = futures::future::join_all((0..n).map(|_| self.object())).await;
        let mut slots = self.slots();
        for (slot, client) in slots.iter_mut().zip(opened) {
            if slot.is_none() {
                *slot = client.ok().map(std::sync::Arc::new);
            }
        }
    }

    async fn object(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(|e| match e {
            deadpool_postgres::PoolError::Backend(e) => StoreError::Postgres(e),
            other => StoreError::Pool(other),
        })
    }

    /// Check a connection out for this call alone (a transaction, a migration) until
    /// the returned guard drops.
    pub(super) async fn get(&self) -> Result<PgConn, StoreError> {
        Ok(PgConn {
            client: Some(Client::Alone(Box::new(self.object().await?))),
            in_tx: false,
        })
    }

    /// Wake the receiver each time `channel` is notified (`LISTEN`), on a connection of
    /// its own kept by a task until the receiver is dropped. A broken connection is
    /// opened again after a second; what was notified meanwhile is lost, so the
    /// listener also looks for itself now and then (and once each time it connects).
    pub(super) fn listen(&self, channel: &str) -> tokio::sync::mpsc::UnboundedReceiver<()> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let config = self.config.clone();
        let listen = format!("LISTEN {channel}");
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move { listen_until_dropped(&config, &listen, &tx).await });
            }
            Err(_) => tracing::warn!("store: no runtime to listen on"),
        }
        rx
    }
}

/// A listening connection: forward each notification as a wake-up, until nobody
/// receives them.
async fn listen_until_dropped(
    config: &tokio_postgres::Config,
    listen: &str,
    wake: &tokio::sync::mpsc::UnboundedSender<()>,
) {
    use tokio_postgres::AsyncMessage;
    let tick = std::time::Duration::from_secs(1);
    while !wake.is_closed() {
        let (client, mut connection) = match config.connect(NoTls).await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("store: listening ({listen}): {e}");
                tokio::time::sleep(tick).await;
                continue;
            }
        };
        // The connection is driven here; the LISTEN goes out while it is.
        let (said, mut heard) = tokio::sync::mpsc::unbounded_channel::<()>();
        let driver = async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(_))) => {
                        if said.send(()).is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => return,
                }
            }
        };
        let driving = tokio::spawn(driver);
        if let Err(e) = client.batch_execute(listen).await {
            tracing::debug!("store: listening ({listen}): {e}");
            driving.abort();
            tokio::time::sleep(tick).await;
            continue;
        }
        // Connected again: whatever was notified while it was down is looked for now.
        let _ = wake.send(());
        loop {
            tokio::select! {
                got = heard.recv() => match got {
                    Some(()) => {
                        if wake.send(()).is_err() {
                            driving.abort();
                            return;
                        }
                    }
                    None => break,
                },
                () = wake.closed() => {
                    driving.abort();
                    return;
                }
            }
        }
        drop(client);
        tokio::time::sleep(tick).await;
    }
}

/// Where a PostgreSQL URL points, without its password: `host:port/database`.
pub fn database_label(url: &str) -> String {
    let Ok(config) = url.parse::<tokio_postgres::Config>() else {
        return "an unreadable URL".into();
    };
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("{host}:{port}/{db}")
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

fn row_of(row: &tokio_postgres::Row) -> Result<Row, StoreError> {
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

/// A connection checked out of the pool; put back when dropped (or, if a transaction
/// was left open, closed: the server rolls it back).
pub(super) struct PgConn {
    /// Always `Some` until dropped.
    client: Option<Client>,
    /// A transaction is open.
    in_tx: bool,
}

/// How a call holds its client.
enum Client {
    /// Checked out for this call alone.
    Alone(Box<Object>),
    /// Shared with the calls made at the same time ([`Pool::shared`]).
    Shared(std::sync::Arc<Object>),
}

impl PgConn {
    fn client(&self) -> Result<&Object, StoreError> {
        match self.client.as_ref() {
            Some(Client::Alone(c)) => Ok(c),
            Some(Client::Shared(c)) => Ok(c),
            None => Err(StoreError::Closed),
        }
    }

    /// Run a statement; rows changed.
    pub(super) async fn execute(&mut self, sql: &str, args: &[Val]) -> Result<u64, StoreError> {
        let c = self.client()?;
        let stmt = c.prepare_cached(&placeholders(sql)).await?;
        Ok(c.execute(&stmt, &params(args)).await?)
    }

    /// Run a query; its rows.
    pub(super) async fn query(&mut self, sql: &str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        let c = self.client()?;
        let stmt = c.prepare_cached(&placeholders(sql)).await?;
        let rows = c.query(&stmt, &params(args)).await?;
        rows.iter().map(row_of).collect()
    }

    /// Run statements that take no arguments (BEGIN, COMMIT, a migration).
    pub(super) async fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        match sql {
            "BEGIN" => self.in_tx = true,
            "COMMIT" | "ROLLBACK" => self.in_tx = false,
            _ => {}
        }
        Ok(self.client()?.batch_execute(sql).await?)
    }
}

fn params(args: &[Val]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

impl Drop for PgConn {
    fn drop(&mut self) {
        if self.in_tx {
            // Cut off mid-transaction: this connection is not put back, so its
            // transaction dies with it.
            if let Some(Client::Alone(client)) = self.client.take() {
                drop(Object::take(*client));
            }
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
