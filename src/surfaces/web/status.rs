//! `GET /api/status?session=ID`: what the page shows in its header — the model, whether
//! /v1 has a key, exactly what to set when she cannot think yet (App::missing_setup),
//! how much of the model's window the session uses (docs/engine.md, "Long
//! conversations"), and Discord's connection as `/health` says it (`null`: no Discord).

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{engine_session, json_error, parse_session_id, SessionQuery, Shared};

/// The page's status line, read live.
pub(super) async fn status(State(st): State<Shared>, Query(q): Query<SessionQuery>) -> Response {
    let id = match parse_session_id(&q.session) {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    let config = &st.engine.config();
    let settings = config.settings();
    let context = st.engine.context_use(&engine_session(&id)).await;
    let discord = match super::health::discord_link(&st).await {
        Some(link) => serde_json::Value::Object(link),
        None => serde_json::Value::Null,
    };
    Json(json!({
        "model": settings.model,
        "missing_setup": crate::app::missing_setup(config),
        "password_set": st.options.password.is_some(),
        "auth": st.guard.mode(),
        "v1_key_set": st.options.api_key.is_some(),
        "v1_model": super::MODEL_NAME,
        "discord": discord,
        "context": {
            "tokens": context.tokens,
            "window": context.window,
            "compact_at": context.compact_at,
            "summarised": context.summarised,
        },
    }))
    .into_response()
}
