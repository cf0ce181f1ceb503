//! The burst half of the store benchmark (benches/store.rs): two `kotoba serve` processes
//! on one PostgreSQL, one reaching it directly and one through a loopback proxy adding
//! 20 ms each way; one `/v1` turn alone on each, then 40 at once on each, while
//! `/health` (which touches no database) is asked every 10 ms.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::process::Child;

use crate::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process;

/// The `/v1` key both processes require.
const KEY: &str = "bench-key";
/// Turns at once in a burst.
pub const BURST: usize = 40;

/// One serving process.
pub struct Served {
    port: u16,
    _child: Child,
    _home: tempfile::TempDir,
}

/// Start `kotoba serve` on `database_url`, answered by `model`; wait for `/health`.
pub async fn serve(database_url: &str, model: &ScriptedModel) -> Served {
    let home = tempfile::tempdir().unwrap();
    let port = process::free_port();
    let mut cmd = process::command(&["serve"], home.path(), &format!("127.0.0.1:{port}"));
    cmd.envs(model.env("chat"))
        .env("KOTOBA_DATABASE_URL", database_url)
        .env("KOTOBA_API_KEY", KEY)
        .env("RUST_LOG", "error");
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while health(port).await.is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "serve never answered /health"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Served {
        port,
        _child: child,
        _home: home,
    }
}

async fn health(port: u16) -> Option<Duration> {
    let t = Instant::now();
    let r = reqwest::get(format!("http://127.0.0.1:{port}/health"))
        .await
        .ok()?;
    (r.status() == 200).then(|| t.elapsed())
}

/// One `/v1` turn in a session of its own; how long it took.
pub async fn turn(client: &reqwest::Client, port: u16) -> Duration {
    let t = Instant::now();
    let r = client
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(KEY)
        .json(&serde_json::json!({
            "model": "kotoba",
            "messages": [{"role": "user", "content": "what is on the list today?"}],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "a turn was not answered");
    t.elapsed()
}

/// What a burst measured.
pub struct Burst {
    /// From the first request sent to the last answer.
    pub wall: Duration,
    /// `/health` latencies while it ran.
    pub health: Vec<Duration>,
}

/// `BURST` turns at once on `port`, with `/health` asked every 10 ms meanwhile.
pub async fn burst(client: &reqwest::Client, port: u16) -> Burst {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let done = tokio_util::sync::CancellationToken::new();
    let poller = {
        let (seen, done) = (seen.clone(), done.clone());
        tokio::spawn(async move {
            while !done.is_cancelled() {
                if let Some(d) = health(port).await {
                    seen.lock().unwrap().push(d);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let t = Instant::now();
    let turns: Vec<_> = (0..BURST)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { turn(&client, port).await })
        })
        .collect();
    for t in turns {
        t.await.unwrap();
    }
    let wall = t.elapsed();
    done.cancel();
    poller.await.unwrap();
    let mut health = seen.lock().unwrap().clone();
    health.sort();
    Burst { wall, health }
}

/// The model both processes ask: it answers every request at once.
pub async fn model() -> ScriptedModel {
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("Three things: the post, the plants, the call."));
    model.set_recording(false);
    model
}

impl Served {
    /// Its web port.
    pub fn port(&self) -> u16 {
        self.port
    }
}
