//! [`OpenAiClient`]: the real [`ModelClient`]. Reads the live settings on every call,
//! picks the wire format, streams the SSE body through [`SseParser`], and retries rate
//! limits with backoff while nothing has streamed yet.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::decode::{error_from_status, parse_retry_after, Decoding, Wire};
use super::sse::SseParser;
use super::{chat, responses, LlmError, ModelClient, ModelReply, ModelRequest};
use kotoba_core::config::{ApiStyle, Config};

/// How many times a rate limit is retried before [`LlmError::RateLimited`] is returned.
pub const MAX_RATE_LIMIT_RETRIES: u32 = 6;

/// The longest backoff between two rate-limit retries (unless Retry-After says more).
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The longest Retry-After honoured; a server asking for more is retried after this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The default idle timeout between two chunks of a stream.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The host whose requests need a key; every other base URL may run keyless.
const OPENAI_HOST: &str = "api.openai.com";

/// The wait before retry number `retry` (0-based): 1 s, 2 s, 4 s … capped at 30 s, or
/// the server's Retry-After (capped at [`MAX_RETRY_AFTER`]) when it gave one.
pub fn backoff(retry: u32, retry_after: Option<Duration>) -> Duration {
    match retry_after {
        Some(d) => d.min(MAX_RETRY_AFTER),
        None => Duration::from_secs(1u64 << retry.min(5)).min(MAX_BACKOFF),
    }
}

/// The model client for OpenAI-compatible servers, speaking Responses or Chat
/// Completions as the live settings say.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: Arc<Config>,
    http: reqwest::Client,
    idle_timeout: Option<Duration>,
}

/// A failed attempt and whether text had already reached the caller.
struct Failure {
    error: LlmError,
    streamed: bool,
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Failure {
        Failure {
            error,
            streamed: false,
        }
    }
}

impl OpenAiClient {
    /// A client reading model, base URL, API style, reasoning effort and key from
    /// `config` on every call.
    pub fn new(config: Arc<Config>) -> OpenAiClient {
        // No request timeout on purpose: a long answer streams for minutes, and the idle
        // timeout between chunks is what catches a stalled server.
        let http = reqwest::Client::builder().build().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "HTTP client builder failed; using the default client");
            reqwest::Client::new()
        });
        OpenAiClient {
            config,
            http,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
        }
    }

    /// Set the idle timeout between stream chunks (and before the response headers);
    /// `None` waits forever (tests under paused time use it).
    pub fn with_idle_timeout(mut self, idle_timeout: Option<Duration>) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    async fn idle<F: Future>(&self, f: F) -> Result<F::Output, LlmError> {
        match self.idle_timeout {
            Some(d) => tokio::time::timeout(d, f)
                .await
                .map_err(|_| LlmError::Stream(format!("no data for {} s", d.as_secs()))),
            None => Ok(f.await),
        }
    }

    /// One HTTP attempt: send, check the status, decode the stream to its end.
    async fn attempt<W: Wire>(
        &self,
        url: &str,
        key: Option<&str>,
        body: &Value,
        mut decoder: Decoding<W>,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, Failure> {
        let mut request = self
            .http
            .post(url)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(body);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = self
            .idle(request.send())
            .await?
            .map_err(|e| LlmError::Connect(connect_message(&e)))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let text = self.idle(response.text()).await?.unwrap_or_default();
            return Err(error_from_status(status.as_u16(), retry_after, &text).into());
        }
        let mut parser = SseParser::new();
        let mut body = response.bytes_stream();
        loop {
            let next = self.idle(body.next()).await.map_err(|error| Failure {
                error,
                streamed: decoder.streamed(),
            })?;
            let ended = next.is_none();
            let events = match next {
                Some(Ok(chunk)) => parser.push(&chunk),
                Some(Err(e)) => {
                    return Err(Failure {
                        error: LlmError::Stream(e.to_string()),
                        streamed: decoder.streamed(),
                    })
                }
                None => parser.finish(),
            };
            for ev in events {
                match decoder.feed(&ev.data, deltas) {
                    Ok(true) => return decoder.finish().map_err(Failure::from),
                    Ok(false) => {}
                    Err(error) => {
                        return Err(Failure {
                            error,
                            streamed: decoder.streamed(),
                        })
                    }
                }
            }
            if ended {
                let streamed = decoder.streamed();
                return decoder
                    .finish()
                    .map_err(|error| Failure { error, streamed });
            }
        }
    }
}

fn connect_message(e: &reqwest::Error) -> String {
    // reqwest's own text names the URL and the cause; it never holds the key.
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

/// What asking the model server for its models (`GET {base_url}/models`) found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It answered with its list; whether the configured model is in it.
    Listed {
        /// The configured model is among them.
        has_model: bool,
        /// How many models it lists.
        count: usize,
    },
    /// It answered, but with no list (a server with no `/models`): it is up.
    Answered(u16),
}

impl OpenAiClient {
    /// Ask the model server for its models (within 5 s): whether it can be reached,
    /// and whether it knows the configured model. Nothing is generated.
    pub async fn reach(&self) -> Result<Reach, LlmError> {
        let settings = self.config.settings();
        if let Some(why) = &settings.base_url_refused {
            return Err(LlmError::Connect(why.clone()));
        }
        let base = settings.base_url.trim().trim_end_matches('/');
        let mut req = self
            .http
            .get(format!("{base}/models"))
            .timeout(Duration::from_secs(5));
        if let Some(key) = self.config.api_key() {
            req = req.bearer_auth(key);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| LlmError::Connect(e.without_url().to_string()))?;
        let status = resp.status().as_u16();
        if status == 401 || status == 403 {
            return Err(LlmError::Auth(format!("{status}")));
        }
        let body: Value = match resp.json().await {
            Ok(v) if (200..300).contains(&status) => v,
            _ => return Ok(Reach::Answered(status)),
        };
        let ids: Vec<&str> = body
            .get("data")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|m| m.get("id")?.as_str()).collect())
            .unwrap_or_default();
        Ok(Reach::Listed {
            has_model: ids.iter().any(|id| *id == settings.model),
            count: ids.len(),
        })
    }
}

fn needs_key(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.eq_ignore_ascii_case(OPENAI_HOST)))
        .unwrap_or(false)
}

#[async_trait]
impl ModelClient for OpenAiClient {
    async fn stream(
        &self,
        req: &ModelRequest,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, LlmError> {
        // A turn's request carries its settings snapshot: nothing is re-read per request.
        let settings = match &req.settings {
            Some(s) => s.clone(),
            None => std::sync::Arc::new(self.config.settings()),
        };
        if let Some(why) = &settings.base_url_refused {
            // Never another host than the owner meant: no call at all.
            return Err(LlmError::Connect(why.clone()));
        }
        let base = settings.base_url.trim().trim_end_matches('/').to_string();
        if reqwest::Url::parse(&base).is_err() {
            return Err(LlmError::Connect(format!(
                "the base URL {base:?} is not a URL"
            )));
        }
        let key = self.config.api_key_in(&settings);
        if key.is_none() && needs_key(&base) {
            return Err(LlmError::NoKey {
                env: settings.api_key_env.clone(),
            });
        }
        let (url, body) = match settings.api {
            ApiStyle::Responses => (
                format!("{base}/responses"),
                responses::request_body(req, &settings),
            ),
            ApiStyle::Chat => (
                format!("{base}/chat/completions"),
                chat::request_body(req, &settings),
            ),
        };
        let mut retry = 0;
        loop {
            tracing::debug!(%url, model = %settings.model, retry, "model request");
            let result = match settings.api {
                ApiStyle::Responses => {
                    let decoder = responses::ResponsesDecoder::new();
                    self.attempt(&url, key.as_deref(), &body, decoder, deltas)
                        .await
                }
                ApiStyle::Chat => {
                    let decoder = chat::ChatDecoder::new();
                    self.attempt(&url, key.as_deref(), &body, decoder, deltas)
                        .await
                }
            };
            match result {
                Ok(reply) => return Ok(reply),
                Err(Failure {
                    error: LlmError::RateLimited { retry_after },
                    streamed: false,
                }) if retry < MAX_RATE_LIMIT_RETRIES => {
                    let wait = backoff(retry, retry_after);
                    tracing::warn!(
                        retry = retry + 1,
                        wait_s = wait.as_secs_f64(),
                        "rate limited; retrying"
                    );
                    tokio::time::sleep(wait).await;
                    retry += 1;
                }
                Err(Failure { error, .. }) => {
                    tracing::warn!(%error, "model request failed");
                    return Err(error);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_one_second_and_caps_at_thirty() {
        let waits: Vec<u64> = (0..7).map(|r| backoff(r, None).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn a_given_retry_after_wins_over_the_backoff_but_is_capped() {
        assert_eq!(
            backoff(4, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(backoff(0, Some(Duration::from_secs(999))), MAX_RETRY_AFTER);
    }

    #[test]
    fn only_the_openai_host_needs_a_key() {
        assert!(needs_key("https://api.openai.com/v1"));
        assert!(!needs_key("http://127.0.0.1:11434/v1"));
        assert!(!needs_key("https://openrouter.ai/api/v1"));
    }
}
