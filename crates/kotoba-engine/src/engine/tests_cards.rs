//! Cards, windows and budgets: the approval window for channel × transport, the tool
//! budget for tool × channel × transport, and the four refusal endings.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use super::testing::*;
use super::transport::{approval_window, tool_budget};
use super::*;
use crate::tools::ToolSpec;
use kotoba_core::protocol::*;

#[test]
fn the_approval_window_follows_channel_and_transport() {
    let table = [
        (Channel::Text, None, 180),
        (Channel::Text, Some(false), 180),
        (Channel::Text, Some(true), 180),
        (Channel::Voice, Some(false), 60),
        (Channel::Voice, None, 25),
        (Channel::Voice, Some(true), 25),
    ];
    for (channel, el, secs) in table {
        assert_eq!(
            approval_window(channel, el),
            Duration::from_secs(secs),
            "{channel:?} {el:?}"
        );
    }
}

fn spec(name: &str, risk: Risk, timeout: Option<u64>, takes_timeout_arg: bool) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: String::new(),
        family: name.into(),
        risk,
        step_kind: StepKind::for_tool(name),
        timeout: timeout.map(Duration::from_secs),
        takes_timeout_arg,
        scope: crate::tools::Scope::Both,
        lines: Default::default(),
        parameters: json!({}),
        behaviour: Default::default(),
    }
}

#[test]
fn the_tool_budget_follows_tool_channel_and_transport() {
    let shell = spec("shell", Risk::Exec, None, true);
    let delegate = spec("delegate", Risk::Exec, Some(420), false);
    let read = spec("read_file", Risk::Read, None, false);
    let act = spec("discord_act", Risk::Network, Some(240), false);
    let t = |s: &ToolSpec, args: serde_json::Value, ch, el| tool_budget(s, &args, ch, el).as_secs();
    let table = [
        (
            &shell,
            json!({"timeout": 10}),
            Channel::Text,
            Some(false),
            10 + 180 + 5,
        ),
        (
            &shell,
            json!({"timeout": 10}),
            Channel::Voice,
            Some(false),
            10 + 60 + 5,
        ),
        (
            &shell,
            json!({"timeout": 10}),
            Channel::Voice,
            Some(true),
            10 + 25 + 5,
        ),
        (
            &shell,
            json!({"timeout": 10}),
            Channel::Voice,
            None,
            10 + 25 + 5,
        ),
        (&shell, json!({}), Channel::Text, Some(false), 60 + 180 + 5),
        (
            &shell,
            json!({"timeout": 600}),
            Channel::Text,
            Some(false),
            600,
        ),
        (
            &shell,
            json!({"timeout": "soon"}),
            Channel::Voice,
            Some(false),
            60 + 60 + 5,
        ),
        (&delegate, json!({}), Channel::Text, Some(false), 420),
        (&read, json!({}), Channel::Text, Some(false), 30),
        (&act, json!({}), Channel::Voice, Some(true), 240),
    ];
    for (s, args, ch, el, want) in table {
        assert_eq!(
            t(s, args.clone(), ch, el),
            want,
            "{} {args} {ch:?} {el:?}",
            s.name
        );
    }
    // An exec tool's budget always exceeds its card's window.
    let quick_exec = spec("execute_code", Risk::Exec, Some(5), false);
    for (ch, el) in [
        (Channel::Text, Some(false)),
        (Channel::Voice, Some(false)),
        (Channel::Voice, Some(true)),
        (Channel::Voice, None),
    ] {
        for s in [&shell, &quick_exec] {
            for args in [json!({"timeout": 1}), json!({"timeout": 599}), json!({})] {
                assert!(
                    tool_budget(s, &args, ch, el) > approval_window(ch, el),
                    "{} {ch:?} {el:?} {args}",
                    s.name
                );
            }
        }
    }
}

pub(crate) fn local_owner() -> Answerer {
    Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    }
}

/// Start a text turn in the terminal session on its own task.
fn spawn_terminal_turn(r: &Rig, text: &str) -> tokio::task::JoinHandle<TurnResult> {
    let engine = r.engine.clone();
    let req = TurnRequest::text(
        kotoba_core::protocol::Origin::Owner,
        "terminal:me",
        "me",
        text,
    );
    tokio::spawn(async move {
        engine
            .run_turn(req, crate::engine::TurnOptions::default())
            .await
    })
}

fn exec_rig(replies_after: &str) -> Rig {
    exec_rig_with("shell", replies_after)
}

fn exec_rig_with(tool: &str, replies_after: &str) -> Rig {
    rig(
        vec![
            call(tool, json!({"command": "rm -r build"})),
            Ok(say(replies_after)),
        ],
        vec![fake(tool, Risk::Exec)],
    )
}

async fn first_card(rx: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<Event>>) -> Card {
    loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            return (**c).clone();
        }
    }
}

/// A written turn from a Discord owner: its cards go to the configured owners.
fn discord_turn(text: &str) -> TurnRequest {
    let origin = kotoba_core::protocol::Origin::Discord {
        user: 111,
        owner: true,
    };
    TurnRequest::text(origin, "s1", "ann", text)
}

#[tokio::test(start_paused = true)]
async fn with_nobody_listening_an_exec_call_is_refused_as_unreachable() {
    let r = exec_rig("ok");
    r.engine
        .run_turn(text_turn("clean up"), crate::engine::TurnOptions::default())
        .await;
    let fed = r.script.sent()[1].items.clone();
    let result = fed.iter().rev().find_map(|i| match i {
        crate::llm::Item::ToolResult { output, .. } => Some(output.clone()),
        _ => None,
    });
    assert!(result.unwrap().contains("nobody could be asked"));
}

#[tokio::test(start_paused = true)]
async fn an_approved_card_runs_the_action_and_the_row_closes_ok() {
    let tool = fake("shell", Risk::Exec);
    let runs = tool.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "rm -r build"})),
            Ok(say("done")),
        ],
        vec![tool],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_terminal_turn(&r, "clean up");
    let card = first_card(&mut rx).await;
    assert_eq!(card.action, "rm -r build");
    assert_eq!(card.window_secs, 180);
    let me = local_owner();
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &me,
        )
        .await
        .unwrap();
    turn.await.unwrap();
    let frames: Vec<Frame> = drain(&mut rx);
    let done = steps(&frames).pop().unwrap();
    assert_eq!(done.outcome, Some(Outcome::Ok));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the approved action ran once"
    );
    assert!(frames.iter().any(|f| matches!(
        f,
        Frame::CardSettled {
            settlement: CardSettlement::Decided {
                decision: Decision::Approve,
                ..
            },
            ..
        }
    )));
    assert_eq!(
        r.engine
            .answer(
                &card.request_id,
                kotoba_core::protocol::CardAnswer::of(Decision::Deny),
                &me
            )
            .await,
        Err(AnswerError::AlreadySettled),
        "a settled card changes nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_denied_card_is_refused_as_declined_and_nothing_runs() {
    let tool = fake("shell", Risk::Exec);
    let runs = tool.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "make"})),
            Ok(say("held off")),
        ],
        vec![tool],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_terminal_turn(&r, "build");
    let card = first_card(&mut rx).await;
    let me = local_owner();
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Deny),
            &me,
        )
        .await
        .unwrap();
    turn.await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let done = steps(&drain(&mut rx)).pop().unwrap();
    assert_eq!(
        (done.outcome, done.ending),
        (Some(Outcome::Refused), Some(Ending::Declined))
    );
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_card_expires_after_its_window_and_is_never_recorded_as_a_decision() {
    for (req, secs) in [
        (
            TurnRequest::text(kotoba_core::protocol::Origin::Owner, "s1", "ann", "x"),
            180u64,
        ),
        (voice_turn("x"), 60),
        (
            TurnRequest {
                el_call_bound: None,
                ..voice_turn("x")
            },
            25,
        ),
    ] {
        let r = exec_rig("it expired");
        expires_after(&r, req, secs).await;
    }
    // A marked turn blocks in place for a tool that does not defer.
    let r = exec_rig_with("mcp_install", "it expired");
    let marked = TurnRequest {
        el_call_bound: Some(true),
        ..voice_turn("x")
    };
    expires_after(&r, marked, 25).await;
}

async fn expires_after(r: &Rig, req: TurnRequest, secs: u64) {
    {
        let mut rx = r.engine.session("s1").await.subscribe();
        let t0 = tokio::time::Instant::now();
        r.engine
            .run_turn(req, crate::engine::TurnOptions::default())
            .await;
        assert_eq!(t0.elapsed().as_secs(), secs);
        let frames = drain(&mut rx);
        let done = steps(&frames).pop().unwrap();
        assert_eq!(
            (done.outcome, done.ending),
            (Some(Outcome::Refused), Some(Ending::Unanswered))
        );
        assert!(frames.iter().any(|f| matches!(
            f,
            Frame::CardSettled {
                settlement: CardSettlement::Expired,
                ..
            }
        )));
        assert!(!frames.iter().any(|f| matches!(
            f,
            Frame::CardSettled {
                settlement: CardSettlement::Decided { .. },
                ..
            }
        )));
    }
}

#[tokio::test(start_paused = true)]
async fn someone_who_is_not_an_owner_cannot_answer_a_host_card() {
    let r = rig_with(
        vec![call("shell", json!({"command": "make"})), Ok(say("ok"))],
        vec![fake("shell", Risk::Exec)],
        &[],
        "owners: ['111']\n",
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(discord_turn("list"), crate::engine::TurnOptions::default())
            .await
    });
    let card = first_card(&mut rx).await;
    let stranger = Answerer {
        id: "222".into(),
        name: "eve".into(),
        local: false,
        via: "test".into(),
        holds: Vec::new(),
    };
    assert_eq!(
        r.engine
            .answer(
                &card.request_id,
                kotoba_core::protocol::CardAnswer::of(Decision::Approve),
                &stranger
            )
            .await,
        Err(AnswerError::NotYours)
    );
    let owner = Answerer {
        id: "111".into(),
        name: "ann".into(),
        local: false,
        via: "test".into(),
        holds: Vec::new(),
    };
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &owner,
        )
        .await
        .unwrap();
    turn.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_cut_turn_dismisses_its_open_card() {
    let r = exec_rig("never");
    let mut rx = r.engine.session("s1").await.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(text_turn("x"), crate::engine::TurnOptions::default())
            .await
    });
    let card = first_card(&mut rx).await;
    turn.abort();
    let _ = turn.await;
    let frames = drain(&mut rx);
    assert!(frames.contains(&Frame::CardSettled {
        request_id: card.request_id.clone(),
        settlement: CardSettlement::Dismissed
    }));
    let done = steps(&frames).pop().unwrap();
    assert_eq!(done.outcome, Some(Outcome::Interrupted));
}

#[tokio::test(start_paused = true)]
async fn a_card_dismissed_by_barge_in_or_by_a_newer_request_is_one_dismissed_audit_row() {
    let r = rig(
        vec![
            call("shell", json!({"command": "rm -r build"})),
            call("shell", json!({"command": "rm -r dist"})),
            Ok(say("fine, something else")),
        ],
        vec![fake("shell", Risk::Exec)],
    );
    let approvers = async |r: &Rig| -> Vec<(String, String, bool)> {
        let mut rows = r.engine.audit_trail(Some("s1"), 10).await.unwrap();
        rows.reverse();
        rows.into_iter()
            .map(|a| (a.action, a.approver, a.approved))
            .collect()
    };
    let session = r.engine.session("s1").await;
    let mut rx = session.subscribe();
    // Barge-in: the person speaks over the card and the running turn is cut.
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(text_turn("clean"), crate::engine::TurnOptions::default())
            .await
    });
    first_card(&mut rx).await;
    session.cancel_running();
    assert_eq!(turn.await.unwrap().status, TurnStatus::Interrupted);
    assert_eq!(
        approvers(&r).await,
        [("rm -r build".to_string(), "dismissed".to_string(), false)]
    );
    // A newer request replaces the turn whose card is up.
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                text_turn("clean dist"),
                crate::engine::TurnOptions::default(),
            )
            .await
    });
    first_card(&mut rx).await;
    let newer = TurnRequest {
        replace_running: true,
        ..text_turn("never mind")
    };
    r.engine
        .run_turn(newer, crate::engine::TurnOptions::default())
        .await;
    assert_eq!(turn.await.unwrap().status, TurnStatus::Interrupted);
    assert_eq!(
        approvers(&r).await[1..],
        [("rm -r dist".to_string(), "dismissed".to_string(), false)],
        "one decision row each, nothing filed as run"
    );
}

#[tokio::test(start_paused = true)]
async fn heartbeats_are_postponed_while_the_approval_card_is_open() {
    let slow = fake("shell", Risk::Exec).delay(Duration::from_secs(10));
    let r = rig(
        vec![call("shell", json!({"command": "make"})), Ok(say("ok"))],
        vec![slow],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let engine = r.engine.clone();
    let t0 = tokio::time::Instant::now();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                TurnRequest {
                    register: Register::Voice,
                    ..TurnRequest::text(
                        kotoba_core::protocol::Origin::Owner,
                        "terminal:me",
                        "me",
                        "build",
                    )
                },
                crate::engine::TurnOptions::default(),
            )
            .await
    });
    let card = first_card(&mut rx).await;
    tokio::time::sleep(Duration::from_secs(40)).await;
    let me = local_owner();
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &me,
        )
        .await
        .unwrap();
    let mut beats = Vec::new();
    while let Ok(ev) = rx.recv().await {
        match &ev.frame {
            Frame::Say {
                kind: SayKind::Heartbeat,
                ..
            } => beats.push(t0.elapsed().as_secs()),
            Frame::TurnDone { .. } => break,
            _ => {}
        }
    }
    turn.await.unwrap();
    assert_eq!(beats.len(), 1, "{beats:?}");
    assert!(beats[0] >= 48, "no beat while the card was up: {beats:?}");
}

#[tokio::test(start_paused = true)]
async fn a_card_still_waiting_at_a_crash_is_expired_by_the_restart_and_its_turn_is_cut() {
    let r = exec_rig("never");
    let mut rx = r.engine.session("s1").await.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(text_turn("clean up"), crate::engine::TurnOptions::default())
            .await
    });
    let card = first_card(&mut rx).await;
    // Her line is already stored while the card waits (durable before it acts).
    let h = r.engine.store.history("s1", 10).await.unwrap();
    assert_eq!(
        h.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["clean up"]
    );
    // What the next start-up does when this Kotoba is dead (the store is still open).
    let got = r.engine.store.recover(|_| false).await.unwrap();
    assert_eq!((got.turns.len(), got.cards, got.runs), (1, 1, 0), "{got:?}");
    let rows = r.engine.store.audit_rows(Some("s1"), 10).await.unwrap();
    let expired = rows.iter().find(|r| r.action == card.action).unwrap();
    assert_eq!(
        (expired.approver.as_str(), expired.approved),
        ("expired", false)
    );
    assert!(expired.detail.contains("restart"), "{expired:?}");
    let h = r.engine.store.history("s1", 10).await.unwrap();
    assert!(h.last().unwrap().text.contains("cut by a restart"), "{h:?}");
    turn.abort();
    let _ = turn.await;
}

#[tokio::test(start_paused = true)]
async fn an_answered_card_and_a_finished_turn_leave_nothing_for_a_restart_to_close() {
    let r = rig(
        vec![
            call("shell", json!({"command": "rm -r build"})),
            Ok(say("done")),
        ],
        vec![fake("shell", Risk::Exec)],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_terminal_turn(&r, "clean up");
    let card = first_card(&mut rx).await;
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &local_owner(),
        )
        .await
        .unwrap();
    turn.await.unwrap();
    assert!(r.engine.store.recover(|_| false).await.unwrap().is_empty());
    let rows = r.engine.store.audit_rows(None, 10).await.unwrap();
    assert_eq!(
        rows.iter().map(|r| r.approver.as_str()).collect::<Vec<_>>(),
        ["executed", "user"],
        "one decision row and one completed executed row"
    );
    assert!(
        rows[0].detail.starts_with("exit") || rows[0].detail.is_empty(),
        "{rows:?}"
    );
}
