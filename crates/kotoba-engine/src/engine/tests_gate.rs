//! The gate inside the loop: routes, grants, the audit trail's truth, and deferral
//! (engine.md §5, §6; gate.md). Fake tools stand in for shell/execute_code so the
//! tests count runs; the real ones are driven in tests/suite/.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::json;
use tokio::sync::broadcast;

use super::testing::*;
use super::*;
use kotoba_core::protocol::*;
use kotoba_store::GrantScope;

async fn approvers(r: &Rig) -> Vec<String> {
    let mut rows = r.engine.audit_trail(None, 100).await.unwrap();
    rows.reverse();
    rows.into_iter().map(|r| r.approver).collect()
}

fn owner() -> Answerer {
    Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    }
}

/// The owner at the keyboard answers `card` with `decision`.
async fn try_press(r: &Rig, card: &Card, decision: Decision) -> Result<(), AnswerError> {
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(decision),
            &owner(),
        )
        .await
}

/// [`try_press`], which must be taken.
pub(super) async fn press(r: &Rig, card: &Card, decision: Decision) {
    try_press(r, card, decision).await.unwrap();
}

fn term(text: &str) -> TurnRequest {
    TurnRequest::text(
        kotoba_core::protocol::Origin::Owner,
        "terminal:me",
        "me",
        text,
    )
}

pub(super) fn el_turn(text: &str) -> TurnRequest {
    TurnRequest {
        register: Register::Voice,
        channel: Channel::Voice,
        el_call_bound: Some(true),
        ..TurnRequest::text(
            kotoba_core::protocol::Origin::Owner,
            "terminal:me",
            "me",
            text,
        )
    }
}

/// Frames up to and including the next work_done, and that frame's run_id, ok, summary.
pub(super) async fn until_work_done(
    rx: &mut broadcast::Receiver<Arc<Event>>,
) -> (Vec<Frame>, Option<String>, bool, String) {
    let mut seen = Vec::new();
    loop {
        let ev = rx.recv().await.unwrap();
        seen.push(ev.frame.clone());
        if let Frame::WorkDone { ok, summary } = &ev.frame {
            return (seen, ev.run_id.clone(), *ok, summary.clone());
        }
    }
}

async fn next_work_done(
    rx: &mut broadcast::Receiver<Arc<Event>>,
) -> (Option<String>, bool, String) {
    let (_, run_id, ok, summary) = until_work_done(rx).await;
    (run_id, ok, summary)
}

#[tokio::test(start_paused = true)]
async fn an_auto_safe_command_runs_without_a_card_and_is_audited_auto_safe_then_executed() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![call("shell", json!({"command": "ls"})), Ok(say("listed"))],
        vec![shell],
    );
    r.engine
        .run_turn(text_turn("list"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "no listener was needed");
    assert_eq!(approvers(&r).await, ["auto-safe", "executed"]);
}

#[tokio::test(start_paused = true)]
async fn always_family_on_npm_install_saves_that_prefix_and_covers_no_other_npm_subcommand() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "npm install left-pad"})),
            Ok(say("installed")),
            call("shell", json!({"command": "npm install is-odd"})),
            Ok(say("installed too")),
            call("shell", json!({"command": "npm test"})),
            Ok(say("not tested")),
        ],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let e = r.engine.clone();
    let turn = tokio::spawn(async move {
        e.run_turn(
            term("install left-pad"),
            crate::engine::TurnOptions::default(),
        )
        .await
    });
    let card = next_card(&mut rx).await;
    assert!(card.can_always, "npm install may be granted as a family");
    press(&r, &card, Decision::AlwaysFamily).await;
    turn.await.unwrap();
    let grants = r.engine.grants().await.unwrap();
    assert_eq!(
        (grants[0].pattern.as_str(), grants[0].scope),
        ("npm install", GrantScope::Family)
    );
    r.engine
        .run_turn(
            term("install is-odd"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(
        approvers(&r).await,
        ["user", "executed", "saved", "executed"]
    );
    // Another subcommand is another family: it asks (denied, so nothing runs).
    let e = r.engine.clone();
    let test = tokio::spawn(async move {
        e.run_turn(term("test it"), crate::engine::TurnOptions::default())
            .await
    });
    let card = next_card(&mut rx).await;
    assert_eq!(card.family.as_deref(), Some("npm test"));
    press(&r, &card, Decision::Deny).await;
    test.await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2, "npm test did not run");
    assert!(r.engine.revoke_grant(grants[0].id).await.unwrap());
    assert!(r.engine.grants().await.unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_family_grant_saved_by_an_older_version_is_narrowed_to_the_known_families_never_widened()
{
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "git push --force origin main"})),
            Ok(say("asked")),
            call("shell", json!({"command": "git --version"})),
            Ok(say("asked again")),
            call("shell", json!({"command": "rclone sync /tmp/empty ~"})),
            Ok(say("asked a third time")),
            call("shell", json!({"command": "make -j8"})),
            Ok(say("built")),
        ],
        vec![shell],
    );
    // Older versions saved a family as the first word alone, for any command.
    for family in ["git", "rclone", "make"] {
        r.engine
            .store()
            .add_grant(family, GrantScope::Family, "olive")
            .await
            .unwrap();
    }
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    // `git push` is another family; bare `git` and `rclone` are no family the gate
    // knows, so their old grants cover nothing: each asks (denied, nothing runs).
    for (ask, can_always) in [("push it", true), ("which git", false), ("sync", false)] {
        let e = r.engine.clone();
        let turn = tokio::spawn(async move {
            e.run_turn(term(ask), crate::engine::TurnOptions::default())
                .await
        });
        let card = next_card(&mut rx).await;
        assert_eq!(card.can_always, can_always, "{ask}: {card:?}");
        press(&r, &card, Decision::Deny).await;
        turn.await.unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 0, "{ask}");
    }
    // A known family's old grant still covers its own lines.
    r.engine
        .run_turn(term("build"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "make -j8 ran under 'make'");
}

#[tokio::test(start_paused = true)]
async fn always_on_a_code_card_saves_execute_code_but_dangerous_code_still_asks() {
    let code = fake("execute_code", Risk::Exec);
    let r = rig(
        vec![
            call("execute_code", json!({"code": "print(1+1)"})),
            Ok(say("2")),
            call("execute_code", json!({"code": "print(2+2)"})),
            Ok(say("4")),
            call(
                "execute_code",
                json!({"code": "import shutil; shutil.rmtree('/tmp/x')"}),
            ),
            Ok(say("asked")),
        ],
        vec![code],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let e = r.engine.clone();
    let turn = tokio::spawn(async move {
        e.run_turn(term("add"), crate::engine::TurnOptions::default())
            .await
    });
    let card = next_card(&mut rx).await;
    assert_eq!(
        card.danger, None,
        "an ordinary card is not drawn as dangerous"
    );
    press(&r, &card, Decision::AlwaysFamily).await;
    turn.await.unwrap();
    assert_eq!(r.engine.grants().await.unwrap()[0].pattern, "execute_code");
    r.engine
        .run_turn(term("add more"), crate::engine::TurnOptions::default())
        .await; // runs under the grant, no card
    let e = r.engine.clone();
    let turn = tokio::spawn(async move {
        e.run_turn(term("delete it"), crate::engine::TurnOptions::default())
            .await
    });
    let card = next_card(&mut rx).await;
    assert!(
        !card.can_always && !card.can_always_exact,
        "a dangerous snippet is never grantable"
    );
    assert_eq!(
        card.danger.as_deref(),
        Some("tree deletion"),
        "the card carries the gate's label, so every surface draws it as dangerous"
    );
    press(&r, &card, Decision::Deny).await;
    turn.await.unwrap();
    assert_eq!(
        approvers(&r).await,
        ["user", "executed", "saved", "executed", "user"]
    );
}

#[tokio::test(start_paused = true)]
async fn sudo_can_never_be_saved_at_any_width() {
    let r = rig(
        vec![
            call("shell", json!({"command": "sudo apt update"})),
            Ok(say("ok")),
        ],
        vec![fake("shell", Risk::Exec)],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let e = r.engine.clone();
    let turn = tokio::spawn(async move {
        e.run_turn(term("update"), crate::engine::TurnOptions::default())
            .await
    });
    let card = next_card(&mut rx).await;
    assert!(!card.can_always && !card.can_always_exact);
    assert!(card.no_always_reason.is_some());
    for always in [Decision::AlwaysExact, Decision::AlwaysFamily] {
        assert!(
            matches!(
                try_press(&r, &card, always).await,
                Err(AnswerError::Invalid(_))
            ),
            "an always not offered is refused, and the card keeps waiting"
        );
    }
    press(&r, &card, Decision::Deny).await;
    turn.await.unwrap();
    assert!(
        r.engine.grants().await.unwrap().is_empty(),
        "an always not offered saves nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn an_expired_card_is_recorded_expired_never_user_and_nothing_is_filed_as_run() {
    let r = rig(
        vec![
            call("shell", json!({"command": "make"})),
            Ok(say("expired")),
        ],
        vec![fake("shell", Risk::Exec)],
    );
    let _rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(text_turn("build"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(approvers(&r).await, ["expired"]);
    let none = rig(
        vec![call("shell", json!({"command": "make"})), Ok(say("nobody"))],
        vec![fake("shell", Risk::Exec)],
    );
    none.engine
        .run_turn(text_turn("build"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(approvers(&none).await, ["error"]);
}

#[tokio::test(start_paused = true)]
async fn an_approved_action_that_cannot_start_files_no_executed_row() {
    let broken = fake("shell", Risk::Exec).output(crate::tools::ToolOutput::not_started(
        "could not start bash",
    ));
    let r = rig(
        vec![
            call("shell", json!({"command": "make"})),
            Ok(say("it could not start")),
        ],
        vec![broken],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let e = r.engine.clone();
    let turn = tokio::spawn(async move {
        e.run_turn(term("build"), crate::engine::TurnOptions::default())
            .await
    });
    let card = next_card(&mut rx).await;
    press(&r, &card, Decision::Approve).await;
    turn.await.unwrap();
    assert_eq!(approvers(&r).await, ["user"]);
}

#[tokio::test(start_paused = true)]
async fn a_failed_run_is_filed_executed_failed() {
    let failing = fake("shell", Risk::Exec).output(crate::tools::ToolOutput::exited(2, "boom"));
    let r = rig(
        vec![
            call("shell", json!({"command": "ls"})),
            Ok(say("it failed")),
        ],
        vec![failing],
    );
    r.engine
        .run_turn(text_turn("list"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(approvers(&r).await, ["auto-safe", "executed:failed"]);
}

#[tokio::test(start_paused = true)]
async fn a_marked_turn_with_a_listener_defers_and_the_runner_completes_the_row_in_place() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "make build"})),
            Ok(say("never asked")),
        ],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let res = r
        .engine
        .run_turn(el_turn("build it"), crate::engine::TurnOptions::default())
        .await;
    assert!(
        res.text.ends_with("I asked for your permission on screen."),
        "{}",
        res.text
    );
    assert_eq!(r.script.sent().len(), 1, "the turn ended at the card");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let frames = drain(&mut rx);
    let card = frames
        .iter()
        .find_map(|f| {
            if let Frame::Card(c) = f {
                Some(c.clone())
            } else {
                None
            }
        })
        .unwrap();
    assert_eq!(card.window_secs, 180, "a deferred card waits 180 s");
    let pending = steps(&frames).pop().unwrap();
    assert_eq!(
        (pending.phase, pending.outcome),
        (Phase::Done, Some(Outcome::Pending))
    );
    assert!(
        approvers(&r).await.is_empty(),
        "a deferral writes no row yet"
    );
    press(&r, &card, Decision::Approve).await;
    let (seen, run_id, ok, summary) = until_work_done(&mut rx).await;
    assert!(ok && run_id.is_some_and(|id| id.len() == 8), "{summary}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let done = steps(&seen)
        .into_iter()
        .find(|s| s.id == pending.id)
        .unwrap();
    assert_eq!(
        done.outcome,
        Some(Outcome::Ok),
        "the same row, completed by its id"
    );
    assert_eq!(approvers(&r).await, ["user", "executed"]);
}

#[tokio::test(start_paused = true)]
async fn a_deferred_no_is_one_decision_row_and_announced_ok_with_its_ending() {
    let r = rig(
        vec![call("shell", json!({"command": "make build"}))],
        vec![fake("shell", Risk::Exec)],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(el_turn("build it"), crate::engine::TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    press(&r, &card, Decision::Deny).await;
    let (_, ok, summary) = next_work_done(&mut rx).await;
    assert!(ok && summary.contains("Declined"), "{summary}");
    assert_eq!(approvers(&r).await, ["user"]);
}

#[tokio::test(start_paused = true)]
async fn unmarked_voice_and_text_turns_ask_inline_and_a_marked_turn_without_listener_is_unreachable(
) {
    for req in [
        TurnRequest {
            register: Register::Voice,
            channel: Channel::Voice,
            ..term("x")
        },
        term("x"),
    ] {
        let shell = fake("shell", Risk::Exec);
        let runs = shell.runs.clone();
        let r = rig(
            vec![
                call("shell", json!({"command": "make"})),
                Ok(say("ran inline")),
            ],
            vec![shell],
        );
        let mut rx = r.engine.session("terminal:me").await.subscribe();
        let e = r.engine.clone();
        let turn =
            tokio::spawn(
                async move { e.run_turn(req, crate::engine::TurnOptions::default()).await },
            );
        let card = next_card(&mut rx).await;
        press(&r, &card, Decision::Approve).await;
        assert_eq!(turn.await.unwrap().text, "ran inline");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
    let r = rig(
        vec![call("shell", json!({"command": "make"})), Ok(say("nobody"))],
        vec![fake("shell", Risk::Exec)],
    );
    r.engine
        .run_turn(el_turn("x"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(approvers(&r).await, ["error"]);
}

#[tokio::test(start_paused = true)]
async fn three_respellings_of_one_snippet_make_one_card_and_one_run() {
    let code = fake("execute_code", Risk::Exec);
    let runs = code.runs.clone();
    let r = rig(
        vec![
            call("execute_code", json!({"code": "print(sum(range(1,101)))"})),
            call("execute_code", json!({"code": "print(sum(range(1, 101)))"})),
            Ok(say("still waiting")),
            call(
                "execute_code",
                json!({"code": "print( sum(range(1,101)) )"}),
            ),
            Ok(say("it already ran")),
        ],
        vec![code],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(
            el_turn("add one to a hundred"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    let card = next_card(&mut rx).await;
    let again = r
        .engine
        .run_turn(
            el_turn("add  one to a hundred"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(again.text, "still waiting");
    assert!(r.script.sent()[2].items.iter().any(|i| matches!(i, crate::llm::Item::ToolResult { output, .. } if output.contains("ALREADY on screen"))));
    press(&r, &card, Decision::Approve).await;
    next_work_done(&mut rx).await;
    r.engine
        .run_turn(
            el_turn("add one to a hundred"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "one request, one run");
    let cards = drain(&mut rx)
        .iter()
        .filter(|f| matches!(f, Frame::Card(_)))
        .count();
    assert_eq!(cards, 0, "no second card");
}

#[tokio::test(start_paused = true)]
async fn a_new_user_request_is_a_new_card_and_after_a_no_a_repeat_opens_none() {
    let r = rig(
        vec![
            call("shell", json!({"command": "make"})),
            call("shell", json!({"command": "make"})),
            Ok(say("you said no")),
            call("shell", json!({"command": "make"})),
        ],
        vec![fake("shell", Risk::Exec)],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(el_turn("build"), crate::engine::TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    press(&r, &card, Decision::Deny).await;
    next_work_done(&mut rx).await;
    r.engine
        .run_turn(el_turn("build"), crate::engine::TurnOptions::default())
        .await;
    assert!(
        !drain(&mut rx).iter().any(|f| matches!(f, Frame::Card(_))),
        "after a No, a repeat opens no card"
    );
    r.engine
        .run_turn(
            el_turn("build it again please"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert!(
        drain(&mut rx).iter().any(|f| matches!(f, Frame::Card(_))),
        "a new request is a new card"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_session_dismisses_its_waiting_deferred_card_and_nothing_runs() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![call("shell", json!({"command": "make build"}))],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(el_turn("build it"), crate::engine::TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    r.engine.deferred.cancel_session("terminal:me");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let frames = drain(&mut rx);
    assert!(frames.contains(&Frame::CardSettled {
        request_id: card.request_id.clone(),
        settlement: CardSettlement::Dismissed
    }));
    let row = steps(&frames).pop().unwrap();
    assert_eq!(
        (row.outcome, row.ending),
        (Some(Outcome::Refused), Some(Ending::Dismissed))
    );
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::WorkDone { .. })),
        "a requested stop announces nothing"
    );
    assert_eq!(
        try_press(&r, &card, Decision::Approve).await,
        Err(AnswerError::AlreadySettled)
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(approvers(&r).await, ["dismissed"]);
}

#[tokio::test(start_paused = true)]
async fn a_re_emitted_deferred_request_leaves_its_row_pending_not_refused() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "make build"})),
            call("shell", json!({"command": "make  build"})),
            Ok(say("the card is still up")),
        ],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(el_turn("build it"), crate::engine::TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    drain(&mut rx);
    let again = r
        .engine
        .run_turn(el_turn("build  it"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(again.text, "the card is still up");
    let frames = drain(&mut rx);
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::Card(_))),
        "no second card"
    );
    let row = steps(&frames)
        .into_iter()
        .rfind(|s| s.phase == Phase::Done)
        .unwrap();
    assert_eq!(
        (row.outcome, row.ending),
        (Some(Outcome::Pending), None),
        "the re-emission's row stays pending: nobody refused it"
    );
    assert_eq!(row.result.as_deref(), Some("waiting for approval"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(approvers(&r).await.is_empty(), "no decision was made yet");
    press(&r, &card, Decision::Approve).await;
    next_work_done(&mut rx).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "one request, one run");
}

#[tokio::test(start_paused = true)]
async fn cancel_work_with_no_job_still_cancels_waiting_deferred_approvals() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![call("shell", json!({"command": "make build"}))],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(el_turn("build it"), crate::engine::TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    assert!(r.engine.jobs.info("terminal:me").is_none(), "no job runs");
    // "stop that": the code cancel_work runs.
    let stopped = r.engine.stop("terminal:me", crate::engine::StopScope::Work);
    assert_eq!((stopped.job.is_none(), stopped.approvals), (true, 1));
    let said = stopped.sentence().unwrap();
    assert!(said.contains("cancelled the one approval card"), "{said}");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(
        try_press(&r, &card, Decision::Approve).await,
        Err(AnswerError::AlreadySettled),
        "approving it later changes nothing"
    );
    tokio::time::sleep(std::time::Duration::from_secs(200)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0, "it never ran");
    assert_eq!(approvers(&r).await, ["dismissed"]);
    assert_eq!(
        r.engine
            .stop("terminal:me", crate::engine::StopScope::Work)
            .sentence(),
        Err(crate::tools::port::NothingStopped),
        "nothing left to stop"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hidden_announce_turn_re_emitting_a_deferred_call_inline_opens_no_card() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "pip install requests"})),
            call("shell", json!({"command": "pip install  requests"})),
            Ok(say("It is installed.")),
        ],
        vec![shell],
    );
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(
            el_turn("install requests"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    let card = next_card(&mut rx).await;
    press(&r, &card, Decision::Approve).await;
    next_work_done(&mut rx).await;
    // The announce turn: hidden, not marked, so a re-emission would ask inline.
    let announce = TurnRequest {
        hidden: true,
        ..term(WORK_DONE_SENTINEL)
    };
    let res = r
        .engine
        .run_turn(announce, crate::engine::TurnOptions::default())
        .await;
    assert_eq!(res.text, "It is installed.");
    assert!(
        !drain(&mut rx).iter().any(|f| matches!(f, Frame::Card(_))),
        "no second card"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "one request, one run");
    assert!(r.script.sent()[2].items.iter().any(|i| matches!(i, crate::llm::Item::ToolResult { output, .. } if output.contains("ALREADY ran"))));
}

#[tokio::test(start_paused = true)]
async fn a_turn_tap_sees_exactly_its_turn_and_is_not_a_listener() {
    let r = rig(vec![Ok(say("tapped")), Ok(say("not tapped"))], vec![]);
    let (tx, mut tap) = tokio::sync::mpsc::unbounded_channel();
    let session = r.engine.session("terminal:me").await;
    assert!(!session.has_listener());
    let tapped = crate::engine::TurnOptions {
        tap: Some(tx),
        ..Default::default()
    };
    r.engine.run_turn(term("one"), tapped).await;
    assert!(!session.has_listener(), "a tap is not a listener");
    r.engine
        .run_turn(term("two"), crate::engine::TurnOptions::default())
        .await;
    let mut frames = Vec::new();
    while let Ok(ev) = tap.try_recv() {
        frames.push(ev.frame.clone());
    }
    assert!(matches!(frames.first(), Some(Frame::TurnStarted { .. })));
    assert!(matches!(frames.last(), Some(Frame::TurnDone { text, .. }) if text == "tapped"));
    assert_eq!(
        frames
            .iter()
            .filter(|f| matches!(f, Frame::TurnDone { .. }))
            .count(),
        1,
        "the next turn's frames are not copied"
    );
}
