//! `GET /v1/models`: the one model name (`kotoba`), in OpenAI's list shape.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{auth, V1};
use crate::surfaces::web::MODEL_NAME;

/// The model list.
pub(super) async fn list(State(st): State<V1>, headers: HeaderMap) -> Response {
    if let Err(e) = auth::check(&headers, st.options.api_key.as_deref()) {
        return e.into_response();
    }
    Json(json!({
        "object": "list",
        "data": [{ "id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "kotoba" }],
    }))
    .into_response()
}
