//! The /v1 benchmark: the real `kotoba serve` process (this build's binary) serving
//! /v1 against an instant loopback scripted model, measured from outside as a client
//! would: time from exec to the first `GET /health` 200; RSS at start and after the
//! run; a plain turn and a one-tool turn, 200 sequential turns each (median, p99,
//! streamed to `data: [DONE]`); turns/s with 20 concurrent clients. Every figure is also
//! a ratio to a raw streamed request to the model server, measured in the same run.
//! Run: `cargo bench --bench v1`. `KOTOBA_BENCH_TURNS=N` scales the sequential loops
//! (default 200) and the concurrent run (10·N turns).
//!
//! Layout: the model server runs on its own thread with its own current_thread runtime;
//! the clients run on a current_thread runtime on the main thread; `kotoba serve` is a
//! child process (its own multi-thread runtime, KOTOBA_LOG=warn). Two cores are shared
//! by the three, as on the machines this project runs on.
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use kotoba_testkit::model_server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use model_server::{Reply, ScriptedModel};
use serde_json::json;

const KEY: &str = "bench-key";
const ANSWER: &str = "Of course, here it is.";
const WARMUP: usize = 50;
const CLIENTS: usize = 20;
const ROTATE: usize = 50;
const STARTS: usize = 5;

const TARGET_TURN: Duration = Duration::from_millis(2);
const TARGET_TPS: f64 = 1000.0;
const TARGET_RSS_MB: f64 = 25.0;
const TARGET_HEALTH: Duration = Duration::from_millis(100);

fn main() {
    let n: usize = std::env::var("KOTOBA_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n >= 10)
        .unwrap_or(200);

    // The model server: its own thread, its own runtime, until told to stop.
    let (model, server_thread) = ScriptedModel::start_apart();
    model.set_recording(false);
    model.set_fallback(Reply::text(ANSWER));

    let started = Instant::now();
    let report = run(&model, n);
    report.print();
    println!("(whole run {:.1} s)", started.elapsed().as_secs_f64());

    drop(model);
    server_thread.stop();
}

/// One `kotoba serve` child on a free loopback port, with its own data folder.
struct Served {
    child: Child,
    addr: String,
    _home: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        // A bench that stops early must not leave a server behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn spawn(model: &ScriptedModel) -> (Served, Instant) {
        let home = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kotoba"));
        cmd.arg("serve")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("KOTOBA_HOME", home.path())
            .env("KOTOBA_WEB_ADDR", &addr)
            .env("KOTOBA_API_KEY", KEY)
            .env("KOTOBA_LLM_BASE_URL", model.base_url())
            .env("KOTOBA_LLM_API", "responses")
            .env("OPENAI_API_KEY", "test-key")
            .env("KOTOBA_REASONING_EFFORT", "off")
            .env("KOTOBA_MODEL", "scripted")
            .env("KOTOBA_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let t0 = Instant::now();
        let child = cmd.spawn().unwrap();
        (
            Served {
                child,
                addr,
                _home: home,
            },
            t0,
        )
    }

    /// Poll `GET /health` on a raw socket until it answers 200.
    fn wait_healthy(&self, t0: Instant) -> Duration {
        loop {
            if let Ok(mut s) = TcpStream::connect(&self.addr) {
                let req = format!(
                    "GET /health HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                    self.addr
                );
                let mut buf = Vec::new();
                if s.write_all(req.as_bytes()).is_ok()
                    && s.read_to_end(&mut buf).is_ok()
                    && buf.starts_with(b"HTTP/1.1 200")
                {
                    return t0.elapsed();
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "serve never got healthy"
            );
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    fn rss_kb(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// SIGTERM, then how long the graceful shutdown took.
    fn stop(mut self) -> Duration {
        let t = Instant::now();
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve exited with {status}");
        t.elapsed()
    }
}

fn run(model: &ScriptedModel, n: usize) -> Report {
    // Start-up: exec → /health, several times; the last process serves the load.
    let mut health = Vec::new();
    let mut rss_start = Vec::new();
    let mut served = None;
    for i in 0..STARTS {
        let (s, t0) = Served::spawn(model);
        health.push(s.wait_healthy(t0));
        rss_start.push(s.rss_kb());
        if i + 1 < STARTS {
            s.stop();
        } else {
            served = Some(s);
        }
    }
    let served = served.unwrap();
    let base = format!("http://{}", served.addr);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let figures = rt.block_on(async {
        let http = reqwest::Client::new();
        eprintln!("bench: baseline");
        // 1. Baseline: one raw streamed request to the model, read to the end.
        let raw_url = format!("{}/responses", model.base_url());
        let raw_body = json!({"model": "scripted", "input": "hi", "stream": true});
        for _ in 0..WARMUP {
            raw_request(&http, &raw_url, &raw_body).await;
        }
        let mut raw = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            raw_request(&http, &raw_url, &raw_body).await;
            raw.push(t.elapsed());
        }

        eprintln!("bench: plain turns");
        // 2. Plain turns, streamed (what the ElevenLabs agent does), and whole.
        for i in 0..WARMUP {
            v1_turn(&http, &base, &format!("plain-{}", i % ROTATE), true).await;
        }
        let mut plain = Vec::with_capacity(n);
        let mut first_chunk = Vec::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            let first = v1_turn(&http, &base, &format!("plain-{}", i % ROTATE), true).await;
            plain.push(t.elapsed());
            first_chunk.push(first);
        }
        let mut whole = Vec::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            v1_turn(&http, &base, &format!("whole-{}", i % ROTATE), false).await;
            whole.push(t.elapsed());
        }

        eprintln!("bench: one-tool turns");
        // 3. One-tool turns: memory_recall (a read tool, no card), then the answer.
        for i in 0..WARMUP / 5 {
            model.push(Reply::call("memory_recall", json!({"query": "tea"})));
            v1_turn(&http, &base, &format!("tool-{}", i % ROTATE), true).await;
        }
        let requests0 = model.request_count();
        let mut tool = Vec::with_capacity(n);
        for i in 0..n {
            model.push(Reply::call("memory_recall", json!({"query": "tea"})));
            let t = Instant::now();
            v1_turn(&http, &base, &format!("tool-{}", i % ROTATE), true).await;
            tool.push(t.elapsed());
        }
        assert_eq!(
            model.request_count() - requests0,
            2 * n,
            "two model calls per tool turn"
        );
        assert_eq!(model.remaining(), 0);

        eprintln!("bench: concurrent clients");
        // 4. Throughput: 20 clients, each its own session, plain streamed turns.
        let total = 10 * n;
        let per_client = total / CLIENTS;
        let t = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..CLIENTS {
            let http = http.clone();
            let base = base.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..per_client {
                    v1_turn(&http, &base, &format!("client-{c}"), true).await;
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let tps = (per_client * CLIENTS) as f64 / t.elapsed().as_secs_f64();
        (
            raw,
            plain,
            first_chunk,
            whole,
            tool,
            tps,
            per_client * CLIENTS,
        )
    });
    let (raw, plain, first_chunk, whole, tool, tps, concurrent_turns) = figures;
    let rss_after = served.rss_kb();
    let shutdown = served.stop();
    Report {
        n,
        health: Stats::of(health),
        rss_start_kb: median_u64(rss_start),
        rss_after_kb: rss_after,
        raw: Stats::of(raw),
        plain: Stats::of(plain),
        first_chunk: Stats::of(first_chunk),
        whole: Stats::of(whole),
        tool: Stats::of(tool),
        tps,
        concurrent_turns,
        shutdown,
    }
}

async fn raw_request(http: &reqwest::Client, url: &str, body: &serde_json::Value) {
    let mut resp = http
        .post(url)
        .bearer_auth("test-key")
        .json(body)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    while resp.chunk().await.unwrap().is_some() {}
}

/// One /v1 turn, read to its end; returns the time to the first content chunk.
async fn v1_turn(http: &reqwest::Client, base: &str, session: &str, stream: bool) -> Duration {
    let t = Instant::now();
    let mut resp = http
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(KEY)
        .json(&json!({
            "model": "kotoba",
            "stream": stream,
            "user": session,
            "messages": [{"role": "user", "content": "hello there"}],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = Vec::new();
    let mut first = None;
    while let Some(c) = resp.chunk().await.unwrap() {
        body.extend_from_slice(&c);
        // The role chunk has "content":"" too: wait for the answer's first word.
        if first.is_none() && String::from_utf8_lossy(&body).contains("\"content\":\"Of") {
            first = Some(t.elapsed());
        }
    }
    let text = String::from_utf8_lossy(&body);
    if stream {
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    }
    assert!(text.contains("is."), "{text}");
    first.unwrap_or_else(|| t.elapsed())
}

struct Stats {
    median: Duration,
    p99: Duration,
}

impl Stats {
    fn of(mut v: Vec<Duration>) -> Stats {
        v.sort_unstable();
        Stats {
            median: v[v.len() / 2],
            p99: v[(v.len() * 99 / 100).min(v.len() - 1)],
        }
    }
}

fn median_u64(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

struct Report {
    n: usize,
    health: Stats,
    rss_start_kb: u64,
    rss_after_kb: u64,
    raw: Stats,
    plain: Stats,
    first_chunk: Stats,
    whole: Stats,
    tool: Stats,
    tps: f64,
    concurrent_turns: usize,
    shutdown: Duration,
}

fn ms(d: Duration) -> String {
    if d < Duration::from_millis(10) {
        format!("{:.0} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}

impl Report {
    fn print(&self) {
        let base = self.raw.median.as_secs_f64();
        let ratio = |d: Duration| format!("{:.2}x", d.as_secs_f64() / base);
        let profile = if cfg!(debug_assertions) {
            "DEBUG build (figures not meaningful)"
        } else {
            "release"
        };
        println!();
        println!("Kotoba /v1 benchmark — {profile}; `kotoba serve` as a child process, loopback scripted model (Responses SSE)");
        println!(
            "sequential turns = {} (KOTOBA_BENCH_TURNS) after {} warm-up; {} concurrent turns over {} clients",
            self.n, WARMUP, self.concurrent_turns, CLIENTS
        );
        println!();
        println!(
            "{:<44} {:>10} {:>10} {:>8}   {:<18}",
            "figure", "median", "p99", "ratio", "target"
        );
        println!("{}", "-".repeat(100));
        let row = |name: &str, s: &Stats, target: &str, ok: Option<bool>| {
            println!(
                "{:<44} {:>10} {:>10} {:>8}   {:<18} {}",
                name,
                ms(s.median),
                ms(s.p99),
                ratio(s.median),
                target,
                ok.map(verdict).unwrap_or("")
            );
        };
        row(
            "raw streamed request to the model (baseline)",
            &self.raw,
            "-",
            None,
        );
        row(
            "/v1 plain turn, streamed to [DONE]",
            &self.plain,
            "≤ 2 ms median",
            Some(self.plain.median <= TARGET_TURN),
        );
        row(
            "/v1 plain turn, first content chunk",
            &self.first_chunk,
            "-",
            None,
        );
        row("/v1 plain turn, stream: false", &self.whole, "-", None);
        row(
            "/v1 one-tool turn (memory_recall), streamed",
            &self.tool,
            "-",
            None,
        );
        println!(
            "{:<44} {:>10} {:>10} {:>8}   {:<18} {}",
            format!("/v1 plain turns/s, {CLIENTS} concurrent clients"),
            format!("{:.0}/s", self.tps),
            "",
            "",
            "≥ 1,000 turns/s",
            verdict(self.tps >= TARGET_TPS)
        );
        row(
            "exec → first /health 200 (5 starts)",
            &self.health,
            "≤ 100 ms",
            Some(self.health.median <= TARGET_HEALTH),
        );
        let start_mb = self.rss_start_kb as f64 / 1024.0;
        println!(
            "{:<44} {:>10} {:>10} {:>8}   {:<18} {}",
            "RSS at start (median of 5) / after the run",
            format!("{start_mb:.1} MB"),
            format!("{:.1} MB", self.rss_after_kb as f64 / 1024.0),
            "",
            "≤ 25 MB at start",
            verdict(start_mb <= TARGET_RSS_MB)
        );
        println!(
            "{:<44} {:>10}",
            "SIGTERM → exit (graceful shutdown)",
            ms(self.shutdown)
        );
        println!();
        println!("Notes:");
        println!("- ratio = figure / raw request median, both measured in this run (the machine is noisy).");
        println!("- p99 of the start-up row is the slowest of 5 starts. The p99 column of a 200-turn loop is its 2nd-slowest turn.");
        println!(
            "- sequential turns rotate over {ROTATE} sessions per kind, so histories are capped (40 lines); \
             concurrent clients each keep one session. Python original: 111 ms per turn, 22–30 turns/s, 93 MB, ~2 s to /health."
        );
    }
}
