//! `GET /api/grants` (every saved "always" grant, who granted it and when) and
//! `DELETE /api/grants/{id}` (revoke one) — the page's grant list.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{json_error, Shared};

/// Every saved grant.
pub(super) async fn list(State(st): State<Shared>) -> Response {
    match st.engine.grants().await {
        Ok(grants) => Json(grants).into_response(),
        Err(e) => {
            tracing::warn!("listing grants: {e}");
            json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store",
                "the grants could not be read",
            )
        }
    }
}

/// Revoke one grant; 404 when there is none with that id.
pub(super) async fn revoke(State(st): State<Shared>, Path(id): Path<i64>) -> Response {
    match st.engine.revoke_grant(id).await {
        Ok(true) => Json(json!({ "revoked": id })).into_response(),
        Ok(false) => json_error(
            StatusCode::NOT_FOUND,
            "unknown_grant",
            "there is no grant with that id",
        ),
        Err(e) => {
            tracing::warn!("revoking grant {id}: {e}");
            json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store",
                "the grant could not be revoked",
            )
        }
    }
}
