//! Who may reach the page and its API (`/` and `/api/*`), and the login form.
//!
//! - Password set: the login cookie (random per process, HttpOnly, SameSite=Strict) or
//!   `Authorization: Bearer <password>`, compared in constant time.
//! - No password: the server only binds loopback ([`crate::surfaces::http::check_bind`]) and answers
//!   only loopback host names, so a tunnel, a reverse proxy under another name or a
//!   DNS-rebinding page gets 403 instead of an unauthenticated owner's page.
//! - Wrong passwords slow down (`throttle.rs`): a login form or bearer header past the
//!   free tries waits, growing, and a try during the wait is refused with 429 and
//!   `Retry-After`.
//! - Any state-changing request whose `Origin` names another host is refused (CSRF),
//!   and so is a WebSocket upgrade (the voice socket: browsers open those across
//!   sites without CORS); POST bodies are JSON, which a cross-site form cannot send
//!   without a preflight.

use axum::extract::{Form, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::throttle::{self, ClientAddr};
use super::{json_error, Shared};
use crate::engine::Answerer;

/// The login cookie's name.
pub(crate) const COOKIE: &str = "kotoba_auth";

/// Who answers a card from the page. Only requests that passed [`require`] get here:
/// the password was given, or none is set and the request came to a loopback host name
/// on a loopback-only server — in both cases the person at the page is the owner.
pub(crate) fn web_owner() -> Answerer {
    Answerer {
        id: "web".into(),
        name: "the owner".into(),
        local: true,
        via: "the web page".into(),
        holds: Vec::new(),
    }
}

/// Constant-time equality of two secrets (the length is not hidden).
pub(crate) fn secret_eq(given: &str, expected: &str) -> bool {
    given.as_bytes().ct_eq(expected.as_bytes()).into()
}

/// The value of a bearer `Authorization` header.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, rest) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn authenticated(headers: &HeaderMap, password: &str, token: &str) -> bool {
    let by_cookie = cookie(headers, COOKIE).is_some_and(|c| secret_eq(c, token));
    let by_bearer = bearer(headers).is_some_and(|b| secret_eq(b, password));
    by_cookie || by_bearer
}

/// The host a request was addressed to, without its port.
fn request_host(req: &Request) -> Option<String> {
    let raw = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))?;
    Some(strip_port(&raw).to_ascii_lowercase())
}

fn strip_port(hostport: &str) -> &str {
    if let Some(rest) = hostport.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match hostport.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.chars().all(|c| c.is_ascii_digit()) => {
            host
        }
        _ => hostport,
    }
}

/// Whether a host name is a loopback one: `localhost`, 127.0.0.0/8 or ::1.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A browser's `Origin`, when present, must name the host the request went to.
fn same_origin(req: &Request, host: Option<&str>) -> bool {
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some((_, rest)) = origin.split_once("://") else {
        return false;
    };
    let origin_host = strip_port(rest.split('/').next().unwrap_or(rest)).to_ascii_lowercase();
    host.is_some_and(|h| h == origin_host)
}

/// The gate in front of `/` and `/api/*`.
pub(super) async fn require(State(st): State<Shared>, req: Request, next: Next) -> Response {
    let host = request_host(&req);
    match &st.options.password {
        Some(password) => {
            let addr = throttle::client_addr(req.extensions());
            let guess = bearer(req.headers()).is_some();
            let now = tokio::time::Instant::now();
            if guess {
                if let Some(wait) = st.logins.wait(addr, now) {
                    let mut resp = json_error(
                        StatusCode::TOO_MANY_REQUESTS,
                        "too_many_attempts",
                        &format!(
                            "too many wrong passwords from this address: try again in {} seconds",
                            throttle::seconds(wait)
                        ),
                    );
                    retry_after(&mut resp, wait);
                    return resp;
                }
            }
            let ok = authenticated(req.headers(), password, &st.cookie_token);
            if guess && ok {
                st.logins.succeeded(addr);
            } else if guess {
                st.logins.failed(addr, now);
            }
            if !ok {
                if req.uri().path() == "/" && req.method() == Method::GET {
                    return login_page(StatusCode::OK, None);
                }
                return json_error(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "this page needs its password: log in at /",
                );
            }
        }
        None => {
            if !host.as_deref().is_some_and(is_loopback_host) {
                return json_error(
                    StatusCode::FORBIDDEN,
                    "forbidden_host",
                    "with no password set, this page answers only at 127.0.0.1, localhost or [::1]; \
                     set KOTOBA_WEB_PASSWORD to reach it under another name",
                );
            }
        }
    }
    // A WebSocket is a GET that browsers open across sites without CORS: the voice
    // socket is held to the same origin as a POST.
    let upgrade = req.headers().contains_key(header::UPGRADE);
    if (req.method() != Method::GET || upgrade) && !same_origin(&req, host.as_deref()) {
        return json_error(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "a request from another site was refused",
        );
    }
    next.run(req).await
}

/// The login form's body.
#[derive(serde::Deserialize)]
pub(super) struct LoginForm {
    password: String,
}

/// `POST /login`: the right password sets the cookie and goes back to the page.
/// A wrong one counts against the client's address (`throttle.rs`); during its wait
/// no password is checked.
pub(super) async fn login(
    State(st): State<Shared>,
    ClientAddr(addr): ClientAddr,
    Form(form): Form<LoginForm>,
) -> Response {
    let Some(password) = &st.options.password else {
        return redirect_home(None);
    };
    let now = tokio::time::Instant::now();
    if let Some(wait) = st.logins.wait(addr, now) {
        let note = format!(
            "Too many wrong passwords: try again in {} seconds.",
            throttle::seconds(wait)
        );
        let mut resp = login_page(StatusCode::TOO_MANY_REQUESTS, Some(&note));
        retry_after(&mut resp, wait);
        return resp;
    }
    if !secret_eq(&form.password, password) {
        st.logins.failed(addr, now);
        return login_page(
            StatusCode::UNAUTHORIZED,
            Some("That password is not right."),
        );
    }
    st.logins.succeeded(addr);
    redirect_home(Some(format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        st.cookie_token
    )))
}

/// Say in `Retry-After` how long to wait.
fn retry_after(resp: &mut Response, wait: std::time::Duration) {
    if let Ok(v) = header::HeaderValue::from_str(&throttle::seconds(wait).to_string()) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
}

fn redirect_home(cookie: Option<String>) -> Response {
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Some(c) = cookie.and_then(|c| header::HeaderValue::from_str(&c).ok()) {
        resp.headers_mut().insert(header::SET_COOKIE, c);
    }
    resp
}

fn login_page(status: StatusCode, problem: Option<&str>) -> Response {
    let note = problem
        .map(|p| format!("<p class=\"problem\">{p}</p>"))
        .unwrap_or_default();
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Kotoba — log in</title><link rel=\"stylesheet\" href=\"/assets/page.css\"></head>\
         <body class=\"login\"><form method=\"post\" action=\"/login\"><h1>Kotoba</h1>{note}\
         <label>Password <input type=\"password\" name=\"password\" autofocus></label>\
         <button type=\"submit\">Log in</button></form></body></html>"
    );
    let mut resp = (status, Html(body)).into_response();
    super::assets::secure_headers(resp.headers_mut());
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_host_names_with_or_without_a_port() {
        for h in [
            "127.0.0.1:8000",
            "localhost:8000",
            "[::1]:8000",
            "localhost",
            "127.0.0.2",
        ] {
            assert!(is_loopback_host(strip_port(h)), "{h}");
        }
        for h in [
            "kotoba.example:8000",
            "192.168.1.4:8000",
            "10.0.0.1",
            "[::]:8000",
            "localhost.evil.com",
        ] {
            assert!(!is_loopback_host(strip_port(h)), "{h}");
        }
    }

    #[test]
    fn bearer_and_cookie_are_read_and_compared() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        h.insert(header::COOKIE, "a=1; kotoba_auth=tok; b=2".parse().unwrap());
        assert_eq!(bearer(&h), Some("s3cret"));
        assert_eq!(cookie(&h, COOKIE), Some("tok"));
        assert!(authenticated(&h, "s3cret", "other"));
        assert!(authenticated(&h, "nope", "tok"));
        assert!(!authenticated(&h, "nope", "other"));
        assert!(secret_eq("abc", "abc") && !secret_eq("abc", "abd") && !secret_eq("ab", "abc"));
    }
}
