//! The scripted model server: a loopback OpenAI-compatible server that answers both
//! `POST /v1/responses` and `POST /v1/chat/completions` with real SSE in each wire
//! format, from the engine's one scripted model (`kotoba_engine::engine::testing::
//! Script`: its FIFO of replies, its fallback and delay; [`Reply`] makes them in the
//! wire's words), and records every request it was sent.

use std::convert::Infallible;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use kotoba::config::Config;
use kotoba::llm::{Item, LlmError, ModelReply, ToolCall};
use kotoba_engine::engine::testing::{self, Script};

use kotoba_store::testing::thread;
use serde_json::{json, Value};

/// One scripted answer, the engine's script's own: a reply (reasoning, words and calls)
/// or an error, served as the provider would serve it (see [`Script`]).
pub type Answer = Result<ModelReply, LlmError>;

/// The script's replies in the words of the wire: each makes one [`Answer`].
pub struct Reply;

impl Reply {
    /// Words only, streamed in a few deltas.
    pub fn text(s: &str) -> Answer {
        Ok(testing::say(s))
    }

    /// One function call with these arguments.
    pub fn call(name: &str, args: Value) -> Answer {
        testing::call(name, args)
    }

    /// Several function calls in one reply, in order.
    pub fn calls(calls: Vec<(&str, Value)>) -> Answer {
        testing::calls(&calls)
    }

    /// One function call whose arguments text is sent verbatim (e.g. invalid JSON).
    pub fn raw_args(name: &str, arguments: &str) -> Answer {
        Ok(reply(vec![tool_call(name, arguments)]))
    }

    /// Words first, then one function call.
    pub fn text_then_call(text: &str, name: &str, args: Value) -> Answer {
        Ok(reply(vec![
            Item::Assistant { text: text.into() },
            tool_call(name, &args.to_string()),
        ]))
    }

    /// (Responses) a reasoning item with `encrypted_content`, then one function call.
    /// Chat has no reasoning items, so there it is just the call.
    pub fn reasoning_then_call(name: &str, args: Value) -> Answer {
        Ok(reply(vec![
            Item::Reasoning {
                raw: json!({ "type": "reasoning", "summary": [] }),
            },
            tool_call(name, &args.to_string()),
        ]))
    }

    /// An HTTP error status with this body.
    pub fn status(code: u16, body: &str) -> Answer {
        Err(LlmError::Http {
            status: code,
            body: body.to_string(),
        })
    }

    /// A 429 rate-limit error with a Retry-After header (seconds).
    pub fn rate_limited(retry_after: u64) -> Answer {
        Err(LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(retry_after)),
        })
    }

    /// Streams the text's deltas, then ends the body with no completion event, no
    /// finish_reason and no `[DONE]`.
    pub fn truncated(text: &str) -> Answer {
        Err(LlmError::Stream(text.to_string()))
    }

    /// A 200 `text/event-stream` whose body is exactly this text.
    pub fn raw_sse(body: &str) -> Answer {
        Err(LlmError::Malformed(body.to_string()))
    }
}

fn reply(items: Vec<Item>) -> ModelReply {
    ModelReply {
        items,
        ..ModelReply::default()
    }
}

/// A call as the script holds it; the server gives it its wire id when it is served.
fn tool_call(name: &str, arguments: &str) -> Item {
    Item::ToolCall(ToolCall {
        call_id: String::new(),
        name: name.to_string(),
        arguments: arguments.to_string(),
        raw: None,
    })
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    body: Value,
    authorization: Option<String>,
}

struct Shared {
    /// The replies, the fallback, the delay of every reply and whether requests are
    /// kept: the engine's one scripted model, served here over the wire.
    script: Arc<Script>,
    seen: Mutex<Vec<Seen>>,
    next_id: AtomicU64,
    next_call: AtomicU64,
    count: AtomicU64,
    /// Answers a request from what it holds (before the FIFO script), with how long
    /// that reply waits: many turns at once each get their own answer.
    responder: Mutex<Option<Responder>>,
}

/// A reply chosen from the request body, and how long it waits before its first byte.
pub type Responder = Arc<dyn Fn(&Value) -> Option<(Answer, Duration)> + Send + Sync + 'static>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a reply is on the wire: reasoning first, then words, then calls.
struct Wire {
    reasoning: Vec<Value>,
    text: String,
    /// (name, arguments text sent verbatim)
    calls: Vec<(String, String)>,
    /// The body ends after the words, with no completion.
    truncated: bool,
}

impl Wire {
    fn of(reply: &ModelReply) -> Wire {
        let mut wire = Wire {
            reasoning: Vec::new(),
            text: String::new(),
            calls: Vec::new(),
            truncated: false,
        };
        for item in &reply.items {
            match item {
                Item::Reasoning { raw } => wire.reasoning.push(raw.clone()),
                Item::Assistant { text } => wire.text.push_str(text),
                Item::ToolCall(c) => wire.calls.push((c.name.clone(), c.arguments.clone())),
                _ => {}
            }
        }
        wire
    }

    fn truncated(text: &str) -> Wire {
        Wire {
            reasoning: Vec::new(),
            text: text.to_string(),
            calls: Vec::new(),
            truncated: true,
        }
    }
}

/// An answer served: a stream in the endpoint's format, or a response of its own.
enum Served {
    Stream(Wire),
    Done(Response),
}

fn serve(answer: Answer) -> Served {
    match answer {
        Ok(reply) => Served::Stream(Wire::of(&reply)),
        Err(LlmError::Stream(text)) => Served::Stream(Wire::truncated(&text)),
        Err(LlmError::Malformed(body)) => Served::Done(sse(vec![body])),
        Err(LlmError::Http { status, body }) => Served::Done(status_response(status, body, None)),
        Err(LlmError::RateLimited { retry_after }) => Served::Done(status_response(
            429,
            json!({ "error": { "code": "rate_limit_exceeded", "message": "Rate limit reached" } })
                .to_string(),
            retry_after.map(|d| d.as_secs()),
        )),
        Err(LlmError::ContextTooLong) => Served::Done(status_response(
            400,
            json!({ "error": { "code": "context_length_exceeded", "message": "This model's maximum context length was exceeded." } })
                .to_string(),
            None,
        )),
        Err(LlmError::Auth(message)) => Served::Done(status_response(
            401,
            json!({ "error": { "code": "invalid_api_key", "message": message } }).to_string(),
            None,
        )),
        Err(LlmError::NotFound(message)) => Served::Done(status_response(
            404,
            json!({ "error": { "code": "model_not_found", "message": message } }).to_string(),
            None,
        )),
        Err(other) => Served::Done(status_response(500, other.to_string(), None)),
    }
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
        let script = Script::new(Vec::new());
        script.set_fallback(Reply::text("(the script is empty)"));
        let shared = Arc::new(Shared {
            script,
            seen: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            next_call: AtomicU64::new(1),
            count: AtomicU64::new(0),
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

    /// The script it serves: the engine's scripted model.
    pub fn script(&self) -> &Arc<Script> {
        &self.shared.script
    }

    /// Queue a reply; replies are served in order, to either endpoint.
    pub fn push(&self, reply: Answer) {
        self.shared.script.push(reply);
    }

    /// Answer every request with `responder` when it has an answer for it (the script
    /// and the fallback serve the rest).
    pub fn set_responder(&self, responder: Responder) {
        *lock(&self.shared.responder) = Some(responder);
    }

    /// What is served once the script is empty.
    pub fn set_fallback(&self, reply: Answer) {
        self.shared.script.set_fallback(reply);
    }

    /// Make every reply wait `delay` before its first byte.
    pub fn set_delay(&self, delay: Duration) {
        self.shared.script.set_delay(delay);
    }

    /// Keep (the default) or stop keeping the requests that arrive; while off, they are
    /// still counted by `request_count` but not stored.
    pub fn set_recording(&self, on: bool) {
        self.shared.script.set_recording(on);
    }

    /// Replies still queued.
    pub fn remaining(&self) -> usize {
        self.shared.script.remaining()
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

    /// The environment that points a model client here, speaking `api` ("responses"
    /// or "chat"), with a test key, no reasoning and the model `scripted`: what a
    /// config or a `kotoba` process is given.
    pub fn env(&self, api: &str) -> Vec<(&'static str, String)> {
        vec![
            ("KOTOBA_LLM_BASE_URL", self.base_url()),
            ("KOTOBA_LLM_API", api.to_string()),
            ("OPENAI_API_KEY", "test-key".to_string()),
            ("KOTOBA_REASONING_EFFORT", "off".to_string()),
            ("KOTOBA_MODEL", "scripted".to_string()),
        ]
    }

    /// A config for a data folder `home` with [`ScriptedModel::env`] and `extra`.
    pub fn config_with(&self, home: &Path, api: &str, extra: &[(&str, &str)]) -> Arc<Config> {
        let env = self.env(api);
        let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.extend_from_slice(extra);
        Config::for_home(home, &all)
    }

    /// A config for a data folder `home` pointing the model client here, speaking
    /// `api` ("responses" or "chat"), with a test key and no reasoning.
    pub fn config_for(&self, home: &Path, api: &str) -> Arc<Config> {
        self.config_with(home, api, &[])
    }
}

impl Shared {
    fn take(&self, path: &str, headers: &HeaderMap, body: &Bytes) -> (Answer, Value, Duration) {
        let body: Value = serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        self.count.fetch_add(1, Ordering::Relaxed);
        if self.script.record.load(Ordering::Relaxed) {
            lock(&self.seen).push(Seen {
                path: path.to_string(),
                body: body.clone(),
                authorization,
            });
        }
        let fixed = self.script.delay();
        let responder = lock(&self.responder).clone();
        if let Some((reply, wait)) = responder.and_then(|r| r(&body)) {
            return (reply, body, wait.max(fixed));
        }
        (self.script.next(), body, fixed)
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
    match serve(reply) {
        Served::Stream(wire) => {
            let model = req.get("model").cloned().unwrap_or(Value::Null);
            sse(responses_events(&shared, &model, &wire))
        }
        Served::Done(resp) => resp,
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
    match serve(reply) {
        Served::Stream(wire) => {
            let model = req.get("model").cloned().unwrap_or(Value::Null);
            sse(chat_chunks(&shared, &model, &wire))
        }
        Served::Done(resp) => resp,
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

fn responses_events(shared: &Shared, model: &Value, wire: &Wire) -> Vec<String> {
    let (text, calls, truncated) = (wire.text.as_str(), &wire.calls, wire.truncated);
    let resp_id = shared.id("resp");
    let mut out = Vec::new();
    let mut output = Vec::new();
    out.push(event(
        "response.created",
        json!({ "response": { "id": resp_id, "model": model, "status": "in_progress", "output": [] } }),
    ));
    for raw in &wire.reasoning {
        let id = shared.id("rs");
        let mut item = json!({
            "type": "reasoning", "id": id, "summary": [],
            "encrypted_content": format!("opaque-{id}-ciphertext"),
        });
        // What the script's item says wins over the made-up fields.
        if let (Some(item), Some(raw)) = (item.as_object_mut(), raw.as_object()) {
            item.extend(raw.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
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

fn chat_chunks(shared: &Shared, model: &Value, wire: &Wire) -> Vec<String> {
    let (text, calls, truncated) = (wire.text.as_str(), &wire.calls, wire.truncated);
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

/// A scripted model's thread and runtime of its own: [`ScriptedModel::start_apart`].
pub use thread::Apart as ServerThread;

impl ScriptedModel {
    /// Start the server on an OS thread and runtime of its own (benchmarks measure the
    /// engine's thread apart from the server's); returns it with the handle that stops it.
    pub fn start_apart() -> (ScriptedModel, ServerThread) {
        thread::apart("model-server", ScriptedModel::start)
    }
}
