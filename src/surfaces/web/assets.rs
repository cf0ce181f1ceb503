//! The page itself: one HTML file, its scripts (the page, its voice, the microphone's
//! worklet) and one stylesheet, shipped inside the
//! binary with `include_str!` (no front-end build step). Security headers keep it from
//! being framed (a framed Approve button could be clicked by trickery) or sniffed.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("assets/page.html");
const SCRIPT: &str = include_str!("assets/page.js");
const VOICE: &str = include_str!("assets/voice.js");
const MIC: &str = include_str!("assets/mic-worklet.js");
const STYLE: &str = include_str!("assets/page.css");
const ICON: &str = include_str!("assets/icon.svg");

/// Headers every page response carries.
pub(super) fn secure_headers(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut resp = body.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    secure_headers(resp.headers_mut());
    resp
}

/// `GET /`.
pub(super) async fn page() -> Response {
    asset(PAGE, "text/html; charset=utf-8")
}

/// `GET /assets/page.js`.
pub(super) async fn script() -> Response {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

/// `GET /assets/voice.js`: the page's voice socket, player and microphone.
pub(super) async fn voice_script() -> Response {
    asset(VOICE, "text/javascript; charset=utf-8")
}

/// `GET /assets/mic-worklet.js`: the microphone's AudioWorklet (16 kHz PCM frames).
pub(super) async fn mic_worklet() -> Response {
    asset(MIC, "text/javascript; charset=utf-8")
}

/// `GET /assets/page.css`.
pub(super) async fn style() -> Response {
    asset(STYLE, "text/css; charset=utf-8")
}

/// `GET /assets/icon.svg` and `GET /favicon.ico`: her face, as the tab's icon.
pub(super) async fn icon() -> Response {
    asset(ICON, "image/svg+xml")
}
