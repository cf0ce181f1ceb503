//! The Chat Completions wire format (Ollama, vLLM, llama.cpp, OpenRouter, Groq): the
//! request body built from neutral items, and the decoder for its chunk stream.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::decode::{error_from_body, function, Decoding, Seen, Wire};
use super::{Item, LlmError, ModelRequest, ToolCall};
use kotoba_core::config::Settings;

/// The JSON body for `POST {base_url}/chat/completions`.
pub(super) fn request_body(req: &ModelRequest, settings: &Settings) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model));
    body.insert("messages".into(), Value::Array(messages(req)));
    if !req.tools.is_empty() {
        let tools = req.tools.iter().map(|t| function(t, true)).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    // The usage chunk says how many input tokens the request really cost.
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    if let Some(effort) = settings.reasoning() {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    Value::Object(body)
}

fn messages(req: &ModelRequest) -> Vec<Value> {
    let mut out = vec![json!({ "role": "system", "content": req.system })];
    for item in req.items.iter() {
        match item {
            Item::User { text } => out.push(json!({ "role": "user", "content": text })),
            Item::Assistant { text } => {
                out.push(json!({ "role": "assistant", "content": text }));
            }
            Item::ToolCall(call) => {
                let entry = json!({
                    "id": call.call_id,
                    "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments },
                });
                // Calls join the assistant message right before them (its words or
                // earlier calls of the same reply): the API's own shape for one reply.
                let joined = match out.last_mut() {
                    Some(Value::Object(last)) if last.get("role") == Some(&json!("assistant")) => {
                        match last.entry("tool_calls").or_insert_with(|| json!([])) {
                            Value::Array(calls) => {
                                calls.push(entry.clone());
                                true
                            }
                            _ => false,
                        }
                    }
                    _ => false,
                };
                if !joined {
                    out.push(
                        json!({ "role": "assistant", "content": null, "tool_calls": [entry] }),
                    );
                }
            }
            Item::ToolResult { call_id, output } => {
                out.push(json!({ "role": "tool", "tool_call_id": call_id, "content": output }));
            }
            Item::Reasoning { .. } => {} // Responses-only; Chat servers cannot read it
            Item::Media { media } => out.push(json!({
                "role": "user",
                "content": media.iter().map(|m| if m.is_image() {
                    json!({ "type": "image_url", "image_url": { "url": m.data_url() } })
                } else {
                    json!({ "type": "file", "file": { "filename": m.name, "file_data": m.data_url() } })
                }).collect::<Vec<_>>(),
            })),
        }
    }
    out
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes the Chat Completions chunk stream (the core around it: [`Decoding`]).
pub(super) type ChatDecoder = Decoding<ChatStream>;

/// What the Chat Completions chunks build: her words and the calls, by index.
#[derive(Debug, Default)]
pub(super) struct ChatStream {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
}

impl ChatStream {
    fn on_tool_call_delta(&mut self, tc: &Value) {
        let index = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = tc.get("id").and_then(Value::as_str) {
            if !id.is_empty() {
                call.id = id.to_string();
            }
        }
        if let Some(f) = tc.get("function") {
            if let Some(name) = f.get("name").and_then(Value::as_str) {
                // The name arrives whole in the first delta; later repeats change nothing.
                if call.name.is_empty() {
                    call.name = name.to_string();
                }
            }
            match f.get("arguments") {
                Some(Value::String(piece)) => call.arguments.push_str(piece),
                // Some servers send the arguments as an object, whole.
                Some(v @ Value::Object(_)) => call.arguments.push_str(&v.to_string()),
                _ => {}
            }
        }
    }
}

impl Wire for ChatStream {
    const PAYLOAD: &'static str = "a chunk";
    const CUT_SHORT: &'static str = "the stream ended with no finish_reason and no [DONE]";

    fn is_end(data: &str) -> bool {
        data.trim() == "[DONE]"
    }

    fn read(&mut self, chunk: &Value, seen: &mut Seen<'_>) -> Result<bool, LlmError> {
        if let Some(err) = chunk.get("error") {
            let code = match err.get("code") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => String::new(),
            };
            let message = err.get("message").and_then(Value::as_str).unwrap_or("");
            return Err(error_from_body(&code, message));
        }
        if let Some(n) = chunk
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
        {
            seen.input_tokens(Some(n));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(false); // usage-only or keep-alive chunks
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                self.text.push_str(text);
                seen.text(text);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for tc in calls {
                    self.on_tool_call_delta(tc);
                }
            }
        }
        if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
            // Keep reading: [DONE] (and maybe a usage chunk) may follow.
            seen.complete();
        }
        Ok(false)
    }

    fn items(self) -> Vec<Item> {
        let mut items = Vec::new();
        if !self.text.is_empty() {
            items.push(Item::Assistant { text: self.text });
        }
        for (index, call) in self.calls {
            let call_id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            items.push(Item::ToolCall(ToolCall {
                call_id,
                name: call.name,
                arguments: call.arguments,
                raw: None,
            }));
        }
        items
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;

    #[test]
    fn the_usage_chunk_says_what_the_request_cost_and_the_body_asks_for_it() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut d = ChatDecoder::new();
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":987,"completion_tokens":2}}"#,
            "[DONE]",
        ];
        for c in chunks {
            d.feed(c, &tx).unwrap();
        }
        let reply = d.finish().unwrap();
        assert_eq!(reply.text(), "Hi");
        assert_eq!(reply.input_tokens, Some(987));
        let req = ModelRequest {
            system: "s".into(),
            items: Default::default(),
            tools: Vec::new(),
            settings: None,
        };
        let body = request_body(&req, &Settings::default());
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
    }
}
