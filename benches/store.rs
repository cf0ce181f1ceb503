//! The store benchmark: what the store work of one turn costs on PostgreSQL against the
//! embedded SQLite, measured in the same run. Run: `cargo bench --bench store`.
//!
//! One turn's store work, as a plain Discord turn on a loaded conversation does it: the
//! message claimed, the person's line kept with the running mark (`begin_turn`), her
//! answer kept with the mark removed (`end_turn`); its round trips are counted by the
//! store. SQLite is the real file store (WAL) in a temp dir; PostgreSQL is the one
//! benches/support/pg_server.rs finds or starts, reached directly and through a loopback
//! proxy adding 20 ms each way (a database in another zone).
//! `KOTOBA_BENCH_TURNS=N` sets the turns per backend (default 2000, after 200 warm-up;
//! the distant database runs a tenth of them).
//!
//! Then whole processes (benches/support/store_burst.rs): two `kotoba serve` on that one
//! PostgreSQL, one direct and one through the 20 ms-each-way proxy; one `/v1` turn alone
//! on each (the median of 5, after 12 to warm up), then 40 at once on each, with `/health` asked every 10 ms
//! during the burst (its p99 and max).
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use kotoba_testkit::{model_server, postgres as pg_support, proxy};
use std::time::{Duration, Instant};

use kotoba::store::Store;

#[path = "support/pg_server.rs"]
mod pg_server;
#[path = "support/store_burst.rs"]
mod store_burst;

const WARMUP: usize = 200;

/// One turn's store work; `k` makes its message id unique.
async fn one_turn(store: &Store, session: &str, k: u64) {
    assert!(store.claim_discord_message(1_000_000 + k).await.unwrap());
    let (_line, mark) = store
        .begin_turn(session, "ann (42)", "what is on the list today?")
        .await
        .unwrap();
    store
        .end_turn(
            session,
            "Three things: the post, the plants, the call.",
            Some(mark),
        )
        .await
        .unwrap();
}

/// Per-turn times of `n` turns after the warm-up, message ids from `ids_from`.
async fn measure(store: &Store, n: usize, warmup: usize, ids_from: u64) -> Vec<Duration> {
    for k in 0..warmup {
        one_turn(store, "discord:warm", ids_from + k as u64).await;
    }
    let mut times = Vec::with_capacity(n);
    for k in 0..n {
        let t = Instant::now();
        one_turn(store, "discord:200", ids_from + (warmup + k) as u64).await;
        times.push(t.elapsed());
    }
    times
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(run());
}

async fn run() {
    let n: usize = std::env::var("KOTOBA_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n >= 10)
        .unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(&dir.path().join("kotoba.db")).unwrap();
    let (base, _started) = pg_server::server();
    let url = pg_support::create_database(&base);
    let pg = Store::connect(&url).await.unwrap();
    // The distant database: the same server through a proxy adding 20 ms each way.
    let target = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let proxy = proxy::Proxy::start(target.parse().unwrap(), Duration::from_millis(20)).await;
    let distant = Store::connect(&proxy.url_through(&url)).await.unwrap();

    let mut results = Vec::new();
    for (i, (label, store, turns, warmup)) in [
        ("SQLite (baseline)", &sqlite, n, WARMUP),
        ("PostgreSQL", &pg, n, WARMUP),
        ("PostgreSQL, 20 ms away", &distant, (n / 10).max(10), 10),
    ]
    .into_iter()
    .enumerate()
    {
        let before = store.round_trips();
        // Message ids of their own: two of them share a database.
        let mut times = measure(store, turns, warmup, i as u64 * 10_000_000).await;
        let trips = (store.round_trips() - before) as f64 / (turns + warmup) as f64;
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        results.push((
            label,
            turns,
            trips,
            mean,
            quantile(&times, 0.5),
            quantile(&times, 0.99),
        ));
    }
    println!("store work of one turn (after warm-up)");
    let base_mean = results[0].3.as_secs_f64();
    for (label, turns, trips, mean, p50, p99) in &results {
        println!(
            "  {label:<24} {turns:>5} turns  {trips:>4.1} round trips  mean {:>8.0} µs  p50 {:>8.0} µs  p99 {:>8.0} µs  {:>7.2}× SQLite",
            mean.as_secs_f64() * 1e6,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            mean.as_secs_f64() / base_mean
        );
    }
    drop((pg, distant));

    // Whole processes: the same server, direct and through the proxy.
    let model = store_burst::model().await;
    let near = store_burst::serve(&url, &model).await;
    let far = store_burst::serve(&proxy.url_through(&url), &model).await;
    let client = reqwest::Client::new();
    let mut alone = Vec::new();
    for served in [&near, &far] {
        let mut times = Vec::new();
        // The first turns of a process build what it builds once (each shared
        // connection prepares each statement at its first use).
        for _ in 0..12 {
            store_burst::turn(&client, served.port()).await;
        }
        for _ in 0..5 {
            times.push(store_burst::turn(&client, served.port()).await);
        }
        times.sort();
        alone.push(times[times.len() / 2]);
    }
    let near_burst = store_burst::burst(&client, near.port()).await;
    let far_burst = store_burst::burst(&client, far.port()).await;
    println!(
        "{} /v1 turns at once on two `kotoba serve` sharing one PostgreSQL",
        store_burst::BURST
    );
    for (label, one, b) in [
        ("direct", alone[0], &near_burst),
        ("20 ms away", alone[1], &far_burst),
    ] {
        println!(
            "  {label:<12} one turn {:>6.0} ms  burst {:>6.0} ms ({:>4.1}× one turn)  /health p99 {:>5.1} ms  max {:>5.1} ms ({} asks)",
            one.as_secs_f64() * 1e3,
            b.wall.as_secs_f64() * 1e3,
            b.wall.as_secs_f64() / one.as_secs_f64(),
            quantile(&b.health, 0.99).as_secs_f64() * 1e3,
            b.health.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
            b.health.len()
        );
    }
    let bound = near_burst.wall + alone[1] * 3;
    println!(
        "  distant burst {:.0} ms against direct burst + 3× one distant turn = {:.0} ms ({:.2}×)",
        far_burst.wall.as_secs_f64() * 1e3,
        bound.as_secs_f64() * 1e3,
        far_burst.wall.as_secs_f64() / bound.as_secs_f64()
    );
    drop(proxy);
}
