//! `GET /api/audit[?session=ID][&limit=N]`: the newest audit rows (every gate decision
//! and every run that reached the machine), newest first; one web session's, or all.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::{engine_session, json_error, parse_session_id, Shared};

/// The list's query.
#[derive(Deserialize)]
pub(super) struct AuditQuery {
    session: Option<String>,
    limit: Option<usize>,
}

/// The newest rows (100 by default, at most 1000).
pub(super) async fn list(State(st): State<Shared>, Query(q): Query<AuditQuery>) -> Response {
    let session = match q.session.as_deref().map(parse_session_id).transpose() {
        Ok(s) => s.map(|id| engine_session(&id)),
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    match st.engine.audit_trail(session.as_deref(), limit).await {
        Ok(rows) => Json(rows).into_response(),
        Err(e) => {
            tracing::warn!("reading the audit trail: {e}");
            json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store",
                "the audit trail could not be read",
            )
        }
    }
}
