//! The web surface: the page (`/`), its event stream and JSON endpoints (`/api/*`) and
//! `/health`, served beside the OpenAI-compatible `/v1` by `surfaces::http`.
//!
//! Who may do what (see README "Web page and /v1"):
//! - `/health` and the page's static assets are open.
//! - `/` and `/api/*` need the token (`KOTOBA_WEB_TOKEN` / `$KOTOBA_HOME/web_token`) or,
//!   when one is set, the password (`KOTOBA_WEB_PASSWORD` / `web_password`): as the
//!   session cookie or a bearer header (`auth.rs`). With no password set the server
//!   only binds loopback and only answers loopback host names (`127.0.0.1`,
//!   `localhost`, `[::1]`), so a tunnel or a DNS-rebinding page cannot reach it.
//! - `/v1/*` needs `KOTOBA_API_KEY` as a bearer, whatever the password.

mod assets;
mod audit;
pub(crate) mod auth;
mod cards;
mod cards_waiting;
mod errors;
mod events;
mod grants;
mod health;
mod history;
mod message;
mod metrics;
mod origin;
mod people;
mod relay;
mod settings;
mod status;
mod throttle;
pub mod voice;

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;

pub use relay::WorkDoneRelay;

/// The prefix of every engine session the web page and /v1 drive: `web:<id>`. Web
/// sessions are their owner's by construction (their cards are answered as local).
pub const SESSION_PREFIX: &str = crate::session::WEB_PREFIX;

/// The default address: loopback only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8000";

/// The one model name `/v1/models` lists.
pub const MODEL_NAME: &str = "kotoba";

/// Everything the server is started with; read once at start.
#[derive(Clone)]
pub struct WebOptions {
    /// The page's password as kept (an scrypt hash, or its text); `None` → the token
    /// guards the page, and the server binds loopback only.
    pub password: Option<String>,
    /// The page's token (also taken with a password, for scripts); `None` with no
    /// password: `web_auth: none`, nothing guards the loopback-only page.
    pub token: Option<String>,
    /// `/v1`'s bearer key (`KOTOBA_API_KEY`); `None` → every /v1 call is refused.
    pub api_key: Option<String>,
    /// A /v1 stream sends a keep-alive chunk after this much silence (4 s).
    pub v1_keepalive: Duration,
    /// The largest /v1 request body accepted (1 MiB); bigger → 413.
    pub v1_body_limit: usize,
    /// How long a /v1 request body may take to arrive (10 s); slower → 408.
    pub v1_body_timeout: Duration,
    /// The Discord surface's port, set while she is connected, when Discord is
    /// configured (`/health` says whether she is); `None`: Discord is off.
    pub discord: Option<crate::tools::discord::PortSlot>,
}

impl Default for WebOptions {
    fn default() -> Self {
        WebOptions {
            password: None,
            // Secure by default: a token no one was told.
            token: Some(crate::config::password::random_secret()),
            api_key: None,
            discord: None,
            v1_keepalive: Duration::from_secs(4),
            v1_body_limit: 1024 * 1024,
            v1_body_timeout: Duration::from_secs(10),
        }
    }
}

impl WebOptions {
    /// The options a configuration gives: `web_password` (or `KOTOBA_WEB_PASSWORD`), the
    /// token unless `web_auth: none` (`KOTOBA_WEB_TOKEN`, else `$KOTOBA_HOME/web_token`,
    /// made at the first start) and `KOTOBA_API_KEY`; blank values count as unset. A
    /// token that cannot be kept is logged and a fresh one guards this run.
    pub fn from_config(config: &crate::config::Config) -> WebOptions {
        let settings = config.settings();
        let password = settings
            .web_password
            .map(|s| s.0)
            .filter(|p| !p.trim().is_empty());
        let token = if password.is_none() && settings.web_auth == crate::config::WebAuth::None {
            None
        } else {
            match crate::trust::token::load_or_create(config) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(
                        "the page's token could not be kept in {} ({e}); this run uses one only its log shows",
                        crate::trust::token::token_path(config).display()
                    );
                    Some(crate::config::password::random_secret())
                }
            }
        };
        WebOptions {
            password,
            token,
            api_key: config
                .env("KOTOBA_API_KEY")
                .map(str::to_string)
                .filter(|k| !k.trim().is_empty()),
            ..WebOptions::default()
        }
    }
}

/// What every route shares.
pub(crate) struct WebState {
    pub(crate) engine: Arc<Engine>,
    pub(crate) options: WebOptions,
    /// What guards the page: the password, the token and the session cookie's value.
    pub(crate) guard: auth::Guard,
    pub(crate) relay: Arc<WorkDoneRelay>,
    pub(crate) shutdown: CancellationToken,
    /// The page's voice rooms open now.
    pub(crate) voices: voice::PageRooms,
    /// Wrong passwords by client address, which slow its next tries down.
    pub(crate) logins: throttle::LoginThrottle,
}

/// Shared handle of [`WebState`].
pub(crate) type Shared = Arc<WebState>;

/// The page's router: the page, its API, health and the assets, over one engine
/// (`surfaces::http` serves it beside /v1).
pub fn router(engine: Arc<Engine>, options: WebOptions, shutdown: CancellationToken) -> Router {
    let state: Shared = Arc::new(WebState {
        relay: Arc::new(WorkDoneRelay::new(engine.clone())),
        engine: engine.clone(),
        guard: auth::Guard::new(options.password.clone(), options.token.clone()),
        options: options.clone(),
        shutdown: shutdown.clone(),
        voices: voice::PageRooms::default(),
        logins: throttle::LoginThrottle::default(),
    });
    let api = Router::new()
        .route("/api/status", get(status::status))
        .route("/api/events", get(events::events))
        .route("/api/history", get(history::history))
        .route("/api/message", post(message::message))
        .route("/api/stop", post(message::stop))
        .route("/api/voice", get(voice::voice))
        .route("/api/cards", get(cards_waiting::list))
        .route("/api/cards/{request_id}", post(cards::answer))
        .route("/api/grants", get(grants::list))
        .route("/api/grants/{id}", delete(grants::revoke))
        .route("/api/audit", get(audit::list))
        .route("/api/settings", get(settings::list).post(settings::save))
        .route("/api/people/{id}/forget", post(people::forget))
        .route("/", get(assets::page))
        .fallback(api_not_found)
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require,
        ))
        .layer(axum::middleware::from_fn(errors::json_errors));
    let open = Router::new()
        .route("/health", get(health::health))
        .route("/metrics", get(metrics::metrics))
        .route("/login", post(auth::login))
        .route("/assets/page.js", get(assets::script))
        .route("/assets/voice.js", get(assets::voice_script))
        .route("/assets/mic-worklet.js", get(assets::mic_worklet))
        .route("/assets/page.css", get(assets::style))
        .route("/assets/icon.svg", get(assets::icon))
        .route("/favicon.ico", get(assets::icon));
    Router::new()
        .merge(open.with_state(state.clone()))
        .merge(api.with_state(state))
}

async fn api_not_found() -> Response {
    json_error(StatusCode::NOT_FOUND, "not_found", "there is nothing here")
}

/// A JSON error body for the page's endpoints: `{"error": code, "message": …}`.
pub(crate) fn json_error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": code, "message": message }))).into_response()
}

/// The id a request named (`?session=`, `user`, `X-Session-Id`), checked: 1–128
/// characters of letters, digits and `. _ : @ -`.
pub fn parse_session_id(raw: &str) -> Result<String, BadSessionId> {
    let ok = !raw.is_empty()
        && raw.chars().count() <= 128
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '@' | '-'));
    if ok {
        Ok(raw.to_string())
    } else {
        Err(BadSessionId(raw.chars().take(40).collect()))
    }
}

/// A session id that is not 1–128 letters, digits or `. _ : @ -` (its first 40
/// characters, shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the session id must be 1–128 letters, digits or . _ : @ - (got {0:?})")]
pub struct BadSessionId(pub String);

/// The page's default session: one owner, one conversation (`?session=` picks another).
pub const DEFAULT_SESSION: &str = "main";

pub(crate) fn default_session() -> String {
    DEFAULT_SESSION.to_string()
}

/// A query naming a session (default [`DEFAULT_SESSION`]).
#[derive(serde::Deserialize)]
pub(crate) struct SessionQuery {
    #[serde(default = "default_session")]
    pub(crate) session: String,
}

/// The engine session a web or /v1 session id names (its stored name).
pub fn engine_session(id: &str) -> String {
    crate::session::SessionId::page(id).into_name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_short_and_plain() {
        assert_eq!(parse_session_id("main").unwrap(), "main");
        assert!(parse_session_id("conv_01:abc@x-y.z").is_ok());
        assert!(parse_session_id("").is_err());
        assert!(parse_session_id("a b").is_err());
        assert!(parse_session_id("../etc").is_err());
        assert!(parse_session_id(&"x".repeat(129)).is_err());
        assert_eq!(engine_session("main"), "web:main");
    }
}
