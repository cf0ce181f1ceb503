//! More crashes of the real `kotoba serve` (SIGKILL, then a restart on the same data
//! folder), checked through the page's HTTP API: killed while the model's answer is
//! still on its way, her line is kept and the turn says it was cut; killed while a
//! background job runs, the job is announced once in its session — its goal and that
//! it is not done.

use kotoba_testkit::until;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use super::crash::{get, model_env, post_message};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::{free_port, healthy, serve, stop};

fn texts(history: &Value) -> Vec<String> {
    history
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn a_turn_killed_while_the_answer_streams_keeps_her_line_and_says_it_was_cut() {
    let model = ScriptedModel::start().await;
    model.set_delay(Duration::from_secs(30));
    model.set_fallback(Reply::text("A long story."));
    let home = tempfile::tempdir().unwrap();
    let env = model_env(&model);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut first = serve(home.path(), &addr, &env);
    healthy(port).await;
    post_message(port, "stream", "tell me a long story").await;
    until(
        "the model being asked",
        Duration::from_secs(20),
        async || model.request_count() >= 1,
    )
    .await;
    kill(Pid::from_raw(first.id().unwrap() as i32), Signal::SIGKILL).unwrap();
    first.wait().await.unwrap();
    model.set_delay(Duration::ZERO);
    let second = serve(home.path(), &addr, &env);
    healthy(port).await;
    let lines = texts(&get(port, "/api/history?session=stream").await);
    assert!(
        lines.iter().any(|l| l == "tell me a long story"),
        "{lines:?}"
    );
    assert!(
        lines.last().is_some_and(|l| l.contains("cut by a restart")),
        "{lines:?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("cut by a restart"))
            .count(),
        1,
        "{lines:?}"
    );
    stop(second).await;
}

#[tokio::test]
async fn a_job_killed_while_it_runs_is_announced_once_in_its_session_as_not_done() {
    let model = ScriptedModel::start().await;
    model.push(Reply::call(
        "start_work",
        json!({ "goal": "count the stars" }),
    ));
    // The chat turn's next request and the job's first race for the script, so both
    // get the same allowlisted command: whichever asks first, the job runs one.
    model.push(Reply::call("shell", json!({ "command": "sleep 20" })));
    model.push(Reply::call("shell", json!({ "command": "sleep 20" })));
    model.set_fallback(Reply::text("Done."));
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        "allowlist: [\"sleep 20\"]\n",
    )
    .unwrap();
    let env = model_env(&model);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut first = serve(home.path(), &addr, &env);
    healthy(port).await;
    post_message(port, "job", "count the stars for me in the background").await;
    until(
        "the job's command starting",
        Duration::from_secs(20),
        async || {
            get(port, "/api/audit?session=job")
                .await
                .as_array()
                .is_some_and(|rows| {
                    rows.iter()
                        .filter(|r| r["action"] == "sleep 20" && r["detail"] == "running")
                        .count()
                        >= 2
                })
        },
    )
    .await;
    kill(Pid::from_raw(first.id().unwrap() as i32), Signal::SIGKILL).unwrap();
    first.wait().await.unwrap();
    let second = serve(home.path(), &addr, &env);
    healthy(port).await;
    let lines = texts(&get(port, "/api/history?session=job").await);
    let told: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("'count the stars'") && l.contains("NOT done"))
        .collect();
    assert_eq!(told.len(), 1, "announced once: {lines:?}");
    stop(second).await;
    // A second restart announces nothing more.
    let third = serve(home.path(), &addr, &env);
    healthy(port).await;
    let lines = texts(&get(port, "/api/history?session=job").await);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("'count the stars'"))
            .count(),
        1,
        "{lines:?}"
    );
    stop(third).await;
}
