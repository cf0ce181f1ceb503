//! A spoken yes in a voice call (docs/gate.md, "Answers"), at the room's boundary on a
//! paused clock with espeak audio: while her turn waits on a card, the owner's clear
//! "yes, go ahead" approves it once and she says so; a guest's yes changes nothing; an
//! unclear answer makes her ask again, once; a clear no denies it and nothing runs.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use super::tests::{phrase, stage_on, Mouth, ALICE, BOB, SESSION};
use kotoba_core::protocol::{CardSettlement, Decision, Frame, Risk};
use kotoba_engine::engine::testing::{call, fake, rig_with, say};

const OWNERS: (&str, &str) = ("KOTOBA_DISCORD_OWNER_IDS", "11");

#[tokio::test(start_paused = true)]
async fn the_owners_spoken_yes_approves_the_card_once_and_a_guests_yes_or_a_maybe_changes_nothing()
{
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let rig = rig_with(
        vec![
            call("shell", json!({"command": "rm -r build"})),
            Ok(say("The build folder is gone.")),
        ],
        vec![shell],
        &[OWNERS],
        "",
    );
    let mut bus = rig.engine.session(SESSION).await.subscribe();
    let s = stage_on(
        rig,
        &[
            "Kotoba, clean the build folder",
            "yes, go ahead",
            "maybe",
            "yes, go ahead",
        ],
        Mouth::new(Duration::from_millis(500)),
        2,
    );
    // Spoken without the comma's pause: the fake ears answer each ask in order.
    s.speak(ALICE, &phrase("Kotoba clean the build folder"))
        .await;
    s.wait(4.0).await;
    assert_eq!(
        s.rig.engine.all_open_cards().await.len(),
        1,
        "the card waits"
    );
    // Bob is no owner: his yes changes nothing.
    s.speak(BOB, &phrase("yes, go ahead")).await;
    s.wait(3.0).await;
    assert_eq!(
        s.rig.engine.all_open_cards().await.len(),
        1,
        "still waiting"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // An unclear answer: she asks again, and nothing is decided.
    s.speak(ALICE, &phrase("maybe")).await;
    s.wait(3.0).await;
    assert!(
        s.mouth
            .lines()
            .iter()
            .any(|l| l.contains("Please say yes or no")),
        "{:?}",
        s.mouth.lines()
    );
    assert_eq!(s.rig.engine.all_open_cards().await.len(), 1);
    // The owner's clear yes: approved once, said aloud, and it runs.
    s.speak(ALICE, &phrase("yes, go ahead")).await;
    s.wait(4.0).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "approved once, run once");
    assert!(s.mouth.lines().iter().any(|l| l == "Okay, going ahead."));
    let frames = kotoba_engine::engine::testing::drain(&mut bus);
    let settled = frames.iter().find_map(|f| match f {
        Frame::CardSettled { settlement, .. } => Some(settlement.clone()),
        _ => None,
    });
    assert_eq!(
        settled,
        Some(CardSettlement::Decided {
            decision: Decision::Approve,
            by: "Alice".into(),
            via: "the voice call".into()
        })
    );
    let asked_again = s
        .mouth
        .lines()
        .iter()
        .filter(|l| l.contains("Please say yes or no"))
        .count();
    assert_eq!(asked_again, 1, "she asks again once");
}

#[tokio::test(start_paused = true)]
async fn the_owners_spoken_no_denies_the_card_and_nothing_runs() {
    let shell = fake("shell", Risk::Exec);
    let runs = shell.runs.clone();
    let rig = rig_with(
        vec![
            call("shell", json!({"command": "rm -r build"})),
            Ok(say("I left it alone.")),
        ],
        vec![shell],
        &[OWNERS],
        "",
    );
    // The voice channel's text chat listens (where the card is drawn).
    let _chat = rig.engine.session(SESSION).await.subscribe();
    let s = stage_on(
        rig,
        &["clean the build folder", "no, don't"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    s.speak(ALICE, &phrase("clean the build folder")).await;
    s.wait(4.0).await;
    assert_eq!(
        s.rig.engine.all_open_cards().await.len(),
        1,
        "{:?} {:?}",
        s.mouth.lines(),
        s.side.posts.lock().unwrap()
    );
    s.speak(ALICE, &phrase("no, don't")).await;
    s.wait(4.0).await;
    assert!(s.rig.engine.all_open_cards().await.is_empty());
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");
    assert!(s.mouth.lines().iter().any(|l| l == "Okay, I won't."));
    let trail = s.rig.engine.audit_trail(None, 5).await.unwrap();
    assert!(
        trail
            .iter()
            .any(|r| !r.approved && r.detail.contains("Deny by Alice (the voice call)")),
        "{trail:?}"
    );
}
