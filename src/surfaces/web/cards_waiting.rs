//! `GET /api/cards`: every card waiting for the owner, in every session and from every
//! surface (the page's own, Discord's, the terminal's, a job's), soonest to expire
//! first — the page answers any of them with `POST /api/cards/{request_id}`.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::Shared;

/// The waiting cards.
pub(super) async fn list(State(st): State<Shared>) -> Response {
    Json(st.engine.all_open_cards().await).into_response()
}
