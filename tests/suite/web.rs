//! The web page's server end to end over real HTTP: health, the page and its assets,
//! the event stream carrying engine frames unchanged, typed messages, card answers
//! (and "already settled"), grants and audit JSON, auth and host rules, the hidden
//! announce turn, graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use kotoba::protocol::Frame;
use kotoba::store::GrantScope;
use kotoba::surfaces::web::WebOptions;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::web::{of_type, options, start, start_with, WebRig};

fn is_turn_done(v: &Value) -> bool {
    v["type"] == "turn_done"
}

#[tokio::test]
async fn health_answers_and_the_page_ships_inside_the_binary() {
    let r = start().await;
    let health = r.http.get(r.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(
        health.json::<Value>().await.unwrap(),
        json!({"status": "ok", "store": "ok"})
    );
    let page = r.http.get(r.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let html = page.text().await.unwrap();
    assert!(html.contains("/assets/page.js") && html.contains("id=\"composer\""));
    for (path, kind) in [
        ("/assets/page.js", "text/javascript"),
        ("/assets/page.css", "text/css"),
    ] {
        let a = r.http.get(r.url(path)).send().await.unwrap();
        assert_eq!(a.status(), 200);
        assert!(a.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with(kind));
    }
    let status: Value = r
        .http
        .get(r.url("/api/status"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["model"], "scripted");
    assert_eq!(status["missing_setup"], Value::Null);
}

#[tokio::test]
async fn with_no_model_key_the_server_starts_and_the_status_says_exactly_what_to_set() {
    let home = tempfile::tempdir().unwrap();
    let config = kotoba::config::Config::for_home(
        home.path(),
        &[(
            "KOTOBA_SETTINGS",
            home.path().join("none.yaml").to_str().unwrap(),
        )],
    );
    let app = kotoba::app::App::build(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    let task = tokio::spawn(kotoba::surfaces::http::serve(
        app.engine.clone(),
        options(),
        listener,
        stop.clone(),
    ));
    let status: Value = kotoba_testkit::web::get_with_token(&format!("{base}/api/status"))
        .await
        .json()
        .await
        .unwrap();
    if std::env::var_os("OPENAI_API_KEY").is_none() {
        let missing = status["missing_setup"].as_str().unwrap();
        assert!(missing.contains("set OPENAI_API_KEY"), "{missing}");
    }
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_typed_message_streams_her_answer_as_engine_frames_unchanged() {
    let r = start().await;
    r.model.push(Reply::text("Hello there, nice to see you."));
    let mut sse = r.events("t1").await;
    r.say("t1", "hi").await;
    let frames = sse.until(is_turn_done).await;
    assert_eq!(frames[0]["type"], "turn_started");
    let text: String = of_type(&frames, "text_delta")
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello there, nice to see you.");
    // Each frame is the engine's Event, serialised unchanged: it parses back.
    for f in &frames {
        serde_json::from_value::<kotoba::protocol::Event>(f.clone()).unwrap();
    }
    let done = frames.last().unwrap();
    assert_eq!(done["status"], "completed");
    // A typed message is spoken register: the voice prompt was sent.
    let sent = r.model.requests()[0].to_string();
    assert!(
        sent.contains("turned into speech"),
        "register voice: the spoken prompt"
    );
    let history: Value = r
        .http
        .get(r.url("/api/history?session=t1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(history.as_array().unwrap().len(), 2);
    assert_eq!(history[1]["text"], "Hello there, nice to see you.");
}

#[tokio::test]
async fn a_reminder_set_on_the_page_comes_due_on_that_sessions_event_stream() {
    let r = start().await;
    r.model.push(Reply::call(
        "cronjob",
        json!({"action": "create", "text": "tea is ready", "in_minutes": 0.01}),
    ));
    r.model.push(Reply::text("I'll remind you."));
    let mut sse = r.events("tea").await;
    let mut other = r.events("elsewhere").await;
    r.say("tea", "remind me when the tea is ready").await;
    let frames = sse.until(|f| f["type"] == "reminder").await;
    let due = frames.last().unwrap();
    assert_eq!(due["text"], "tea is ready", "{due}");
    serde_json::from_value::<kotoba::protocol::Event>(due.clone()).unwrap();
    // Another session's stream does not carry it.
    let stray = tokio::time::timeout(Duration::from_millis(300), other.next()).await;
    assert!(stray.is_err(), "{stray:?}");
}

#[tokio::test]
async fn a_card_is_answered_by_post_and_a_second_answer_is_already_settled() {
    let r = start().await;
    r.model.push(Reply::call(
        "shell",
        json!({"command": "touch web-made.txt"}),
    ));
    r.model.push(Reply::text("Made it."));
    let mut sse = r.events("cards").await;
    r.say("cards", "make a file").await;
    let frames = sse.until(|v| v["type"] == "card").await;
    let card = frames.last().unwrap().clone();
    assert_eq!(card["action"], "touch web-made.txt");
    assert_eq!(card["window_secs"], 180, "typed on the page: channel text");
    assert_eq!(
        card["answerers"]["kind"], "local",
        "the page is its owner's"
    );
    let id = card["request_id"].as_str().unwrap().to_string();
    let ok = r
        .post(&format!("/api/cards/{id}"), json!({"decision": "approve"}))
        .await;
    assert_eq!(ok.status(), 200);
    let frames = sse.until(is_turn_done).await;
    let done_row = of_type(&frames, "step")
        .into_iter()
        .find(|s| s["phase"] == "done")
        .unwrap()
        .clone();
    assert_eq!(done_row["outcome"], "ok");
    assert!(r.workspace().join("web-made.txt").exists());
    let again = r
        .post(&format!("/api/cards/{id}"), json!({"decision": "deny"}))
        .await;
    assert_eq!(again.status(), 409);
    let body: Value = again.json().await.unwrap();
    assert_eq!(body["error"], "already_settled");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("already settled"));
    let unknown = r
        .post("/api/cards/card-nope", json!({"decision": "approve"}))
        .await;
    assert_eq!(unknown.status(), 404);
    let bad = r
        .post(&format!("/api/cards/{id}"), json!({"decision": "maybe"}))
        .await;
    assert!(bad.status().is_client_error());
    assert!(bad.json::<Value>().await.unwrap()["message"].is_string());
    // The audit trail, as the page reads it: the decision and the run.
    let audit: Value = r
        .http
        .get(r.url("/api/audit?session=cards"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let approvers: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["approver"].as_str().unwrap())
        .collect();
    assert_eq!(approvers, ["executed", "user"], "newest first");
}

#[tokio::test]
async fn a_reloaded_page_gets_the_running_turn_then_the_cards_still_waiting() {
    let r = start().await;
    r.model
        .push(Reply::call("shell", json!({"command": "touch x"})));
    r.model.push(Reply::text("ok"));
    let mut first = r.events("reload").await;
    r.say("reload", "touch x").await;
    let card = first.until(|v| v["type"] == "card").await.pop().unwrap();
    let mut second = r.events("reload").await;
    // The running turn as it stands comes first (its start, the chip, its row), then
    // the card still waiting.
    let mut replay = Vec::new();
    for _ in 0..4 {
        replay.push(second.next_within().await.unwrap().json());
    }
    let types: Vec<&str> = replay.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["turn_started", "working", "step", "card"],
        "{replay:?}"
    );
    assert_eq!(replay[2]["action"], "$ touch x");
    assert_eq!(replay[3]["request_id"], card["request_id"]);
    let id = card["request_id"].as_str().unwrap();
    r.post(&format!("/api/cards/{id}"), json!({"decision": "deny"}))
        .await;
    second.until(is_turn_done).await;
}

#[tokio::test]
async fn grants_are_listed_and_revoked_as_json() {
    let r = start().await;
    r.engine
        .store()
        .add_grant("npm", GrantScope::Family, "web")
        .await
        .unwrap();
    let list: Value = r
        .http
        .get(r.url("/api/grants"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["pattern"], "npm");
    assert_eq!(list[0]["granted_by"], "web");
    let id = list[0]["id"].as_i64().unwrap();
    let del = r
        .http
        .delete(r.url(&format!("/api/grants/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 200);
    assert!(r.engine.grants().await.unwrap().is_empty());
    let again = r
        .http
        .delete(r.url(&format!("/api/grants/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
}

#[tokio::test]
async fn without_a_password_only_loopback_host_names_and_same_origin_posts_pass() {
    let r = start().await;
    let foreign = r
        .http
        .get(r.url("/api/status"))
        .header("host", "kotoba.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    assert!(foreign
        .text()
        .await
        .unwrap()
        .contains("KOTOBA_WEB_PASSWORD"));
    let local = r
        .http
        .get(r.url("/api/status"))
        .header("host", "localhost:8000")
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
    let csrf = r
        .http
        .post(r.url("/api/message"))
        .header("origin", "https://evil.example")
        .json(&json!({"session": "x", "text": "rm everything"}))
        .send()
        .await
        .unwrap();
    assert_eq!(csrf.status(), 403);
    // Another port of the same host is another site: a local dev server's page, or one
    // a browser was tricked into, is refused though the cookie would go along.
    let port: u16 = r.base.rsplit(':').next().unwrap().parse().unwrap();
    for origin in [
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        "http://127.0.0.1".to_string(),
        r.base.replace("http://", "https://"),
    ] {
        let cross_port = r
            .http
            .post(r.url("/api/message"))
            .header("origin", &origin)
            .json(&json!({"session": "x", "text": "rm everything"}))
            .send()
            .await
            .unwrap();
        assert_eq!(cross_port.status(), 403, "{origin}");
    }
    let form = r
        .http
        .post(r.url("/api/message"))
        .header("content-type", "text/plain")
        .body(r#"{"session":"x","text":"hi"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 415, "a body that is not JSON is refused");
    assert_eq!(r.model.request_count(), 0, "no turn ran");
}

#[tokio::test]
async fn with_a_password_the_page_and_api_need_it_and_the_login_sets_a_cookie() {
    let r = start_with(
        WebOptions {
            password: Some("hunter2".into()),
            ..options()
        },
        Vec::new(),
    )
    .await;
    let plain = reqwest::Client::new();
    let anon = plain.get(r.url("/api/status")).send().await.unwrap();
    assert_eq!(anon.status(), 401);
    let page = plain.get(r.url("/")).send().await.unwrap();
    assert!(
        page.text().await.unwrap().contains("name=\"password\""),
        "the login form"
    );
    let no_redirect = kotoba_testkit::web::plain();
    let wrong = no_redirect
        .post(r.url("/login"))
        .form(&[("password", "nope")])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let right = no_redirect
        .post(r.url("/login"))
        .form(&[("password", "hunter2")])
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), 303);
    let cookie = right.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap().to_string();
    let with_cookie = plain
        .get(r.url("/api/status"))
        .header("cookie", pair)
        .header("host", "kotoba.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status(), 200, "a password lifts the host rule");
    let bearer = plain
        .get(r.url("/api/grants"))
        .bearer_auth("hunter2")
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), 200);
    let health = r.http.get(r.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200, "health stays open");
}

#[tokio::test]
async fn serve_refuses_a_non_loopback_listener_without_a_password() {
    let r = start().await;
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let err = kotoba::surfaces::http::serve(
        r.engine.clone(),
        options(),
        listener,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("no password is set"), "{err}");
}

#[tokio::test]
async fn a_work_done_fires_one_hidden_announce_turn_per_run_id_however_many_pages_are_open() {
    let r = start().await;
    r.model.push(Reply::text("The backup finished fine."));
    let mut a = r.events("jobs").await;
    let mut b = r.events("jobs").await;
    let session = r.engine.session("web:jobs").await;
    for _ in 0..2 {
        session.emit(
            Some("0a1b2c3d"),
            Frame::WorkDone {
                ok: true,
                summary: "backup: 12 files copied".into(),
            },
        );
    }
    let frames = a.until(is_turn_done).await;
    assert_eq!(frames.last().unwrap()["text"], "The backup finished fine.");
    b.until(is_turn_done).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        r.model.request_count(),
        1,
        "one announce turn for one run_id"
    );
    let sent = r.model.requests()[0].to_string();
    assert!(sent.contains("__work_done__") && sent.contains("backup: 12 files copied"));
    let stored = r.engine.store().history("web:jobs", 10).await.unwrap();
    assert!(
        stored.iter().all(|m| !m.text.contains("__work_done__")),
        "the sentinel never reaches the transcript"
    );
    assert_eq!(stored.len(), 1, "only her announce is stored");
}

#[tokio::test]
async fn shutdown_ends_the_event_streams_and_the_server_returns() {
    let mut r: WebRig = start().await;
    let mut sse = r.events("bye").await;
    assert!(r.engine.session("web:bye").await.has_listener());
    r.shutdown.cancel();
    let rest = tokio::time::timeout(Duration::from_secs(5), sse.rest())
        .await
        .unwrap();
    assert!(rest.is_empty());
    let task = r.task.take().unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the server stops within 5 s")
        .unwrap()
        .unwrap();
    let _ = Arc::strong_count(&r.engine);
}

#[tokio::test]
async fn an_input_card_is_answered_with_typed_text_from_the_page_and_the_text_is_not_echoed() {
    use kotoba::engine::AskEnd;
    use kotoba::protocol::{Answerers, Card, CardKind, Risk};
    let r = start().await;
    let _page = r.events("ask").await;
    let session = r.engine.session("web:ask").await;
    let card = Card {
        request_id: "ask-1".into(),
        session: "web:ask".into(),
        kind: CardKind::Input,
        tool: "ask_secret".into(),
        action: "Enter the secret 'gh'".into(),
        why: String::new(),
        risk: Risk::Read,
        can_always: false,
        can_always_exact: false,
        family: None,
        no_always_reason: None,
        expires_at_ms: 0,
        window_secs: 300,
        answerers: Answerers::Local,
        secret: true,
        can_edit: false,
        danger: None,
    };
    let wait = r
        .engine
        .cards()
        .post(&session, card, Duration::from_secs(300))
        .await
        .unwrap();
    let resp = r
        .post(
            "/api/cards/ask-1",
            json!({"decision": "approve", "text": "ghp_TYPED"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let body = resp.text().await.unwrap();
    assert!(
        !body.contains("ghp_TYPED"),
        "the typed text is never echoed: {body}"
    );
    let (end, text) = wait.wait_reply().await;
    assert!(matches!(end, AskEnd::Decided { .. }));
    assert_eq!(text.as_deref(), Some("ghp_TYPED"));
}

#[tokio::test]
async fn a_shell_rows_action_line_on_the_page_is_the_command_clipped_at_200_characters() {
    let r = start().await;
    let long = format!("echo {}", "x".repeat(295));
    r.model.push(Reply::call("shell", json!({"command": long})));
    r.model.push(Reply::text("Printed it."));
    let mut sse = r.events("clip").await;
    r.say("clip", "print a long line").await;
    let frames = sse.until(is_turn_done).await;
    let rows = of_type(&frames, "step");
    let start = rows
        .iter()
        .find(|f| f["phase"] == "start")
        .expect("the row opened");
    let action = start["action"].as_str().unwrap();
    let cut: String = long.chars().take(200).collect();
    assert_eq!(
        action,
        format!("$ {cut} …"),
        "the command's first 200 characters, then ' …'"
    );
    let done = rows.iter().find(|f| f["phase"] == "done").unwrap();
    assert_eq!(
        done["action"], start["action"],
        "the closed row keeps the same line"
    );
    assert_eq!(done["outcome"], "ok", "echo is auto-safe and ran: {done}");
    let short = "echo hi";
    r.model
        .push(Reply::call("shell", json!({"command": short})));
    r.model.push(Reply::text("Said hi."));
    r.say("clip", "say hi").await;
    let frames = sse.until(is_turn_done).await;
    let start = of_type(&frames, "step")[0].clone();
    assert_eq!(
        start["action"], "$ echo hi",
        "a short command is shown whole"
    );
}

#[tokio::test]
async fn every_page_api_error_is_json_in_plain_words() {
    let r = start().await;
    let bad_id = r
        .http
        .delete(r.url("/api/grants/xyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad_id.status(), 400);
    let v: Value = bad_id.json().await.unwrap();
    assert_eq!(v["error"], "bad_request", "{v}");
    let message = v["message"].as_str().unwrap();
    assert!(
        message.contains("xyz") && !message.contains("i64"),
        "{message}"
    );
    let not_json = r
        .http
        .post(r.url("/api/message"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert!(not_json.status().is_client_error());
    let v: Value = not_json.json().await.unwrap();
    assert!(
        v["message"].as_str().unwrap().contains("not valid JSON"),
        "{v}"
    );
    let wrong_method = r.http.put(r.url("/api/status")).send().await.unwrap();
    assert_eq!(wrong_method.status(), 405);
    let v: Value = wrong_method.json().await.unwrap();
    assert_eq!(v["error"], "method_not_allowed", "{v}");
}

#[tokio::test]
async fn wrong_passwords_past_five_slow_the_next_login_and_bearer_down_even_with_the_right_one() {
    let r = start_with(
        WebOptions {
            password: Some("hunter2".into()),
            ..options()
        },
        Vec::new(),
    )
    .await;
    let client = kotoba_testkit::web::plain();
    let login = |password: &'static str| {
        client
            .post(r.url("/login"))
            .form(&[("password", password)])
            .send()
    };
    for _ in 0..5 {
        assert_eq!(login("nope").await.unwrap().status(), 401, "a free try");
    }
    // The fifth wrong one started a wait: even the right password waits it out.
    let slowed = login("hunter2").await.unwrap();
    assert_eq!(slowed.status(), 429);
    assert_eq!(slowed.headers()["retry-after"], "1");
    let page = slowed.text().await.unwrap();
    assert!(
        page.contains("Too many wrong passwords: try again in 1 seconds."),
        "{page}"
    );
    let api = r
        .http
        .get(r.url("/api/grants"))
        .bearer_auth("hunter2")
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), 429, "a bearer header is a login too");
    let body: Value = api.json().await.unwrap();
    assert_eq!(body["error"], "too_many_attempts");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        login("hunter2").await.unwrap().status(),
        303,
        "after the wait the right password logs in"
    );
    // Its success forgot the failures: a wrong bearer is a plain 401 again.
    let wrong = r
        .http
        .get(r.url("/api/grants"))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
}
