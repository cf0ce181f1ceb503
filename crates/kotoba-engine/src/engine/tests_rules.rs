//! Rules that were built but pinned by no test (issue 12): a job born in a /v1 turn asks
//! inline, an unknown tool name is a failure, the allowlist route and `force_ask`, and
//! the `cancel_work` tool itself, and a carded tool asking past the allowlist (engine.md
//! §2, §4, §5; gate.md).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast;

use super::testing::*;
use super::tests_work::{frames_until, is_work_done, job_script, with_start_work};
use super::*;
use kotoba_core::protocol::*;
use kotoba_store::GrantScope;

const ME: &str = "terminal:me";

fn me() -> Answerer {
    Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    }
}

async fn audit_approvers(r: &Rig) -> Vec<String> {
    let mut rows = r.engine.audit_trail(Some(ME), 100).await.unwrap();
    rows.reverse();
    rows.into_iter().map(|a| a.approver).collect()
}

/// A terminal turn in which the model calls shell with `command`: whether a card asked
/// (it is denied at once), and how the turn ended.
async fn asks(r: &Rig, rx: &mut broadcast::Receiver<Arc<Event>>, command: &str) -> bool {
    r.script
        .replies
        .lock()
        .unwrap()
        .extend([call("shell", json!({"command": command})), Ok(say("done"))]);
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                TurnRequest::text(
                    kotoba_core::protocol::Origin::Owner,
                    ME,
                    "me",
                    "please do it",
                ),
                crate::engine::TurnOptions::default(),
            )
            .await
    });
    let mut asked = false;
    loop {
        let ev = rx.recv().await.unwrap();
        match &ev.frame {
            Frame::Card(card) => {
                asked = true;
                r.engine
                    .answer(
                        &card.request_id,
                        kotoba_core::protocol::CardAnswer::of(Decision::Deny),
                        &me(),
                    )
                    .await
                    .unwrap();
            }
            Frame::TurnDone { .. } => break,
            _ => {}
        }
    }
    turn.await.unwrap();
    asked
}

#[tokio::test(start_paused = true)]
async fn the_allowlist_runs_its_exact_line_without_a_card_but_never_a_dangerous_one() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig_with(
        vec![],
        vec![shell],
        &[],
        "allowlist: [make deploy, rm -rf build]\n",
    );
    let mut rx = r.engine.session(ME).await.subscribe();
    assert!(
        !asks(&r, &mut rx, "make deploy").await,
        "allowlisted: no card"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(audit_approvers(&r).await, ["allowlist", "executed"]);
    assert!(
        asks(&r, &mut rx, "make deploy --force").await,
        "only the exact line is allowlisted"
    );
    assert!(
        asks(&r, &mut rx, "rm -rf build").await,
        "a dangerous line never takes the allowlist"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the denied ones never ran");
}

#[tokio::test(start_paused = true)]
async fn force_ask_closes_the_allowlist_the_saved_grants_and_auto_safe() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig_with(
        vec![],
        vec![shell],
        &[],
        "allowlist: [make deploy]\nforce_ask: true\n",
    );
    r.engine
        .store
        .add_grant("npm", GrantScope::Family, "me")
        .await
        .unwrap();
    let mut rx = r.engine.session(ME).await.subscribe();
    for command in ["make deploy", "npm install left-pad", "ls"] {
        assert!(
            asks(&r, &mut rx, command).await,
            "{command}: force_ask asks"
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(audit_approvers(&r).await, ["user", "user", "user"]);
}

#[tokio::test(start_paused = true)]
async fn an_unknown_tool_name_counts_as_a_failure() {
    let r = rig_with(
        vec![
            call("nosuch", json!({})),
            call("nosuch_either", json!({})),
            Ok(say("I could not do that.")),
        ],
        vec![fake("compile", Risk::Write)],
        &[("KOTOBA_FAIL_LIMIT", "2")],
        "",
    );
    let res = r
        .engine
        .run_turn(text_turn("do it"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(res.text, "I could not do that.");
    let sent = r.script.sent();
    assert!(
        !sent[1].tools.is_empty(),
        "one failure: tools still offered"
    );
    assert!(
        sent[2].tools.is_empty(),
        "two unknown names spent the failure limit: the next request offers no tools"
    );
}

#[tokio::test(start_paused = true)]
async fn a_job_born_in_a_v1_turn_asks_inline_and_never_defers() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = with_start_work(rig(
        vec![
            call("start_work", json!({"goal": "build it"})),
            Ok(say("Started.")),
        ],
        vec![shell],
    ));
    job_script(
        &r,
        vec![
            call("shell", json!({"command": "make build"})),
            Ok(say("Built.")),
        ],
    );
    let mut rx = r.engine.session(ME).await.subscribe();
    let v1_turn = TurnRequest {
        register: Register::Voice,
        channel: Channel::Voice,
        el_call_bound: Some(true),
        ..TurnRequest::text(
            kotoba_core::protocol::Origin::Owner,
            ME,
            "me",
            "build it in the background",
        )
    };
    let res = r
        .engine
        .run_turn(v1_turn, crate::engine::TurnOptions::default())
        .await;
    assert_eq!(res.text, "Started.");
    let card = loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            break c.clone();
        }
    };
    assert_eq!(
        card.window_secs, 180,
        "the job asks inline on a text-channel window, not a deferred one"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        r.engine.jobs.info(ME).is_some(),
        "the job blocks on its card"
    );
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &me(),
        )
        .await
        .unwrap();
    let events = frames_until(&mut rx, is_work_done).await;
    let rows: Vec<StepRow> = events
        .iter()
        .filter_map(|e| match &e.frame {
            Frame::Step(s) if s.phase == Phase::Done => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].outcome, Some(Outcome::Ok), "never pending");
    assert!(
        matches!(&events.last().unwrap().frame, Frame::WorkDone { ok: true, summary } if summary.contains("Built."))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let shell_rows: Vec<String> = r
        .engine
        .audit_trail(Some(ME), 100)
        .await
        .unwrap()
        .into_iter()
        .rev()
        .filter(|a| a.tool == "shell")
        .map(|a| a.approver)
        .collect();
    assert_eq!(
        shell_rows,
        ["user", "executed"],
        "asked and answered inline"
    );
}

#[tokio::test(start_paused = true)]
async fn the_cancel_work_tool_stops_the_job_and_says_so_and_with_nothing_running_stops_nothing() {
    let base = with_start_work(rig(
        vec![
            call("start_work", json!({"goal": "compile"})),
            Ok(say("Started.")),
            call("cancel_work", json!({})),
            Ok(say("Stopped it.")),
            call("cancel_work", json!({})),
            Ok(say("Nothing was running.")),
        ],
        vec![fake("compile", Risk::Write).delay(Duration::from_secs(600))],
    ));
    let mut reg = base.engine.tools().clone();
    reg.register(Arc::new(crate::tools::work::CancelWork::default()));
    let r = Rig {
        engine: Engine::new(
            base.engine.config.clone(),
            base.script.clone(),
            reg,
            crate::soul::Soul::shipped(),
            base.engine.store.clone(),
        ),
        script: base.script.clone(),
        _home: base._home,
    };
    job_script(&r, vec![call("compile", json!({})), Ok(say("never"))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(
            text_turn("compile in the background"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(r.engine.jobs.info("s1").is_some());
    let res = r
        .engine
        .run_turn(
            text_turn("stop that"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(res.text, "Stopped it.");
    let fed = last_tool_result(&r);
    assert!(fed.starts_with("Stopped the job 'compile' after"), "{fed}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(r.engine.jobs.info("s1").is_none(), "the job is gone");
    assert!(
        !drain(&mut rx)
            .iter()
            .any(|f| matches!(f, Frame::WorkDone { .. })),
        "a requested stop announces nothing"
    );
    r.engine
        .run_turn(
            text_turn("stop again"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    let fed = last_tool_result(&r);
    assert!(fed.contains("nothing was stopped"), "{fed}");
}

/// The newest tool result the model was fed in a conversation turn.
fn last_tool_result(r: &Rig) -> String {
    r.script
        .sent()
        .iter()
        .rev()
        .flat_map(|q| q.items.iter().rev())
        .find_map(|i| match i {
            crate::llm::Item::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_carded_tool_always_asks_even_when_its_line_is_allowlisted() {
    let mut place = fake("change_place", Risk::Write);
    place.spec.behaviour.gating = crate::tools::Gating::Card;
    place.spec.behaviour.may_always = false;
    let runs = place.runs.clone();
    let r = rig_with(vec![], vec![place], &[], "allowlist: [change_place]\n");
    let mut rx = r.engine.session(ME).await.subscribe();
    r.script
        .replies
        .lock()
        .unwrap()
        .extend([call("change_place", json!({})), Ok(say("done"))]);
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                TurnRequest::text(kotoba_core::protocol::Origin::Owner, ME, "me", "change it"),
                crate::engine::TurnOptions::default(),
            )
            .await
    });
    let mut asked = None;
    loop {
        let ev = rx.recv().await.unwrap();
        match &ev.frame {
            Frame::Card(card) => {
                asked = Some(card.clone());
                r.engine
                    .answer(
                        &card.request_id,
                        kotoba_core::protocol::CardAnswer::of(Decision::Approve),
                        &me(),
                    )
                    .await
                    .unwrap();
            }
            Frame::TurnDone { .. } => break,
            _ => {}
        }
    }
    turn.await.unwrap();
    let card = asked.expect("a card, though its line is allowlisted");
    assert!(!card.can_always && !card.can_always_exact, "{card:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "approved, it ran once");
    assert_eq!(audit_approvers(&r).await, ["user", "executed"]);
}
