//! `kotoba serve` as a process: it starts with no model key and the page says what to
//! set; /health answers; SIGTERM stops it gracefully; a non-loopback address is refused
//! without a password and served with one.

use serde_json::Value;

use kotoba_testkit::process::{free_port, healthy, refused, serve, stop};

#[tokio::test]
async fn serve_starts_without_a_model_key_and_the_page_says_what_to_set() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &[]);
    healthy(port).await;
    let status: Value =
        kotoba_testkit::web::get_with_token(&format!("http://127.0.0.1:{port}/api/status"))
            .await
            .json()
            .await
            .unwrap();
    let missing = status["missing_setup"].as_str().unwrap();
    assert!(missing.contains("set OPENAI_API_KEY"), "{missing}");
    let page = kotoba_testkit::web::get_with_token(&format!("http://127.0.0.1:{port}/")).await;
    assert_eq!(page.status(), 200);
    let log = stop(child).await;
    assert!(log.contains("No model key is configured"), "{log}");
    assert!(
        log.contains(&format!("web page on http://127.0.0.1:{port}/")),
        "{log}"
    );
}

#[tokio::test]
async fn a_busy_port_is_refused_naming_kotoba_web_addr() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let home = tempfile::tempdir().unwrap();
    let err = refused(serve(home.path(), &format!("127.0.0.1:{port}"), &[])).await;
    assert!(
        err.contains("KOTOBA_WEB_ADDR") && err.contains("another program"),
        "{err}"
    );
    drop(taken);
}

#[tokio::test]
async fn a_non_loopback_address_needs_a_password() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let err = refused(serve(home.path(), &format!("0.0.0.0:{port}"), &[])).await;
    assert!(err.contains("KOTOBA_WEB_PASSWORD"), "{err}");

    let port = free_port();
    let child = serve(
        home.path(),
        &format!("0.0.0.0:{port}"),
        &[("KOTOBA_WEB_PASSWORD", "correct horse")],
    );
    healthy(port).await;
    let anon = reqwest::get(format!("http://127.0.0.1:{port}/api/status"))
        .await
        .unwrap();
    assert_eq!(anon.status(), 401);
    stop(child).await;
}

#[tokio::test]
async fn a_web_password_that_is_not_text_locks_the_page_and_is_never_repeated() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        "web_password: [hunter2, swordfish]\n",
    )
    .unwrap();
    let port = free_port();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &[]);
    healthy(port).await;
    let anon = reqwest::get(format!("http://127.0.0.1:{port}/api/status"))
        .await
        .unwrap();
    assert_eq!(anon.status(), 401, "locked, not left open");
    let client = reqwest::Client::new();
    for guess in ["hunter2", "swordfish", "[hunter2, swordfish]", ""] {
        let login = client
            .post(format!("http://127.0.0.1:{port}/login"))
            .form(&[("password", guess)])
            .send()
            .await
            .unwrap();
        assert!(
            !login.headers().contains_key("set-cookie"),
            "no password opens a locked page: {guess:?}"
        );
    }
    let log = stop(child).await;
    assert!(log.contains("web_password"), "the key is named: {log}");
    assert!(
        !log.contains("hunter2") && !log.contains("swordfish"),
        "the bad value is never repeated: {log}"
    );
}

#[tokio::test]
async fn logs_are_plain_text_off_a_terminal_and_one_json_object_a_line_when_asked() {
    for json in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let port = free_port();
        let format: &[(&str, &str)] = if json {
            &[("KOTOBA_LOG_FORMAT", "json")]
        } else {
            &[]
        };
        let child = serve(home.path(), &format!("127.0.0.1:{port}"), format);
        healthy(port).await;
        let err = stop(child).await;
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!lines.is_empty());
        assert!(
            !err.contains('\u{1b}'),
            "no colour codes off a terminal: {err:?}"
        );
        for line in lines {
            let parsed = serde_json::from_str::<serde_json::Value>(line);
            assert_eq!(parsed.is_ok(), json, "{line}");
        }
    }
}
