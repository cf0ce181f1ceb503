//! The voice benchmark (voice.md "Latency"): loopback providers at fixed latencies —
//! recognition 300 ms, the model's first sentence 400 ms, synthesis first byte 200 ms —
//! and a phrase spoken by espeak-ng fed into a room at its boundary. Measured per
//! utterance: commit (end of speech detected) → first 48 kHz frame handed to the
//! AudioOut (what songbird would play), p50/p99 over 100 utterances, and the bot's own
//! share per stage (the stage's time minus the provider's fixed latency). The
//! baseline, measured in the same run, is the providers' sum asked directly with a
//! plain HTTP client (no room, no engine). Frames go in at real pace (one per 20 ms),
//! so the room recognises at its short pause as it would in a call; the person's end
//! of speech (last voiced frame) → her first frame is the figure a person waits.
//! Phrases paused mid-sentence ("I want to … book a table") count early answers.
//! Barge-in: the next utterance starts while
//! she is still talking; measured from its first voiced frame to the stop.
//! Over the real protocol (`support/voice_protocol.rs`), in the same run: `kotoba
//! serve` joins the loopback voice server with DAVE on and the same phrase arrives as
//! RTP; the person's last voiced packet → her first audible packet, and the person's
//! first voiced packet → her last audible packet when talking over her, both reported
//! beside the boundary figures as ratios.
//! Streamed recognition, in the same run: the same utterances with `stt.streaming: on`
//! against the loopback server's realtime WebSocket, whose final transcript of a
//! segment comes 100 ms after the last speech it heard (a streaming recognizer decodes
//! the audio as it comes; the commit only closes the segment), and never before the
//! commit; both at the boundary and over the protocol, reported beside the upload's
//! figures and as ratios to the streamed providers' own time (the stream's final, the
//! model's first sentence, synthesis' first byte: 700 ms), measured directly in the
//! same run. Target: end of speech → first audio ≤ 800 ms p50 at the boundary.
//! Realtime voice, in the same run (`support/voice_realtime.rs`): the same phrase into
//! a room with `voice_mode: realtime` at the loopback speech server's realtime session
//! (its end of turn after 500 ms of quiet, its first audio 250 ms after that): end of
//! speech → first frame beside the chain's, and the bot's own share (upstream +
//! downstream) against the target of 30 ms. Then over the real protocol
//! (`support/voice_realtime_protocol.rs`: `kotoba serve` with DAVE on, the phrase as
//! RTP): end of speech → her first RTP packet, and her share upstream (the person's
//! last loud packet sent → the provider has it) and downstream (the provider's first
//! audio → her first RTP packet), as ratios to the provider's own time.
//! Run: `cargo bench --bench voice`; `KOTOBA_BENCH_UTTERANCES=N` changes the count,
//! `KOTOBA_BENCH_PROTOCOL_UTTERANCES=N` the protocol part's (default 30),
//! `KOTOBA_BENCH_REALTIME_UTTERANCES=N` the realtime part's (default 30),
//! `KOTOBA_BENCH_REALTIME_PROTOCOL_UTTERANCES=N` the realtime part's over the protocol
//! (default 30).
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// A measurement program, not library code: it may stop on a broken setup, and it prints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "support/voice_baseline.rs"]
mod voice_baseline;
#[path = "support/voice_protocol.rs"]
mod voice_protocol;
#[path = "support/voice_realtime.rs"]
mod voice_realtime;
#[path = "support/voice_realtime_protocol.rs"]
mod voice_realtime_protocol;

use kotoba_testkit::{model_server, speech_server};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kotoba::config::Config;
use kotoba::engine::Engine;
use kotoba::llm::OpenAiClient;
use kotoba::protocol::Origin;
use kotoba::soul::Soul;
use kotoba::speech::audio::{FRAME, HEAR_FRAME};
use kotoba::speech::endpoint::EndpointSettings;
use kotoba::speech::{stt, tts};
use kotoba::store::Store;
use kotoba::tools::builtin::builtin_registry;
use kotoba::voice::boundary::{AudioOut, Heard};
use kotoba::voice::room::{self, Caption, RoomParts, RoomSide, Trace};
use model_server::{Reply, ScriptedModel};
use tokio::time::Instant;

const STT: Duration = Duration::from_millis(300);
/// A streaming recognizer's final transcript, after the last speech it heard.
const STREAM_FINAL: Duration = Duration::from_millis(100);
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
    async fn post(&self, _caption: Caption) {}
    fn name_of(&self, _user: u64) -> String {
        "Alice".into()
    }
    fn origin(&self, user: u64) -> Origin {
        Origin::Discord { user, owner: true }
    }
    fn author(&self, user: u64) -> String {
        format!("{} ({user})", self.name_of(user))
    }
    async fn before_turn(&self) {}
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

/// Phrases with a pause mid-sentence: (first part, second part, what a recognizer
/// makes of the first part alone, of the whole).
const PAUSED: [(&str, &str, &str, &str); 2] = [
    (
        "I want to",
        "book a table",
        "I want to...",
        "I want to book a table.",
    ),
    (
        "what about",
        "tomorrow",
        "What about?",
        "What about tomorrow?",
    ),
];

/// `pcm` (16 kHz mono) as heard frames, then `silent` silent ones.
fn hear_frames(pcm: &[i16], silent: usize) -> Vec<Vec<i16>> {
    let mut frames: Vec<Vec<i16>> = pcm
        .chunks(HEAR_FRAME)
        .map(|c| {
            let mut v = c.to_vec();
            v.resize(HEAR_FRAME, 0);
            v
        })
        .collect();
    frames.extend(std::iter::repeat_n(vec![0i16; HEAR_FRAME], silent));
    frames
}

/// When one utterance's frames went in.
struct Sent {
    /// Its first voiced frame.
    first_voiced: Instant,
    /// Its last voiced frame (the end of speech).
    last_voiced: Instant,
    /// The frame [`utter_marking`] was asked to mark.
    marked: Instant,
}

fn voiced(frame: &[i16]) -> bool {
    let sum: f64 = frame.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / frame.len().max(1) as f64).sqrt() > 100.0
}

/// Send `frames` as songbird's ticks come: one every 20 ms, in real time.
async fn utter(heard: &tokio::sync::mpsc::Sender<Heard>, frames: &[Vec<i16>]) -> Sent {
    utter_marking(heard, frames, 0).await
}

/// [`utter`], noting when frame `mark` went in.
async fn utter_marking(
    heard: &tokio::sync::mpsc::Sender<Heard>,
    frames: &[Vec<i16>],
    mark: usize,
) -> Sent {
    let mut tick = tokio::time::interval(FRAME);
    let now = Instant::now();
    let mut sent = Sent {
        first_voiced: now,
        last_voiced: now,
        marked: now,
    };
    let mut any = false;
    for (k, frame) in frames.iter().enumerate() {
        tick.tick().await;
        let at = Instant::now();
        heard
            .send(Heard {
                frames: vec![(7, frame.clone())],
            })
            .await
            .unwrap();
        if k == mark {
            sent.marked = at;
        }
        if voiced(frame) {
            if !any {
                sent.first_voiced = at;
                any = true;
            }
            sent.last_voiced = at + FRAME;
        }
    }
    sent
}

/// One room's figures at the boundary.
struct Boundary {
    /// End of speech → her first frame, per utterance.
    from_speech_end: Vec<Duration>,
    /// Commit → her first frame.
    totals: Vec<Duration>,
    /// The bot's share per stage: recognition, the model, synthesis.
    s_stt: Vec<Duration>,
    s_model: Vec<Duration>,
    s_tts: Vec<Duration>,
    /// First voiced frame → playback stopped, per utterance talking over her.
    barge: Vec<Duration>,
    /// Turns started before the second part of a phrase paused mid-sentence, of `mid`.
    early_answers: usize,
    mid: usize,
    /// Model calls made, speculative ones included.
    model_calls: usize,
}

/// An engine over `config`'s store and model.
fn engine_for(config: &Arc<Config>) -> Arc<Engine> {
    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let client = Arc::new(OpenAiClient::new(config.clone()));
    Engine::new(
        config.clone(),
        client,
        builtin_registry(),
        Soul::shipped(),
        store,
    )
}

/// `n` utterances of `phrase` and the phrases paused mid-sentence, into a room built
/// from `config`, at real pace.
async fn at_the_boundary(
    config: &Arc<Config>,
    n: usize,
    phrase: &[i16],
    speech: &speech_server::SpeechServer,
    model: &model_server::ScriptedModel,
) -> Boundary {
    let engine = engine_for(config);
    let out = Arc::new(Out::default());
    let (trace_tx, mut traces) = tokio::sync::mpsc::unbounded_channel::<Trace>();
    let room = room::spawn(
        RoomParts {
            engine,
            session: "discord:1".into(),
            names: vec!["Kotoba".into()],
            recognizer: stt::recognizer(config).unwrap(),
            synthesizer: tts::synthesizer(config).unwrap(),
            out: out.clone(),
            side: Arc::new(Quiet),
            endpoint: EndpointSettings::default(),
            speculate: true,
            idle_leave: Duration::from_secs(3600),
            trace: Some(trace_tx),
            realtime: None,
        },
        1,
    );

    let frames = hear_frames(phrase, 110);
    let mut totals = Vec::new();
    let mut from_speech_end = Vec::new();
    let (mut s_stt, mut s_model, mut s_tts) = (Vec::new(), Vec::new(), Vec::new());
    let mut barge = Vec::new();
    let calls_before = model.request_count();
    for i in 0..n {
        let talking = i > 0;
        let sent = utter(&room.heard, &frames).await;
        if talking {
            // The first stop after their first voiced frame is the pause (a later one
            // is the barge-in's cut at min_speech).
            let stop = out
                .stops
                .lock()
                .unwrap()
                .iter()
                .find(|t| **t >= sent.first_voiced)
                .copied();
            if let Some(stop) = stop {
                barge.push(stop.duration_since(sent.first_voiced));
            }
        }
        let t = tokio::time::timeout(Duration::from_secs(30), traces.recv())
            .await
            .expect("an answer within 30 s")
            .expect("a trace");
        let (Some(first_sentence), Some(first_frame)) = (t.first_sentence, t.first_frame) else {
            continue;
        };
        totals.push(first_frame.duration_since(t.committed));
        from_speech_end.push(first_frame.duration_since(sent.last_voiced));
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
    }
    // Mid-sentence pauses: "I want to … book a table", "what about … tomorrow", each
    // with a pause of 0.5, 0.7 and 0.9 s; the recognizer answers the first part as cut
    // off, then the whole. An early answer is a turn started before the second part.
    let mut early_answers = 0;
    let mut mid = 0;
    for (first, second, cut, whole) in PAUSED {
        let a = speech_server::espeak_16k(first).await;
        let b = speech_server::espeak_16k(second).await;
        for pause in [0.5, 0.7, 0.9] {
            speech.push_transcript(cut);
            speech.push_transcript(whole);
            let mut pcm = a.clone();
            pcm.extend(std::iter::repeat_n(0i16, (16_000.0 * pause) as usize));
            let second_at = pcm.len() / HEAR_FRAME;
            pcm.extend_from_slice(&b);
            let sent = utter_marking(&room.heard, &hear_frames(&pcm, 110), second_at).await;
            let t = tokio::time::timeout(Duration::from_secs(30), traces.recv())
                .await
                .expect("an answer within 30 s")
                .expect("a trace");
            mid += 1;
            if t.turn_started < sent.marked {
                early_answers += 1;
            }
        }
    }
    let model_calls = model.request_count() - calls_before;
    drop(room);
    Boundary {
        from_speech_end,
        totals,
        s_stt,
        s_model,
        s_tts,
        barge,
        early_answers,
        mid,
        model_calls,
    }
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("KOTOBA_BENCH_UTTERANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let (model, model_thread) = ScriptedModel::start_apart();
    model.set_delay(MODEL);
    model.set_fallback(Reply::text(ANSWER));
    model.set_recording(false);
    let (speech, speech_thread) = speech_server::SpeechServer::start_apart();
    speech.set_recognition_delay(STT);
    speech.set_stream_delay(STREAM_FINAL);
    speech.set_synthesis_delay(TTS);
    speech.set_default_transcript("What time is it?");
    speech.set_recording(false);

    let home = tempfile::tempdir().unwrap();
    let speech_base = speech.openai_base();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!("stt:\n  provider: openai\n  base_url: {speech_base}\ntts:\n  provider: openai\n  base_url: {speech_base}\n"),
    )
    .unwrap();
    let model_base = model.base_url();
    let env = [
        ("KOTOBA_LLM_BASE_URL", model_base.as_str()),
        ("OPENAI_API_KEY", "bench-key"),
        ("KOTOBA_REASONING_EFFORT", "off"),
        ("KOTOBA_MODEL", "scripted"),
    ];
    let config = Config::for_home(home.path(), &env);

    // The phrase, spoken by espeak-ng through our own provider, at 16 kHz.
    let phrase = speech_server::espeak_16k("what time is it").await;
    let wav = kotoba::speech::wav::encode(&phrase, 16_000);

    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let mut base = Vec::new();
    for _ in 0..20 {
        base.push(voice_baseline::baseline(&http, &speech_base, &model_base, &wav).await);
    }
    base.sort();
    let floor = pct(&base, 0.5);
    let mut base_streamed = Vec::new();
    for _ in 0..20 {
        base_streamed.push(
            voice_baseline::baseline_streamed(&http, &speech_base, &model_base, &phrase).await,
        );
    }
    base_streamed.sort();

    let batch = at_the_boundary(&config, n, &phrase, &speech, &model).await;
    let streamed = {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("settings.yaml"),
            format!("stt:\n  provider: openai\n  base_url: {speech_base}\n  streaming: on\ntts:\n  provider: openai\n  base_url: {speech_base}\n"),
        )
        .unwrap();
        let config = Config::for_home(home.path(), &env);
        at_the_boundary(&config, n, &phrase, &speech, &model).await
    };
    let Boundary {
        mut from_speech_end,
        mut totals,
        s_stt,
        s_model,
        s_tts,
        mut barge,
        early_answers,
        mid,
        model_calls,
    } = batch;
    let protocol_n: usize = std::env::var("KOTOBA_BENCH_PROTOCOL_UTTERANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let over = voice_protocol::run(protocol_n, &phrase, &model_base, &speech_base, false).await;
    let over_streamed =
        voice_protocol::run(protocol_n, &phrase, &model_base, &speech_base, true).await;
    let realtime_n: usize = std::env::var("KOTOBA_BENCH_REALTIME_UTTERANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let realtime = {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("settings.yaml"),
            format!("voice_mode: realtime\nrealtime:\n  base_url: {speech_base}\nstt:\n  provider: openai\n  base_url: {speech_base}\ntts:\n  provider: openai\n  base_url: {speech_base}\n"),
        )
        .unwrap();
        let config = Config::for_home(home.path(), &env);
        voice_realtime::run(
            engine_for(&config),
            Arc::new(Quiet),
            realtime_n,
            &phrase,
            &speech,
        )
        .await
    };
    let realtime_protocol_n: usize = std::env::var("KOTOBA_BENCH_REALTIME_PROTOCOL_UTTERANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let realtime_over =
        voice_realtime_protocol::over_the_protocol(realtime_protocol_n, &phrase, &model, &speech)
            .await;
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
    row(
        "end of speech (last voiced frame) → first frame handed to songbird",
        from_speech_end.clone(),
    );
    row("commit → first frame handed to songbird", totals.clone());
    let ends = EndpointSettings::default();
    row(
        "bot share, total: end of speech → first frame minus the short pause and the providers' 900 ms",
        from_speech_end
            .iter()
            .map(|t| t.saturating_sub(sum + ends.early_pause))
            .collect(),
    );
    row(
        "bot share: commit → transcript (minus 300 ms; 0 when recognised at the pause)",
        s_stt,
    );
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
    let mut st_speech_end = streamed.from_speech_end.clone();
    st_speech_end.sort();
    let mut st_totals = streamed.totals.clone();
    st_totals.sort();
    row(
        "streamed providers asked directly: the stream's final, the model, synthesis",
        base_streamed.clone(),
    );
    row(
        "streamed recognition: end of speech → first frame handed to songbird",
        st_speech_end.clone(),
    );
    row(
        "streamed recognition: commit → first frame handed to songbird",
        st_totals.clone(),
    );
    row(
        "streamed recognition, bot share: commit → transcript (minus 100 ms; 0 when in hand)",
        streamed.s_stt.clone(),
    );
    let mut answer = over.answer.clone();
    answer.sort();
    let mut st_answer = over_streamed.answer.clone();
    st_answer.sort();
    let mut over_barge = over.barge.clone();
    over_barge.sort();
    row(
        "over the protocol, DAVE on: last voiced packet → her first audible packet",
        answer.clone(),
    );
    row(
        "over the protocol: barge-in first voiced packet → her last audible packet",
        over_barge.clone(),
    );
    row(
        "over the protocol, streamed recognition: last voiced packet → her first audible packet",
        st_answer.clone(),
    );
    let ratio = |a: &[Duration], b: &[Duration]| {
        pct(a, 0.5).as_secs_f64() / pct(b, 0.5).as_secs_f64().max(1e-9)
    };
    let mut sorted_end = from_speech_end.clone();
    sorted_end.sort();
    println!();
    println!(
        "streamed recognition ({} answers at the boundary, {} over the protocol): ratios (p50) to the upload in this run: end of speech → first audio {:.3}× at the boundary, {:.3}× over the protocol; commit → first audio {:.3}×; to the baseline: {:.3}× (end of speech), {:.3}× (commit); early answers {} of {}",
        st_speech_end.len(),
        st_answer.len(),
        ratio(&st_speech_end, &sorted_end),
        ratio(&st_answer, &answer),
        ratio(&st_totals, &totals),
        ratio(&st_speech_end, &base),
        ratio(&st_totals, &base),
        streamed.early_answers,
        streamed.mid,
    );
    println!(
        "streamed: end of speech → first audio {:.3}× the streamed providers' own time ({} p50) at the boundary, {:.3}× over the protocol; target: ≤ 800 ms p50 at the boundary → {}",
        ratio(&st_speech_end, &base_streamed),
        ms(pct(&base_streamed, 0.5)),
        ratio(&st_answer, &base_streamed),
        if !st_speech_end.is_empty() && pct(&st_speech_end, 0.5) <= Duration::from_millis(800) {
            "met"
        } else {
            "NOT met"
        }
    );
    println!();
    println!(
        "over the protocol: {} answers, {} barge-ins; ratios (p50) to the boundary in this run: end of speech → first audio {:.3}×, barge-in {:.3}×; target: barge-in ≤ 100 ms p50 over the protocol → {}",
        answer.len(),
        over_barge.len(),
        pct(&answer, 0.5).as_secs_f64()
            / pct(&from_speech_end, 0.5).as_secs_f64().max(1e-9),
        pct(&over_barge, 0.5).as_secs_f64() / pct(&barge, 0.5).as_secs_f64().max(1e-9),
        if !over_barge.is_empty() && pct(&over_barge, 0.5) <= Duration::from_millis(100) {
            "met"
        } else {
            "NOT met"
        }
    );
    println!();
    println!(
        "ratio to the baseline (p50): {:.3}× (commit → first frame; recognition now runs before the commit, at the pause); target: total ≤ providers' sum + 50 ms = 950 ms → {}",
        p50.as_secs_f64() / floor.as_secs_f64().max(1e-9),
        if p50 <= sum + Duration::from_millis(50) {
            "met"
        } else {
            "NOT met"
        }
    );
    from_speech_end.sort();
    let utterances = (n + mid).max(1);
    println!();
    println!(
        "end of speech → first audio: target p50 ≤ 1200 ms, p99 ≤ 1600 ms → {}; early answers on {mid} phrases paused mid-sentence: {early_answers} (target 0)",
        if pct(&from_speech_end, 0.5) <= Duration::from_millis(1200)
            && pct(&from_speech_end, 0.99) <= Duration::from_millis(1600)
        {
            "met"
        } else {
            "NOT met"
        }
    );
    let sorted = |mut v: Vec<Duration>| {
        v.sort();
        v
    };
    let rt_end = sorted(realtime.from_speech_end.clone());
    let rt_bot = sorted(realtime.bot.clone());
    println!();
    println!(
        "realtime voice: {} answers; provider stand-in: end of turn after {} ms of quiet, first audio {} ms after its stop",
        rt_end.len(),
        voice_realtime::QUIET.as_millis(),
        voice_realtime::PROVIDER.as_millis()
    );
    println!();
    println!("| figure | p50 | p99 |");
    println!("|---|---|---|");
    row(
        "realtime: end of speech → first frame handed to songbird",
        rt_end.clone(),
    );
    row(
        "realtime: the provider's own time (its stop → its first audio)",
        realtime.provider.clone(),
    );
    row(
        "realtime, bot share: upstream (the last audio handed to the room → the provider's stop)",
        realtime.upstream.clone(),
    );
    row(
        "realtime, bot share: downstream (the provider's first audio → first frame handed out)",
        realtime.downstream.clone(),
    );
    row("realtime, bot share: total", rt_bot.clone());
    println!();
    println!(
        "realtime vs the chain (p50, same loopback providers, same run): end of speech → first audio {:.3}×; target: the bot adds ≤ 30 ms to the realtime provider's own time → {}",
        ratio(&rt_end, &from_speech_end),
        if !rt_bot.is_empty() && pct(&rt_bot, 0.5) <= Duration::from_millis(30) {
            "met"
        } else {
            "NOT met"
        }
    );
    let rt_rtp = sorted(realtime_over.from_speech_end.clone());
    let rt_rtp_share = sorted(realtime_over.share.clone());
    let rt_rtp_provider = sorted(realtime_over.provider.clone());
    let rt_rtp_up = sorted(realtime_over.upstream.clone());
    let rt_rtp_down = sorted(realtime_over.downstream.clone());
    println!();
    println!(
        "realtime over the protocol, DAVE on: {} answers; provider stand-in: end of turn after {} ms of quiet, first audio {} ms after its stop",
        rt_rtp.len(),
        voice_realtime::QUIET.as_millis(),
        voice_realtime::PROVIDER.as_millis()
    );
    println!();
    println!("| figure | p50 | p99 |");
    println!("|---|---|---|");
    row(
        "realtime over the protocol: end of speech (last loud packet sent) → her first audible RTP packet",
        rt_rtp.clone(),
    );
    row(
        "realtime over the protocol: the provider's own time (its stop → its first audio)",
        rt_rtp_provider.clone(),
    );
    row(
        "realtime over the protocol, her share: upstream (last loud packet sent → the provider has it)",
        rt_rtp_up.clone(),
    );
    row(
        "realtime over the protocol, her share: downstream (the provider's first audio → her first RTP packet)",
        rt_rtp_down.clone(),
    );
    row(
        "realtime over the protocol, her share: all (end of speech → first RTP packet, minus the quiet and the provider's time)",
        rt_rtp_share.clone(),
    );
    let provider_all = |p: Duration| p + voice_realtime::QUIET;
    println!();
    println!(
        "realtime over the protocol (p50): her share {:.3}× the provider's own time (upstream {:.3}×, downstream {:.3}×); end of speech → first audio {:.3}× the provider's quiet + time; {:.3}× the boundary's; target: her share ≤ 30 ms p50 over RTP → {}",
        ratio(&rt_rtp_share, &rt_rtp_provider),
        ratio(&rt_rtp_up, &rt_rtp_provider),
        ratio(&rt_rtp_down, &rt_rtp_provider),
        pct(&rt_rtp, 0.5).as_secs_f64()
            / provider_all(pct(&rt_rtp_provider, 0.5)).as_secs_f64().max(1e-9),
        ratio(&rt_rtp, &rt_end),
        if !rt_rtp_share.is_empty() && pct(&rt_rtp_share, 0.5) <= Duration::from_millis(30) {
            "met"
        } else {
            "NOT met"
        }
    );
    let ms_of = |d: Duration| (d.as_secs_f64() * 10_000.0).round() / 10.0;
    println!(
        "{}",
        serde_json::json!({
            "speech_end_to_first_audio_ms": {
                "p50": ms_of(pct(&from_speech_end, 0.5)),
                "p99": ms_of(pct(&from_speech_end, 0.99)),
            },
            "commit_to_first_audio_ms": {
                "p50": ms_of(pct(&totals, 0.5)),
                "p99": ms_of(pct(&totals, 0.99)),
            },
            "providers_ms": sum.as_millis() as u64,
            "early_answers": early_answers,
            "speculative_calls_per_utterance":
                ((model_calls as f64 / utterances as f64) * 1000.0).round() / 1000.0,
            "protocol_speech_end_to_first_audio_ms": {
                "p50": ms_of(pct(&answer, 0.5)),
                "p99": ms_of(pct(&answer, 0.99)),
            },
            "realtime": {
                "speech_end_to_first_audio_ms": {
                    "p50": ms_of(pct(&rt_end, 0.5)),
                    "p99": ms_of(pct(&rt_end, 0.99)),
                },
                "bot_share_ms": {
                    "p50": ms_of(pct(&rt_bot, 0.5)),
                    "p99": ms_of(pct(&rt_bot, 0.99)),
                },
                "ratio_to_chain_p50": (ratio(&rt_end, &from_speech_end) * 1000.0).round() / 1000.0,
                "protocol": {
                    "speech_end_to_first_audio_ms": {
                        "p50": ms_of(pct(&rt_rtp, 0.5)),
                        "p99": ms_of(pct(&rt_rtp, 0.99)),
                    },
                    "provider_ms": ms_of(pct(&rt_rtp_provider, 0.5)),
                    "bot_share_ms": {
                        "p50": ms_of(pct(&rt_rtp_share, 0.5)),
                        "p99": ms_of(pct(&rt_rtp_share, 0.99)),
                    },
                    "upstream_ms": ms_of(pct(&rt_rtp_up, 0.5)),
                    "downstream_ms": ms_of(pct(&rt_rtp_down, 0.5)),
                    "share_to_provider_p50":
                        (ratio(&rt_rtp_share, &rt_rtp_provider) * 1000.0).round() / 1000.0,
                },
            },
            "streamed": {
                "providers_ms": ms_of(pct(&base_streamed, 0.5)),
                "speech_end_to_first_audio_ms": {
                    "p50": ms_of(pct(&st_speech_end, 0.5)),
                    "p99": ms_of(pct(&st_speech_end, 0.99)),
                },
                "commit_to_first_audio_ms": {
                    "p50": ms_of(pct(&st_totals, 0.5)),
                    "p99": ms_of(pct(&st_totals, 0.99)),
                },
                "protocol_speech_end_to_first_audio_ms": {
                    "p50": ms_of(pct(&st_answer, 0.5)),
                    "p99": ms_of(pct(&st_answer, 0.99)),
                },
                "early_answers": streamed.early_answers,
                "speculative_calls_per_utterance":
                    ((streamed.model_calls as f64 / (n + streamed.mid).max(1) as f64) * 1000.0)
                        .round() / 1000.0,
            },
        })
    );
    model_thread.stop();
    speech_thread.stop();
}
