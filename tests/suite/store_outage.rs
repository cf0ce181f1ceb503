//! A database that goes away (docs/deploy.md, "When the store goes away"): `kotoba serve`
//! on PostgreSQL through a loopback proxy that is cut mid-traffic and restored. While it
//! is cut a turn answers one plain sentence (`/v1`: 503 `store_unreachable`), `/health`
//! says `"store": "unreachable"` and the process stays up; once it is back everything
//! resumes by itself, and nothing was written twice or acknowledged and then lost.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value};

use super::crash::model_env;
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::postgres::fresh_database;
use kotoba_testkit::process::{healthy, serve};
use kotoba_testkit::proxy::Proxy;

/// One /v1 turn: its status and body.
async fn v1(port: u16, text: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(kotoba_testkit::web::KEY)
        .json(&json!({"model": "kotoba", "user": "outage", "messages": [{"role": "user", "content": text}]}))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or_default())
}

async fn health(port: u16) -> Value {
    reqwest::get(format!("http://127.0.0.1:{port}/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn when_postgresql_goes_away_a_turn_says_so_health_says_so_and_all_resumes_by_itself() {
    let Some(url) = fresh_database("store outage") else {
        return;
    };
    let hostport = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let target: SocketAddr = hostport.parse().unwrap();
    let proxy = Proxy::start(target, Duration::ZERO).await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        "store:\n  connect_timeout: 2\n",
    )
    .unwrap();
    let port = kotoba_testkit::process::free_port();
    let mut env = model_env(&model);
    env.push(("KOTOBA_DATABASE_URL", proxy.url_through(&url)));
    env.push(("KOTOBA_API_KEY", kotoba_testkit::web::KEY.into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut child = serve(home.path(), &format!("127.0.0.1:{port}"), &env);
    healthy(port).await;
    model.push(Reply::text("Before."));
    let (status, body) = v1(port, "hello").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "Before.");
    assert_eq!(health(port).await["store"], "ok");

    proxy.cut();
    let (status, body) = v1(port, "are you there?").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "store_unreachable", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("can't reach my store"),
        "{body}"
    );
    // The page's message is refused the same way, in JSON.
    let page = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/api/message"))
        .bearer_auth(kotoba_testkit::web::WEB_TOKEN)
        .json(&json!({"session": "outage", "text": "hello?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 503);
    let why: Value = page.json().await.unwrap();
    assert_eq!(why["error"], "store_unreachable", "{why}");
    let h = health(port).await;
    assert_eq!(h["status"], "ok", "the process stays up: {h}");
    assert_eq!(h["store"], "unreachable", "{h}");
    assert!(
        child.try_wait().unwrap().is_none(),
        "serve is still running"
    );

    proxy.restore();
    let back = tokio::time::Instant::now();
    while health(port).await["store"] != "ok" {
        assert!(
            back.elapsed() < Duration::from_secs(20),
            "the store never came back in /health"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    model.push(Reply::text("After."));
    let (status, body) = v1(port, "hello again").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "After.");
    // The model was asked twice; the store holds each kept line once, the refused one
    // not at all.
    assert_eq!(model.requests().len(), 2);
    let lines: Vec<String> = std::thread::spawn(move || {
        let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        db.query(
            "SELECT text FROM messages WHERE hidden = 0 ORDER BY id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect()
    })
    .join()
    .unwrap();
    assert_eq!(lines, ["hello", "Before.", "hello again", "After."]);
    let _ = child.kill().await;
}

#[tokio::test]
async fn doctor_measures_the_round_trip_to_a_distant_database() {
    let Some(url) = fresh_database("distant doctor") else {
        return;
    };
    let hostport = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let proxy = Proxy::start_apart(hostport.parse().unwrap(), Duration::ZERO);
    proxy.set_delay(Duration::from_millis(25));
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let out = super::shared_store::doctor(home.path(), &model, &proxy.url_through(&url))
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ms: f64 = text
        .split("round trip ")
        .nth(1)
        .and_then(|t| t.split(" ms").next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no round trip: {text}"));
    // 25 ms each way: at least 50 ms, with room for a busy machine above.
    assert!((50.0..1000.0).contains(&ms), "{ms} ms: {text}");
}
