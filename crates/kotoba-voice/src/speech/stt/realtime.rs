//! OpenAI's realtime transcription over a WebSocket (`{base}/realtime?intent=transcription`,
//! `stt.streaming`): one session per utterance. The audio goes up as it is heard
//! (`input_audio_buffer.append`, base64 pcm16 at 24 kHz); with turn detection off, the
//! client commits (`input_audio_buffer.commit`) at a pause and at the end, and each
//! committed segment comes back as `conversation.item.input_audio_transcription.completed`.
//! The words so far are the segments' transcripts joined, so at the commit only the
//! audio after the last pause is still to be recognised — and nothing when that audio
//! has no sound (the quiet after the pause is not committed: it holds no words).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_websockets::{MaybeTlsStream, Message, WebSocketStream};

use super::stream::{refuse, Command, Commands, RecognitionStream};
use super::{failed, Task};
use crate::speech::audio::{f32_to_i16, i16_to_f32, Resampler};
use crate::speech::endpoint::has_sound;
use crate::speech::SpeechError;
use kotoba_core::config::Secret;

/// The rate the realtime API hears (`audio/pcm`).
pub const REALTIME_RATE: u32 = 24_000;
/// The shortest segment the API commits (100 ms at 24 kHz); shorter ones are padded
/// with silence.
const MIN_COMMIT: usize = REALTIME_RATE as usize / 10;
/// Audio this long without more closes the resampler's tail (sent at once, so the
/// server has the whole segment before the commit asks for it).
const TAIL_AFTER: Duration = Duration::from_millis(60);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an answer may take once asked; then the stream has failed (and the
/// caller falls back to the batch upload).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// After a failed session, utterances are uploaded this long before streaming is
/// tried again (a server without the endpoint costs one failure a minute, not one
/// per utterance).
pub const REST_AFTER_FAILURE: Duration = Duration::from_secs(60);

const NAME: &str = "openai";

pub(crate) type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// Where and how to open realtime transcription sessions.
#[derive(Debug, Clone)]
pub(crate) struct Realtime {
    url: String,
    model: String,
    language: String,
    key: Option<Secret>,
    /// After a session failed: no new sessions (the upload only) until then.
    resting: Arc<Mutex<Option<Instant>>>,
}

impl Realtime {
    /// Sessions at `base` (`http(s)://…/v1`, as for the batch endpoint); `None` when the
    /// base is not http or https.
    pub(crate) fn new(
        base: &str,
        model: &str,
        language: &str,
        key: Option<Secret>,
    ) -> Option<Realtime> {
        let base = base.trim().trim_end_matches('/');
        let rest = base
            .strip_prefix("https://")
            .map(|r| format!("wss://{r}"))
            .or_else(|| base.strip_prefix("http://").map(|r| format!("ws://{r}")))?;
        Some(Realtime {
            url: format!("{rest}/realtime?intent=transcription"),
            model: model.to_string(),
            language: language.to_string(),
            key,
            resting: Arc::new(Mutex::new(None)),
        })
    }

    /// The session's WebSocket address.
    #[cfg(test)]
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Open a session for one utterance (connecting happens in its task, while the
    /// first audio queues).
    /// `None` while resting after a failure ([`REST_AFTER_FAILURE`]).
    pub(crate) fn open(&self) -> Option<RecognitionStream> {
        let resting = self.resting.lock().ok().and_then(|r| *r);
        if resting.is_some_and(|until| Instant::now() < until) {
            return None;
        }
        let this = self.clone();
        Some(RecognitionStream::spawn(NAME, move |commands| {
            this.run(commands)
        }))
    }

    async fn run(self, mut commands: Commands) {
        let mut s = Segments::new();
        if let Err(e) = self.session(&mut commands, &mut s).await {
            if let Ok(mut r) = self.resting.lock() {
                *r = Some(Instant::now() + REST_AFTER_FAILURE);
            }
            for w in s.waiting.drain(..) {
                let _ = w.reply.send(Err(e.clone()));
            }
            refuse(commands, e).await;
        }
    }

    fn fail(&self, reason: &str) -> SpeechError {
        failed(Task::Recognition, NAME, reason, self.key.as_ref())
    }

    async fn connect(&self) -> Result<Socket, SpeechError> {
        open_socket(&self.url, self.key.as_ref())
            .await
            .map_err(|why| self.fail(&why.to_string()))
    }

    /// The `session.update` that makes this a manual-commit transcription session.
    fn session_update(&self) -> Value {
        let mut transcription = json!({ "model": self.model });
        if !self.language.is_empty() {
            transcription["language"] = json!(self.language);
        }
        json!({
            "type": "session.update",
            "session": {
                "type": "transcription",
                "audio": { "input": {
                    "format": { "type": "audio/pcm", "rate": REALTIME_RATE },
                    "transcription": transcription,
                    "turn_detection": null,
                }},
            },
        })
    }

    async fn session(&self, commands: &mut Commands, s: &mut Segments) -> Result<(), SpeechError> {
        let mut ws = self.connect().await?;
        let mut open = true;
        // When the resampler's tail is due, while audio waits in it.
        let mut tail_at: Option<Instant> = None;
        self.send(&mut ws, &self.session_update()).await?;
        loop {
            let deadline = s.deadline();
            tokio::select! {
                _ = sleep_until(tail_at) => {
                    tail_at = None;
                    if let Some(msg) = s.append(&[], true) {
                        self.send(&mut ws, &msg).await?;
                    }
                }
                c = commands.recv(), if open => match c {
                    // Dropped: done, once the finish asked just before is answered.
                    None if s.waiting.is_empty() => {
                        let _ = ws.close().await;
                        return Ok(());
                    }
                    None => open = false,
                    Some(Command::Audio(pcm)) => {
                        tail_at = Some(Instant::now() + TAIL_AFTER);
                        if let Some(msg) = s.append(&pcm, false) {
                            self.send(&mut ws, &msg).await?;
                        }
                    }
                    Some(Command::Words(reply)) => {
                        self.commit(&mut ws, s).await?;
                        s.waiting.push(Waiter { reply, finish: false, by: Instant::now() + REPLY_TIMEOUT });
                    }
                    Some(Command::Finish(reply)) => {
                        self.commit(&mut ws, s).await?;
                        s.waiting.push(Waiter { reply, finish: true, by: Instant::now() + REPLY_TIMEOUT });
                    }
                },
                m = ws.next() => match m {
                    None => return Err(self.fail("the connection closed")),
                    Some(Err(e)) => return Err(self.fail(&format!("the connection broke off ({e})"))),
                    Some(Ok(msg)) => {
                        if msg.is_close() {
                            let reason = msg.as_close().map(|(_, r)| r.to_string()).unwrap_or_default();
                            return Err(self.fail(&format!("the server closed the connection {reason}")));
                        }
                        if let Some(text) = msg.as_text() {
                            s.on_event(text).map_err(|e| self.fail(&e.to_string()))?;
                        }
                    }
                },
                _ = sleep_until(deadline) => {
                    return Err(self.fail(&format!("no transcript within {} s", REPLY_TIMEOUT.as_secs())));
                }
            }
            if s.answer() {
                let _ = ws.close().await;
                return Ok(());
            }
        }
    }

    async fn send(&self, ws: &mut Socket, event: &Value) -> Result<(), SpeechError> {
        ws.send(Message::text(event.to_string()))
            .await
            .map_err(|e| self.fail(&format!("the connection broke off ({e})")))
    }

    /// Commit what was appended since the last commit, if anything, with the
    /// resampler's tail (the segment ends in the pause's silence).
    async fn commit(&self, ws: &mut Socket, s: &mut Segments) -> Result<(), SpeechError> {
        if let Some(msg) = s.append(&[], true) {
            self.send(ws, &msg).await?;
        }
        if s.uncommitted == 0 || !s.sound {
            // Nothing, or only quiet, since the last commit: no words to wait for (the
            // quiet stays in the server's buffer, ahead of any next segment).
            return Ok(());
        }
        if s.uncommitted < MIN_COMMIT {
            let pad = vec![0i16; MIN_COMMIT - s.uncommitted];
            self.send(ws, &append_event(&pad)).await?;
        }
        self.send(ws, &json!({ "type": "input_audio_buffer.commit" }))
            .await?;
        s.uncommitted = 0;
        s.sound = false;
        s.committed += 1;
        Ok(())
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why a realtime socket did not open, in words (the caller names the provider and
/// hides the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SocketError {
    /// The address is not a WebSocket address.
    #[error("{url} is not a valid address ({error})")]
    BadAddress {
        /// The address.
        url: String,
        /// What the parser said.
        error: String,
    },
    /// The key holds characters a header cannot carry.
    #[error("the key is not valid in a header")]
    BadKey,
    /// The key's header could not be added (what the client said).
    #[error("{0}")]
    Header(String),
    /// The connection or the WebSocket handshake failed.
    #[error("could not connect to {url} ({error})")]
    Connect {
        /// The address.
        url: String,
        /// What went wrong.
        error: String,
    },
    /// Nothing answered within the connect timeout.
    #[error("no answer from {url} within {secs} s")]
    NoAnswer {
        /// The address.
        url: String,
        /// The timeout, in seconds.
        secs: u64,
    },
}

/// The server reported a failure on the stream: its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the stream reported: {0}")]
struct Reported(String);

/// Open a realtime WebSocket at `url` with `key` as a bearer token, within
/// [`CONNECT_TIMEOUT`].
pub(crate) async fn open_socket(url: &str, key: Option<&Secret>) -> Result<Socket, SocketError> {
    let mut builder = tokio_websockets::ClientBuilder::new()
        .uri(url)
        .map_err(|e| SocketError::BadAddress {
            url: url.to_string(),
            error: e.to_string(),
        })?;
    if let Some(k) = key {
        let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", k.0))
            .map_err(|_| SocketError::BadKey)?;
        builder = builder
            .add_header(reqwest::header::AUTHORIZATION, value)
            .map_err(|e| SocketError::Header(e.to_string()))?;
    }
    match tokio::time::timeout(CONNECT_TIMEOUT, builder.connect()).await {
        Ok(Ok((socket, _))) => {
            // Audio goes up in small frames as it is heard: none may wait for an ACK.
            let tcp = match socket.get_ref() {
                MaybeTlsStream::Plain(tcp) => tcp,
                MaybeTlsStream::Rustls(tls) => tls.get_ref().0,
            };
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("realtime socket: TCP_NODELAY not set ({e})");
            }
            Ok(socket)
        }
        Ok(Err(e)) => Err(SocketError::Connect {
            url: url.to_string(),
            error: e.to_string(),
        }),
        Err(_) => Err(SocketError::NoAnswer {
            url: url.to_string(),
            secs: CONNECT_TIMEOUT.as_secs(),
        }),
    }
}

/// `input_audio_buffer.append` with `pcm` (24 kHz) as base64 little-endian pcm16.
fn append_event(pcm: &[i16]) -> Value {
    let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
    json!({
        "type": "input_audio_buffer.append",
        "audio": base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

struct Waiter {
    reply: tokio::sync::oneshot::Sender<Result<String, SpeechError>>,
    finish: bool,
    by: Instant,
}

/// The session's segments: committed in order, acknowledged with an item id, then
/// transcribed.
struct Segments {
    resampler: Resampler,
    /// 24 kHz samples appended since the last commit.
    uncommitted: usize,
    /// Whether any of them had sound ([`has_sound`]).
    sound: bool,
    /// Commits sent.
    committed: usize,
    /// The item ids acknowledged, in commit order.
    items: Vec<String>,
    /// Transcripts by item id.
    texts: HashMap<String, String>,
    waiting: Vec<Waiter>,
}

impl Segments {
    fn new() -> Segments {
        Segments {
            resampler: Resampler::new(super::RATE, REALTIME_RATE),
            uncommitted: 0,
            sound: false,
            committed: 0,
            items: Vec::new(),
            texts: HashMap::new(),
            waiting: Vec::new(),
        }
    }

    /// Resample `pcm` (16 kHz; `last`: and the tail) into an append event, if any
    /// audio came out.
    fn append(&mut self, pcm: &[i16], last: bool) -> Option<Value> {
        let mut out = Vec::new();
        self.resampler.push(&i16_to_f32(pcm), &mut out);
        if last {
            self.resampler.finish(&mut out);
        }
        if out.is_empty() {
            return None;
        }
        let pcm = f32_to_i16(&out);
        self.uncommitted += pcm.len();
        self.sound |= has_sound(&pcm);
        Some(append_event(&pcm))
    }

    /// One server event; `Err` with the server's message when it reports a failure.
    fn on_event(&mut self, text: &str) -> Result<(), Reported> {
        let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let item = || v["item_id"].as_str().unwrap_or_default().to_string();
        match v["type"].as_str().unwrap_or_default() {
            "input_audio_buffer.committed" => self.items.push(item()),
            "conversation.item.input_audio_transcription.completed" => {
                let words = v["transcript"].as_str().unwrap_or_default().trim();
                self.texts.insert(item(), words.to_string());
            }
            "conversation.item.input_audio_transcription.failed" | "error" => {
                let message = v["error"]["message"]
                    .as_str()
                    .unwrap_or("the server reported an error");
                return Err(Reported(message.to_string()));
            }
            _ => {}
        }
        Ok(())
    }

    /// The words of every committed segment, once all are transcribed.
    fn words(&self) -> Option<String> {
        if self.items.len() < self.committed {
            return None;
        }
        let mut parts = Vec::new();
        for id in &self.items {
            let t = self.texts.get(id)?;
            if !t.is_empty() {
                parts.push(t.as_str());
            }
        }
        Some(parts.join(" "))
    }

    /// When the earliest question times out.
    fn deadline(&self) -> Option<Instant> {
        self.waiting.iter().map(|w| w.by).min()
    }

    /// Answer the questions waiting, once the words are in; true when the finish was
    /// answered (the session is over).
    fn answer(&mut self) -> bool {
        if self.waiting.is_empty() {
            return false;
        }
        let Some(words) = self.words() else {
            return false;
        };
        let mut finished = false;
        for w in self.waiting.drain(..) {
            finished |= w.finish;
            let _ = w.reply.send(Ok(words.clone()));
        }
        finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_address_is_the_bases_realtime_endpoint_over_websocket() {
        let r = Realtime::new("https://api.openai.com/v1/", "m", "", None).unwrap();
        assert_eq!(
            r.url(),
            "wss://api.openai.com/v1/realtime?intent=transcription"
        );
        let r = Realtime::new("http://127.0.0.1:9/v1", "m", "", None).unwrap();
        assert_eq!(r.url(), "ws://127.0.0.1:9/v1/realtime?intent=transcription");
        assert!(Realtime::new("ftp://x/v1", "m", "", None).is_none());
    }

    #[test]
    fn the_words_so_far_wait_for_every_committed_segment_and_join_them_in_order() {
        let mut s = Segments::new();
        s.committed = 2;
        s.on_event(r#"{"type":"input_audio_buffer.committed","item_id":"a"}"#)
            .unwrap();
        s.on_event(r#"{"type":"conversation.item.input_audio_transcription.completed","item_id":"a","transcript":" I want to "}"#).unwrap();
        assert_eq!(s.words(), None, "the second segment is not acknowledged");
        s.on_event(r#"{"type":"input_audio_buffer.committed","item_id":"b"}"#)
            .unwrap();
        assert_eq!(s.words(), None, "nor transcribed");
        s.on_event(r#"{"type":"conversation.item.input_audio_transcription.completed","item_id":"b","transcript":"book a table."}"#).unwrap();
        assert_eq!(s.words().as_deref(), Some("I want to book a table."));
    }

    #[test]
    fn a_reported_error_fails_the_session_with_the_servers_message() {
        let mut s = Segments::new();
        let e = s
            .on_event(r#"{"type":"error","error":{"type":"invalid_request_error","message":"Invalid model."}}"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "the stream reported: Invalid model.");
    }

    #[test]
    fn audio_goes_up_at_the_realtime_rate_as_base64_pcm16() {
        let mut s = Segments::new();
        let mut sent = 0;
        for _ in 0..50 {
            if let Some(v) = s.append(&[1000; 320], false) {
                assert_eq!(v["type"], "input_audio_buffer.append");
                let b = base64::engine::general_purpose::STANDARD
                    .decode(v["audio"].as_str().unwrap())
                    .unwrap();
                sent += b.len() / 2;
            }
        }
        if let Some(v) = s.append(&[], true) {
            let b = base64::engine::general_purpose::STANDARD
                .decode(v["audio"].as_str().unwrap())
                .unwrap();
            sent += b.len() / 2;
        }
        assert_eq!(sent, 24_000, "one second at 16 kHz is one second at 24 kHz");
        assert_eq!(s.uncommitted, 24_000);
    }
}
