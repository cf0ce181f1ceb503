//! Answers beyond yes and no (gate.md, "Answers"): a reason for a no, an edit that goes
//! through the gate again, an "always" with a time box, one card answerable from every
//! surface its answerer can reach, and answers that do not fit the card.

use std::time::Duration;

use serde_json::json;

use super::testing::*;
use super::*;
use kotoba_core::protocol::*;

fn at_the_terminal() -> Answerer {
    Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "the terminal".into(),
        holds: Vec::new(),
    }
}

fn on_discord(id: &str, name: &str) -> Answerer {
    Answerer {
        id: id.into(),
        name: name.into(),
        local: false,
        via: "Discord".into(),
        holds: Vec::new(),
    }
}

/// A turn at the terminal asking shell for each line of `commands`, then "done".
fn shell_rig(
    commands: &[&str],
) -> (
    Rig,
    std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
) {
    let tool = fake("shell", Risk::Exec);
    let seen = tool.seen.clone();
    let mut replies: Vec<_> = commands
        .iter()
        .map(|c| call("shell", json!({"command": c})))
        .collect();
    replies.push(Ok(say("done")));
    (rig(replies, vec![tool]), seen)
}

fn spawn_turn(
    r: &Rig,
    session: &str,
    origin: Origin,
    text: &str,
) -> tokio::task::JoinHandle<TurnResult> {
    let engine = r.engine.clone();
    let req = TurnRequest::text(origin, session, "me", text);
    tokio::spawn(async move { engine.run_turn(req, TurnOptions::default()).await })
}

/// What the model was handed back from tools, over every request of the rig.
fn results_fed(r: &Rig) -> Vec<String> {
    r.script.sent().iter().flat_map(tool_results).collect()
}

#[tokio::test(start_paused = true)]
async fn a_no_with_a_reason_tells_her_the_words_verbatim_and_the_audit_keeps_them() {
    let (r, seen) = shell_rig(&["git push --force"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_turn(&r, "terminal:me", Origin::Owner, "push it");
    let card = next_card(&mut rx).await;
    let answer = CardAnswer {
        reason: Some("never force-push main".into()),
        ..CardAnswer::of(Decision::Deny)
    };
    r.engine
        .answer(&card.request_id, answer, &at_the_terminal())
        .await
        .unwrap();
    turn.await.unwrap();
    assert!(seen.lock().unwrap().is_empty(), "nothing ran");
    let told = results_fed(&r).join("\n");
    assert!(
        told.contains("DECLINED") && told.contains("\"never force-push main\""),
        "{told}"
    );
    let trail = r.engine.audit_trail(None, 10).await.unwrap();
    assert!(
        trail
            .iter()
            .any(|row| !row.approved && row.detail.contains("reason: never force-push main")),
        "{trail:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_edited_line_that_is_not_dangerous_runs_instead_and_the_row_the_model_and_the_audit_say_so(
) {
    let (r, seen) = shell_rig(&["cargo test --all"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_turn(&r, "terminal:me", Origin::Owner, "run the tests");
    let card = next_card(&mut rx).await;
    assert!(card.can_edit, "a shell card may be edited");
    let edit = CardAnswer {
        edited: Some("cargo test -p kotoba".into()),
        ..CardAnswer::of(Decision::Approve)
    };
    r.engine
        .answer(&card.request_id, edit, &at_the_terminal())
        .await
        .unwrap();
    turn.await.unwrap();
    let ran = seen.lock().unwrap().clone();
    assert_eq!(
        ran,
        [json!({"command": "cargo test -p kotoba"})],
        "the edited line ran, once"
    );
    let rows = steps(&drain(&mut rx));
    let done = rows.iter().rfind(|r| r.phase == Phase::Done).unwrap();
    assert_eq!(
        done.action, "$ cargo test -p kotoba",
        "the row shows what ran"
    );
    let told = results_fed(&r).join("\n");
    assert!(
        told.contains("EDITED") && told.contains("cargo test -p kotoba"),
        "{told}"
    );
    let trail = r.engine.audit_trail(None, 10).await.unwrap();
    let decision = trail.iter().find(|row| row.approver == "user").unwrap();
    assert_eq!(decision.action, "cargo test --all", "the proposed line");
    assert!(
        decision
            .detail
            .contains("edited by me to: cargo test -p kotoba"),
        "both lines and who edited: {decision:?}"
    );
    assert!(
        trail
            .iter()
            .any(|row| row.approver == "executed" && row.action == "cargo test -p kotoba"),
        "the executed row names the line that ran: {trail:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_dangerous_edit_never_runs_on_that_answer_and_a_new_card_says_it_was_edited() {
    let (r, seen) = shell_rig(&["make build"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_turn(&r, "terminal:me", Origin::Owner, "look at build");
    let first = next_card(&mut rx).await;
    let edit = CardAnswer {
        edited: Some("rm -rf /".into()),
        ..CardAnswer::of(Decision::Approve)
    };
    r.engine
        .answer(&first.request_id, edit, &at_the_terminal())
        .await
        .unwrap();
    let second = next_card(&mut rx).await;
    assert_ne!(second.request_id, first.request_id);
    assert_eq!(second.action, "rm -rf /");
    assert!(
        second.why.contains("Edited on the card by me"),
        "{}",
        second.why
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(seen.lock().unwrap().is_empty(), "nothing ran on the edit");
    r.engine
        .answer(
            &second.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Deny),
            &at_the_terminal(),
        )
        .await
        .unwrap();
    turn.await.unwrap();
    assert!(seen.lock().unwrap().is_empty(), "nothing ran at all");
}

#[tokio::test(start_paused = true)]
async fn an_always_for_one_hour_lets_the_line_run_without_a_card_until_the_hour_is_up() {
    let (r, seen) = shell_rig(&["make lint"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_turn(&r, "terminal:me", Origin::Owner, "lint");
    let card = next_card(&mut rx).await;
    let always = CardAnswer {
        for_s: Some(3600),
        ..CardAnswer::of(Decision::AlwaysExact)
    };
    r.engine
        .answer(&card.request_id, always, &at_the_terminal())
        .await
        .unwrap();
    turn.await.unwrap();
    let grants = r.engine.grants().await.unwrap();
    assert_eq!(grants.len(), 1);
    assert!(grants[0].expires_at.is_some(), "{grants:?}");
    // Within the hour: no card.
    r.script.replies.lock().unwrap().extend([
        call("shell", json!({"command": "make lint"})),
        Ok(say("ok")),
    ]);
    tokio::time::advance(Duration::from_secs(1800)).await;
    r.engine
        .run_turn(
            TurnRequest::text(Origin::Owner, "terminal:me", "me", "lint again"),
            TurnOptions::default(),
        )
        .await;
    assert_eq!(seen.lock().unwrap().len(), 2, "ran without a card");
    // Past the hour: the grant is gone and the line asks again.
    tokio::time::advance(Duration::from_secs(1801)).await;
    assert!(
        r.engine.grants().await.unwrap().is_empty(),
        "dropped from the list"
    );
    r.script.replies.lock().unwrap().extend([
        call("shell", json!({"command": "make lint"})),
        Ok(say("ok")),
    ]);
    let turn = spawn_turn(&r, "terminal:me", Origin::Owner, "and once more");
    let again = next_card(&mut rx).await;
    assert_eq!(again.action, "make lint");
    r.engine
        .answer(
            &again.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Deny),
            &at_the_terminal(),
        )
        .await
        .unwrap();
    turn.await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_discord_card_is_answered_from_the_owners_own_surface_and_says_where_but_never_by_a_guest(
) {
    let (r, seen) = shell_rig(&["make deploy"]);
    let mut rx = r.engine.session("discord:5").await.subscribe();
    // An owner asked on Discord (no Discord owner ids are configured here, so nobody
    // on Discord could answer; the owner at the terminal can).
    let origin = Origin::Discord {
        user: 1,
        owner: true,
    };
    let turn = spawn_turn(&r, "discord:5", origin, "deploy");
    let card = next_card(&mut rx).await;
    assert_eq!(
        r.engine.all_open_cards().await.len(),
        1,
        "the owner's list holds every session's cards"
    );
    assert_eq!(
        r.engine
            .answer(
                &card.request_id,
                kotoba_core::protocol::CardAnswer::of(Decision::Approve),
                &on_discord("2", "gus")
            )
            .await,
        Err(AnswerError::NotYours),
        "a guest's answer is refused"
    );
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &at_the_terminal(),
        )
        .await
        .unwrap();
    turn.await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1);
    let settled = drain(&mut rx)
        .into_iter()
        .find_map(|f| match f {
            Frame::CardSettled { settlement, .. } => Some(settlement),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        settled,
        CardSettlement::Decided {
            decision: Decision::Approve,
            by: "me".into(),
            via: "the terminal".into()
        }
    );
    assert!(r.engine.all_open_cards().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_answer_that_does_not_fit_the_card_is_refused_and_the_card_still_waits() {
    let (r, seen) = shell_rig(&["make"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let turn = spawn_turn(&r, "terminal:me", Origin::Owner, "build");
    let card = next_card(&mut rx).await;
    let me = at_the_terminal();
    for (answer, why) in [
        (
            CardAnswer {
                reason: Some("x".into()),
                ..CardAnswer::of(Decision::Approve)
            },
            "reason",
        ),
        (
            CardAnswer {
                for_s: Some(60),
                ..CardAnswer::of(Decision::Deny)
            },
            "for_s",
        ),
        (
            CardAnswer {
                edited: Some("make all".into()),
                ..CardAnswer::of(Decision::AlwaysExact)
            },
            "edit",
        ),
        (
            CardAnswer {
                edited: Some("  ".into()),
                ..CardAnswer::of(Decision::Approve)
            },
            "empty",
        ),
    ] {
        match r.engine.answer(&card.request_id, answer, &me).await {
            Err(AnswerError::Invalid(s)) => assert!(s.contains(why), "{s}"),
            other => panic!("{why}: {other:?}"),
        }
    }
    assert_eq!(r.engine.all_open_cards().await.len(), 1, "still waiting");
    r.engine
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::of(Decision::Approve),
            &me,
        )
        .await
        .unwrap();
    turn.await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(results_fed(&r).len(), 1);
}

fn marked_turn(text: &str) -> TurnRequest {
    TurnRequest {
        register: Register::Voice,
        channel: Channel::Voice,
        el_call_bound: Some(true),
        ..TurnRequest::text(Origin::Owner, "terminal:me", "me", text)
    }
}

/// The `work_done` summary a deferred runner announces.
async fn work_done(rx: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<Event>>) -> String {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(600), rx.recv())
            .await
            .expect("a work_done")
            .unwrap();
        if let Frame::WorkDone { summary, .. } = &ev.frame {
            return summary.clone();
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_deferred_card_may_be_edited_and_the_edited_line_runs_instead() {
    let (r, seen) = shell_rig(&["cargo test --all"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(marked_turn("run the tests"), TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    assert_eq!(card.window_secs, 180, "deferred");
    assert!(card.can_edit, "a deferred shell card may be edited too");
    let edit = CardAnswer {
        edited: Some("cargo test -p kotoba".into()),
        ..CardAnswer::of(Decision::Approve)
    };
    r.engine
        .answer(&card.request_id, edit, &at_the_terminal())
        .await
        .unwrap();
    let summary = work_done(&mut rx).await;
    assert_eq!(
        seen.lock().unwrap().clone(),
        [json!({"command": "cargo test -p kotoba"})],
        "the edited line ran, once"
    );
    assert!(
        summary.contains("EDITED") && summary.contains("cargo test -p kotoba"),
        "she is told what ran: {summary}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deferred_card_edited_into_a_dangerous_line_never_runs() {
    let (r, seen) = shell_rig(&["cargo test --all"]);
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    r.engine
        .run_turn(marked_turn("run the tests"), TurnOptions::default())
        .await;
    let card = next_card(&mut rx).await;
    let edit = CardAnswer {
        edited: Some("rm -rf /".into()),
        ..CardAnswer::of(Decision::Approve)
    };
    r.engine
        .answer(&card.request_id, edit, &at_the_terminal())
        .await
        .unwrap();
    let summary = work_done(&mut rx).await;
    assert!(seen.lock().unwrap().is_empty(), "nothing ran");
    assert!(summary.contains("NOTHING ran"), "{summary}");
}
