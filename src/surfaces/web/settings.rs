//! `GET /api/settings` (every live settings.yaml key with its input, default, doc line
//! and the environment variable that overrides it here; the work caps under "Advanced
//! (work)") and `POST /api/settings` (`{key: value, …}`: every value is checked before
//! any is written; a bad one answers 400 naming its key and nothing changes; the answer
//! names each saved key the environment overrides) — the page's Settings panel
//! (docs/surfaces.md).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::{json_error, Shared};
use crate::config::SettingError;

/// The listing.
pub(super) async fn list(State(st): State<Shared>) -> Response {
    Json(json!({ "settings": st.engine.config().listing() })).into_response()
}

/// A JSON value as the YAML text settings.yaml takes (a string as it is).
fn as_yaml_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn refused(key: &str, e: &SettingError) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "error": "bad_setting", "key": key, "message": e.to_string() })),
    )
        .into_response()
}

/// Save the keys given; answers the keys saved and the listing after the save.
pub(super) async fn save(State(st): State<Shared>, Json(body): Json<Value>) -> Response {
    let Some(pairs) = body.as_object().filter(|m| !m.is_empty()) else {
        return json_error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "send a JSON object of settings keys and values, such as {\"work_max_iter\": 20}",
        );
    };
    let config = &st.engine.config();
    let pairs: Vec<(&String, String)> = pairs.iter().map(|(k, v)| (k, as_yaml_text(v))).collect();
    for (key, value) in &pairs {
        if let Err(e) = config.check(key, value) {
            return refused(key, &e);
        }
    }
    // The keys saved, never their values (a secret is not echoed). Writing the file
    // (and hashing a password) is blocking work: its own thread.
    let owned: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).clone(), v.clone()))
        .collect();
    let writer = std::sync::Arc::clone(config);
    let written = tokio::task::spawn_blocking(move || {
        let mut saved = Vec::new();
        for (key, value) in owned {
            if let Err(e) = writer.set(&key, &value) {
                return Err((key, e));
            }
            saved.push(key);
        }
        Ok(saved)
    })
    .await;
    let saved = match written {
        Ok(Ok(saved)) => saved,
        Ok(Err((key, e))) => {
            tracing::warn!("saving setting {key}: {e}");
            return refused(&key, &e);
        }
        Err(e) => {
            return json_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                &format!("the settings could not be saved ({e})"),
            )
        }
    };
    // A key the environment overrides is saved in the file but does not apply here:
    // the answer says so, naming the variable.
    let overridden: Vec<Value> = saved
        .iter()
        .filter_map(|k| {
            config
                .overridden_by(k)
                .map(|by| json!({ "key": k, "by": by }))
        })
        .collect();
    Json(json!({ "saved": saved, "overridden": overridden, "settings": config.listing() }))
        .into_response()
}
