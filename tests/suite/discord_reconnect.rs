//! A service that starts before the network is up: when Discord cannot be reached at
//! start, the surface tries again with backoff until it can, and then answers; `/health`
//! says whether Discord is connecting, connected or reconnecting after a drop.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use kotoba_testkit::discord::{FakeDiscord, GENERAL, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};

#[tokio::test]
async fn discord_unreachable_at_start_is_connected_to_once_it_answers_and_health_follows_a_later_drop(
) {
    let discord = FakeDiscord::start().await;
    discord.set_down(true);
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("Back online."));
    let home = tempfile::tempdir().unwrap();
    let config = discord.config(home.path(), &model, &[]);
    let app = kotoba::app::App::build(config).await.unwrap();
    let shutdown = CancellationToken::new();
    let task = kotoba::surfaces::discord::start(&app, shutdown.clone())
        .await
        .expect("a token is set");
    // The page's /health, told about the Discord surface as `serve` tells it.
    let options = kotoba::surfaces::web::WebOptions {
        discord: Some(app.discord_port.clone()),
        ..Default::default()
    };
    let router = kotoba::surfaces::web::router(app.engine.clone(), options, shutdown.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let health_url = format!("http://{}/health", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let discord_state = || async {
        let v: serde_json::Value = reqwest::get(&health_url)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(v["status"], "ok");
        v["discord"].as_str().unwrap_or("").to_string()
    };
    // Unreachable for a while: several attempts fail, the surface stays alive.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert!(!task.is_finished(), "the surface gave up");
    assert_eq!(discord.identifies(), 0);
    assert_eq!(discord_state().await, "connecting");
    discord.set_down(false);
    tokio::time::timeout(Duration::from_secs(20), discord.wait_ready())
        .await
        .expect("connected once Discord answered");
    // Whether /health says `want` within `tries` looks 100 ms apart.
    let says = |want: &'static str, tries: usize| {
        let discord_state = &discord_state;
        async move {
            for _ in 0..tries {
                if discord_state().await == want {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            false
        }
    };
    // The report sees the shard up within a second or two.
    assert!(says("connected", 50).await, "/health never said connected");
    // The gateway drops and stays down for a while: /health says so, then comes back.
    discord.set_down(true);
    discord.drop_gateway();
    assert!(
        says("reconnecting", 60).await,
        "/health never said the dropped gateway was reconnecting"
    );
    discord.set_down(false);
    assert!(
        says("connected", 300).await,
        "/health never said connected again after the gateway came back"
    );
    let from = discord.calls().len();
    discord.mention(GENERAL, OWNER, "are you there?");
    discord
        .wait_for_from(from, 20, |c| c.content() == "Back online.")
        .await;
    shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}
