//! `GET /metrics`: this process's metrics in the Prometheus text format (turns and their
//! latency, model errors, gate decisions by route, cards waiting, voice rooms, shards and
//! their gateway latency). Open like `/health`: counts only, nothing secret.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use super::Shared;

/// The exposition.
pub(super) async fn metrics(State(st): State<Shared>) -> Response {
    let waiting = st.engine.cards().all_open().await.len();
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        crate::metrics::metrics().render(waiting),
    )
        .into_response()
}
