//! Companion caps, read once from the environment at start (engine.md §2). A blank or
//! non-numeric value falls back to the default with one warning.

/// Per-turn caps of a companion turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompanionCaps {
    /// `KOTOBA_MAX_TOOL_CALLS` (8): tool calls per turn.
    pub max_tool_calls: u32,
    /// `KOTOBA_FAIL_LIMIT` (2): failures per turn before tools are withdrawn.
    pub fail_limit: u32,
    /// `KOTOBA_PER_TOOL_LIMIT` (3): calls of one tool per turn.
    pub per_tool_limit: u32,
    /// `KOTOBA_DELEGATE_LIMIT` (3): delegate calls per turn.
    pub delegate_limit: u32,
    /// `KOTOBA_WEB_SEARCH_LIMIT` (8): web searches per turn.
    pub web_search_limit: u32,
}

impl Default for CompanionCaps {
    fn default() -> Self {
        CompanionCaps {
            max_tool_calls: 8,
            fail_limit: 2,
            per_tool_limit: 3,
            delegate_limit: 3,
            web_search_limit: 8,
        }
    }
}

impl CompanionCaps {
    /// Read each cap from `get`; a blank or non-numeric value keeps the default and
    /// logs one warning naming the variable.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        let d = CompanionCaps::default();
        let read = |name: &str, default: u32| -> u32 {
            match get(name) {
                None => default,
                Some(v) => match v.trim().parse::<u32>() {
                    Ok(n) if n >= 1 => n,
                    _ => {
                        tracing::warn!(
                            "{name}={v:?} is not a whole number ≥ 1; using the default {default}"
                        );
                        default
                    }
                },
            }
        };
        CompanionCaps {
            max_tool_calls: read("KOTOBA_MAX_TOOL_CALLS", d.max_tool_calls),
            fail_limit: read("KOTOBA_FAIL_LIMIT", d.fail_limit),
            per_tool_limit: read("KOTOBA_PER_TOOL_LIMIT", d.per_tool_limit),
            delegate_limit: read("KOTOBA_DELEGATE_LIMIT", d.delegate_limit),
            web_search_limit: read("KOTOBA_WEB_SEARCH_LIMIT", d.web_search_limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_or_non_numeric_cap_falls_back_to_its_default() {
        let caps = CompanionCaps::from_env(|k| match k {
            "KOTOBA_MAX_TOOL_CALLS" => Some("".into()),
            "KOTOBA_FAIL_LIMIT" => Some("lots".into()),
            "KOTOBA_PER_TOOL_LIMIT" => Some("5".into()),
            _ => None,
        });
        assert_eq!(caps.max_tool_calls, 8);
        assert_eq!(caps.fail_limit, 2);
        assert_eq!(caps.per_tool_limit, 5);
        assert_eq!(caps.web_search_limit, 8);
    }
}
