//! The wire types shared by the engine and every surface: frames, step rows, outcomes,
//! cards and the three axes of a turn. Serialised as stable JSON (snake_case tags);
//! surfaces render these and never invent their own.

use serde::{Deserialize, Serialize};

mod ids;

/// Compute seconds a background job gets when nothing external holds a clock over it
/// (the `work_timeout` setting's default).
pub const WORK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);
/// How long `ask_user` waits in work mode.
pub const ASK_USER_WINDOW: std::time::Duration = std::time::Duration::from_secs(300);
/// How long `clarify` waits in work mode.
pub const CLARIFY_WINDOW: std::time::Duration = std::time::Duration::from_secs(180);

/// What she writes: the written register gets markdown, the spoken one none of it.
/// Read by the system prompt and by narration (engine.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Register {
    /// Chat text: terminal, a written Discord message, the text-only web page.
    Text,
    /// Spoken: web page (default), Discord voice, /v1.
    Voice,
}

/// The approval clock: how long a person gets to answer a card (engine.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// Nothing times the turn out: the roomy window.
    Text,
    /// A live voice turn: tight windows.
    Voice,
}

/// Companion (a conversation turn) or work (a background job's loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A conversation turn: companion caps, companion tools.
    Companion,
    /// A background job: work caps, work tools.
    Work,
}

/// The risk a tool declares; anything but `read` is an action and opens a step row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Looks, changes nothing: a peek frame, no row, auto-safe at the gate.
    Read,
    /// Changes files or memory.
    Write,
    /// Runs a process on the host.
    Exec,
    /// Reaches the network.
    Network,
}

impl Risk {
    /// True for write, exec and network: those open a step row.
    pub fn is_action(self) -> bool {
        !matches!(self, Risk::Read)
    }
}

/// How a client styles a step row (engine.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// `shell`.
    Shell,
    /// `execute_code`.
    Code,
    /// `web_*`.
    Web,
    /// File tools.
    File,
    /// `mcp_*`, `browser__*`, a connected MCP server's tools.
    Mcp,
    /// `skill_*`.
    Skill,
    /// `memory*`.
    Memory,
    /// Everything else.
    Tool,
}

impl StepKind {
    /// The kind a tool name implies, by the rules of engine.md §3.
    pub fn for_tool(name: &str) -> StepKind {
        match name {
            "shell" => StepKind::Shell,
            "execute_code" => StepKind::Code,
            "read_file" | "write_file" | "patch" | "search_files" => StepKind::File,
            n if n.starts_with("web_") => StepKind::Web,
            n if n.starts_with("mcp_") || n.contains("__") => StepKind::Mcp,
            n if n.starts_with("skill_") => StepKind::Skill,
            n if n.starts_with("memory") => StepKind::Memory,
            _ => StepKind::Tool,
        }
    }
}

/// Whether a row is opening or closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The tool started.
    Start,
    /// The tool ended (with an outcome).
    Done,
}

/// How a step ended, decided by witnesses, never by words (engine.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and handed back usable output.
    Ok,
    /// It ran and did not work (not ok, or exit code ≠ 0, 124 on a timeout kill).
    Failed,
    /// It never ran: a gate or the tool itself refused. See [`Ending`].
    Refused,
    /// Deferred: the card is up, the run has not happened yet.
    Pending,
    /// The turn was cut while it ran.
    Interrupted,
}

/// The four endings of a refusal; each has its own sentence and audit approver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The person said no (approver `user`).
    Declined,
    /// The card expired unread (approver `expired`).
    Unanswered,
    /// Nobody could be asked (approver `error`).
    Unreachable,
    /// The card went away when the person spoke over it (approver `dismissed`).
    Dismissed,
    /// The tool refused its own arguments, or a policy refused before any card.
    Policy,
}

/// One step row, as it opens or closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    /// Stable id of the row (the tool call's id); a closing frame reuses it.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// How to style it.
    pub step_kind: StepKind,
    /// The action line written from the real arguments.
    pub action: String,
    /// Start or done.
    pub phase: Phase,
    /// Set on `done`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Set on `done` when the outcome is refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// The trimmed result shown in the row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The whole output behind an expander, capped like the model's copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output: Option<String>,
    /// True when `full_output` was cut; `clipped_note` says by how much.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clipped: bool,
}

/// What kind of narration line a `say` frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SayKind {
    /// Before a tool runs.
    Announce,
    /// While a tool runs (a phrase or a wordless hum).
    Heartbeat,
    /// After a tool ran ok.
    After,
    /// After a tool failed.
    Fail,
}

/// Who may answer a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answerers {
    /// A host card: these owner ids, and the approvers (`discord.approvers`). Both
    /// empty means nobody on Discord can answer.
    Owners {
        /// Owners' Discord user ids from configuration (text on the wire).
        #[serde(with = "ids")]
        ids: Vec<u64>,
        /// Approvers from `discord.approvers`: `user:<id>`, `role:<id>`, or a bare id
        /// that is either (a user's id or one of their roles').
        #[serde(default)]
        approvers: Vec<String>,
    },
    /// A local surface whose person is the owner by construction (the terminal).
    Local,
    /// A card on a shared place (a carded write tool's, declared in its spec): the
    /// session's usual answerers (`owners`, or a `local` surface), anyone holding one of
    /// `anyone_with`, or `asker` when they hold every one of `asker_needs` — what a
    /// presser holds as their surface reads it at the press.
    Holders {
        /// Owners' Discord user ids from configuration (text on the wire).
        #[serde(with = "ids")]
        owners: Vec<u64>,
        /// True when the session's own local surface may answer (its owner's).
        local: bool,
        /// The id of the person who asked.
        asker: String,
        /// What the asker must hold, every one, to answer.
        asker_needs: Vec<String>,
        /// Holding any one of these lets anyone answer.
        anyone_with: Vec<String>,
        /// Approvers from `discord.approvers`, as in [`Answerers::Owners`].
        #[serde(default)]
        approvers: Vec<String>,
    },
}

/// Where a turn came from, as the surface that received it says — never read off a
/// session id. It decides whom the turn speaks for and who answers its cards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The owner's own surface: the terminal, the web page or /v1 (behind the page's
    /// password or the API key, or loopback-only with none set). Host cards are theirs.
    Owner,
    /// Discord: a channel, thread, DM or voice room. What is asked there is seen there,
    /// so nothing secret is asked; cards go to the configured owners.
    Discord {
        /// The person's Discord user id.
        user: u64,
        /// Whether they are a configured owner (else the turn is a guest's).
        owner: bool,
    },
}

impl Origin {
    /// Whether the turn is a guest's (a Discord member who is not an owner): only the
    /// guest allow-list is offered to it.
    pub fn is_guest(&self) -> bool {
        matches!(self, Origin::Discord { owner: false, .. })
    }

    /// The Discord user id, when the turn came from Discord.
    pub fn discord_user(&self) -> Option<u64> {
        match self {
            Origin::Discord { user, .. } => Some(*user),
            Origin::Owner => None,
        }
    }
}

/// Whom a turn speaks for (docs/engine.md §1, "Whom a turn speaks for"): fixed when
/// the turn is created, from what the surface that received the words says, and
/// carried by the turn to everything it reaches (tools, port calls, cards, deferred
/// runs, reminders, jobs). Nothing reads it back off a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// Where they spoke from and, on Discord, who they are and whether they own her.
    pub origin: Origin,
    /// How the surface names them (stored with their line; a reminder's asker; on
    /// Discord `name (user id)`).
    pub author: String,
    /// Tool families a guest is offered beyond the guest list, from their roles'
    /// `discord.role_toolsets` when they spoke (docs/discord.md, "Role tool sets"): every
    /// call of one asks an owner or approver, with no "always". Empty for an owner.
    pub granted: Vec<String>,
}

impl Person {
    /// The person at the owner's own surface (the terminal, the page, /v1).
    pub fn owner(author: impl Into<String>) -> Person {
        Person {
            origin: Origin::Owner,
            author: author.into(),
            granted: Vec::new(),
        }
    }

    /// Nobody in particular: a guest with no Discord id (a hidden turn whose starter is
    /// no longer known, after a restart). It is offered only the guest allow-list.
    pub fn nobody() -> Person {
        Person {
            origin: Origin::Discord {
                user: 0,
                owner: false,
            },
            author: "system".into(),
            granted: Vec::new(),
        }
    }
}

/// What a card asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardKind {
    /// May this action run?
    Approval,
    /// A question that wants typed input.
    Input,
}

/// A card a surface draws and a person answers (gate.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    /// The id an answer names.
    pub request_id: String,
    /// The session the card belongs to.
    pub session: String,
    /// Approval or input.
    pub kind: CardKind,
    /// The tool asking.
    pub tool: String,
    /// What will run: the exact command or code.
    pub action: String,
    /// Why she wants to run it.
    pub why: String,
    /// Its risk (colour).
    pub risk: Risk,
    /// Whether "always (family)" may be offered.
    pub can_always: bool,
    /// The family an "always (family)" grant would be saved under (`git status`,
    /// `npm install`, `execute_code`), so the card can say what it would cover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Whether "always (this exact line)" may be offered.
    pub can_always_exact: bool,
    /// One sentence saying why the family option is missing, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_always_reason: Option<String>,
    /// Expiry as unix milliseconds.
    pub expires_at_ms: u64,
    /// The window it was given, in seconds.
    pub window_secs: u64,
    /// Who may answer.
    pub answerers: Answerers,
    /// An input card whose answer is a secret: every surface masks what is typed.
    #[serde(default)]
    pub secret: bool,
    /// Whether the action may be edited before it is approved (a command or code: the
    /// edited line goes through the gate again).
    #[serde(default)]
    pub can_edit: bool,
    /// The gate's label when the action is dangerous (`recursive delete`): every surface
    /// draws such a card as dangerous. `None` for any other card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub danger: Option<String>,
}

/// Everything a person may say in answer to a card, on any surface (gate.md,
/// "Answers"): the decision, and with it a reason for a no, an edited line for a yes,
/// how long an "always" lasts, or the typed text of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardAnswer {
    /// What they chose.
    pub decision: Decision,
    /// The typed answer of an input card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why they said no, in their words (told to her verbatim, kept in the audit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The command or code as they edited it before approving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<String>,
    /// How long an "always" lasts, in seconds; none (or 0) until revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_s: Option<u64>,
}

impl CardAnswer {
    /// A bare decision.
    pub fn of(decision: Decision) -> CardAnswer {
        CardAnswer {
            decision,
            text: None,
            reason: None,
            edited: None,
            for_s: None,
        }
    }

    /// The typed answer of an input card (ask_user, clarify, a secret).
    pub fn text(text: impl Into<String>) -> CardAnswer {
        CardAnswer {
            text: Some(text.into()),
            ..CardAnswer::of(Decision::Approve)
        }
    }

    /// What is wrong with this answer to `card`, as one sentence; `None` when nothing.
    pub fn problem(&self, card: &Card) -> Option<String> {
        let blank = |v: &Option<String>| v.as_deref().is_some_and(|t| t.trim().is_empty());
        if self.edited.is_some() && !card.can_edit {
            return Some("this card's action cannot be edited".into());
        }
        if self.edited.is_some() && self.decision != Decision::Approve {
            return Some("an edit is approved once: send it with decision \"approve\"".into());
        }
        if blank(&self.edited) {
            return Some("the edited line is empty".into());
        }
        if self.reason.is_some() && self.decision != Decision::Deny {
            return Some("a reason goes with decision \"deny\"".into());
        }
        if self.for_s.is_some()
            && !matches!(
                self.decision,
                Decision::AlwaysExact | Decision::AlwaysFamily
            )
        {
            return Some("for_s goes with \"always_exact\" or \"always_family\"".into());
        }
        if self.text.is_some() && card.kind != CardKind::Input {
            return Some("text answers a question card, not an approval".into());
        }
        // An "always" the card does not offer is refused, never run once instead: the
        // person chose a grant the gate would not save (docs/gate.md, "Answers").
        let always = matches!(
            self.decision,
            Decision::AlwaysExact | Decision::AlwaysFamily
        );
        if always && card.kind == CardKind::Input {
            return Some("a question card is answered with text, not an \"always\"".into());
        }
        if self.decision == Decision::AlwaysFamily && !card.can_always {
            let why = card
                .no_always_reason
                .as_deref()
                .unwrap_or("the gate offers no family for it");
            return Some(format!("this card offers no family grant: {why}"));
        }
        if self.decision == Decision::AlwaysExact && !card.can_always_exact {
            return Some("this card offers no \"always (this exact line)\" grant".into());
        }
        None
    }
}

/// A person's answer to a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run it once.
    Approve,
    /// Run it and always allow this exact line.
    AlwaysExact,
    /// Run it and always allow its family.
    AlwaysFamily,
    /// Do not run it.
    Deny,
}

impl Decision {
    /// True for every decision that lets the action run.
    pub fn approves(self) -> bool {
        !matches!(self, Decision::Deny)
    }
}

/// How a card settled, as a surface shows it afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum CardSettlement {
    /// A person decided.
    Decided {
        /// What they chose.
        decision: Decision,
        /// Who chose it.
        by: String,
        /// Where they answered: "Discord", "the web page", "the terminal", "voice".
        #[serde(default)]
        via: String,
    },
    /// Nobody answered in time: nothing ran.
    Expired,
    /// It went away when the person spoke over it.
    Dismissed,
    /// The turn that asked is gone.
    Cancelled,
}

/// One event on a session's bus. `run_id` marks a background job's frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Set for frames of a background job (8 hex) so clients draw them apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The frame itself.
    #[serde(flatten)]
    pub frame: Frame,
}

/// "olive on Discord", "the owner on the web page": who settled a card and where, as
/// every copy of it says; the name alone when the place is unknown.
pub fn who_and_where(by: &str, via: &str) -> String {
    if via.is_empty() {
        by.to_string()
    } else {
        format!("{by} on {via}")
    }
}

/// Everything the engine tells a surface, one variant per frame type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Frame {
    /// A turn began.
    TurnStarted {
        /// The turn's id.
        turn_id: String,
    },
    /// A piece of her streamed answer.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A step row opening or closing.
    Step(StepRow),
    /// The read tool she is inside, or `None` to clear.
    Peek {
        /// Tool name or null.
        tool: Option<String>,
    },
    /// The working chip.
    Working {
        /// On or off.
        on: bool,
    },
    /// Her face.
    Face {
        /// Expression name: focus, fail, …
        expression: String,
    },
    /// A narration line to speak (voice register only).
    Say {
        /// Announce, heartbeat, after, fail.
        kind: SayKind,
        /// What to say.
        text: String,
    },
    /// A card to draw.
    Card(Box<Card>),
    /// A card settled; surfaces disable its buttons.
    CardSettled {
        /// Which card.
        request_id: String,
        /// How.
        settlement: CardSettlement,
    },
    /// A background job started (its frames carry its run_id).
    WorkStarted {
        /// What the job is for.
        goal: String,
    },
    /// A file she created or edited.
    Artifact {
        /// The path, as the tool saw it (relative to the workspace when inside it).
        path: String,
        /// `created` or `edited`.
        change: ArtifactChange,
    },
    /// Her plan, as a checklist a surface draws.
    TaskList {
        /// The items in order.
        items: Vec<TaskItem>,
    },
    /// A helper (delegate) started inside a job.
    SubagentSpawned {
        /// The helper's id.
        id: String,
        /// What it was asked to do.
        goal: String,
    },
    /// A helper ended.
    SubagentDone {
        /// The helper's id.
        id: String,
        /// Whether it succeeded.
        ok: bool,
        /// What it reported.
        summary: String,
    },
    /// A link she offers the person (open_link).
    LinkCard {
        /// The http(s) URL.
        url: String,
        /// A short title.
        title: String,
    },
    /// A background job or a deferred run ended; the surface fires one hidden
    /// `__work_done__` turn so she announces it (frames carry the run_id).
    WorkDone {
        /// Whether it worked (a refusal of a deferred action is ok=true: nothing failed).
        ok: bool,
        /// What happened, for the announce turn.
        summary: String,
    },
    /// A reminder she was asked to give (cronjob) came due in this session.
    Reminder {
        /// The reminder's id (for list / remove / skip).
        id: i64,
        /// What to remind them of.
        text: String,
    },
    /// The conversation's oldest lines were summarised to keep it within the model's
    /// window (docs/engine.md, "Long conversations"); the lines stay in the store.
    Compacted {
        /// How many lines the summary newly covers.
        lines: u64,
        /// Tokens the conversation cost before.
        tokens_before: u64,
        /// Tokens it costs now.
        tokens_after: u64,
    },
    /// A turn ended; `text` is her whole answer.
    TurnDone {
        /// The turn's id.
        turn_id: String,
        /// Her answer.
        text: String,
        /// How the turn ended.
        status: TurnStatus,
    },
}

/// A reminder that came due, as the engine hands it to the surfaces
/// (`Engine::reminders()`): delivered where it was set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reminder {
    /// Its id.
    pub id: i64,
    /// The session it was set in (the surface and channel to deliver to).
    pub session: String,
    /// What to remind them of.
    pub text: String,
    /// When it was due, unix milliseconds.
    pub due_ms: i64,
    /// The register of the turn that set it (spoken or written delivery).
    pub register: Register,
    /// The channel of the turn that set it.
    pub channel: Channel,
    /// Seconds between repeats; `None` for a one-off.
    pub every_secs: Option<u64>,
    /// Who set it, as the surface named them in the turn (`TurnRequest::author`; on
    /// Discord `name (user id)`, so the delivery can mention them); empty when unknown
    /// (a reminder stored before the column existed).
    #[serde(default)]
    pub asker: String,
}

/// What happened to an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactChange {
    /// A new file.
    Created,
    /// An existing file changed.
    Edited,
}

/// One item of her plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskItem {
    /// What the step is.
    pub text: String,
    /// Where it stands.
    pub status: TaskStatus,
}

/// Where a plan item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The model answered without a tool call.
    Completed,
    /// The iteration cap cut a chain: never reported as "Done.".
    Capped,
    /// The model failed; the text is one plain sentence.
    Error,
    /// The turn was cut (superseded, barge-in, shutdown).
    Interrupted,
}

/// A file the person attached (an image or a PDF) that reaches the model with their
/// words. Its Debug shows the size, never the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Media {
    /// The file's name.
    pub name: String,
    /// Its MIME type (`image/png`, `application/pdf`, …).
    pub mime: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl std::fmt::Debug for Media {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Media({}, {}, {} bytes)",
            self.name,
            self.mime,
            self.data.len()
        )
    }
}

impl Media {
    /// Whether the model reads it as an image (else as a file).
    pub fn is_image(&self) -> bool {
        self.mime.starts_with("image/")
    }

    /// The file as a `data:` URL.
    pub fn data_url(&self) -> String {
        use base64::Engine as _;
        format!(
            "data:{};base64,{}",
            self.mime,
            base64::engine::general_purpose::STANDARD.encode(&self.data)
        )
    }
}

/// What a surface asks the engine to do: one turn.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The session, as the surface that received the words built it (a Discord channel,
    /// thread or DM, a page or /v1 session, the terminal's).
    pub session: crate::session::SessionId,
    /// The person's words.
    pub text: String,
    /// Who said it (display name or id), stored with the line.
    pub author: String,
    /// What she writes.
    pub register: Register,
    /// The approval clock.
    pub channel: Channel,
    /// `Some(true)` only from /v1's producer.
    pub el_call_bound: Option<bool>,
    /// Cancel a turn already running in the session instead of waiting for it.
    pub replace_running: bool,
    /// A hidden turn (`__work_done__`): never shown in a transcript or memory.
    pub hidden: bool,
    /// Images and PDFs the person attached; they reach the model, not the transcript.
    pub media: Vec<Media>,
    /// Where it came from, set by the surface (a hidden announce turn: its job's
    /// starter's).
    pub origin: Origin,
    /// What others said around her since her last reply (a Discord server channel's
    /// lines not addressed to her), oldest first: it reaches the model as context,
    /// marked as others' words, and is never stored as this person's line.
    pub around: Vec<Said>,
    /// The tool families the person's roles grant beyond the guest list
    /// ([`Person::granted`]), as the surface read them.
    pub granted: Vec<String>,
}

/// A Discord mention, one token: `<@id>` or `<@!id>` names a person, `<@&id>` a role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mention {
    /// A person, by user id.
    Person(u64),
    /// A role, by role id.
    Role(u64),
}

impl Mention {
    /// The mention `token` is (surrounding blanks ignored), or `None`.
    pub fn parse(token: &str) -> Option<Mention> {
        let inner = token.trim().strip_prefix("<@")?.strip_suffix('>')?;
        match inner.strip_prefix('&') {
            Some(role) => role.parse().ok().map(Mention::Role),
            None => inner
                .strip_prefix('!')
                .unwrap_or(inner)
                .parse()
                .ok()
                .map(Mention::Person),
        }
    }
}

/// One line someone else wrote where she is talking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Said {
    /// Who wrote it (on Discord `name (user id)`).
    pub author: String,
    /// What they wrote.
    pub text: String,
}

impl TurnRequest {
    /// A written turn (text/text/`Some(false)`), as the terminal and Discord text send; a
    /// session given as its name is read by [`crate::session::SessionId::parse`].
    pub fn text(
        origin: Origin,
        session: impl Into<crate::session::SessionId>,
        author: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        TurnRequest {
            session: session.into(),
            text: text.into(),
            author: author.into(),
            register: Register::Text,
            channel: Channel::Text,
            el_call_bound: Some(false),
            replace_running: false,
            hidden: false,
            media: Vec::new(),
            origin,
            around: Vec::new(),
            granted: Vec::new(),
        }
    }

    /// Whom this turn speaks for: its origin and author, as the surface set them.
    pub fn person(&self) -> Person {
        Person {
            origin: self.origin.clone(),
            author: self.author.clone(),
            granted: self.granted.clone(),
        }
    }
}

/// What a finished turn hands back to the surface that asked.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// Her whole answer.
    pub text: String,
    /// How it ended.
    pub status: TurnStatus,
    /// The face her answer asks for (`face::finished`); *calm* when it names none.
    pub face: String,
    /// The store could not be reached or written, so the turn did not run: `text` is
    /// [`STORE_UNREACHABLE`] (`/v1` and the page answer 503 `store_unreachable`).
    pub store_unreachable: bool,
}

/// What she says when the store cannot take the person's line (docs/deploy.md, "When
/// the store goes away"): nothing was kept, nothing ran.
pub const STORE_UNREACHABLE: &str = "I can't reach my store right now, so I couldn't keep what     you said and did nothing with it. Please say it again in a moment.";

/// Cut `s` to `max` characters with an ellipsis (a caption, a chat line, a label).
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_names_a_person_or_a_role_and_anything_else_is_none() {
        assert_eq!(Mention::parse("<@42>"), Some(Mention::Person(42)));
        assert_eq!(Mention::parse(" <@!42> "), Some(Mention::Person(42)));
        assert_eq!(Mention::parse("<@&7>"), Some(Mention::Role(7)));
        for no in ["42", "<@abc>", "<#5>", "<@42", "@42>"] {
            assert_eq!(Mention::parse(no), None, "{no}");
        }
    }

    #[test]
    fn frames_serialise_as_stable_tagged_json() {
        let ev = Event {
            run_id: Some("0a1b2c3d".into()),
            frame: Frame::Peek {
                tool: Some("read_file".into()),
            },
        };
        let json = serde_json::to_string(&ev).unwrap();
        assert_eq!(
            json,
            r#"{"run_id":"0a1b2c3d","type":"peek","tool":"read_file"}"#
        );
        let back: Event = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ev);
    }

    #[test]
    fn step_kind_follows_the_tool_name_rules() {
        assert_eq!(StepKind::for_tool("shell"), StepKind::Shell);
        assert_eq!(StepKind::for_tool("execute_code"), StepKind::Code);
        assert_eq!(StepKind::for_tool("web_extract"), StepKind::Web);
        assert_eq!(StepKind::for_tool("read_file"), StepKind::File);
        assert_eq!(StepKind::for_tool("browser__click"), StepKind::Mcp);
        assert_eq!(StepKind::for_tool("mcp_find"), StepKind::Mcp);
        assert_eq!(StepKind::for_tool("skill_view"), StepKind::Skill);
        assert_eq!(StepKind::for_tool("memory_write"), StepKind::Memory);
        assert_eq!(StepKind::for_tool("todo"), StepKind::Tool);
    }
}
