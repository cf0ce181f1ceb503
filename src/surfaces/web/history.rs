//! `GET /api/history?session=ID`: the stored conversation of a web session as it was
//! drawn — its lines and, between them, each turn's step rows with their outcomes and
//! outputs (`{"role": "step", "step": {...}}`) — so a reloaded page, or the page on
//! another device, redraws every finished turn. Hidden `__work_done__` lines are never
//! shown.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{engine_session, json_error, parse_session_id, SessionQuery, Shared};
use crate::store::Shown;
/// How many of the newest lines a reloaded page shows (the model's view is the
/// engine's: summary and tail, docs/engine.md "Long conversations").
const SHOWN_LINES: usize = 200;

/// The last lines of the conversation and the rows among them, oldest first.
pub(super) async fn history(State(st): State<Shared>, Query(q): Query<SessionQuery>) -> Response {
    let id = match parse_session_id(&q.session) {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    match st.engine.store().shown(&engine_session(&id), SHOWN_LINES).await {
        Ok(entries) => Json(
            entries
                .into_iter()
                .map(|e| match e {
                    Shown::Line(m) => {
                        json!({ "role": m.role, "author": m.author, "text": m.text, "at_ms": m.at_ms })
                    }
                    Shown::Step { at_ms, row, .. } => {
                        json!({ "role": "step", "at_ms": at_ms, "step": row })
                    }
                })
                .collect::<Vec<_>>(),
        )
        .into_response(),
        Err(e) => {
            tracing::warn!("reading the transcript of {id}: {e}");
            json_error(StatusCode::SERVICE_UNAVAILABLE, "store", "the transcript could not be read")
        }
    }
}
