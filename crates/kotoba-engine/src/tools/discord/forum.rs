//! Forums for discord_act: `set_forum` (tags with emoji, guidelines, a default reaction,
//! optionally a first post) and `forum_post` (a new post), resolved into a [`Change`].

use serde_json::Value;

use super::action::{Action, Mark, Refusal, Resolved};
use super::change::Change;
use super::guild::{ChannelKind, Guild};

const MANAGE_CHANNELS: u64 = 1 << 4;
const SEND_MESSAGES: u64 = 1 << 11;
/// Discord's most tags on one forum.
pub(super) const MAX_TAGS: usize = 20;

/// The tags of `set_forum`: names, or `{name, emoji}` objects.
fn tags(v: &Option<Value>) -> Result<Vec<(String, Option<String>)>, Refusal> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let list = v
        .as_array()
        .ok_or("`tags` must be a list of names or {name, emoji}")?;
    if list.len() > MAX_TAGS {
        return Err(format!(
            "a forum holds at most {MAX_TAGS} tags, not {}",
            list.len()
        ));
    }
    list.iter()
        .map(|t| {
            let (name, emoji) = match t {
                Value::String(s) => (s.clone(), None),
                Value::Object(o) => (
                    o.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    o.get("emoji").and_then(Value::as_str).map(str::to_string),
                ),
                _ => (String::new(), None),
            };
            let name = name.trim().to_string();
            if name.is_empty() || name.chars().count() > 20 {
                return Err(format!(
                    "a tag needs a name of 1 to 20 characters, not '{name}'"
                ));
            }
            Ok((name, emoji))
        })
        .collect()
}

/// Resolve `set_forum` or `forum_post` (`op`) against `g`; her permissions are checked
/// by the caller against [`Resolved::needs`].
pub(super) fn resolve(g: &Guild, a: &Action, op: &str) -> Result<Resolved, Refusal> {
    let raw = a
        .target
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| format!("{op} needs `target`: the forum"))?;
    let c = g
        .channel(raw)
        .ok_or_else(|| format!("there is no forum '{raw}' here"))?;
    if c.kind != ChannelKind::Forum {
        return Err(format!("#{} is not a forum", c.name));
    }
    let first = match (&a.first_post, &a.first_body) {
        (Some(t), b) if !t.trim().is_empty() => {
            Some((t.trim().to_string(), b.clone().unwrap_or_default()))
        }
        _ => None,
    };
    if op == "forum_post" {
        let title = first
            .clone()
            .or_else(|| {
                a.value
                    .as_ref()
                    .and_then(Value::as_str)
                    .map(|t| (t.to_string(), a.first_body.clone().unwrap_or_default()))
            })
            .ok_or("forum_post needs `first_post` (its title) and `first_body` (its text)")?;
        return Ok(Resolved {
            line: format!("post \"{}\" in the forum #{}", title.0, c.name),
            change: Change::ForumPost {
                channel: c.id,
                title: title.0,
                body: title.1,
            },
            needs: SEND_MESSAGES,
            mark: Mark::Plain,
        });
    }
    let tags = tags(&a.tags)?;
    let guidelines = a.topic.clone();
    let reaction = a.emoji.clone().filter(|e| !e.trim().is_empty());
    let mut words = Vec::new();
    if !tags.is_empty() {
        let names: Vec<String> = tags
            .iter()
            .map(|(n, e)| match e {
                Some(e) => format!("{e} {n}"),
                None => n.clone(),
            })
            .collect();
        words.push(format!("tags {}", names.join(", ")));
    }
    if guidelines.is_some() {
        words.push("guidelines".into());
    }
    if let Some(e) = &reaction {
        words.push(format!("default reaction {e}"));
    }
    if let Some((t, _)) = &first {
        words.push(format!("a first post \"{t}\""));
    }
    if words.is_empty() {
        return Err("set_forum needs `tags`, `topic` (guidelines), `emoji` or `first_post`".into());
    }
    let needs = if first.is_some() {
        MANAGE_CHANNELS | SEND_MESSAGES
    } else {
        MANAGE_CHANNELS
    };
    Ok(Resolved {
        line: format!("set up the forum #{}: {}", c.name, words.join("; ")),
        change: Change::SetForum {
            channel: c.id,
            tags,
            guidelines,
            reaction,
            first,
        },
        needs,
        mark: Mark::Plain,
    })
}
