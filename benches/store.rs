//! The store benchmark: what the store work of one turn costs on PostgreSQL against the
//! embedded SQLite, measured in the same run. Run: `cargo bench --bench store`.
//!
//! One turn's store work, as a plain Discord turn does it: the message claimed, the
//! turn marked under way, the conversation read back (the last 50 lines), her two lines
//! appended in one transaction, one audit row, the mark cleared. SQLite is the real
//! file store (WAL) in a temp dir; PostgreSQL is the one benches/support/pg_server.rs
//! finds or starts.
//! `KOTOBA_BENCH_TURNS=N` sets the turns per backend (default 2000, after 200 warm-up).

// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::time::{Duration, Instant};

use kotoba::store::{Approver, Store};

#[path = "support/pg_server.rs"]
mod pg_server;
#[path = "../tests/support/postgres.rs"]
#[allow(dead_code)]
mod pg_support;

const WARMUP: usize = 200;

/// One turn's store work; `k` makes its message id unique.
fn one_turn(store: &Store, session: &str, k: u64) {
    assert!(store.claim_discord_message(1_000_000 + k).unwrap());
    let mark = store.open_turn(session).unwrap();
    let history = store.lines_after(session, 0, 50).unwrap();
    assert!(history.len() <= 50);
    store
        .append_lines(
            session,
            &[
                ("user", "ann (42)", "what is on the list today?", false),
                (
                    "assistant",
                    "kotoba",
                    "Three things: the post, the plants, the call.",
                    false,
                ),
            ],
        )
        .unwrap();
    store
        .audit(session, "shell", "ls", "read", true, Approver::AutoSafe, "")
        .unwrap();
    store.close_inflight(mark).unwrap();
}

/// Per-turn times of `n` turns after the warm-up.
fn measure(store: &Store, n: usize) -> Vec<Duration> {
    for k in 0..WARMUP {
        one_turn(store, "discord:warm", k as u64);
    }
    (0..n)
        .map(|k| {
            let t = Instant::now();
            one_turn(store, "discord:200", (WARMUP + k) as u64);
            t.elapsed()
        })
        .collect()
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let n: usize = std::env::var("KOTOBA_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n >= 10)
        .unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(&dir.path().join("kotoba.db")).unwrap();
    let (base, _started) = pg_server::server();
    let pg = Store::connect(&pg_support::create_database(&base)).unwrap();

    let mut results = Vec::new();
    for (label, store) in [("SQLite (baseline)", &sqlite), ("PostgreSQL", &pg)] {
        let mut times = measure(store, n);
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        results.push((label, mean, quantile(&times, 0.5), quantile(&times, 0.99)));
    }
    println!("store work of one turn, {n} turns per backend (after {WARMUP} warm-up)");
    let base_mean = results[0].1.as_secs_f64();
    for (label, mean, p50, p99) in &results {
        println!(
            "  {label:<18} mean {:>7.0} µs  p50 {:>7.0} µs  p99 {:>7.0} µs  {:>5.2}× SQLite",
            mean.as_secs_f64() * 1e6,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            mean.as_secs_f64() / base_mean
        );
    }
    drop(pg);
}
