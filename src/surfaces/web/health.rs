//! `GET /health`: answers as soon as the server runs, which is after the engine was
//! built (the store opened, the soul read), and says whether Discord and each voice
//! room are connected, and whether the store answers. Open to anyone; it says nothing
//! secret.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Map, Value};

use super::Shared;

/// `{"status": "ok", "store": "ok" | "unreachable"}` (the store as its last call found
/// it; while unreachable a probe tries it again in the background); when Discord is
/// configured, also `"discord"` and `"voice"` as [`discord_link`] writes them.
pub(super) async fn health(State(st): State<Shared>) -> Json<Value> {
    let mut body = Map::new();
    body.insert("status".into(), json!("ok"));
    let reachable = if st.engine.store().reachable_now() {
        "ok"
    } else {
        "unreachable"
    };
    body.insert("store".into(), json!(reachable));
    if let Some(link) = discord_link(&st).await {
        body.extend(link);
    }
    Json(Value::Object(body))
}

/// Discord's connection, or `None` when Discord is not configured: `"discord"` is
/// `"connected"` (every gateway shard of this process is up), `"reconnecting"` (a
/// shard's socket dropped and is coming back) or `"connecting"` (not yet ready, or
/// retrying the first connection); `"voice"` lists each voice room with whether its
/// voice socket is connected.
pub(super) async fn discord_link(st: &Shared) -> Option<Map<String, Value>> {
    let slot = st.options.discord.as_ref()?;
    let mut out = Map::new();
    let Some(port) = slot.get() else {
        out.insert("discord".into(), json!("connecting"));
        out.insert("voice".into(), json!([]));
        return Some(out);
    };
    let link = port.link().await;
    let state = if link.connected() {
        "connected"
    } else {
        "reconnecting"
    };
    let voice: Vec<Value> = link
        .voice
        .iter()
        .map(|v| {
            json!({
                "guild": v.guild.to_string(),
                "channel": v.channel.to_string(),
                "connected": v.connected,
            })
        })
        .collect();
    out.insert("discord".into(), json!(state));
    out.insert("voice".into(), json!(voice));
    Some(out)
}
