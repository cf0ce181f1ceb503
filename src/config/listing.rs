//! The settings listing the page's Settings panel (`GET /api/settings`) and `kotoba chat
//! --settings` show: every live settings.yaml key with its value, the four work caps
//! apart under "Advanced (work)" (docs/surfaces.md). The companion caps are read from
//! the environment only and are not settings, so they are in neither.

use serde::Serialize;

pub use super::keys::Group;
use super::keys::{Shown, KEYS};
use super::settings::Settings;

impl Group {
    /// The heading a person reads.
    pub fn title(self) -> &'static str {
        match self {
            Group::General => "Settings",
            Group::Work => "Advanced (work)",
        }
    }
}

/// One key of the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// The settings.yaml key.
    pub key: &'static str,
    /// Its live value as text a save accepts back (lists as `[a, b]`); a secret's is
    /// empty.
    pub value: String,
    /// Its group.
    pub group: Group,
    /// A secret: the value is hidden; `set` says whether there is one.
    pub secret: bool,
    /// Whether a secret is set (false for the others).
    pub set: bool,
    /// Shown, but edited in settings.yaml (a structure), not from the panel.
    pub read_only: bool,
}

/// Every settings.yaml key with its live value, in the order of [`KEYS`].
pub fn listing(s: &Settings) -> Vec<Listed> {
    KEYS.iter()
        .map(|key| {
            let value = (key.value)(s);
            let secret = key.shown == Shown::Secret;
            Listed {
                key: key.name,
                set: secret && !value.is_empty(),
                value: if secret { String::new() } else { value },
                group: key.group,
                secret,
                read_only: key.shown == Shown::ByName,
            }
        })
        .collect()
}

/// The listing as lines a person reads: the general keys, then "Advanced (work)".
pub fn lines(listed: &[Listed]) -> Vec<String> {
    let mut out = Vec::new();
    for group in [Group::General, Group::Work] {
        out.push(format!("{}:", group.title()));
        for l in listed.iter().filter(|l| l.group == group) {
            let value = match (l.secret, l.set) {
                (true, true) => "(set)".to_string(),
                (true, false) => "(not set)".to_string(),
                _ => l.value.clone(),
            };
            out.push(format!("  {}: {value}", l.key));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_holds_every_key_the_work_caps_apart_and_no_secret_or_companion_cap() {
        let s = Settings {
            web_password: Some(super::super::Secret("hunter2".into())),
            ..Settings::default()
        };
        let listed = listing(&s);
        assert_eq!(listed.len(), KEYS.len());
        let work: Vec<&str> = listed
            .iter()
            .filter(|l| l.group == Group::Work)
            .map(|l| l.key)
            .collect();
        assert_eq!(
            work,
            [
                "work_max_iter",
                "work_max_tool_calls",
                "work_fail_limit",
                "work_timeout"
            ]
        );
        let text = lines(&listed).join("\n");
        assert!(
            text.contains("Advanced (work):\n  work_max_iter: 40"),
            "{text}"
        );
        assert!(text.contains("web_password: (set)") && !text.contains("hunter2"));
        assert!(!text.contains("KOTOBA_MAX_TOOL_CALLS") && !text.contains("per_tool"));
    }
}
