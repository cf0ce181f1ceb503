//! The Tool trait, its declared spec (name, family, risk, step_kind, timeout, scope,
//! default lines, schema) and the registry the loop offers from. One file per family.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use kotoba_core::config::Settings;
use kotoba_core::protocol::{Channel, Frame, Mode, Origin, Person, Register, StepKind};
use kotoba_core::turn::TurnContext;
use kotoba_store::Store;

pub mod args;
pub mod ask;
pub mod builtin;
pub mod code;
pub mod cron;
pub mod delegate;
pub mod discord;
pub mod files;
pub mod forget_me;
pub mod memory;
pub mod output;
pub mod patch;
pub mod plan;
pub mod port;
pub mod process;
pub mod recall;
pub mod secrets;
pub mod shell;
pub mod skills;
pub mod source;
pub mod spec;
pub mod web;
pub mod work;

pub use output::{Ended, ToolOutput};
pub use source::ToolSource;
pub use spec::{
    Behaviour, CapGroup, Gating, MayAnswer, Prepared, Scope, ToolLines, ToolSpec, ASKER_ALONE,
    OUTPUT_CAP,
};

/// Paths a tool may need.
#[derive(Debug, Clone)]
pub struct ToolPaths {
    /// The data folder (`KOTOBA_HOME`).
    pub home: PathBuf,
    /// The workspace folder file tools are confined to.
    pub workspace: PathBuf,
}

/// Puts a frame on the calling turn's session bus, stamped with the turn's run_id. A
/// tool emits its own extra frames through it (artifact, task_list, link_card).
#[derive(Clone)]
pub struct FrameSink(Arc<dyn Fn(Frame) + Send + Sync>);

impl FrameSink {
    /// A sink that hands every frame to `f`.
    pub fn new(f: impl Fn(Frame) + Send + Sync + 'static) -> Self {
        FrameSink(Arc::new(f))
    }

    /// Emit one frame.
    pub fn emit(&self, frame: Frame) {
        (self.0)(frame)
    }
}

impl fmt::Debug for FrameSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FrameSink")
    }
}

/// What a tool knows about the call it serves: the turn it belongs to (whom it speaks
/// for, its axes, its job), shared as an `Arc` and never copied field by field, and
/// what this one call needs besides. Who is asking is `turn.person`, never a map.
#[derive(Clone)]
pub struct ToolContext {
    /// The turn this call serves (docs/engine.md §1): set once when the turn was
    /// created; a deferred run or a job keeps the turn that drew it.
    pub turn: Arc<TurnContext>,
    /// This call's id (the row id).
    pub call_id: String,
    /// Data folder and workspace.
    pub paths: Arc<ToolPaths>,
    /// The engine, for tools that start jobs, run helpers or ask the person.
    pub engine: Option<Arc<dyn port::EnginePort>>,
    /// Unlocked secrets as environment variables for shell and code runs (name, value),
    /// read at the call: a secret unlocked by an earlier call of the turn is here.
    pub secret_env: Arc<Vec<(String, String)>>,
    /// The turn's live settings.
    pub settings: Arc<Settings>,
    /// Where the tool's own frames go (`None` outside a turn: they are dropped).
    pub frames: Option<FrameSink>,
    /// The durable store (session_search, reminders), when the engine has one.
    pub store: Option<Arc<Store>>,
    /// The reminder clock and scheduler's wake-up (cronjob), when the engine runs one.
    pub reminders: Option<Arc<cron::Reminders>>,
    /// Who approved this call on its card, when a card was answered for it.
    pub approved_by: Option<String>,
}

impl ToolContext {
    /// A context outside any turn (tests, tools driven directly): text/text, the owner's
    /// own surface, no engine, no sink, no store, default settings, depth 0, no secrets.
    pub fn bare(
        session: &str,
        mode: Mode,
        home: &std::path::Path,
        workspace: &std::path::Path,
    ) -> ToolContext {
        let turn = TurnContext {
            mode,
            ..TurnContext::companion(
                session,
                Person::owner("local"),
                (Register::Text, Channel::Text, Some(false)),
                None,
            )
        };
        ToolContext::of(Arc::new(turn), home, workspace)
    }

    /// A context for `turn` outside the engine (tests, tools driven directly): no
    /// engine, no sink, no store, default settings, no secrets.
    pub fn of(
        turn: Arc<TurnContext>,
        home: &std::path::Path,
        workspace: &std::path::Path,
    ) -> ToolContext {
        ToolContext {
            turn,
            call_id: "c1".into(),
            paths: Arc::new(ToolPaths {
                home: home.to_path_buf(),
                workspace: workspace.to_path_buf(),
            }),
            engine: None,
            secret_env: Arc::default(),
            settings: Arc::default(),
            frames: None,
            store: None,
            reminders: None,
            approved_by: None,
        }
    }

    /// The session the call's turn runs in.
    pub fn session(&self) -> &str {
        self.turn.session.as_str()
    }

    /// Where the person the turn speaks for spoke from.
    pub fn origin(&self) -> &Origin {
        &self.turn.person.origin
    }

    /// Emit a frame on the turn's bus; dropped when the context has no sink.
    pub fn emit(&self, frame: Frame) {
        if let Some(sink) = &self.frames {
            sink.emit(frame);
        }
    }

    /// The hidden announce turn (`__work_done__`): a conversation turn, never a job.
    pub fn is_announce_turn(&self) -> bool {
        self.turn.is_announce_turn()
    }
}

/// What the availability check may look at.
#[derive(Debug, Clone)]
pub struct Availability<'a> {
    /// Companion or work.
    pub mode: Mode,
    /// The last three user messages of the session, newest first.
    pub recent_user_messages: &'a [String],
    /// The live settings of this turn.
    pub settings: &'a Settings,
    /// Where the person the turn speaks for spoke from.
    pub origin: &'a Origin,
}

/// One tool. Implementations live one family per file in this folder.
#[async_trait]
pub trait Tool: Send + Sync {
    /// What it declares.
    fn spec(&self) -> &ToolSpec;

    /// Whether it can be offered right now (a port registered, a key set, …).
    fn available(&self, _ctx: &Availability<'_>) -> bool {
        true
    }

    /// The action line for a row, from the real arguments (engine.md §3).
    fn action_line(&self, args: &Value) -> String {
        default_action_line(self.spec(), args)
    }

    /// For a [`Gating::Card`] tool: read the call before its card (it may look things
    /// up and refuse parts of it). By default the card shows the action line.
    async fn prepare(&self, args: &Value, _ctx: &ToolContext) -> Prepared {
        Prepared::Ask {
            action: self.action_line(args),
            may_answer: None,
        }
    }

    /// True when one failure withdraws the tool for the rest of the turn (web_extract).
    fn withdraw_after_failure(&self) -> bool {
        false
    }

    /// Run it. Bad arguments → `ToolOutput::refused` with a sentence naming the problem.
    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput;
}

/// Cut `s` to at most `max` characters, adding ` …` when cut.
pub fn clip_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push_str(" …");
    out
}

/// The action line by the rules of engine.md §3: shell `$ cmd` (≤200 chars), code
/// `python> first line` (+ ` …`), file tools `name path`, web `name url-or-query`,
/// otherwise the tool name.
pub fn default_action_line(spec: &ToolSpec, args: &Value) -> String {
    let s = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match spec.step_kind {
        StepKind::Shell => format!("$ {}", clip_chars(&s("command"), 200)),
        StepKind::Code => {
            let code = s("code");
            let mut lines = code.lines().filter(|l| !l.trim().is_empty());
            let first = lines.next().unwrap_or("").to_string();
            let more = if lines.next().is_some() { " …" } else { "" };
            format!("python> {}{more}", clip_chars(&first, 200))
        }
        StepKind::File => format!("{} {}", spec.name, s("path"))
            .trim_end()
            .to_string(),
        StepKind::Web => {
            let target = ["url", "query"]
                .iter()
                .map(|k| s(k))
                .find(|v| !v.is_empty());
            format!("{} {}", spec.name, target.unwrap_or_default())
                .trim_end()
                .to_string()
        }
        _ => spec.name.clone(),
    }
}

/// Notes a tool family adds to a turn's system prompt (what she remembers about the
/// people in the conversation): information for her, never instructions.
#[async_trait::async_trait]
pub trait TurnNotes: Send + Sync {
    /// The notes for a turn in `session` from `origin` saying `text`, if any.
    async fn notes(&self, turn: &TurnContext, store: &Store) -> Option<String>;
}

/// The tools the engine can offer, in a stable order, and the source (MCP) whose
/// tools (`server__tool`) come and go while the process runs.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    source: Option<Arc<dyn ToolSource>>,
    notes: Vec<Arc<dyn TurnNotes>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Add a tool (a later tool of the same name replaces the earlier one).
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.spec().name.clone();
        self.tools.retain(|t| t.spec().name != name);
        self.tools.push(tool);
    }

    /// Look a tool up by name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.spec().name == name)
    }

    /// Every tool, in registration order.
    pub fn all(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// Attach the source of tools that come and go (see `mcp::register`).
    pub fn set_source(&mut self, source: Arc<dyn ToolSource>) {
        self.source = Some(source);
    }

    /// The source of tools that come and go, when one is attached.
    pub fn source(&self) -> Option<&Arc<dyn ToolSource>> {
        self.source.as_ref()
    }

    /// Add a source of prompt notes.
    pub fn add_notes(&mut self, notes: Arc<dyn TurnNotes>) {
        self.notes.push(notes);
    }

    /// Every note the sources have for this turn.
    pub async fn notes(&self, turn: &TurnContext, store: &Store) -> Vec<String> {
        let mut out = Vec::new();
        for n in &self.notes {
            out.extend(n.notes(turn, store).await);
        }
        out
    }

    /// A tool by name: a registered one, else a live tool of the source.
    pub fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.get(name)
            .cloned()
            .or_else(|| self.source.as_ref().and_then(|m| m.tool(name)))
    }
}

/// Helpers shared by the tool families' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::{Arc, Mutex};

    use super::{FrameSink, ToolContext};
    use kotoba_core::protocol::Frame;

    /// Give `ctx` a sink that records every frame; the list it fills.
    pub(crate) fn record_frames(ctx: &mut ToolContext) -> Arc<Mutex<Vec<Frame>>> {
        let seen: Arc<Mutex<Vec<Frame>>> = Arc::default();
        let into = seen.clone();
        ctx.frames = Some(FrameSink::new(move |f| into.lock().unwrap().push(f)));
        seen
    }
}
