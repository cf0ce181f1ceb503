//! The page in a real headless Chromium (Debian's, driven by playwright-core from npm,
//! both installed by scripts/test): load it, send a message, see the streamed answer
//! and a step row, press Approve on a card, see the row close ok; a page that cannot
//! speak says she writes and sends the written register. Screenshots are saved
//! under target/browser/ for review. Without Chromium or playwright-core the test fails
//! in CI and skips loudly elsewhere.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::model_server::Reply;
use crate::support::web::start;

const CHROMIUM: &str = "/usr/bin/chromium";

fn node_modules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps/node/node_modules")
}

fn missing() -> Option<String> {
    if !std::path::Path::new(CHROMIUM).exists() {
        return Some(format!(
            "{CHROMIUM} is not installed (scripts/system-deps --test installs it)"
        ));
    }
    if !node_modules().join("playwright-core/package.json").exists() {
        return Some("playwright-core is not installed (scripts/test-deps installs it)".into());
    }
    let node = std::process::Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Some("node is not installed".into());
    }
    None
}

#[tokio::test]
async fn the_page_in_headless_chromium_streams_an_answer_and_approves_a_card() {
    if let Some(why) = missing() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the browser test cannot run in CI: {why}"
        );
        eprintln!("\n\n!!!!! SKIPPED the headless-Chromium page test: {why} !!!!!\n");
        return;
    }
    let r = start().await;
    r.model
        .push(Reply::text("Haha! Hi! I'm right here with you."));
    r.model.push(Reply::call(
        "shell",
        json!({"command": "touch browser-made.txt && echo made browser-made.txt"}),
    ));
    r.model.push(Reply::text("Done, the file is there."));
    r.model.push(Reply::call(
        "shell",
        json!({"command": "touch browser-denied.txt"}),
    ));
    r.model.push(Reply::text("Left it alone."));
    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    std::fs::create_dir_all(&shots).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser/page.cjs");
    let run = tokio::process::Command::new("node")
        .arg(&script)
        .env("KOTOBA_BASE", &r.base)
        .env("KOTOBA_NODE_MODULES", node_modules())
        .env("KOTOBA_SHOTS", &shots)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the browser run finishes within 2 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the browser run failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        seen["row_action"],
        "$ touch browser-made.txt && echo made browser-made.txt"
    );
    assert_eq!(
        seen["card_action"],
        "touch browser-made.txt && echo made browser-made.txt"
    );
    assert!(
        seen["countdown"]
            .as_str()
            .unwrap()
            .starts_with("expires in 1"),
        "{seen}"
    );
    assert_eq!(seen["row_status"], "ok");
    assert!(
        seen["settled"].as_str().unwrap().starts_with("Approved"),
        "{seen}"
    );
    assert_eq!(seen["buttons_disabled"], true);
    assert_eq!(seen["errors"], json!([]), "no script errors on the page");
    // The finished turn's face comes from what she wrote, by the one map: "Haha" is
    // happy; an answer with no cue after a tool's working faces is calm again.
    assert_eq!(seen["face_first"], "happy", "{seen}");
    assert_eq!(seen["face_last"], "calm", "{seen}");
    // The page cannot speak yet: it says she writes, and her typed turn is written
    // register, so her answers keep code, links and digits.
    assert_eq!(seen["text_only_locked"], true, "{seen}");
    assert!(
        seen["register_note"]
            .as_str()
            .is_some_and(|n| n.contains("does not speak yet")),
        "{seen}"
    );
    let first = r.model.requests().first().cloned().unwrap_or_default();
    assert!(
        first.to_string().contains("read as text in a chat"),
        "a typed page turn asks for the written register: {first}"
    );
    assert!(
        r.workspace().join("browser-made.txt").exists(),
        "the command really ran"
    );
    assert!(shots.join("page.png").exists());
    // The second card: an edit and the three time boxes are offered; denied with a
    // reason typed on the page, which she is told verbatim; nothing ran.
    assert_eq!(seen["offers_edit"], true, "{seen}");
    assert_eq!(
        seen["time_boxes"],
        json!(["for 1 hour", "for 8 hours", "until revoked"])
    );
    assert!(
        seen["denied"]
            .as_str()
            .is_some_and(|d| d.starts_with("Denied by the owner on the web page")),
        "{seen}"
    );
    let told = r.model.requests().last().cloned().unwrap_or_default();
    assert!(
        told.to_string().contains("not in this folder today"),
        "the typed reason reaches her: {told}"
    );
    assert!(!r.workspace().join("browser-denied.txt").exists());
}
