//! `GET /api/voice?session=ID`: the page's voice socket (a WebSocket, behind the page's
//! login like every `/api` route). The page talks with her through the same voice room
//! as a Discord call (`crate::voice`); this file is the page's adapter at the room's
//! boundary:
//! - in, binary: the microphone as 16 kHz mono 16-bit little-endian PCM, any chunking;
//!   cut into 20 ms frames for the room (endpointing, recognition, barge-in);
//! - in, text: `{"type":"mute","muted":true|false}` (muted: her audio is not sent);
//! - out, binary: her voice as 20 ms frames of 24 kHz mono 16-bit little-endian PCM,
//!   at the room's pace, played as they arrive;
//! - out, text: `{"type":"ready","stt":…,"tts":…}` once, `{"type":"stop"}` when she
//!   must go quiet at once (drop what is queued), captions
//!   `{"type":"caption","kind":"heard"|"said"|"notice","text":…}`,
//!   `{"type":"speaking","turn_id":…}` (this turn is said aloud here, its narration
//!   heard, so the page does not print it), and
//!   `{"type":"replaced"}` before the socket closes because another page of the same
//!   session opened her voice (one room per session: the newest page has it).
//!
//! While a page's socket is open (and not muted), a message typed on that page is run
//! as the room's turn ([`speak_typed`]), so she says her answer aloud and talking over
//! her cuts it. Closing the socket ends the room; a turn in flight finishes in writing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{json_error, parse_session_id, Shared};
use crate::protocol::{Origin, TurnRequest};
use crate::session::SessionId;
use crate::speech::audio::{HEAR_FRAME, PLAY_FRAME};
use crate::speech::endpoint::EndpointSettings;
use crate::voice::boundary::{AudioOut, Heard};
use crate::voice::room::{self, Caption, Control, RoomParts, RoomSide};

/// The one person a page's room hears: whoever is logged in to the page, its owner.
pub const PAGE_USER: u64 = 1;

/// The rate her voice is sent to the page at.
pub const PAGE_PLAY_RATE: u32 = 24_000;

/// The page's rooms that are open now, by engine session, with the socket that owns
/// each (a second socket for the same session replaces the first).
#[derive(Default)]
pub(crate) struct PageRooms {
    map: dashmap::DashMap<String, PageRoom>,
    next: AtomicU64,
}

/// One open page room.
struct PageRoom {
    /// Which socket owns it.
    owner: u64,
    control: mpsc::Sender<Control>,
    muted: Arc<AtomicBool>,
    /// Cancelled when another page of the same session takes the voice over.
    replaced: CancellationToken,
}

/// Which session the socket is for.
#[derive(Deserialize)]
pub(super) struct VoiceQuery {
    #[serde(default = "super::default_session")]
    session: String,
}

/// Upgrade to the page's voice socket.
pub(super) async fn voice(
    State(st): State<Shared>,
    query: Result<Query<VoiceQuery>, QueryRejection>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let id = match query
        .map_err(|e| e.body_text())
        .and_then(|q| parse_session_id(&q.session).map_err(|e| e.to_string()))
    {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e),
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "not_a_websocket",
                &format!("the voice socket is a WebSocket: {}", e.body_text()),
            )
        }
    };
    ws.max_message_size(1 << 20)
        .on_upgrade(move |socket| serve(st, SessionId::page(&id), socket))
}

/// Hand a typed turn to the page's open room for its session, if there is one and it
/// is not muted; the turn comes back when it must run as before (written).
pub(crate) fn speak_typed(st: &Shared, req: TurnRequest) -> Option<TurnRequest> {
    let Some(entry) = st.voices.map.get(req.session.as_str()) else {
        return Some(req);
    };
    let room = entry.value();
    if room.muted.load(Ordering::SeqCst) {
        return Some(req);
    }
    let turn = Box::new(req);
    match room.control.try_send(Control::Speak {
        user: PAGE_USER,
        turn,
    }) {
        Ok(()) => None,
        // The room is ending or swamped: she writes this one.
        Err(e) => match e.into_inner() {
            Control::Speak { turn, .. } => Some(*turn),
            _ => None,
        },
    }
}

/// One socket's life: a room for the session, fed by what the page hears.
async fn serve(st: Shared, session: SessionId, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut outgoing) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(async move {
        while let Some(m) = outgoing.recv().await {
            if sink.send(m).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let config = st.engine.config();
    let providers = crate::voice::providers::providers(config);
    let voice = config.settings().voice;
    let muted = Arc::new(AtomicBool::new(false));
    let mut names = vec!["Kotoba".to_string()];
    names.extend(voice.aliases.clone());
    let parts = RoomParts {
        engine: st.engine.clone(),
        session: session.clone(),
        names,
        recognizer: providers.recognizer.clone(),
        synthesizer: providers.synthesizer.clone(),
        out: Arc::new(PageOut {
            tx: tx.clone(),
            muted: muted.clone(),
        }),
        side: Arc::new(PageSide { tx: tx.clone() }),
        endpoint: EndpointSettings::from_voice(&voice),
        speculate: voice.speculate,
        // The page's owner is there while the socket is open.
        idle_leave: Duration::from_secs(u64::from(u32::MAX)),
        trace: Some(crate::voice::latency::keeper(config.paths.home.clone())),
        realtime: providers.realtime.clone(),
    };
    let ready = json!({
        "type": "ready",
        "stt": providers.recognizer.name(),
        "tts": providers.synthesizer.name(),
    });
    let stood_in = providers.stood_in.clone();
    let warm = providers;
    let handle = room::spawn(parts, 1);
    let me = st.voices.next.fetch_add(1, Ordering::SeqCst);
    let replaced = CancellationToken::new();
    let before = st.voices.map.insert(
        session.as_str().to_string(),
        PageRoom {
            owner: me,
            control: handle.control.clone(),
            muted: muted.clone(),
            replaced: replaced.clone(),
        },
    );
    if let Some(old) = before {
        // Another page of the same session had her voice: it moves here, and that
        // page is told so (it does not reconnect and take it back).
        old.replaced.cancel();
    }
    // Ready once her voice is this page's: a newer page's `ready` always comes after.
    let _ = tx.send(text(ready));
    if let Some(line) = stood_in {
        let _ = tx.send(caption_message(&Caption::Notice(line)));
    }
    let mut warmed = false;
    let mut heard = Vec::<i16>::new();
    let mut odd: Option<u8> = None;
    loop {
        let m = tokio::select! {
            m = stream.next() => m,
            () = st.shutdown.cancelled() => break,
            () = replaced.cancelled() => {
                let _ = tx.send(text(json!({"type": "replaced"})));
                break;
            }
        };
        let Some(Ok(m)) = m else { break };
        match m {
            Message::Binary(bytes) => {
                if !warmed {
                    warmed = true;
                    warm.warm();
                }
                push_pcm(&mut heard, &mut odd, &bytes);
                let mut gone = false;
                for frame in take_frames(&mut heard) {
                    let tick = Heard {
                        frames: vec![(PAGE_USER, frame)],
                    };
                    if handle.heard.send(tick).await.is_err() {
                        gone = true;
                        break;
                    }
                }
                if gone {
                    break;
                }
            }
            Message::Text(t) => on_text(&t, &muted, &tx),
            Message::Close(_) => break,
            _ => {}
        }
    }
    st.voices
        .map
        .remove_if(session.as_str(), |_, room| room.owner == me);
    // The room ends without cutting its turn: what she was saying finishes in writing.
    let _ = handle.control.send(Control::Release).await;
    let _ = handle.task.await;
    drop(tx);
    let _ = writer.await;
}

/// A text message from the page: only mute is understood; anything else is ignored
/// with a note back, so a page of another version keeps working.
fn on_text(t: &str, muted: &AtomicBool, tx: &mpsc::UnboundedSender<Message>) {
    #[derive(Deserialize)]
    struct Said {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        muted: bool,
    }
    match serde_json::from_str::<Said>(t) {
        Ok(s) if s.kind == "mute" => {
            muted.store(s.muted, Ordering::SeqCst);
            if s.muted {
                let _ = tx.send(text(json!({"type": "stop"})));
            }
        }
        Ok(s) => {
            let _ = tx.send(text(json!({
                "type": "error",
                "message": format!("the voice socket does not know {:?} messages", s.kind),
            })));
        }
        Err(e) => {
            let _ = tx.send(text(json!({
                "type": "error",
                "message": format!("a text message must be JSON with a type: {e}"),
            })));
        }
    }
}

/// Append little-endian 16-bit samples, keeping an odd trailing byte for the next chunk.
fn push_pcm(heard: &mut Vec<i16>, odd: &mut Option<u8>, bytes: &[u8]) {
    let mut rest = bytes;
    if let Some(lo) = odd.take() {
        match rest.split_first() {
            Some((hi, tail)) => {
                heard.push(i16::from_le_bytes([lo, *hi]));
                rest = tail;
            }
            None => {
                *odd = Some(lo);
                return;
            }
        }
    }
    let mut pairs = rest.chunks_exact(2);
    heard.extend(pairs.by_ref().map(|p| i16::from_le_bytes([p[0], p[1]])));
    *odd = pairs.remainder().first().copied();
}

/// The whole 20 ms frames heard so far (the rest waits for more).
fn take_frames(heard: &mut Vec<i16>) -> Vec<Vec<i16>> {
    let whole = heard.len() / HEAR_FRAME * HEAR_FRAME;
    let frames = heard[..whole]
        .chunks_exact(HEAR_FRAME)
        .map(<[i16]>::to_vec)
        .collect();
    heard.drain(..whole);
    frames
}

/// One 48 kHz stereo frame as 24 kHz mono little-endian 16-bit PCM: each output sample
/// is the mean of two stereo pairs.
pub fn page_frame(pcm: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pcm.len() / 2);
    for quad in pcm.chunks(4) {
        let mean = quad.iter().sum::<f32>() / quad.len().max(1) as f32;
        let s = (mean.clamp(-1.0, 1.0) * f32::from(i16::MAX)) as i16;
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

fn text(v: serde_json::Value) -> Message {
    Message::Text(v.to_string().into())
}

fn caption_message(c: &Caption) -> Message {
    let (kind, words) = match c {
        Caption::Heard { words, .. } => ("heard", words.clone()),
        Caption::Said(t) => ("said", t.clone()),
        Caption::Notice(t) => ("notice", t.clone()),
    };
    text(
        json!({"type": "caption", "kind": kind, "text": crate::protocol::clip(&words, room::CAPTION_MAX)}),
    )
}

/// Her voice to the page.
struct PageOut {
    tx: mpsc::UnboundedSender<Message>,
    muted: Arc<AtomicBool>,
}

impl AudioOut for PageOut {
    fn frame(&self, pcm: &[f32]) {
        if self.muted.load(Ordering::SeqCst) || pcm.len() != PLAY_FRAME {
            return;
        }
        let _ = self.tx.send(Message::Binary(page_frame(pcm).into()));
    }

    fn stop(&self) {
        let _ = self.tx.send(text(json!({"type": "stop"})));
    }

    fn muted(&self) -> bool {
        self.muted.load(Ordering::SeqCst)
    }
}

/// The page around the room: its owner, its captions.
struct PageSide {
    tx: mpsc::UnboundedSender<Message>,
}

#[async_trait]
impl RoomSide for PageSide {
    async fn post(&self, caption: Caption) {
        let _ = self.tx.send(caption_message(&caption));
    }

    fn name_of(&self, _user: u64) -> String {
        "you".into()
    }

    fn origin(&self, _user: u64) -> Origin {
        // Behind the page's login (or loopback-only with none set): the owner.
        Origin::Owner
    }

    fn author(&self, _user: u64) -> String {
        "web".into()
    }

    async fn before_turn(&self) {}

    fn speaking(&self, turn_id: &str) {
        let _ = self
            .tx
            .send(text(json!({"type": "speaking", "turn_id": turn_id})));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heard_bytes_become_exact_20_ms_frames_whatever_the_chunking() {
        let samples: Vec<i16> = (0..1000).map(|i| (i * 37 % 2000 - 1000) as i16).collect();
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        for chunk in [1, 3, 640, 777] {
            let (mut heard, mut odd, mut frames) = (Vec::new(), None, Vec::new());
            for c in bytes.chunks(chunk) {
                push_pcm(&mut heard, &mut odd, c);
                frames.extend(take_frames(&mut heard));
            }
            assert_eq!(frames.len(), 3, "chunks of {chunk}");
            assert!(frames.iter().all(|f| f.len() == HEAR_FRAME));
            let flat: Vec<i16> = frames.concat();
            assert_eq!(flat, samples[..960], "chunks of {chunk}");
            assert_eq!(heard, samples[960..], "the rest waits");
        }
    }

    #[test]
    fn her_48_khz_stereo_frame_goes_to_the_page_as_24_khz_mono() {
        let pcm: Vec<f32> = (0..PLAY_FRAME / 2).flat_map(|_| [0.5, 0.5]).collect();
        let out = page_frame(&pcm);
        assert_eq!(out.len(), 480 * 2, "20 ms of 24 kHz, two bytes a sample");
        let first = i16::from_le_bytes([out[0], out[1]]);
        assert_eq!(first, (0.5 * f32::from(i16::MAX)) as i16);
    }
}
