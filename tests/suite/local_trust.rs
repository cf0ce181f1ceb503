//! Nobody else on the machine is her owner, and nothing she runs reads her secrets
//! (docs/surfaces.md, "Who may use the page"; docs/tools.md, "What children get"), on
//! the real `kotoba serve`: the token it prints and keeps private, another OS user
//! (`nobody`) refused, her files private after a first start, a loose folder tightened
//! and a saved password kept as a hash, `printenv` through a card without a secret,
//! `web_auth: none` warned about, and `kotoba doctor` saying all of it.

use kotoba_testkit::until_some;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::crash::model_env;
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::{free_port, healthy, serve, stop};
use kotoba_testkit::web::{client, WEB_TOKEN};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// A data folder inside a folder anyone may walk through (a plain home directory), so
/// only her own modes keep others out.
fn open_parent() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Run `program args` as the unprivileged `nobody` account; `None` when this process
/// may not change user (not root).
fn as_nobody(program: &str, args: &[&str]) -> Option<std::process::Output> {
    let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
    if !root {
        let why = "the tests are not run as root, so they cannot act as another OS user";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
        return None;
    }
    Some(
        std::process::Command::new(program)
            .args(args)
            .uid(65534)
            .gid(65534)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap(),
    )
}

/// The HTTP status `curl` run as `nobody` gets for `args` (only called once
/// [`as_nobody`] has shown this process may change user).
fn status_as_nobody(args: &[&str]) -> String {
    let mut all = vec!["-s", "-o", "/dev/null", "-w", "%{http_code}"];
    all.extend_from_slice(args);
    let out = as_nobody("curl", &all).expect("root, as the first call showed");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Through `http` (which carries the page's token), say `text` in `session` with the
/// page open there, and wait for the card it draws.
async fn card(http: &reqwest::Client, port: u16, session: &str, text: &str) -> Value {
    let base = format!("http://127.0.0.1:{port}");
    let events = http
        .get(format!("{base}/api/events?session={session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    std::mem::forget(events);
    let sent = http
        .post(format!("{base}/api/message"))
        .json(&json!({"session": session, "text": text}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);
    until_some("the card", Duration::from_secs(20), async || {
        let cards: Value = http
            .get(format!("{base}/api/cards"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        cards.as_array()?.first().cloned()
    })
    .await
}

#[tokio::test]
async fn serve_prints_the_address_with_a_token_it_keeps_private_and_another_os_user_gets_nothing() {
    let parent = open_parent();
    let home = parent.path().join("data");
    let model = ScriptedModel::start().await;
    model.push(Reply::call(
        "shell",
        json!({"command": "touch from-nobody.txt"}),
    ));
    model.set_fallback(Reply::text("Done."));
    let env = model_env(&model);
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // No KOTOBA_WEB_TOKEN: she makes one at this first start.
    env.push(("KOTOBA_WEB_TOKEN", ""));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("settings.yaml"), "force_ask: true\n").unwrap();
    let port = free_port();
    let child = serve(&home, &format!("127.0.0.1:{port}"), &env);
    healthy(port).await;

    let token = std::fs::read_to_string(home.join("web_token"))
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(token.len(), 64, "{token}");
    assert_ne!(token, WEB_TOKEN);
    assert_eq!(mode(&home.join("web_token")), 0o600);
    assert_eq!(mode(&home), 0o700, "the data folder");
    for file in ["kotoba.db", "kotoba.lock", "settings.yaml"] {
        assert_eq!(mode(&home.join(file)), 0o600, "{file}");
    }
    let base = format!("http://127.0.0.1:{port}");
    let anon = reqwest::get(format!("{base}/api/cards")).await.unwrap();
    assert_eq!(anon.status(), 401, "no token, no page");
    let owner = reqwest::Client::new()
        .get(format!("{base}/api/cards"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(owner.status(), 200, "the kept token opens it");

    // A card waits; the `nobody` account tries to read the token and to approve it.
    let owner_http = {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("authorization", format!("Bearer {token}").parse().unwrap());
        reqwest::Client::builder()
            .default_headers(h)
            .build()
            .unwrap()
    };
    let card = card(&owner_http, port, "desk", "make the file").await;
    let id = card["request_id"].as_str().unwrap();
    let token_path = home.join("web_token");
    if let Some(read) = as_nobody("cat", &[token_path.to_str().unwrap()]) {
        assert!(!read.status.success(), "nobody read the token");
        let url = format!("{base}/api/cards/{id}");
        let approve = status_as_nobody(&[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            r#"{"decision":"approve"}"#,
            &url,
        ]);
        assert_eq!(approve, "401", "nobody is refused");
        let page = status_as_nobody(&[&format!("{base}/")]);
        assert_eq!(page, "401");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let still: Value = owner_http
        .get(format!("{base}/api/cards"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        still.as_array().unwrap().len(),
        1,
        "the card still waits: {still}"
    );
    assert!(
        !home.join("workspace/from-nobody.txt").exists(),
        "nothing ran"
    );

    let log = stop(child).await;
    assert!(
        log.contains(&format!("http://127.0.0.1:{port}/?token={token}")),
        "serve prints the page's address with its token: {log}"
    );
}

#[tokio::test]
async fn a_loose_data_folder_is_made_private_at_start_and_a_saved_password_is_kept_as_a_hash() {
    let parent = open_parent();
    let home = parent.path().join("data");
    std::fs::create_dir_all(home.join("memory")).unwrap();
    std::fs::write(home.join("settings.yaml"), "model: m\n").unwrap();
    std::fs::write(home.join("memory/MEMORY.md"), "- a fact\n").unwrap();
    for (p, m) in [
        (home.clone(), 0o755),
        (home.join("memory"), 0o755),
        (home.join("settings.yaml"), 0o644),
        (home.join("memory/MEMORY.md"), 0o644),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let child = serve(&home, &addr, &[]);
    healthy(port).await;
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("memory")), 0o700);
    assert_eq!(mode(&home.join("settings.yaml")), 0o600);
    assert_eq!(mode(&home.join("memory/MEMORY.md")), 0o600);

    let saved = client()
        .post(format!("http://{addr}/api/settings"))
        .json(&json!({"web_password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200, "{}", saved.text().await.unwrap());
    let text = std::fs::read_to_string(home.join("settings.yaml")).unwrap();
    assert!(
        text.contains("scrypt$") && !text.contains("correct horse"),
        "{text}"
    );
    assert_eq!(mode(&home.join("settings.yaml")), 0o600, "after a save too");
    let log = stop(child).await;
    assert_eq!(
        log.matches("private (0700 folders, 0600 files)").count(),
        1,
        "one log line: {log}"
    );
    assert!(!log.contains("correct horse"));

    // The password is read at start: the hash opens the page to the password's words.
    let child = serve(&home, &addr, &[]);
    healthy(port).await;
    let login = |pw: &'static str| {
        kotoba_testkit::web::plain()
            .post(format!("http://{addr}/login"))
            .form(&[("password", pw)])
            .send()
    };
    assert_eq!(login("correct horse battery").await.unwrap().status(), 303);
    assert_eq!(login("wrong").await.unwrap().status(), 401);
    let log = stop(child).await;
    assert!(
        !log.contains("made"),
        "nothing was loose the second time: {log}"
    );
}

#[tokio::test]
async fn printenv_through_a_card_shows_no_secret_and_still_an_ordinary_variable() {
    let model = ScriptedModel::start().await;
    model.push(Reply::call("shell", json!({"command": "printenv"})));
    model.set_fallback(Reply::text("That is everything."));
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        "force_ask: true\nshell.env_keep: [KEPT_TOKEN]\n",
    )
    .unwrap();
    let env = model_env(&model);
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let secrets = [
        ("KOTOBA_API_KEY", "v1-secret-4711"),
        ("KOTOBA_WEB_PASSWORD", "page-secret-4711"),
        (
            "KOTOBA_MASTER_KEY",
            "bWFzdGVyLXNlY3JldC00NzExLW1hc3Rlci1zZWNyZXQ=",
        ),
        ("ELEVENLABS_API_KEY", "eleven-secret-4711"),
        ("MY_SERVICE_TOKEN", "service-secret-4711"),
        ("DB_PASSWORD", "db-secret-4711"),
    ];
    env.extend(secrets);
    env.push(("KEPT_TOKEN", "kept-4711"));
    env.push(("PLAIN_VAR", "plain-4711"));
    let port = free_port();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &env);
    healthy(port).await;
    let card = card(&client(), port, "env", "what is in your environment?").await;
    assert_eq!(card["action"], "printenv");
    let id = card["request_id"].as_str().unwrap();
    let approved = client()
        .post(format!("http://127.0.0.1:{port}/api/cards/{id}"))
        .json(&json!({"decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    let output = until_some(
        "the output reaching the model",
        Duration::from_secs(20),
        async || {
            let all = serde_json::to_string(&model.requests()).ok()?;
            all.contains("PLAIN_VAR").then_some(all)
        },
    )
    .await;
    assert!(
        output.contains("PLAIN_VAR=plain-4711"),
        "an ordinary variable passes"
    );
    assert!(
        output.contains("KEPT_TOKEN=kept-4711"),
        "shell.env_keep passes it"
    );
    assert!(output.contains("KOTOBA_CHILD_OF="), "the mark");
    for (name, value) in secrets.iter().chain(&[
        ("OPENAI_API_KEY", "test-key"),
        ("KOTOBA_WEB_TOKEN", WEB_TOKEN),
    ]) {
        assert!(!output.contains(value), "{name} reached the model");
        assert!(
            !output.contains(&format!("{name}=")),
            "{name} reached the child"
        );
    }
    stop(child).await;
}

#[tokio::test]
async fn with_web_auth_none_serve_and_doctor_warn_that_anyone_on_the_machine_is_the_owner() {
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let env = model_env(&model);
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(("KOTOBA_WEB_AUTH", "none"));
    let port = free_port();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &env);
    healthy(port).await;
    let status: Value = reqwest::get(format!("http://127.0.0.1:{port}/api/status"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["auth"], "none", "{status}");
    let log = stop(child).await;
    assert!(log.contains("NO login (web_auth: none)"), "{log}");

    let doctor = async |extra: Vec<(&'static str, &'static str)>| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_kotoba"));
        cmd.arg("doctor")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("KOTOBA_HOME", home.path());
        for (k, v) in &env {
            if *k != "KOTOBA_WEB_AUTH" {
                cmd.env(k, v);
            }
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        String::from_utf8_lossy(&cmd.output().await.unwrap().stdout).to_string()
    };
    let text = doctor(vec![("KOTOBA_WEB_AUTH", "none")]).await;
    assert!(text.contains("page login:     NONE"), "{text}");
    let text = doctor(vec![("MY_TOKEN", "doctor-secret-4711")]).await;
    assert!(
        text.contains("page login:     token (made at the first start in"),
        "{text}"
    );
    assert!(text.contains("file modes:     private"), "{text}");
    assert!(
        text.contains("child env:") && text.contains("shell.env_keep: none"),
        "{text}"
    );
    assert!(
        !text.contains("doctor-secret-4711") && !text.contains(WEB_TOKEN),
        "{text}"
    );
}
