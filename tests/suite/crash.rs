//! Nothing is lost when she dies: the real `kotoba serve` is killed with SIGKILL while an
//! allowlisted `sleep 5; touch FILE` runs (beside a 30 s sleep in the background), then
//! restarted on the same data folder. Her line is still in /api/history, the cut turn says
//! so, the executed row is closed as cut by the restart, the command and the grandchild
//! it backgrounded died with her within seconds (FILE never appears), and a second serve
//! on the same folder is refused with one sentence.

use kotoba_testkit::until;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::{free_port, healthy, refused, serve, stop};

/// The command: the shell writes its pid and a long sleep's pid (which outlives the
/// shell unless start-up ends it), then touches FILE after 5 s.
const CMD: &str = "echo $$ > sh.pid; sleep 30 & echo $! > sleep.pid; sleep 5; touch FILE";
const SAID: &str = "please run the slow one";

/// Whether a process exists and is not a zombie.
fn running(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
                .unwrap_or(true)
        })
        .unwrap_or(false)
}

fn pid_in(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

pub(super) async fn get(port: u16, path: &str) -> Value {
    kotoba_testkit::web::get_with_token(&format!("http://127.0.0.1:{port}{path}"))
        .await
        .json()
        .await
        .unwrap()
}

/// Say `text` on the page in `session` (`POST /api/message`), accepted with 202.
pub(super) async fn post_message(port: u16, session: &str, text: &str) {
    let sent = kotoba_testkit::web::client()
        .post(format!("http://127.0.0.1:{port}/api/message"))
        .json(&json!({ "session": session, "text": text }))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);
}

pub(super) fn model_env(model: &ScriptedModel) -> Vec<(&'static str, String)> {
    let mut env = model.env("chat");
    // Speech at loopback too (`kotoba doctor` asks each provider's server).
    env.push(("KOTOBA_STT_BASE_URL", model.base_url()));
    env.push(("KOTOBA_TTS_BASE_URL", model.base_url()));
    env
}

#[tokio::test]
async fn a_turn_killed_mid_command_is_closed_on_restart_and_its_command_died_with_her() {
    let model = ScriptedModel::start().await;
    model.push(Reply::call("shell", json!({ "command": CMD })));
    model.set_fallback(Reply::text("It ran."));
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!("allowlist: [{}]\n", serde_json::to_string(CMD).unwrap()),
    )
    .unwrap();
    let workspace = home.path().join("workspace");
    let env = model_env(&model);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");

    let mut first = serve(home.path(), &addr, &env);
    healthy(port).await;
    post_message(port, "crash", SAID).await;
    until(
        "the command starting",
        Duration::from_secs(20),
        async || pid_in(&workspace.join("sleep.pid")).is_some(),
    )
    .await;
    let started = Instant::now();
    let sh = pid_in(&workspace.join("sh.pid")).unwrap();
    let sleep = pid_in(&workspace.join("sleep.pid")).unwrap();
    // The executed row was written when the command started, before any outcome.
    let audit = get(port, "/api/audit?session=crash").await;
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["action"] == CMD && r["approver"] == "executed" && r["detail"] == "running"),
        "{audit}"
    );

    kill(Pid::from_raw(first.id().unwrap() as i32), Signal::SIGKILL).unwrap();
    first.wait().await.unwrap();
    // The shell the tool started died with her, not 5 s later — and so did the sleep
    // it left in the background: its guard ended the whole group, before any restart.
    until(
        "the shell dying with her",
        Duration::from_secs(3),
        async || !running(sh),
    )
    .await;
    until(
        "the backgrounded grandchild dying with her",
        Duration::from_secs(3),
        async || !running(sleep),
    )
    .await;

    let second = serve(home.path(), &addr, &env);
    healthy(port).await;

    let history = get(port, "/api/history?session=crash").await;
    let lines = history.as_array().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l["role"] == "user" && l["text"] == SAID),
        "her line survived the crash: {history}"
    );
    let last = lines.last().unwrap();
    assert!(
        last["text"].as_str().unwrap().contains("cut by a restart"),
        "the cut turn says so: {history}"
    );

    let audit = get(port, "/api/audit?session=crash").await;
    let runs: Vec<&Value> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == CMD && r["approver"] != "allowlist")
        .collect();
    assert_eq!(runs.len(), 1, "one executed row: {audit}");
    assert_eq!(runs[0]["approver"], "executed:failed", "{audit}");
    assert!(
        runs[0]["detail"]
            .as_str()
            .unwrap()
            .contains("cut by a restart"),
        "{audit}"
    );

    // Past the moment the command would have touched FILE, it is still not there.
    let would_finish = Duration::from_secs(6).saturating_sub(started.elapsed());
    tokio::time::sleep(would_finish).await;
    assert!(
        !workspace.join("FILE").exists(),
        "the command ran on without her"
    );

    let log = stop(second).await;
    assert!(
        !log.contains(&format!("ended pid {sleep}")),
        "nothing was left for the restart to end: {log}"
    );
}

#[tokio::test]
async fn a_second_serve_on_the_same_data_folder_is_refused_with_one_sentence() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let first = serve(home.path(), &format!("127.0.0.1:{port}"), &[]);
    healthy(port).await;
    let second = serve(home.path(), &format!("127.0.0.1:{}", free_port()), &[]);
    let err = refused(second).await;
    let folder = home.path().display().to_string();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&folder), "{err}");
    assert!(err.contains("in use by another Kotoba process"), "{err}");
    // The first one is untouched.
    assert_eq!(
        reqwest::get(format!("http://127.0.0.1:{port}/health"))
            .await
            .unwrap()
            .status(),
        200
    );
    stop(first).await;
}
