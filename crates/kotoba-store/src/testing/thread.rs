//! A loopback server on an OS thread and runtime of its own, apart from the caller's (a
//! benchmark measures its own thread apart from the server's; a proxy forwards while
//! the caller's runtime thread is blocked). The one way every support server runs apart.

use std::future::Future;

/// The thread a server runs on. [`Apart::stop`] stops its runtime and waits for the
/// thread; dropping it stops the runtime without waiting.
pub struct Apart {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Start what `start` makes on a new thread `name` with a current-thread runtime, which
/// runs until the returned [`Apart`] stops it; returns what was made with that handle.
#[allow(clippy::expect_used)]
pub fn apart<T, F, Fut>(name: &str, start: F) -> (T, Apart)
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the server's thread");
            rt.block_on(async move {
                let _ = tx.send(start().await);
                let _ = stopped.await;
            });
        })
        .expect("the server's thread");
    let made = rx.recv().expect("the server started on its thread");
    (
        made,
        Apart {
            stop: Some(stop),
            thread: Some(thread),
        },
    )
}

impl Apart {
    /// Stop the runtime and wait for the thread.
    pub fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Apart {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
