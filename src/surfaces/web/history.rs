//! `GET /api/history?session=ID`: the stored transcript of a web session (hidden
//! `__work_done__` lines are never stored), so a reloaded page shows the conversation.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{engine_session, json_error, parse_session_id, SessionQuery, Shared};
/// How many of the newest lines a reloaded page shows (the model's view is the
/// engine's: summary and tail, docs/engine.md "Long conversations").
const SHOWN_LINES: usize = 200;

/// The last lines of the conversation, oldest first.
pub(super) async fn history(State(st): State<Shared>, Query(q): Query<SessionQuery>) -> Response {
    let id = match parse_session_id(&q.session) {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    match st.engine.store().history(&engine_session(&id), SHOWN_LINES).await {
        Ok(lines) => Json(
            lines
                .into_iter()
                .map(|m| json!({ "role": m.role, "author": m.author, "text": m.text, "at_ms": m.at_ms }))
                .collect::<Vec<_>>(),
        )
        .into_response(),
        Err(e) => {
            tracing::warn!("reading the transcript of {id}: {e}");
            json_error(StatusCode::SERVICE_UNAVAILABLE, "store", "the transcript could not be read")
        }
    }
}
