//! The web server under test: the real router (page, API, /v1) on 127.0.0.1:0 over a
//! real engine whose model is the scripted loopback server; an SSE reader for the
//! page's event stream and /v1 streams; a fake `shell` that counts its runs.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kotoba::engine::Engine;
use kotoba::llm::OpenAiClient;
use kotoba::protocol::{Risk, StepKind};
use kotoba::soul::Soul;
use kotoba::store::Store;
use kotoba::surfaces::web::WebOptions;
use kotoba::tools::builtin::builtin_registry;
use kotoba::tools::{Registry, Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::model_server::ScriptedModel;

/// The /v1 key every rig is started with.
pub const KEY: &str = "test-v1-key";

/// The page's token every rig and every `kotoba serve` child is started with
/// (`KOTOBA_WEB_TOKEN`).
pub const WEB_TOKEN: &str = "test-web-token-5f1d0c2b9a";

/// An HTTP client that sends the page's token on every request (a request that names
/// its own `Authorization`, as /v1 calls do, keeps it).
pub fn client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {WEB_TOKEN}").parse().unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// An HTTP client with no token that does not follow redirects (a login's 303 and its
/// cookie are seen as they come).
pub fn plain() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// GET a page route of the server at `base` with the token.
pub async fn get_with_token(url: &str) -> reqwest::Response {
    client().get(url).send().await.unwrap()
}

/// A running server.
pub struct WebRig {
    /// The scripted model the engine asks.
    pub model: ScriptedModel,
    /// The engine the server serves.
    pub engine: Arc<Engine>,
    /// The server's base URL (`http://127.0.0.1:<port>`).
    pub base: String,
    /// Cancelled to shut the server down.
    pub shutdown: CancellationToken,
    /// The server's task (taken when it is awaited).
    pub task: Option<JoinHandle<anyhow::Result<()>>>,
    /// A client that keeps cookies.
    pub http: reqwest::Client,
    /// The data folder.
    pub home: tempfile::TempDir,
}

impl Drop for WebRig {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.engine.shutdown();
    }
}

/// Options with the test key and token; everything else default.
pub fn options() -> WebOptions {
    WebOptions {
        api_key: Some(KEY.to_string()),
        token: Some(WEB_TOKEN.to_string()),
        ..WebOptions::default()
    }
}

/// Start a server with `options` and the built-in tools plus `extra` (a later tool of
/// the same name replaces the built-in one).
pub async fn start_with(options: WebOptions, extra: Vec<Arc<dyn Tool>>) -> WebRig {
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = model.config_for(home.path(), "responses");
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let client = Arc::new(OpenAiClient::new(config.clone()));
    let mut registry: Registry = builtin_registry();
    for t in extra {
        registry.register(t);
    }
    let engine = Engine::new(config, client, registry, Soul::shipped(), store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(kotoba::surfaces::http::serve(
        engine.clone(),
        options,
        listener,
        shutdown.clone(),
    ));
    WebRig {
        model,
        engine,
        base,
        shutdown,
        task: Some(task),
        http: self::client(),
        home,
    }
}

/// Start with the test options and the built-in tools.
pub async fn start() -> WebRig {
    start_with(options(), Vec::new()).await
}

impl WebRig {
    /// The server's URL for `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Recognise with the OpenAI-compatible speech server at `base` and speak with
    /// `tts` (`openai` there, or `espeak`), through the live settings.yaml.
    pub fn speak_with(&self, base: &str, tts: &str) {
        std::fs::write(
            self.home.path().join("settings.yaml"),
            format!(
                "stt:\n  provider: openai\n  base_url: {base}\ntts:\n  provider: {tts}\n  base_url: {base}\n"
            ),
        )
        .unwrap();
    }

    /// The workspace folder inside the data folder.
    pub fn workspace(&self) -> PathBuf {
        self.home.path().join("workspace")
    }

    /// Open the page's event stream on `session` (the session has a listener once this
    /// returns).
    pub async fn events(&self, session: &str) -> Sse {
        let resp = self
            .http
            .get(self.url(&format!("/api/events?session={session}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        Sse::new(resp)
    }

    /// GET `path` and read its JSON body.
    pub async fn get_json(&self, path: &str) -> Value {
        self.http
            .get(self.url(path))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// POST JSON to the page's API.
    pub async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.http
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// A /v1 chat completion request builder with the right key.
    pub fn v1(&self, body: Value) -> reqwest::RequestBuilder {
        self.http
            .post(self.url("/v1/chat/completions"))
            .bearer_auth(KEY)
            .json(&body)
    }

    /// Type a message on the page.
    pub async fn say(&self, session: &str, text: &str) {
        let r = self
            .post("/api/message", json!({"session": session, "text": text}))
            .await;
        assert_eq!(r.status(), 202);
    }
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// Its `event:` name, if any.
    pub event: Option<String>,
    /// Its `data:` lines joined.
    pub data: String,
}

impl SseEvent {
    /// Its data as JSON (`null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

/// A reader of `text/event-stream` bodies.
pub struct Sse {
    resp: reqwest::Response,
    buf: String,
}

impl Sse {
    /// Read the event stream of `resp`.
    pub fn new(resp: reqwest::Response) -> Sse {
        Sse {
            resp,
            buf: String::new(),
        }
    }

    /// The next event with data (comments skipped); `None` at the end of the body.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(i) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..i + 2).collect();
                let mut event = None;
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = Some(v.trim().to_string());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some(SseEvent {
                    event,
                    data: data.join("\n"),
                });
            }
            match self.resp.chunk().await {
                Ok(Some(bytes)) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }

    /// The next event within 10 s; panics on a timeout.
    pub async fn next_within(&mut self) -> Option<SseEvent> {
        tokio::time::timeout(Duration::from_secs(10), self.next())
            .await
            .expect("an event within 10 s")
    }

    /// Frames (JSON) up to and including the first one `stop` accepts.
    pub async fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let ev = self.next_within().await.expect("the stream ended early");
            let v = ev.json();
            let done = stop(&v);
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// Every event left until the body ends (10 s at most).
    pub async fn rest(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        while let Some(ev) = self.next_within().await {
            out.push(ev);
        }
        out
    }
}

/// Frames of one type.
pub fn of_type<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["type"] == kind).collect()
}

/// A stand-in for `shell` (same name, risk and kind, so the gate treats it the same):
/// it records each command it runs and answers with `output`.
pub struct FakeShell {
    spec: ToolSpec,
    /// How many commands it ran.
    pub runs: Arc<AtomicUsize>,
    /// Each command it ran, in order.
    pub commands: Arc<Mutex<Vec<String>>>,
    output: String,
}

impl FakeShell {
    /// A shell that answers every command with `output` (exit 0).
    pub fn new(output: &str) -> FakeShell {
        FakeShell {
            spec: ToolSpec {
                name: "shell".into(),
                description: "Run one shell command.".into(),
                family: "terminal".into(),
                risk: Risk::Exec,
                step_kind: StepKind::Shell,
                timeout: None,
                takes_timeout_arg: true,
                scope: Scope::Both,
                lines: ToolLines::default(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
                behaviour: kotoba::tools::Behaviour {
                    gating: kotoba::tools::Gating::Command("command"),
                    deferrable: true,
                    ..Default::default()
                },
            },
            runs: Arc::new(AtomicUsize::new(0)),
            commands: Arc::new(Mutex::new(Vec::new())),
            output: output.to_string(),
        }
    }

    /// How many commands a shell with the counter `runs` ran.
    pub fn run_count(runs: &AtomicUsize) -> usize {
        runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for FakeShell {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> ToolOutput {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let cmd = args["command"].as_str().unwrap_or("").to_string();
        self.commands.lock().unwrap().push(cmd);
        ToolOutput::exited(0, self.output.clone())
    }
}

/// A read tool that takes `delay` (to make a /v1 stream go quiet).
pub struct SlowRead {
    spec: ToolSpec,
    delay: Duration,
}

impl SlowRead {
    /// A read tool that answers after `delay`.
    pub fn new(delay: Duration) -> SlowRead {
        SlowRead {
            spec: ToolSpec {
                name: "slow_lookup".into(),
                description: "Look something up slowly.".into(),
                family: "test".into(),
                risk: Risk::Read,
                step_kind: StepKind::Tool,
                timeout: None,
                takes_timeout_arg: false,
                scope: Scope::Both,
                lines: ToolLines::default(),
                parameters: json!({"type": "object", "properties": {}}),
                behaviour: Default::default(),
            },
            delay,
        }
    }
}

#[async_trait]
impl Tool for SlowRead {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, _args: Value, _ctx: &ToolContext) -> ToolOutput {
        tokio::time::sleep(self.delay).await;
        ToolOutput::ok("found it")
    }
}
