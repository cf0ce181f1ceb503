//! What an operator scrapes from `GET /metrics` (Prometheus text format), per process:
//! turns and their latency, model errors, gate decisions by route, cards waiting, voice
//! rooms, the Discord shards held and each one's gateway latency (docs/deploy.md). The
//! engine and the surfaces record into one process-wide registry; the page's route
//! renders it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The turn latency histogram's upper bounds, in seconds.
const BUCKETS: [f64; 10] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0];

/// The process's metrics. Counters are atomics; the labelled families and the shard
/// table change together per key, each behind its own lock.
#[derive(Default)]
pub struct Metrics {
    /// Turns finished (any ending).
    turns: AtomicU64,
    /// Turns that ended because the model failed.
    model_errors: AtomicU64,
    /// Turn latency: the count per bucket (the last one is +Inf).
    turn_buckets: [AtomicU64; BUCKETS.len() + 1],
    /// Turn latency: the sum, in microseconds.
    turn_micros: AtomicU64,
    /// Gate decisions by route (allowlist, saved, auto-safe, user, expired, …).
    decisions: Mutex<BTreeMap<&'static str, u64>>,
    /// Voice rooms open now.
    voice_rooms: AtomicU64,
    /// The Discord shards this process runs, with each one's last heartbeat latency
    /// (None until it has one).
    shards: Mutex<BTreeMap<u32, Option<Duration>>>,
}

/// The process-wide registry.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::default)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Metrics {
    /// A turn finished after `took`; `model_failed` when the model's error ended it.
    pub fn turn(&self, took: Duration, model_failed: bool) {
        self.turns.fetch_add(1, Ordering::Relaxed);
        if model_failed {
            self.model_errors.fetch_add(1, Ordering::Relaxed);
        }
        let secs = took.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BUCKETS.len());
        self.turn_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.turn_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// The gate decided by `route`.
    pub fn decision(&self, route: &'static str) {
        *lock(&self.decisions).entry(route).or_insert(0) += 1;
    }

    /// How many voice rooms are open now.
    pub fn set_voice_rooms(&self, n: usize) {
        self.voice_rooms.store(n as u64, Ordering::Relaxed);
    }

    /// The shards this process runs now, with their gateway latency.
    pub fn set_shards(&self, shards: BTreeMap<u32, Option<Duration>>) {
        *lock(&self.shards) = shards;
    }

    /// The exposition, with `cards_waiting` read by the caller at scrape time.
    pub fn render(&self, cards_waiting: usize) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "# HELP kotoba_turns_total Turns finished.\n# TYPE kotoba_turns_total counter\nkotoba_turns_total {}",
            self.turns.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            text,
            "# HELP kotoba_turn_duration_seconds How long a turn took, from the request to her last word.\n# TYPE kotoba_turn_duration_seconds histogram"
        );
        let mut running = 0u64;
        for (i, bound) in BUCKETS.iter().enumerate() {
            running += self.turn_buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(
                text,
                "kotoba_turn_duration_seconds_bucket{{le=\"{bound}\"}} {running}"
            );
        }
        running += self.turn_buckets[BUCKETS.len()].load(Ordering::Relaxed);
        let _ = writeln!(
            text,
            "kotoba_turn_duration_seconds_bucket{{le=\"+Inf\"}} {running}\nkotoba_turn_duration_seconds_sum {}\nkotoba_turn_duration_seconds_count {running}",
            self.turn_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(
            text,
            "# HELP kotoba_model_errors_total Turns the model's error ended.\n# TYPE kotoba_model_errors_total counter\nkotoba_model_errors_total {}",
            self.model_errors.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            text,
            "# HELP kotoba_gate_decisions_total Gate decisions by route.\n# TYPE kotoba_gate_decisions_total counter"
        );
        for (route, n) in lock(&self.decisions).iter() {
            let _ = writeln!(text, "kotoba_gate_decisions_total{{route=\"{route}\"}} {n}");
        }
        let _ = writeln!(
            text,
            "# HELP kotoba_cards_waiting Approval cards waiting for an answer.\n# TYPE kotoba_cards_waiting gauge\nkotoba_cards_waiting {cards_waiting}"
        );
        let _ = writeln!(
            text,
            "# HELP kotoba_voice_rooms Voice rooms open.\n# TYPE kotoba_voice_rooms gauge\nkotoba_voice_rooms {}",
            self.voice_rooms.load(Ordering::Relaxed)
        );
        let shards = lock(&self.shards);
        let _ = writeln!(
            text,
            "# HELP kotoba_discord_shards_held Discord shards this process runs.\n# TYPE kotoba_discord_shards_held gauge\nkotoba_discord_shards_held {}",
            shards.len()
        );
        let _ = writeln!(
            text,
            "# HELP kotoba_discord_gateway_latency_seconds Each shard's last heartbeat round trip.\n# TYPE kotoba_discord_gateway_latency_seconds gauge"
        );
        for (shard, latency) in shards.iter() {
            if let Some(l) = latency {
                let _ = writeln!(
                    text,
                    "kotoba_discord_gateway_latency_seconds{{shard=\"{shard}\"}} {}",
                    l.as_secs_f64()
                );
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_counts_turns_into_cumulative_buckets_and_labels_each_route() {
        let m = Metrics::default();
        m.turn(Duration::from_millis(300), false);
        m.turn(Duration::from_secs(3), true);
        m.decision("auto-safe");
        m.decision("auto-safe");
        m.decision("user");
        let mut shards = BTreeMap::new();
        shards.insert(1, Some(Duration::from_millis(42)));
        shards.insert(3, None);
        m.set_shards(shards);
        let text = m.render(2);
        for line in [
            "kotoba_turns_total 2",
            "kotoba_turn_duration_seconds_bucket{le=\"0.25\"} 0",
            "kotoba_turn_duration_seconds_bucket{le=\"0.5\"} 1",
            "kotoba_turn_duration_seconds_bucket{le=\"5\"} 2",
            "kotoba_turn_duration_seconds_bucket{le=\"+Inf\"} 2",
            "kotoba_turn_duration_seconds_count 2",
            "kotoba_model_errors_total 1",
            "kotoba_gate_decisions_total{route=\"auto-safe\"} 2",
            "kotoba_gate_decisions_total{route=\"user\"} 1",
            "kotoba_cards_waiting 2",
            "kotoba_discord_shards_held 2",
            "kotoba_discord_gateway_latency_seconds{shard=\"1\"} 0.042",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing in:\n{text}"
            );
        }
        assert!(
            text.contains("kotoba_turn_duration_seconds_sum 3.3"),
            "{text}"
        );
    }
}
