//! The long-conversation benchmark: what counting and assembling a turn's request
//! costs when the conversation holds about 100,000 tokens, as a ratio to a turn whose
//! conversation is a few lines, both measured in this one run. Run:
//! `cargo bench --bench context`.
//!
//! The engine is the real one (real store in a temp dir, the built-in tools, the
//! shipped soul) in front of the engine's scripted model answering at once, so the figures
//! are the engine's own: loading the lines, counting them in tokens (each line once,
//! then remembered), fitting the request to the window and storing the turn.
//! `KOTOBA_BENCH_TURNS=N` sets the measured turns of each kind (default 200).
//!
//! It also counts the bytes the process allocates per model request in the long
//! conversation (a counting allocator around the system's): a turn answered in words
//! (one request) and a turn that calls a tool first (two requests) — what assembling,
//! fitting and copying the request costs in memory traffic. `scripts/bench-at context
//! REV...` runs this same program at several commits in one sitting.
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// The counting allocator is the one `unsafe` here: it forwards to the system's.
#![allow(unsafe_code)]
// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kotoba::config::Config;
use kotoba::engine::{Engine, TurnOptions};
use kotoba::llm::tokens::Tokenizer;
use kotoba::protocol::{Origin, TurnRequest, TurnStatus};
use kotoba::soul::Soul;
use kotoba::store::Store;
use kotoba::tools::builtin::builtin_registry;
use kotoba_engine::engine::testing::{call, say, Script};

/// Bytes allocated so far by the whole process (a reallocation counts its new size).
static ALLOCATED: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting.
struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is
// an atomic add.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocated() -> u64 {
    ALLOCATED.load(Ordering::Relaxed)
}

/// A line of about 200 tokens.
fn line(n: usize) -> String {
    let mut s = format!("line {n}:");
    for i in 0..190 {
        s.push_str(&format!(" word{}", (i * 13 + n) % 211));
    }
    s
}

fn main() {
    let turns: usize = std::env::var("KOTOBA_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n >= 10)
        .unwrap_or(200);
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        "context:\n  window: 1000000\n",
    )
    .unwrap();
    let config = Config::for_home(home.path(), &[("KOTOBA_REASONING_EFFORT", "off")]);
    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let pre = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The long conversation: about 100,000 tokens of stored lines.
    let mut tokens = 0;
    let mut n = 0;
    while tokens < 100_000 {
        let text = line(n);
        tokens += Tokenizer::O200k.count(&text);
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        pre.block_on(store.append_message("long", role, "ann", &text, false))
            .unwrap();
        n += 1;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The one scripted model, answering every request at once with a short line and
    // keeping none of them.
    let model = Script::new(Vec::new());
    model.set_fallback(Ok(say("Noted.")));
    model.set_recording(false);
    let script = model.clone();
    let engine = Engine::new(config, model, builtin_registry(), Soul::shipped(), store);
    let turn = |session: String, text: String| {
        let engine = engine.clone();
        async move {
            let req = TurnRequest::text(Origin::Owner, &session, "ann", &text);
            let r = engine.run_turn(req, TurnOptions::default()).await;
            assert_eq!(r.status, TurnStatus::Completed, "{}", r.text);
        }
    };
    rt.block_on(async {
        // The first turn of the long session loads and counts every line once.
        let t = Instant::now();
        turn("long".into(), "hello".into()).await;
        let cold = t.elapsed();
        // Warm both kinds.
        for i in 0..20 {
            turn("long".into(), format!("warm {i}")).await;
            turn(format!("short-{}", i / 5), format!("warm {i}")).await;
        }
        let mut short = Duration::ZERO;
        let mut long = Duration::ZERO;
        let (mut long_bytes, mut tool_bytes, mut tool_time) = (0u64, 0u64, Duration::ZERO);
        for i in 0..turns {
            // Short conversations: a fresh session every 5 turns (a few lines each).
            let t = Instant::now();
            turn(format!("short-b{}", i / 5), format!("short {i}")).await;
            short += t.elapsed();
            let (t, bytes) = (Instant::now(), allocated());
            turn("long".into(), format!("long {i}")).await;
            long += t.elapsed();
            long_bytes += allocated() - bytes;
            // A turn that calls a tool first: two requests over the long conversation
            // (the name is refused at the door, so nothing runs; the loop asks again).
            script.push(call("no_such_tool", serde_json::json!({"n": i})));
            let (t, bytes) = (Instant::now(), allocated());
            turn("long".into(), format!("tool {i}")).await;
            tool_time += t.elapsed();
            tool_bytes += allocated() - bytes;
        }
        let per = |d: Duration| d / turns as u32;
        let ratio = long.as_secs_f64() / short.as_secs_f64();
        let used = engine.context_use("long").await;
        println!(
            "long conversation ({} lines, {} tokens in use): {:?} per turn",
            n,
            used.tokens,
            per(long)
        );
        println!("short conversation: {:?} per turn", per(short));
        let mb = |b: u64| b as f64 / turns as f64 / 1e6;
        println!(
            "long conversation, a turn in words (1 request): {:.2} MB allocated per request",
            mb(long_bytes)
        );
        println!(
            "long conversation, a turn calling a tool (2 requests): {:?} per turn, {:.2} MB allocated per request",
            per(tool_time),
            mb(tool_bytes) / 2.0
        );
        println!("ratio long / short: {ratio:.2}");
        println!(
            "first turn of the long conversation (load and count every line): {cold:?} ({:.1}× a short turn)",
            cold.as_secs_f64() / per(short).as_secs_f64()
        );
    });
}
