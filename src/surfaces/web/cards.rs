//! `POST /api/cards/{request_id}` with `{"decision": "approve" | "always_exact" |
//! "always_family" | "deny"}` and, with it, `"reason"` (a no, in the person's words),
//! `"edited"` (the command as they edited it, approved once; the gate judges it again),
//! `"for_s"` (how long an "always" lasts) or `"text"` (an input card: ask_user,
//! clarify, ask_secret): the page answers any card waiting for the owner, in any
//! session, as its owner ([`web_owner`]). An answer that does not fit the card is a 400
//! naming why; a card that already settled answers 409 "already settled"; a card
//! waiting in another process while the shared store does not answer is a 503; nothing
//! changes either way. A card of another process sharing the store is answered here as
//! well as one of this process (docs/deploy.md).

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::auth::web_owner;
use super::message::bad_body;
use super::{json_error, Shared};
use crate::engine::AnswerError;
use crate::protocol::CardAnswer;

/// Answer one card.
pub(super) async fn answer(
    State(st): State<Shared>,
    Path(request_id): Path<String>,
    body: Result<Json<CardAnswer>, JsonRejection>,
) -> Response {
    let Json(a) = match body {
        Ok(b) => b,
        Err(e) => return bad_body(e),
    };
    let decision = a.decision;
    let answered = st.engine.answer(&request_id, a, &web_owner()).await;
    // The typed text is never echoed back: it may be a secret.
    match answered {
        Ok(()) => Json(json!({ "request_id": request_id, "decision": decision })).into_response(),
        Err(e) => {
            let (status, code) = match e {
                AnswerError::AlreadySettled => (StatusCode::CONFLICT, "already_settled"),
                AnswerError::Unknown => (StatusCode::NOT_FOUND, "unknown_card"),
                AnswerError::NotYours => (StatusCode::FORBIDDEN, "not_yours"),
                AnswerError::Invalid(_) => (StatusCode::BAD_REQUEST, "invalid_answer"),
                AnswerError::StoreUnreachable(_) => {
                    (StatusCode::SERVICE_UNAVAILABLE, "store_unreachable")
                }
            };
            json_error(status, code, &e.to_string())
        }
    }
}
