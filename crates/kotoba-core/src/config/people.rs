//! Who she serves on Discord, as settings.yaml says it: `owners` (the user ids who use
//! every tool and answer host cards; `KOTOBA_DISCORD_OWNER_IDS` is read with the same
//! `user_id`, `env.rs`), `discord.approvers` (people and roles who answer host cards
//! besides the owners) and `discord.role_toolsets` (the tool families a role's members
//! are offered beyond the guest list), parsed from a key's value (YAML, or the text
//! `/settings set` and the page send).

use serde_yaml_ng::Value;

use super::values::{as_text, show, words};
use super::ValueError;

/// `discord.role_toolsets`: per Discord role id, the tool families its members are
/// offered beyond the guest list (docs/discord.md, "Role tool sets").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleToolsets(pub std::collections::BTreeMap<u64, Vec<String>>);

impl RoleToolsets {
    /// The families granted to someone holding `roles`, each once, in order.
    pub fn granted(&self, roles: &[u64]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in roles {
            for f in self.0.get(r).into_iter().flatten() {
                if !out.contains(f) {
                    out.push(f.clone());
                }
            }
        }
        out
    }
}

/// One owner as written: a Discord user id (`123`) or a mention of the person (`<@123>`,
/// `<@!123>`); a role, a name or 0 is refused.
pub(super) fn user_id(raw: &str) -> Result<u64, ValueError> {
    use crate::protocol::Mention;
    let t = raw.trim();
    let id = match Mention::parse(t) {
        Some(Mention::Person(p)) => Some(p),
        Some(Mention::Role(_)) => None,
        None if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) => t.parse().ok(),
        None => None,
    };
    id.filter(|id| *id > 0)
        .ok_or_else(|| ValueError::NotUserId {
            got: raw.to_string(),
        })
}

/// `owners`: Discord user ids, each once. One entry that is not refuses the whole list,
/// which then falls to the safe side (`keys::safe_side`: no owner from the setting).
pub(super) fn owner_ids(v: &Value) -> Result<Vec<u64>, ValueError> {
    let mut out = Vec::new();
    for raw in words(v)? {
        let id = user_id(&raw)?;
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

/// Approvers: each a person or a role, written as a bare id, `<@id>` / `<@!id>` (a
/// person), `<@&id>` (a role), `user:<id>` or `role:<id>`; kept as `user:<id>`,
/// `role:<id>` or the bare id.
pub(super) fn approvers(v: &Value) -> Result<Vec<String>, ValueError> {
    use crate::protocol::Mention;
    words(v)?
        .iter()
        .map(|raw| {
            let t = raw.trim();
            let kept = match Mention::parse(t) {
                Some(Mention::Role(r)) => Some(format!("role:{r}")),
                Some(Mention::Person(p)) => Some(format!("user:{p}")),
                None => {
                    let id = t
                        .split_once(':')
                        .filter(|(kind, _)| matches!(*kind, "role" | "user"))
                        .map_or(t, |(_, id)| id);
                    let digits = !id.is_empty() && id.chars().all(|c| c.is_ascii_digit());
                    digits.then(|| t.to_string())
                }
            };
            kept.ok_or_else(|| ValueError::NotApprover { got: raw.clone() })
        })
        .collect()
}

/// Role tool sets: a mapping (or its YAML/JSON text, as `/settings set` and the page send
/// it) from a role (`701`, `<@&701>`, `role:701`) to tool family names.
pub(super) fn role_toolsets(v: &Value) -> Result<RoleToolsets, ValueError> {
    use crate::protocol::Mention;
    let parsed;
    let v = match v {
        Value::String(t) if t.trim().is_empty() => return Ok(RoleToolsets::default()),
        Value::String(t) => {
            parsed = serde_yaml_ng::from_str::<Value>(t)
                .map_err(|e| ValueError::NotRoleYaml(e.to_string()))?;
            &parsed
        }
        other => other,
    };
    let map = match v {
        Value::Null => return Ok(RoleToolsets::default()),
        Value::Mapping(m) => m,
        _ => return Err(ValueError::NotRoleMapping { got: show(v) }),
    };
    let mut out = std::collections::BTreeMap::new();
    for (role, families) in map {
        let raw = as_text(role).unwrap_or_else(|| show(role));
        let t = raw.trim();
        let id = match Mention::parse(t) {
            Some(Mention::Role(r)) => Some(r),
            Some(Mention::Person(_)) => None,
            None => t.strip_prefix("role:").unwrap_or(t).parse::<u64>().ok(),
        };
        let Some(id) = id.filter(|id| *id > 0) else {
            return Err(ValueError::NotRole { got: raw });
        };
        let families = words(families)?;
        if let Some(bad) = families.iter().find(|f| {
            f.is_empty()
                || !f
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':'))
        }) {
            return Err(ValueError::NotFamily { got: bad.clone() });
        }
        out.insert(id, families);
    }
    Ok(RoleToolsets(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_a_discord_user_id_or_their_mention_and_anything_else_refuses_the_list() {
        let list = |items: &[&str]| {
            Value::Sequence(items.iter().map(|i| Value::String((*i).into())).collect())
        };
        assert_eq!(
            owner_ids(&list(&["1", "<@2>", "<@!3>", " 4 ", "1"])).unwrap(),
            [1, 2, 3, 4]
        );
        let yaml = |t: &str| serde_yaml_ng::from_str::<Value>(t).unwrap();
        assert_eq!(
            owner_ids(&yaml("[123456789012345678, \"9\"]")).unwrap(),
            [123456789012345678, 9]
        );
        assert_eq!(owner_ids(&Value::String("5, 6".into())).unwrap(), [5, 6]);
        assert!(owner_ids(&Value::Null).unwrap().is_empty());
        for bad in [
            "gus", "<@&7>", "role:7", "user:7", "0", "-1", "1.5", "<@abc>",
        ] {
            let refused = owner_ids(&list(&["1", bad])).unwrap_err();
            assert_eq!(refused, ValueError::NotUserId { got: bad.into() }, "{bad}");
        }
        assert_eq!(
            ValueError::NotUserId { got: "gus".into() }.to_string(),
            "must be Discord user ids (123 or <@123>), got \"gus\""
        );
    }

    #[test]
    fn approvers_are_kept_as_people_roles_or_bare_ids_and_anything_else_is_refused() {
        let list = |items: &[&str]| {
            Value::Sequence(items.iter().map(|i| Value::String((*i).into())).collect())
        };
        assert_eq!(
            approvers(&list(&["<@1>", "<@!2>", "<@&3>", "role:4", "user:5", "6"])).unwrap(),
            ["user:1", "user:2", "role:3", "role:4", "user:5", "6"]
        );
        for bad in ["gus", "<@abc>", "role:", "team:7", ""] {
            assert!(approvers(&list(&[bad])).is_err(), "{bad}");
        }
    }

    #[test]
    fn role_tool_sets_map_roles_by_id_or_mention_to_families_and_anything_else_is_refused() {
        let yaml = |t: &str| serde_yaml_ng::from_str::<Value>(t).unwrap();
        let sets = role_toolsets(&yaml(
            "{\"701\": [files, web], \"<@&702>\": shell, role:703: []}",
        ))
        .unwrap();
        assert_eq!(sets.granted(&[701]), ["files", "web"]);
        assert_eq!(sets.granted(&[702, 701, 9]), ["shell", "files", "web"]);
        assert!(sets.granted(&[703, 9]).is_empty());
        // As /settings set and the page send it: text holding the mapping.
        let text = Value::String("{\"701\": [files]}".into());
        assert_eq!(role_toolsets(&text).unwrap().granted(&[701]), ["files"]);
        assert_eq!(
            role_toolsets(&Value::String(String::new())).unwrap(),
            RoleToolsets::default()
        );
        for bad in [
            "[files]",
            "{gus: [files]}",
            "{\"<@7>\": [files]}",
            "{701: [\"rm -rf\"]}",
            "{0: [files]}",
        ] {
            assert!(role_toolsets(&yaml(bad)).is_err(), "{bad}");
        }
    }
}
