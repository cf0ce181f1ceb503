//! Per-turn caps (tool calls, failures, iterations, per-tool) and the exact-repeat
//! memo keyed by name + canonical arguments (engine.md §2).

use std::collections::HashMap;

use serde_json::Value;

use crate::tools::{CapGroup, ToolSpec};
use kotoba_core::config::{CompanionCaps, Settings};
use kotoba_core::protocol::Outcome;

/// The companion iteration cap before the `tool calls + 1` floor applies.
pub const COMPANION_MAX_ITER: u32 = 8;

/// The caps one loop runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Iterations (model requests); always ≥ max_tool_calls + 1.
    pub max_iter: u32,
    /// Tool calls that reached the gate or ran.
    pub max_tool_calls: u32,
    /// Failures (not ok and not refused).
    pub fail_limit: u32,
    /// Calls of one tool name, repeats included.
    pub per_tool: u32,
    /// Delegate calls.
    pub delegate: u32,
    /// Web searches.
    pub web_search: u32,
}

impl Caps {
    /// A companion turn's caps (environment, read once).
    pub fn companion(c: &CompanionCaps) -> Caps {
        Caps {
            max_iter: COMPANION_MAX_ITER.max(c.max_tool_calls + 1),
            max_tool_calls: c.max_tool_calls,
            fail_limit: c.fail_limit,
            per_tool: c.per_tool_limit,
            delegate: c.delegate_limit,
            web_search: c.web_search_limit,
        }
    }

    /// A work job's caps: the totals from settings.yaml (read live for each job); the
    /// per-tool, delegate and web-search caps are the environment's, on top of them.
    pub fn work(s: &Settings, c: &CompanionCaps) -> Caps {
        Caps {
            max_iter: s.work_max_iter.max(s.work_max_tool_calls + 1),
            max_tool_calls: s.work_max_tool_calls,
            fail_limit: s.work_fail_limit,
            per_tool: c.per_tool_limit,
            delegate: c.delegate_limit,
            web_search: c.web_search_limit,
        }
    }

    /// The per-tool cap of one tool, by the cap group it declares.
    pub fn for_tool(&self, spec: &ToolSpec) -> u32 {
        match spec.behaviour.cap_group {
            CapGroup::Helpers => self.delegate,
            CapGroup::WebSearch => self.web_search,
            CapGroup::PerTool => self.per_tool,
        }
    }
}

/// The canonical key of a call: name + arguments as JSON with sorted keys.
pub fn call_key(name: &str, args: &Value) -> String {
    // serde_json's Map is ordered by key (no preserve_order), so this is canonical.
    format!("{name}\u{0}{args}")
}

/// What a turn has spent.
#[derive(Debug, Default)]
pub struct Spent {
    /// Tool calls that reached the gate or ran.
    pub tool_calls: u32,
    /// Failures.
    pub failures: u32,
    per_tool: HashMap<String, u32>,
    memo: HashMap<String, Outcome>,
}

impl Spent {
    /// Whether tools are withdrawn for the next iteration.
    pub fn tools_spent(&self, caps: &Caps) -> bool {
        self.tool_calls >= caps.max_tool_calls || self.failures >= caps.fail_limit
    }

    /// Count one call of `name`; returns the count including this one.
    pub fn count_tool(&mut self, name: &str) -> u32 {
        let n = self.per_tool.entry(name.to_string()).or_insert(0);
        *n += 1;
        *n
    }

    /// The earlier outcome of an identical call in this turn.
    pub fn earlier(&self, key: &str) -> Option<Outcome> {
        self.memo.get(key).copied()
    }

    /// Remember a call's outcome.
    pub fn remember(&mut self, key: String, outcome: Outcome) {
        self.memo.insert(key, outcome);
    }
}

/// The sentence for an exact repeat, chosen by the earlier outcome.
pub fn repeat_sentence(name: &str, earlier: Outcome) -> String {
    match earlier {
        Outcome::Ok => format!(
            "You ALREADY called '{name}' with these exact arguments in this turn and it is DONE; the earlier \
             result above stands. Do NOT call it again and do NOT say it failed."
        ),
        Outcome::Refused | Outcome::Pending | Outcome::Interrupted => format!(
            "This exact '{name}' call NEVER RAN: it ended at the user's card, or was refused before it started. \
             Do NOT call it again, do NOT route around it, and do NOT say it is done."
        ),
        Outcome::Failed => format!(
            "You already tried '{name}' with these exact arguments in this turn and it did NOT work. \
             Calling it again unchanged will fail the same way: change the approach, or tell the user what failed."
        ),
    }
}

/// The sentence when a tool's per-turn cap is hit.
pub fn per_tool_cap_sentence(name: &str, cap: u32) -> String {
    format!(
        "THIS CALL DID NOT RUN: '{name}' may be called at most {cap} times in one turn and that cap is reached. \
         Do NOT keep preparing or re-checking, and do NOT tell the user this one is done. Answer with what you have."
    )
}

/// The one-time note appended to the call that spends a tool's cap, for the tools
/// that get one (web_search): answer with what you have.
pub fn cap_reached_note(spec: &ToolSpec, cap: u32) -> Option<String> {
    (spec.behaviour.cap_group == CapGroup::WebSearch).then(|| {
        format!(
            "\n\n[That was the last web search this turn ({cap} of {cap}). Do not search again: \
             answer now with what you have found.]"
        )
    })
}

/// The sentence when the turn's tool-call budget is spent.
pub fn turn_cap_sentence(cap: u32) -> String {
    format!(
        "THIS CALL DID NOT RUN: this turn's budget of {cap} tool calls is spent. Do NOT tell the user it is \
         done; answer in words with what you have."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_iteration_cap_is_always_above_the_tool_call_cap() {
        let c = CompanionCaps {
            max_tool_calls: 20,
            ..CompanionCaps::default()
        };
        assert_eq!(Caps::companion(&c).max_iter, 21);
        let s = Settings {
            work_max_iter: 40,
            work_max_tool_calls: 40,
            ..Settings::default()
        };
        assert_eq!(Caps::work(&s, &c).max_iter, 41);
    }

    #[test]
    fn an_exact_repeat_is_the_same_call_whatever_the_key_order() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":2,"x":1}}"#).unwrap();
        let b = json!({"a": {"x": 1, "y": 2}, "b": 1});
        assert_eq!(call_key("shell", &a), call_key("shell", &b));
        assert_ne!(call_key("shell", &a), call_key("execute_code", &b));
    }

    #[test]
    fn a_repeat_sentence_follows_the_earlier_outcome() {
        assert!(repeat_sentence("x", Outcome::Ok).contains("ALREADY"));
        assert!(repeat_sentence("x", Outcome::Refused).contains("NEVER RAN"));
        assert!(repeat_sentence("x", Outcome::Pending).contains("NEVER RAN"));
        assert!(repeat_sentence("x", Outcome::Failed).contains("change the approach"));
    }
}
