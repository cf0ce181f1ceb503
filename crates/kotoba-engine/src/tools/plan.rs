//! Core tools that only draw: `todo` (her plan as a task_list frame a surface draws; a
//! new plan is refused on the hidden announce turn) and `open_link` (an http/https link
//! card the person opens themselves).

use async_trait::async_trait;
use dashmap::DashMap;
use serde_json::{json, Value};

use super::args::opt_str;
use super::args::req_str;
use super::web::http_url;
use super::{clip_chars, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Frame, Risk, TaskItem, TaskStatus};

/// Most items in one plan.
pub const MAX_ITEMS: usize = 20;
/// Longest item text, in characters.
pub const MAX_ITEM_CHARS: usize = 200;

fn core_spec(name: &str, description: &str, lines: ToolLines, parameters: Value) -> ToolSpec {
    ToolSpec::plain(name, description, "core", Risk::Read, lines, parameters)
}

// ---------------------------------------------------------------- todo

/// Her plan, per conversation (and per background job), drawn as a checklist.
#[derive(Debug)]
pub struct Todo {
    spec: ToolSpec,
    plans: DashMap<String, Vec<TaskItem>>,
}

impl Default for Todo {
    fn default() -> Self {
        Self::new()
    }
}

impl Todo {
    /// The tool with its spec.
    pub fn new() -> Self {
        Todo {
            spec: core_spec(
                "todo",
                &format!(
                    "Show your plan as a checklist on their screen. Send the whole list every \
                     time (at most {MAX_ITEMS} items), each with a status: pending, \
                     in_progress or done. An empty list clears it."
                ),
                ToolLines::of(
                    "Let me jot down a plan.",
                    &["Still planning.", "Nearly have the plan."],
                    "Plan's up.",
                    "I couldn't put the plan up.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "items": {
                            "type": "array",
                            "maxItems": MAX_ITEMS,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "text": {"type": "string"},
                                    "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                                },
                                "required": ["text", "status"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["items"],
                    "additionalProperties": false
                }),
            ),
            plans: DashMap::new(),
        }
    }

    fn key(ctx: &ToolContext) -> String {
        format!(
            "{}\u{0}{}",
            ctx.session(),
            ctx.turn.run_id.as_deref().unwrap_or("")
        )
    }

    /// Whether an unfinished plan is up in this conversation (or job).
    pub fn has_open_plan(&self, ctx: &ToolContext) -> bool {
        self.plans
            .get(&Self::key(ctx))
            .is_some_and(|p| p.iter().any(|i| i.status != TaskStatus::Done))
    }
}

/// Why a plan's items were refused (the model reads it after "todo: ").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ItemsError {
    /// `items` is there but not a list.
    #[error("'items' must be a list")]
    NotList,
    /// No `items` at all.
    #[error("the required argument 'items' is missing")]
    Missing,
    /// More items than a plan holds.
    #[error("the plan has {0} items, above {MAX_ITEMS}")]
    TooMany(usize),
    /// An item (numbered from 1) without text.
    #[error("item {0} has no 'text'")]
    NoText(usize),
    /// An item (numbered from 1) with a status that is not one of the three.
    #[error("item {n} has status {status:?}; use pending, in_progress or done")]
    BadStatus {
        /// The item's place, from 1.
        n: usize,
        /// The status given, if any.
        status: Option<String>,
    },
}

fn parse_items(args: &Value) -> Result<Vec<TaskItem>, ItemsError> {
    let list = match args.get("items") {
        Some(Value::Array(list)) => list,
        Some(_) => return Err(ItemsError::NotList),
        None => return Err(ItemsError::Missing),
    };
    if list.len() > MAX_ITEMS {
        return Err(ItemsError::TooMany(list.len()));
    }
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            let n = i + 1;
            let text = item
                .get("text")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or(ItemsError::NoText(n))?;
            let status = match item.get("status").and_then(Value::as_str) {
                Some("pending") => TaskStatus::Pending,
                Some("in_progress") => TaskStatus::InProgress,
                Some("done") => TaskStatus::Done,
                other => {
                    return Err(ItemsError::BadStatus {
                        n,
                        status: other.map(str::to_string),
                    })
                }
            };
            Ok(TaskItem {
                text: clip_chars(text, MAX_ITEM_CHARS),
                status,
            })
        })
        .collect()
}

#[async_trait]
impl Tool for Todo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let items = match parse_items(&args) {
            Ok(items) => items,
            Err(why) => return ToolOutput::refused(format!("todo: {why}. Nothing was shown.")),
        };
        if ctx.is_announce_turn() && !items.is_empty() && !self.has_open_plan(ctx) {
            return ToolOutput::refused(
                "todo: this turn only announces a finished job, so a new plan is NOT opened. \
                 Tell them how it went instead.",
            );
        }
        let done = items
            .iter()
            .filter(|i| i.status == TaskStatus::Done)
            .count();
        let total = items.len();
        self.plans.insert(Self::key(ctx), items.clone());
        ctx.emit(Frame::TaskList { items });
        if total == 0 {
            return ToolOutput::ok("The plan is cleared.");
        }
        ToolOutput::ok(format!(
            "The plan is on their screen: {done} of {total} done."
        ))
    }
}

// ---------------------------------------------------------------- open_link

/// Offers a link as a card the person opens themselves.
#[derive(Debug, Clone)]
pub struct OpenLink {
    spec: ToolSpec,
}

impl Default for OpenLink {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenLink {
    /// The tool with its spec.
    pub fn new() -> Self {
        OpenLink {
            spec: core_spec(
                "open_link",
                "Put a link on their screen as a card they can open (http or https only). \
                 It opens nothing by itself.",
                ToolLines::of(
                    "Here, let me pull that link up.",
                    &["Getting the link ready.", "Almost there."],
                    "It's on your screen.",
                    "I couldn't put that link up.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "description": "The http(s) address."},
                        "title": {"type": "string", "description": "A short title for the card."}
                    },
                    "required": ["url"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

#[async_trait]
impl Tool for OpenLink {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (raw, title) = match (
            req_str(&args, "url", "open_link"),
            opt_str(&args, "title", "open_link"),
        ) {
            (Ok(u), Ok(t)) => (u, t),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        let url = match http_url(raw) {
            Ok(u) => u,
            Err(why) => {
                return ToolOutput::refused(format!("open_link: {why}. No card was shown."))
            }
        };
        let title = match title.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => clip_chars(t, 120),
            None => url.host_str().unwrap_or_default().to_string(),
        };
        ctx.emit(Frame::LinkCard {
            url: url.to_string(),
            title,
        });
        ToolOutput::ok(format!(
            "A card with the link {url} is on their screen; they open it themselves."
        ))
    }
}

#[cfg(test)]
mod tests;
