//! The settings listing the page's Settings panel (`GET /api/settings`) and `kotoba chat
//! --settings` show: every live settings.yaml key with its value, the four work caps
//! apart under "Advanced (work)" (docs/surfaces.md). The companion caps are read from
//! the environment only and are not settings, so they are in neither.

use serde::Serialize;

pub use super::keys::{Group, Input};
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// How the panel edits it: `kind` toggle, choice (`choices`), number (`min`,
    /// `max`, `whole`), list or text.
    #[serde(flatten)]
    pub input: Input,
    /// Its default, as the README shows it (without the backticks).
    pub default: String,
    /// What it is for, in one line.
    pub doc: &'static str,
    /// The environment variable that wins over it here, when one is set: the value
    /// shown is that variable's, and a save changes the file but not what applies.
    pub overridden_by: Option<&'static str>,
    /// What the last read of settings.yaml found wrong with this key (its value kept
    /// as it was, or fallen to the safe side), in one sentence.
    pub warning: Option<String>,
}

/// Every settings.yaml key with its live value, in the order of [`KEYS`];
/// `overridden_by(key)` names the environment variable set for it, if any.
pub fn listing(s: &Settings, overridden_by: impl Fn(&str) -> Option<&'static str>) -> Vec<Listed> {
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
                input: (key.input)(),
                default: key.readme_default().replace('`', ""),
                doc: key.doc,
                overridden_by: overridden_by(key.name),
                warning: None,
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
            match l.overridden_by {
                Some(var) => out.push(format!("  {}: {value} (overridden by {var})", l.key)),
                None => out.push(format!("  {}: {value}", l.key)),
            }
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
        let listed = listing(&s, |_| None);
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

    fn find<'a>(listed: &'a [Listed], key: &str) -> &'a Listed {
        listed.iter().find(|l| l.key == key).unwrap()
    }

    #[test]
    fn each_key_is_listed_with_its_input_default_doc_and_the_variable_that_overrides_it() {
        let listed = listing(&Settings::default(), |k| {
            (k == "model").then_some("KOTOBA_MODEL")
        });
        assert_eq!(find(&listed, "force_ask").input, Input::Toggle);
        assert_eq!(
            find(&listed, "api").input,
            Input::Choice {
                choices: &["responses", "chat"]
            }
        );
        assert_eq!(
            find(&listed, "work_timeout").input,
            Input::Number {
                min: 30.0,
                max: None,
                whole: true
            }
        );
        assert_eq!(find(&listed, "owners").input, Input::List);
        let owners = Settings {
            owners: vec![1, 22],
            ..Settings::default()
        };
        let listed_owners = listing(&owners, |_| None);
        assert_eq!(find(&listed_owners, "owners").value, "[\"1\", \"22\"]");
        assert_eq!(find(&listed, "model").input, Input::Text);
        assert_eq!(find(&listed, "work_timeout").default, "3600");
        assert_eq!(find(&listed, "web_search_url").default, "none");
        assert!(find(&listed, "force_ask").doc.contains("asks"));
        assert_eq!(find(&listed, "model").overridden_by, Some("KOTOBA_MODEL"));
        assert_eq!(find(&listed, "api").overridden_by, None);
        let json = serde_json::to_value(find(&listed, "context.compact_at")).unwrap();
        assert_eq!(
            (
                json["kind"].as_str(),
                json["min"].as_f64(),
                json["max"].as_f64()
            ),
            (Some("number"), Some(0.1), Some(0.95))
        );
        assert!(lines(&listed)
            .iter()
            .any(|l| l.ends_with("(overridden by KOTOBA_MODEL)")));
    }
}
