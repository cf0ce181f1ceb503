//! A finished turn keeps its rows: every surface redraws it as it was — `/api/history`
//! gives its lines with its step rows between them (outcomes and whole outputs), and
//! `kotoba chat --session` resumed draws the rows between the lines. (The page after a
//! reload, in Chromium: tests/suite/browser.rs.)

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::cli::{kotoba, read_until, resumed};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::web::start;

/// Her next turn: two shell rows — one that works, one that fails — then her answer.
pub(super) fn two_checks(model: &ScriptedModel) {
    model.push(Reply::call(
        "shell",
        json!({"command": "echo first check ok"}),
    ));
    model.push(Reply::call(
        "shell",
        json!({"command": "ls no-such-folder"}),
    ));
    model.push(Reply::text("Both checks ran."));
}

#[tokio::test]
async fn api_history_gives_a_turns_rows_between_its_line_and_her_answer_with_outcomes_and_outputs()
{
    let r = start().await;
    two_checks(&r.model);
    let mut sse = r.events("hist").await;
    r.say("hist", "run the two checks").await;
    sse.until(|v| v["type"] == "turn_done").await;
    let history: Value = r.get_json("/api/history?session=hist").await;
    let entries = history.as_array().unwrap();
    let roles: Vec<&str> = entries
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "step", "step", "assistant"], "{history}");
    let (ok, failed) = (&entries[1]["step"], &entries[2]["step"]);
    assert_eq!(ok["action"], "$ echo first check ok", "{history}");
    assert_eq!(
        (&ok["phase"], &ok["outcome"]),
        (&json!("done"), &json!("ok"))
    );
    assert!(
        ok["full_output"]
            .as_str()
            .unwrap()
            .contains("first check ok"),
        "{history}"
    );
    assert_eq!(failed["outcome"], "failed", "{history}");
    assert!(
        failed["full_output"]
            .as_str()
            .unwrap()
            .contains("no-such-folder"),
        "{history}"
    );
    assert!(entries[1]["at_ms"].as_i64().unwrap() > 0);
    assert_eq!(entries[3]["text"], "Both checks ran.");
}

#[tokio::test]
async fn a_resumed_session_draws_its_turns_rows_between_the_lines_as_they_ended() {
    let server = ScriptedModel::start().await;
    server.push(Reply::call("shell", json!({"command": "echo kettle on"})));
    server.set_fallback(Reply::text("The kettle is on."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat", "--session", "kitchen"])
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "Kotoba is listening").await;
    stdin.write_all(b"put the kettle on\n").await.unwrap();
    read_until(&mut child, &mut seen, "The kettle is on.").await;
    stdin.write_all(b"/quit\n").await.unwrap();
    child.wait().await.unwrap();

    let (mut again, seen) = resumed(&server, home.path(), "kitchen").await;
    let at = |what: &str| {
        seen.find(what)
            .unwrap_or_else(|| panic!("no {what:?} in: {seen}"))
    };
    let (you, row, her) = (
        at("you: put the kettle on"),
        at("✓ $ echo kettle on"),
        at("Kotoba: The kettle is on."),
    );
    assert!(you < row && row < her, "{seen}");
    drop(again.stdin.take());
    again.wait().await.unwrap();
}
