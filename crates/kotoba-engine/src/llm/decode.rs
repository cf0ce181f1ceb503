//! What both wire formats share: one decoder core ([`Decoding`]) under the Chat
//! Completions and Responses stream readers, the function a tool is offered as, and the
//! mapping from HTTP statuses and error bodies to typed [`LlmError`]s.
//!
//! The two streams differ in their events (chunks with deltas and a `finish_reason`,
//! or typed events per output item), but what is done around each event is the same
//! logic, so it is one piece: a payload that is not JSON is [`LlmError::Malformed`],
//! text is sent to the caller as it arrives and marks the reply as streamed (nothing
//! is retried after that), the input tokens the server reported are kept, and a stream
//! that ended before the format's own end is [`LlmError::Stream`]. A [`Wire`] reads
//! only its own events.

use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::{FunctionSpec, Item, LlmError, ModelReply};

/// One wire format's stream reader, under the [`Decoding`] core.
pub(super) trait Wire: Default {
    /// What one payload is called when it is not JSON ("a chunk", "an event").
    const PAYLOAD: &'static str;
    /// Why a stream that ended before the format's own end was cut short.
    const CUT_SHORT: &'static str;

    /// Whether `data` is an end marker that is not JSON (Chat's `[DONE]`).
    fn is_end(data: &str) -> bool {
        let _ = data;
        false
    }

    /// Read one JSON payload, telling `seen` what it showed. Returns true when the
    /// response is complete.
    fn read(&mut self, payload: &Value, seen: &mut Seen<'_>) -> Result<bool, LlmError>;

    /// The stream completed: its items, in order.
    fn items(self) -> Vec<Item>;
}

/// What the stream showed so far, shared by both formats.
#[derive(Debug, Default)]
struct Shown {
    /// Whether any text has reached the caller.
    streamed: bool,
    /// Whether the format's own end arrived.
    complete: bool,
    /// The input tokens the server reported for the request.
    input_tokens: Option<u64>,
}

/// What a [`Wire`] tells the core while it reads one payload.
pub(super) struct Seen<'a> {
    shown: &'a mut Shown,
    deltas: &'a mpsc::UnboundedSender<String>,
}

impl Seen<'_> {
    /// Text of her answer: sent to the caller now (empty text is not sent).
    pub(super) fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.shown.streamed = true;
            let _ = self.deltas.send(text.to_string());
        }
    }

    /// The format's own end arrived (it may still be followed by a usage chunk).
    pub(super) fn complete(&mut self) {
        self.shown.complete = true;
    }

    /// The input tokens the server reported (`None`: it reported none).
    pub(super) fn input_tokens(&mut self, n: Option<u64>) {
        self.shown.input_tokens = n;
    }
}

/// The decoder core: fed one SSE `data` payload at a time, around a [`Wire`].
#[derive(Debug, Default)]
pub(super) struct Decoding<W> {
    wire: W,
    shown: Shown,
}

impl<W: Wire> Decoding<W> {
    /// A decoder with nothing seen yet.
    pub(super) fn new() -> Decoding<W> {
        Decoding {
            wire: W::default(),
            shown: Shown::default(),
        }
    }

    /// Read one data payload; text deltas go to `deltas` as they arrive. Returns true
    /// when the response is complete.
    pub(super) fn feed(
        &mut self,
        data: &str,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<bool, LlmError> {
        if W::is_end(data) {
            self.shown.complete = true;
            return Ok(true);
        }
        let payload: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Malformed(format!("bad JSON in {} ({e})", W::PAYLOAD)))?;
        let mut seen = Seen {
            shown: &mut self.shown,
            deltas,
        };
        self.wire.read(&payload, &mut seen)
    }

    /// Whether any text has been sent to `deltas` yet (after that nothing is retried).
    pub(super) fn streamed(&self) -> bool {
        self.shown.streamed
    }

    /// The stream ended: the reply, or [`LlmError::Stream`] when it was cut short.
    pub(super) fn finish(self) -> Result<ModelReply, LlmError> {
        if !self.shown.complete {
            return Err(LlmError::Stream(W::CUT_SHORT.into()));
        }
        Ok(ModelReply {
            items: self.wire.items(),
            input_tokens: self.shown.input_tokens,
        })
    }
}

/// A tool as a function both APIs offer: `type` function, with its name, description
/// and parameters (Chat nests these under `function`; Responses gives them flat).
pub(super) fn function(t: &FunctionSpec, nested: bool) -> Value {
    let mut fields = Map::new();
    fields.insert("name".into(), json!(t.name));
    fields.insert("description".into(), json!(t.description));
    fields.insert("parameters".into(), t.parameters.clone());
    let mut out = Map::new();
    out.insert("type".into(), json!("function"));
    if nested {
        out.insert("function".into(), Value::Object(fields));
    } else {
        out.extend(fields);
    }
    Value::Object(out)
}

/// An error named in a body or event (`code`, `message`), typed.
pub(super) fn error_from_body(code: &str, message: &str) -> LlmError {
    let hay = format!("{code} {message}").to_ascii_lowercase();
    if is_context_message(&hay) {
        LlmError::ContextTooLong
    } else if hay.contains("insufficient_quota") {
        LlmError::Http {
            status: 429,
            body: clip(message, 300),
        }
    } else if hay.contains("rate_limit") || hay.contains("rate limit") {
        LlmError::RateLimited { retry_after: None }
    } else {
        let text = if code.is_empty() {
            message.to_string()
        } else {
            format!("{code}: {message}")
        };
        LlmError::Stream(clip(&text, 300))
    }
}

fn is_context_message(hay: &str) -> bool {
    hay.contains("context_length_exceeded")
        || hay.contains("maximum context length")
        || hay.contains("exceeds the available context")
        || hay.contains("context window")
}

/// A non-success HTTP status and its body, typed.
pub(super) fn error_from_status(
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> LlmError {
    let lower = body.to_ascii_lowercase();
    match status {
        // Quota exhaustion also answers 429, but waiting will not fix it.
        429 if lower.contains("insufficient_quota") => LlmError::Http {
            status,
            body: clip(body, 300),
        },
        429 => LlmError::RateLimited { retry_after },
        401 | 403 => LlmError::Auth(format!("{status}: {}", clip(body, 300))),
        400 | 413 if is_context_message(&lower) => LlmError::ContextTooLong,
        404 => LlmError::NotFound(clip(&error_message(body), 200)),
        _ => LlmError::Http {
            status,
            body: clip(body, 300),
        },
    }
}

/// The provider's own words in an error body: `error.message` of a JSON body, else the
/// body itself.
fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
                .and_then(|m| m.as_str().map(str::to_string))
        })
        .unwrap_or_else(|| body.trim().to_string())
}

/// The first `n` characters of `s`.
pub(super) fn clip(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// A Retry-After header value in seconds (the HTTP-date form is not honoured).
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    if secs.is_finite() && secs >= 0.0 {
        Some(Duration::from_secs_f64(secs.min(3600.0)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_404_says_what_the_provider_said_and_names_the_fix() {
        let body =
            r#"{"error":{"message":"The model `gpt-9` does not exist","code":"model_not_found"}}"#;
        let e = error_from_status(404, None, body);
        assert_eq!(
            e,
            LlmError::NotFound("The model `gpt-9` does not exist".into())
        );
        let sentence = e.user_sentence();
        assert!(
            sentence.contains("The model `gpt-9` does not exist"),
            "{sentence}"
        );
        assert!(sentence.contains("KOTOBA_MODEL") && sentence.contains("KOTOBA_LLM_API=chat"));
        // A server with no such route answers a plain body.
        let plain = error_from_status(404, None, "404 page not found");
        assert_eq!(plain, LlmError::NotFound("404 page not found".into()));
    }

    #[test]
    fn statuses_map_to_their_typed_errors() {
        let ra = Some(Duration::from_secs(3));
        assert_eq!(
            error_from_status(429, ra, ""),
            LlmError::RateLimited { retry_after: ra }
        );
        assert!(matches!(
            error_from_status(401, None, "bad key"),
            LlmError::Auth(_)
        ));
        assert!(matches!(
            error_from_status(403, None, ""),
            LlmError::Auth(_)
        ));
        let ctx = r#"{"error":{"code":"context_length_exceeded"}}"#;
        assert_eq!(error_from_status(400, None, ctx), LlmError::ContextTooLong);
        let ctx2 = "This model's maximum context length is 8192 tokens";
        assert_eq!(error_from_status(400, None, ctx2), LlmError::ContextTooLong);
        assert_eq!(
            error_from_status(400, None, "bad tool schema"),
            LlmError::Http {
                status: 400,
                body: "bad tool schema".into()
            }
        );
    }

    #[test]
    fn an_error_body_is_clipped_to_300_characters() {
        let long = "x".repeat(1000);
        match error_from_status(500, None, &long) {
            LlmError::Http { status: 500, body } => assert_eq!(body.chars().count(), 300),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn an_exhausted_quota_is_not_a_rate_limit() {
        let body = r#"{"error":{"code":"insufficient_quota"}}"#;
        assert!(matches!(
            error_from_status(429, None, body),
            LlmError::Http { status: 429, .. }
        ));
    }

    #[test]
    fn retry_after_reads_whole_and_fractional_seconds_only() {
        assert_eq!(parse_retry_after("5"), Some(Duration::from_secs(5)));
        assert_eq!(
            parse_retry_after(" 1.5 "),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
