//! Work mode (engine.md §4): the job runner, its frames and run_id, one job per
//! session, the brief, the compute budget, the endings, the announce turn, questions
//! that block on a card, helpers and step zero.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast;

use super::testing::*;
use super::*;
use crate::llm::{LlmError, ModelReply};
use kotoba_core::protocol::*;

pub(crate) fn job_script(r: &Rig, replies: Vec<Result<ModelReply, LlmError>>) {
    r.script.job_replies.lock().unwrap().extend(replies);
}

pub(crate) async fn frames_until(
    rx: &mut broadcast::Receiver<Arc<Event>>,
    stop: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let ev = rx.recv().await.unwrap();
        let done = stop(&ev);
        seen.push((*ev).clone());
        if done {
            return seen;
        }
    }
}

/// The same rig with the real start_work tool registered.
pub(crate) fn with_start_work(base: Rig) -> Rig {
    let mut reg = base.engine.tools().clone();
    reg.register(Arc::new(crate::tools::work::StartWork::default()));
    let engine = Engine::new(
        base.engine.config.clone(),
        base.script.clone(),
        reg,
        Soul::shipped(),
        base.engine.store.clone(),
    );
    Rig {
        engine,
        script: base.script.clone(),
        _home: base._home,
    }
}

/// An engine on the same data folder and script with the real built-in tools.
fn builtin_engine(r: &Rig) -> Arc<Engine> {
    Engine::new(
        r.engine.config.clone(),
        r.script.clone(),
        crate::tools::builtin::builtin_registry(),
        Soul::shipped(),
        r.engine.store.clone(),
    )
}

pub(crate) fn is_work_done(ev: &Event) -> bool {
    matches!(ev.frame, Frame::WorkDone { .. })
}

fn job_request_text(r: &Rig) -> String {
    r.script
        .sent()
        .iter()
        .find_map(|req| match req.items.first() {
            Some(crate::llm::Item::User { text })
                if text.starts_with("Goal of this background job") =>
            {
                Some(text.clone())
            }
            _ => None,
        })
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn start_work_returns_at_once_and_the_job_reports_through_frames_with_its_run_id() {
    let r = rig(
        vec![
            call("start_work", json!({"goal": "tidy the notes"})),
            Ok(say("On it.")),
        ],
        vec![fake("write_file", Risk::Write)],
    );
    let r = with_start_work(r);
    job_script(
        &r,
        vec![
            call("write_file", json!({"path": "notes.md"})),
            Ok(say("Tidied 3 notes.")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let res = r
        .engine
        .run_turn(
            text_turn("please tidy my notes at https://x.example/a"),
            crate::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(res.text, "On it.");
    // The turn's second request (the job's own may come between them).
    let sent = r.script.sent();
    let fed = sent
        .iter()
        .filter(|req| {
            req.items.iter().any(|i| {
                matches!(i, crate::llm::Item::User { text } if text.starts_with("please tidy my notes"))
            })
        })
        .nth(1)
        .and_then(|req| {
            req.items.iter().rev().find_map(|i| match i {
                crate::llm::Item::ToolResult { output, .. } => Some(output.clone()),
                _ => None,
            })
        });
    assert!(
        fed.unwrap().contains("LAUNCHED in the background"),
        "the narrow sentence"
    );
    let events = frames_until(&mut rx, is_work_done).await;
    let run_id = events.iter().find_map(|e| match e.frame {
        Frame::WorkStarted { .. } => e.run_id.clone(),
        _ => None,
    });
    let run_id = run_id.expect("work_started carries the run_id");
    assert_eq!(run_id.len(), 8);
    let job_rows: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e.frame, Frame::Step(_)) && e.run_id.as_deref() == Some(&run_id))
        .collect();
    assert_eq!(
        job_rows.len(),
        2,
        "the job's row opened and closed under its run_id"
    );
    let done = events.last().unwrap();
    assert_eq!(done.run_id.as_deref(), Some(run_id.as_str()));
    assert!(
        matches!(&done.frame, Frame::WorkDone { ok: true, summary } if summary.contains("Tidied 3 notes"))
    );
    let brief = job_request_text(&r);
    assert!(
        brief.contains("tidy the notes")
            && brief.contains("https://x.example/a")
            && brief.contains("OVERRIDE")
    );
    assert!(!r.engine.session("s1").await.job_running());
}

#[tokio::test(start_paused = true)]
async fn a_second_job_in_the_same_session_is_refused_with_a_sentence() {
    let r = rig(
        vec![],
        vec![fake("compile", Risk::Write).delay(Duration::from_secs(20))],
    );
    job_script(&r, vec![call("compile", json!({})), Ok(say("built"))]);
    r.engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "build it",
        )
        .await
        .unwrap();
    let err = r
        .engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "build again",
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already running"), "{err}");
    assert!(
        r.engine
            .start_job(
                &super::testing::starter("s2", None, Some(false)),
                "other session"
            )
            .await
            .is_ok(),
        "one job per session, not per process"
    );
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_captured_at_creation_and_counts_only_compute_time() {
    // work_timeout 60 s; the tool runs 70 s of compute: took too long.
    let r = rig_with(
        vec![],
        vec![fake("compile", Risk::Write)
            .delay(Duration::from_secs(70))
            .timeout_arg()],
        &[],
        "work_timeout: 60\n",
    );
    job_script(
        &r,
        vec![call("compile", json!({"timeout": 600})), Ok(say("built"))],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let t0 = tokio::time::Instant::now();
    r.engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "build it",
        )
        .await
        .unwrap();
    std::fs::write(
        r.engine.config.paths.settings.clone(),
        "work_timeout: 9000\n",
    )
    .unwrap();
    let events = frames_until(&mut rx, is_work_done).await;
    assert_eq!(
        t0.elapsed().as_secs(),
        60,
        "the budget captured at creation, not the later setting"
    );
    assert!(
        matches!(&events.last().unwrap().frame, Frame::WorkDone { ok: false, summary } if summary.contains("took too long"))
    );
    // Born in a /v1 turn: 1500 s whatever the setting.
    let r = rig_with(
        vec![],
        vec![fake("compile", Risk::Write)
            .delay(Duration::from_secs(1600))
            .timeout_arg()],
        &[],
        "work_timeout: 9000\n",
    );
    job_script(
        &r,
        vec![
            call("compile", json!({"timeout": 600})),
            call("compile", json!({"timeout": 601})),
            call("compile", json!({"timeout": 602})),
            Ok(say("built")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    let t0 = tokio::time::Instant::now();
    r.engine
        .start_job(&super::testing::starter("s1", None, Some(true)), "build it")
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    assert_eq!(t0.elapsed().as_secs(), 1500);
}

#[tokio::test(start_paused = true)]
async fn time_waiting_on_a_persons_card_is_not_charged_to_the_budget() {
    // 60 s of compute; the shell call takes 40 s after 100 s on its card. Charged wall
    // time would be 140 s and end the job; charged compute is 40 s.
    let slow = fake("shell", Risk::Exec).delay(Duration::from_secs(40));
    let r = rig_with(vec![], vec![slow], &[], "work_timeout: 60\nowners: [7]\n");
    job_script(
        &r,
        vec![call("shell", json!({"command": "make"})), Ok(say("built"))],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "build it",
        )
        .await
        .unwrap();
    let card = loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            break c.clone();
        }
    };
    tokio::time::sleep(Duration::from_secs(100)).await; // a slow password, 2FA…
    let owner = Answerer {
        id: "7".into(),
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
        .expect("the configured owner answers the card");
    let events = frames_until(&mut rx, is_work_done).await;
    assert!(
        matches!(
            &events.last().unwrap().frame,
            Frame::WorkDone { ok: true, .. }
        ),
        "100 s on the card + 40 s of work is 40 s of compute, inside 60 s"
    );
}

#[tokio::test(start_paused = true)]
async fn the_per_tool_cap_is_the_environments_in_work_mode_too() {
    let tool = fake("compile", Risk::Write);
    let runs = tool.runs.clone();
    let r = rig_with(
        vec![],
        vec![tool],
        &[("KOTOBA_PER_TOOL_LIMIT", "2")],
        "work_max_tool_calls: 40\n",
    );
    job_script(
        &r,
        vec![
            call("compile", json!({"n": 1})),
            call("compile", json!({"n": 2})),
            call("compile", json!({"n": 3})),
            Ok(say("built twice")),
        ],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "build")
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the third call of one tool never ran"
    );
    let last = r.script.sent().pop().unwrap();
    let capped = last.items.iter().rev().find_map(|i| match i {
        crate::llm::Item::ToolResult { output, .. } => Some(output.clone()),
        _ => None,
    });
    assert_eq!(
        capped,
        Some(super::budget::per_tool_cap_sentence("compile", 2)),
        "KOTOBA_PER_TOOL_LIMIT rides on top of the work total"
    );
}

#[tokio::test(start_paused = true)]
async fn work_caps_are_read_from_settings_for_each_new_job() {
    let r = rig_with(
        vec![],
        vec![fake("compile", Risk::Write)],
        &[],
        "work_max_tool_calls: 1\n",
    );
    job_script(
        &r,
        vec![call("compile", json!({"n": 1})), Ok(say("done with one"))],
    );
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "build")
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    let job_requests: Vec<_> = r
        .script
        .sent()
        .into_iter()
        .filter(|q| !q.items.is_empty())
        .collect();
    assert!(
        job_requests[1].tools.is_empty(),
        "one call spent: words only"
    );
    std::fs::write(
        r.engine.config.paths.settings.clone(),
        "work_max_tool_calls: 5\n# changed\n",
    )
    .unwrap();
    job_script(&r, vec![call("compile", json!({"n": 2})), Ok(say("again"))]);
    r.engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "build again",
        )
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    let last = r.script.sent().pop().unwrap();
    assert!(
        !last.tools.is_empty(),
        "the new cap applies to the next job without a restart"
    );
}

#[tokio::test(start_paused = true)]
async fn a_requested_stop_announces_nothing_but_closes_the_bracket() {
    let r = rig(
        vec![],
        vec![fake("compile", Risk::Write).delay(Duration::from_secs(600))],
    );
    job_script(&r, vec![call("compile", json!({})), Ok(say("never"))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let run_id = r
        .engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "build")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let info = r
        .engine
        .stop("s1", crate::engine::StopScope::Work)
        .job
        .unwrap();
    assert_eq!((info.goal.as_str(), info.steps), ("build", 1));
    let events = frames_until(&mut rx, |e| {
        e.frame == Frame::Working { on: false } && e.run_id.as_deref() == Some(run_id.as_str())
    })
    .await;
    assert!(
        !events.iter().any(is_work_done),
        "a requested stop announces nothing"
    );
    assert!(events
        .iter()
        .any(|e| matches!(&e.frame, Frame::Step(s) if s.outcome == Some(Outcome::Interrupted))));
    assert!(r.engine.jobs.info("s1").is_none());
}

#[tokio::test(start_paused = true)]
async fn an_unrequested_cancellation_is_recorded_as_a_failure() {
    let r = rig(
        vec![],
        vec![fake("compile", Risk::Write).delay(Duration::from_secs(600))],
    );
    job_script(&r, vec![call("compile", json!({})), Ok(say("never"))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "build")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    r.engine.shutdown();
    let events = frames_until(&mut rx, is_work_done).await;
    assert!(
        matches!(&events.last().unwrap().frame, Frame::WorkDone { ok: false, summary } if summary.contains("without a request"))
    );
}

#[tokio::test(start_paused = true)]
async fn the_announce_turn_runs_once_and_its_sentinel_never_reaches_the_transcript() {
    let r = rig(vec![Ok(say("Your notes are tidy now."))], vec![]);
    job_script(&r, vec![Ok(say("Tidied."))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let run_id = r
        .engine
        .start_job(&super::testing::starter("s1", None, Some(false)), "tidy")
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    let said = r
        .engine
        .announce_work(
            "s1",
            &run_id,
            "The job 'tidy' finished. Its report: Tidied.",
            Register::Text,
        )
        .await
        .unwrap();
    assert_eq!(said.text, "Your notes are tidy now.");
    assert!(
        r.engine
            .announce_work(
                "s1",
                &run_id,
                "The job 'tidy' finished. Its report: Tidied.",
                Register::Text
            )
            .await
            .is_none(),
        "announced exactly once"
    );
    let stored = r.engine.store.history("s1", 50).await.unwrap();
    assert!(stored.iter().all(|m| !m.text.contains(WORK_DONE_SENTINEL)));
    assert!(stored.iter().any(|m| m.text == "Your notes are tidy now."));
}

#[tokio::test(start_paused = true)]
async fn a_question_in_a_job_blocks_on_a_card_and_is_refused_before_asking_when_nobody_can_draw_it()
{
    let r = rig(vec![], vec![]);
    let reg_engine = builtin_engine(&r);
    job_script(
        &r,
        vec![
            call("clarify", json!({"question": "Which folder?"})),
            Ok(say("nobody to ask")),
        ],
    );
    let mut rx = reg_engine.session("quiet").await.subscribe();
    drop(rx);
    reg_engine
        .start_job(
            &super::testing::starter("quiet", None, Some(false)),
            "sort files",
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let fed = r
        .script
        .sent()
        .iter()
        .flat_map(|q| q.items.iter().cloned().collect::<Vec<_>>())
        .find_map(|i| match i {
            crate::llm::Item::ToolResult { output, .. } => Some(output),
            _ => None,
        });
    assert!(fed.unwrap().contains("NOT asked"));
    // With a listener: an input card, answered with text.
    job_script(
        &r,
        vec![
            call("ask_user", json!({"question": "Which folder?"})),
            Ok(say("used docs")),
        ],
    );
    rx = reg_engine.session("seen").await.subscribe();
    reg_engine
        .start_job(
            &super::testing::starter("seen", None, Some(false)),
            "sort files",
        )
        .await
        .unwrap();
    let card = loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            break c.clone();
        }
    };
    assert_eq!((card.kind, card.window_secs), (CardKind::Input, 300));
    let me = Answerer {
        id: "x".into(),
        name: "ann".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    };
    let _ = reg_engine
        .cards
        .answer(
            &card.request_id,
            kotoba_core::protocol::CardAnswer::text("docs"),
            &me,
        )
        .await;
    let events = frames_until(&mut rx, is_work_done).await;
    assert!(matches!(
        &events.last().unwrap().frame,
        Frame::WorkDone { .. }
    ));
}

#[tokio::test(start_paused = true)]
async fn helpers_run_under_subagent_frames_and_a_failed_helper_is_not_a_success() {
    let r = rig(vec![], vec![]);
    let engine = builtin_engine(&r);
    job_script(
        &r,
        vec![
            call(
                "delegate",
                json!({"tasks": ["find the bug", "Find  the bug", "write the test"]}),
            ),
            Ok(say("merged")),
        ],
    );
    r.script.helper_replies.lock().unwrap().extend([
        Ok(say("found it in parse()")),
        Err(LlmError::Stream("eof".into())),
    ]);
    let mut rx = engine.session("s1").await.subscribe();
    engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "fix the parser",
        )
        .await
        .unwrap();
    let events = frames_until(&mut rx, is_work_done).await;
    let spawned = events
        .iter()
        .filter(|e| matches!(e.frame, Frame::SubagentSpawned { .. }))
        .count();
    assert_eq!(spawned, 2, "the duplicate goal was removed before launch");
    let done: Vec<bool> = events
        .iter()
        .filter_map(|e| match &e.frame {
            Frame::SubagentDone { ok, .. } => Some(*ok),
            _ => None,
        })
        .collect();
    assert_eq!(done.len(), 2);
    assert!(
        done.contains(&false),
        "the helper whose model failed is not reported ok"
    );
    let fed = r
        .script
        .sent()
        .iter()
        .flat_map(|q| q.items.iter().cloned().collect::<Vec<_>>())
        .find_map(|i| match i {
            crate::llm::Item::ToolResult { output, .. } => Some(output),
            _ => None,
        });
    assert!(fed.unwrap().contains("Not every helper succeeded"));
}

#[tokio::test(start_paused = true)]
async fn step_zero_requires_skill_view_on_the_one_matching_skill_first() {
    let r = rig(vec![], vec![]);
    let dir = r.engine.config.paths.home.join("skills/release-notes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Draft notes\n---\n1. Read git log.",
    )
    .unwrap();
    let engine = builtin_engine(&r);
    job_script(
        &r,
        vec![
            call("memory_recall", json!({"query": "version"})),
            call("skill_view", json!({"name": "release-notes"})),
            Ok(say("drafted")),
        ],
    );
    let mut rx = engine.session("s1").await.subscribe();
    engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "write the release notes",
        )
        .await
        .unwrap();
    frames_until(&mut rx, is_work_done).await;
    let sent = r.script.sent();
    let outputs: Vec<String> = sent
        .last()
        .unwrap()
        .items
        .iter()
        .filter_map(|i| match i {
            crate::llm::Item::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert!(outputs[0].starts_with("Step zero"), "{outputs:?}");
    assert!(outputs[1].contains("Read git log"));
    assert!(sent[0]
        .items
        .iter()
        .any(|i| matches!(i, crate::llm::Item::User { text } if text.contains("Step zero"))));
}

#[tokio::test]
async fn a_secret_typed_into_a_card_is_usable_by_shell_and_never_appears_in_a_frame_or_the_model_input(
) {
    let r = rig(vec![], vec![]);
    let engine = builtin_engine(&r);
    job_script(
        &r,
        vec![
            call(
                "ask_secret",
                json!({"name": "gh", "why": "to call the API"}),
            ),
            call("get_credential", json!({"name": "gh"})),
            call("shell", json!({"command": "echo token=$KOTOBA_SECRET_GH"})),
            Ok(say("used it")),
        ],
    );
    let mut rx = engine.session("terminal:me").await.subscribe();
    // As the terminal's start_work call would: the owner's turn starts it.
    engine
        .start_job(
            &super::testing::local_starter("terminal:me"),
            "call the api",
        )
        .await
        .unwrap();
    let me = Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    };
    let mut all = Vec::new();
    loop {
        let ev = rx.recv().await.unwrap();
        all.push(serde_json::to_string(&*ev).unwrap());
        match &ev.frame {
            Frame::Card(c) if c.tool == "ask_secret" => engine
                .cards
                .answer(
                    &c.request_id,
                    kotoba_core::protocol::CardAnswer::text("ghp_SECRETVALUE1"),
                    &me,
                )
                .await
                .unwrap(),
            Frame::Card(c) => engine
                .answer(
                    &c.request_id,
                    kotoba_core::protocol::CardAnswer::of(Decision::Approve),
                    &me,
                )
                .await
                .unwrap(),
            Frame::WorkDone { .. } => break,
            _ => {}
        }
    }
    assert!(
        all.iter().all(|f| !f.contains("ghp_SECRETVALUE1")),
        "no frame carries the value"
    );
    let sent = serde_json::to_string(&format!("{:?}", r.script.sent())).unwrap();
    assert!(
        !sent.contains("ghp_SECRETVALUE1"),
        "the model never sees the value"
    );
    assert!(
        sent.contains("token=[secret $KOTOBA_SECRET_GH]"),
        "the shell really had it, and its output was redacted"
    );
    assert_eq!(engine.store.secret_names().await.unwrap(), ["gh"]);
}

#[tokio::test(start_paused = true)]
async fn a_running_job_is_marked_in_the_store_so_a_crash_announces_it_and_an_ended_one_is_not() {
    let r = rig(
        vec![],
        vec![fake("compile", Risk::Write).delay(Duration::from_secs(600))],
    );
    job_script(&r, vec![call("compile", json!({})), Ok(say("never"))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let run_id = r
        .engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "build the site",
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // As if this process had died: its running job is announced, once.
    let cut = r.engine.store.recover_jobs(|_| false).await.unwrap();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert_eq!(cut[0].0, "s1");
    assert!(cut[0].1.contains("'build the site'") && cut[0].1.contains("NOT done"));
    // A job that ends (here: stopped) leaves nothing for a restart.
    let id = r.engine.store.open_job("x", "s2", "other").await.unwrap();
    assert!(r.engine.store.close_job(id).await.is_ok());
    r.engine.stop("s1", crate::engine::StopScope::Work);
    frames_until(&mut rx, |e| {
        e.frame == Frame::Working { on: false } && e.run_id.as_deref() == Some(run_id.as_str())
    })
    .await;
    assert!(r
        .engine
        .store
        .recover_jobs(|_| false)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test(start_paused = true)]
async fn clarify_in_a_job_waits_180_seconds_then_expires_unanswered() {
    let r = rig(vec![], vec![]);
    let engine = builtin_engine(&r);
    job_script(
        &r,
        vec![
            call(
                "clarify",
                json!({"question": "Which folder, docs or notes?"}),
            ),
            Ok(say("went with docs")),
        ],
    );
    let mut rx = engine.session("s1").await.subscribe();
    engine
        .start_job(
            &super::testing::starter("s1", None, Some(false)),
            "sort files",
        )
        .await
        .unwrap();
    let (card, drawn) = loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            break (c.clone(), tokio::time::Instant::now());
        }
    };
    assert_eq!((card.kind, card.window_secs), (CardKind::Input, 180));
    let events = frames_until(&mut rx, |e| {
        matches!(&e.frame, Frame::CardSettled { request_id, .. } if *request_id == card.request_id)
    })
    .await;
    let waited = drawn.elapsed();
    assert!(
        waited >= Duration::from_secs(180) && waited < Duration::from_secs(182),
        "clarify's card waits its 180 s, no less and not much more: {waited:?}"
    );
    assert!(matches!(
        &events.last().unwrap().frame,
        Frame::CardSettled {
            settlement: CardSettlement::Expired,
            ..
        }
    ));
    frames_until(&mut rx, is_work_done).await;
    let fed = r
        .script
        .sent()
        .iter()
        .flat_map(|q| q.items.iter().cloned().collect::<Vec<_>>())
        .find_map(|i| match i {
            crate::llm::Item::ToolResult { output, .. } => Some(output),
            _ => None,
        })
        .unwrap();
    assert!(fed.contains("expired after 180 s"), "{fed}");
}

#[tokio::test(start_paused = true)]
async fn a_job_brief_keeps_the_first_2000_characters_of_the_persons_words() {
    let r = with_start_work(rig(
        vec![
            call("start_work", json!({"goal": "summarise what I pasted"})),
            Ok(say("On it.")),
        ],
        vec![],
    ));
    job_script(&r, vec![Ok(say("Summarised."))]);
    let mut rx = r.engine.session("s1").await.subscribe();
    let words = format!("{}{}", "a".repeat(2000), "Z".repeat(500));
    r.engine
        .run_turn(text_turn(&words), crate::engine::TurnOptions::default())
        .await;
    frames_until(&mut rx, is_work_done).await;
    let brief = job_request_text(&r);
    assert!(
        brief.contains(&"a".repeat(2000)),
        "the words are kept verbatim"
    );
    assert!(
        !brief.contains('Z'),
        "nothing past the 2000th character reaches the job: {} chars",
        brief.len()
    );
}
