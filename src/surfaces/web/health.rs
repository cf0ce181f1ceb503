//! `GET /health`: answers as soon as the server runs, which is after the engine was
//! built (the store opened, the soul read). Open to anyone; it says nothing secret.

use axum::Json;
use serde_json::{json, Value};

/// `{"status": "ok"}`.
pub(super) async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}
