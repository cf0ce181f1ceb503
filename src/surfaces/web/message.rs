//! `POST /api/message` (a typed message) and `POST /api/stop` (cut the running turn).
//! A typed message is register voice (she still speaks) and channel text (the roomy
//! 180 s card window), as the seeds' web rule says; text-only (the page's mute) makes
//! it register text. With the page's voice socket open and not muted, the turn runs in
//! that voice room and she says it aloud. The answer streams over the event stream;
//! this returns at once (202).

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::{engine_session, json_error, parse_session_id, Shared};
use crate::engine::{StopScope, TurnOptions, WORK_DONE_SENTINEL};
use crate::protocol::{Channel, Origin, Register, TurnRequest};
use crate::session::SessionId;

/// The longest typed message accepted, in characters.
const MAX_CHARS: usize = 16_000;

/// A typed message.
#[derive(Deserialize)]
pub(super) struct Message {
    #[serde(default = "super::default_session")]
    session: String,
    text: String,
    #[serde(default)]
    text_only: bool,
}

/// The turn a typed message on the page's session `id` starts.
pub(crate) fn typed_turn(id: &str, text: &str, text_only: bool) -> TurnRequest {
    TurnRequest {
        register: if text_only {
            Register::Text
        } else {
            Register::Voice
        },
        channel: Channel::Text,
        // Behind the page's password (or loopback-only with none set): the owner.
        ..TurnRequest::text(Origin::Owner, SessionId::page(id), "web", text)
    }
}

/// Map a JSON body rejection to the page's error shape.
pub(super) fn bad_body(e: JsonRejection) -> Response {
    json_error(
        e.status(),
        "bad_request",
        &super::errors::plain(&e.body_text(), e.status()),
    )
}

/// Start a turn; 202 with the session id.
pub(super) async fn message(
    State(st): State<Shared>,
    body: Result<Json<Message>, JsonRejection>,
) -> Response {
    let Json(m) = match body {
        Ok(b) => b,
        Err(e) => return bad_body(e),
    };
    let id = match parse_session_id(&m.session) {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    let text = m.text.trim();
    if text.is_empty() {
        return json_error(StatusCode::BAD_REQUEST, "empty", "the message is empty");
    }
    if text.chars().count() > MAX_CHARS {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_long",
            &format!("a message may be at most {MAX_CHARS} characters"),
        );
    }
    if text.starts_with(WORK_DONE_SENTINEL) {
        return json_error(
            StatusCode::BAD_REQUEST,
            "reserved",
            "that word is reserved for announcing finished work",
        );
    }
    if !st.engine.store().reachable_now() {
        return json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unreachable",
            crate::protocol::STORE_UNREACHABLE,
        );
    }
    let req = typed_turn(&id, text, m.text_only);
    // With the page's voice socket open she says it aloud; otherwise she writes.
    let written = if m.text_only {
        Some(req)
    } else {
        super::voice::speak_typed(&st, req)
    };
    if let Some(req) = written {
        let engine = st.engine.clone();
        tokio::spawn(async move {
            engine.run_turn(req, TurnOptions::default()).await;
        });
    }
    (StatusCode::ACCEPTED, Json(json!({ "session": id }))).into_response()
}

/// Which session to stop.
#[derive(Deserialize)]
pub(super) struct Stop {
    #[serde(default = "super::default_session")]
    session: String,
}

/// Cut the running turn of a session (its rows close as interrupted).
pub(super) async fn stop(
    State(st): State<Shared>,
    body: Result<Json<Stop>, JsonRejection>,
) -> Response {
    let Json(s) = match body {
        Ok(b) => b,
        Err(e) => return bad_body(e),
    };
    let id = match parse_session_id(&s.session) {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    let stopped = st.engine.stop(&engine_session(&id), StopScope::Turn);
    Json(json!({ "stopped": true, "turn": stopped.turn })).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_message_is_voice_register_text_channel_unless_text_only() {
        let t = typed_turn("main", "hi", false);
        assert_eq!(t.session, "web:main");
        assert_eq!(t.session.place(), crate::session::Place::Page);
        assert_eq!((t.register, t.channel), (Register::Voice, Channel::Text));
        assert_eq!(t.el_call_bound, Some(false));
        assert!(!t.replace_running && !t.hidden);
        let t = typed_turn("main", "hi", true);
        assert_eq!((t.register, t.channel), (Register::Text, Channel::Text));
    }
}
