//! The loopback Discord's server-management routes: the guild's channels and roles as
//! live state (create, modify, delete; member roles, nicknames, timeouts, kicks, bans),
//! answered in Discord's JSON shapes, and faults a test queues: Discord's real error JSON
//! (50013 Missing Permissions, 50035 Invalid Form Body) and 429s with `retry_after`.

use std::collections::VecDeque;

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::{lock, Shared};

/// One queued fault: the next call whose method is `method` and whose path contains
/// `path` is answered with `status` and `body` (and `Retry-After` for a 429).
#[derive(Debug, Clone)]
pub struct Fault {
    /// GET, POST, PATCH, PUT, DELETE.
    pub method: String,
    /// Part of the path.
    pub path: String,
    /// The status.
    pub status: u16,
    /// The JSON body.
    pub body: Value,
    /// Only a call whose body holds this text (None: any).
    pub body_has: Option<String>,
}

impl Fault {
    /// Discord's Missing Permissions.
    pub fn missing_permissions(method: &str, path: &str) -> Fault {
        Fault {
            method: method.into(),
            path: path.into(),
            status: 403,
            body: json!({"message": "Missing Permissions", "code": 50013}),
            body_has: None,
        }
    }

    /// Only for a call whose JSON body holds `text`.
    pub fn when_body_has(mut self, text: &str) -> Fault {
        self.body_has = Some(text.into());
        self
    }

    /// Discord's rate limit, `secs` to wait.
    pub fn rate_limited(method: &str, path: &str, secs: f64) -> Fault {
        Fault {
            method: method.into(),
            path: path.into(),
            status: 429,
            body: json!({"message": "You are being rate limited.", "retry_after": secs, "global": false}),
            body_has: None,
        }
    }
}

/// The guild's live channels, roles and queued faults.
#[derive(Default)]
pub struct Server {
    /// Channels and categories, in Discord's JSON.
    pub channels: Vec<Value>,
    /// Roles, in Discord's JSON.
    pub roles: Vec<Value>,
    /// Faults waiting for their call.
    pub faults: VecDeque<Fault>,
    /// Forum posts (threads), with their first message.
    pub threads: Vec<Value>,
    /// Banned user ids.
    pub bans: Vec<String>,
}

fn error(status: u16, body: Value, retry: Option<f64>) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = (code, Json(body)).into_response();
    if let Some(secs) = retry {
        if let Ok(v) = HeaderValue::from_str(&format!("{secs}")) {
            r.headers_mut().insert("retry-after", v);
        }
        r.headers_mut()
            .insert("x-ratelimit-scope", HeaderValue::from_static("user"));
    }
    r
}

fn invalid_name() -> Response {
    error(
        400,
        json!({"message": "Invalid Form Body", "code": 50035, "errors": {"name": {"_errors": [
            {"code": "BASE_TYPE_BAD_LENGTH", "message": "Must be between 1 and 100 in length."}
        ]}}}),
        None,
    )
}

fn unknown(code: u32, message: &str) -> Response {
    error(404, json!({"message": message, "code": code}), None)
}

fn set(target: &mut Value, body: &Value, keys: &[&str]) {
    for k in keys {
        if let Some(v) = body.get(*k) {
            target[*k] = v.clone();
        }
    }
}

fn overwrites(body: &Value) -> Value {
    let list: Vec<Value> = body["permission_overwrites"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            json!({"id": o["id"], "type": o["type"], "allow": o["allow"].as_str().unwrap_or("0"),
                   "deny": o["deny"].as_str().unwrap_or("0")})
        })
        .collect();
    Value::Array(list)
}

/// Answer a management call, or `None` when it is not one.
pub(crate) fn route(sh: &Shared, method: &str, parts: &[&str], body: &Value) -> Option<Response> {
    let path = parts.join("/");
    {
        let mut server = lock(&sh.server);
        let at = server.faults.iter().position(|f| {
            f.method == method
                && path.contains(&f.path)
                && f.body_has
                    .as_ref()
                    .is_none_or(|t| body.to_string().contains(t))
        });
        if let Some(i) = at {
            let f = server.faults.remove(i)?;
            let retry = (f.status == 429).then(|| f.body["retry_after"].as_f64().unwrap_or(1.0));
            return Some(error(f.status, f.body, retry));
        }
    }
    let guild = super::GUILD.to_string();
    let no_content = || Some(StatusCode::NO_CONTENT.into_response());
    match (method, parts) {
        ("GET", ["guilds", _, "channels"]) => {
            Some(Json(Value::Array(lock(&sh.server).channels.clone())).into_response())
        }
        ("GET", ["guilds", _, "roles"]) => {
            Some(Json(Value::Array(lock(&sh.server).roles.clone())).into_response())
        }
        ("POST", ["guilds", _, "channels"]) => {
            let name = body["name"].as_str().unwrap_or("");
            if name.is_empty() || name.chars().count() > 100 {
                return Some(invalid_name());
            }
            let c = json!({
                "id": sh.next_id().to_string(), "type": body["type"].as_u64().unwrap_or(0),
                "guild_id": guild, "name": name, "position": lock(&sh.server).channels.len(),
                "permission_overwrites": overwrites(body), "nsfw": false,
                "parent_id": body.get("parent_id").cloned().unwrap_or(Value::Null),
                "topic": body.get("topic").cloned().unwrap_or(Value::Null),
                "rate_limit_per_user": 0, "flags": 0
            });
            lock(&sh.server).channels.push(c.clone());
            Some(Json(c).into_response())
        }
        ("PATCH", ["channels", ch]) => {
            let mut server = lock(&sh.server);
            let Some(c) = server.channels.iter_mut().find(|c| c["id"] == json!(ch)) else {
                return Some(unknown(10003, "Unknown Channel"));
            };
            if body
                .get("name")
                .is_some_and(|n| n.as_str().is_none_or(str::is_empty))
            {
                return Some(invalid_name());
            }
            set(
                c,
                body,
                &[
                    "name",
                    "parent_id",
                    "topic",
                    "rate_limit_per_user",
                    "available_tags",
                    "default_reaction_emoji",
                ],
            );
            if body.get("permission_overwrites").is_some() {
                c["permission_overwrites"] = overwrites(body);
            }
            Some(Json(c.clone()).into_response())
        }
        ("POST", ["channels", forum, "threads"]) => {
            let mut server = lock(&sh.server);
            let is_forum = |c: &Value| c["id"] == json!(forum) && c["type"] == json!(15);
            if !server.channels.iter().any(is_forum) {
                return Some(unknown(10003, "Unknown Channel"));
            }
            let t = json!({
                "id": sh.next_id().to_string(), "type": 11, "guild_id": guild,
                "name": body["name"], "parent_id": forum, "flags": 0,
                "message": body["message"]
            });
            server.threads.push(t.clone());
            Some(Json(t).into_response())
        }
        ("DELETE", ["channels", ch]) => {
            let mut server = lock(&sh.server);
            let at = server.channels.iter().position(|c| c["id"] == json!(ch));
            match at {
                Some(i) => Some(Json(server.channels.remove(i)).into_response()),
                None => Some(unknown(10003, "Unknown Channel")),
            }
        }
        ("POST", ["guilds", _, "roles"]) => {
            let id = sh.next_id();
            let mut r = super::payloads::role(id, body["name"].as_str().unwrap_or("new role"), 0);
            r["position"] = json!(1);
            set(
                &mut r,
                body,
                &["color", "hoist", "mentionable", "permissions"],
            );
            lock(&sh.server).roles.push(r.clone());
            Some(Json(r).into_response())
        }
        ("PATCH", ["guilds", _, "roles", role]) => {
            let mut server = lock(&sh.server);
            let Some(r) = server.roles.iter_mut().find(|r| r["id"] == json!(role)) else {
                return Some(unknown(10011, "Unknown Role"));
            };
            set(r, body, &["name", "color", "hoist", "mentionable"]);
            Some(Json(r.clone()).into_response())
        }
        ("DELETE", ["guilds", _, "roles", role]) => {
            let mut server = lock(&sh.server);
            let before = server.roles.len();
            server.roles.retain(|r| r["id"] != json!(role));
            if server.roles.len() == before {
                return Some(unknown(10011, "Unknown Role"));
            }
            no_content()
        }
        ("PUT" | "DELETE", ["guilds", _, "members", user, "roles", role]) => {
            let mut guilds = lock(&sh.guilds);
            let Some(m) = guilds
                .iter_mut()
                .flat_map(|g| g.members.iter_mut())
                .find(|m| m["user"]["id"] == json!(user))
            else {
                return Some(unknown(10007, "Unknown Member"));
            };
            let mut roles: Vec<Value> = m["roles"].as_array().cloned().unwrap_or_default();
            roles.retain(|r| r != &json!(role));
            if method == "PUT" {
                roles.push(json!(role));
            }
            m["roles"] = Value::Array(roles);
            no_content()
        }
        ("PATCH", ["guilds", _, "members", user]) => {
            let mut guilds = lock(&sh.guilds);
            let Some(m) = guilds
                .iter_mut()
                .flat_map(|g| g.members.iter_mut())
                .find(|m| m["user"]["id"] == json!(user))
            else {
                return Some(unknown(10007, "Unknown Member"));
            };
            set(m, body, &["nick", "communication_disabled_until"]);
            Some(Json(m.clone()).into_response())
        }
        ("DELETE", ["guilds", _, "members", user]) => {
            let mut guilds = lock(&sh.guilds);
            for g in guilds.iter_mut() {
                g.members.retain(|m| m["user"]["id"] != json!(user));
            }
            no_content()
        }
        ("PUT", ["guilds", _, "bans", user]) => {
            lock(&sh.server).bans.push(user.to_string());
            let mut guilds = lock(&sh.guilds);
            for g in guilds.iter_mut() {
                g.members.retain(|m| m["user"]["id"] != json!(user));
            }
            no_content()
        }
        _ => None,
    }
}
