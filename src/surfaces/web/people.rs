//! `POST /api/people/{id}/forget` — the owner erases everything she keeps about one
//! person from the page (docs/discord.md, "Forget me"): the same erase as the person's
//! own `/forget-me`. `{id}` is a Discord user id (or a `<@id>` mention).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{json_error, Shared};
use crate::tools::memory::Notebook;
use crate::tools::port::ErasedBy;

/// Forget one person; 400 when `{id}` names nobody.
pub(super) async fn forget(State(st): State<Shared>, Path(id): Path<String>) -> Response {
    let Some(Notebook::Person(user)) = Notebook::named(&id) else {
        return json_error(
            StatusCode::BAD_REQUEST,
            "invalid_person",
            "name the person by their Discord user id",
        );
    };
    match st.engine.forget_person(user, ErasedBy::Owner).await {
        Ok(e) => Json(json!({
            "forgotten": user.to_string(),
            "erased": {
                "conversations": e.conversations,
                "lines": e.lines,
                "facts": e.facts,
                "notebook": e.notebook,
                "reminders": e.reminders,
                "quotes": e.quotes,
            }
        }))
        .into_response(),
        Err(e) => {
            tracing::error!("forgetting a person from the page: {e}");
            json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store",
                "the erase did not finish; what was erased stays erased — try again",
            )
        }
    }
}
