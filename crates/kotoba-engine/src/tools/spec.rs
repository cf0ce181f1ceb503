//! What a tool declares about itself — its name, schema, risk, scope, default lines and
//! its behaviour (how the gate treats it, whether a guest may be offered it, its face,
//! its output cap, its cap group) — so the engine reads declarations and names no tool.

use std::time::Duration;

use serde_json::Value;

use kotoba_core::protocol::{Risk, StepKind};

/// The cap on tool output fed to the model and carried on a row, unless a tool
/// declares another (docs/engine.md §3).
pub const OUTPUT_CAP: usize = 16_000;

/// Where a tool may be offered (engine.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Companion turns and work jobs alike.
    Both,
    /// Only in a conversation (start_work, cancel_work).
    CompanionOnly,
    /// Only in a background job (delegate, mcp_*, secrets, MCP server tools).
    WorkOnly,
}

/// A tool's default narration lines; the soul file may override each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolLines {
    /// Said once per turn before it runs (voice register, non-reasoning model).
    pub announce: Option<String>,
    /// Said while it runs, in order, the last repeated.
    pub heartbeat: Vec<String>,
    /// Said after it ran ok.
    pub after: Option<String>,
    /// Said after it failed.
    pub fail: Option<String>,
}

impl ToolLines {
    /// Lines from plain strings: announce, heartbeats in order, after, fail.
    pub fn of(announce: &str, heartbeat: &[&str], after: &str, fail: &str) -> ToolLines {
        ToolLines {
            announce: Some(announce.to_string()),
            heartbeat: heartbeat.iter().map(|h| h.to_string()).collect(),
            after: Some(after.to_string()),
            fail: Some(fail.to_string()),
        }
    }
}

/// Everything a tool declares about itself.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: String,
    /// What the model is told it does.
    pub description: String,
    /// Its toolset (family), switchable off in settings.
    pub family: String,
    /// Read, write, exec or network.
    pub risk: Risk,
    /// How its rows are styled.
    pub step_kind: StepKind,
    /// A declared budget that wins over the 30 s default.
    pub timeout: Option<Duration>,
    /// True when the tool takes a `timeout` argument in seconds (shell, execute_code).
    pub takes_timeout_arg: bool,
    /// Companion, work-only or companion-only.
    pub scope: Scope,
    /// Default narration lines.
    pub lines: ToolLines,
    /// JSON schema of the arguments.
    pub parameters: Value,
    /// What the engine reads to treat it right (gate, guests, face, caps).
    pub behaviour: Behaviour,
}

impl ToolSpec {
    /// The spec most tools of a family share: rows styled by the tool's name, the
    /// default budget (no `timeout` argument), offered in conversations and jobs alike,
    /// and the default behaviour. A family's helper sets what differs (a guest may be
    /// offered it, its own timeout).
    pub fn plain(
        name: &str,
        description: &str,
        family: &str,
        risk: Risk,
        lines: ToolLines,
        parameters: Value,
    ) -> ToolSpec {
        ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            family: family.to_string(),
            risk,
            step_kind: StepKind::for_tool(name),
            timeout: None,
            takes_timeout_arg: false,
            scope: Scope::Both,
            lines,
            parameters,
            behaviour: Behaviour::default(),
        }
    }
}

/// How the gate treats one call of a tool (docs/gate.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gating {
    /// By its risk: a read runs; a write or network call is confined by the tool itself
    /// and recorded as auto-safe; an exec call asks a card naming the tool.
    #[default]
    ByRisk,
    /// The string argument named here is a shell command line, classified as the shell
    /// would run it (auto-safe, ask or dangerous; grants by exact line or family).
    Command(&'static str),
    /// The string argument named here is Python source, classified as code; its family
    /// grant is saved under the tool's name.
    Code(&'static str),
    /// Always a card of its own, whatever the risk (a change to something shared).
    Card,
}

/// Who else may answer a carded tool's card, beyond the session's usual answerers
/// (docs/gate.md): anyone holding one of `anyone_with`, or the asker holding every one of
/// `asker_needs`, as the surface reads it at the press.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MayAnswer {
    /// The id of the person who asked, on their surface.
    pub asker: String,
    /// What the asker must hold, every one, to answer their own card ([`ASKER_ALONE`]:
    /// nothing, it is theirs to answer; empty: the asker may not answer).
    pub asker_needs: Vec<String>,
    /// Holding any one of these lets anyone answer.
    pub anyone_with: Vec<String>,
}

/// The need every asker holds: a card declaring it is its asker's own to answer (what
/// only concerns them, such as erasing what she keeps about them).
pub const ASKER_ALONE: &str = "asker";

/// What a [`Gating::Card`] tool says before its card is shown (`Tool::prepare`).
#[derive(Debug)]
pub enum Prepared {
    /// Ask: the card lists `action`; `may_answer` widens who may answer it.
    Ask {
        /// What the card shows as the action (every change, in order).
        action: String,
        /// Who else may answer, when the tool says so.
        may_answer: Option<MayAnswer>,
    },
    /// Nothing to ask: this is the call's output (bad arguments, everything refused).
    Done(crate::tools::ToolOutput),
}

/// Which per-turn call cap a tool counts against (docs/engine.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CapGroup {
    /// The shared per-tool cap.
    #[default]
    PerTool,
    /// The helper cap: a helper costs a whole sub-loop.
    Helpers,
    /// The web-search cap: searches are paid per call.
    WebSearch,
}

/// What the engine needs to know to treat a tool right, declared by the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behaviour {
    /// How the gate treats a call.
    pub gating: Gating,
    /// True when a turn that cannot block (a voice call's agent turn) may leave this
    /// call's card waiting and end the turn; otherwise the card is asked inline.
    pub deferrable: bool,
    /// True when a guest (not an owner) may be offered it: it touches nothing of the host.
    pub guest: bool,
    /// The face she shows while it runs.
    pub focus_face: &'static str,
    /// The most characters of output the model reads and a row carries.
    pub output_cap: usize,
    /// Which call cap it counts against.
    pub cap_group: CapGroup,
    /// False when a helper (depth 1) must not be offered it: it would start another helper.
    pub for_helpers: bool,
    /// The argument naming the skill it opens, when calling it opens a skill (a job's
    /// step zero is satisfied by opening the matching skill).
    pub opens_skill: Option<&'static str>,
    /// False when a card for it must never offer an "always" (installing third-party
    /// code: a saved yes would let every later install run unseen).
    pub may_always: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            gating: Gating::ByRisk,
            deferrable: false,
            guest: false,
            focus_face: "thinking",
            output_cap: OUTPUT_CAP,
            cap_group: CapGroup::PerTool,
            for_helpers: true,
            opens_skill: None,
            may_always: true,
        }
    }
}

impl Behaviour {
    /// The default behaviour, offered to guests.
    pub fn guest() -> Self {
        Behaviour {
            guest: true,
            ..Behaviour::default()
        }
    }
}
