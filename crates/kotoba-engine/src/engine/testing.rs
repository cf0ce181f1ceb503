//! The engine's test rig, for its own tests and (with the `testing` feature) for the
//! tests of the crates above: a model that answers from a script, fake tools, an engine
//! built on a test store, and readers of the frames a turn emits.

// Test support: a failed set-up is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use super::*;
use crate::llm::{LlmError, ModelReply, ModelRequest, ToolCall};
use crate::tools::{Availability, Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::*;

/// A model that answers from a script and records what it was sent: the one scripted
/// model of every test. The engine's tests ask it through [`ModelClient`]; the loopback
/// model server of the integration tests (`crates/kotoba-testkit/src/model_server.rs`) serves the
/// same script's replies over both OpenAI wire protocols.
///
/// A reply is a `Result<ModelReply, LlmError>`. Over the wire an error is served as the
/// provider would show it: `Http` as that status and body, `RateLimited` as a 429 (with
/// its Retry-After), `Stream(words)` as those words streamed and then the end of the
/// body with no completion, `Malformed(body)` as a 200 event stream of exactly `body`.
pub struct Script {
    pub replies: Mutex<VecDeque<Result<ModelReply, LlmError>>>,
    /// Replies for requests of a background job (brief first) and of helpers.
    pub job_replies: Mutex<VecDeque<Result<ModelReply, LlmError>>>,
    pub helper_replies: Mutex<VecDeque<Result<ModelReply, LlmError>>>,
    pub sent: Mutex<Vec<ModelRequest>>,
    /// A window the scripted model enforces: a longer request is answered "context too
    /// long", as a provider would.
    pub window: Mutex<Option<usize>>,
    /// What is answered once a queue is empty.
    pub fallback: Mutex<Result<ModelReply, LlmError>>,
    /// How long every reply waits before it is given (a model's fixed latency).
    pub delay: Mutex<Duration>,
    /// Whether requests are kept in `sent` (a benchmark turns it off so the log does not
    /// grow with every turn it measures).
    pub record: AtomicBool,
}

impl Default for Script {
    fn default() -> Script {
        Script {
            replies: Mutex::default(),
            job_replies: Mutex::default(),
            helper_replies: Mutex::default(),
            sent: Mutex::default(),
            window: Mutex::default(),
            fallback: Mutex::new(Ok(say("(script ended)"))),
            delay: Mutex::default(),
            record: AtomicBool::new(true),
        }
    }
}

impl Script {
    pub fn new(replies: Vec<Result<ModelReply, LlmError>>) -> Arc<Script> {
        Arc::new(Script {
            replies: Mutex::new(replies.into()),
            ..Script::default()
        })
    }
    pub fn sent(&self) -> Vec<ModelRequest> {
        lock(&self.sent).clone()
    }
    /// Queue a reply (to the conversation's queue).
    pub fn push(&self, reply: Result<ModelReply, LlmError>) {
        lock(&self.replies).push_back(reply);
    }
    /// What is answered once the script is empty.
    pub fn set_fallback(&self, reply: Result<ModelReply, LlmError>) {
        *lock(&self.fallback) = reply;
    }
    /// Make every reply wait `delay` before it is given.
    pub fn set_delay(&self, delay: Duration) {
        *lock(&self.delay) = delay;
    }
    pub fn delay(&self) -> Duration {
        *lock(&self.delay)
    }
    /// Keep (the default) or stop keeping the requests in `sent`.
    pub fn set_recording(&self, on: bool) {
        self.record.store(on, Ordering::Relaxed);
    }
    /// Replies still queued for the conversation.
    pub fn remaining(&self) -> usize {
        lock(&self.replies).len()
    }
    /// The next reply of the conversation's queue, or the fallback.
    pub fn next(&self) -> Result<ModelReply, LlmError> {
        self.next_of(&self.replies)
    }
    fn next_of(
        &self,
        queue: &Mutex<VecDeque<Result<ModelReply, LlmError>>>,
    ) -> Result<ModelReply, LlmError> {
        let next = lock(queue).pop_front();
        next.unwrap_or_else(|| lock(&self.fallback).clone())
    }
}

/// A test's lock: a panic elsewhere does not poison the script for the rest.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[async_trait]
impl ModelClient for Script {
    async fn stream(
        &self,
        req: &ModelRequest,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, LlmError> {
        // A slow model thinks first: a request cut while it waits was never answered.
        let delay = self.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if self.record.load(Ordering::Relaxed) {
            lock(&self.sent).push(req.clone());
        }
        let window = *lock(&self.window);
        if window.is_some_and(|w| crate::llm::tokens::Tokenizer::O200k.request(req) > w) {
            return Err(LlmError::ContextTooLong);
        }
        if req
            .system
            .starts_with(super::context::summarise::SUMMARISER)
        {
            return Ok(summary_by_rule(req));
        }
        let first = req.items.iter().find_map(|i| match i {
            Item::User { text } => Some(text.as_str()),
            _ => None,
        });
        let queue = match first {
            Some(t) if t.starts_with("Goal of this background job") => &self.job_replies,
            Some(t) if t.starts_with("You are a helper") => &self.helper_replies,
            _ => &self.replies,
        };
        let reply = self.next_of(queue)?;
        let text = reply.text();
        if !text.is_empty() {
            let _ = deltas.send(text);
        }
        Ok(reply)
    }
}

/// The scripted summariser: every line of what it is given that holds "remember",
/// verbatim and once each, oldest first.
pub fn summary_by_rule(req: &ModelRequest) -> ModelReply {
    let mut kept: Vec<String> = Vec::new();
    for item in req.items.iter() {
        if let Item::User { text } = item {
            for line in text.lines().filter(|l| l.contains("remember")) {
                let line = line.trim().to_string();
                if !kept.contains(&line) {
                    kept.push(line);
                }
            }
        }
    }
    say(&format!("Summary: {}", kept.join(" | ")))
}

pub fn say(text: &str) -> ModelReply {
    ModelReply {
        items: vec![Item::Assistant { text: text.into() }],
        ..Default::default()
    }
}

pub fn call(name: &str, args: Value) -> Result<ModelReply, LlmError> {
    calls(&[(name, args)])
}

pub fn calls(list: &[(&str, Value)]) -> Result<ModelReply, LlmError> {
    static N: AtomicUsize = AtomicUsize::new(0);
    Ok(ModelReply {
        items: list
            .iter()
            .map(|(name, args)| {
                Item::ToolCall(ToolCall {
                    call_id: format!("call_{}", N.fetch_add(1, Ordering::SeqCst)),
                    name: name.to_string(),
                    arguments: args.to_string(),
                    raw: None,
                })
            })
            .collect(),
        ..Default::default()
    })
}

/// A tool whose behaviour the test sets.
pub struct Fake {
    pub spec: ToolSpec,
    output: ToolOutput,
    delay: Duration,
    available: bool,
    pub runs: Arc<AtomicUsize>,
    /// The arguments of every run, in order.
    pub seen: Arc<std::sync::Mutex<Vec<Value>>>,
    /// Whom each run acted for (its turn's person), in order.
    pub people: Arc<std::sync::Mutex<Vec<kotoba_core::protocol::Person>>>,
    /// The session each run's turn ran in, as its turn carried it, in order.
    pub sessions: Arc<std::sync::Mutex<Vec<kotoba_core::session::SessionId>>>,
}

pub fn fake(name: &str, risk: Risk) -> Fake {
    Fake {
        spec: ToolSpec {
            name: name.into(),
            description: format!("the {name} tool"),
            family: name.into(),
            risk,
            step_kind: StepKind::for_tool(name),
            timeout: None,
            takes_timeout_arg: false,
            scope: Scope::Both,
            lines: ToolLines {
                announce: Some(format!("announcing {name}")),
                heartbeat: vec!["beat one".into(), "beat two".into()],
                after: Some(format!("{name} done")),
                fail: Some(format!("{name} failed")),
            },
            parameters: json!({"type": "object"}),
            // A fake behaves as the real tool of its name declares (shell's gate, …).
            behaviour: crate::tools::builtin::builtin_registry()
                .get(name)
                .map(|t| t.spec().behaviour.clone())
                .unwrap_or_default(),
        },
        output: ToolOutput::ok(format!("{name} output")),
        delay: Duration::ZERO,
        available: true,
        runs: Arc::new(AtomicUsize::new(0)),
        seen: Arc::default(),
        people: Arc::default(),
        sessions: Arc::default(),
    }
}

impl Fake {
    pub fn output(mut self, o: ToolOutput) -> Self {
        self.output = o;
        self
    }
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
    pub fn scope(mut self, s: Scope) -> Self {
        self.spec.scope = s;
        self
    }
    pub fn family(mut self, f: &str) -> Self {
        self.spec.family = f.into();
        self
    }
    pub fn unavailable(mut self) -> Self {
        self.available = false;
        self
    }
    pub fn timeout_arg(mut self) -> Self {
        self.spec.takes_timeout_arg = true;
        self
    }
}

#[async_trait]
impl Tool for Fake {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn available(&self, _ctx: &Availability<'_>) -> bool {
        self.available
    }
    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(args);
        self.people.lock().unwrap().push(ctx.turn.person.clone());
        self.sessions.lock().unwrap().push(ctx.turn.session.clone());
        tokio::time::sleep(self.delay).await;
        self.output.clone()
    }
}

pub struct Rig {
    pub engine: Arc<Engine>,
    pub script: Arc<Script>,
    pub _home: tempfile::TempDir,
}

pub fn rig_with(
    replies: Vec<Result<ModelReply, LlmError>>,
    tools: Vec<Fake>,
    env: &[(&str, &str)],
    settings: &str,
) -> Rig {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("settings.yaml"), settings).unwrap();
    let mut env = env.to_vec();
    if !env.iter().any(|(k, _)| *k == "KOTOBA_REASONING_EFFORT") {
        env.push(("KOTOBA_REASONING_EFFORT", "off"));
    }
    let config = Config::for_home(home.path(), &env);
    let script = Script::new(replies);
    let mut reg = Registry::new();
    for t in tools {
        reg.register(Arc::new(t));
    }
    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let engine = Engine::new(config, script.clone(), reg, Soul::shipped(), store);
    Rig {
        engine,
        script,
        _home: home,
    }
}

/// An engine on `store` (one process of several sharing it), no tools, the replies
/// scripted.
pub fn rig_on(store: Arc<Store>, replies: Vec<Result<ModelReply, LlmError>>) -> Rig {
    let home = tempfile::tempdir().unwrap();
    let config = Config::for_home(home.path(), &[("KOTOBA_REASONING_EFFORT", "off")]);
    let script = Script::new(replies);
    let engine = Engine::new(
        config,
        script.clone(),
        Registry::new(),
        Soul::shipped(),
        store,
    );
    Rig {
        engine,
        script,
        _home: home,
    }
}

pub fn rig(replies: Vec<Result<ModelReply, LlmError>>, tools: Vec<Fake>) -> Rig {
    rig_with(replies, tools, &[], "")
}

pub fn drain(rx: &mut broadcast::Receiver<Arc<Event>>) -> Vec<Frame> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        out.push(ev.frame.clone());
    }
    out
}

pub fn steps(frames: &[Frame]) -> Vec<StepRow> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Step(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

pub fn says(frames: &[Frame]) -> Vec<(SayKind, String)> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Say { kind, text } => Some((*kind, text.clone())),
            _ => None,
        })
        .collect()
}

pub fn tool_results(req: &ModelRequest) -> Vec<String> {
    req.items
        .iter()
        .filter_map(|i| match i {
            Item::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

/// An owner's turn on Discord in `session` with `words`, `el_call_bound` as given: what
/// starts a job in these tests (its cards go to the configured owners).
pub fn starter(
    session: &str,
    words: Option<&str>,
    el_call_bound: Option<bool>,
) -> kotoba_core::turn::TurnContext {
    let owner = kotoba_core::protocol::Person {
        origin: kotoba_core::protocol::Origin::Discord {
            user: 1,
            owner: true,
        },
        author: "ann (1)".into(),
        granted: Vec::new(),
    };
    kotoba_core::turn::TurnContext::companion(
        session,
        owner,
        (Register::Text, Channel::Text, el_call_bound),
        words.map(str::to_string),
    )
}

/// The owner's turn at their own surface (the terminal) in `session`.
pub fn local_starter(session: &str) -> kotoba_core::turn::TurnContext {
    kotoba_core::turn::TurnContext {
        person: kotoba_core::protocol::Person::owner("you"),
        ..starter(session, None, Some(false))
    }
}

pub fn text_turn(text: &str) -> TurnRequest {
    TurnRequest::text(kotoba_core::protocol::Origin::Owner, "s1", "ann", text)
}

pub fn voice_turn(text: &str) -> TurnRequest {
    TurnRequest {
        register: Register::Voice,
        channel: Channel::Voice,
        ..TurnRequest::text(kotoba_core::protocol::Origin::Owner, "s1", "ann", text)
    }
}

/// The next card drawn on the session (a turn that never asks fails the test at the
/// timeout instead of hanging it).
pub async fn next_card(rx: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<Event>>) -> Card {
    let wait = async {
        loop {
            if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
                return (**c).clone();
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(600), wait)
        .await
        .expect("a card")
}
