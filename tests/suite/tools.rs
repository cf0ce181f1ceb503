//! Companion tools driven through real turns: session_search over past turns, a
//! reminder that survives a restart, and a tool's own frames on the session's bus.

use std::time::Duration;

use kotoba::app::App;
use kotoba::engine::WORK_DONE_SENTINEL;
use kotoba::protocol::{ArtifactChange, Frame, Register, TurnRequest};
use serde_json::{json, Value};

use kotoba_testkit::model_server::{Reply, ScriptedModel};

/// The text fed back for the last tool call of a request (Responses format).
fn last_output(body: &Value) -> String {
    body["input"]
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .rev()
                .find(|i| i["type"] == "function_call_output")
        })
        .and_then(|i| i["output"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn session_search_finds_a_phrase_said_three_turns_ago_and_never_a_hidden_turn() {
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let app = App::build(model.config_for(home.path(), "responses"))
        .await
        .unwrap();
    let engine = &app.engine;
    for (said, answer) in [
        ("my lighthouse is painted teal", "lovely"),
        ("what's for dinner", "soup"),
        ("tell me a joke", "a joke"),
    ] {
        model.push(Reply::text(answer));
        engine
            .run_turn(
                TurnRequest::text(kotoba::protocol::Origin::Owner, "s", "ann", said),
                kotoba::engine::TurnOptions::default(),
            )
            .await;
    }
    // A hidden announce turn, and a hidden line holding the very words searched for.
    model.push(Reply::text("the job is done"));
    let mut hidden = TurnRequest::text(
        kotoba::protocol::Origin::Owner,
        "s",
        "system",
        WORK_DONE_SENTINEL,
    );
    hidden.hidden = true;
    engine
        .run_turn(hidden, kotoba::engine::TurnOptions::default())
        .await;
    engine
        .store()
        .append_message("s", "user", "system", "__work_done__ lighthouse teal", true)
        .await
        .unwrap();
    // Another conversation saying the same words is not this one's past.
    model.push(Reply::text("ok"));
    engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "other",
                "bob",
                "my lighthouse is teal too",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;

    model.push(Reply::call(
        "session_search",
        json!({"query": "lighthouse teal"}),
    ));
    model.push(Reply::text("you said it was teal"));
    engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s",
                "ann",
                "what colour did I say my lighthouse was?",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let sent = model.requests();
    let fed = last_output(sent.last().unwrap());
    let lines: Vec<&str> = fed.lines().collect();
    assert_eq!(lines.len(), 1, "{fed}");
    assert!(
        lines[0].ends_with("ann: my lighthouse is painted teal"),
        "{fed}"
    );
    assert!(
        lines[0].starts_with('[') && lines[0].contains(" UTC] "),
        "{fed}"
    );
    assert!(
        !fed.contains("__work_done__") && !fed.contains("bob"),
        "{fed}"
    );

    model.push(Reply::call("session_search", json!({"query": "work_done"})));
    model.push(Reply::text("nothing"));
    engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s",
                "ann",
                "search for the job marker",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let fed = last_output(model.requests().last().unwrap());
    assert!(
        fed.starts_with("Nothing earlier in this conversation matches"),
        "{fed}"
    );
}

#[tokio::test]
async fn a_reminder_set_before_a_restart_fires_once_at_its_time_after_it() {
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    {
        let app = App::build(model.config_for(home.path(), "responses"))
            .await
            .unwrap();
        model.push(Reply::call(
            "cronjob",
            json!({"action": "create", "text": "stretch your legs", "in_minutes": 10}),
        ));
        model.push(Reply::text("I'll remind you."));
        let mut req = TurnRequest::text(
            kotoba::protocol::Origin::Owner,
            "discord:42",
            "ann",
            "remind me to stretch in 10 minutes",
        );
        req.register = Register::Voice;
        app.engine
            .run_turn(req, kotoba::engine::TurnOptions::default())
            .await;
        let fed = last_output(model.requests().last().unwrap());
        assert!(fed.contains("due in 10 min"), "{fed}");
    } // The process goes away.

    // From here on, time is tokio's paused clock.
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let app = App::build(model.config_for(home.path(), "responses"))
        .await
        .unwrap();
    let mut due = app.engine.reminders();
    let mut bus = app.engine.session("discord:42").await.subscribe();
    tokio::time::advance(Duration::from_secs(9 * 60)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(due.try_recv().is_err(), "fired early");
    let r = tokio::time::timeout(Duration::from_secs(3600), due.recv())
        .await
        .unwrap()
        .unwrap();
    let at = started.elapsed().as_secs();
    assert!((595..=600).contains(&at), "fired after {at} s");
    assert_eq!(r.session, "discord:42");
    assert_eq!(r.text, "stretch your legs");
    assert_eq!(r.register, Register::Voice);
    match &bus.try_recv().unwrap().frame {
        Frame::Reminder { id, text } => {
            assert_eq!((*id, text.as_str()), (r.id, "stretch your legs"))
        }
        other => panic!("expected a reminder frame, got {other:?}"),
    }
    let again = tokio::time::timeout(Duration::from_secs(30 * 24 * 3600), due.recv()).await;
    assert!(again.is_err(), "fired twice: {again:?}");
}

#[tokio::test]
async fn a_tools_own_frames_reach_the_sessions_bus_during_the_turn() {
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let app = App::build(model.config_for(home.path(), "responses"))
        .await
        .unwrap();
    let mut bus = app.engine.session("s").await.subscribe();
    model.push(Reply::call(
        "write_file",
        json!({"path": "poem.txt", "content": "roses"}),
    ));
    model.push(Reply::call(
        "todo",
        json!({"items": [{"text": "write poem", "status": "done"}]}),
    ));
    model.push(Reply::text("done"));
    app.engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s",
                "ann",
                "write me a poem file",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let mut frames = Vec::new();
    while let Ok(ev) = bus.try_recv() {
        frames.push(ev.frame.clone());
    }
    let artifact = Frame::Artifact {
        path: "poem.txt".into(),
        change: ArtifactChange::Created,
    };
    let a = frames
        .iter()
        .position(|f| *f == artifact)
        .expect("artifact frame");
    let t = frames
        .iter()
        .position(|f| matches!(f, Frame::TaskList { items } if items.len() == 1))
        .expect("task_list frame");
    let done = frames
        .iter()
        .position(|f| matches!(f, Frame::TurnDone { .. }))
        .unwrap();
    assert!(a < t && t < done);
}
