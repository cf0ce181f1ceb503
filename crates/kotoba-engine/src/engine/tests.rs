//! Engine rules pinned with a trait-level scripted model and fake tools (the HTTP-level
//! tests live in tests/suite/). Time runs under `tokio::time::pause()`.

use super::testing::*;
use super::*;
use crate::llm::{LlmError, ModelReply, ToolCall};
use crate::tools::{Scope, ToolOutput};
use kotoba_core::protocol::*;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn a_plain_turn_streams_her_words_and_ends_completed() {
    let r = rig(vec![Ok(say("hello ann"))], vec![]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let res = r
        .engine
        .run_turn(text_turn("hi"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(
        res,
        TurnResult {
            text: "hello ann".into(),
            status: TurnStatus::Completed,
            face: "calm".into(),
            store_unreachable: false,
        }
    );
    let frames = drain(&mut rx);
    assert!(matches!(frames[0], Frame::TurnStarted { .. }));
    assert!(frames.contains(&Frame::TextDelta {
        text: "hello ann".into()
    }));
    assert!(matches!(
        frames.last(),
        Some(Frame::TurnDone {
            status: TurnStatus::Completed,
            ..
        })
    ));
}

#[tokio::test(start_paused = true)]
async fn the_finished_turns_face_comes_from_what_she_wrote_just_before_turn_done() {
    let r = rig(vec![Ok(say("Haha, hello ann"))], vec![]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let res = r
        .engine
        .run_turn(text_turn("hi"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(res.face, "happy");
    let frames = drain(&mut rx);
    let n = frames.len();
    assert_eq!(
        frames[n - 2],
        Frame::Face {
            expression: "happy".into()
        },
        "the face comes right before the turn ends: {frames:?}"
    );
    assert!(matches!(frames[n - 1], Frame::TurnDone { .. }));
}

#[tokio::test(start_paused = true)]
async fn an_action_opens_a_row_with_the_chip_a_determined_face_then_its_own_focus_face_and_closes_it_ok(
) {
    let r = rig(
        vec![
            call("write_file", json!({"path": "a.txt"})),
            Ok(say("written")),
        ],
        vec![fake("write_file", Risk::Write)],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(text_turn("write it"), crate::engine::TurnOptions::default())
        .await;
    let frames = drain(&mut rx);
    let rows = steps(&frames);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0].phase, rows[0].action.as_str(), rows[0].step_kind),
        (Phase::Start, "write_file a.txt", StepKind::File)
    );
    assert_eq!(
        (rows[1].phase, rows[1].outcome),
        (Phase::Done, Some(Outcome::Ok))
    );
    assert_eq!(rows[1].result.as_deref(), Some("write_file output"));
    assert_eq!(
        frames
            .iter()
            .filter(|f| **f == Frame::Working { on: true })
            .count(),
        1
    );
    let faces: Vec<&str> = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Face { expression } => Some(expression.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        faces,
        ["determined", "thinking", "calm"],
        "the chip's determined face, then the tool's focus face (thinking unless declared), \
         then the finished face her answer asks for (calm: it names none)"
    );
    assert!(
        frames.contains(&Frame::Working { on: false }),
        "chip off at exit"
    );
}

#[tokio::test(start_paused = true)]
async fn a_read_opens_no_row_and_its_peek_is_emitted_only_on_change_and_cleared_at_exit() {
    let r = rig(
        vec![
            calls(&[
                ("memory_recall", json!({"q": 1})),
                ("memory_recall", json!({"q": 2})),
            ]),
            Ok(say("I know")),
        ],
        vec![fake("memory_recall", Risk::Read)],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(
            text_turn("what do you know"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    let frames = drain(&mut rx);
    assert!(steps(&frames).is_empty());
    let peeks: Vec<_> = frames
        .iter()
        .filter(|f| matches!(f, Frame::Peek { .. }))
        .cloned()
        .collect();
    assert_eq!(
        peeks,
        [
            Frame::Peek {
                tool: Some("memory_recall".into())
            },
            Frame::Peek { tool: None }
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn when_tool_calls_are_spent_the_next_request_offers_no_tools_and_the_turn_is_capped() {
    let t = fake("write_file", Risk::Write);
    let r = rig_with(
        vec![
            call("write_file", json!({"n": 1})),
            call("write_file", json!({"n": 2})),
            Ok(say("stopping here")),
        ],
        vec![t],
        &[
            ("KOTOBA_MAX_TOOL_CALLS", "2"),
            ("KOTOBA_PER_TOOL_LIMIT", "5"),
        ],
        "",
    );
    let res = r
        .engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let sent = r.script.sent();
    assert_eq!(sent.len(), 3);
    assert!(!sent[1].tools.is_empty());
    assert!(
        sent[2].tools.is_empty(),
        "the words-only request carries no tools"
    );
    assert_eq!(
        res.status,
        TurnStatus::Capped,
        "a chain a cap cut is never reported as done"
    );
}

#[tokio::test(start_paused = true)]
async fn failures_spent_withdraw_the_tools_but_a_refusal_is_not_a_failure() {
    let failing = fake("shell_like", Risk::Write).output(ToolOutput::failed("boom"));
    let refusing = fake("picky", Risk::Write).output(ToolOutput::refused("bad path"));
    let r = rig_with(
        vec![
            call("picky", json!({"a": 1})),
            call("picky", json!({"a": 2})),
            call("shell_like", json!({"a": 1})),
            call("shell_like", json!({"a": 2})),
            Ok(say("sorry")),
        ],
        vec![failing, refusing],
        &[("KOTOBA_FAIL_LIMIT", "2")],
        "",
    );
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let sent = r.script.sent();
    assert_eq!(sent.len(), 5);
    assert!(
        !sent[3].tools.is_empty(),
        "two refusals and one failure leave tools on"
    );
    assert!(
        sent[4].tools.is_empty(),
        "the second failure withdraws them"
    );
}

#[tokio::test(start_paused = true)]
async fn an_exact_repeat_is_not_executed_and_is_answered_by_its_earlier_outcome() {
    let ok = fake("write_file", Risk::Write);
    let runs = ok.runs.clone();
    let failing = fake("patch", Risk::Write).output(ToolOutput::failed("no match"));
    let r = rig_with(
        vec![
            call("write_file", json!({"path": "a", "content": "x"})),
            call("write_file", json!({"content": "x", "path": "a"})),
            call("patch", json!({"p": 1})),
            call("patch", json!({"p": 1})),
            Ok(say("ok")),
        ],
        vec![ok, failing],
        &[("KOTOBA_FAIL_LIMIT", "5")],
        "",
    );
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the repeat did not run");
    let sent = r.script.sent();
    assert!(tool_results(&sent[2]).last().unwrap().contains("ALREADY"));
    assert!(tool_results(&sent[4])
        .last()
        .unwrap()
        .contains("did NOT work"));
}

#[tokio::test(start_paused = true)]
async fn a_repeat_still_counts_against_the_per_tool_cap() {
    let t = fake("write_file", Risk::Write);
    let runs = t.runs.clone();
    let r = rig_with(
        vec![
            call("write_file", json!({"n": 1})),
            call("write_file", json!({"n": 1})),
            call("write_file", json!({"n": 2})),
            Ok(say("ok")),
        ],
        vec![t],
        &[("KOTOBA_PER_TOOL_LIMIT", "2")],
        "",
    );
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let last = tool_results(&r.script.sent()[3]).pop().unwrap();
    assert!(
        last.starts_with("THIS CALL DID NOT RUN") && last.contains("at most 2 times"),
        "{last}"
    );
}

#[tokio::test(start_paused = true)]
async fn door_refusals_each_tell_the_model_nothing_ran() {
    let r = rig_with(
        vec![
            calls(&[
                ("nosuch", json!({})),
                ("web_search", json!({})),
                ("delegate", json!({})),
                ("hidden", json!({})),
            ]),
            Ok(say("ok")),
        ],
        vec![
            fake("web_search", Risk::Network).family("web"),
            fake("delegate", Risk::Exec).scope(Scope::WorkOnly),
            fake("hidden", Risk::Read).unavailable(),
        ],
        &[],
        "disabled_toolsets: [web]\n",
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(voice_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let results = tool_results(&r.script.sent()[1]);
    assert_eq!(results[0], unknown_sentence("nosuch"));
    assert_eq!(results[1], switched_off_sentence("web_search", "web"));
    assert_eq!(results[2], work_only_sentence("delegate"));
    assert_eq!(results[3], withheld_sentence("hidden"));
    let frames = drain(&mut rx);
    assert!(steps(&frames).is_empty(), "nothing ran, so no row");
    assert!(says(&frames).is_empty(), "no announce for a refused door");
    let offered: Vec<_> = r.script.sent()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(
        offered.is_empty(),
        "switched off, work-only and unavailable tools are not offered: {offered:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn start_work_inside_a_job_is_refused_at_the_door() {
    let r = rig(
        vec![],
        vec![fake("start_work", Risk::Write).scope(Scope::CompanionOnly)],
    );
    let session = r.engine.session("s1").await;
    let ctx = Arc::new(TurnContext {
        mode: Mode::Work,
        run_id: Some("0badcafe".into()),
        ..starter("s1", None, Some(false))
    });
    let script = Script::new(vec![
        call("start_work", json!({"goal": "x"})),
        Ok(say("fine")),
    ]);
    let engine = Engine::new(
        r.engine.config.clone(),
        script.clone(),
        r.engine.tools.clone(),
        Soul::shipped(),
        r.engine.store.clone(),
    );
    let _ = session;
    let s = engine.session("s1").await;
    turn::run_loop(&engine, s, ctx, vec![Item::User { text: "go".into() }]).await;
    assert_eq!(
        tool_results(&script.sent()[1])[0],
        companion_only_sentence("start_work")
    );
}

#[tokio::test(start_paused = true)]
async fn invalid_json_arguments_are_answered_with_a_sentence_and_nothing_runs() {
    let t = fake("write_file", Risk::Write);
    let runs = t.runs.clone();
    let bad = Ok(ModelReply {
        items: vec![Item::ToolCall(ToolCall {
            call_id: "c1".into(),
            name: "write_file".into(),
            arguments: "{\"path\": ".into(),
            raw: None,
        })],
        ..Default::default()
    });
    let r = rig(vec![bad, Ok(say("sorry"))], vec![t]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let res = r
        .engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(tool_results(&r.script.sent()[1])[0].contains("not valid JSON"));
    assert_eq!(res.status, TurnStatus::Completed);
    assert!(steps(&drain(&mut rx)).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_model_failure_ends_the_turn_with_one_plain_sentence() {
    let r = rig(vec![Err(LlmError::Stream("eof".into()))], vec![]);
    let res = r
        .engine
        .run_turn(text_turn("hi"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(res.status, TurnStatus::Error);
    assert_eq!(res.text, LlmError::Stream(String::new()).user_sentence());
}

#[tokio::test(start_paused = true)]
async fn tool_output_over_sixteen_thousand_characters_is_cut_with_a_note() {
    let big = fake("write_file", Risk::Write).output(ToolOutput::ok("z".repeat(16_500)));
    let r = rig(
        vec![call("write_file", json!({})), Ok(say("ok"))],
        vec![big],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let fed = tool_results(&r.script.sent()[1]).pop().unwrap();
    assert!(
        fed.contains("500 of 16500 characters were not shown"),
        "{}",
        &fed[16_000..]
    );
    let done = steps(&drain(&mut rx)).pop().unwrap();
    assert!(done.clipped);
}

#[tokio::test(start_paused = true)]
async fn announce_is_said_once_per_tool_per_turn_on_voice_and_never_on_text() {
    let mk = || vec![fake("compile", Risk::Write)];
    let script = || {
        vec![
            call("compile", json!({"n": 1})),
            call("compile", json!({"n": 2})),
            Ok(say("ok")),
        ]
    };
    let r = rig(script(), mk());
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(voice_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let said = says(&drain(&mut rx));
    let announces: Vec<_> = said
        .iter()
        .filter(|(k, _)| *k == SayKind::Announce)
        .collect();
    assert_eq!(announces.len(), 1);
    assert_eq!(said.iter().filter(|(k, _)| *k == SayKind::After).count(), 2);
    let r = rig(script(), mk());
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    assert!(
        says(&drain(&mut rx)).is_empty(),
        "the text register speaks no canned lines"
    );
}

#[tokio::test(start_paused = true)]
async fn the_soul_line_wins_over_the_tools_own_announce() {
    let r = rig(
        vec![call("shell", json!({"command": "ls"})), Ok(say("ok"))],
        vec![fake("shell", Risk::Write)],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(voice_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let said = says(&drain(&mut rx));
    assert_eq!(
        said[0],
        (SayKind::Announce, "Let me run that real quick.".to_string())
    );
}

#[tokio::test(start_paused = true)]
async fn a_reasoning_model_announces_nothing_and_hums_while_a_tool_runs() {
    let slow = fake("write_file", Risk::Write).delay(Duration::from_secs(12));
    let r = rig_with(
        vec![call("write_file", json!({})), Ok(say("ok"))],
        vec![slow],
        &[("KOTOBA_REASONING_EFFORT", "low")],
        "",
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(voice_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let said = says(&drain(&mut rx));
    assert_eq!(said, [(SayKind::Heartbeat, "Mmm...".to_string())]);
}

#[tokio::test(start_paused = true)]
async fn heartbeats_fall_at_nine_then_thirty_seconds_with_the_tools_lines() {
    let slow = fake("compile", Risk::Write)
        .delay(Duration::from_secs(32))
        .timeout_arg();
    let r = rig(
        vec![call("compile", json!({"timeout": 100})), Ok(say("ok"))],
        vec![slow],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let t0 = tokio::time::Instant::now();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(voice_turn("go"), crate::engine::TurnOptions::default())
            .await
    });
    let mut beats = Vec::new();
    while let Ok(ev) = rx.recv().await {
        match &ev.frame {
            Frame::Say {
                kind: SayKind::Heartbeat,
                text,
            } => beats.push((t0.elapsed().as_secs(), text.clone())),
            Frame::TurnDone { .. } => break,
            _ => {}
        }
    }
    turn.await.unwrap();
    assert_eq!(
        beats,
        [(9, "beat one".to_string()), (30, "beat two".to_string())]
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_past_its_budget_is_stopped_and_fails_with_124() {
    let stuck = fake("write_file", Risk::Write).delay(Duration::from_secs(3600));
    let r = rig(
        vec![call("write_file", json!({})), Ok(say("it hung"))],
        vec![stuck],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let t0 = tokio::time::Instant::now();
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(t0.elapsed().as_secs(), 30, "the default budget");
    let done = steps(&drain(&mut rx)).pop().unwrap();
    assert_eq!(done.outcome, Some(Outcome::Failed));
    assert!(tool_results(&r.script.sent()[1])[0].contains("budget of 30 s"));
}

#[tokio::test(start_paused = true)]
async fn a_cut_turn_closes_every_open_row_as_interrupted_and_clears_peek_and_chip() {
    let slow = fake("write_file", Risk::Write).delay(Duration::from_secs(20));
    let r = rig(
        vec![call("write_file", json!({})), Ok(say("never"))],
        vec![slow],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
            .await
    });
    tokio::time::sleep(Duration::from_secs(5)).await;
    turn.abort();
    let _ = turn.await;
    let frames = drain(&mut rx);
    let done = steps(&frames).pop().unwrap();
    assert_eq!(
        (done.phase, done.outcome, done.result.as_deref()),
        (
            Phase::Done,
            Some(Outcome::Interrupted),
            Some("(interrupted)")
        )
    );
    assert_eq!(frames.last(), Some(&Frame::Working { on: false }));
}

#[tokio::test(start_paused = true)]
async fn a_replacing_turn_cuts_the_running_one() {
    let slow = fake("write_file", Risk::Write).delay(Duration::from_secs(20));
    let r = rig(
        vec![call("write_file", json!({})), Ok(say("second answer"))],
        vec![slow],
    );
    let engine = r.engine.clone();
    let first = tokio::spawn(async move {
        engine
            .run_turn(voice_turn("first"), crate::engine::TurnOptions::default())
            .await
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = r
        .engine
        .run_turn(
            TurnRequest {
                replace_running: true,
                ..voice_turn("second")
            },
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(first.await.unwrap().status, TurnStatus::Interrupted);
    assert_eq!(second.text, "second answer");
}

#[tokio::test(start_paused = true)]
async fn a_second_message_waits_for_the_running_turn_and_is_not_dropped() {
    let slow = fake("write_file", Risk::Write).delay(Duration::from_secs(10));
    let r = rig(
        vec![
            call("write_file", json!({})),
            Ok(say("one")),
            Ok(say("two")),
        ],
        vec![slow],
    );
    let e1 = r.engine.clone();
    let first = tokio::spawn(async move {
        e1.run_turn(text_turn("first"), crate::engine::TurnOptions::default())
            .await
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = r
        .engine
        .run_turn(text_turn("second"), crate::engine::TurnOptions::default())
        .await;
    assert_eq!(first.await.unwrap().text, "one");
    assert_eq!(second.text, "two");
    let last = r.script.sent().pop().unwrap();
    assert!(
        last.items.contains(&Item::Assistant { text: "one".into() }),
        "the second turn sees the first"
    );
}

#[tokio::test(start_paused = true)]
async fn a_restart_keeps_the_conversation() {
    let r = rig(vec![Ok(say("nice to meet you"))], vec![]);
    r.engine
        .run_turn(text_turn("I am Ann"), crate::engine::TurnOptions::default())
        .await;
    let script = Script::new(vec![Ok(say("hi again"))]);
    let again = Engine::new(
        r.engine.config.clone(),
        script.clone(),
        Registry::new(),
        Soul::shipped(),
        Arc::new(Store::open(&r.engine.config.paths.db).unwrap()),
    );
    again
        .run_turn(
            text_turn("remember me?"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    let items = &script.sent()[0].items;
    assert_eq!(
        items[0],
        Item::User {
            text: "I am Ann".into()
        }
    );
    assert_eq!(
        items[1],
        Item::Assistant {
            text: "nice to meet you".into()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_hidden_turn_is_never_stored_in_the_transcript() {
    let r = rig(vec![Ok(say("the job finished"))], vec![]);
    r.engine
        .run_turn(
            TurnRequest {
                hidden: true,
                ..text_turn(WORK_DONE_SENTINEL)
            },
            crate::engine::TurnOptions::default(),
        )
        .await;
    let stored = r.engine.store.history("s1", 10).await.unwrap();
    assert!(stored.iter().all(|m| m.text != WORK_DONE_SENTINEL));
    assert!(r.engine.session("s1").await.history().iter().all(|i| *i
        != Item::User {
            text: WORK_DONE_SENTINEL.into()
        }));
}

#[tokio::test(start_paused = true)]
async fn the_next_action_clears_the_peek_and_a_failed_action_shows_the_fail_face() {
    let r = rig(
        vec![
            calls(&[
                ("memory_recall", json!({})),
                ("write_file", json!({"path": "a"})),
            ]),
            Ok(say("it failed")),
        ],
        vec![
            fake("memory_recall", Risk::Read),
            fake("write_file", Risk::Write).output(ToolOutput::failed("disk full")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .run_turn(text_turn("go"), crate::engine::TurnOptions::default())
        .await;
    let frames = drain(&mut rx);
    let peek_on = frames
        .iter()
        .position(|f| {
            *f == Frame::Peek {
                tool: Some("memory_recall".into()),
            }
        })
        .unwrap();
    let cleared = frames
        .iter()
        .position(|f| *f == Frame::Peek { tool: None })
        .unwrap();
    let row_start = frames
        .iter()
        .position(|f| matches!(f, Frame::Step(s) if s.phase == Phase::Start))
        .unwrap();
    assert!(
        peek_on < cleared && cleared < row_start,
        "the action cleared the peek before its row opened"
    );
    let failed_at = frames
        .iter()
        .position(|f| matches!(f, Frame::Step(s) if s.outcome == Some(Outcome::Failed)))
        .unwrap();
    assert_eq!(
        frames[failed_at + 1],
        Frame::Face {
            expression: "fail".into()
        }
    );
}
