//! The scripted model server: a loopback OpenAI-compatible server that answers both
//! `POST /v1/responses` and `POST /v1/chat/completions` with real SSE in each wire
//! format, from one FIFO script of [`Reply`]s, and records every request it was sent.
//! Self-contained (tokio, axum, serde_json, futures, kotoba) so benches can
//! `#[path]`-include it.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use kotoba::config::Config;
use serde_json::{json, Value};

/// One scripted answer: streamed words and calls, an HTTP error, or raw SSE.
#[derive(Debug, Clone)]
pub struct Reply {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Stream {
        reasoning: bool,
        text: String,
        /// (name, arguments text sent verbatim)
        calls: Vec<(String, String)>,
        truncated: bool,
    },
    Status {
        code: u16,
        body: String,
        retry_after: Option<u64>,
    },
    RawSse(String),
}

impl Reply {
    fn stream(text: &str, calls: Vec<(String, String)>) -> Reply {
        Reply {
            kind: Kind::Stream {
                reasoning: false,
                text: text.to_string(),
                calls,
                truncated: false,
            },
        }
    }

    /// Words only, streamed in a few deltas.
    pub fn text(s: &str) -> Reply {
        Reply::stream(s, Vec::new())
    }

    /// One function call with these arguments.
    pub fn call(name: &str, args: Value) -> Reply {
        Reply::stream("", vec![(name.to_string(), args.to_string())])
    }

    /// Several function calls in one reply, in order.
    pub fn calls(calls: Vec<(&str, Value)>) -> Reply {
        Reply::stream(
            "",
            calls
                .into_iter()
                .map(|(n, a)| (n.to_string(), a.to_string()))
                .collect(),
        )
    }

    /// One function call whose arguments text is sent verbatim (e.g. invalid JSON).
    pub fn raw_args(name: &str, arguments: &str) -> Reply {
        Reply::stream("", vec![(name.to_string(), arguments.to_string())])
    }

    /// Words first, then one function call.
    pub fn text_then_call(text: &str, name: &str, args: Value) -> Reply {
        Reply::call(name, args).with_text(text)
    }

    /// (Responses) a reasoning item with `encrypted_content`, then one function call.
    /// Chat has no reasoning items, so there it is just the call.
    pub fn reasoning_then_call(name: &str, args: Value) -> Reply {
        Reply::call(name, args).with_reasoning()
    }

    /// An HTTP error status with this body.
    pub fn status(code: u16, body: &str) -> Reply {
        Reply {
            kind: Kind::Status {
                code,
                body: body.to_string(),
                retry_after: None,
            },
        }
    }

    /// Streams the text's deltas, then ends the body with no completion event, no
    /// finish_reason and no `[DONE]`.
    pub fn truncated(text: &str) -> Reply {
        Reply {
            kind: Kind::Stream {
                reasoning: false,
                text: text.to_string(),
                calls: Vec::new(),
                truncated: true,
            },
        }
    }

    /// A 200 `text/event-stream` whose body is exactly this text.
    pub fn raw_sse(body: &str) -> Reply {
        Reply {
            kind: Kind::RawSse(body.to_string()),
        }
    }

    /// Add words before the calls (replacing any words already set).
    pub fn with_text(mut self, s: &str) -> Reply {
        if let Kind::Stream { text, .. } = &mut self.kind {
            *text = s.to_string();
        }
        self
    }

    /// Add a reasoning item first (Responses only).
    pub fn with_reasoning(mut self) -> Reply {
        if let Kind::Stream { reasoning, .. } = &mut self.kind {
            *reasoning = true;
        }
        self
    }

    /// Add a Retry-After header (seconds) to a status reply.
    pub fn retry_after(mut self, secs: u64) -> Reply {
        if let Kind::Status { retry_after, .. } = &mut self.kind {
            *retry_after = Some(secs);
        }
        self
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    body: Value,
    authorization: Option<String>,
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Reply>,
    seen: Mutex<Vec<Seen>>,
    next_id: AtomicU64,
    next_call: AtomicU64,
    /// Whether requests are kept for `requests()` (the bench turns it off so the log
    /// does not grow with every turn it measures).
    record: AtomicBool,
    count: AtomicU64,
    /// How long every reply waits before its first byte (the voice benchmark's fixed
    /// model latency).
    delay_ms: AtomicU64,
    /// Answers a request from what it holds (before the FIFO script), with how long
    /// that reply waits: many turns at once each get their own answer.
    responder: Mutex<Option<Responder>>,
}

/// A reply chosen from the request body, and how long it waits before its first byte.
pub type Responder =
    Arc<dyn Fn(&Value) -> Option<(Reply, std::time::Duration)> + Send + Sync + 'static>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The running server. Dropping it stops the server.
pub struct ScriptedModel {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedModel {
    /// Bind 127.0.0.1:0 and serve until dropped.
    #[allow(clippy::expect_used)]
    pub async fn start() -> ScriptedModel {
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::new()),
            fallback: Mutex::new(Reply::text("(the script is empty)")),
            seen: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            next_call: AtomicU64::new(1),
            record: AtomicBool::new(true),
            count: AtomicU64::new(0),
            delay_ms: AtomicU64::new(0),
            responder: Mutex::new(None),
        });
        let app = Router::new()
            .route("/v1/responses", post(responses_route))
            .route("/v1/chat/completions", post(chat_route))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the scripted model server on loopback");
        let addr = listener.local_addr().expect("the bound address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedModel { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queue a reply; replies are served in order, to either endpoint.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.script).push_back(reply);
    }

    /// Answer every request with `responder` when it has an answer for it (the script
    /// and the fallback serve the rest).
    pub fn set_responder(&self, responder: Responder) {
        *lock(&self.shared.responder) = Some(responder);
    }

    /// What is served once the script is empty.
    pub fn set_fallback(&self, reply: Reply) {
        *lock(&self.shared.fallback) = reply;
    }

    /// Make every reply wait `delay` before its first byte.
    pub fn set_delay(&self, delay: std::time::Duration) {
        self.shared
            .delay_ms
            .store(delay.as_millis() as u64, Ordering::Relaxed);
    }

    /// Keep (the default) or stop keeping the requests that arrive; while off, they are
    /// still counted by `request_count` but not stored.
    pub fn set_recording(&self, on: bool) {
        self.shared.record.store(on, Ordering::Relaxed);
    }

    /// Replies still queued.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }

    /// Every request body, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.seen)
            .iter()
            .map(|s| s.body.clone())
            .collect()
    }

    /// Every request path (`/v1/responses` or `/v1/chat/completions`), in order.
    pub fn request_paths(&self) -> Vec<String> {
        lock(&self.shared.seen)
            .iter()
            .map(|s| s.path.clone())
            .collect()
    }

    /// Every request's Authorization header, in order.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        lock(&self.shared.seen)
            .iter()
            .map(|s| s.authorization.clone())
            .collect()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        usize::try_from(self.shared.count.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    /// A config for a data folder `home` pointing the model client here, speaking
    /// `api` ("responses" or "chat"), with a test key and no reasoning.
    pub fn config_for(&self, home: &Path, api: &str) -> Arc<Config> {
        let base = self.base_url();
        Config::for_home(
            home,
            &[
                ("KOTOBA_LLM_BASE_URL", base.as_str()),
                ("KOTOBA_LLM_API", api),
                ("OPENAI_API_KEY", "test-key"),
                ("KOTOBA_REASONING_EFFORT", "off"),
                ("KOTOBA_MODEL", "scripted"),
            ],
        )
    }
}

impl Shared {
    fn take(
        &self,
        path: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> (Reply, Value, std::time::Duration) {
        let body: Value = serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        self.count.fetch_add(1, Ordering::Relaxed);
        if self.record.load(Ordering::Relaxed) {
            lock(&self.seen).push(Seen {
                path: path.to_string(),
                body: body.clone(),
                authorization,
            });
        }
        let fixed = std::time::Duration::from_millis(self.delay_ms.load(Ordering::Relaxed));
        let responder = lock(&self.responder).clone();
        if let Some((reply, wait)) = responder.and_then(|r| r(&body)) {
            return (reply, body, wait.max(fixed));
        }
        let next = lock(&self.script).pop_front();
        let reply = next.unwrap_or_else(|| lock(&self.fallback).clone());
        (reply, body, fixed)
    }

    /// Call ids count on their own: call_1, call_2 … across both endpoints.
    fn call_id(&self) -> String {
        format!("call_{}", self.next_call.fetch_add(1, Ordering::Relaxed))
    }

    fn id(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }
}

async fn responses_route(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (reply, req, delay) = shared.take("/v1/responses", &headers, &body);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    match reply.kind {
        Kind::Stream {
            reasoning,
            text,
            calls,
            truncated,
        } => {
            let model = req.get("model").cloned().unwrap_or(Value::Null);
            sse(responses_events(
                &shared, &model, reasoning, &text, &calls, truncated,
            ))
        }
        Kind::Status {
            code,
            body,
            retry_after,
        } => status_response(code, body, retry_after),
        Kind::RawSse(body) => sse(vec![body]),
    }
}

async fn chat_route(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (reply, req, delay) = shared.take("/v1/chat/completions", &headers, &body);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    match reply.kind {
        Kind::Stream {
            text,
            calls,
            truncated,
            ..
        } => {
            let model = req.get("model").cloned().unwrap_or(Value::Null);
            sse(chat_chunks(&shared, &model, &text, &calls, truncated))
        }
        Kind::Status {
            code,
            body,
            retry_after,
        } => status_response(code, body, retry_after),
        Kind::RawSse(body) => sse(vec![body]),
    }
}

/// A streamed 200: each string is one body chunk.
fn sse(chunks: Vec<String>) -> Response {
    let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    resp
}

fn status_response(code: u16, body: String, retry_after: Option<u64>) -> Response {
    let json = serde_json::from_str::<Value>(&body).is_ok();
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let ct = if json {
        "application/json"
    } else {
        "text/plain"
    };
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(ct));
    if let Some(secs) = retry_after {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    resp
}

/// Words with their trailing spaces: "a b c" → ["a ", "b ", "c"].
fn word_pieces(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_string).collect()
}

/// Arguments text in 4-character pieces, as real servers stream them.
fn arg_pieces(args: &str) -> Vec<String> {
    let chars: Vec<char> = args.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

fn event(kind: &str, mut data: Value) -> String {
    data["type"] = json!(kind);
    format!("event: {kind}\ndata: {data}\n\n")
}

fn responses_events(
    shared: &Shared,
    model: &Value,
    reasoning: bool,
    text: &str,
    calls: &[(String, String)],
    truncated: bool,
) -> Vec<String> {
    let resp_id = shared.id("resp");
    let mut out = Vec::new();
    let mut output = Vec::new();
    out.push(event(
        "response.created",
        json!({ "response": { "id": resp_id, "model": model, "status": "in_progress", "output": [] } }),
    ));
    if reasoning {
        let id = shared.id("rs");
        let item = json!({
            "type": "reasoning", "id": id, "summary": [],
            "encrypted_content": format!("opaque-{id}-ciphertext"),
        });
        let index = output.len();
        out.push(event(
            "response.output_item.added",
            json!({ "output_index": index, "item": item }),
        ));
        out.push(event(
            "response.output_item.done",
            json!({ "output_index": index, "item": item }),
        ));
        output.push(item);
    }
    if !text.is_empty() {
        let id = shared.id("msg");
        let index = output.len();
        let added = json!({ "type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": [] });
        out.push(event(
            "response.output_item.added",
            json!({ "output_index": index, "item": added }),
        ));
        for piece in word_pieces(text) {
            out.push(event(
                "response.output_text.delta",
                json!({ "item_id": id, "output_index": index, "content_index": 0, "delta": piece }),
            ));
        }
        if truncated {
            return out;
        }
        out.push(event(
            "response.output_text.done",
            json!({ "item_id": id, "output_index": index, "content_index": 0, "text": text }),
        ));
        let item = json!({
            "type": "message", "id": id, "role": "assistant", "status": "completed",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }],
        });
        out.push(event(
            "response.output_item.done",
            json!({ "output_index": index, "item": item }),
        ));
        output.push(item);
    }
    if truncated {
        return out;
    }
    for (name, args) in calls {
        let id = shared.id("fc");
        let call_id = shared.call_id();
        let index = output.len();
        let added = json!({
            "type": "function_call", "id": id, "call_id": call_id, "name": name,
            "arguments": "", "status": "in_progress",
        });
        out.push(event(
            "response.output_item.added",
            json!({ "output_index": index, "item": added }),
        ));
        for piece in arg_pieces(args) {
            out.push(event(
                "response.function_call_arguments.delta",
                json!({ "item_id": id, "output_index": index, "delta": piece }),
            ));
        }
        out.push(event(
            "response.function_call_arguments.done",
            json!({ "item_id": id, "output_index": index, "arguments": args }),
        ));
        let item = json!({
            "type": "function_call", "id": id, "call_id": call_id, "name": name,
            "arguments": args, "status": "completed",
        });
        out.push(event(
            "response.output_item.done",
            json!({ "output_index": index, "item": item }),
        ));
        output.push(item);
    }
    out.push(event(
        "response.completed",
        json!({ "response": { "id": resp_id, "model": model, "status": "completed", "output": output } }),
    ));
    out
}

fn chat_chunks(
    shared: &Shared,
    model: &Value,
    text: &str,
    calls: &[(String, String)],
    truncated: bool,
) -> Vec<String> {
    let id = shared.id("chatcmpl");
    let chunk = |delta: Value, finish: Value| {
        let c = json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        format!("data: {c}\n\n")
    };
    let mut out = vec![chunk(
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
    )];
    for piece in word_pieces(text) {
        out.push(chunk(json!({ "content": piece }), Value::Null));
    }
    if truncated {
        return out;
    }
    for (index, (name, args)) in calls.iter().enumerate() {
        let call_id = shared.call_id();
        out.push(chunk(
            json!({ "tool_calls": [{ "index": index, "id": call_id, "type": "function",
                "function": { "name": name, "arguments": "" } }] }),
            Value::Null,
        ));
        for piece in arg_pieces(args) {
            out.push(chunk(
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }),
                Value::Null,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(chunk(json!({}), json!(finish)));
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// A scripted model running on its own OS thread and runtime (benchmarks measure the
/// engine's thread apart from the server's). Stop it with [`ServerThread::stop`].
pub struct ServerThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerThread {
    /// Start the server on its own thread; returns it with the handle that stops it.
    #[allow(clippy::expect_used)]
    pub fn start() -> (ScriptedModel, ServerThread) {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("model-server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the model server");
                rt.block_on(async move {
                    let _ = tx.send(ScriptedModel::start().await);
                    let _ = stopped.await;
                });
            })
            .expect("the model server's thread");
        let model = rx.recv().expect("the model server started");
        (
            model,
            ServerThread {
                stop: Some(stop),
                thread: Some(thread),
            },
        )
    }

    /// Stop the server and wait for its thread.
    pub fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
