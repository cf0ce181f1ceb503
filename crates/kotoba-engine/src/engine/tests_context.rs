//! Long conversations (docs/engine.md, "Long conversations"): every request fits the
//! window, the oldest lines fold into a durable summary that a restart resumes from, a
//! long job's outputs are shortened and summarised, and an overflow the provider
//! reports compacts and retries once. The scripted summariser keeps every line that
//! holds "remember".

use std::sync::Arc;

use serde_json::json;

use super::testing::*;
use super::*;
use crate::llm::tokens::Tokenizer;
use crate::llm::{LlmError, ModelRequest};
use crate::tools::ToolOutput;
use kotoba_core::protocol::*;

/// A line of about `words` words.
fn long_line(tag: &str, words: usize) -> String {
    let mut s = format!("{tag}:");
    for i in 0..words {
        s.push_str(&format!(" w{}", i % 97));
    }
    s
}

fn is_summariser(req: &ModelRequest) -> bool {
    req.system
        .starts_with(super::context::summarise::SUMMARISER)
}

/// Her own requests (not the summariser's).
fn turn_requests(r: &Rig) -> Vec<ModelRequest> {
    r.script
        .sent()
        .into_iter()
        .filter(|q| !is_summariser(q))
        .collect()
}

fn text_of(req: &ModelRequest) -> String {
    req.items
        .iter()
        .filter_map(|i| match i {
            Item::User { text } | Item::Assistant { text } => Some(text.as_str()),
            Item::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn turn(r: &Rig, text: &str) -> TurnResult {
    r.engine
        .run_turn(text_turn(text), TurnOptions::default())
        .await
}

const WINDOW: usize = 6_000;

fn small_window() -> String {
    format!("context:\n  window: {WINDOW}\n")
}

#[tokio::test(start_paused = true)]
async fn a_conversation_of_hundreds_of_long_lines_never_sends_more_than_the_window_and_keeps_its_first_fact(
) {
    let r = rig_with(vec![], vec![], &[], &small_window());
    *r.script.window.lock().unwrap() = Some(WINDOW);
    turn(&r, "please remember: my locker code is 4471").await;
    for i in 0..150 {
        r.script
            .replies
            .lock()
            .unwrap()
            .push_back(Ok(say(&long_line("answer", 120))));
        let res = turn(&r, &long_line(&format!("line {i}"), 150)).await;
        assert_eq!(res.status, TurnStatus::Completed, "turn {i}: {}", res.text);
    }
    let sent = turn_requests(&r);
    let largest = sent
        .iter()
        .map(|q| Tokenizer::O200k.request(q))
        .max()
        .unwrap();
    assert!(
        largest <= WINDOW,
        "a request of {largest} tokens > {WINDOW}"
    );
    assert!(sent.len() >= 150);
    let last = sent.last().unwrap();
    assert!(
        text_of(last).contains("my locker code is 4471"),
        "the first line's fact reaches the model at the end"
    );
    assert!(r.script.sent().iter().any(is_summariser));
    // Nothing is deleted: every line is still stored.
    let stored = r.engine.store.history("s1", 10_000).await.unwrap();
    assert_eq!(stored.len(), 2 * 151);
}

#[tokio::test(start_paused = true)]
async fn a_restart_resumes_from_the_stored_summary_and_the_lines_after_it() {
    let r = rig_with(vec![], vec![], &[], &small_window());
    turn(&r, "remember that Sam's birthday is 12 March").await;
    for i in 0..40 {
        let res = turn(&r, &long_line(&format!("chat {i}"), 200)).await;
        assert_eq!(res.status, TurnStatus::Completed);
    }
    let before_restart = turn_requests(&r).last().unwrap().clone();
    // A new engine on the same data folder: nothing in memory survives.
    let engine = Engine::new(
        r.engine.config.clone(),
        r.script.clone(),
        r.engine.tools().clone(),
        crate::soul::Soul::shipped(),
        Arc::new(kotoba_store::Store::open(&r.engine.config.paths.db).unwrap()),
    );
    let summary = engine
        .store
        .summary("s1")
        .await
        .unwrap()
        .expect("a stored summary");
    assert!(summary.text.contains("Sam's birthday is 12 March"));
    engine
        .run_turn(
            text_turn("what do you know about Sam?"),
            TurnOptions::default(),
        )
        .await;
    let after = turn_requests(&r).last().unwrap().clone();
    let first = text_of(&after);
    assert!(first.contains("Sam's birthday is 12 March"), "{first}");
    assert!(
        !first.contains("chat 0:"),
        "a line the summary covers is not sent again after a restart"
    );
    assert!(
        first.contains("chat 39:"),
        "the recent tail is kept verbatim"
    );
    let lines = |q: &ModelRequest| q.items.len();
    assert!(lines(&after) <= lines(&before_restart) + 2);
}

#[tokio::test(start_paused = true)]
async fn compaction_tells_the_surfaces_and_a_fresh_start_leaves_the_summary_behind() {
    let r = rig_with(vec![], vec![], &[], &small_window());
    let mut rx = r.engine.session("s1").await.subscribe();
    turn(&r, "remember: the blue door").await;
    for i in 0..30 {
        turn(&r, &long_line(&format!("talk {i}"), 200)).await;
    }
    let compacted: Vec<Frame> = drain(&mut rx)
        .into_iter()
        .filter(|f| matches!(f, Frame::Compacted { .. }))
        .collect();
    assert!(!compacted.is_empty());
    if let Frame::Compacted {
        lines,
        tokens_before,
        tokens_after,
    } = &compacted[0]
    {
        assert!(*lines >= 2 && tokens_after < tokens_before);
    }
    r.engine.reset_session("s1").await.unwrap();
    turn(&r, "hello again").await;
    let last = turn_requests(&r).last().unwrap().clone();
    assert!(!text_of(&last).contains("the blue door"));
    assert_eq!(last.items.len(), 1, "a fresh start sends only the new line");
}

#[tokio::test(start_paused = true)]
async fn a_job_with_huge_tool_outputs_finishes_without_an_overflow() {
    let big = "x".repeat(10) + &" log line with numbers 12345".repeat(570); // ~16,000 chars
    let big_len = big.len();
    let r = rig_with(
        vec![],
        vec![fake("lookup", Risk::Read).output(ToolOutput::ok(big))],
        &[("KOTOBA_PER_TOOL_LIMIT", "50")],
        "context:\n  window: 8000\nwork_max_iter: 45\nwork_max_tool_calls: 44\n",
    );
    *r.script.window.lock().unwrap() = Some(8_000);
    let mut replies: Vec<_> = (0..40)
        .map(|i| call("lookup", json!({ "page": i })))
        .collect();
    replies.push(Ok(say("all 40 pages read")));
    super::tests_work::job_script(&r, replies);
    let mut rx = r.engine.session("s1").await.subscribe();
    r.engine
        .start_job(&starter("s1", None, Some(false)), "read the 40 pages")
        .await
        .unwrap();
    let seen = super::tests_work::frames_until(&mut rx, super::tests_work::is_work_done).await;
    let Some(Frame::WorkDone { ok, summary }) = seen.last().map(|e| e.frame.clone()) else {
        panic!("no work_done");
    };
    assert!(ok, "{summary}");
    assert!(summary.contains("all 40 pages read"), "{summary}");
    let largest = r
        .script
        .sent()
        .iter()
        .map(|q| Tokenizer::O200k.request(q))
        .max()
        .unwrap();
    assert!(largest <= 8_000, "{largest}");
    // The newest output reaches the model whole; the older ones were shortened or
    // summarised, not cut from the request at the last moment.
    let last = r
        .script
        .sent()
        .into_iter()
        .rfind(|q| !is_summariser(q))
        .unwrap();
    let results = tool_results(&last);
    assert_eq!(
        results.last().map(String::len),
        Some(big_len),
        "the newest output is whole: {results:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_overflow_the_provider_reports_compacts_and_retries_once() {
    let r = rig(
        vec![Err(LlmError::ContextTooLong), Ok(say("fits now"))],
        vec![],
    );
    let res = turn(&r, "hello").await;
    assert_eq!(res.status, TurnStatus::Completed);
    assert_eq!(res.text, "fits now");
    assert_eq!(turn_requests(&r).len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_second_overflow_ends_the_turn_with_one_sentence_and_loses_nothing() {
    let r = rig(
        vec![Err(LlmError::ContextTooLong), Err(LlmError::ContextTooLong)],
        vec![],
    );
    let res = turn(&r, "remember my words").await;
    assert_eq!(res.status, TurnStatus::Error);
    assert_eq!(res.text, LlmError::ContextTooLong.user_sentence());
    assert_eq!(turn_requests(&r).len(), 2, "retried once, not more");
    let stored = r.engine.store.history("s1", 10).await.unwrap();
    assert_eq!(stored[0].text, "remember my words");
}

#[tokio::test(start_paused = true)]
async fn a_small_window_keeps_the_summary_and_only_the_newest_exchange() {
    // The fixed part (instructions and tools) takes most of this window.
    let probe = rig(vec![], vec![]);
    turn(&probe, "hi").await;
    let fixed = Tokenizer::O200k.fixed(&turn_requests(&probe)[0]);
    let window = fixed + 900;
    let r = rig_with(
        vec![],
        vec![],
        &[],
        &format!("context:\n  window: {window}\n"),
    );
    *r.script.window.lock().unwrap() = Some(window);
    turn(&r, "remember: the cat is called Miso").await;
    for i in 0..12 {
        let res = turn(&r, &long_line(&format!("n{i}"), 60)).await;
        assert_eq!(res.status, TurnStatus::Completed, "{}", res.text);
    }
    let last = turn_requests(&r).last().unwrap().clone();
    let text = text_of(&last);
    assert!(text.contains("the cat is called Miso"), "{text}");
    assert!(text.contains("n11:"));
    assert!(
        !text.contains("n9:"),
        "only the newest exchange stays verbatim"
    );
}

#[tokio::test(start_paused = true)]
async fn nothing_is_asked_ahead_of_a_turn_that_must_compact_first() {
    let r = rig_with(vec![Ok(say("short answer"))], vec![], &[], &small_window());
    let words = long_line("a very long voice request", 6_000);
    let speculation = r.engine.speculate(&text_turn(&words)).await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert!(r.script.sent().is_empty(), "nothing asked ahead");
    let res = r
        .engine
        .run_turn(
            text_turn(&words),
            TurnOptions {
                prepared: Some(speculation),
                ..TurnOptions::default()
            },
        )
        .await;
    assert_eq!(res.status, TurnStatus::Completed);
    assert_eq!(res.text, "short answer");
    let sent = turn_requests(&r);
    assert!(Tokenizer::O200k.request(&sent[0]) <= WINDOW);
}

/// The rig's engine rebuilt with the real built-in tools (their definitions are large).
fn with_builtin_tools(r: Rig) -> Rig {
    let engine = Engine::new(
        r.engine.config.clone(),
        r.script.clone(),
        crate::tools::builtin::builtin_registry(),
        crate::soul::Soul::shipped(),
        r.engine.store.clone(),
    );
    Rig { engine, ..r }
}

#[tokio::test(start_paused = true)]
async fn a_window_the_tool_definitions_fill_is_still_answered_in_words() {
    let probe = with_builtin_tools(rig(vec![], vec![]));
    turn(&probe, "hi").await;
    let first = turn_requests(&probe)[0].clone();
    let tools = Tokenizer::O200k.tools(&first.tools);
    let full = Tokenizer::O200k.fixed(&first);
    assert!(tools > 1_000, "{tools}");
    // Room for the instructions and a line, not for the tool definitions too.
    let window = (full - tools + 300) * 10 / 9;
    let r = with_builtin_tools(rig_with(
        vec![Ok(say("still here"))],
        vec![],
        &[],
        &format!("context:\n  window: {window}\n"),
    ));
    let res = turn(&r, "hello").await;
    assert_eq!(res.status, TurnStatus::Completed, "{}", res.text);
    assert_eq!(res.text, "still here");
    let sent = turn_requests(&r);
    assert!(sent[0].tools.is_empty());
    assert!(Tokenizer::O200k.request(&sent[0]) <= window);
}
