//! Reading one settings value as YAML gives it: its text, a list of words, and how to
//! show a value in an error. Shared by the key table (keys.rs) and the Discord people
//! keys (people.rs).

use serde_yaml_ng::Value;

use super::ValueError;

/// A value as it reads in an error message.
pub(super) fn show(v: &Value) -> String {
    serde_yaml_ng::to_string(v)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A scalar's text (`None` for a list or a mapping).
pub(super) fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

/// A list of words: a YAML list, or one text of comma-separated words.
pub(super) fn words(v: &Value) -> Result<Vec<String>, ValueError> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Sequence(items) => items
            .iter()
            .map(|i| as_text(i).ok_or_else(|| ValueError::NotWords { got: show(v) }))
            .collect(),
        Value::String(s) => Ok(s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()),
        _ => Err(ValueError::NotList { got: show(v) }),
    }
}
