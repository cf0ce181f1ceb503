//! /v1 through the official `openai` Python client (installed from PyPI into
//! target/test-deps/venv by scripts/test-deps): a whole turn, a streamed turn, a
//! tool-call turn, a wrong key → AuthenticationError, the model list, a bad request.
//! Without the client it fails in CI and skips loudly elsewhere.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::web::{start, KEY};

fn python() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("KOTOBA_TEST_PYTHON").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps/venv/bin/python")),
    ];
    candidates.into_iter().flatten().find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import openai"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[tokio::test]
async fn the_official_openai_python_client_streams_and_non_streams_turns() {
    let Some(py) = python() else {
        let msg =
            "the openai Python client is not installed (run scripts/test-deps, or scripts/test)";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("\n\n!!!!! SKIPPED the openai-client test: {msg} !!!!!\n");
        return;
    };
    let r = start().await;
    r.model.push(Reply::text("Hello from Kotoba."));
    r.model
        .push(Reply::text("Streaming works fine today, doesn't it?"));
    r.model.push(Reply::call(
        "write_file",
        json!({"path": "note.txt", "content": "written through /v1"}),
    ));
    r.model.push(Reply::text("I wrote the note for you."));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/v1_client.py");
    let run = tokio::process::Command::new(&py)
        .arg(&script)
        .env("KOTOBA_V1_BASE", r.url("/v1"))
        .env("KOTOBA_V1_KEY", KEY)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the python client finishes within 2 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    eprintln!("openai client {}", seen["openai_version"]);

    assert_eq!(seen["plain"]["text"], "Hello from Kotoba.");
    assert_eq!(seen["plain"]["finish"], "stop");
    assert_eq!(seen["plain"]["object"], "chat.completion");

    assert_eq!(
        seen["stream"]["text"],
        "Streaming works fine today, doesn't it?"
    );
    assert_eq!(seen["stream"]["roles"], json!(["assistant"]));
    assert_eq!(seen["stream"]["finish"], "stop");
    assert!(
        seen["stream"]["content_chunks"].as_u64().unwrap() > 1,
        "streamed in pieces"
    );

    assert_eq!(seen["tool"]["text"], "I wrote the note for you.");
    assert_eq!(
        std::fs::read_to_string(r.workspace().join("note.txt")).unwrap(),
        "written through /v1"
    );

    assert_eq!(seen["wrong_key"]["error"], "AuthenticationError");
    assert_eq!(seen["wrong_key"]["status"], 401);
    assert_eq!(seen["models"], json!(["kotoba"]));
    assert_eq!(seen["bad_request"]["status"], 400);

    // Each named session got its own transcript.
    for s in ["web:py-plain", "web:py-stream", "web:py-tool"] {
        assert_eq!(
            r.engine.store().history(s, 10).await.unwrap().len(),
            2,
            "{s}"
        );
    }
    assert_eq!(r.model.remaining(), 0);
}
