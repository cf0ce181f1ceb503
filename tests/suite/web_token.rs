//! The page's token (docs/surfaces.md, "Who may use the page"): with no password every
//! page route but `/health` and the static assets needs it; opening `/?token=…` once
//! sets a strict HttpOnly cookie; wrong guesses from many addresses meet one shared
//! budget, and the owner's cookie or token is never slowed; `web_auth: none` opens a
//! loopback page to anyone.

use std::net::IpAddr;

use kotoba::surfaces::web::WebOptions;
use serde_json::{json, Value};

use kotoba_testkit::web::{options, plain, start, start_with, WEB_TOKEN};

#[tokio::test]
async fn without_the_token_every_page_route_but_health_and_the_assets_is_refused() {
    let r = start().await;
    let c = plain();
    for path in [
        "/api/status",
        "/api/events?session=main",
        "/api/history",
        "/api/cards",
        "/api/grants",
        "/api/audit",
        "/api/settings",
        "/api/voice?session=main",
    ] {
        let resp = c.get(r.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{path}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "unauthorized", "{path}: {body}");
        assert!(
            body["message"].as_str().unwrap().contains("token"),
            "{body}"
        );
    }
    for (path, body) in [
        ("/api/message", json!({"session": "main", "text": "hi"})),
        ("/api/cards/abc", json!({"decision": "approve"})),
        ("/api/settings", json!({"force_ask": false})),
    ] {
        let resp = c.post(r.url(path)).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{path}");
    }
    let page = c.get(r.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 401);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("name=\"token\"") && html.contains("?token="),
        "{html}"
    );
    assert_eq!(r.model.request_count(), 0, "no turn ran");
    for open in [
        "/health",
        "/assets/page.js",
        "/assets/page.css",
        "/favicon.ico",
    ] {
        assert_eq!(
            c.get(r.url(open)).send().await.unwrap().status(),
            200,
            "{open}"
        );
    }
    let with = c
        .get(r.url("/api/status"))
        .bearer_auth(WEB_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(with.status(), 200);
    let status: Value = with.json().await.unwrap();
    assert_eq!(status["auth"], "token", "{status}");
}

#[tokio::test]
async fn opening_the_address_with_the_token_sets_a_strict_httponly_cookie_and_goes_on_to_the_page()
{
    let r = start().await;
    let c = plain();
    let wrong = c
        .get(r.url("/?token=not-it&session=s1"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(!wrong.headers().contains_key("set-cookie"));
    let opened = c
        .get(r.url(&format!("/?token={WEB_TOKEN}&session=s1")))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 303);
    assert_eq!(
        opened.headers()["location"],
        "/?session=s1",
        "the token leaves the address bar"
    );
    let cookie = opened.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains(WEB_TOKEN),
        "the cookie is not the token itself"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let page = c
        .get(r.url("/?session=s1"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    // Opened again with its token while logged in: still the token leaves the address.
    let again = c
        .get(r.url(&format!("/?session=s1&token={WEB_TOKEN}")))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 303);
    assert_eq!(again.headers()["location"], "/?session=s1");
    let sent = c
        .post(r.url("/api/message"))
        .header("cookie", &pair)
        .header("origin", &r.base)
        .json(&json!({"session": "s1", "text": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202, "the cookie is the owner");
    // The token typed into the form does the same.
    let form = c
        .post(r.url("/login"))
        .form(&[("token", WEB_TOKEN)])
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 303);
    assert!(form.headers().contains_key("set-cookie"));
}

#[tokio::test]
async fn wrong_guesses_from_twenty_addresses_meet_one_budget_and_the_owners_cookie_or_token_is_never_slowed(
) {
    let r = start_with(
        WebOptions {
            password: Some("hunter2".into()),
            ..options()
        },
        Vec::new(),
    )
    .await;
    let owner = plain();
    let logged_in = owner
        .post(r.url("/login"))
        .form(&[("password", "hunter2")])
        .send()
        .await
        .unwrap();
    let cookie = logged_in.headers()["set-cookie"].to_str().unwrap();
    let pair = cookie.split(';').next().unwrap().to_string();
    // One local process with twenty loopback source addresses, five guesses each.
    let mut refused = 0;
    for n in 2..=21u8 {
        let from: IpAddr = [127, 0, 0, n].into();
        let c = reqwest::Client::builder()
            .local_address(from)
            .build()
            .unwrap();
        for _ in 0..5 {
            let resp = c
                .get(r.url("/api/grants"))
                .bearer_auth("wrong")
                .send()
                .await
                .unwrap();
            match resp.status().as_u16() {
                401 => {}
                429 => refused += 1,
                other => panic!("{other}"),
            }
        }
    }
    // Each wrong one past the shared twenty doubles the wait, so however slow the
    // machine, only a few more were checked.
    assert!(
        refused >= 70,
        "the shared budget slowed them: {refused} of 100 refused"
    );
    // A fresh address is slowed too (the wait is on now, at least a second)…
    let fresh = reqwest::Client::builder()
        .local_address(IpAddr::from([127, 0, 0, 99]))
        .build()
        .unwrap();
    let probe = fresh
        .get(r.url("/api/grants"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(probe.status(), 429);
    // …and within it the owner gets in, as a password does not.
    let right_now = plain()
        .get(r.url("/api/grants"))
        .bearer_auth("hunter2")
        .send()
        .await
        .unwrap();
    assert_eq!(
        right_now.status(),
        429,
        "a password waits out the shared wait"
    );
    let by_cookie = owner
        .get(r.url("/api/grants"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(
        by_cookie.status(),
        200,
        "the owner's cookie is never slowed"
    );
    let by_token = plain()
        .get(r.url("/api/grants"))
        .bearer_auth(WEB_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(by_token.status(), 200, "nor is the token");
}

#[tokio::test]
async fn with_web_auth_none_the_loopback_page_needs_nothing_and_says_so() {
    let r = start_with(
        WebOptions {
            token: None,
            ..options()
        },
        Vec::new(),
    )
    .await;
    let resp = plain().get(r.url("/api/status")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let status: Value = resp.json().await.unwrap();
    assert_eq!(status["auth"], "none", "{status}");
    let page = plain().get(r.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
}
