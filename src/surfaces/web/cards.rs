//! `POST /api/cards/{request_id}` with `{"decision": "approve" | "always_exact" |
//! "always_family" | "deny"}` (and `"text"` for an input card: ask_user, clarify,
//! ask_secret): the page answers a card as its owner ([`web_owner`]).
//! A card that already settled answers 409 "already settled" and nothing changes.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::auth::web_owner;
use super::message::bad_body;
use super::{json_error, Shared};
use crate::engine::AnswerError;
use crate::protocol::Decision;

/// The answer.
#[derive(Deserialize)]
pub(super) struct Answer {
    decision: Decision,
    /// The typed answer of an input card.
    #[serde(default)]
    text: Option<String>,
}

/// Answer one card.
pub(super) async fn answer(
    State(st): State<Shared>,
    Path(request_id): Path<String>,
    body: Result<Json<Answer>, JsonRejection>,
) -> Response {
    let Json(a) = match body {
        Ok(b) => b,
        Err(e) => return bad_body(e),
    };
    let answered = match (&a.text, a.decision) {
        (Some(text), d) if d.approves() => st.engine.answer_text(&request_id, text, &web_owner()),
        _ => st.engine.answer_card(&request_id, a.decision, &web_owner()),
    };
    // The typed text is never echoed back: it may be a secret.
    match answered {
        Ok(()) => Json(json!({ "request_id": request_id, "decision": a.decision })).into_response(),
        Err(e) => {
            let (status, code) = match e {
                AnswerError::AlreadySettled => (StatusCode::CONFLICT, "already_settled"),
                AnswerError::Unknown => (StatusCode::NOT_FOUND, "unknown_card"),
                AnswerError::NotYours => (StatusCode::FORBIDDEN, "not_yours"),
            };
            json_error(status, code, &e.to_string())
        }
    }
}
