//! The room's turn rules, at its boundary under a paused clock (the fakes and the
//! stage are in [`super::tests`]): spoken tool lines on a voice turn, hums on a
//! reasoning model, nothing on a written turn, the 75 s / 600 s limits, a cough that
//! only pauses her, a voiced packet's arrival that pauses her before the ticks, a lone
//! name replacing the turn, a leave from inside her turn, and two people in one room
//! each acting as themselves.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use tokio::sync::oneshot;

use super::room::{Control, RoomEnd, GIVE_UP_LINE};
use super::tests::{phrase, stage, stage_on, turns_done, Mouth, ALICE, BOB, SESSION};
use kotoba_core::protocol::Risk;
use kotoba_engine::engine::testing::{call, fake, rig_with, say, Fake};

fn tool_40s(name: &str) -> Fake {
    let mut t = fake(name, Risk::Read).delay(Duration::from_secs(40));
    t.spec.timeout = Some(Duration::from_secs(120));
    t.spec.lines.announce = Some("Let me look into that.".into());
    t.spec.lines.heartbeat = vec!["Still digging.".into(), "Almost there.".into()];
    t
}

/// When each line was asked for, in seconds after `t0`.
fn said_at(m: &Mouth, t0: Instant) -> Vec<(u64, String)> {
    m.said
        .lock()
        .unwrap()
        .iter()
        .map(|(t, l)| (t.duration_since(t0).as_secs(), l.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_long_tool_on_a_voice_turn_is_announced_once_and_heartbeats_at_9_and_30_seconds() {
    let s = stage(
        vec![call("probe", json!({})), Ok(say("All done."))],
        vec![tool_40s("probe")],
        &[],
        &["check the logs"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    s.speak(ALICE, &phrase("check the logs")).await;
    // The turn starts once the utterance is committed (1 s) and recognised (0.3 s).
    let mut t0 = None;
    for _ in 0..400 {
        s.wait(0.05).await;
        if let Some((t, _)) = s.mouth.said.lock().unwrap().first() {
            t0 = Some(*t);
            break;
        }
    }
    let t0 = t0.expect("the announce line was said");
    s.wait(50.0).await;
    let said = said_at(&s.mouth, t0);
    let lines: Vec<&str> = said.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        lines,
        [
            "Let me look into that.",
            "Still digging.",
            "Almost there.",
            "probe done",
            "All done."
        ],
        "{said:?}"
    );
    assert_eq!(said[1].0, 9, "first heartbeat at 9 s: {said:?}");
    assert_eq!(said[2].0, 30, "second heartbeat at 30 s: {said:?}");
}

#[tokio::test(start_paused = true)]
async fn a_reasoning_model_hums_instead_of_the_canned_lines() {
    let s = stage(
        vec![call("probe", json!({})), Ok(say("All done."))],
        vec![tool_40s("probe")],
        &[("KOTOBA_REASONING_EFFORT", "low")],
        &["check the logs"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    s.speak(ALICE, &phrase("check the logs")).await;
    s.wait(60.0).await;
    let lines = s.mouth.lines();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("look into") || l.contains("digging")),
        "{lines:?}"
    );
    let hums = lines
        .iter()
        .filter(|l| l.starts_with('M') || l.starts_with('H'))
        .count();
    assert_eq!(hums, 2, "two hums in a 40 s tool: {lines:?}");
    assert_eq!(lines.last().map(String::as_str), Some("All done."));
}

#[tokio::test(start_paused = true)]
async fn a_written_turn_in_the_voice_chat_is_not_spoken() {
    let s = stage(
        vec![call("probe", json!({})), Ok(say("All done."))],
        vec![tool_40s("probe")],
        &[],
        &[],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    let req = kotoba_core::protocol::TurnRequest::text(
        kotoba_core::protocol::Origin::Owner,
        SESSION,
        "Alice",
        "check the logs",
    );
    let r = s
        .rig
        .engine
        .run_turn(req, kotoba_engine::engine::TurnOptions::default())
        .await;
    assert_eq!(r.text, "All done.");
    s.wait(1.0).await;
    assert!(s.mouth.lines().is_empty(), "{:?}", s.mouth.lines());
}

#[tokio::test(start_paused = true)]
async fn a_spoken_turn_silent_for_75_seconds_is_given_up_with_one_sentence() {
    let rig = rig_with(vec![Ok(say("Finally."))], vec![], &[], "");
    rig.script.set_delay(Duration::from_secs(200));
    let s = stage_on(
        rig,
        &["think hard"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    let t0 = s.speak(ALICE, &phrase("think hard")).await;
    s.wait(70.0).await;
    assert!(s.mouth.lines().is_empty(), "not yet");
    s.wait(10.0).await;
    assert_eq!(s.mouth.lines(), [GIVE_UP_LINE]);
    let (at, _) = s.mouth.said.lock().unwrap()[0].clone();
    let secs = at.duration_since(t0).as_secs_f64();
    // She was asked once the utterance was committed and recognised (~3–5 s in).
    assert!(
        (77.0..81.0).contains(&secs),
        "gave up at {secs} s after Alice began"
    );
    s.wait(200.0).await;
    assert_eq!(s.mouth.lines(), [GIVE_UP_LINE], "the cut turn never speaks");
}

#[tokio::test(start_paused = true)]
async fn a_running_tool_is_not_silence_but_600_seconds_is_the_limit() {
    let mut long = fake("probe", Risk::Read).delay(Duration::from_secs(900));
    long.spec.timeout = Some(Duration::from_secs(1000));
    long.spec.lines.heartbeat = vec![];
    let s = stage(
        vec![call("probe", json!({})), Ok(say("Done at last."))],
        vec![long],
        &[("KOTOBA_REASONING_EFFORT", "off")],
        &["run the long thing"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    let t0 = s.speak(ALICE, &phrase("run the long thing")).await;
    s.wait(300.0).await;
    assert!(
        !s.mouth.lines().iter().any(|l| l == GIVE_UP_LINE),
        "a running tool is waited for"
    );
    s.wait(320.0).await;
    let said = s.mouth.said.lock().unwrap().clone();
    let give_up = said
        .iter()
        .find(|(_, l)| l == GIVE_UP_LINE)
        .expect("given up");
    let secs = give_up.0.duration_since(t0).as_secs_f64();
    assert!((600.0..605.0).contains(&secs), "at {secs} s");
}

#[tokio::test(start_paused = true)]
async fn her_words_before_a_tool_are_said_before_the_tool_runs() {
    // A reasoning model narrates in its own words: "Let me check the logs." must be
    // heard while the tool runs, not after it.
    let mut reply = call("probe", json!({})).unwrap();
    reply.items.insert(
        0,
        kotoba_engine::llm::Item::Assistant {
            text: "Let me check the logs.".into(),
        },
    );
    let s = stage(
        vec![Ok(reply), Ok(say("All clear."))],
        vec![tool_40s("probe")],
        &[("KOTOBA_REASONING_EFFORT", "low")],
        &["check the logs"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    s.speak(ALICE, &phrase("check the logs")).await;
    s.wait(20.0).await;
    let lines = s.mouth.lines();
    assert_eq!(
        lines.first().map(String::as_str),
        Some("Let me check the logs."),
        "said before the tool ends: {lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l == "All clear."),
        "the tool still runs"
    );
    s.wait(40.0).await;
    assert_eq!(
        s.mouth.lines().last().map(String::as_str),
        Some("All clear.")
    );
}

#[tokio::test(start_paused = true)]
async fn a_running_action_is_not_silence_for_the_watchdog() {
    let mut write = fake("tidy", Risk::Write).delay(Duration::from_secs(120));
    write.spec.timeout = Some(Duration::from_secs(200));
    write.spec.lines.heartbeat = vec![];
    let s = stage(
        vec![call("tidy", json!({})), Ok(say("Tidied."))],
        vec![write],
        &[("KOTOBA_REASONING_EFFORT", "off")],
        &["tidy up"],
        Mouth::new(Duration::from_millis(300)),
        1,
    );
    s.speak(ALICE, &phrase("tidy up")).await;
    s.wait(130.0).await;
    let lines = s.mouth.lines();
    assert!(!lines.iter().any(|l| l == GIVE_UP_LINE), "{lines:?}");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("Tidied."),
        "{lines:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_cough_over_her_pauses_her_but_cuts_nothing() {
    let s = stage(
        vec![Ok(say("Here is a long and careful answer for you."))],
        vec![],
        &[],
        &["explain it slowly"],
        Mouth::new(Duration::from_secs(6)),
        1,
    );
    let mut bus = s.rig.engine.session(SESSION).await.subscribe();
    s.speak(ALICE, &phrase("explain it slowly")).await;
    s.wait(3.0).await;
    let before = s.out.count();
    assert!(before > 10, "she is talking");
    // A 0.2 s voiced burst (a cough, an "mm"): quiet at once, then she goes on.
    let hey = phrase("hey");
    let from = hey
        .iter()
        .position(|x| x.unsigned_abs() > 2000)
        .unwrap_or(0);
    let cough: Vec<i16> = hey[from..(from + 3200).min(hey.len())].to_vec();
    let at = s.speak(ALICE, &cough).await;
    assert!(
        s.out.stops.lock().unwrap().iter().any(|t| *t >= at),
        "playback paused at once"
    );
    s.wait(4.0).await;
    assert!(
        s.out.after(at + Duration::from_secs(1)) > 50,
        "she went on talking"
    );
    let done: Vec<_> = turns_done(&mut bus).into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        done,
        [kotoba_core::protocol::TurnStatus::Completed],
        "the turn was not cut"
    );
    assert_eq!(
        s.ears.heard.lock().unwrap().len(),
        1,
        "the cough committed nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_voiced_packet_arriving_pauses_her_at_once_and_she_goes_on_when_no_speech_follows() {
    let s = stage(
        vec![Ok(say("Here is a long and careful answer for you."))],
        vec![],
        &[],
        &["explain it slowly"],
        Mouth::new(Duration::from_secs(6)),
        1,
    );
    let mut bus = s.rig.engine.session(SESSION).await.subscribe();
    s.speak(ALICE, &phrase("explain it slowly")).await;
    s.wait(3.0).await;
    assert!(s.out.count() > 10, "she is talking");
    // The receiver heard Alice's packet arrive, ahead of the ticks.
    let at = Instant::now();
    s.room.control.send(Control::Arriving(ALICE)).await.unwrap();
    s.wait(0.001).await;
    assert!(
        s.out.stops.lock().unwrap().iter().any(|t| *t >= at),
        "paused on the arrival, before any tick"
    );
    assert_eq!(s.out.after(at), 0, "nothing handed while paused");
    // No speech follows in the ticks: after 200 ms of her audio she goes on.
    s.wait(0.15).await;
    assert_eq!(s.out.after(at), 0, "still waiting for the ticks at 150 ms");
    s.wait(2.0).await;
    assert!(s.out.after(at) > 50, "she went on talking");
    let done: Vec<_> = turns_done(&mut bus).into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        done,
        [kotoba_core::protocol::TurnStatus::Completed],
        "nothing was cut"
    );
}

#[tokio::test(start_paused = true)]
async fn a_voiced_packet_arriving_then_speech_in_the_ticks_is_a_barge_in() {
    let long = "This is a very long answer that goes on and on. ".repeat(3);
    let s = stage(
        vec![Ok(say(&long)), Ok(say("Okay."))],
        vec![],
        &[],
        &["tell me a long story", "wait stop"],
        Mouth::new(Duration::from_secs(8)),
        1,
    );
    s.speak(ALICE, &phrase("tell me a long story")).await;
    s.wait(3.0).await;
    let at = Instant::now();
    s.room.control.send(Control::Arriving(ALICE)).await.unwrap();
    // The ticks carry the same speech 60 ms later (songbird's playout buffer).
    s.wait(0.06).await;
    s.speak(ALICE, &phrase("wait stop")).await;
    let stops = s.out.stops.lock().unwrap().clone();
    let first = stops.iter().find(|t| **t >= at).copied().expect("paused");
    assert!(
        first.duration_since(at) < Duration::from_millis(20),
        "at the arrival"
    );
    s.wait(5.0).await;
    let reply_at = s
        .said_at("Okay.")
        .expect("the interruption was heard and answered");
    let cut = s.frames_between(first, reply_at);
    assert_eq!(
        cut, 0,
        "paused at the arrival, then cut: nothing of it plays again"
    );
    assert!(
        s.mouth.lines().iter().any(|l| l == "Okay."),
        "the interruption was answered"
    );
}

#[tokio::test(start_paused = true)]
async fn her_name_alone_from_a_second_person_replaces_the_turn_in_flight() {
    let mut slow = fake("probe", Risk::Read).delay(Duration::from_secs(60));
    slow.spec.timeout = Some(Duration::from_secs(120));
    let s = stage(
        vec![call("probe", json!({})), Ok(say("unused"))],
        vec![slow],
        &[("KOTOBA_REASONING_EFFORT", "low")],
        &["Kotoba check the logs", "Kotoba"],
        Mouth::new(Duration::from_millis(300)),
        2,
    );
    let mut bus = s.rig.engine.session(SESSION).await.subscribe();
    s.speak(ALICE, &phrase("Kotoba check the logs")).await;
    s.wait(5.0).await;
    s.speak(BOB, &phrase("Kotoba")).await;
    s.wait(4.0).await;
    let done: Vec<_> = turns_done(&mut bus).into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        done,
        [kotoba_core::protocol::TurnStatus::Interrupted],
        "{done:?}"
    );
    let lines = s.mouth.lines();
    assert!(
        crate::speech::wake::ACKNOWLEDGEMENTS
            .contains(&lines.last().map(String::as_str).unwrap_or("")),
        "{lines:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_leave_asked_from_inside_her_turn_waits_for_that_turn_and_not_longer() {
    // The discord_voice tool runs inside the very turn a leave waits for: the room
    // leaves when that turn has answered and her answer has played.
    let s = stage(
        vec![Ok(say("Goodbye everyone."))],
        vec![],
        &[],
        &["you can go now"],
        Mouth::new(Duration::from_secs(2)),
        1,
    );
    s.speak(ALICE, &phrase("you can go now")).await;
    // Ask to leave once her turn is under way (as the tool would, from inside it).
    while s.rig.script.sent().is_empty() {
        s.wait(0.02).await;
    }
    let (tx, _rx) = oneshot::channel();
    s.room.control.send(Control::Leave(tx)).await.unwrap();
    let asked = Instant::now();
    let end = s.room.task.await.unwrap();
    assert_eq!(end, RoomEnd::Left);
    let waited = asked.elapsed();
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    assert!(s.mouth.lines().iter().any(|l| l == "Goodbye everyone."));
    assert!(s.out.count() >= 90, "her goodbye played: {}", s.out.count());
}

#[tokio::test(start_paused = true)]
async fn frames_are_handed_out_by_what_the_player_has_left_to_play() {
    // A player that reports its queue is paced by it: one that has stalled is never
    // handed more than a few frames ahead, whatever the room's own clock says.
    let s = stage(
        vec![Ok(say("A two second line."))],
        vec![],
        &[],
        &["say something"],
        Mouth::new(Duration::from_secs(2)),
        1,
    );
    s.out
        .stalled
        .store(true, std::sync::atomic::Ordering::SeqCst);
    s.speak(ALICE, &phrase("say something")).await;
    s.wait(6.0).await;
    assert_eq!(s.mouth.lines(), ["A two second line."]);
    assert_eq!(
        s.out.count(),
        3,
        "three frames ahead of a player that plays nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stop_from_outside_the_room_silences_her_at_once_and_nothing_of_that_turn_plays_on() {
    // The page's Stop button, Discord's /stop or "stop" said in the text chat cut the
    // turn in the engine: her voice goes quiet with it.
    let long = "This is a very long answer that goes on and on. ".repeat(3);
    let s = stage(
        vec![Ok(say(&long))],
        vec![],
        &[],
        &["tell me a long story"],
        Mouth::new(Duration::from_secs(8)),
        1,
    );
    s.speak(ALICE, &phrase("tell me a long story")).await;
    s.wait(3.0).await;
    assert!(s.out.count() > 10, "she is talking");
    let at = Instant::now();
    s.rig
        .engine
        .stop(SESSION, kotoba_engine::engine::StopScope::Turn);
    s.wait(0.1).await;
    let stop = s
        .out
        .stops
        .lock()
        .unwrap()
        .iter()
        .find(|t| **t >= at)
        .copied()
        .expect("playback stopped");
    assert!(stop.duration_since(at) <= Duration::from_millis(100));
    s.wait(10.0).await;
    assert_eq!(s.out.after(stop), 0, "nothing of the stopped turn plays on");
}

#[tokio::test(start_paused = true)]
async fn in_one_room_a_guests_spoken_turn_acts_as_the_guest_and_the_owners_as_the_owner() {
    // A tool a guest may be offered, slow enough that the owner speaks while it runs.
    let mut search = fake("web_search", Risk::Read).delay(Duration::from_secs(20));
    search.spec.timeout = Some(Duration::from_secs(60));
    let people = search.people.clone();
    let s = stage(
        vec![
            call("web_search", json!({"q": "news"})),
            call("web_search", json!({"q": "time"})),
            Ok(say("It is noon.")),
        ],
        vec![search],
        &[],
        &["Kotoba search the news", "Kotoba what time is it"],
        Mouth::new(Duration::from_millis(300)),
        2,
    );
    s.speak(BOB, &phrase("Kotoba search the news")).await;
    s.wait(5.0).await;
    s.speak(ALICE, &phrase("Kotoba what time is it")).await;
    s.wait(30.0).await;
    let seen = people.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        seen[0].origin,
        kotoba_core::protocol::Origin::Discord {
            user: BOB,
            owner: false
        },
        "the guest's spoken turn acts as the guest"
    );
    assert_eq!(
        seen[1].origin,
        kotoba_core::protocol::Origin::Discord {
            user: ALICE,
            owner: true
        },
        "the owner's spoken turn acts as the owner"
    );
    assert_eq!(seen[1].author, format!("Alice ({ALICE})"));
}
