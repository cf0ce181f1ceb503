//! The page's voice socket (`GET /api/voice`) over a real WebSocket: the page's
//! adapter drives the same voice room as a Discord call. What the page hears (espeak-ng
//! speech as 16 kHz PCM) is recognised by the loopback OpenAI-compatible speech server
//! and becomes a voice turn; her answer comes back as 24 kHz PCM frames; talking over
//! her stops her audio and cuts the turn; a typed message with the socket open is said
//! aloud, and muted it is written; the socket needs the page's login.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_websockets::{ClientBuilder, Message};

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::speech_server::{espeak_16k, SpeechServer};
use kotoba_testkit::web::{options, start_with, FakeShell, WebRig};

type Sink = futures::stream::SplitSink<
    tokio_websockets::WebSocketStream<tokio_websockets::MaybeTlsStream<tokio::net::TcpStream>>,
    Message,
>;

/// What the page received on its socket.
#[derive(Default)]
pub(super) struct Heard {
    pub(super) texts: Vec<Value>,
    pub(super) samples: usize,
    peak: i32,
}

pub(super) struct PageVoice {
    sink: Sink,
    heard: Arc<Mutex<Heard>>,
}

impl PageVoice {
    pub(super) fn texts(&self) -> Vec<Value> {
        self.heard.lock().unwrap().texts.clone()
    }

    pub(super) fn samples(&self) -> usize {
        self.heard.lock().unwrap().samples
    }

    fn peak(&self) -> i32 {
        self.heard.lock().unwrap().peak
    }

    /// `pcm` then `silence` seconds of silence, as little-endian bytes in chunks that
    /// do not line up with 20 ms frames, as fast as the socket takes them.
    pub(super) async fn speak(&mut self, pcm: &[i16], silence: f64) {
        let mut all = pcm.to_vec();
        all.extend(std::iter::repeat_n(0i16, (silence * 16_000.0) as usize));
        let bytes: Vec<u8> = all.iter().flat_map(|s| s.to_le_bytes()).collect();
        for chunk in bytes.chunks(3001) {
            self.sink
                .send(Message::binary(chunk.to_vec()))
                .await
                .unwrap();
        }
    }

    async fn send_json(&mut self, v: Value) {
        self.sink.send(Message::text(v.to_string())).await.unwrap();
    }

    /// Wait (at most `secs`) until `done` holds of what the page received.
    pub(super) async fn wait(&self, secs: u64, what: &str, done: impl Fn(&Heard) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            if done(&self.heard.lock().unwrap()) {
                return;
            }
            if tokio::time::Instant::now() > deadline {
                let h = self.heard.lock().unwrap();
                panic!(
                    "waited {secs} s for {what}; texts {:?}, {} samples",
                    h.texts, h.samples
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub(super) fn has_text(h: &Heard, kind: &str, field: &str, needle: &str) -> bool {
    h.texts.iter().any(|t| {
        (t["type"] == kind || t["kind"] == kind)
            && t[field].as_str().is_some_and(|s| s.contains(needle))
    })
}

/// A page server whose speech providers are the loopback OpenAI-compatible ones.
pub(super) async fn rig(extra: Vec<Arc<dyn kotoba::tools::Tool>>) -> (WebRig, SpeechServer) {
    rig_speaking(extra, "openai").await
}

/// The same, speaking with `tts` (`openai` on the loopback, or `espeak`).
async fn rig_speaking(
    extra: Vec<Arc<dyn kotoba::tools::Tool>>,
    tts: &str,
) -> (WebRig, SpeechServer) {
    let speech = SpeechServer::start().await;
    let r = start_with(options(), extra).await;
    r.speak_with(&speech.openai_base(), tts);
    (r, speech)
}

/// Open the page's voice socket on `session` and wait for its `ready`.
pub(super) async fn open(r: &WebRig, session: &str) -> PageVoice {
    let uri = format!(
        "{}/api/voice?session={session}",
        r.base.replace("http://", "ws://")
    );
    let (ws, _) = ClientBuilder::new()
        .uri(&uri)
        .unwrap()
        .add_header(axum::http::header::AUTHORIZATION, token_header())
        .unwrap()
        .connect()
        .await
        .expect("the voice socket opens");
    let (sink, mut stream) = ws.split();
    let heard = Arc::new(Mutex::new(Heard::default()));
    let h = heard.clone();
    tokio::spawn(async move {
        while let Some(Ok(m)) = stream.next().await {
            let mut h = h.lock().unwrap();
            if let Some(t) = m.as_text() {
                h.texts.push(serde_json::from_str(t).unwrap_or(Value::Null));
            } else if m.is_binary() {
                let bytes: &[u8] = m.as_payload();
                for p in bytes.chunks_exact(2) {
                    let s = i16::from_le_bytes([p[0], p[1]]) as i32;
                    h.peak = h.peak.max(s.abs());
                }
                h.samples += bytes.len() / 2;
            }
        }
    });
    let page = PageVoice { sink, heard };
    page.wait(10, "ready", |h| {
        h.texts.iter().any(|t| t["type"] == "ready")
    })
    .await;
    page
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_page_a_spoken_question_is_a_voice_turn_and_her_answer_comes_back_as_audio() {
    let (r, speech) = rig(Vec::new()).await;
    speech.set_default_transcript("what time is it");
    r.model.push(Reply::text("It is noon. Anything else?"));
    let mut page = open(&r, "talk").await;
    let phrase = espeak_16k("what time is it").await;
    page.speak(&phrase, 2.2).await;
    page.wait(20, "the caption of what she heard", |h| {
        has_text(h, "heard", "text", "what time is it")
    })
    .await;
    // Her answer comes back as 24 kHz audio, and it is not silence.
    page.wait(20, "half a second of her voice", |h| h.samples >= 12_000)
        .await;
    assert!(
        page.peak() > 1000,
        "her voice is audible: peak {}",
        page.peak()
    );
    let said = r.model.requests();
    assert_eq!(said.len(), 1, "one turn");
    let body = said[0].to_string();
    assert!(body.contains("what time is it"), "{body}");
    assert!(
        body.contains("heard, not read"),
        "a spoken page turn is the spoken register: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spoken_page_turns_card_has_60_seconds_and_talking_over_her_stops_her_audio_and_cuts_the_turn(
) {
    let shell = Arc::new(FakeShell::new("cleaned"));
    let runs = shell.runs.clone();
    let (r, speech) = rig(vec![shell]).await;
    let words = "Sure, I will clean out the build folder for you now; it takes one \
                 command and only a moment, so please bear with me while I ask you \
                 whether that is really all right with you first.";
    r.model.push(Reply::text_then_call(
        words,
        "shell",
        json!({"command": "rm -rf build"}),
    ));
    r.model.set_fallback(Reply::text("Okay, I left it alone."));
    speech.push_transcript("Clean the build folder.");
    speech.set_default_transcript("No, wait.");
    let mut events = r.events("talk").await;
    let mut page = open(&r, "talk").await;
    page.speak(&espeak_16k("Clean the build folder.").await, 1.5)
        .await;
    // A spoken turn on the page is channel voice: its card has the 60 s window.
    let frames = events.until(|f| f["type"] == "card").await;
    let card = frames.last().unwrap();
    assert_eq!(card["window_secs"], 60, "{card}");
    page.wait(20, "her voice while the card waits", |h| {
        h.samples >= 24_000
    })
    .await;
    let before = page.samples();

    page.speak(&espeak_16k("No, wait.").await, 2.0).await;
    page.wait(10, "a stop", |h| {
        h.texts.iter().any(|t| t["type"] == "stop")
    })
    .await;
    let frames = events
        .until(|f| f["type"] == "step" && f["outcome"] == "interrupted")
        .await;
    assert!(
        frames
            .iter()
            .any(|f| f["type"] == "card_settled"
                && f["settlement"].to_string().contains("dismissed")),
        "the card went away: {frames:?}"
    );
    assert_eq!(FakeShell::run_count(&runs), 0, "nothing ran");
    assert!(before > 0);
    // What they said over her is the next turn, heard as theirs.
    page.wait(20, "the next turn's caption", |h| {
        has_text(h, "heard", "text", "No, wait.")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_message_with_the_pages_voice_open_is_said_aloud_and_muted_it_is_written() {
    let (r, _speech) = rig(Vec::new()).await;
    r.model.push(Reply::text("Hello! Nice to hear from you."));
    r.model.push(Reply::text("Here it is, in writing."));
    let mut events = r.events("typed").await;
    let mut page = open(&r, "typed").await;
    let resp = r
        .post(
            "/api/message",
            json!({"session": "typed", "text": "hi there"}),
        )
        .await;
    assert_eq!(resp.status(), 202);
    page.wait(20, "her typed answer said aloud", |h| h.samples >= 12_000)
        .await;
    let frames = events.until(|f| f["type"] == "turn_done").await;
    let started = frames
        .iter()
        .find(|f| f["type"] == "turn_started")
        .expect("the turn started")["turn_id"]
        .clone();
    assert!(
        page.texts()
            .iter()
            .any(|t| t["type"] == "speaking" && t["turn_id"] == started),
        "the page is told which turn she says aloud: {:?}",
        page.texts()
    );

    page.send_json(json!({"type": "mute", "muted": true})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = page.samples();
    let resp = r
        .post(
            "/api/message",
            json!({"session": "typed", "text": "write it down", "text_only": true}),
        )
        .await;
    assert_eq!(resp.status(), 202);
    events.until(|f| f["type"] == "turn_done").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(page.samples(), before, "muted, nothing is played");
    let speaking = page
        .texts()
        .iter()
        .filter(|t| t["type"] == "speaking")
        .count();
    assert_eq!(speaking, 1, "the written turn is not said aloud here");
    let said = r.model.requests();
    assert_eq!(said.len(), 2);
    assert!(
        said[0].to_string().contains("heard, not read"),
        "{}",
        said[0]
    );
    assert!(
        said[1].to_string().contains("read as text in a chat"),
        "muted, the typed turn is the written register: {}",
        said[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_voice_socket_needs_the_pages_login_and_a_plain_request_is_told_why() {
    let opts = kotoba::surfaces::web::WebOptions {
        password: Some("pw".into()),
        ..options()
    };
    let r = start_with(opts, Vec::new()).await;
    let uri = format!("{}/api/voice?session=x", r.base.replace("http://", "ws://"));
    let refused = ClientBuilder::new().uri(&uri).unwrap().connect().await;
    assert!(refused.is_err(), "no login, no socket");
    let plain = r
        .http
        .get(r.url("/api/voice?session=x"))
        .bearer_auth("pw")
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 400);
    let body: Value = plain.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("WebSocket"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_recognizer_is_one_sentence_on_the_page_and_typing_still_works() {
    let (r, speech) = rig(Vec::new()).await;
    speech.fail(500, "the ears are out");
    r.model.push(Reply::text("Still here, in writing."));
    let mut events = r.events("deaf").await;
    let mut page = open(&r, "deaf").await;
    let phrase = espeak_16k("can you hear me").await;
    page.speak(&phrase, 2.2).await;
    page.speak(&phrase, 2.2).await;
    page.wait(20, "the notice", |h| {
        has_text(h, "notice", "text", "can't hear anyone")
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let notices = page
        .texts()
        .into_iter()
        .filter(|t| t["kind"] == "notice")
        .count();
    assert_eq!(notices, 1, "said once: {:?}", page.texts());
    assert!(r.model.requests().is_empty(), "nothing reached her");
    let resp = r
        .post(
            "/api/message",
            json!({"session": "deaf", "text": "typing then", "text_only": true}),
        )
        .await;
    assert_eq!(resp.status(), 202);
    let frames = events.until(|f| f["type"] == "turn_done").await;
    assert_eq!(frames.last().unwrap()["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_page_of_the_same_session_takes_her_voice_and_the_first_is_told() {
    let (r, _speech) = rig(Vec::new()).await;
    r.model.push(Reply::text("Hello from the newer page."));
    let first = open(&r, "twice").await;
    let second = open(&r, "twice").await;
    first
        .wait(10, "the first page told", |h| {
            h.texts.iter().any(|t| t["type"] == "replaced")
        })
        .await;
    // A typed message is said aloud on the page that has her voice now.
    let resp = r
        .post("/api/message", json!({"session": "twice", "text": "hi"}))
        .await;
    assert_eq!(resp.status(), 202);
    second
        .wait(20, "her voice on the newer page", |h| h.samples >= 12_000)
        .await;
    assert_eq!(first.samples(), 0, "the older page hears nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_page_the_owners_spoken_yes_answers_her_card_once() {
    let shell = Arc::new(FakeShell::new("cleaned"));
    let runs = shell.runs.clone();
    let (r, speech) = rig(vec![shell]).await;
    r.model.push(Reply::text_then_call(
        "Okay.",
        "shell",
        json!({"command": "rm -rf build"}),
    ));
    r.model.set_fallback(Reply::text("Done."));
    speech.push_transcript("Clean the build folder.");
    speech.set_default_transcript("Yes.");
    let mut events = r.events("yes").await;
    let mut page = open(&r, "yes").await;
    page.speak(&espeak_16k("Clean the build folder.").await, 1.5)
        .await;
    events.until(|f| f["type"] == "card").await;
    // Let her finish saying "Okay." so the yes is an answer, not talking over her.
    let mut last = usize::MAX;
    while page.samples() != last {
        last = page.samples();
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    page.speak(&espeak_16k("yes, go ahead").await, 1.5).await;
    let frames = events.until(|f| f["type"] == "card_settled").await;
    let settled = frames.last().unwrap().to_string();
    assert!(settled.contains("approve"), "{settled}");
    assert!(settled.contains("the voice call"), "said where: {settled}");
    events
        .until(|f| f["type"] == "step" && f["outcome"] == "ok")
        .await;
    assert_eq!(FakeShell::run_count(&runs), 1, "it ran once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_stop_silences_her_voice_at_once_even_after_her_words_were_written() {
    let (r, _speech) = rig(Vec::new()).await;
    r.model.push(Reply::text(
        &"This is a long answer that she will be reading out for quite a while. ".repeat(4),
    ));
    let mut events = r.events("hush").await;
    let page = open(&r, "hush").await;
    let resp = r
        .post(
            "/api/message",
            json!({"session": "hush", "text": "talk a lot"}),
        )
        .await;
    assert_eq!(resp.status(), 202);
    // The turn is done in writing while she is still reading it out.
    events.until(|f| f["type"] == "turn_done").await;
    page.wait(20, "her voice", |h| h.samples >= 12_000).await;
    let resp = r.post("/api/stop", json!({"session": "hush"})).await;
    assert_eq!(resp.status(), 200);
    page.wait(5, "a stop", |h| h.texts.iter().any(|t| t["type"] == "stop"))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = page.samples();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(page.samples(), after, "nothing plays on after the stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_espeak_ng_the_page_hears_her_answer_in_an_offline_voice() {
    let (r, speech) = rig_speaking(Vec::new(), "espeak").await;
    speech.set_default_transcript("what time is it");
    r.model.push(Reply::text("It is noon."));
    let mut page = open(&r, "offline").await;
    assert!(
        page.texts()
            .iter()
            .any(|t| t["type"] == "ready" && t["tts"] == "espeak"),
        "{:?}",
        page.texts()
    );
    page.speak(&espeak_16k("what time is it").await, 2.2).await;
    page.wait(30, "her espeak-ng voice", |h| h.samples >= 12_000)
        .await;
    assert!(page.peak() > 1000, "audible: peak {}", page.peak());
    let synth = speech
        .requests()
        .into_iter()
        .filter(|q| q.path.contains("audio/speech"))
        .count();
    assert_eq!(synth, 0, "nothing was asked of a speech service");
}

/// The page's token as an `Authorization` header, as a script opening the socket sends it.
pub(super) fn token_header() -> axum::http::HeaderValue {
    axum::http::HeaderValue::from_str(&format!("Bearer {}", kotoba_testkit::web::WEB_TOKEN))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_sites_page_or_another_port_cannot_open_her_voice_socket() {
    // Any site the owner visits, or any other server on this host (another port), could
    // open ws://127.0.0.1 from their browser, which sends the cookie along: the Origin
    // gives it away.
    let (r, _speech) = rig(Vec::new()).await;
    let uri = format!("{}/api/voice?session=x", r.base.replace("http://", "ws://"));
    let port: u16 = r.base.rsplit(':').next().unwrap().parse().unwrap();
    let other_port = format!(
        "http://127.0.0.1:{}",
        if port == 21300 { 21301 } else { 21300 }
    );
    let with_origin = |origin: String| {
        let uri = uri.clone();
        async move {
            ClientBuilder::new()
                .uri(&uri)
                .unwrap()
                .add_header(axum::http::header::AUTHORIZATION, token_header())
                .unwrap()
                .add_header(
                    axum::http::header::ORIGIN,
                    axum::http::HeaderValue::from_str(&origin).unwrap(),
                )
                .unwrap()
                .connect()
                .await
                .is_ok()
        }
    };
    for origin in [
        "http://evil.example".to_string(),
        other_port,
        r.base.replace("http://", "https://"),
    ] {
        assert!(!with_origin(origin.clone()).await, "refused: {origin}");
    }
    assert!(
        with_origin(r.base.clone()).await,
        "the page's own origin opens it"
    );
    let no_token = ClientBuilder::new().uri(&uri).unwrap().connect().await;
    assert!(no_token.is_err(), "no token, no socket");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn muted_she_writes_even_what_is_said_to_her_and_nothing_is_synthesised() {
    let (r, speech) = rig(Vec::new()).await;
    speech.set_default_transcript("what time is it");
    r.model.push(Reply::text("It is noon, written down."));
    let mut events = r.events("quiet").await;
    let mut page = open(&r, "quiet").await;
    page.send_json(json!({"type": "mute", "muted": true})).await;
    page.speak(&espeak_16k("what time is it").await, 2.2).await;
    events.until(|f| f["type"] == "turn_done").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let said = r.model.requests();
    assert_eq!(said.len(), 1);
    assert!(
        said[0].to_string().contains("read as text in a chat"),
        "muted, a spoken turn is the written register: {}",
        said[0]
    );
    let synth = speech
        .requests()
        .into_iter()
        .filter(|q| q.path.contains("audio/speech"))
        .count();
    assert_eq!(synth, 0, "nothing was synthesised");
    assert_eq!(page.samples(), 0);
}
