//! One store, several processes: with `KOTOBA_DATABASE_URL` every `kotoba serve` keeps
//! its transcripts, audit and grants in the one PostgreSQL (the real server the test
//! command started), so any process's page shows what another's turn wrote; `kotoba
//! doctor` names the store and whether it answers.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::process::Command;

use super::crash::{get, model_env, post_message};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::postgres::fresh_database;
use kotoba_testkit::process::{free_port, healthy, serve, stop};

fn texts(history: &Value) -> Vec<String> {
    history
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One `kotoba serve` of a pair sharing a store.
struct Proc {
    child: tokio::process::Child,
    home: tempfile::TempDir,
    port: u16,
}

/// Two `kotoba serve` processes on the store at `url`, answering with `model`, both
/// healthy; the model's environment less the names in `without`, and A's data folder
/// given `settings_a` as its settings.yaml first.
async fn two_processes(
    model: &ScriptedModel,
    url: &str,
    without: &[&str],
    settings_a: Option<&str>,
) -> (Proc, Proc) {
    let mut env: Vec<(&str, String)> = model_env(model)
        .into_iter()
        .filter(|(k, _)| !without.contains(k))
        .collect();
    env.push(("KOTOBA_DATABASE_URL", url.to_string()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut procs = Vec::new();
    for settings in [settings_a, None] {
        let home = tempfile::tempdir().unwrap();
        if let Some(text) = settings {
            std::fs::write(home.path().join("settings.yaml"), text).unwrap();
        }
        let port = free_port();
        let child = serve(home.path(), &format!("127.0.0.1:{port}"), &env);
        procs.push(Proc { child, home, port });
    }
    for p in &procs {
        healthy(p.port).await;
    }
    let b = procs.pop().unwrap();
    let a = procs.pop().unwrap();
    (a, b)
}

#[tokio::test]
async fn a_turn_answered_by_one_process_is_read_back_from_the_page_of_another_sharing_its_postgresql(
) {
    let Some(url) = fresh_database("shared transcript") else {
        return;
    };
    let model = ScriptedModel::start().await;
    model.push(Reply::text("The kettle is on."));
    let (a, b) = two_processes(&model, &url, &[], None).await;
    let (port_a, port_b) = (a.port, b.port);
    post_message(port_a, "kitchen", "is the kettle on?").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let seen_by_b = loop {
        let lines = texts(&get(port_b, "/api/history?session=kitchen").await);
        if lines.len() >= 2 || Instant::now() > deadline {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        seen_by_b,
        ["is the kettle on?", "The kettle is on."],
        "the other process reads the turn from the shared store"
    );
    assert!(
        !a.home.path().join("kotoba.db").exists() && !b.home.path().join("kotoba.db").exists(),
        "no SQLite file is made when PostgreSQL holds the store"
    );
    stop(a.child).await;
    stop(b.child).await;
}

pub(super) fn doctor(home: &std::path::Path, model: &ScriptedModel, url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kotoba"));
    cmd.arg("doctor")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home)
        .env("KOTOBA_DATABASE_URL", url)
        .kill_on_drop(true);
    for (k, v) in model_env(model) {
        cmd.env(k, v);
    }
    cmd
}

#[tokio::test]
async fn doctor_names_the_store_backend_its_pool_and_round_trip_and_exits_1_when_postgresql_cannot_be_reached(
) {
    let Some(url) = fresh_database("doctor store") else {
        return;
    };
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let out = doctor(home.path(), &model, &url).output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("store:") && text.contains("PostgreSQL at 127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("(reached; pool of 16; round trip "), "{text}");
    assert!(out.status.success(), "{text}");
    // The pool is sized by store.pool_size.
    std::fs::write(
        home.path().join("settings.yaml"),
        "store:\n  pool_size: 3\n",
    )
    .unwrap();
    let out = doctor(home.path(), &model, &url).output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(reached; pool of 3; round trip "), "{text}");
    std::fs::remove_file(home.path().join("settings.yaml")).unwrap();
    let closed = free_port();
    let gone = format!("postgres://kotoba:hunter2@127.0.0.1:{closed}/kotoba");
    let out = doctor(home.path(), &model, &gone).output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("NOT reached") && text.contains("KOTOBA_DATABASE_URL"),
        "{text}"
    );
    assert!(
        !text.contains("hunter2"),
        "the password is never printed: {text}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
}

const CUT: &str = "(This turn was cut by a restart";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_starting_beside_a_running_one_leaves_its_turn_alone_and_a_killed_ones_turn_is_closed_as_cut(
) {
    let Some(url) = fresh_database("liveness across processes") else {
        return;
    };
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("Slowly, the answer."));
    model.set_delay(Duration::from_secs(6));
    let mut env: Vec<(&str, String)> = model_env(&model);
    env.push(("KOTOBA_DATABASE_URL", url.clone()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (home_a, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (port_a, port_b) = (free_port(), free_port());
    let a = serve(home_a.path(), &format!("127.0.0.1:{port_a}"), &env);
    healthy(port_a).await;
    post_message(port_a, "slow", "take your time").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // B starts while A's turn runs: A is alive, so B's start-up closes nothing of it.
    let b = serve(home_b.path(), &format!("127.0.0.1:{port_b}"), &env);
    healthy(port_b).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let lines = loop {
        let lines = texts(&get(port_b, "/api/history?session=slow").await);
        if lines.len() >= 2 || Instant::now() > deadline {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        lines,
        ["take your time", "Slowly, the answer."],
        "A's turn ran to its end"
    );
    // Now A dies in the middle of a turn: B closes it as cut once A's heartbeat stops.
    post_message(port_a, "slow", "and once more").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut a = a;
    a.start_kill().unwrap();
    a.wait().await.unwrap();
    let killed = Instant::now();
    let deadline = killed + Duration::from_secs(45);
    let lines = loop {
        let lines = texts(&get(port_b, "/api/history?session=slow").await);
        if lines.iter().any(|l| l.starts_with(CUT)) || Instant::now() > deadline {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        lines.last().is_some_and(|l| l.starts_with(CUT)),
        "the dead process's turn is closed as cut by the one alive: {lines:?}"
    );
    assert!(
        lines.contains(&"and once more".to_string()),
        "nothing said is lost: {lines:?}"
    );
    assert!(
        killed.elapsed() < Duration::from_secs(35),
        "closed after {:?}",
        killed.elapsed()
    );
    stop(b).await;
}

#[tokio::test]
async fn memory_export_writes_the_shared_stores_facts_as_her_markdown_files() {
    let Some(url) = fresh_database("memory export") else {
        return;
    };
    let store = kotoba::store::Store::connect(&url).await.unwrap();
    store
        .memory_add(
            "",
            "music",
            "Ann plays the cello.",
            "ann plays the cello",
            "2026-12-01",
        )
        .await
        .unwrap();
    store
        .memory_add(
            "",
            "work",
            "The standup is at nine.",
            "the standup is at nine",
            "2026-12-02",
        )
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kotoba"))
        .args(["memory", "export"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home.path())
        .env("KOTOBA_DATABASE_URL", &url)
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("Wrote 2 fact(s) in 2 topic(s)"), "{said}");
    let index = std::fs::read_to_string(home.path().join("memory/MEMORY.md")).unwrap();
    assert!(
        index.contains("- 2026-12-02 [work] The standup is at nine."),
        "{index}"
    );
    let music = std::fs::read_to_string(home.path().join("memory/topics/music.md")).unwrap();
    assert!(
        music.contains("- 2026-12-01 Ann plays the cello."),
        "{music}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_drawn_in_one_process_is_listed_and_answered_from_the_page_of_another() {
    let Some(url) = fresh_database("cards across processes") else {
        return;
    };
    let model = ScriptedModel::start().await;
    model.push(Reply::call(
        "shell",
        serde_json::json!({ "command": "touch approved.txt" }),
    ));
    model.set_fallback(Reply::text("Done, it is there."));
    let (a, b) = two_processes(&model, &url, &[], None).await;
    let (port_a, port_b) = (a.port, b.port);
    // The page of A watches the session, so its turn may draw a card there.
    let _watching = kotoba_testkit::web::get_with_token(&format!(
        "http://127.0.0.1:{port_a}/api/events?session=desk"
    ))
    .await;
    post_message(port_a, "desk", "make approved.txt, please").await;

    let deadline = Instant::now() + Duration::from_secs(20);
    let card = loop {
        let cards = get(port_b, "/api/cards").await;
        if let Some(card) = cards.as_array().and_then(|c| c.first()).cloned() {
            break card;
        }
        assert!(Instant::now() < deadline, "B never listed A's card");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(card["session"], "web:desk", "{card}");
    assert_eq!(card["action"], "touch approved.txt", "{card}");
    let id = card["request_id"].as_str().unwrap().to_string();
    let made = a.home.path().join("workspace").join("approved.txt");
    assert!(!made.exists(), "nothing runs before the answer");

    let http = kotoba_testkit::web::client();
    let answer = |port: u16| {
        http.post(format!("http://127.0.0.1:{port}/api/cards/{id}"))
            .json(&serde_json::json!({ "decision": "approve" }))
            .send()
    };
    let answered = answer(port_b).await.unwrap();
    assert_eq!(answered.status(), 200, "{}", answered.text().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !made.exists() {
        assert!(
            Instant::now() < deadline,
            "A's turn never took the answer given on B's page"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = answer(port_b).await.unwrap();
    assert_eq!(again.status(), 409, "one card, one answer");
    let again = answer(port_a).await.unwrap();
    assert_eq!(again.status(), 409, "settled for A's page too");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lines = texts(&get(port_b, "/api/history?session=desk").await);
        if lines.last().is_some_and(|l| l == "Done, it is there.") {
            break;
        }
        assert!(Instant::now() < deadline, "{lines:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(get(port_b, "/api/cards").await, serde_json::json!([]));
    let audit = get(port_b, "/api/audit?session=desk").await;
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["action"] == "touch approved.txt"
                && r["approved"] == true
                && r["approver"] == "user"),
        "{audit}"
    );
    stop(a.child).await;
    stop(b.child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setting_saved_on_one_processs_page_reaches_another_by_the_stores_notice_and_applies_to_its_next_turn(
) {
    let Some(url) = fresh_database("settings across processes") else {
        return;
    };
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("Hello."));
    // The model's name is left to the settings (no KOTOBA_MODEL), so the request says
    // which value a turn used.
    let (a, b) = two_processes(&model, &url, &["KOTOBA_MODEL"], Some("model: file-model\n")).await;
    let (port_a, port_b) = (a.port, b.port);

    let saved = kotoba_testkit::web::client()
        .post(format!("http://127.0.0.1:{port_b}/api/settings"))
        .json(&serde_json::json!({ "model": "shared-model", "work_max_iter": 17 }))
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200, "{}", saved.text().await.unwrap());

    // A's page lists what B saved as soon as the store's notice reaches A: no turn,
    // no polling of the settings rows.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let listed = get(port_a, "/api/settings").await;
        let value = listed["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == "work_max_iter")
            .map(|s| s["value"].clone());
        if value == Some(serde_json::json!("17")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "A never heard of B's save: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A's next turn uses it, over A's own settings.yaml.
    post_message(port_a, "hall", "hello").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.requests().is_empty() {
        assert!(Instant::now() < deadline, "A never asked the model");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(model.requests()[0]["model"], "shared-model");
    stop(a.child).await;
    stop(b.child).await;
}

/// How many processes have said in the store at `url` that they are alive.
async fn alive_in(url: &str) -> i64 {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.query_one("SELECT COUNT(*) FROM instances", &[])
            .map(|r| r.get::<_, i64>(0))
            .unwrap_or(0)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serving_process_has_said_it_is_alive_in_the_shared_store_before_it_answers_anything() {
    // A process starting beside this one judges its rows by that word: a turn begun
    // before it would look like a dead run's and be closed as cut.
    let Some(url) = fresh_database("alive before serving") else {
        return;
    };
    // A distant database (40 ms each way) widens any gap between answering and saying
    // so from a few milliseconds to the heartbeat's round trips.
    let hostport = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let proxy =
        kotoba_testkit::proxy::Proxy::start_apart(hostport.parse().unwrap(), Duration::ZERO);
    proxy.set_delay(Duration::from_millis(40));
    let model = ScriptedModel::start().await;
    let mut env: Vec<(&str, String)> = model_env(&model);
    env.push(("KOTOBA_DATABASE_URL", proxy.url_through(&url)));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &env);
    let started = Instant::now();
    loop {
        let up = reqwest::get(format!("http://127.0.0.1:{port}/health"))
            .await
            .is_ok_and(|r| r.status() == 200);
        if up {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never healthy");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(
        alive_in(&url).await,
        1,
        "at its first answer the process is already alive in the store"
    );
    stop(child).await;
}
