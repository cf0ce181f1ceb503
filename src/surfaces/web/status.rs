//! `GET /api/status`: what the page shows in its header — the model, whether /v1 has a
//! key, and exactly what to set when she cannot think yet (App::missing_setup).

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::Shared;

/// The page's status line, read live.
pub(super) async fn status(State(st): State<Shared>) -> Json<Value> {
    let config = &st.engine.config();
    let settings = config.settings();
    Json(json!({
        "model": settings.model,
        "missing_setup": crate::app::missing_setup(config),
        "password_set": st.options.password.is_some(),
        "v1_key_set": st.options.api_key.is_some(),
        "v1_model": super::MODEL_NAME,
    }))
}
