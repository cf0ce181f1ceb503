//! Every error the page's API answers is JSON `{"error", "message"}` in plain words: an
//! extractor's own rejection (a path or query that does not parse, a body that is not
//! JSON) is rewritten, never left as plain text in Rust's wording. The login form a
//! browser gets at `/` stays HTML.

use axum::extract::Request;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use super::json_error;

/// The largest rejection body read back to be rewritten.
const MAX_BODY: usize = 64 * 1024;

/// Rewrite an error answered as anything but JSON into `{"error", "message"}`.
pub(super) async fn json_errors(req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    let status = resp.status();
    // JSON is already in shape; HTML is the page's own login form, for a person.
    let is_ours = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    if !(status.is_client_error() || status.is_server_error()) || is_ours {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let message = plain(String::from_utf8_lossy(&bytes).trim(), status);
    let mut out = json_error(status, code(status), &message);
    for (name, value) in &parts.headers {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// The error code for a status.
fn code(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "bad_request",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "timeout",
        413 => "too_large",
        415 => "unsupported_media_type",
        422 => "unprocessable",
        s if s >= 500 => "server_error",
        _ => "error",
    }
}

/// A rejection's text in plain words.
pub(super) fn plain(text: &str, status: StatusCode) -> String {
    if let Some((_, rest)) = text.split_once("Cannot parse `") {
        let value = rest.split('`').next().unwrap_or("");
        let kind = rest
            .rsplit("to a `")
            .next()
            .unwrap_or("")
            .trim_end_matches('`');
        let wanted = if kind.starts_with('i') || kind.starts_with('u') {
            "a whole number"
        } else {
            "a value of another kind"
        };
        return format!("`{value}` in the address is not {wanted}");
    }
    let rewrites = [
        (
            "Failed to deserialize query string: ",
            "the query string is not understood: ",
        ),
        (
            "Failed to parse the request body as JSON: ",
            "the body is not valid JSON: ",
        ),
        (
            "Failed to deserialize the JSON body into the target type: ",
            "the JSON body does not hold what this call takes: ",
        ),
        (
            "Expected request with `Content-Type: application/json`",
            "send the body as JSON (Content-Type: application/json)",
        ),
    ];
    for (from, to) in rewrites {
        if let Some(rest) = text.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("the request was refused")
            .to_lowercase()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_wording_becomes_plain_words() {
        let t = plain(
            "Invalid URL: Cannot parse `xyz` to a `i64`",
            StatusCode::BAD_REQUEST,
        );
        assert_eq!(t, "`xyz` in the address is not a whole number");
        let t = plain("", StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(t, "method not allowed");
    }
}
