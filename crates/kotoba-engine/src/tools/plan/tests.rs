//! Tests of todo (task_list frames, no new plan on the announce turn) and open_link
//! (http/https only, a link card).

use super::*;
use crate::tools::shell::tests::ctx_in;
use crate::tools::test_support::record_frames;
use kotoba_core::protocol::Mode;

fn ctx(dir: &tempfile::TempDir, words: Option<&str>) -> ToolContext {
    let mut ctx = ctx_in(dir.path(), &dir.path().join("ws"));
    let turn = std::sync::Arc::make_mut(&mut ctx.turn);
    turn.user_request = words.map(str::to_string);
    // A context with no words of the person stands for the hidden announce turn.
    turn.announce = words.is_none();
    ctx
}

fn plan(items: &[(&str, &str)]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|(t, s)| json!({"text": t, "status": s}))
        .collect();
    json!({ "items": items })
}

#[tokio::test]
async fn todo_draws_the_plan_as_a_task_list_frame() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(&dir, Some("plan my trip"));
    let frames = record_frames(&mut ctx);
    let todo = Todo::new();
    let out = todo
        .run(
            plan(&[("book train", "done"), ("pack", "in_progress")]),
            &ctx,
        )
        .await;
    assert!(out.is_ok(), "{}", out.text);
    assert_eq!(out.text, "The plan is on their screen: 1 of 2 done.");
    assert_eq!(
        *frames.lock().unwrap(),
        [Frame::TaskList {
            items: vec![
                TaskItem {
                    text: "book train".into(),
                    status: TaskStatus::Done
                },
                TaskItem {
                    text: "pack".into(),
                    status: TaskStatus::InProgress
                }
            ]
        }]
    );
}

#[tokio::test]
async fn the_announce_turn_cannot_open_a_new_plan_but_may_finish_an_open_one() {
    let dir = tempfile::tempdir().unwrap();
    let todo = Todo::new();
    let mut announce = ctx(&dir, None);
    assert!(announce.is_announce_turn());
    let frames = record_frames(&mut announce);
    let out = todo.run(plan(&[("new idea", "pending")]), &announce).await;
    assert!(out.refusal().is_some(), "{}", out.text);
    assert!(out.text.contains("new plan is NOT opened"), "{}", out.text);
    assert!(frames.lock().unwrap().is_empty());

    let talk = ctx(&dir, Some("do the thing"));
    assert!(todo
        .run(plan(&[("step", "in_progress")]), &talk)
        .await
        .is_ok());
    let out = todo.run(plan(&[("step", "done")]), &announce).await;
    assert!(out.is_ok(), "{}", out.text);
    assert_eq!(frames.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_background_job_is_never_an_announce_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = ctx(&dir, None);
    let turn = std::sync::Arc::make_mut(&mut job.turn);
    turn.mode = Mode::Work;
    turn.run_id = Some("0a1b2c3d".into());
    assert!(!job.is_announce_turn());
    assert!(Todo::new()
        .run(plan(&[("a", "pending")]), &job)
        .await
        .is_ok());
}

#[tokio::test]
async fn todo_refuses_bad_items_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, Some("x"));
    let todo = Todo::new();
    let out = todo.run(plan(&[("a", "started")]), &ctx).await;
    assert!(out.refusal().is_some());
    assert!(out.text.contains("item 1 has status"), "{}", out.text);
    let out = todo.run(json!({"items": "a, b"}), &ctx).await;
    assert!(out.text.contains("must be a list"), "{}", out.text);
    let many: Vec<(&str, &str)> = vec![("a", "pending"); MAX_ITEMS + 1];
    let out = todo.run(plan(&many), &ctx).await;
    assert!(out.text.contains("above 20"), "{}", out.text);
}

#[tokio::test]
async fn open_link_shows_a_card_for_http_and_https_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(&dir, Some("show me"));
    let frames = record_frames(&mut ctx);
    let tool = OpenLink::new();
    let out = tool
        .run(
            json!({"url": "https://example.org/a?b=1", "title": "Docs"}),
            &ctx,
        )
        .await;
    assert!(out.is_ok(), "{}", out.text);
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "ftp://example.org/x",
        "not a url",
    ] {
        let out = tool.run(json!({ "url": bad }), &ctx).await;
        assert!(out.refusal().is_some(), "{bad}: {}", out.text);
    }
    let out = tool.run(json!({"url": "http://example.org"}), &ctx).await;
    assert!(out.is_ok());
    assert_eq!(
        *frames.lock().unwrap(),
        [
            Frame::LinkCard {
                url: "https://example.org/a?b=1".into(),
                title: "Docs".into()
            },
            Frame::LinkCard {
                url: "http://example.org/".into(),
                title: "example.org".into()
            }
        ]
    );
}
