//! `GET /health`: answers as soon as the server runs, which is after the engine was
//! built (the store opened, the soul read), and says whether Discord is connected.
//! Open to anyone; it says nothing secret.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::Shared;

/// `{"status": "ok"}`, with `"discord": "connected"` or `"connecting"` when Discord is
/// configured.
pub(super) async fn health(State(st): State<Shared>) -> Json<Value> {
    match &st.options.discord {
        None => Json(json!({ "status": "ok" })),
        Some(port) => {
            let discord = if port.get().is_some() {
                "connected"
            } else {
                "connecting"
            };
            Json(json!({ "status": "ok", "discord": discord }))
        }
    }
}
