//! Whom a turn speaks for (docs/engine.md §1): a job acts for the person whose turn
//! started it for its whole life, its hidden announce turn speaks for that person, and
//! a guest's turn running beside it keeps its own person, and a deferred card's run acts
//! for the person whose turn drew it.

use std::time::Duration;

use serde_json::json;

use super::testing::*;
use super::tests_work::{frames_until, is_work_done, job_script};
use crate::engine::TurnOptions;
use kotoba_core::protocol::*;

/// A guest's written turn on Discord in `session`.
fn guest_turn(session: &str, text: &str) -> TurnRequest {
    let guest = Origin::Discord {
        user: 2,
        owner: false,
    };
    TurnRequest::text(guest, session, "gus (2)", text)
}

/// The person [`starter`] speaks for.
fn ann() -> Person {
    starter("s1", None, Some(false)).person
}

#[tokio::test(start_paused = true)]
async fn a_job_acts_for_the_person_who_started_it_whatever_is_said_meanwhile() {
    // The job's calls take 10 s each; a guest's turn runs from 0 s to 30 s beside it,
    // so the job's second call starts while the guest's turn is running.
    let probe = fake("probe", Risk::Read).delay(Duration::from_secs(10));
    let (job_people, runs) = (probe.people.clone(), probe.runs.clone());
    let search = fake("web_search", Risk::Read).delay(Duration::from_secs(30));
    let guest_people = search.people.clone();
    let r = rig(
        vec![call("web_search", json!({"q": "x"})), Ok(say("hello gus"))],
        vec![probe, search],
    );
    job_script(
        &r,
        vec![
            call("probe", json!({"n": 1})),
            call("probe", json!({"n": 2})),
            Ok(say("done")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&starter("s1", None, Some(false)), "look around")
        .await
        .unwrap();
    while runs.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let guest = r
        .engine
        .run_turn(guest_turn("s1", "hi"), TurnOptions::default());
    let (spoken, _) = tokio::join!(guest, frames_until(&mut rx, is_work_done));
    assert_eq!(spoken.text, "hello gus");
    assert_eq!(*job_people.lock().unwrap(), vec![ann(), ann()]);
    let guest_seen = guest_people.lock().unwrap().clone();
    assert!(
        guest_seen.len() == 1 && guest_seen[0].origin.is_guest(),
        "the guest's own call ran as the guest: {guest_seen:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_hidden_announce_turn_speaks_for_the_jobs_starter_not_whoever_spoke_last() {
    // A host tool (not on the guest allow-list): a guest's turn is never offered it.
    let probe = fake("probe", Risk::Read);
    let people = probe.people.clone();
    let r = rig(
        vec![
            Ok(say("hello gus")),
            call("probe", json!({})),
            Ok(say("it is built")),
        ],
        vec![probe],
    );
    job_script(&r, vec![Ok(say("built"))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let run_id = r
        .engine
        .start_job(&starter("s1", None, Some(false)), "build it")
        .await
        .unwrap();
    let done = frames_until(&mut rx, is_work_done).await;
    let Some(Frame::WorkDone { summary, .. }) = done.last().map(|e| e.frame.clone()) else {
        panic!("no work_done");
    };
    // The guest speaks last before the announce.
    r.engine
        .run_turn(guest_turn("s1", "hi"), TurnOptions::default())
        .await;
    let told = r
        .engine
        .announce_work("s1", &run_id, &summary, Register::Text)
        .await
        .expect("the first announce runs");
    assert_eq!(told.text, "it is built");
    assert_eq!(
        *people.lock().unwrap(),
        vec![ann()],
        "the hidden turn ran the host tool as the job's starter"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deferred_cards_run_acts_for_the_person_whose_turn_drew_it() {
    let shell = fake("shell", Risk::Exec);
    let people = shell.people.clone();
    let r = rig(
        vec![
            call("shell", json!({"command": "cargo test"})),
            Ok(say("hello gus")),
            Ok(say("hello again")),
        ],
        vec![shell],
    );
    // A /v1 turn at the owner's own surface, with the page open: its card is deferred.
    let mut rx = r.engine.session("terminal:me").await.subscribe();
    let drawn = TurnRequest {
        register: Register::Voice,
        channel: Channel::Voice,
        el_call_bound: Some(true),
        ..TurnRequest::text(Origin::Owner, "terminal:me", "me", "run the tests")
    };
    r.engine.run_turn(drawn, TurnOptions::default()).await;
    let card = loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            break c.clone();
        }
    };
    // A guest speaks in the session before the card is answered.
    r.engine
        .run_turn(guest_turn("terminal:me", "hi"), TurnOptions::default())
        .await;
    let me = super::tests_cards::local_owner();
    r.engine
        .answer(&card.request_id, CardAnswer::of(Decision::Approve), &me)
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    assert_eq!(*people.lock().unwrap(), vec![Person::owner("me")]);
}

#[tokio::test(start_paused = true)]
async fn a_dm_turn_keeps_the_surfaces_typed_session_through_its_tools_and_its_job() {
    use kotoba_core::session::SessionId;
    let probe = fake("probe", Risk::Read);
    let seen = probe.sessions.clone();
    let r = rig(
        vec![call("probe", json!({"n": 1})), Ok(say("done"))],
        vec![probe],
    );
    job_script(&r, vec![call("probe", json!({"n": 2})), Ok(say("done"))]);
    // A DM's name is a channel's: only the surface's typed value knows it is a DM.
    let dm = SessionId::discord_dm(9);
    let owner = Origin::Discord {
        user: 1,
        owner: true,
    };
    let turn = TurnRequest::text(owner, dm.clone(), "ann (1)", "look");
    let mut rx = r.engine.session(dm.as_str()).await.subscribe();
    r.engine.run_turn(turn, TurnOptions::default()).await;
    let starter = kotoba_core::turn::TurnContext {
        session: dm.clone(),
        ..starter(dm.as_str(), None, Some(false))
    };
    r.engine.start_job(&starter, "look around").await.unwrap();
    frames_until(&mut rx, is_work_done).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![dm.clone(), dm],
        "the turn's call, then the job's"
    );
    assert!(seen.iter().all(SessionId::is_dm));
}
