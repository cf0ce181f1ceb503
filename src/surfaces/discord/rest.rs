//! The REST calls of server management: Discord's JSON in and out, its error JSON kept
//! (code, message and the field errors of an Invalid Form Body), and a 429 waited out by
//! its `retry_after` and tried again — never a failure. (serenity's own limiter is off
//! behind a proxy and drops `retry_after` from its errors, so these calls keep their own.)

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::tools::discord::ApiError;

/// The most rate-limit waits one call sits through.
const MAX_WAITS: usize = 8;
/// The longest single wait.
const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// A client for `https://discord.com/api/v10` (or the configured server).
pub(crate) struct Rest {
    client: reqwest::Client,
    base: String,
    token: String,
}

/// The field errors of a 50035, as `path: message` (Discord nests them by field).
fn field_errors(v: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = v.as_object() else { return };
    for (k, child) in map {
        if k == "_errors" {
            for e in child.as_array().into_iter().flatten() {
                let msg = e["message"].as_str().unwrap_or("invalid");
                out.push(format!("{path}: {msg}"));
            }
        } else {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            field_errors(child, &p, out);
        }
    }
}

/// The seconds to wait before trying a 429 again (body first, then the header).
fn retry_after(body: &Value, header: Option<&str>) -> Duration {
    let secs = body["retry_after"]
        .as_f64()
        .or_else(|| header.and_then(|h| h.trim().parse::<f64>().ok()))
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs.clamp(0.0, LONGEST_WAIT.as_secs_f64()))
}

impl Rest {
    /// A client with `token`, against `api_base` (None: Discord).
    pub(crate) fn new(token: &str, api_base: Option<&str>) -> Rest {
        let base = api_base
            .unwrap_or("https://discord.com")
            .trim_end_matches('/')
            .to_string();
        Rest {
            client: reqwest::Client::new(),
            base,
            token: token.to_string(),
        }
    }

    /// `method` on `/api/v10{path}` with `body`; the answer's JSON (Null when empty).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let url = format!("{}/api/v10{path}", self.base);
        let mut waits = 0;
        loop {
            let mut req = self
                .client
                .request(method.clone(), &url)
                .header("Authorization", format!("Bot {}", self.token))
                .header("X-Audit-Log-Reason", "asked of Kotoba, approved on a card");
            if let Some(b) = body {
                req = req.json(b);
            }
            let resp = req.send().await.map_err(|e| ApiError {
                status: 0,
                code: 0,
                message: e.without_url().to_string(),
            })?;
            let status = resp.status().as_u16();
            let header = resp
                .headers()
                .get("retry-after")
                .and_then(|h| h.to_str().ok())
                .map(str::to_string);
            let text = resp.text().await.unwrap_or_default();
            let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if status == 429 && waits < MAX_WAITS {
                waits += 1;
                let wait = retry_after(&json, header.as_deref());
                tracing::info!("Discord: rate limited on {path}; waiting {wait:?}");
                tokio::time::sleep(wait).await;
                continue;
            }
            if (200..300).contains(&status) {
                return Ok(json);
            }
            let mut message = json["message"].as_str().unwrap_or("no message").to_string();
            let mut fields = Vec::new();
            field_errors(&json["errors"], "", &mut fields);
            if !fields.is_empty() {
                message = format!("{message}: {}", fields.join("; "));
            }
            return Err(ApiError {
                status,
                code: json["code"].as_i64().unwrap_or(0),
                message,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_invalid_form_body_names_each_field_and_a_429_says_how_long_to_wait() {
        let mut out = Vec::new();
        field_errors(
            &json!({"name": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH", "message": "Must be between 1 and 100 in length."}]}}),
            "",
            &mut out,
        );
        assert_eq!(out, ["name: Must be between 1 and 100 in length."]);
        assert_eq!(
            retry_after(&json!({"retry_after": 0.25}), Some("1")),
            Duration::from_millis(250)
        );
        assert_eq!(retry_after(&Value::Null, Some("2")), Duration::from_secs(2));
    }
}
