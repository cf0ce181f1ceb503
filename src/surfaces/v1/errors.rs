//! OpenAI-style error bodies: `{"error": {"message", "type", "param", "code"}}`, the
//! shape the official clients turn into `AuthenticationError`, `BadRequestError`, ….
//! /v1 answers a client's mistake with 4xx and one of these, never a 5xx.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// One /v1 error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1Error {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
    /// The request field at fault, when one is.
    pub param: Option<&'static str>,
    /// OpenAI's error code (`invalid_api_key`, …), when one applies.
    pub code: Option<&'static str>,
}

impl V1Error {
    /// 400 invalid_request_error.
    pub fn bad_request(message: impl Into<String>, param: Option<&'static str>) -> V1Error {
        V1Error {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            param,
            code: None,
        }
    }

    /// 401 with code `invalid_api_key`.
    pub fn unauthorized(message: impl Into<String>) -> V1Error {
        V1Error {
            status: StatusCode::UNAUTHORIZED,
            message: message.into(),
            param: None,
            code: Some("invalid_api_key"),
        }
    }

    /// Any other status.
    pub fn status(status: StatusCode, message: impl Into<String>) -> V1Error {
        V1Error {
            status,
            message: message.into(),
            param: None,
            code: None,
        }
    }

    /// 503 `store_unreachable`: the store could not take the turn, so nothing ran.
    pub fn store_unreachable() -> V1Error {
        V1Error {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: crate::protocol::STORE_UNREACHABLE.into(),
            param: None,
            code: Some("store_unreachable"),
        }
    }

    fn kind(&self) -> &'static str {
        match self.status {
            StatusCode::UNAUTHORIZED => "invalid_request_error",
            StatusCode::NOT_FOUND => "invalid_request_error",
            s if s.is_server_error() => "server_error",
            _ => "invalid_request_error",
        }
    }
}

impl IntoResponse for V1Error {
    fn into_response(self) -> Response {
        let body = json!({
            "error": {
                "message": self.message,
                "type": self.kind(),
                "param": self.param,
                "code": self.code,
            }
        });
        (self.status, Json(body)).into_response()
    }
}
