//! The OpenAI-compatible `/v1` — the ElevenLabs agent's custom LLM, also usable from
//! the official OpenAI clients: `POST /v1/chat/completions` (chat_completions.rs) and
//! `GET /v1/models` (models.rs), behind a bearer key (auth.rs), every client mistake
//! answered with an OpenAI-style 4xx body (errors.rs). Hosted by the web server.
//!
//! Every turn it starts is register voice, channel voice, `el_call_bound = Some(true)`,
//! and replaces a turn already running in its session; sessions are shared with the
//! web page (`web:<id>`), so with the page open a gated command defers to its card.

pub mod auth;
pub mod chat_completions;
pub mod errors;
mod models;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::surfaces::web::WebOptions;

pub use chat_completions::{parse_request, ChatRequest};
pub use errors::V1Error;

/// What /v1's routes share.
pub(crate) struct V1State {
    pub(crate) engine: Arc<Engine>,
    pub(crate) options: WebOptions,
    pub(crate) shutdown: CancellationToken,
}

/// Shared handle of [`V1State`].
pub(crate) type V1 = Arc<V1State>;

/// The /v1 routes, ready to merge into the web server's router.
pub fn router(engine: Arc<Engine>, options: WebOptions, shutdown: CancellationToken) -> Router {
    let state: V1 = Arc::new(V1State {
        engine,
        options,
        shutdown,
    });
    Router::new()
        .route(
            "/v1/chat/completions",
            post(chat_completions::handle).fallback(method_not_allowed),
        )
        .route("/v1/models", get(models::list).fallback(method_not_allowed))
        .route("/v1", axum::routing::any(not_found))
        .route("/v1/{*rest}", axum::routing::any(not_found))
        .with_state(state)
}

async fn not_found() -> axum::response::Response {
    V1Error::status(StatusCode::NOT_FOUND, "there is no such endpoint under /v1").into_response()
}

async fn method_not_allowed() -> axum::response::Response {
    V1Error::status(
        StatusCode::METHOD_NOT_ALLOWED,
        "that method is not allowed here",
    )
    .into_response()
}
