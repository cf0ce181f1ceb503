//! A finished turn keeps its rows (docs/engine.md, "Rows"): each row is kept beside the
//! turn's lines as it was drawn — closed, cut, or deferred and completed later — so a
//! surface redraws the turn from the store; a job's rows are its panel's, not kept.

use std::time::Duration;

use serde_json::json;

use super::testing::*;
use super::tests_gate::{el_turn, press, until_work_done};
use super::*;
use crate::tools::ToolOutput;
use kotoba_core::protocol::*;
use kotoba_store::Shown;

/// What the store redraws of `session`: "line: …" and "row: action outcome output".
async fn shown(r: &Rig, session: &str) -> Vec<String> {
    r.engine
        .store()
        .shown(session, 50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| match e {
            Shown::Line(m) => format!("{}: {}", m.role, m.text),
            Shown::Step { row, .. } => format!(
                "row: {} {:?} {}",
                row.action,
                row.outcome.unwrap(),
                row.full_output.unwrap_or_default()
            ),
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_turns_rows_are_kept_between_its_line_and_her_answer_with_outcomes_and_outputs() {
    let ok = fake("write_file", Risk::Write).output(ToolOutput::exited(0, "wrote notes.md"));
    let failing = fake("shell", Risk::Exec).output(ToolOutput::exited(2, "make: *** no rule"));
    let r = rig(
        vec![
            call("write_file", json!({"path": "notes.md"})),
            call("shell", json!({"command": "ls"})),
            Ok(say("One of two worked.")),
        ],
        vec![ok, failing],
    );
    r.engine
        .run_turn(text_turn("write and build"), TurnOptions::default())
        .await;
    let kept = shown(&r, "s1").await;
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert_eq!(kept[0], "user: write and build");
    assert!(
        kept[1].starts_with("row: ") && kept[1].contains("Ok wrote notes.md"),
        "{kept:?}"
    );
    assert!(
        kept[2].starts_with("row: ") && kept[2].contains("Failed make: *** no rule"),
        "{kept:?}"
    );
    assert_eq!(kept[3], "assistant: One of two worked.");
}

#[tokio::test(start_paused = true)]
async fn a_cut_turns_open_row_is_kept_as_interrupted() {
    let slow = fake("write_file", Risk::Write).delay(Duration::from_secs(20));
    let r = rig(
        vec![call("write_file", json!({})), Ok(say("never"))],
        vec![slow],
    );
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(text_turn("go"), TurnOptions::default())
            .await
    });
    tokio::time::sleep(Duration::from_secs(5)).await;
    turn.abort();
    let _ = turn.await;
    // Kept by a task of its own (the turn's future was dropped).
    let mut kept = Vec::new();
    for _ in 0..100 {
        kept = shown(&r, "s1").await;
        if kept.iter().any(|k| k.starts_with("row: ")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        kept.iter()
            .any(|k| k.starts_with("row: ") && k.contains("Interrupted")),
        "{kept:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deferred_rows_kept_copy_is_completed_in_place_once_its_card_is_answered() {
    let shell = fake("shell", Risk::Exec).output(ToolOutput::exited(0, "built in 3 s"));
    let r = rig(
        vec![
            call("shell", json!({"command": "make build"})),
            Ok(say("never asked")),
        ],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(el_turn("build it"), TurnOptions::default())
        .await;
    let kept = shown(&r, "terminal:me").await;
    assert!(
        kept.iter()
            .any(|k| k.starts_with("row: ") && k.contains("make build Pending")),
        "{kept:?}"
    );
    let card = drain(&mut rx)
        .into_iter()
        .find_map(|f| match f {
            Frame::Card(c) => Some(c),
            _ => None,
        })
        .unwrap();
    press(&r, &card, Decision::Approve).await;
    let (_, _, ok, summary) = until_work_done(&mut rx).await;
    assert!(ok, "{summary}");
    let kept = shown(&r, "terminal:me").await;
    let rows: Vec<&String> = kept.iter().filter(|k| k.starts_with("row: ")).collect();
    assert_eq!(rows.len(), 1, "the same row, completed: {kept:?}");
    assert!(
        rows[0].contains("Ok built in 3 s"),
        "completed in place: {kept:?}"
    );
}
