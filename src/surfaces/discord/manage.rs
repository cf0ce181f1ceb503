//! Server management for the port: the server read fresh over REST (channels, roles,
//! members) into the tools' plain [`Guild`], and one [`Change`] applied as Discord's
//! REST call, its error kept for the tool to put in words.

use reqwest::Method;
use serde_json::{json, Value};

use crate::tools::discord::guild::{Channel, ChannelKind, Member, Overwrite, Role};
use crate::tools::discord::{ApiError, Change, Guild};

use super::rest::Rest;

fn id(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

fn bits(v: &Value) -> u64 {
    id(v)
}

fn overwrite(v: &Value) -> Overwrite {
    Overwrite {
        id: id(&v["id"]),
        member: v["type"].as_u64() == Some(1),
        allow: bits(&v["allow"]),
        deny: bits(&v["deny"]),
    }
}

fn channel(v: &Value) -> Channel {
    Channel {
        id: id(&v["id"]),
        name: v["name"].as_str().unwrap_or("").to_string(),
        kind: ChannelKind::from_type(u8::try_from(v["type"].as_u64().unwrap_or(0)).unwrap_or(0)),
        parent: Some(id(&v["parent_id"])).filter(|p| *p != 0),
        position: v["position"].as_i64().unwrap_or(0),
        topic: v["topic"].as_str().map(str::to_string),
        slowmode: v["rate_limit_per_user"].as_u64().unwrap_or(0),
        overwrites: v["permission_overwrites"]
            .as_array()
            .into_iter()
            .flatten()
            .map(overwrite)
            .collect(),
    }
}

fn role(v: &Value) -> Role {
    Role {
        id: id(&v["id"]),
        name: v["name"].as_str().unwrap_or("").to_string(),
        colour: u32::try_from(v["color"].as_u64().unwrap_or(0)).unwrap_or(0),
        hoist: v["hoist"].as_bool().unwrap_or(false),
        mentionable: v["mentionable"].as_bool().unwrap_or(false),
        position: v["position"].as_i64().unwrap_or(0),
        permissions: bits(&v["permissions"]),
        managed: v["managed"].as_bool().unwrap_or(false),
    }
}

fn member(v: &Value) -> Member {
    let u = &v["user"];
    let username = u["username"].as_str().unwrap_or("").to_string();
    let display = v["nick"]
        .as_str()
        .or(u["global_name"].as_str())
        .unwrap_or(&username)
        .to_string();
    Member {
        id: id(&u["id"]),
        username,
        display,
        roles: v["roles"]
            .as_array()
            .into_iter()
            .flatten()
            .map(id)
            .collect(),
        bot: u["bot"].as_bool().unwrap_or(false),
    }
}

fn list<T>(v: &Value, f: impl Fn(&Value) -> T) -> Vec<T> {
    v.as_array().into_iter().flatten().map(f).collect()
}

/// The server could not be read: Discord's refusal, as its sentence says it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("I could not read the server: {0}")]
pub(crate) struct Unread(String);

/// The server `guild` (named `name`, owned by `owner`) read fresh, as she (`me`) sees it
/// from channel `here`.
pub(crate) async fn read(
    rest: &Rest,
    guild: u64,
    head: (String, u64, u64, u64),
) -> Result<Guild, Unread> {
    let (name, owner, me, here) = head;
    let get = |path: String| async move {
        rest.call(Method::GET, &path, None)
            .await
            .map_err(|e| Unread(e.sentence()))
    };
    let channels = get(format!("/guilds/{guild}/channels")).await?;
    let roles = get(format!("/guilds/{guild}/roles")).await?;
    let members = get(format!("/guilds/{guild}/members?limit=1000")).await?;
    Ok(Guild {
        id: guild,
        name,
        owner,
        me,
        here,
        channels: list(&channels, channel),
        roles: list(&roles, role),
        members: list(&members, member),
    })
}

fn overwrites_json(list: &[Overwrite]) -> Value {
    Value::Array(
        list.iter()
            .map(|o| {
                json!({
                    "id": o.id.to_string(), "type": if o.member { 1 } else { 0 },
                    "allow": o.allow.to_string(), "deny": o.deny.to_string()
                })
            })
            .collect(),
    )
}

/// The time `minutes` from now, as Discord writes it.
fn minutes_from_now(minutes: u64) -> String {
    let now = serenity::all::Timestamp::now().unix_timestamp();
    let secs = i64::try_from(minutes.saturating_mul(60)).unwrap_or(i64::MAX / 2);
    serenity::all::Timestamp::from_unix_timestamp(now.saturating_add(secs))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// A role's optional colour and flags, set on the REST body `b` when given.
fn role_flags(b: &mut Value, colour: Option<u32>, hoist: Option<bool>, mentionable: Option<bool>) {
    if let Some(c) = colour {
        b["color"] = json!(c);
    }
    if let Some(h) = hoist {
        b["hoist"] = json!(h);
    }
    if let Some(m) = mentionable {
        b["mentionable"] = json!(m);
    }
}

/// Apply `change` to `guild`; a created channel's or role's id.
pub(crate) async fn apply(
    rest: &Rest,
    guild: u64,
    change: &Change,
) -> Result<Option<u64>, ApiError> {
    let g = guild;
    let (method, path, body) = match change {
        Change::CreateChannel {
            name,
            kind,
            parent,
            topic,
            overwrites,
        } => {
            let mut b = json!({"name": name, "type": kind.to_type()});
            if let Some(p) = parent {
                b["parent_id"] = json!(p.to_string());
            }
            if let Some(t) = topic {
                b["topic"] = json!(t);
            }
            if !overwrites.is_empty() {
                b["permission_overwrites"] = overwrites_json(overwrites);
            }
            (Method::POST, format!("/guilds/{g}/channels"), Some(b))
        }
        Change::EditChannel {
            channel,
            name,
            parent,
            topic,
            slowmode,
            overwrites,
        } => {
            let mut b = json!({});
            if let Some(n) = name {
                b["name"] = json!(n);
            }
            if let Some(p) = parent {
                b["parent_id"] = json!(p.map(|p| p.to_string()));
            }
            if let Some(t) = topic {
                b["topic"] = json!(t);
            }
            if let Some(s) = slowmode {
                b["rate_limit_per_user"] = json!(s);
            }
            if let Some(o) = overwrites {
                b["permission_overwrites"] = overwrites_json(o);
            }
            (Method::PATCH, format!("/channels/{channel}"), Some(b))
        }
        Change::DeleteChannel { channel } => (Method::DELETE, format!("/channels/{channel}"), None),
        Change::CreateRole {
            name,
            colour,
            hoist,
            mentionable,
            permissions,
        } => {
            let mut b = json!({"name": name, "permissions": permissions.to_string()});
            role_flags(&mut b, *colour, *hoist, *mentionable);
            (Method::POST, format!("/guilds/{g}/roles"), Some(b))
        }
        Change::EditRole {
            role,
            name,
            colour,
            hoist,
            mentionable,
        } => {
            let mut b = json!({});
            if let Some(n) = name {
                b["name"] = json!(n);
            }
            role_flags(&mut b, *colour, *hoist, *mentionable);
            (Method::PATCH, format!("/guilds/{g}/roles/{role}"), Some(b))
        }
        Change::DeleteRole { role } => (Method::DELETE, format!("/guilds/{g}/roles/{role}"), None),
        Change::GiveRole { user, role } => (
            Method::PUT,
            format!("/guilds/{g}/members/{user}/roles/{role}"),
            None,
        ),
        Change::TakeRole { user, role } => (
            Method::DELETE,
            format!("/guilds/{g}/members/{user}/roles/{role}"),
            None,
        ),
        Change::Kick { user } => (Method::DELETE, format!("/guilds/{g}/members/{user}"), None),
        Change::Ban { user } => (
            Method::PUT,
            format!("/guilds/{g}/bans/{user}"),
            Some(json!({"delete_message_seconds": 0})),
        ),
        Change::Timeout { user, minutes } => (
            Method::PATCH,
            format!("/guilds/{g}/members/{user}"),
            Some(json!({"communication_disabled_until": minutes_from_now(*minutes)})),
        ),
        Change::Nickname { user, nick } => (
            Method::PATCH,
            format!("/guilds/{g}/members/{user}"),
            Some(json!({"nick": if nick.is_empty() { Value::Null } else { json!(nick) }})),
        ),
        Change::MoveToVoice { user, channel } => (
            Method::PATCH,
            format!("/guilds/{g}/members/{user}"),
            Some(json!({"channel_id": channel.to_string()})),
        ),
        Change::ForumPost {
            channel,
            title,
            body,
        } => (
            Method::POST,
            format!("/channels/{channel}/threads"),
            Some(forum_post(title, body)),
        ),
        // Two calls: applied by `set_forum` below.
        Change::SetForum { channel, .. } => (Method::PATCH, format!("/channels/{channel}"), None),
        Change::Post { channel, text } => (
            Method::POST,
            format!("/channels/{channel}/messages"),
            Some(json!({"content": text, "allowed_mentions": {"parse": []}})),
        ),
    };
    if let Change::SetForum {
        channel,
        tags,
        guidelines,
        reaction,
        first,
    } = change
    {
        return set_forum(
            rest,
            *channel,
            tags,
            guidelines.as_deref(),
            reaction.as_deref(),
            first.as_ref(),
        )
        .await;
    }
    let answer = rest.call(method, &path, body.as_ref()).await?;
    let created = matches!(
        change,
        Change::CreateChannel { .. } | Change::CreateRole { .. } | Change::ForumPost { .. }
    );
    Ok(created.then(|| id(&answer["id"])))
}

/// The body of a new forum post.
fn forum_post(title: &str, body: &str) -> Value {
    json!({"name": title, "message": {"content": body, "allowed_mentions": {"parse": []}}})
}

/// Set forum `channel` up (tags, guidelines, default reaction), then its first post.
async fn set_forum(
    rest: &Rest,
    channel: u64,
    tags: &[(String, Option<String>)],
    guidelines: Option<&str>,
    reaction: Option<&str>,
    first: Option<&(String, String)>,
) -> Result<Option<u64>, ApiError> {
    let mut b = json!({});
    if !tags.is_empty() {
        let list: Vec<Value> = tags
            .iter()
            .map(|(name, emoji)| json!({"name": name, "emoji_name": emoji}))
            .collect();
        b["available_tags"] = Value::Array(list);
    }
    if let Some(g) = guidelines {
        b["topic"] = json!(g);
    }
    if let Some(e) = reaction {
        b["default_reaction_emoji"] = json!({"emoji_name": e});
    }
    if b.as_object().is_some_and(|o| !o.is_empty()) {
        rest.call(Method::PATCH, &format!("/channels/{channel}"), Some(&b))
            .await?;
    }
    if let Some((title, body)) = first {
        let post = forum_post(title, body);
        rest.call(
            Method::POST,
            &format!("/channels/{channel}/threads"),
            Some(&post),
        )
        .await?;
    }
    Ok(None)
}
