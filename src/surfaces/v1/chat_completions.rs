//! `POST /v1/chat/completions`: bearer check, a body read with a size cap and a
//! deadline, the request validated field by field (each mistake an OpenAI-style 400),
//! then one engine turn on the session the request names — register voice, channel
//! voice, `el_call_bound = Some(true)`, replacing a turn already running there.
//!
//! `stream: true` answers Server-Sent Events: a role chunk, one content chunk per text
//! delta of this turn (from the turn's tap, which is not a listener, so it never makes
//! the session look watched), an empty content chunk after each `keepalive` of silence,
//! the finish chunk and `data: [DONE]`. `stream: false` answers one `chat.completion`.
//! The turn runs in its own task: a client that hangs up does not cut it.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::errors::V1Error;
use super::{auth, V1};
use crate::engine::{TurnOptions, WORK_DONE_SENTINEL};
use crate::protocol::{Channel, Frame, Origin, Register, TurnRequest};
use crate::surfaces::web::{parse_session_id, MODEL_NAME};

/// The header that may name the session when the body's `user` does not.
pub const SESSION_HEADER: &str = "x-session-id";

/// What a valid request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRequest {
    /// The last user message's text (text parts joined).
    pub text: String,
    /// Stream chunks (`stream: true`) or answer once.
    pub stream: bool,
    /// The `user` field: the session id, when given.
    pub user: Option<String>,
    /// The `model` field, echoed back.
    pub model: Option<String>,
}

fn optional<'a>(
    obj: &'a Map<String, Value>,
    key: &'static str,
    kind: &str,
) -> Result<Option<&'a Value>, V1Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let ok = match kind {
                "boolean" => v.is_boolean(),
                "string" => v.is_string(),
                _ => true,
            };
            if ok {
                Ok(Some(v))
            } else {
                Err(V1Error::bad_request(
                    format!("'{key}' must be a {kind}"),
                    Some(key),
                ))
            }
        }
    }
}

/// A message's content as text: a string, null, or an array of content parts whose
/// `text` parts are joined (other parts, e.g. images, are skipped).
fn content_text(content: Option<&Value>, i: usize) -> Result<String, V1Error> {
    let bad = |m: String| V1Error::bad_request(m, Some("messages"));
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = Vec::new();
            for (j, part) in parts.iter().enumerate() {
                let part = part.as_object().ok_or_else(|| {
                    bad(format!(
                        "messages[{i}].content[{j}] must be a content part object"
                    ))
                })?;
                if part.get("type").and_then(Value::as_str) == Some("text") {
                    let text = part.get("text").and_then(Value::as_str).ok_or_else(|| {
                        bad(format!("messages[{i}].content[{j}].text must be a string"))
                    })?;
                    out.push(text.to_string());
                }
            }
            Ok(out.join("\n"))
        }
        Some(_) => Err(bad(format!(
            "messages[{i}].content must be a string or an array of content parts"
        ))),
    }
}

/// Validate a request body. Every mistake is a 400 naming the field.
pub fn parse_request(body: &[u8]) -> Result<ChatRequest, V1Error> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        V1Error::bad_request(
            format!("We could not parse the JSON body of your request: {e}"),
            None,
        )
    })?;
    let obj = value
        .as_object()
        .ok_or_else(|| V1Error::bad_request("the request body must be a JSON object", None))?;
    let messages = match obj.get("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => {
            return Err(V1Error::bad_request(
                "'messages' must not be empty",
                Some("messages"),
            ))
        }
        Some(_) => {
            return Err(V1Error::bad_request(
                "'messages' must be an array",
                Some("messages"),
            ))
        }
        None => {
            return Err(V1Error::bad_request(
                "'messages' is a required property",
                Some("messages"),
            ))
        }
    };
    let stream = optional(obj, "stream", "boolean")?.and_then(Value::as_bool) == Some(true);
    let user = optional(obj, "user", "string")?
        .and_then(Value::as_str)
        .map(str::to_string);
    let model = optional(obj, "model", "string")?
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut last_user = None;
    for (i, m) in messages.iter().enumerate() {
        let m = m.as_object().ok_or_else(|| {
            V1Error::bad_request(format!("messages[{i}] must be an object"), Some("messages"))
        })?;
        let role = m.get("role").and_then(Value::as_str).ok_or_else(|| {
            V1Error::bad_request(
                format!("messages[{i}].role must be a string"),
                Some("messages"),
            )
        })?;
        let text = content_text(m.get("content"), i)?;
        if role == "user" {
            last_user = Some(text);
        }
    }
    let text = last_user
        .ok_or_else(|| V1Error::bad_request("the request has no user message", Some("messages")))?;
    if text.trim().is_empty() {
        return Err(V1Error::bad_request(
            "the last user message has no text",
            Some("messages"),
        ));
    }
    Ok(ChatRequest {
        text,
        stream,
        user,
        model,
    })
}

/// The session: the `user` field, else the `X-Session-Id` header, else a new id.
fn session_of(req: &ChatRequest, headers: &HeaderMap) -> Result<String, V1Error> {
    let header = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    match req.user.as_deref().or(header) {
        Some(raw) => {
            parse_session_id(raw).map_err(|e| V1Error::bad_request(e.to_string(), Some("user")))
        }
        None => Ok(format!("v1-{:016x}", rand::random::<u64>())),
    }
}

/// The engine turn a /v1 request starts. A message that is the `__work_done__`
/// sentinel (an agent relaying the page's announce) runs hidden: never stored.
pub fn v1_turn(session_id: &str, text: &str) -> TurnRequest {
    TurnRequest {
        session: crate::session::SessionId::v1(session_id),
        text: text.to_string(),
        author: "v1".into(),
        register: Register::Voice,
        channel: Channel::Voice,
        el_call_bound: Some(true),
        replace_running: true,
        hidden: text.trim_start().starts_with(WORK_DONE_SENTINEL),
        media: Vec::new(),
        // The API key's holder (or loopback with none set) is the owner.
        origin: Origin::Owner,
        around: Vec::new(),
        granted: Vec::new(),
    }
}

/// Read the body: at most `limit` bytes (413 past it), within `deadline` (408 after).
async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    deadline: Duration,
) -> Result<Bytes, V1Error> {
    let too_large = || {
        V1Error::status(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, limit)).await {
        Err(_) => Err(V1Error::status(
            StatusCode::REQUEST_TIMEOUT,
            "the request body did not arrive in time",
        )),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            let inner = e.into_inner();
            if inner
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                Err(too_large())
            } else {
                Err(V1Error::bad_request(
                    format!("the request body could not be read: {inner}"),
                    None,
                ))
            }
        }
    }
}

/// `POST /v1/chat/completions`.
pub(super) async fn handle(State(st): State<V1>, headers: HeaderMap, body: Body) -> Response {
    if let Err(e) = auth::check(&headers, st.options.api_key.as_deref()) {
        return e.into_response();
    }
    let bytes = match read_body(
        &headers,
        body,
        st.options.v1_body_limit,
        st.options.v1_body_timeout,
    )
    .await
    {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let req = match parse_request(&bytes) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let session_id = match session_of(&req, &headers) {
        Ok(id) => id,
        Err(e) => return e.into_response(),
    };
    let turn = v1_turn(&session_id, &req.text);
    let reply = Reply {
        id: format!("chatcmpl-{:016x}", rand::random::<u64>()),
        created: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        model: req.model.clone().unwrap_or_else(|| MODEL_NAME.to_string()),
    };
    let mut resp = if req.stream {
        stream_reply(&st, turn, reply)
    } else {
        whole_reply(&st, turn, reply).await
    };
    if let Ok(v) = HeaderValue::from_str(&session_id) {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

/// The fixed fields of one reply.
struct Reply {
    id: String,
    created: u64,
    model: String,
}

impl Reply {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Bytes {
        let c = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        Bytes::from(format!("data: {c}\n\n"))
    }
}

async fn whole_reply(st: &V1, turn: TurnRequest, reply: Reply) -> Response {
    let engine = st.engine.clone();
    let result = match tokio::spawn(
        async move { engine.run_turn(turn, TurnOptions::default()).await },
    )
    .await
    {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("a /v1 turn task failed: {e}");
            return V1Error::status(StatusCode::INTERNAL_SERVER_ERROR, "the turn failed")
                .into_response();
        }
    };
    if result.store_unreachable {
        return V1Error::store_unreachable().into_response();
    }
    Json(json!({
        "id": reply.id,
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": result.text },
            "finish_reason": "stop",
        }],
        "usage": { "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0 },
    }))
    .into_response()
}

fn stream_reply(st: &V1, turn: TurnRequest, reply: Reply) -> Response {
    if !st.engine.store().reachable_now() {
        return V1Error::store_unreachable().into_response();
    }
    let (tap_tx, mut tap_rx) = mpsc::unbounded_channel();
    let engine = st.engine.clone();
    tokio::spawn(async move {
        let options = TurnOptions {
            tap: Some(tap_tx),
            ..Default::default()
        };
        engine.run_turn(turn, options).await;
    });
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let keepalive = st.options.v1_keepalive;
    let shutdown = st.shutdown.clone();
    tokio::spawn(async move {
        let role = reply.chunk(json!({ "role": "assistant", "content": "" }), None);
        if tx.send(role).await.is_err() {
            return;
        }
        let mut last_sent = Instant::now();
        loop {
            let chunk = tokio::select! {
                ev = tap_rx.recv() => match ev {
                    None => break,
                    Some(ev) => match (&ev.run_id, &ev.frame) {
                        (None, Frame::TextDelta { text }) => reply.chunk(json!({ "content": text }), None),
                        (None, Frame::TurnDone { .. }) => break,
                        _ => continue,
                    },
                },
                _ = tokio::time::sleep_until(last_sent + keepalive) => {
                    reply.chunk(json!({ "content": "" }), None)
                }
                _ = shutdown.cancelled() => break,
            };
            if tx.send(chunk).await.is_err() {
                return; // the client hung up; the turn goes on
            }
            last_sent = Instant::now();
        }
        let _ = tx.send(reply.chunk(json!({}), Some("stop"))).await;
        let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
    });
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    let mut resp = Response::new(Body::from_stream(body));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_user_message_is_the_turn_and_parts_are_joined() {
        let r = parse_request(
            br#"{"model":"kotoba","stream":true,"user":"s1","messages":[
                {"role":"system","content":"be nice"},
                {"role":"user","content":"first"},
                {"role":"assistant","content":null},
                {"role":"user","content":[{"type":"text","text":"hello"},{"type":"image_url","image_url":{}},{"type":"text","text":"there"}]}
            ]}"#,
        )
        .unwrap();
        assert_eq!(r.text, "hello\nthere");
        assert!(r.stream);
        assert_eq!(r.user.as_deref(), Some("s1"));
        assert_eq!(r.model.as_deref(), Some("kotoba"));
    }

    #[test]
    fn every_bad_field_is_a_400_naming_it() {
        let cases: &[(&str, &str)] = &[
            ("not json", "parse"),
            ("[1,2]", "JSON object"),
            ("{}", "'messages' is a required"),
            (r#"{"messages":"hi"}"#, "must be an array"),
            (r#"{"messages":[]}"#, "must not be empty"),
            (r#"{"messages":[1]}"#, "messages[0] must be an object"),
            (r#"{"messages":[{"content":"x"}]}"#, "role must be a string"),
            (
                r#"{"messages":[{"role":"user","content":5}]}"#,
                "content must be",
            ),
            (
                r#"{"messages":[{"role":"user","content":[7]}]}"#,
                "content part",
            ),
            (
                r#"{"messages":[{"role":"system","content":"x"}]}"#,
                "no user message",
            ),
            (
                r#"{"messages":[{"role":"user","content":"  "}]}"#,
                "no text",
            ),
            (
                r#"{"stream":"yes","messages":[{"role":"user","content":"x"}]}"#,
                "'stream' must be a boolean",
            ),
            (
                r#"{"user":5,"messages":[{"role":"user","content":"x"}]}"#,
                "'user' must be a string",
            ),
            (
                r#"{"model":[],"messages":[{"role":"user","content":"x"}]}"#,
                "'model' must be a string",
            ),
        ];
        for (body, says) in cases {
            let e = parse_request(body.as_bytes()).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{body}");
            assert!(e.message.contains(says), "{body}: {}", e.message);
        }
    }

    #[test]
    fn a_v1_turn_is_voice_voice_marked_and_replacing() {
        let t = v1_turn("abc", "hi");
        assert_eq!(t.session, "web:abc");
        assert_eq!(t.session.place(), crate::session::Place::V1);
        assert_eq!((t.register, t.channel), (Register::Voice, Channel::Voice));
        assert_eq!(t.el_call_bound, Some(true));
        assert!(t.replace_running && !t.hidden);
        assert!(v1_turn("abc", "__work_done__ job 1 ended").hidden);
    }

    #[test]
    fn the_session_comes_from_user_then_the_header_then_a_new_id() {
        let mut h = HeaderMap::new();
        h.insert(SESSION_HEADER, "from-header".parse().unwrap());
        let mut r = parse_request(br#"{"messages":[{"role":"user","content":"x"}]}"#).unwrap();
        assert_eq!(session_of(&r, &h).unwrap(), "from-header");
        r.user = Some("from-user".into());
        assert_eq!(session_of(&r, &h).unwrap(), "from-user");
        r.user = None;
        let fresh = session_of(&r, &HeaderMap::new()).unwrap();
        assert!(fresh.starts_with("v1-") && fresh.len() == 19, "{fresh}");
        r.user = Some("bad id!".into());
        assert_eq!(
            session_of(&r, &h).unwrap_err().status,
            StatusCode::BAD_REQUEST
        );
    }
}
