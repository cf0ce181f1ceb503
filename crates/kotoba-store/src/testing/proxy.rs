//! A loopback TCP proxy in front of a server (PostgreSQL): it adds a delay each way, as
//! a database in another zone would, and can be cut (every connection closed, new ones
//! refused) and restored, as a database that goes away and comes back.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::thread;

/// A running proxy; it stops when dropped.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    /// Milliseconds added each way.
    delay_ms: Arc<AtomicU64>,
    /// Whether it refuses and closes every connection now.
    cut: Arc<AtomicBool>,
    /// The pumps of every open connection, so a cut closes them.
    pumps: Arc<Mutex<Vec<AbortHandle>>>,
    accept: AbortHandle,
    /// The thread and runtime it runs on when started apart; they end with it.
    apart: Option<thread::Apart>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.close_all();
    }
}

impl Proxy {
    /// A proxy to `target` adding `delay` each way.
    pub async fn start(target: SocketAddr, delay: Duration) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let delay_ms = Arc::new(AtomicU64::new(delay.as_millis() as u64));
        let cut = Arc::new(AtomicBool::new(false));
        let pumps: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (d, c, p) = (delay_ms.clone(), cut.clone(), pumps.clone());
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if c.load(Ordering::SeqCst) {
                    drop(client); // refused while cut
                    continue;
                }
                let Ok(server) = TcpStream::connect(target).await else {
                    continue;
                };
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                let mut list = p.lock().unwrap();
                list.extend(pump(cr, sw, d.clone()));
                list.extend(pump(sr, cw, d.clone()));
            }
        })
        .abort_handle();
        Proxy {
            addr,
            delay_ms,
            cut,
            pumps,
            accept,
            apart: None,
        }
    }

    /// [`Proxy::start`] on a runtime of its own (a thread of its own), so it forwards even
    /// while the caller's runtime thread is blocked; the runtime lives as long as the
    /// proxy.
    pub fn start_apart(target: SocketAddr, delay: Duration) -> Proxy {
        let (mut proxy, apart) = thread::apart("proxy", move || Proxy::start(target, delay));
        proxy.apart = Some(apart);
        proxy
    }

    /// `postgres://…` `url` with its host and port replaced by the proxy's.
    pub fn url_through(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").unwrap();
        let (auth, after) = match rest.split_once('@') {
            Some((auth, after)) => (format!("{auth}@"), after),
            None => (String::new(), rest),
        };
        let path = after.find('/').map_or("", |i| &after[i..]);
        format!("{scheme}://{auth}{}{path}", self.addr)
    }

    /// Change the delay each way.
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }

    /// Close every connection and refuse new ones until [`Proxy::restore`].
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.close_all();
    }

    /// Take connections again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    fn close_all(&self) {
        for h in self.pumps.lock().unwrap().drain(..) {
            h.abort();
        }
    }
}

/// Copy `from` to `to`, each chunk delivered `delay` after it was read (order kept,
/// throughput not capped); the two tasks' handles.
fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay_ms: Arc<AtomicU64>,
) -> [AbortHandle; 2] {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let due =
                        Instant::now() + Duration::from_millis(delay_ms.load(Ordering::SeqCst));
                    if tx.send((due, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let write = tokio::spawn(async move {
        while let Some((due, bytes)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&bytes).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    });
    [read.abort_handle(), write.abort_handle()]
}
