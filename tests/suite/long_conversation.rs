//! Long conversations through the page's API on the real `kotoba serve` (docs/engine.md
//! "Long conversations"): with a small `context.window` in settings.yaml, a conversation
//! of many long lines never sends the model more than the window; its first fact still
//! reaches the model at the end and after `kill -9` and a restart, which resumes from
//! the stored summary and the lines after it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kotoba::llm::tokens::Tokenizer;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use super::crash::{get, model_env, post_message};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::{free_port, healthy, serve};

const WINDOW: usize = 12_000;
const FACT: &str = "remember: the spare key is under the blue pot";

/// The scripted summariser keeps every line that holds "remember"; every other request
/// is answered with a short line.
fn summariser(model: &ScriptedModel) {
    model.set_responder(Arc::new(|body: &Value| {
        let system = body.pointer("/messages/0/content")?.as_str()?;
        if !system.starts_with("You write handoff summaries.") {
            return None;
        }
        let text = body.pointer("/messages/1/content")?.as_str()?;
        let kept: Vec<&str> = text.lines().filter(|l| l.contains("remember")).collect();
        let mut unique: Vec<&str> = Vec::new();
        for l in kept {
            if !unique.contains(&l) {
                unique.push(l);
            }
        }
        Some((
            Reply::text(&format!("Summary: {}", unique.join(" | "))),
            Duration::ZERO,
        ))
    }));
    model.set_fallback(Reply::text("Noted, thank you."));
}

fn long_line(n: usize) -> String {
    let mut s = format!("line {n}:");
    for i in 0..300 {
        s.push_str(&format!(" word{}", (i * 7 + n) % 101));
    }
    s
}

/// Post a line and wait until her answer to it is stored.
async fn say(port: u16, text: &str) {
    let before = answers(port).await;
    post_message(port, "long", text).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while answers(port).await <= before {
        assert!(Instant::now() < deadline, "no answer to {text:.40}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn answers(port: u16) -> usize {
    let history = get(port, "/api/history?session=long").await;
    history
        .as_array()
        .map(|a| a.iter().filter(|l| l["role"] == "assistant").count())
        .unwrap_or(0)
}

fn conversation_requests(model: &ScriptedModel) -> Vec<Value> {
    model
        .requests()
        .into_iter()
        .filter(|b| {
            !b.pointer("/messages/0/content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .starts_with("You write handoff summaries.")
        })
        .collect()
}

#[tokio::test]
async fn a_long_conversation_on_the_page_stays_within_a_small_window_and_survives_kill_9() {
    let model = ScriptedModel::start().await;
    summariser(&model);
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!("context:\n  window: {WINDOW}\n"),
    )
    .unwrap();
    let env = model_env(&model);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut first = serve(home.path(), &addr, &env);
    healthy(port).await;
    say(port, FACT).await;
    for n in 0..45 {
        say(port, &long_line(n)).await;
    }
    let sent = conversation_requests(&model);
    let largest = sent
        .iter()
        .map(|b| Tokenizer::O200k.count(&b.to_string()))
        .max()
        .unwrap();
    assert!(
        largest <= WINDOW,
        "a request of {largest} tokens > {WINDOW}"
    );
    let last = sent.last().unwrap().to_string();
    assert!(
        last.contains("the spare key is under the blue pot"),
        "the first fact at the end"
    );
    assert!(
        !last.contains("line 0:"),
        "the oldest lines were summarised"
    );
    assert!(
        model.requests().len() > sent.len(),
        "the summariser was asked"
    );

    kill(Pid::from_raw(first.id().unwrap() as i32), Signal::SIGKILL).unwrap();
    first.wait().await.unwrap();
    let _second = serve(home.path(), &addr, &env);
    healthy(port).await;
    say(port, "where is the spare key?").await;
    let after = conversation_requests(&model).last().unwrap().to_string();
    assert!(
        after.contains("the spare key is under the blue pot"),
        "{after:.400}"
    );
    assert!(
        after.contains("line 44:"),
        "the recent tail resumes verbatim"
    );
    assert!(
        !after.contains("line 0:"),
        "covered lines are not sent again"
    );
    // The page's status says how much of the window the session uses.
    let status = get(port, "/api/status?session=long").await;
    let context = &status["context"];
    assert_eq!(context["window"], WINDOW as u64, "{status}");
    assert_eq!(context["summarised"], true, "{status}");
    let tokens = context["tokens"].as_u64().unwrap();
    assert!(tokens > 500 && tokens < WINDOW as u64, "{status}");
    let bad = kotoba_testkit::web::get_with_token(&format!(
        "http://127.0.0.1:{port}/api/status?session=..%2F"
    ))
    .await;
    assert_eq!(bad.status(), 400);
    // Nothing was deleted: the page still shows the newest stored lines.
    let history = get(port, "/api/history?session=long").await;
    assert_eq!(history.as_array().unwrap().len(), 2 * 47);
}
