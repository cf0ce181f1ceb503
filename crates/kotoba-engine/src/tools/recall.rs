//! `session_search` (memory family): full-text search over this conversation's past
//! turns in the store (SQLite FTS5), the best five with who said it and when. Hidden
//! turns such as `__work_done__` are never indexed, so never found.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::req_str;
use super::memory::date_from_days;
use super::Behaviour;
use super::{clip_chars, Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Risk, StepKind};
use kotoba_store::SearchHit;

/// Most hits returned.
pub const MAX_HITS: usize = 5;
/// Most characters of one hit shown.
pub const HIT_CHARS: usize = 400;

/// `YYYY-MM-DD HH:MM UTC` of a unix-milliseconds time.
pub fn when(at_ms: i64) -> String {
    let secs = at_ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    format!(
        "{} {:02}:{:02} UTC",
        date_from_days(days),
        rest / 3600,
        (rest % 3600) / 60
    )
}

fn hit_line(h: &SearchHit) -> String {
    let who = if h.role == "assistant" {
        "you (Kotoba)".to_string()
    } else {
        h.author.clone()
    };
    format!(
        "[{}] {who}: {}",
        when(h.at_ms),
        clip_chars(h.text.trim(), HIT_CHARS)
    )
}

/// Searches what was said earlier in this conversation.
#[derive(Debug, Clone)]
pub struct SessionSearch {
    spec: ToolSpec,
}

impl Default for SessionSearch {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionSearch {
    /// The tool with its spec.
    pub fn new() -> Self {
        SessionSearch {
            spec: ToolSpec {
                name: "session_search".into(),
                description: format!(
                    "Search everything said earlier in this conversation, beyond the recent \
                     lines you see. Returns the best {MAX_HITS} lines with who said them and \
                     when. Use a few distinctive words."
                ),
                family: "memory".into(),
                risk: Risk::Read,
                step_kind: StepKind::for_tool("session_search"),
                timeout: None,
                takes_timeout_arg: false,
                scope: Scope::Both,
                lines: ToolLines::of(
                    "Let me think back to what we said.",
                    &["Still looking back.", "Going through our old messages."],
                    "Found it.",
                    "I couldn't look back through that.",
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Words to look for."}
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }),
                behaviour: Behaviour::default(),
            },
        }
    }
}

#[async_trait]
impl Tool for SessionSearch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let query = match req_str(&args, "query", "session_search") {
            Ok(q) if !q.trim().is_empty() => q.trim().to_string(),
            Ok(_) => {
                return ToolOutput::refused("session_search: the query is empty. Nothing ran.")
            }
            Err(r) => return r,
        };
        let Some(store) = ctx.store.clone() else {
            return ToolOutput::failed("session_search: no conversation store is open.");
        };
        let own = ctx.turn.user_request.clone();
        // One extra, in case the person's own question (stored already) is among them.
        let found = store
            .search_messages(ctx.session(), &query, MAX_HITS + 1)
            .await;
        let hits = match found {
            Ok(hits) => hits,
            Err(e) => return ToolOutput::failed(format!("session_search: {e}.")),
        };
        let lines: Vec<String> = hits
            .iter()
            .filter(|h| !(h.role == "user" && own.as_deref() == Some(h.text.as_str())))
            .take(MAX_HITS)
            .map(hit_line)
            .collect();
        if lines.is_empty() {
            return ToolOutput::ok(format!(
                "Nothing earlier in this conversation matches '{query}'."
            ));
        }
        ToolOutput::ok(lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc_dates_and_minutes() {
        assert_eq!(when(0), "1970-01-01 00:00 UTC");
        assert_eq!(when(1_700_000_000_000), "2023-11-14 22:13 UTC");
    }
}
