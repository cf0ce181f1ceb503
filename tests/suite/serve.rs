//! `kotoba serve` as a process: it starts with no model key and the page says what to
//! set; /health answers; SIGTERM stops it gracefully; a non-loopback address is refused
//! without a password and served with one.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(super) fn serve(home: &std::path::Path, addr: &str, extra: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kotoba"));
    cmd.arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home)
        .env("KOTOBA_WEB_ADDR", addr)
        .env("KOTOBA_WEB_TOKEN", crate::support::web::WEB_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

pub(super) async fn healthy(port: u16) -> Duration {
    let t = Instant::now();
    loop {
        if let Ok(r) = reqwest::get(format!("http://127.0.0.1:{port}/health")).await {
            if r.status() == 200 {
                return t.elapsed();
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "serve never answered /health"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What a `serve` that refuses to start said, once it has stopped by itself (within
/// 20 s) with a failure status.
pub(super) async fn refused(mut child: Child) -> String {
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the refused serve stops by itself")
        .unwrap();
    assert!(!status.success());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    err
}

pub(super) async fn stop(mut child: Child) -> String {
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("serve stops within 10 s of SIGTERM")
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    assert!(status.success(), "{status}: {err}");
    err
}

#[tokio::test]
async fn serve_starts_without_a_model_key_and_the_page_says_what_to_set() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &[]);
    healthy(port).await;
    let status: Value =
        crate::support::web::get_with_token(&format!("http://127.0.0.1:{port}/api/status"))
            .await
            .json()
            .await
            .unwrap();
    let missing = status["missing_setup"].as_str().unwrap();
    assert!(missing.contains("set OPENAI_API_KEY"), "{missing}");
    let page = crate::support::web::get_with_token(&format!("http://127.0.0.1:{port}/")).await;
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
