//! The voice benchmark (voice.md "Latency"): loopback providers at fixed latencies —
//! recognition 300 ms, the model's first sentence 400 ms, synthesis first byte 200 ms —
//! and a phrase spoken by espeak-ng fed into a room at its boundary. Measured per
//! utterance: commit (end of speech detected) → first 48 kHz frame handed to the
//! AudioOut (what songbird would play), p50/p99 over 100 utterances, and the bot's own
//! share per stage (the stage's time minus the provider's fixed latency). The
//! baseline, measured in the same run, is the providers' sum asked directly with a
//! plain HTTP client (no room, no engine). Barge-in: the next utterance starts while
//! she is still talking; measured from its first voiced frame to the stop.
//! Over the real protocol (`support/voice_protocol.rs`), in the same run: `kotoba
//! serve` joins the loopback voice server with DAVE on and the same phrase arrives as
//! RTP; the person's last voiced packet → her first audible packet, and the person's
//! first voiced packet → her last audible packet when talking over her, both reported
//! beside the boundary figures as ratios.
//! Run: `cargo bench --bench voice`; `KOTOBA_BENCH_UTTERANCES=N` changes the count,
//! `KOTOBA_BENCH_PROTOCOL_UTTERANCES=N` the protocol part's (default 30).

// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/support/model_server.rs"]
mod model_server;
#[path = "../tests/support/speech_server.rs"]
mod speech_server;
#[path = "support/voice_protocol.rs"]
mod voice_protocol;

/// The loopback Discord and voice server, as the tests use them.
#[allow(dead_code)]
mod support {
    #[path = "../../tests/support/discord/mod.rs"]
    pub mod discord;
    #[path = "../../tests/support/voice/mod.rs"]
    pub mod voice;
}

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kotoba::config::Config;
use kotoba::engine::Engine;
use kotoba::llm::OpenAiClient;
use kotoba::soul::Soul;
use kotoba::speech::audio::{FRAME, HEAR_FRAME};
use kotoba::speech::endpoint::EndpointSettings;
use kotoba::speech::{stt, tts};
use kotoba::store::Store;
use kotoba::surfaces::discord::voice::boundary::{AudioOut, Heard};
use kotoba::surfaces::discord::voice::room::{self, RoomParts, RoomSide, Trace};
use kotoba::tools::builtin::builtin_registry;
use model_server::{Reply, ServerThread};
use speech_server::SpeechServerThread;
use tokio::time::Instant;

const STT: Duration = Duration::from_millis(300);
const MODEL: Duration = Duration::from_millis(400);
const TTS: Duration = Duration::from_millis(200);
const ANSWER: &str = "It is noon right now. Is there anything else you need?";

#[derive(Default)]
struct Out {
    stops: Mutex<Vec<Instant>>,
}

impl AudioOut for Out {
    fn frame(&self, _pcm: &[f32]) {}
    fn stop(&self) {
        self.stops.lock().unwrap().push(Instant::now());
    }
}

struct Quiet;

#[async_trait]
impl RoomSide for Quiet {
    async fn post(&self, _text: String) {}
    fn name_of(&self, _user: u64) -> String {
        "Alice".into()
    }
    fn is_owner(&self, _user: u64) -> bool {
        true
    }
    fn before_turn(&self, _user: u64) {}
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn row(name: &str, mut v: Vec<Duration>) {
    v.sort();
    println!("| {name} | {} | {} |", ms(pct(&v, 0.5)), ms(pct(&v, 0.99)));
}

/// The providers' own sum, asked directly: recognition, the model to its first
/// sentence, synthesis to its first byte — one after another, as the room must.
async fn baseline(http: &reqwest::Client, speech: &str, model: &str, wav: &[u8]) -> Duration {
    let t0 = Instant::now();
    let form = reqwest::multipart::Form::new()
        .text("model", "gpt-4o-mini-transcribe")
        .part(
            "file",
            reqwest::multipart::Part::bytes(wav.to_vec())
                .file_name("audio.wav")
                .mime_str("audio/wav")
                .unwrap(),
        );
    http.post(format!("{speech}/audio/transcriptions"))
        .bearer_auth("k")
        .multipart(form)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let mut resp = http
        .post(format!("{model}/responses"))
        .bearer_auth("k")
        .json(&serde_json::json!({"model": "scripted", "input": "hi", "stream": true}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while let Some(chunk) = resp.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains("now.") {
            break;
        }
    }
    let mut resp = http
        .post(format!("{speech}/audio/speech"))
        .bearer_auth("k")
        .json(&serde_json::json!({"model": "m", "input": "It is noon right now.", "voice": "alloy", "response_format": "pcm"}))
        .send()
        .await
        .unwrap();
    resp.chunk().await.unwrap();
    t0.elapsed()
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("KOTOBA_BENCH_UTTERANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let (model, model_thread) = ServerThread::start();
    model.set_delay(MODEL);
    model.set_fallback(Reply::text(ANSWER));
    model.set_recording(false);
    let (speech, speech_thread) = SpeechServerThread::start();
    speech.set_recognition_delay(STT);
    speech.set_synthesis_delay(TTS);
    speech.set_default_transcript("what time is it");
    speech.set_recording(false);

    let home = tempfile::tempdir().unwrap();
    let speech_base = speech.openai_base();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!("stt:\n  provider: openai\n  base_url: {speech_base}\ntts:\n  provider: openai\n  base_url: {speech_base}\n"),
    )
    .unwrap();
    let model_base = model.base_url();
    let config = Config::for_home(
        home.path(),
        &[
            ("KOTOBA_LLM_BASE_URL", model_base.as_str()),
            ("OPENAI_API_KEY", "bench-key"),
            ("KOTOBA_REASONING_EFFORT", "off"),
            ("KOTOBA_MODEL", "scripted"),
        ],
    );

    // The phrase, spoken by espeak-ng through our own provider, at 16 kHz.
    let phrase = speech_server::espeak_16k("what time is it").await;
    let wav = kotoba::speech::wav::encode(&phrase, 16_000);

    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let mut base = Vec::new();
    for _ in 0..20 {
        base.push(baseline(&http, &speech_base, &model_base, &wav).await);
    }
    base.sort();
    let floor = pct(&base, 0.5);

    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let client = Arc::new(OpenAiClient::new(config.clone()));
    let engine = Engine::new(
        config.clone(),
        client,
        builtin_registry(),
        Soul::shipped(),
        store,
    );
    let out = Arc::new(Out::default());
    let (trace_tx, mut traces) = tokio::sync::mpsc::unbounded_channel::<Trace>();
    let room = room::spawn(
        RoomParts {
            engine,
            session: "discord:1".into(),
            names: vec!["Kotoba".into()],
            recognizer: stt::recognizer(&config).unwrap(),
            synthesizer: tts::synthesizer(&config).unwrap(),
            out: out.clone(),
            side: Arc::new(Quiet),
            endpoint: EndpointSettings::default(),
            idle_leave: Duration::from_secs(3600),
            trace: Some(trace_tx),
        },
        1,
    );

    let mut frames: Vec<Vec<i16>> = phrase
        .chunks(HEAR_FRAME)
        .map(|c| {
            let mut v = c.to_vec();
            v.resize(HEAR_FRAME, 0);
            v
        })
        .collect();
    let lead = frames.len();
    frames.extend(std::iter::repeat_n(vec![0i16; HEAR_FRAME], 110));

    let mut totals = Vec::new();
    let (mut s_stt, mut s_model, mut s_tts) = (Vec::new(), Vec::new(), Vec::new());
    let mut barge = Vec::new();
    for i in 0..n {
        let talking = i > 0;
        let first_voiced = Instant::now();
        for (k, frame) in frames.iter().enumerate() {
            room.heard
                .send(Heard {
                    frames: vec![(7, frame.clone())],
                })
                .await
                .unwrap();
            // The start of speech goes in at real pace (barge-in is measured on it);
            // the rest as fast as the room takes it (audio time is counted in frames).
            if k < 8 {
                tokio::time::sleep(FRAME).await;
            }
            if k == lead {
                tokio::task::yield_now().await;
            }
        }
        if talking {
            let stop = out
                .stops
                .lock()
                .unwrap()
                .iter()
                .rev()
                .find(|t| **t >= first_voiced)
                .copied();
            if let Some(stop) = stop {
                barge.push(stop.duration_since(first_voiced));
            }
        }
        let t = tokio::time::timeout(Duration::from_secs(30), traces.recv())
            .await
            .expect("an answer within 30 s")
            .expect("a trace");
        let (Some(first_sentence), Some(first_frame)) = (t.first_sentence, t.first_frame) else {
            continue;
        };
        let total = first_frame.duration_since(t.committed);
        totals.push(total);
        s_stt.push(t.recognised.duration_since(t.committed).saturating_sub(STT));
        s_model.push(
            first_sentence
                .duration_since(t.recognised)
                .saturating_sub(MODEL),
        );
        s_tts.push(
            first_frame
                .duration_since(first_sentence)
                .saturating_sub(TTS),
        );
        // Let her talk a little, so the next utterance barges in.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(room);
    let protocol_n: usize = std::env::var("KOTOBA_BENCH_PROTOCOL_UTTERANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let over = voice_protocol::run(protocol_n, &phrase, &model_base, &speech_base).await;
    totals.sort();
    barge.sort();
    let p50 = pct(&totals, 0.5);
    let sum = STT + MODEL + TTS;
    println!("voice benchmark: {} utterances, providers fixed at recognition 300 ms, model first sentence 400 ms, synthesis first byte 200 ms", totals.len());
    println!();
    println!("| figure | p50 | p99 |");
    println!("|---|---|---|");
    row(
        "baseline: the providers asked directly, in a row",
        base.clone(),
    );
    row("commit → first frame handed to songbird", totals.clone());
    row(
        "bot share, total (minus the providers' 900 ms)",
        totals.iter().map(|t| t.saturating_sub(sum)).collect(),
    );
    row("bot share: commit → transcript (minus 300 ms)", s_stt);
    row(
        "bot share: transcript → first sentence (minus 400 ms)",
        s_model,
    );
    row(
        "bot share: first sentence → first frame (minus 200 ms)",
        s_tts,
    );
    row(
        "barge-in: first voiced frame → playback stopped",
        barge.clone(),
    );
    // The room's own wait before it commits: the phrase is shorter than 1.2 s of
    // speech, so it is "unsure" (2.0 s), as the boundary's commit already includes.
    let ends = EndpointSettings::default();
    let spoken_for = Duration::from_secs_f64(phrase.len() as f64 / 16_000.0);
    let commit = if spoken_for < ends.short_speech {
        ends.unsure
    } else {
        ends.silence
    };
    let mut answer = over.answer.clone();
    answer.sort();
    let mut over_barge = over.barge.clone();
    over_barge.sort();
    row(
        "over the protocol, DAVE on: last voiced packet → her first audible packet",
        answer.clone(),
    );
    row(
        &format!(
            "over the protocol: the same minus the room's {:.1} s commit wait",
            commit.as_secs_f64()
        ),
        answer.iter().map(|d| d.saturating_sub(commit)).collect(),
    );
    row(
        "over the protocol: barge-in first voiced packet → her last audible packet",
        over_barge.clone(),
    );
    println!();
    println!(
        "over the protocol: {} answers, {} barge-ins; ratios (p50) to the boundary in this run: answer minus commit {:.3}×, barge-in {:.3}×; target: barge-in ≤ 100 ms p50 over the protocol → {}",
        answer.len(),
        over_barge.len(),
        pct(&answer, 0.5).saturating_sub(commit).as_secs_f64() / p50.as_secs_f64().max(1e-9),
        pct(&over_barge, 0.5).as_secs_f64() / pct(&barge, 0.5).as_secs_f64().max(1e-9),
        if !over_barge.is_empty() && pct(&over_barge, 0.5) <= Duration::from_millis(100) {
            "met"
        } else {
            "NOT met"
        }
    );
    println!();
    println!(
        "ratio to the baseline (p50): {:.3}×; target: total ≤ providers' sum + 50 ms = 950 ms → {}",
        p50.as_secs_f64() / floor.as_secs_f64().max(1e-9),
        if p50 <= sum + Duration::from_millis(50) {
            "met"
        } else {
            "NOT met"
        }
    );
    model_thread.stop();
    speech_thread.stop();
}
