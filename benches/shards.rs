//! The shards benchmark: mentions answered per second by one bot run as 1, 2 and 4
//! `kotoba serve` processes sharing one PostgreSQL, over 1,000 guilds spread on 4
//! shards of the loopback Discord, with an instant scripted model; printed as ratios
//! against the one-process run of the same invocation. Run: `cargo bench --bench
//! shards`. `KOTOBA_BENCH_GUILDS=N` changes the guild count (default 1000).
//!
//! For each process count: a fresh database and a fresh loopback Discord; the processes
//! split the shards by range (`0-3/4`; `0-1/4` and `2-3/4`; one each) and start
//! together; once every shard is live, one mention is said in every guild's channel at
//! once, and the clock runs until every channel has her answer. Every process, the
//! fake Discord and the model share this machine, so more processes also means more
//! contention for its cores: the figure is what one machine gives, not a cluster.
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "support/pg_server.rs"]
mod pg_server;

use kotoba_testkit::{discord, model_server, postgres as pg_support, process};
use std::collections::HashSet;
use std::time::{Duration, Instant};

use discord::{FakeDiscord, GUEST};
use model_server::{Reply, ScriptedModel};
use tokio::process::Child;

const SHARDS: u32 = 4;

/// One `kotoba serve` running `shards`, its data folder and page port.
async fn process(
    fake: &FakeDiscord,
    model: &ScriptedModel,
    url: &str,
    shards: &str,
) -> (Child, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", process::free_port());
    let mut cmd = process::command(&["serve"], home.path(), &addr);
    cmd.envs(model.env("chat"))
        .env("KOTOBA_DATABASE_URL", url)
        .env("KOTOBA_DISCORD_SHARDS", shards);
    for (k, v) in fake.env() {
        cmd.env(k, v);
    }
    (cmd.spawn().unwrap(), home)
}

/// The ranges `count` processes split the shards into.
fn ranges(count: u32) -> Vec<String> {
    let per = SHARDS / count;
    (0..count)
        .map(|i| format!("{}-{}/{SHARDS}", i * per, i * per + per - 1))
        .collect()
}

/// Mentions answered per second with `count` processes, and the seconds it took.
async fn run(count: u32, guilds: u64, base: &str, model: &ScriptedModel) -> (f64, f64) {
    let url = pg_support::create_database(base);
    let fake = FakeDiscord::start().await;
    fake.recommend_shards(SHARDS);
    // One identify bucket per shard, so start-up is not what is measured.
    fake.set_max_concurrency(SHARDS);
    let channels: Vec<u64> = fake
        .add_guilds(guilds)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    let mut running = Vec::new();
    for shards in ranges(count) {
        running.push(process(&fake, model, &url, &shards).await);
    }
    fake.wait_shards(SHARDS, Duration::from_secs(120)).await;
    // Every guild's GUILD_CREATE has reached its process.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let started = Instant::now();
    for (k, channel) in channels.iter().enumerate() {
        fake.mention(*channel, GUEST, &format!("hello {k}"));
    }
    let wanted: HashSet<u64> = channels.iter().copied().collect();
    let deadline = started + Duration::from_secs(600);
    loop {
        let answered: HashSet<u64> = fake
            .calls()
            .iter()
            .filter(|c| c.method == "POST" && c.path.ends_with("/messages"))
            .filter_map(|c| {
                let rest = c.path.strip_prefix("/api/v10/channels/")?;
                rest.split('/').next()?.parse().ok()
            })
            .filter(|c| wanted.contains(c))
            .collect();
        if answered.len() == wanted.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{count} process(es): {} of {} answered",
            answered.len(),
            wanted.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = started.elapsed().as_secs_f64();
    for (mut child, _home) in running {
        let _ = child.kill().await;
    }
    (guilds as f64 / secs, secs)
}

#[tokio::main]
async fn main() {
    let guilds: u64 = std::env::var("KOTOBA_BENCH_GUILDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &u64| n >= 4)
        .unwrap_or(1000);
    let (base, _started) = pg_server::server();
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("ok"));
    model.set_recording(false);
    println!(
        "mentions answered per second, {guilds} guilds on {SHARDS} shards, one mention each, \
         {} cores",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut baseline = None;
    for count in [1, 2, 4] {
        let (rate, secs) = run(count, guilds, &base, &model).await;
        let base_rate = *baseline.get_or_insert(rate);
        println!(
            "  {count} process(es): {rate:>7.1} mentions/s ({secs:.2} s)  {:>5.2}× one process",
            rate / base_rate
        );
    }
}
