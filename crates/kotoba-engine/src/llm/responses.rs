//! The OpenAI Responses wire format: the request body built from neutral items, and the
//! decoder that turns its event stream back into a [`ModelReply`].

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::decode::{error_from_body, function, Decoding, Seen, Wire};
use super::{Item, LlmError, ModelRequest, ToolCall};
use kotoba_core::config::Settings;

/// The JSON body for `POST {base_url}/responses`.
pub(super) fn request_body(req: &ModelRequest, settings: &Settings) -> Value {
    let input: Vec<Value> = req.items.iter().map(input_item).collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model));
    body.insert("instructions".into(), json!(req.system));
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        let tools = req.tools.iter().map(|t| function(t, false)).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if let Some(effort) = settings.reasoning() {
        body.insert("reasoning".into(), json!({ "effort": effort }));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    Value::Object(body)
}

fn input_item(item: &Item) -> Value {
    match item {
        Item::User { text } => json!({ "role": "user", "content": text }),
        Item::Assistant { text } => json!({ "role": "assistant", "content": text }),
        Item::ToolCall(call) => match &call.raw {
            Some(raw) => raw.clone(),
            None => json!({
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            }),
        },
        Item::ToolResult { call_id, output } => json!({
            "type": "function_call_output",
            "call_id": call_id,
            "output": output,
        }),
        Item::Reasoning { raw } => raw.clone(),
        Item::Media { media } => json!({
            "role": "user",
            "content": media.iter().map(|m| if m.is_image() {
                json!({ "type": "input_image", "image_url": m.data_url() })
            } else {
                json!({ "type": "input_file", "filename": m.name, "file_data": m.data_url() })
            }).collect::<Vec<_>>(),
        }),
    }
}

/// Decodes the Responses event stream (the core around it: [`Decoding`]).
pub(super) type ResponsesDecoder = Decoding<ResponsesStream>;

/// What the Responses events build: the output items, in order.
#[derive(Debug, Default)]
pub(super) struct ResponsesStream {
    items: Vec<Item>,
    /// Text streamed per message item id, until that item is done.
    text_by_item: HashMap<String, String>,
    /// Item ids in the order their first delta arrived (for a flush at completion).
    open_order: Vec<String>,
}

impl ResponsesStream {
    fn on_item_done(&mut self, item: &Value, seen: &mut Seen<'_>) {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let field = |k: &str| {
                    item.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                self.items.push(Item::ToolCall(ToolCall {
                    call_id: field("call_id"),
                    name: field("name"),
                    arguments: field("arguments"),
                    raw: Some(item.clone()),
                }));
            }
            Some("reasoning") => self.items.push(Item::Reasoning { raw: item.clone() }),
            Some("message") => {
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                // Deltas that named no item are filed under "": they belong to this one.
                let key = if self.text_by_item.contains_key(id) {
                    id
                } else {
                    ""
                };
                let id = key.to_string();
                let text = match self.text_by_item.remove(&id) {
                    Some(streamed) => {
                        self.open_order.retain(|x| *x != id);
                        streamed
                    }
                    None => {
                        // No deltas came for this message: its text only arrives here.
                        let text = message_text(item);
                        seen.text(&text);
                        text
                    }
                };
                if !text.is_empty() {
                    self.items.push(Item::Assistant { text });
                }
            }
            other => tracing::debug!(kind = ?other, "ignoring a Responses output item"),
        }
    }

    fn flush_open_text(&mut self) {
        for id in std::mem::take(&mut self.open_order) {
            if let Some(text) = self.text_by_item.remove(&id) {
                if !text.is_empty() {
                    self.items.push(Item::Assistant { text });
                }
            }
        }
    }
}

fn message_text(item: &Value) -> String {
    item.get("content")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("output_text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// The error inside an `error` or `response.failed` event, typed.
fn event_error(err: Option<&Value>) -> LlmError {
    let code = err
        .and_then(|e| e.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let message = err
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("");
    error_from_body(code, message)
}

impl Wire for ResponsesStream {
    const PAYLOAD: &'static str = "an event";
    const CUT_SHORT: &'static str = "the stream ended before response.completed";

    fn read(&mut self, ev: &Value, seen: &mut Seen<'_>) -> Result<bool, LlmError> {
        match ev.get("type").and_then(Value::as_str).unwrap_or("") {
            "response.output_text.delta" => {
                let delta = ev.get("delta").and_then(Value::as_str).unwrap_or("");
                if delta.is_empty() {
                    return Ok(false);
                }
                let id = ev
                    .get("item_id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if !self.text_by_item.contains_key(&id) {
                    self.open_order.push(id.clone());
                }
                self.text_by_item.entry(id).or_default().push_str(delta);
                seen.text(delta);
            }
            "response.output_item.done" => {
                if let Some(item) = ev.get("item") {
                    self.on_item_done(item, seen);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.flush_open_text();
                if self.items.is_empty() {
                    // A server that skipped the per-item events: read the final output.
                    let output = ev.pointer("/response/output").and_then(Value::as_array);
                    for item in output.cloned().unwrap_or_default() {
                        self.on_item_done(&item, seen);
                    }
                }
                seen.input_tokens(
                    ev.pointer("/response/usage/input_tokens")
                        .and_then(Value::as_u64),
                );
                seen.complete();
                return Ok(true);
            }
            "response.failed" => return Err(event_error(ev.pointer("/response/error"))),
            "error" => {
                let err = ev.get("error").unwrap_or(ev);
                return Err(event_error(Some(err)));
            }
            _ => {}
        }
        Ok(false)
    }

    fn items(self) -> Vec<Item> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn attachments_go_to_the_model_as_input_image_and_input_file_parts() {
        let media = vec![
            kotoba_core::protocol::Media {
                name: "a.png".into(),
                mime: "image/png".into(),
                data: vec![1, 2, 3],
            },
            kotoba_core::protocol::Media {
                name: "b.pdf".into(),
                mime: "application/pdf".into(),
                data: vec![4],
            },
        ];
        let v = input_item(&Item::Media { media });
        assert_eq!(v["role"], "user");
        assert_eq!(
            v["content"][0],
            serde_json::json!({"type": "input_image", "image_url": "data:image/png;base64,AQID"})
        );
        assert_eq!(
            v["content"][1],
            serde_json::json!({"type": "input_file", "filename": "b.pdf", "file_data": "data:application/pdf;base64,BA=="})
        );
    }

    use tokio::sync::mpsc;

    use super::*;
    use crate::llm::ModelReply;

    fn run(events: &[Value]) -> (Result<ModelReply, LlmError>, Vec<String>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut d = ResponsesDecoder::new();
        let mut result = None;
        for ev in events {
            match d.feed(&ev.to_string(), &tx) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => result = Some(Err(e)),
            }
        }
        let result = result.unwrap_or_else(|| d.finish());
        let mut deltas = Vec::new();
        while let Ok(s) = rx.try_recv() {
            deltas.push(s);
        }
        (result, deltas)
    }

    fn message_done(id: &str, text: &str) -> Value {
        json!({"type": "response.output_item.done", "item": {"type": "message", "id": id,
            "content": [{"type": "output_text", "text": text}]}})
    }

    #[test]
    fn the_input_tokens_the_server_reports_come_back_with_the_reply() {
        let done = json!({"type": "response.completed", "response": {"usage": {"input_tokens": 1234, "output_tokens": 5}}});
        let (reply, _) = run(&[message_done("m1", "Hi"), done]);
        assert_eq!(reply.unwrap().input_tokens, Some(1234));
        let (reply, _) = run(&[
            message_done("m1", "Hi"),
            json!({"type": "response.completed"}),
        ]);
        assert_eq!(reply.unwrap().input_tokens, None);
    }

    #[test]
    fn a_message_with_no_deltas_is_sent_whole_once() {
        let done = json!({"type": "response.completed"});
        let (reply, deltas) = run(&[message_done("m1", "Hello there"), done]);
        assert_eq!(reply.unwrap().text(), "Hello there");
        assert_eq!(deltas, vec!["Hello there"]);
    }

    #[test]
    fn streamed_text_is_not_sent_twice_when_its_message_item_is_done() {
        let events = [
            json!({"type": "response.output_text.delta", "delta": "Hel"}),
            json!({"type": "response.output_text.delta", "delta": "lo"}),
            message_done("m1", "Hello"),
            json!({"type": "response.completed"}),
        ];
        let (reply, deltas) = run(&events);
        assert_eq!(
            reply.unwrap().items,
            vec![Item::Assistant {
                text: "Hello".into()
            }]
        );
        assert_eq!(deltas, vec!["Hel", "lo"]);
    }

    #[test]
    fn a_failed_response_names_its_error_type() {
        let failed = json!({"type": "response.failed", "response": {"error":
            {"code": "context_length_exceeded", "message": "too long"}}});
        assert_eq!(run(&[failed]).0, Err(LlmError::ContextTooLong));
        let other = json!({"type": "response.failed", "response": {"error":
            {"code": "server_error", "message": "boom"}}});
        assert_eq!(
            run(&[other]).0,
            Err(LlmError::Stream("server_error: boom".into()))
        );
    }

    #[test]
    fn the_final_output_is_read_when_no_item_events_came() {
        let done = json!({"type": "response.completed", "response": {"output": [
            {"type": "function_call", "call_id": "c9", "name": "shell", "arguments": "{}"}
        ]}});
        let reply = run(&[done]).0.unwrap();
        assert_eq!(reply.tool_calls()[0].call_id, "c9");
    }
}
