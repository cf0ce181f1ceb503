//! Start early, speak late, at the room's boundary under a paused clock with espeak-ng
//! phrases (the fakes and the stage are in [`super::tests`]; the recognizer fake takes
//! 300 ms): a complete question commits at the short wait with its words recognised at
//! the pause; a trailing or cut-off word waits the full time; a pause and then more
//! words is one utterance. Speculation: the model asked at the pause leaves no trace
//! when the person goes on, and a tool it proposes runs only after the commit; the
//! first sentence of its answer is synthesised ahead and plays at the commit, or is
//! dropped unheard when the person goes on.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::tests::{phrase, stage, stage_with, Mouth, Stage, ALICE};
use crate::speech::audio::FRAME;
use crate::speech::endpoint::EndpointSettings;
use crate::speech::test_audio::{frames, silence};
use kotoba_core::protocol::{Frame, Risk};
use kotoba_engine::engine::testing::rig_with;
use kotoba_engine::engine::testing::{call, fake, say};

/// When `pcm`'s last frame with sound ends, counted from `start` (20 ms a frame).
fn sound_ends(start: Instant, pcm: &[i16]) -> Instant {
    let last = frames(pcm)
        .iter()
        .rposition(|f| f.iter().any(|s| s.unsigned_abs() > 300))
        .unwrap_or(0);
    start + FRAME * (last as u32 + 1)
}

/// Speak `spoken` frame by frame at real pace, calling `each(now)` after every frame;
/// when the utterance committed (its transcript line was posted), to the frame.
async fn speak_watching(
    s: &Stage,
    spoken: &[i16],
    mut each: impl FnMut(Instant),
) -> Option<Instant> {
    let mut committed_at = None;
    for frame in frames(spoken) {
        let _ = s
            .room
            .heard
            .send(crate::voice::boundary::Heard {
                frames: vec![(ALICE, frame)],
            })
            .await;
        tokio::time::sleep(FRAME).await;
        let now = Instant::now();
        let posted = s
            .side
            .posts
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.starts_with("🎙️"));
        if committed_at.is_none() && posted {
            committed_at = Some(now);
        }
        each(now);
    }
    committed_at
}

/// When her first line was asked for (the turn's first sentence), after `from`.
fn first_line_after(m: &Mouth, from: Instant) -> Option<Duration> {
    m.said
        .lock()
        .unwrap()
        .first()
        .map(|(t, _)| t.duration_since(from))
}

#[tokio::test(start_paused = true)]
async fn a_complete_question_commits_at_the_short_wait_with_its_words_recognised_at_the_pause() {
    let s = stage(
        vec![Ok(say("It is noon."))],
        vec![],
        &[],
        &["What time is it in Tokyo?"],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    let spoken = [phrase("what time is it in Tokyo"), silence(3.0)].concat();
    let start = s.speak(ALICE, &spoken).await;
    let end = sound_ends(start, &spoken);
    let took = first_line_after(&s.mouth, end).expect("she answered");
    // The early commit (600 ms): the pause (200 ms) + recognition (300 ms) had the
    // words in hand by then; the model is instant.
    assert!(
        took >= Duration::from_millis(450) && took <= Duration::from_millis(800),
        "end of speech → her first line: {took:?} (the full wait is 1.0 s + 0.3 s)"
    );
    assert_eq!(s.ears.heard.lock().unwrap().len(), 1, "recognised once");
    let asks = s.ears.asks.lock().unwrap().clone();
    assert!(
        asks.iter()
            .all(|(_, at)| *at < end + Duration::from_millis(500)),
        "asked at the pause, not after a full wait: {asks:?}"
    );
    assert_eq!(s.rig.script.sent().len(), 1, "one turn");
}

#[tokio::test(start_paused = true)]
async fn a_trailing_word_waits_the_unsure_time_even_when_recognised_at_the_pause() {
    // "and." is still a trailing word, whatever the punctuation.
    let s = stage(
        vec![Ok(say("Sure."))],
        vec![],
        &[],
        &["Book me a table for two and."],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    let spoken = [phrase("book me a table for two and"), silence(4.0)].concat();
    let start = s.speak(ALICE, &spoken).await;
    let end = sound_ends(start, &spoken);
    let took = first_line_after(&s.mouth, end).expect("she answered in the end");
    assert!(
        took >= Duration::from_millis(1900),
        "a trailing word waits the unsure time: {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn words_cut_off_or_without_an_end_wait_the_full_silence() {
    // (words at the pause, what a long enough phrase says) → no early commit.
    for words in [
        "What about?",
        "what time is it in Tokyo",
        "I want to book a...",
    ] {
        let s = stage(
            vec![Ok(say("Okay."))],
            vec![],
            &[],
            &[words],
            Mouth::new(Duration::from_millis(500)),
            1,
        );
        let spoken = [phrase("what time is it in Tokyo right now"), silence(4.0)].concat();
        let start = s.speak(ALICE, &spoken).await;
        let end = sound_ends(start, &spoken);
        let took = first_line_after(&s.mouth, end);
        assert!(
            took.is_none_or(|t| t >= Duration::from_millis(900)),
            "{words:?}: nothing before the full wait: {took:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_pause_then_more_words_is_one_utterance_recognised_as_one() {
    let s = stage(
        vec![Ok(say("A table for two, done."))],
        vec![],
        &[],
        // At the pause: cut off; then the whole utterance, complete.
        &["I want to", "I want to book a table for two."],
        Mouth::new(Duration::from_millis(500)),
        1,
    );
    let spoken = [
        phrase("I want to"),
        silence(0.7),
        phrase("book a table for two"),
        silence(3.0),
    ]
    .concat();
    let start = s.speak(ALICE, &spoken).await;
    let end = sound_ends(start, &spoken);
    s.wait(1.0).await;
    let sent = s.rig.script.sent();
    assert_eq!(sent.len(), 1, "one turn");
    let body = format!("{:?}", sent[0]);
    assert!(
        body.contains("I want to book a table for two."),
        "the whole utterance: {body}"
    );
    let took = first_line_after(&s.mouth, end).expect("she answered");
    assert!(
        took <= Duration::from_millis(800),
        "and it committed early: {took:?}"
    );
    let captions: Vec<String> = s
        .side
        .posts
        .lock()
        .unwrap()
        .iter()
        .filter(|p| p.starts_with("🎙️"))
        .cloned()
        .collect();
    assert_eq!(captions.len(), 1, "one transcript line: {captions:?}");
}

/// A stage whose complete requests commit at 1.2 s of silence (short phrases otherwise
/// wait 2.0 s), so the model asked at the pause (0.2 s + 0.3 s of recognition) answers
/// well before the commit.
fn late_commit_stage(
    replies: Vec<Result<kotoba_engine::llm::ModelReply, kotoba_engine::llm::LlmError>>,
    tools: Vec<kotoba_engine::engine::testing::Fake>,
    heard: &[&str],
) -> Stage {
    let endpoint = EndpointSettings {
        early_commit: Duration::from_millis(1200),
        ..EndpointSettings::default()
    };
    let rig = rig_with(replies, tools, &[], "");
    stage_with(
        rig,
        heard,
        Mouth::new(Duration::from_millis(500)),
        1,
        endpoint,
    )
}

/// The person's lines in the session's transcript: as the session holds them, and as
/// the store keeps them (they must agree).
async fn user_lines(s: &Stage) -> Vec<String> {
    let held: Vec<String> = s
        .rig
        .engine
        .session(super::tests::SESSION)
        .await
        .history()
        .into_iter()
        .filter_map(|i| match i {
            kotoba_engine::llm::Item::User { text } => Some(text),
            _ => None,
        })
        .collect();
    let stored: Vec<String> = s
        .rig
        .engine
        .store()
        .history(super::tests::SESSION, 50)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == "user")
        .map(|m| m.text)
        .collect();
    assert_eq!(held, stored, "the session and the store");
    held
}

#[tokio::test(start_paused = true)]
async fn a_speculative_turn_cancelled_by_more_words_leaves_no_rows_cards_transcript_or_tool_run() {
    let probe = fake("probe", Risk::Read);
    let runs = probe.runs.clone();
    let s = late_commit_stage(
        // The speculative call gets the tool call; the real turn the answer.
        vec![
            call("probe", json!({})),
            Ok(say("A table for two at eight, done.")),
        ],
        vec![probe],
        &["Book a table.", "Book a table for two at eight."],
    );
    let mut bus = s
        .rig
        .engine
        .session(super::tests::SESSION)
        .await
        .subscribe();
    let spoken = [
        phrase("book a table"),
        // Recognised complete 0.6 s after the last voiced frame (the model is asked);
        // they go on at about 0.75 s, before the 1.2 s commit.
        silence(0.65),
        phrase("for two at eight"),
        silence(3.0),
    ]
    .concat();
    s.speak(ALICE, &spoken).await;
    s.wait(2.0).await;
    assert_eq!(
        s.rig.script.sent().len(),
        2,
        "asked ahead at the pause, then for the turn"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the speculative tool call never ran"
    );
    let frames = kotoba_engine::engine::testing::drain(&mut bus);
    let started = frames
        .iter()
        .filter(|f| matches!(f, Frame::TurnStarted { .. }))
        .count();
    assert_eq!(started, 1, "one turn on the bus: {frames:?}");
    assert!(
        !frames
            .iter()
            .any(|f| matches!(f, Frame::Step(_) | Frame::Card(_) | Frame::Peek { .. })),
        "no rows, cards or peeks: {frames:?}"
    );
    assert_eq!(
        user_lines(&s).await,
        ["Book a table for two at eight."],
        "one transcript line"
    );
    let captions = s
        .side
        .posts
        .lock()
        .unwrap()
        .iter()
        .filter(|p| p.starts_with("🎙️"))
        .count();
    assert_eq!(captions, 1);
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_proposed_by_a_speculative_turn_runs_only_after_the_commit() {
    let probe = fake("probe", Risk::Read);
    let runs = probe.runs.clone();
    let s = late_commit_stage(
        vec![call("probe", json!({})), Ok(say("Here is what I found."))],
        vec![probe],
        &["Check the logs."],
    );
    let spoken = [phrase("check the logs"), silence(3.0)].concat();
    let mut ran_at = None;
    let start = Instant::now();
    let committed_at = speak_watching(&s, &spoken, |now| {
        if ran_at.is_none() && runs.load(Ordering::SeqCst) > 0 {
            ran_at = Some(now);
        }
    })
    .await;
    s.wait(1.0).await;
    let (ran, committed) = (ran_at.expect("the tool ran"), committed_at.expect("a turn"));
    assert!(
        ran >= committed,
        "ran {:?} before the turn {:?}",
        ran - start,
        committed - start
    );
    // The model answered at about 0.6 s after the last voiced frame; the commit is
    // 1.2 s after it.
    let end = sound_ends(start, &spoken);
    assert!(
        ran >= end + Duration::from_millis(1000),
        "ran {:?} after the end of speech, before the commit",
        ran - end
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "once");
    assert_eq!(
        s.rig.script.sent().len(),
        2,
        "the held call, then the answer after the tool"
    );
}

#[tokio::test(start_paused = true)]
async fn the_first_sentence_of_an_answer_asked_ahead_is_synthesised_before_the_commit_and_plays_at_it(
) {
    let s = late_commit_stage(
        vec![Ok(say("It is noon. Anything else?"))],
        vec![],
        &["What time is it?"],
    );
    let spoken = [phrase("what time is it"), silence(3.0)].concat();
    let committed = speak_watching(&s, &spoken, |_| {}).await.expect("a turn");
    s.wait(1.0).await;
    let said = s.mouth.said.lock().unwrap().clone();
    let first: Vec<&(Instant, String)> = said.iter().filter(|(_, l)| l == "It is noon.").collect();
    assert_eq!(first.len(), 1, "synthesised once, ahead: {said:?}");
    assert!(
        first[0].0 < committed - Duration::from_millis(300),
        "asked {:?} before the commit",
        committed - first[0].0
    );
    // Her voice starts at the commit (to the frame the commit was seen at), not after
    // a synthesis begun there (200 ms).
    let heard = s
        .out
        .frames
        .lock()
        .unwrap()
        .first()
        .copied()
        .expect("she spoke");
    assert!(
        heard <= committed + Duration::from_millis(60),
        "first frame {:?} after the commit",
        heard.saturating_duration_since(committed)
    );
    assert!(heard + FRAME >= committed, "nothing before the commit");
    assert!(
        said.iter().any(|(_, l)| l == "Anything else?"),
        "the rest as usual: {said:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_voice_made_ready_ahead_is_dropped_unheard_when_the_person_goes_on() {
    let s = late_commit_stage(
        vec![
            Ok(say("Booked a table.")),
            Ok(say("A table for two at eight, done.")),
        ],
        vec![],
        // The whole is not complete (no end mark): nothing is asked ahead for it, so
        // its answer can only come from the turn at the commit.
        &["Book a table.", "Book a table for two at eight"],
    );
    let spoken = [
        phrase("book a table"),
        // Complete at the pause: the model is asked and its first sentence synthesised
        // ahead; they go on at about 0.75 s, before the 1.2 s commit.
        silence(0.65),
        phrase("for two at eight"),
        silence(3.0),
    ]
    .concat();
    let committed = speak_watching(&s, &spoken, |_| {}).await.expect("a turn");
    s.wait(2.0).await;
    let said = s.mouth.said.lock().unwrap().clone();
    assert!(
        said.iter()
            .any(|(at, l)| l == "Booked a table." && *at < committed),
        "made ready ahead: {said:?}"
    );
    assert!(
        said.iter()
            .any(|(at, l)| l == "A table for two at eight, done." && *at + FRAME >= committed),
        "the answer to the whole utterance was synthesised for itself: {said:?}"
    );
    let frames = s.out.frames.lock().unwrap().clone();
    assert!(
        frames.iter().all(|t| *t + FRAME >= committed),
        "nothing heard before the commit (seen to the frame)"
    );
    // One 500 ms line is 25 frames: the held one never joined it.
    assert!(
        (20..=27).contains(&frames.len()),
        "one line heard: {} frames",
        frames.len()
    );
}

#[tokio::test(start_paused = true)]
async fn a_line_other_than_the_one_made_ready_is_synthesised_for_itself_never_with_its_voice() {
    let mouth = Mouth::new(Duration::from_millis(500));
    let (notes, _heard) = tokio::sync::mpsc::unbounded_channel();
    let mut speaker = super::speaker::Speaker::new(mouth.clone(), notes);
    let (words, watched) = tokio::sync::watch::channel(String::new());
    speaker.prepare(watched);
    words.send_replace("It is noon. And".into());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(mouth.lines(), ["It is noon."], "made ready as it streamed");
    // Another line comes first: it gets its own voice, and the ready one is gone.
    speaker.say("Sorry, one moment.");
    speaker.say("It is noon.");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        mouth.lines(),
        ["It is noon.", "Sorry, one moment.", "It is noon."]
    );
}
