//! The loopback Discord's wire side: REST under `/api/v10` and the gateway WebSocket
//! (HELLO, IDENTIFY → READY + GUILD_CREATE, heartbeat ACKs, RESUME with replay, and
//! voice state updates answered with the test's voice server, or one that is not).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::payloads::{self, TS};
use super::{lock, Call, GwCmd, Shared};

/// Every REST call: recorded, then answered like Discord would.
pub(super) async fn rest(
    State(sh): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if sh.down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response();
    }
    let path = uri.path().to_string();
    let raw = String::from_utf8_lossy(&body).into_owned();
    let json_body = serde_json::from_str::<Value>(&raw)
        .ok()
        .or_else(|| multipart_json(&raw));
    let at = std::time::Instant::now();
    let created = (method == Method::POST && path.ends_with("/messages")).then(|| sh.next_id());
    let call = Call {
        message_id: created.map(|i| i.to_string()),
        method: method.to_string(),
        path: path.clone(),
        body: json_body.clone().unwrap_or(Value::Null),
        raw,
        at,
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    };
    lock(&sh.calls).push(call);
    sh.notify.notify_waiters();
    let body = json_body.unwrap_or(Value::Null);
    let parts: Vec<&str> = path.trim_start_matches("/api/v10/").split('/').collect();
    let m = method.as_str();
    if let Some(r) = super::manage::route(&sh, m, &parts, &body) {
        return r;
    }
    match (m, parts.as_slice()) {
        ("GET", ["gateway"]) | ("GET", ["gateway", "bot"]) => Json(json!({
            "url": format!("ws://{}/gateway", sh.addr()),
            "shards": sh.shard_count.load(Ordering::SeqCst),
            "session_start_limit": {"total": 1000, "remaining": 1000, "reset_after": 0,
                "max_concurrency": sh.max_concurrency.load(Ordering::SeqCst)}
        }))
        .into_response(),
        // A token containing "revoked" is refused here, as Discord does a reset token.
        ("GET", ["users", "@me"]) | ("GET", ["applications", "@me"]) if revoked(&headers) => (
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "401: Unauthorized", "code": 0})),
        )
            .into_response(),
        ("GET", ["users", "@me"]) => {
            Json(payloads::user(sh.bot_id, "Kotoba", true)).into_response()
        }
        ("GET", ["applications", "@me"]) => Json(json!({
            "id": sh.app_id.to_string(),
            "name": "Kotoba",
            "flags": sh.app_flags.load(Ordering::SeqCst),
            "bot_public": true
        }))
        .into_response(),
        ("POST", ["channels", ch, "messages"]) => {
            let id = created.unwrap_or(0);
            let msg = bot_message(&sh, id, ch, &body);
            lock(&sh.history).push(msg.clone());
            Json(msg).into_response()
        }
        ("PATCH", ["channels", ch, "messages", mid]) => {
            let id = mid.parse().unwrap_or(0);
            Json(bot_message(&sh, id, ch, &body)).into_response()
        }
        ("GET", ["channels", ch, "messages"]) => {
            // Newest first, `after` and `limit` honoured; like Discord's REST messages
            // they carry no guild_id.
            let ch = ch.to_string();
            let query = |key: &str| {
                uri.query().unwrap_or("").split('&').find_map(|kv| {
                    kv.strip_prefix(key)
                        .and_then(|v| v.strip_prefix('='))
                        .and_then(|v| v.parse::<u64>().ok())
                })
            };
            let after = query("after").unwrap_or(0);
            let limit = query("limit").unwrap_or(50) as usize;
            let id_of = |m: &Value| {
                m["id"]
                    .as_str()
                    .and_then(|i| i.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            let mut list: Vec<Value> = lock(&sh.history)
                .iter()
                .filter(|m| m["channel_id"] == json!(ch) && id_of(m) > after)
                .cloned()
                .collect();
            list.sort_by_key(|m| std::cmp::Reverse(id_of(m)));
            list.truncate(limit);
            for m in &mut list {
                if let Some(o) = m.as_object_mut() {
                    o.remove("guild_id");
                    o.remove("member");
                }
            }
            Json(Value::Array(list)).into_response()
        }
        ("GET", ["channels", ch]) => {
            let id: u64 = ch.parse().unwrap_or(0);
            if id == super::DM {
                Json(payloads::dm_channel(id, super::OWNER)).into_response()
            } else {
                let guild = lock(&sh.channel_guilds)
                    .get(&id)
                    .copied()
                    .unwrap_or(super::GUILD);
                Json(payloads::text_channel(id, guild, "channel")).into_response()
            }
        }
        ("POST", ["channels", _, "typing"]) => StatusCode::NO_CONTENT.into_response(),
        ("PUT", ["channels", _, "messages", _, "reactions", _, "@me"]) => {
            StatusCode::NO_CONTENT.into_response()
        }
        ("POST", ["interactions", _, _, "callback"]) => StatusCode::NO_CONTENT.into_response(),
        ("POST", ["webhooks", _, token]) | ("PATCH", ["webhooks", _, token, "messages", _]) => {
            let id = sh.next_id();
            let channel = super::lock(&sh.interaction_channels).get(*token).cloned();
            let channel = channel.unwrap_or_else(|| super::GENERAL.to_string());
            Json(bot_message(&sh, id, &channel, &body)).into_response()
        }
        ("PUT", ["applications", _, "commands"])
        | ("PUT", ["applications", _, "guilds", _, "commands"]) => {
            let list: Vec<Value> = body
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|mut c| {
                    c["id"] = json!(sh.next_id().to_string());
                    c["application_id"] = json!(sh.app_id.to_string());
                    c["version"] = json!("1");
                    if c.get("type").is_none() {
                        c["type"] = json!(1);
                    }
                    c
                })
                .collect();
            Json(Value::Array(list)).into_response()
        }
        ("GET", ["guilds", g, "members"]) => {
            let g: u64 = g.parse().unwrap_or(0);
            let list = lock(&sh.guilds)
                .iter()
                .find(|x| x.id == g)
                .map(|x| x.members.clone())
                .unwrap_or_default();
            Json(Value::Array(list)).into_response()
        }
        ("GET", ["guilds", g, "members", u]) => {
            let g: u64 = g.parse().unwrap_or(0);
            let found = lock(&sh.guilds).iter().find(|x| x.id == g).and_then(|x| {
                x.members
                    .iter()
                    .find(|m| m["user"]["id"] == json!(u))
                    .cloned()
            });
            match found {
                Some(m) => Json(m).into_response(),
                None => unknown(10007, "Unknown Member"),
            }
        }
        _ => unknown(0, "404: Not Found"),
    }
}

fn unknown(code: u32, message: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"message": message, "code": code})),
    )
        .into_response()
}

/// The `payload_json` part of a multipart body (messages with files).
fn multipart_json(raw: &str) -> Option<Value> {
    let at = raw.find("name=\"payload_json\"")?;
    let rest = &raw[at..];
    let start = rest.find("\r\n\r\n")? + 4;
    let end = rest[start..].find("\r\n--")? + start;
    serde_json::from_str(&rest[start..end]).ok()
}

fn bot_message(sh: &Shared, id: u64, channel: &str, body: &Value) -> Value {
    let content = body.get("content").cloned().unwrap_or(json!(""));
    json!({
        "id": id.to_string(), "channel_id": channel, "author": payloads::user(sh.bot_id, "Kotoba", true),
        "content": content, "timestamp": TS, "edited_timestamp": null, "tts": false,
        "mention_everyone": false, "mentions": [], "mention_roles": [], "attachments": [],
        "embeds": body.get("embeds").cloned().unwrap_or(json!([])), "pinned": false, "type": 0,
        "flags": 0, "components": body.get("components").cloned().unwrap_or(json!([]))
    })
}

/// The gateway endpoint: upgrade, then run one connection.
pub(super) async fn gateway(State(sh): State<Arc<Shared>>, ws: WebSocketUpgrade) -> Response {
    if sh.down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response();
    }
    ws.on_upgrade(move |socket| connection(sh, socket))
}

async fn send(socket: &mut WebSocket, v: &Value) -> bool {
    socket
        .send(WsMessage::Text(v.to_string().into()))
        .await
        .is_ok()
}

async fn connection(sh: Arc<Shared>, mut socket: WebSocket) {
    let (tx, mut rx) = mpsc::unbounded_channel::<GwCmd>();
    if !send(
        &mut socket,
        &json!({"op": 10, "d": {"heartbeat_interval": sh.heartbeat_ms}}),
    )
    .await
    {
        return;
    }
    let mut live = false;
    loop {
        tokio::select! {
            cmd = rx.recv() => match cmd {
                Some(GwCmd::Dispatch(v)) => { if !send(&mut socket, &v).await { return; } }
                Some(GwCmd::Drop) | None => {
                    // An abrupt close the client must resume from.
                    let _ = socket.send(WsMessage::Close(Some(CloseFrame { code: 4000, reason: "".into() }))).await;
                    return;
                }
            },
            msg = socket.recv() => {
                let Some(Ok(msg)) = msg else { return };
                let WsMessage::Text(text) = msg else { continue };
                let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else { continue };
                match v["op"].as_u64() {
                    Some(1) if !send(&mut socket, &json!({"op": 11})).await => return,
                    Some(2) => {
                        sh.identifies.fetch_add(1, Ordering::SeqCst);
                        let token = v["d"]["token"].as_str().unwrap_or("");
                        if token.contains("refused") {
                            let _ = socket.send(WsMessage::Close(Some(CloseFrame { code: 4004, reason: "Authentication failed.".into() }))).await;
                            return;
                        }
                        let intents = v["d"]["intents"].as_u64().unwrap_or(0);
                        *lock(&sh.intents) = Some(intents);
                        let privileged = (1 << 1) | (1 << 8) | (1 << 15);
                        if sh.privileged_refused.load(Ordering::SeqCst) && intents & privileged != 0 {
                            let _ = socket.send(WsMessage::Close(Some(CloseFrame { code: 4014, reason: "Disallowed intent(s).".into() }))).await;
                            return;
                        }
                        let shard = v["d"]["shard"][0].as_u64().unwrap_or(0) as u32;
                        let total = v["d"]["shard"][1].as_u64().unwrap_or(1).max(1) as u32;
                        sh.identified_total.store(total, Ordering::SeqCst);
                        lock(&sh.identified).push((shard, std::time::Instant::now()));
                        let ready = sh.ready_for(shard, total);
                        if !send(&mut socket, &sh.stamp_for(shard, "READY", ready)).await { return; }
                        let guilds: Vec<Value> = lock(&sh.guilds)
                            .iter()
                            .filter(|g| super::shard_of(g.id, total) == shard)
                            .map(|g| g.payload.clone())
                            .collect();
                        for g in guilds {
                            if !send(&mut socket, &sh.stamp_for(shard, "GUILD_CREATE", g)).await { return; }
                        }
                        live = true;
                        register(&sh, shard, &tx);
                        sh.notify.notify_waiters();
                    }
                    Some(4) => {
                        // VOICE_STATE_UPDATE from the bot: join (a channel) or leave (null).
                        lock(&sh.voice_updates).push(v["d"].clone());
                        sh.notify.notify_waiters();
                        for e in voice_answer(&sh, &v["d"]).await {
                            if !send(&mut socket, &e).await { return; }
                        }
                    }
                    Some(6) => {
                        sh.resumes.fetch_add(1, Ordering::SeqCst);
                        let after = v["d"]["seq"].as_u64().unwrap_or(0);
                        let replay_from = after.saturating_sub(sh.replay_overlap.load(Ordering::SeqCst));
                        // The session id READY gave says which shard resumes.
                        let shard: u32 = v["d"]["session_id"]
                            .as_str()
                            .and_then(|s| s.rsplit('-').next())
                            .and_then(|n| n.parse().ok())
                            .unwrap_or(0);
                        let missed: Vec<Value> = lock(&sh.sent)
                            .iter()
                            .filter(|(s, to, _)| *s > replay_from && *to == shard)
                            .map(|(_, _, v)| v.clone())
                            .collect();
                        for e in missed {
                            if !send(&mut socket, &e).await { return; }
                        }
                        let resumed = sh.stamp_for(shard, "RESUMED", json!({}));
                        if !send(&mut socket, &resumed).await { return; }
                        live = true;
                        register(&sh, shard, &tx);
                        sh.notify.notify_waiters();
                    }
                    _ => {}
                }
            }
        }
        let _ = live;
    }
}

/// Add a live connection to `shard`'s (dropping the closed ones).
fn register(sh: &Shared, shard: u32, tx: &mpsc::UnboundedSender<GwCmd>) {
    let mut conns = lock(&sh.conns);
    let list = conns.entry(shard).or_default();
    list.retain(|c| !c.is_closed());
    list.push(tx.clone());
}

/// Discord's answer to the bot's voice state update `d`: its new voice state and, when
/// it joins a channel, a voice server: the one a test set up
/// ([`super::FakeDiscord::use_voice_server`]), else a loopback port that accepts and
/// hangs up (so the voice connection fails like an unreachable one).
async fn voice_answer(sh: &Shared, d: &Value) -> Vec<Value> {
    // serenity sends ids as numbers; Discord sends them as strings.
    let id = |v: &Value| match v {
        Value::Number(n) => json!(n.to_string()),
        other => other.clone(),
    };
    let guild = id(&d["guild_id"]);
    let state = json!({
        "guild_id": guild, "channel_id": id(&d["channel_id"]), "user_id": sh.bot_id.to_string(),
        "session_id": "fake-voice-session", "deaf": false, "mute": false,
        "self_deaf": d["self_deaf"].as_bool().unwrap_or(false),
        "self_mute": d["self_mute"].as_bool().unwrap_or(false),
        "self_video": false, "suppress": false, "request_to_speak_timestamp": null
    });
    let mut out = vec![sh.stamp("VOICE_STATE_UPDATE", state)];
    if !d["channel_id"].is_null() {
        let chosen = lock(&sh.voice_endpoint).clone();
        let endpoint = match chosen {
            Some(e) => e,
            None => not_a_voice_server().await,
        };
        out.push(sh.stamp(
            "VOICE_SERVER_UPDATE",
            json!({"token": "fake-voice-token", "guild_id": guild, "endpoint": endpoint}),
        ));
    }
    out
}

/// `127.0.0.1:PORT` of a listener that drops every connection at once.
async fn not_a_voice_server() -> String {
    let Ok(listener) = tokio::net::TcpListener::bind("127.0.0.1:0").await else {
        return "127.0.0.1:9".into();
    };
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "127.0.0.1:9".into());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            drop(stream);
        }
    });
    addr
}

/// Whether a request's bot token says it was revoked (a test's way to make Discord
/// refuse it over REST).
fn revoked(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("revoked"))
}
