//! The loopback speech server's realtime transcription: OpenAI's WebSocket at
//! `/v1/realtime?intent=transcription`, speaking its events (`session.update` →
//! `session.updated`; `input_audio_buffer.append` of base64 pcm16 at 24 kHz;
//! `input_audio_buffer.commit` → `input_audio_buffer.committed`, then a
//! `…input_audio_transcription.delta` and `…completed` with the next scripted
//! transcript, the stream delay after the segment's last speech — its last chunk with
//! sound in it, or its last chunk when none had any — and never before the commit (a
//! streaming recognizer has heard and decoded the audio as it came; the commit only
//! closes the segment); `error` events for a bad session, a commit under 100 ms, or a
//! scripted fault). Every session is recorded.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{error, lock, Api, Shared};

/// The rate the realtime API hears.
pub(super) const REALTIME_RATE: usize = 24_000;

/// What goes wrong with realtime sessions, when something should.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFault {
    /// The upgrade is refused with a 404, as by a server without the endpoint.
    Refuse,
    /// The socket closes at the first commit, unanswered.
    Drop,
    /// The first commit is answered with an `error` event.
    Error,
}

/// One realtime session as the server saw it.
#[derive(Debug, Clone, Default)]
pub struct StreamSession {
    /// The query string (`intent=transcription`).
    pub query: Option<String>,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The `session.update`'s `session`, or Null.
    pub session: Value,
    /// 24 kHz samples appended, all told.
    pub samples: usize,
    /// Commits answered, and the samples in each.
    pub commits: Vec<usize>,
}

pub(super) async fn realtime(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if *lock(&shared.stream_fault) == Some(StreamFault::Refuse) {
        return error(Api::OpenAi, 404, "Not found.");
    }
    let probe = super::SpeechRequest {
        authorization: authorization.clone(),
        ..Default::default()
    };
    if let Some(refused) = shared.refusal(Api::OpenAi, &probe) {
        return refused;
    }
    if !query
        .as_deref()
        .is_some_and(|q| q.contains("intent=transcription"))
    {
        // A speech-to-speech conversation (`?model=…`).
        return ws
            .on_upgrade(move |socket| {
                super::converse::session(shared, query, authorization, socket)
            })
            .into_response();
    }
    let at = {
        let mut sessions = lock(&shared.streams);
        sessions.push(StreamSession {
            query,
            authorization,
            ..Default::default()
        });
        sessions.len() - 1
    };
    ws.on_upgrade(move |socket| session(shared, at, socket))
        .into_response()
}

async fn session(shared: Arc<Shared>, at: usize, socket: WebSocket) {
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
    let send = |v: Value| {
        let _ = tx.send(Some(v));
    };
    send(json!({ "type": "session.created", "event_id": "event_0",
        "session": { "type": "transcription" } }));
    let mut buffer = 0usize;
    let mut last_chunk = tokio::time::Instant::now();
    // The segment's last chunk with sound in it.
    let mut last_sound: Option<tokio::time::Instant> = None;
    let mut items = 0usize;
    let mut events = 0usize;
    let mut event_id = move || {
        events += 1;
        format!("event_{events}")
    };
    while let Some(Ok(msg)) = source.next().await {
        let Message::Text(text) = msg else {
            if matches!(msg, Message::Close(_)) {
                break;
            }
            continue;
        };
        let v: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        match v["type"].as_str().unwrap_or_default() {
            "session.update" => {
                let s = &v["session"];
                let format = &s["audio"]["input"]["format"];
                let good = s["type"] == "transcription"
                    && format["type"] == "audio/pcm"
                    && format["rate"] == json!(REALTIME_RATE);
                lock(&shared.streams)[at].session = s.clone();
                if good {
                    send(
                        json!({ "type": "session.updated", "event_id": event_id(), "session": s }),
                    );
                } else {
                    send(error_event(
                        &event_id(),
                        "invalid_request_error",
                        "This session needs type 'transcription' and audio/pcm at 24000 Hz.",
                    ));
                }
            }
            "input_audio_buffer.append" => {
                let audio = v["audio"].as_str().unwrap_or_default();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(audio)
                    .unwrap_or_default();
                buffer += bytes.len() / 2;
                last_chunk = tokio::time::Instant::now();
                if has_sound(&bytes) {
                    last_sound = Some(last_chunk);
                }
                lock(&shared.streams)[at].samples += bytes.len() / 2;
            }
            "input_audio_buffer.commit" => {
                let fault = *lock(&shared.stream_fault);
                if fault == Some(StreamFault::Drop) {
                    let _ = tx.send(None);
                    break;
                }
                if fault == Some(StreamFault::Error) {
                    send(error_event(
                        &event_id(),
                        "server_error",
                        "The server had an error.",
                    ));
                    continue;
                }
                let ms = buffer * 1000 / REALTIME_RATE;
                if ms < 100 {
                    send(error_event(&event_id(), "invalid_request_error", &format!(
                        "Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has {ms}.00ms of audio."
                    )));
                    continue;
                }
                lock(&shared.streams)[at].commits.push(buffer);
                buffer = 0;
                items += 1;
                let item = format!("item_{at}_{items}");
                let previous = (items > 1).then(|| format!("item_{at}_{}", items - 1));
                send(
                    json!({ "type": "input_audio_buffer.committed", "event_id": event_id(),
                    "previous_item_id": previous, "item_id": item }),
                );
                let heard = last_sound.take().unwrap_or(last_chunk);
                let ready = (heard + *lock(&shared.stream_delay)).max(tokio::time::Instant::now());
                let text = shared.next_stream_transcript();
                let (delta, done) = (event_id(), event_id());
                let tx = tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep_until(ready).await;
                    let _ = tx.send(Some(json!({
                        "type": "conversation.item.input_audio_transcription.delta",
                        "event_id": delta, "item_id": item, "content_index": 0, "delta": text,
                    })));
                    let _ = tx.send(Some(json!({
                        "type": "conversation.item.input_audio_transcription.completed",
                        "event_id": done, "item_id": item, "content_index": 0,
                        "transcript": text,
                        "usage": { "type": "duration", "seconds": 1 },
                    })));
                });
            }
            "input_audio_buffer.clear" => {
                buffer = 0;
                send(json!({ "type": "input_audio_buffer.cleared", "event_id": event_id() }));
            }
            other => {
                let other = other.to_string();
                send(error_event(
                    &event_id(),
                    "invalid_request_error",
                    &format!("Invalid value: '{other}'."),
                ));
            }
        }
    }
    drop(tx);
    let _ = writer.await;
}

/// Whether pcm16 `bytes` hold sound, as the bot's own ear judges it
/// ([`kotoba::speech::endpoint::has_sound`]).
fn has_sound(bytes: &[u8]) -> bool {
    let pcm: Vec<i16> = bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    kotoba::speech::endpoint::has_sound(&pcm)
}

fn error_event(event_id: &str, kind: &str, message: &str) -> Value {
    json!({ "type": "error", "event_id": event_id, "error": {
        "type": kind, "code": null, "message": message, "param": null, "event_id": null,
    }})
}

impl super::SpeechServer {
    /// A realtime segment's transcript comes this long after its last speech (its
    /// last chunk with sound, else its last chunk), and not before its commit.
    pub fn set_stream_delay(&self, d: Duration) {
        *lock(&self.shared.stream_delay) = d;
    }

    /// Make realtime sessions fail this way (`None`: they work).
    pub fn set_stream_fault(&self, fault: Option<StreamFault>) {
        *lock(&self.shared.stream_fault) = fault;
    }

    /// Every realtime session, in order, as it stands now.
    pub fn stream_sessions(&self) -> Vec<StreamSession> {
        lock(&self.shared.streams).clone()
    }
}
