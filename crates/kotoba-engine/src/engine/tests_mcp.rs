//! MCP in the loop (engine.md §4): a configured server's tools are deferred until
//! activate_tools, the browser server is always active, MCP tools are work-only, a
//! call's row carries the server's text, a dead server is one sentence, and
//! mcp_install asks a card first. Real time: the fixture is a real child process.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::broadcast;

use super::testing::*;
use super::*;
use crate::llm::{Item, LlmError, ModelReply, ModelRequest};
use crate::mcp::tests::{fixture, fixture_settings};
use kotoba_core::protocol::*;

/// A rig whose registry has the three MCP tools over a manager reading `settings`.
fn mcp_rig(
    replies: Vec<Result<ModelReply, LlmError>>,
    settings: &str,
) -> (Rig, Arc<crate::mcp::McpManager>) {
    let base = rig_with(replies, vec![], &[], settings);
    let mut reg = base.engine.tools().clone();
    let manager = crate::mcp::McpManager::new(base.engine.config.clone());
    crate::mcp::register(&mut reg, manager.clone());
    let engine = Engine::new(
        base.engine.config.clone(),
        base.script.clone(),
        reg,
        Soul::shipped(),
        base.engine.store.clone(),
    );
    let rig = Rig {
        engine,
        script: base.script.clone(),
        _home: base._home,
    };
    (rig, manager)
}

fn job_script(r: &Rig, replies: Vec<Result<ModelReply, LlmError>>) {
    r.script.job_replies.lock().unwrap().extend(replies);
}

async fn until_work_done(rx: &mut broadcast::Receiver<Arc<Event>>) -> Vec<Frame> {
    let mut seen = Vec::new();
    loop {
        let ev = rx.recv().await.unwrap();
        seen.push(ev.frame.clone());
        if matches!(ev.frame, Frame::WorkDone { .. }) {
            return seen;
        }
    }
}

fn job_requests(r: &Rig) -> Vec<ModelRequest> {
    r.script
        .sent()
        .into_iter()
        .filter(|req| {
            matches!(req.items.first(), Some(Item::User { text }) if text.starts_with("Goal of this background job"))
        })
        .collect()
}

fn offered(req: &ModelRequest) -> Vec<String> {
    req.tools.iter().map(|t| t.name.clone()).collect()
}

fn results(req: &ModelRequest) -> Vec<String> {
    req.items
        .iter()
        .filter_map(|i| match i {
            Item::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

fn closed_row(frames: &[Frame], tool: &str) -> StepRow {
    steps(frames)
        .into_iter()
        .find(|r| r.tool == tool && r.phase == Phase::Done)
        .unwrap_or_else(|| panic!("no closed row for {tool}"))
}

#[tokio::test]
async fn a_configured_servers_tools_are_offered_only_after_activate_tools_and_return_its_text() {
    let (r, _mcp) = mcp_rig(vec![], &fixture_settings("demo"));
    job_script(
        &r,
        vec![
            call("demo__echo", json!({"text": "too soon"})),
            call("activate_tools", json!({"server": "demo"})),
            call("demo__echo", json!({"text": "hi"})),
            call("demo__fail", json!({})),
            Ok(say("done")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "say hi")
        .await
        .unwrap();
    let frames = until_work_done(&mut rx).await;
    let reqs = job_requests(&r);
    assert!(!offered(&reqs[0]).contains(&"demo__echo".to_string()));
    assert!(offered(&reqs[0]).contains(&"activate_tools".to_string()));
    assert!(
        results(&reqs[1])[0].contains("Call activate_tools with server 'demo' first"),
        "{:?}",
        results(&reqs[1])
    );
    assert!(!offered(&reqs[1]).contains(&"demo__echo".to_string()));
    assert!(offered(&reqs[2]).contains(&"demo__echo".to_string()));
    assert!(results(&reqs[3]).iter().any(|t| t == "echo: hi"));
    let row = closed_row(&frames, "demo__echo");
    assert_eq!(row.step_kind, StepKind::Mcp);
    assert_eq!(row.outcome, Some(Outcome::Ok));
    assert_eq!(row.result.as_deref(), Some("echo: hi"));
    let row = closed_row(&frames, "demo__fail");
    assert_eq!(row.outcome, Some(Outcome::Failed));
    assert!(frames.contains(&Frame::WorkDone {
        ok: true,
        summary: "The job 'say hi' finished. Its report: done".into()
    }));
}

#[tokio::test]
async fn the_browser_server_is_always_active_in_a_job_and_never_in_a_conversation() {
    let (r, _mcp) = mcp_rig(vec![Ok(say("hello"))], &fixture_settings("browser"));
    r.engine
        .run_turn(text_turn("hi"), crate::engine::TurnOptions::default())
        .await;
    job_script(&r, vec![Ok(say("looked"))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "look")
        .await
        .unwrap();
    until_work_done(&mut rx).await;
    let companion = &r.script.sent()[0];
    assert!(!offered(companion)
        .iter()
        .any(|n| n.starts_with("browser__")));
    assert!(!offered(companion).contains(&"activate_tools".to_string()));
    let job = &job_requests(&r)[0];
    assert!(
        offered(job).contains(&"browser__echo".to_string()),
        "{:?}",
        offered(job)
    );
}

#[tokio::test]
async fn an_mcp_tool_in_a_companion_turn_is_refused_as_work_only() {
    let (r, mcp) = mcp_rig(
        vec![
            calls(&[
                ("demo__echo", json!({"text": "x"})),
                ("activate_tools", json!({"server": "demo"})),
            ]),
            Ok(say("ok")),
            call("demo__echo", json!({"text": "y"})),
            Ok(say("ok")),
        ],
        &fixture_settings("demo"),
    );
    r.engine
        .run_turn(text_turn("echo x"), crate::engine::TurnOptions::default())
        .await;
    let fed = results(&r.script.sent()[1]);
    assert_eq!(
        fed,
        [
            work_only_sentence("demo__echo"),
            work_only_sentence("activate_tools")
        ]
    );
    // Connected now (by a job elsewhere): still work-only in a conversation.
    mcp.activate("elsewhere", "demo").await.unwrap();
    r.engine
        .run_turn(text_turn("echo y"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(
        results(&r.script.sent()[3]),
        [work_only_sentence("demo__echo")]
    );
}

#[tokio::test]
async fn a_dead_server_is_one_sentence_and_the_job_goes_on() {
    let (r, _mcp) = mcp_rig(
        vec![],
        "mcp_servers:\n  dead:\n    command: /nonexistent/mcp-server\n",
    );
    job_script(
        &r,
        vec![
            call("activate_tools", json!({"server": "dead"})),
            Ok(say("carried on without it")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "use dead",
        )
        .await
        .unwrap();
    let frames = until_work_done(&mut rx).await;
    let fed = results(&job_requests(&r)[1]);
    assert!(
        fed[0].starts_with("The MCP server 'dead' could not be connected"),
        "{fed:?}"
    );
    assert!(frames.contains(&Frame::WorkDone {
        ok: true,
        summary: "The job 'use dead' finished. Its report: carried on without it".into()
    }));
}

#[tokio::test]
async fn mcp_install_asks_a_card_showing_the_command_before_connecting() {
    let settings = format!(
        "mcp_catalogue:\n  - name: demo\n    description: echoes words\n    command: python3\n    args: ['{}', 'demo']\n",
        fixture()
    );
    let (r, mcp) = mcp_rig(vec![], &settings);
    job_script(
        &r,
        vec![
            call("mcp_install", json!({"name": "demo"})),
            call("activate_tools", json!({"server": "demo"})),
            call("demo__echo", json!({"text": "installed"})),
            Ok(say("done")),
        ],
    );
    let session = "terminal:s1";
    let mut rx = r.engine.session(session).await.subscribe();
    // As the terminal's start_work call would: the owner's turn starts it.
    r.engine
        .start_job(&super::testing::local_starter(session), "install demo")
        .await
        .unwrap();
    let card = loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            break c.clone();
        }
    };
    assert_eq!(card.tool, "mcp_install");
    assert_eq!(card.risk, Risk::Exec);
    assert_eq!(
        card.action,
        format!("mcp_install demo: python3 {} demo", fixture())
    );
    assert!(
        mcp.servers().is_empty() && mcp.tool("demo__echo").is_none(),
        "nothing connects before the person answers"
    );
    let me = Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    };
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &me,
        )
        .await
        .unwrap();
    let frames = until_work_done(&mut rx).await;
    assert_eq!(
        closed_row(&frames, "mcp_install").outcome,
        Some(Outcome::Ok)
    );
    assert_eq!(
        closed_row(&frames, "demo__echo").result.as_deref(),
        Some("echo: installed")
    );
}
