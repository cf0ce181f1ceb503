//! The model client: one trait, two wire APIs (OpenAI Responses and Chat Completions),
//! both streaming over reqwest + SSE. The engine speaks only the neutral types here.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;

/// One item of the conversation the model sees, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// The person's words.
    User {
        /// Text.
        text: String,
    },
    /// Her words.
    Assistant {
        /// Text.
        text: String,
    },
    /// A tool call she made.
    ToolCall(ToolCall),
    /// The result fed back for a call, by its call id.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// What the model reads.
        output: String,
    },
    /// The person's attachments (images, PDFs), right after their words.
    Media {
        /// The files.
        media: Vec<kotoba_core::protocol::Media>,
    },
    /// A Responses-API reasoning item, carried back unchanged.
    Reasoning {
        /// The item exactly as it arrived.
        raw: Value,
    },
}

/// A function call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id results are keyed by.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text, maybe invalid).
    pub arguments: String,
    /// The Responses-API item exactly as it arrived, carried back unchanged.
    pub raw: Option<Value>,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSpec {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The conversation so far, shared with the turn that asks (a request never copies
    /// the conversation; a change while it is shared copies it once, `Arc::make_mut`).
    pub items: std::sync::Arc<Vec<Item>>,
    /// The tools offered; empty means a words-only request (no `tools` key is sent).
    pub tools: Vec<FunctionSpec>,
    /// The settings of the turn that asks (its snapshot, taken at its door); `None`:
    /// the client reads the live settings (a request outside a turn).
    pub settings: Option<std::sync::Arc<kotoba_core::config::Settings>>,
}

/// What one model response held, in the order it arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    /// Reasoning, assistant text and tool calls, in order.
    pub items: Vec<Item>,
    /// The input tokens the provider reported for the request, when it reported them
    /// (they correct the engine's own count: docs/engine.md, "Long conversations").
    pub input_tokens: Option<u64>,
}

impl ModelReply {
    /// Her words in this reply, joined.
    pub fn text(&self) -> String {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Assistant { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls in this reply.
    pub fn tool_calls(&self) -> Vec<&ToolCall> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}

/// Why a model request failed. The loop turns every one into one plain sentence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// 429 (or a rate-limit error body). Retried with backoff up to 6 times while
    /// nothing has streamed yet.
    #[error("rate limited")]
    RateLimited {
        /// The server's Retry-After, when it gave one.
        retry_after: Option<Duration>,
    },
    /// 401/403: the key is missing, wrong or not allowed. Not retried.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// No API key is configured. Not retried.
    #[error("no API key is set ({env})")]
    NoKey {
        /// The env variable that should hold it.
        env: String,
    },
    /// The conversation is longer than the model's context. Not retried.
    #[error("context too long")]
    ContextTooLong,
    /// 404: the server has no such model, or no such endpoint (a server that speaks the
    /// other wire API). Not retried.
    #[error("model server answered 404: {0}")]
    NotFound(String),
    /// Any other HTTP error status. Not retried.
    #[error("model server answered {status}: {body}")]
    Http {
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The server could not be reached. Not retried.
    #[error("could not reach the model server: {0}")]
    Connect(String),
    /// The stream broke or ended before the response was complete. Not retried.
    #[error("the model's stream broke: {0}")]
    Stream(String),
    /// The server sent something that is not the wire format. Not retried.
    #[error("the model server sent something unexpected: {0}")]
    Malformed(String),
}

impl LlmError {
    /// One plain sentence for the person.
    pub fn user_sentence(&self) -> String {
        match self {
            LlmError::RateLimited { .. } => {
                "The model service is rate-limiting me right now, so I couldn't answer. Try again in a minute.".into()
            }
            LlmError::Auth(_) => {
                "The model service refused my API key, so I couldn't answer. Check the key in the settings.".into()
            }
            LlmError::NoKey { env } => {
                format!("No model API key is configured, so I can't think yet. Set {env} and try again.")
            }
            LlmError::ContextTooLong => {
                "This conversation has grown too long for the model. Start a fresh session and I'll pick up from there.".into()
            }
            LlmError::NotFound(said) => {
                let said = said.trim();
                let said = if said.is_empty() {
                    String::new()
                } else {
                    format!(" (it said: {said})")
                };
                format!("The model server has no such model or endpoint{said}, so I couldn't answer: check the model name (the `model` setting or KOTOBA_MODEL), and for a local server such as Ollama set KOTOBA_LLM_API=chat.")
            }
            LlmError::Http { status, .. } => {
                format!("The model service answered with an error ({status}), so I couldn't finish.")
            }
            LlmError::Connect(_) => {
                "I couldn't reach the model service, so I couldn't answer. Check the base URL and the network.".into()
            }
            LlmError::Stream(_) => {
                "The model's answer broke off midway, so I couldn't finish. Please ask again.".into()
            }
            LlmError::Malformed(_) => {
                "The model service sent something I couldn't read, so I couldn't finish.".into()
            }
        }
    }
}

/// A streaming model client. Text deltas go to `deltas` as they arrive; the whole
/// reply is returned at the end.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Send one request and stream its answer.
    async fn stream(
        &self,
        req: &ModelRequest,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, LlmError>;
}

mod chat;
mod client;
mod decode;
mod responses;
pub mod sse;
pub mod tokens;

pub use client::{
    backoff, OpenAiClient, Reach, DEFAULT_IDLE_TIMEOUT, MAX_BACKOFF, MAX_RATE_LIMIT_RETRIES,
    MAX_RETRY_AFTER,
};
