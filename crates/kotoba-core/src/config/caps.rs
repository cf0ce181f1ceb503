//! Companion caps, read once from the environment at start (engine.md §2). A blank or
//! non-numeric value falls back to the default with one warning. [`CAPS`] is the one
//! place their variable names are spelled.

/// Per-turn caps of a companion turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompanionCaps {
    /// Tool calls per turn.
    pub max_tool_calls: u32,
    /// Failures per turn before tools are withdrawn.
    pub fail_limit: u32,
    /// Calls of one tool per turn.
    pub per_tool_limit: u32,
    /// Delegate calls per turn.
    pub delegate_limit: u32,
    /// Web searches per turn.
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

/// One cap: its environment variable and the field it fills.
pub(super) struct Cap {
    /// The environment variable.
    pub name: &'static str,
    field: fn(&mut CompanionCaps) -> &mut u32,
}

impl Cap {
    /// Its default.
    pub(super) fn default_value(&self) -> u32 {
        *(self.field)(&mut CompanionCaps::default())
    }
}

/// Every companion cap.
pub(super) const CAPS: &[Cap] = &[
    Cap {
        name: "KOTOBA_MAX_TOOL_CALLS",
        field: |c| &mut c.max_tool_calls,
    },
    Cap {
        name: "KOTOBA_FAIL_LIMIT",
        field: |c| &mut c.fail_limit,
    },
    Cap {
        name: "KOTOBA_PER_TOOL_LIMIT",
        field: |c| &mut c.per_tool_limit,
    },
    Cap {
        name: "KOTOBA_DELEGATE_LIMIT",
        field: |c| &mut c.delegate_limit,
    },
    Cap {
        name: "KOTOBA_WEB_SEARCH_LIMIT",
        field: |c| &mut c.web_search_limit,
    },
];

impl CompanionCaps {
    /// Read each cap from `get`; a blank or non-numeric value keeps the default and
    /// logs one warning naming the variable.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        let mut caps = CompanionCaps::default();
        for cap in CAPS {
            let name = cap.name;
            let slot = (cap.field)(&mut caps);
            let default = *slot;
            if let Some(v) = get(name) {
                *slot = match v.trim().parse::<u32>() {
                    Ok(n) if n >= 1 => n,
                    _ => {
                        tracing::warn!(
                            "{name}={v:?} is not a whole number ≥ 1; using the default {default}"
                        );
                        default
                    }
                };
            }
        }
        caps
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
