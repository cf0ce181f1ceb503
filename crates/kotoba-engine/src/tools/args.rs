//! Argument helpers for tools: read a typed field or answer the model with a sentence
//! naming what was wrong (the tool refused its own arguments; nothing ran).

use serde_json::Value;

use super::ToolOutput;

/// A required string argument, or a refusal naming it.
pub fn req_str<'a>(args: &'a Value, key: &str, tool: &str) -> Result<&'a str, ToolOutput> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ToolOutput::refused(format!(
            "{tool}: argument '{key}' must be a string, got {}. Nothing ran; call again with a string.",
            kind(other)
        ))),
        None => Err(ToolOutput::refused(format!(
            "{tool}: the required argument '{key}' is missing. Nothing ran; call again with it."
        ))),
    }
}

/// An optional string argument.
pub fn opt_str<'a>(args: &'a Value, key: &str, tool: &str) -> Result<Option<&'a str>, ToolOutput> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(ToolOutput::refused(format!(
            "{tool}: argument '{key}' must be a string, got {}. Nothing ran.",
            kind(other)
        ))),
    }
}

/// An optional non-negative integer argument (a float with no fraction is accepted).
pub fn opt_u64(args: &Value, key: &str, tool: &str) -> Result<Option<u64>, ToolOutput> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| {
                ToolOutput::refused(format!(
                    "{tool}: argument '{key}' must be a whole number ≥ 0, got {v}. Nothing ran."
                ))
            }),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
