//! The room's narration and watchdog rules, at its boundary under a paused clock
//! (the fakes and the stage are in [`super::tests`]): spoken tool lines on a voice
//! turn, hums on a reasoning model, nothing on a written turn, and the 75 s / 600 s
//! limits.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::room::GIVE_UP_LINE;
use super::tests::{phrase, stage, stage_on, Mouth, Slow, ALICE, SESSION};
use crate::engine::tests::{call, fake, rig_with, say, Fake, Rig};
use crate::protocol::Risk;

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
    let req = crate::protocol::TurnRequest::text(SESSION, "Alice", "check the logs");
    let r = s.rig.engine.run_turn(req).await;
    assert_eq!(r.text, "All done.");
    s.wait(1.0).await;
    assert!(s.mouth.lines().is_empty(), "{:?}", s.mouth.lines());
}

#[tokio::test(start_paused = true)]
async fn a_spoken_turn_silent_for_75_seconds_is_given_up_with_one_sentence() {
    let rig = rig_with(vec![Ok(say("Finally."))], vec![], &[], "");
    let slow = Slow {
        delay: Duration::from_secs(200),
        inner: rig.script.clone(),
    };
    let store = rig.engine.store.clone();
    let engine = crate::engine::Engine::new(
        rig.engine.config.clone(),
        Arc::new(slow),
        crate::tools::Registry::new(),
        crate::soul::Soul::shipped(),
        store,
    );
    let rig = Rig { engine, ..rig };
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
        crate::llm::Item::Assistant {
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
