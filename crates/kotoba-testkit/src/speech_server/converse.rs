//! The loopback speech server's realtime speech-to-speech session: OpenAI's WebSocket at
//! `/v1/realtime?model=…`, speaking its events. `session.update` (type `realtime`,
//! `audio/pcm` at 24 kHz both ways, server voice-activity detection, the tools) →
//! `session.updated`; `input_audio_buffer.append` of base64 pcm16 is heard by a loudness
//! threshold standing in for the server's VAD: `input_audio_buffer.speech_started`,
//! then after 300 ms of quiet (a test may set another) `…speech_stopped`, `…committed`, the scripted transcript
//! (`conversation.item.input_audio_transcription.completed`) and a response. A response
//! either says a scripted line (`response.output_audio_transcript.delta` and
//! `response.output_audio.delta`, a tone as long as the words, 100 ms a chunk at twice
//! real time) or calls a function (`response.function_call_arguments.done`); a
//! `function_call_output` item and `response.create` make it say the output verbatim.
//! Speech starting over a response cancels it (`response.done`, `cancelled`), as
//! `interrupt_response` does; so does `response.cancel`. As OpenAI's does, it refuses a
//! client's `response.create` while a response is in progress (from the moment it is
//! decided until its `response.done`) with the error
//! `conversation_already_has_active_response`. With `create_response` off
//! (a partial `session.update` may turn it off and on) an utterance is only heard
//! until the client's `response.create` answers it; a `response.create` whose
//! instructions ask for words as they are says them. Every session is recorded.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;

use kotoba::speech::realtime_voice::SAY_AS_IS;

use super::{lock, tone, Shared};

/// The rate both ways.
const RATE: usize = 24_000;
/// A chunk louder than this (RMS) is speech.
const LOUD: f64 = 500.0;
/// Quiet this long ends an utterance, unless a test sets another.
const QUIET: Duration = Duration::from_millis(300);
/// One audio delta: 100 ms.
const CHUNK: usize = RATE / 10;
/// The time between deltas unless a test sets another (twice real time).
const PACE: Duration = Duration::from_millis(50);

/// What the realtime model does with the next utterance it hears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Converse {
    /// Say this.
    Say(String),
    /// Call `name` with `arguments` (JSON text); once answered, say the output.
    Call {
        /// The function's name.
        name: String,
        /// Its arguments, JSON text.
        arguments: String,
    },
}

/// One scripted exchange: what the person is heard to say, and the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Exchange {
    pub heard: String,
    pub answer: Converse,
}

/// One realtime conversation as the server saw it.
#[derive(Debug, Clone, Default)]
pub struct ConverseSession {
    /// The query string (`model=…`).
    pub query: Option<String>,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The last `session.update`'s `session`, or Null.
    pub session: Value,
    /// 24 kHz samples appended, all told.
    pub samples: usize,
    /// Utterances the VAD ended.
    pub utterances: usize,
    /// Function outputs received: (call id, output).
    pub outputs: Vec<(String, String)>,
    /// Each response's end: (status, the words it said).
    pub responses: Vec<(String, String)>,
    /// `response.cancel` events received.
    pub cancels: usize,
    /// When each utterance's speech stopped and when its first audio delta went out.
    pub first_audio: Vec<(Instant, Instant)>,
    /// Each utterance's end as the VAD saw it: when, and how many samples had come by
    /// then (the audio time of the stop).
    pub stops: Vec<(Instant, usize)>,
    /// Each `input_audio_buffer.append` as it arrived: when, and its loudness (RMS).
    pub appends: Vec<(Instant, f64)>,
    /// `session.update` events received.
    pub updates: usize,
    /// Utterances answered at the client's `response.create` (create_response off).
    pub asked: usize,
    /// Words the client asked to be said as they are (`response.create` instructions).
    pub said_as_is: Vec<String>,
    /// `response.create`s refused because a response was in progress.
    pub refused_creates: usize,
}

/// The script and what was seen.
#[derive(Default)]
pub(super) struct ConverseState {
    script: VecDeque<Exchange>,
    /// Waited between the end of speech and the first audio (the provider's own time).
    delay: Duration,
    /// The time between audio deltas, when not [`PACE`].
    pace: Option<Duration>,
    /// The quiet that ends an utterance, when not [`QUIET`].
    quiet: Option<Duration>,
    sessions: Vec<ConverseSession>,
    /// Close the socket at the next utterance, unanswered.
    drop_next: bool,
    /// Close the socket after the next answer's first audio delta.
    drop_mid: bool,
}

pub(super) async fn session(
    shared: Arc<Shared>,
    query: Option<String>,
    authorization: Option<String>,
    socket: WebSocket,
) {
    let at = {
        let mut c = lock(&shared.converse);
        c.sessions.push(ConverseSession {
            query,
            authorization,
            ..Default::default()
        });
        c.sessions.len() - 1
    };
    let (mut sink, mut source) = socket.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Option<Value>>();
    let writer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let Some(event) = event else {
                let _ = sink.close().await;
                break;
            };
            if sink
                .send(Message::Text(event.to_string().into()))
                .await
                .is_err()
            {
                break;
            }
        }
    });
    let _ = tx.send(Some(
        json!({ "type": "session.created", "event_id": "event_0",
        "session": { "type": "realtime" } }),
    ));
    let mut vad = Vad::default();
    // Responses in progress: decided and not yet done.
    let live = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // The response streaming now, cancelled by dropping its sender.
    let mut speaking: Option<Response> = None;
    // The function call waiting for its output, with its exchange.
    let mut pending_call: Option<String> = None;
    let mut responses = 0usize;
    // With create_response off: the last utterance's answer, held for response.create.
    let mut waiting: Option<(Converse, Instant)> = None;
    // A function output came and no response.create has used it yet.
    let mut output_waiting = false;
    while let Some(Ok(msg)) = source.next().await {
        let Message::Text(text) = msg else {
            if matches!(msg, Message::Close(_)) {
                break;
            }
            continue;
        };
        let v: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        let send = |v: Value| {
            let _ = tx.send(Some(v));
        };
        match v["type"].as_str().unwrap_or_default() {
            "session.update" => {
                // An update changes only the fields it names.
                let mut merged = lock(&shared.converse).sessions[at].session.clone();
                merge(&mut merged, &v["session"]);
                let s = &merged;
                let format = json!({ "type": "audio/pcm", "rate": RATE });
                let good = s["type"] == "realtime"
                    && s["audio"]["input"]["format"] == format
                    && s["audio"]["output"]["format"] == format
                    && s["audio"]["input"]["turn_detection"]["type"] == "server_vad";
                {
                    let mut c = lock(&shared.converse);
                    c.sessions[at].session = s.clone();
                    c.sessions[at].updates += 1;
                }
                if good {
                    send(json!({ "type": "session.updated", "session": s }));
                } else {
                    send(error_event("invalid_request_error",
                        "This session needs type 'realtime', audio/pcm at 24000 Hz both ways and server_vad."));
                }
            }
            "input_audio_buffer.append" => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(v["audio"].as_str().unwrap_or_default())
                    .unwrap_or_default();
                let pcm: Vec<i16> = bytes
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .collect();
                let quiet = {
                    let mut c = lock(&shared.converse);
                    c.sessions[at].samples += pcm.len();
                    c.sessions[at].appends.push((Instant::now(), rms(&pcm)));
                    c.quiet.unwrap_or(QUIET)
                };
                match vad.hear(&pcm, quiet) {
                    Some(Turn::Started) => {
                        send(json!({ "type": "input_audio_buffer.speech_started" }));
                        let interrupt = turn_detection(
                            &lock(&shared.converse).sessions[at].session,
                            "interrupt_response",
                        );
                        if interrupt {
                            if let Some(r) = speaking.take() {
                                r.cancel();
                            }
                        }
                    }
                    Some(Turn::Stopped) => {
                        let stopped = Instant::now();
                        send(json!({ "type": "input_audio_buffer.speech_stopped" }));
                        let (exchange, delay, drop_now) = {
                            let mut c = lock(&shared.converse);
                            c.sessions[at].utterances += 1;
                            let samples = c.sessions[at].samples;
                            c.sessions[at].stops.push((stopped, samples));
                            let drop_now = std::mem::take(&mut c.drop_next);
                            (c.script.pop_front(), c.delay, drop_now)
                        };
                        if drop_now {
                            let _ = tx.send(None);
                            break;
                        }
                        let item = format!("item_{at}_{}", vad.utterances);
                        send(json!({ "type": "input_audio_buffer.committed", "item_id": item }));
                        let exchange = exchange.unwrap_or(Exchange {
                            heard: String::new(),
                            answer: Converse::Say("I did not catch that.".into()),
                        });
                        send(
                            json!({ "type": "conversation.item.input_audio_transcription.completed",
                            "item_id": item, "content_index": 0, "transcript": exchange.heard }),
                        );
                        if turn_detection(
                            &lock(&shared.converse).sessions[at].session,
                            "create_response",
                        ) {
                            let answer = Answer {
                                shared: &shared,
                                at,
                                tx: &tx,
                                live: &live,
                            };
                            (speaking, pending_call) = answer.exchange(
                                &mut responses,
                                exchange.answer,
                                stopped + delay,
                                stopped,
                            );
                        } else {
                            // Listening only: the client's response.create answers it.
                            waiting = Some((exchange.answer, stopped));
                        }
                    }
                    None => {}
                }
            }
            "conversation.item.create" => {
                let item = &v["item"];
                if item["type"] == "function_call_output" {
                    let call_id = item["call_id"].as_str().unwrap_or_default().to_string();
                    let output = item["output"].as_str().unwrap_or_default().to_string();
                    if pending_call.as_deref() == Some(call_id.as_str()) {
                        pending_call = None;
                    }
                    output_waiting = true;
                    lock(&shared.converse).sessions[at]
                        .outputs
                        .push((call_id, output));
                }
            }
            "response.create" => {
                if live.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                    lock(&shared.converse).sessions[at].refused_creates += 1;
                    send(
                        json!({ "type": "error", "error": { "type": "invalid_request_error",
                        "code": "conversation_already_has_active_response",
                        "message": "Conversation already has an active response in progress. Wait until the response is finished before creating a new one." } }),
                    );
                    continue;
                }
                let instructions = v["response"]["instructions"].as_str().unwrap_or_default();
                let answer = Answer {
                    shared: &shared,
                    at,
                    tx: &tx,
                    live: &live,
                };
                let said = lock(&shared.converse).sessions[at]
                    .outputs
                    .last()
                    .map(|(_, o)| o.clone())
                    .unwrap_or_default();
                if let Some(words) = instructions.split_once(SAY_AS_IS).map(|(_, w)| w) {
                    lock(&shared.converse).sessions[at]
                        .said_as_is
                        .push(words.to_string());
                    (speaking, _) = answer.exchange(
                        &mut responses,
                        Converse::Say(words.into()),
                        Instant::now(),
                        Instant::now(),
                    );
                } else if std::mem::take(&mut output_waiting) {
                    speaking = Some(answer.say(&mut responses, said, Instant::now(), None));
                } else if let Some((reply, stopped)) = waiting.take() {
                    lock(&shared.converse).sessions[at].asked += 1;
                    (speaking, pending_call) = answer.exchange(
                        &mut responses,
                        reply,
                        Instant::now().max(stopped + delay_of(&shared)),
                        stopped,
                    );
                } else {
                    speaking = Some(answer.say(&mut responses, said, Instant::now(), None));
                }
            }
            "response.cancel" => {
                lock(&shared.converse).sessions[at].cancels += 1;
                match speaking.take() {
                    Some(r) => r.cancel(),
                    None => send(
                        json!({ "type": "error", "error": { "type": "invalid_request_error",
                        "code": "response_cancel_not_active",
                        "message": "Cancellation failed: no active response found." } }),
                    ),
                }
            }
            other => {
                send(error_event(
                    "invalid_request_error",
                    &format!("Invalid value: '{other}'."),
                ));
            }
        }
    }
    drop(tx);
    let _ = writer.await;
}

/// Where a session's responses go.
struct Answer<'a> {
    shared: &'a Arc<Shared>,
    at: usize,
    tx: &'a mpsc::UnboundedSender<Option<Value>>,
    /// Responses in progress, counted from the moment one is decided until it is done.
    live: &'a Arc<std::sync::atomic::AtomicUsize>,
}

impl Answer<'_> {
    /// Answer an utterance whose speech stopped at `stopped`, from `start`: say the
    /// words, or call the function (its call id, waiting for the output).
    fn exchange(
        &self,
        responses: &mut usize,
        answer: Converse,
        start: Instant,
        stopped: Instant,
    ) -> (Option<Response>, Option<String>) {
        match answer {
            Converse::Say(words) => (Some(self.say(responses, words, start, Some(stopped))), None),
            Converse::Call { name, arguments } => {
                *responses += 1;
                let n = *responses;
                let call_id = format!("call_{}_{n}", self.at);
                let tx = self.tx.clone();
                let id = call_id.clone();
                let live = self.live.clone();
                live.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    tokio::time::sleep_until(start).await;
                    let _ = tx.send(Some(json!({ "type": "response.created", "response": { "id": format!("resp_{n}") } })));
                    let _ = tx.send(Some(
                        json!({ "type": "response.function_call_arguments.done",
                        "call_id": id, "name": name, "arguments": arguments }),
                    ));
                    live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    let _ = tx.send(Some(json!({ "type": "response.done",
                        "response": { "id": format!("resp_{n}"), "status": "completed" } })));
                });
                (None, Some(call_id))
            }
        }
    }

    /// Say `words` from `start`.
    fn say(
        &self,
        responses: &mut usize,
        words: String,
        start: Instant,
        stopped: Option<Instant>,
    ) -> Response {
        *responses += 1;
        Response::say(
            self.shared,
            self.at,
            self.tx,
            self.live,
            *responses,
            words,
            start,
            stopped,
        )
    }
}

/// Whether the session's turn detection has `key` on (the API's default is on).
fn turn_detection(session: &Value, key: &str) -> bool {
    session["audio"]["input"]["turn_detection"][key]
        .as_bool()
        .unwrap_or(true)
}

/// Merge `update` into `into`, object by object.
fn merge(into: &mut Value, update: &Value) {
    match (into.as_object_mut(), update.as_object()) {
        (Some(a), Some(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        _ => *into = update.clone(),
    }
}

fn delay_of(shared: &Arc<Shared>) -> Duration {
    lock(&shared.converse).delay
}

/// A response being said; dropping or cancelling it stops its deltas.
struct Response {
    stop: tokio::sync::watch::Sender<bool>,
}

impl Response {
    /// Say `words` from `start`: the transcript, then the tone in 100 ms deltas.
    #[allow(clippy::too_many_arguments)]
    fn say(
        shared: &Arc<Shared>,
        at: usize,
        tx: &mpsc::UnboundedSender<Option<Value>>,
        live: &Arc<std::sync::atomic::AtomicUsize>,
        n: usize,
        words: String,
        start: Instant,
        stopped: Option<Instant>,
    ) -> Response {
        let (stop, mut stopped_rx) = tokio::sync::watch::channel(false);
        let (shared, tx, live) = (shared.clone(), tx.clone(), live.clone());
        live.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        tokio::spawn(async move {
            let id = format!("resp_{n}");
            let send = |v: Value| {
                let _ = tx.send(Some(v));
            };
            tokio::time::sleep_until(start).await;
            send(json!({ "type": "response.created", "response": { "id": id } }));
            send(
                json!({ "type": "response.output_audio_transcript.delta", "response_id": id, "delta": words }),
            );
            let audio = tone(&words, RATE as u32);
            let mut status = "completed";
            for (i, chunk) in audio.chunks(CHUNK).enumerate() {
                if *stopped_rx.borrow() {
                    status = "cancelled";
                    break;
                }
                if i == 0 {
                    if let Some(s) = stopped {
                        lock(&shared.converse).sessions[at]
                            .first_audio
                            .push((s, Instant::now()));
                    }
                }
                let bytes: Vec<u8> = chunk.iter().flat_map(|s| s.to_le_bytes()).collect();
                send(
                    json!({ "type": "response.output_audio.delta", "response_id": id,
                    "delta": base64::engine::general_purpose::STANDARD.encode(bytes) }),
                );
                if std::mem::take(&mut lock(&shared.converse).drop_mid) {
                    live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    let _ = tx.send(None);
                    return;
                }
                let pace = lock(&shared.converse).pace.unwrap_or(PACE);
                tokio::select! {
                    _ = tokio::time::sleep(pace) => {}
                    _ = stopped_rx.changed() => {}
                }
            }
            if *stopped_rx.borrow() {
                status = "cancelled";
            }
            live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            send(json!({ "type": "response.done", "response": { "id": id, "status": status } }));
            lock(&shared.converse).sessions[at]
                .responses
                .push((status.to_string(), words));
        });
        Response { stop }
    }

    fn cancel(self) {
        let _ = self.stop.send(true);
    }
}

enum Turn {
    Started,
    Stopped,
}

/// Loudness standing in for the server's voice-activity detection.
#[derive(Default)]
struct Vad {
    /// In an utterance: the quiet samples since its last loud chunk.
    quiet: Option<usize>,
    utterances: usize,
}

impl Vad {
    fn hear(&mut self, pcm: &[i16], quiet: Duration) -> Option<Turn> {
        if pcm.is_empty() {
            return None;
        }
        let loud = rms(pcm) > LOUD;
        match (self.quiet, loud) {
            (None, true) => {
                self.quiet = Some(0);
                Some(Turn::Started)
            }
            (None, false) => None,
            (Some(_), true) => {
                self.quiet = Some(0);
                None
            }
            (Some(q), false) => {
                let q = q + pcm.len();
                if q * 1000 / RATE >= quiet.as_millis() as usize {
                    self.quiet = None;
                    self.utterances += 1;
                    Some(Turn::Stopped)
                } else {
                    self.quiet = Some(q);
                    None
                }
            }
        }
    }
}

/// The loudness of `pcm` (RMS; 0 for nothing).
fn rms(pcm: &[i16]) -> f64 {
    if pcm.is_empty() {
        return 0.0;
    }
    (pcm.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>() / pcm.len() as f64).sqrt()
}

fn error_event(kind: &str, message: &str) -> Value {
    json!({ "type": "error", "error": {
        "type": kind, "code": null, "message": message, "param": null, "event_id": null,
    }})
}

impl super::SpeechServer {
    /// Queue an exchange; realtime utterances take them in order.
    pub fn push_exchange(&self, heard: &str, answer: Converse) {
        lock(&self.shared.converse).script.push_back(Exchange {
            heard: heard.to_string(),
            answer,
        });
    }

    /// Wait this long between the end of speech and the first audio of the answer.
    pub fn set_converse_delay(&self, d: Duration) {
        lock(&self.shared.converse).delay = d;
    }

    /// End an utterance after `quiet` of quiet, in audio time (300 ms unless set): the
    /// server's turn detection (`silence_duration_ms`).
    pub fn set_converse_quiet(&self, quiet: Duration) {
        lock(&self.shared.converse).quiet = Some(quiet);
    }

    /// Send each 100 ms audio delta `pace` after the last (50 ms unless set).
    pub fn set_converse_pace(&self, pace: Duration) {
        lock(&self.shared.converse).pace = Some(pace);
    }

    /// Close the realtime socket at the next utterance's end, unanswered.
    pub fn drop_next_utterance(&self) {
        lock(&self.shared.converse).drop_next = true;
    }

    /// Close the realtime socket after the next answer's first audio delta.
    pub fn drop_mid_answer(&self) {
        lock(&self.shared.converse).drop_mid = true;
    }

    /// Every realtime conversation, in order, as it stands now.
    pub fn converse_sessions(&self) -> Vec<ConverseSession> {
        lock(&self.shared.converse).sessions.clone()
    }
}
