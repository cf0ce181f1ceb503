//! The Discord benchmark: 1,000 channels each send one mention over the loopback
//! gateway, with an instant scripted model; measured from MESSAGE_CREATE leaving the
//! fake gateway to the bot's first REST call for that channel (the typing indicator),
//! p50/p99, and the process's resident memory afterwards. Run:
//! `cargo bench --bench discord`. `KOTOBA_BENCH_CHANNELS=N` changes the count.
//!
//! The fake Discord, the scripted model and the bot share one process (and its 2-core
//! runtime), so the RSS figure is an upper bound for the bot alone.
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use kotoba_testkit::{discord, model_server};
use std::time::{Duration, Instant};

use discord::{FakeDiscord, BOT, GUILD};
use kotoba::app::App;
use model_server::{Reply, ScriptedModel};
use tokio_util::sync::CancellationToken;

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let n: u64 = std::env::var("KOTOBA_BENCH_CHANNELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let fake = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("ok"));
    model.set_recording(false);
    let home = tempfile::tempdir().unwrap();
    let config = fake.config(home.path(), &model, &[]);
    let app = App::build(config).await.unwrap();
    let shutdown = CancellationToken::new();
    let rss_before = rss_mb();
    let task = tokio::spawn(kotoba::surfaces::discord::run(
        app.engine.clone(),
        app.discord_port.clone(),
        shutdown.clone(),
    ));
    fake.wait_ready().await;
    let start_calls = fake.calls().len();
    let mut sent = Vec::new();
    for i in 0..n {
        let channel = 50_000 + i;
        let t0 = Instant::now();
        let _ = GUILD;
        fake.say(
            channel,
            discord::OWNER,
            &format!("<@{BOT}> hello {i}"),
            discord::Msg {
                mentions: vec![(BOT, "Kotoba".into())],
                ..discord::Msg::default()
            },
        );
        sent.push((channel, t0));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let replies = fake
            .calls()
            .iter()
            .skip(start_calls)
            .filter(|c| c.method == "POST" && c.path.ends_with("/messages"))
            .count();
        if replies as u64 >= n || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let calls = fake.calls();
    let mut lat: Vec<Duration> = sent
        .iter()
        .filter_map(|(ch, t0)| {
            let prefix = format!("/api/v10/channels/{ch}/");
            calls
                .iter()
                .skip(start_calls)
                .find(|c| c.path.starts_with(&prefix))
                .map(|c| c.at.saturating_duration_since(*t0))
        })
        .collect();
    lat.sort();
    let answered = calls
        .iter()
        .skip(start_calls)
        .filter(|c| c.method == "POST" && c.path.ends_with("/messages"))
        .count();
    println!(
        "channels: {n}, answered: {answered}, first-call samples: {}",
        lat.len()
    );
    if !lat.is_empty() {
        println!(
            "MESSAGE_CREATE → first REST call: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            pct(&lat, 0.5).as_secs_f64() * 1000.0,
            pct(&lat, 0.99).as_secs_f64() * 1000.0,
            lat[lat.len() - 1].as_secs_f64() * 1000.0
        );
    }
    println!(
        "RSS: {:.1} MB before the bot started, {:.1} MB after {n} channels (fake Discord and model included)",
        rss_before,
        rss_mb()
    );
    shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
}
