//! Who may reach the page and its API (`/` and `/api/*`), and the login form.
//!
//! - A password set (`web_password`): the login form sets the session cookie, or a
//!   script sends `Authorization: Bearer <password>`; the token below works too.
//! - No password (the default): the token (`trust/token.rs`). Opening `/?token=<token>` once
//!   sets the session cookie (HttpOnly, SameSite=Strict) and goes on to the page;
//!   scripts send `Authorization: Bearer <token>`.
//! - `web_auth: none` and no password: nothing — anyone who reaches the loopback
//!   address is the owner (a machine one person alone uses; `doctor` and the page warn).
//! - Without a password the server binds only loopback ([`crate::surfaces::http::check_bind`])
//!   and answers only loopback host names, so a tunnel, a reverse proxy under another
//!   name or a DNS-rebinding page gets 403.
//! - Guesses slow down (`throttle.rs`): a wrong password or token, per address and in
//!   one budget across all addresses. A request carrying the session cookie or the token
//!   is never slowed, so no local process can lock the owner out.
//! - A request that changes something, and any WebSocket upgrade, must come from
//!   exactly this address: scheme, host and port (`origin.rs`).

use std::sync::Mutex;

use axum::extract::{Form, FromRequest, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::origin::{is_loopback_host, request_host, same_origin};
use super::throttle::{self, ClientAddr};
use super::{json_error, Shared, WebState};
use crate::config::password;
use crate::engine::Answerer;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "kotoba_auth";

/// Who answers a card from the page. Only requests that passed [`require`] get here:
/// the token, the password or the session cookie was given (or `web_auth: none` on a
/// loopback-only server) — the person at the page is the owner.
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

/// The `token` of a query string, and the query without it.
fn query_token(query: Option<&str>) -> (Option<String>, String) {
    let mut token = None;
    let mut rest = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("token", v)) => token = Some(v.to_string()),
            _ => rest.push(pair),
        }
    }
    (token, rest.join("&"))
}

/// What guards the page, fixed at start.
pub(crate) struct Guard {
    /// The password as kept (an scrypt hash or its text); `None`: no password.
    password: Option<String>,
    /// The token; `None` only with `web_auth: none` (or a password and no token).
    token: Option<String>,
    /// The session cookie's value.
    cookie: String,
    /// SHA-256 of the last bearer password that matched a hashed one, so a script's
    /// every request does not pay scrypt again.
    verified: Mutex<Option<[u8; 32]>>,
}

impl Guard {
    pub(crate) fn new(password: Option<String>, token: Option<String>) -> Guard {
        let cookie = match &token {
            Some(t) => crate::trust::token::cookie_for(t, password.as_deref()),
            None => crate::config::password::random_secret(),
        };
        Guard {
            password,
            token,
            cookie,
            verified: Mutex::new(None),
        }
    }

    /// How the page is guarded, as `/api/status` says it: `password`, `token` or `none`.
    pub(crate) fn mode(&self) -> &'static str {
        match (&self.password, &self.token) {
            (Some(_), _) => "password",
            (None, Some(_)) => "token",
            (None, None) => "none",
        }
    }

    /// `web_auth: none` and no password: nothing guards the (loopback-only) page.
    fn is_open(&self) -> bool {
        self.password.is_none() && self.token.is_none()
    }

    fn is_token(&self, given: &str) -> bool {
        self.token.as_deref().is_some_and(|t| secret_eq(given, t))
    }

    /// Whether `given` is the password (scrypt off the runtime's threads).
    async fn is_password(&self, given: &str) -> bool {
        let Some(stored) = self.password.clone() else {
            return false;
        };
        if !password::is_hash(&stored) {
            return secret_eq(given, &stored);
        }
        let digest: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        let seen = *self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if seen.is_some_and(|d| bool::from(d.ct_eq(&digest))) {
            return true;
        }
        let given = given.to_string();
        let ok = tokio::task::spawn_blocking(move || password::matches(&given, &stored))
            .await
            .unwrap_or(false);
        if ok {
            *self.verified.lock().unwrap_or_else(|p| p.into_inner()) = Some(digest);
        }
        ok
    }
}

/// The gate in front of `/` and `/api/*`.
pub(super) async fn require(State(st): State<Shared>, req: Request, next: Next) -> Response {
    let guard = &st.guard;
    if guard.password.is_none() && !request_host(&req).is_some_and(|h| is_loopback_host(&h)) {
        return json_error(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            "with no password set, this page answers only at 127.0.0.1, localhost or [::1]; \
             set KOTOBA_WEB_PASSWORD to reach it under another name",
        );
    }
    // A WebSocket is a GET that browsers open across sites without CORS: the voice
    // socket is held to the same origin as a POST.
    let upgrade = req.headers().contains_key(header::UPGRADE);
    if (req.method() != Method::GET || upgrade) && !same_origin(&req) {
        return json_error(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "a request from another site was refused",
        );
    }
    if guard.is_open() {
        return next.run(req).await;
    }
    // The cookie and the token cannot be guessed: never slowed down. The page opened
    // with its token always goes on without it, so the token leaves the address bar.
    let page = req.uri().path() == "/" && req.method() == Method::GET;
    let (in_query, rest) = query_token(req.uri().query());
    let in_query = in_query.filter(|_| page);
    let given = bearer(req.headers()).map(str::to_string);
    let by_cookie = cookie(req.headers(), COOKIE).is_some_and(|c| secret_eq(c, &guard.cookie));
    let known = by_cookie || given.as_deref().is_some_and(|b| guard.is_token(b));
    if in_query.is_none() && known {
        return next.run(req).await;
    }
    if let Some(t) = &in_query {
        if guard.is_token(t) || known {
            st.logins.succeeded(throttle::client_addr(req.extensions()));
            let to = if rest.is_empty() {
                "/".to_string()
            } else {
                format!("/?{rest}")
            };
            return redirect(&to, Some(session_cookie(&st)));
        }
    }
    let addr = throttle::client_addr(req.extensions());
    if given.is_some() || in_query.is_some() {
        let now = tokio::time::Instant::now();
        if let Some(wait) = st.logins.wait(addr, now) {
            let mut resp = json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_attempts",
                &format!(
                    "too many wrong passwords or tokens: try again in {} seconds",
                    throttle::seconds(wait)
                ),
            );
            retry_after(&mut resp, wait);
            return resp;
        }
        if let Some(b) = &given {
            if guard.is_password(b).await {
                st.logins.succeeded(addr);
                return next.run(req).await;
            }
        }
        st.logins.failed(addr, now);
    }
    if page {
        return login_page(guard, StatusCode::UNAUTHORIZED, in_query.map(|_| WRONG));
    }
    let message = if guard.password.is_some() {
        "this page needs its password: log in at /"
    } else {
        "this page needs its token: open the address `kotoba serve` printed (…/?token=…), \
         or send Authorization: Bearer <token> (the token is in $KOTOBA_HOME/web_token)"
    };
    json_error(StatusCode::UNAUTHORIZED, "unauthorized", message)
}

const WRONG: &str = "That is not right.";

/// The login form's body: the password, or the token where no password is set.
#[derive(serde::Deserialize)]
pub(super) struct LoginForm {
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

/// `POST /login`: the right password (or the token) sets the cookie and goes back to
/// the page. A wrong one counts against the client's address and the shared budget
/// (`throttle.rs`); during a wait no password is checked (the token always is).
pub(super) async fn login(
    State(st): State<Shared>,
    ClientAddr(addr): ClientAddr,
    req: Request,
) -> Response {
    if !same_origin(&req) {
        return json_error(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "a request from another site was refused",
        );
    }
    let guard = &st.guard;
    if guard.is_open() {
        return redirect("/", None);
    }
    let Ok(Form(form)) = Form::<LoginForm>::from_request(req, &st).await else {
        return login_page(
            guard,
            StatusCode::BAD_REQUEST,
            Some("Type it into the form."),
        );
    };
    let given = form.token.or(form.password).unwrap_or_default();
    if guard.is_token(&given) {
        st.logins.succeeded(addr);
        return redirect("/", Some(session_cookie(&st)));
    }
    let now = tokio::time::Instant::now();
    if let Some(wait) = st.logins.wait(addr, now) {
        let note = format!(
            "Too many wrong passwords: try again in {} seconds.",
            throttle::seconds(wait)
        );
        let mut resp = login_page(guard, StatusCode::TOO_MANY_REQUESTS, Some(&note));
        retry_after(&mut resp, wait);
        return resp;
    }
    if !guard.is_password(&given).await {
        st.logins.failed(addr, now);
        return login_page(guard, StatusCode::UNAUTHORIZED, Some(WRONG));
    }
    st.logins.succeeded(addr);
    redirect("/", Some(session_cookie(&st)))
}

fn session_cookie(st: &WebState) -> String {
    format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        st.guard.cookie
    )
}

/// Say in `Retry-After` how long to wait.
fn retry_after(resp: &mut Response, wait: std::time::Duration) {
    if let Ok(v) = header::HeaderValue::from_str(&throttle::seconds(wait).to_string()) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
}

fn redirect(to: &str, cookie: Option<String>) -> Response {
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response();
    if let Some(c) = cookie.and_then(|c| header::HeaderValue::from_str(&c).ok()) {
        resp.headers_mut().insert(header::SET_COOKIE, c);
    }
    resp
}

fn login_page(guard: &Guard, status: StatusCode, problem: Option<&str>) -> Response {
    let note = problem
        .map(|p| format!("<p class=\"problem\">{p}</p>"))
        .unwrap_or_default();
    let field = if guard.password.is_some() {
        "<label>Password <input type=\"password\" name=\"password\" autofocus></label>"
    } else {
        "<p>Open the address <code>kotoba serve</code> printed (it ends in <code>?token=…</code>), \
         or paste the token kept in <code>$KOTOBA_HOME/web_token</code>.</p>\
         <label>Token <input type=\"password\" name=\"token\" autofocus></label>"
    };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Kotoba — log in</title><link rel=\"stylesheet\" href=\"/assets/page.css\"></head>\
         <body class=\"login\"><form method=\"post\" action=\"/login\"><h1>Kotoba</h1>{note}\
         {field}<button type=\"submit\">Log in</button></form></body></html>"
    );
    let mut resp = (status, Html(body)).into_response();
    super::assets::secure_headers(resp.headers_mut());
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_and_cookie_are_read_and_compared() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        h.insert(header::COOKIE, "a=1; kotoba_auth=tok; b=2".parse().unwrap());
        assert_eq!(bearer(&h), Some("s3cret"));
        assert_eq!(cookie(&h, COOKIE), Some("tok"));
        assert!(secret_eq("abc", "abc") && !secret_eq("abc", "abd") && !secret_eq("ab", "abc"));
    }

    #[test]
    fn the_token_is_taken_out_of_the_query_and_the_rest_kept() {
        assert_eq!(
            query_token(Some("token=abc&session=x")),
            (Some("abc".into()), "session=x".into())
        );
        assert_eq!(query_token(Some("session=x")), (None, "session=x".into()));
        assert_eq!(query_token(None), (None, String::new()));
    }

    #[tokio::test]
    async fn the_guard_takes_the_token_or_the_password_and_a_hashed_password_is_remembered() {
        let hashed = password::hash("pw").unwrap();
        let g = Guard::new(Some(hashed), Some("tok".into()));
        assert_eq!(g.mode(), "password");
        assert!(g.is_token("tok") && !g.is_token("pw"));
        assert!(g.is_password("pw").await && !g.is_password("tok").await);
        assert!(
            g.is_password("pw").await,
            "again, from the remembered digest"
        );
        assert_eq!(Guard::new(None, Some("t".into())).mode(), "token");
        assert_eq!(Guard::new(None, None).mode(), "none");
    }
}
