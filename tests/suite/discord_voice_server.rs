//! Voice against a real (loopback) voice server: `kotoba serve` runs as a child that
//! trusts the test CA (SSL_CERT_FILE, its env only), joins over the loopback Discord,
//! and songbird's driver really connects to `support::voice` (TLS websocket, Identify,
//! Ready, IP discovery, Select Protocol, Session Description); `/leave` closes the
//! voice socket. In-process, where the test CA is not trusted, the same server is
//! refused: TLS for voice is not weakened.

use std::num::NonZeroU8;
use std::sync::Arc;
use std::time::Duration;

use kotoba::surfaces::discord::intents;
use kotoba::surfaces::discord::voice::call;
use serde_json::json;
use serenity::all::{ChannelId, GuildId, HttpBuilder};
use songbird::driver::retry::{Retry, Strategy};
use songbird::driver::{Scheduler, SchedulerConfig};
use songbird::{SerenityInit, Songbird};

use super::serve::{free_port, serve, stop};
use crate::support::discord::{FakeDiscord, BOT, GENERAL, GUILD, LOUNGE, OWNER};
use crate::support::model_server::ScriptedModel;
use crate::support::voice::{self, Expect, FakeVoice, MODE, SSRC};

/// The interaction reply edit of slash command `j` (waited ≤ `secs`).
async fn answer_of(discord: &FakeDiscord, j: u64, secs: u64) -> String {
    let token = format!("/tok{j}/messages/@original");
    discord
        .wait_for_from(0, secs, |c| c.method == "PATCH" && c.path.ends_with(&token))
        .await
        .content()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_reaches_a_real_voice_server_and_leave_closes_its_socket() {
    let discord = FakeDiscord::start().await;
    let voice = FakeVoice::start(Expect {
        server_id: GUILD,
        user_id: BOT,
    })
    .await;
    discord.use_voice_server(voice.endpoint());
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let mut env = discord.env();
    env.extend([
        ("KOTOBA_LLM_BASE_URL".to_string(), model.base_url()),
        ("KOTOBA_LLM_API".into(), "chat".into()),
        ("KOTOBA_REASONING_EFFORT".into(), "off".into()),
        ("OPENAI_API_KEY".into(), "test-key".into()),
        ("KOTOBA_MODEL".into(), "scripted".into()),
        // Only this child trusts the test CA (system roots are replaced by it; the
        // bundled webpki roots still apply).
        ("SSL_CERT_FILE".into(), voice::ca_file()),
    ]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let child = serve(home.path(), &format!("127.0.0.1:{}", free_port()), &env);
    discord.wait_connected().await;
    discord
        .wait_for_from(0, 20, |c| c.method == "PUT" && c.path.contains("/commands"))
        .await;

    let j = discord.slash(
        GENERAL,
        OWNER,
        "join",
        json!([{"type": 7, "name": "channel", "value": LOUNGE.to_string()}]),
        0,
    );
    let said = answer_of(&discord, j, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");

    // The voice gateway: v4, one connection, Identify with what Discord handed out.
    let conns = voice.conns();
    assert_eq!(conns.len(), 1, "{conns:?}");
    assert_eq!(conns[0].path, "/?v=4");
    assert_eq!(conns[0].refused, None);
    let identify = &voice.identifies()[0]["d"];
    assert_eq!(identify["server_id"], GUILD.to_string());
    assert_eq!(identify["user_id"], BOT.to_string());
    assert_eq!(identify["session_id"], voice::SESSION);
    assert_eq!(identify["token"], voice::TOKEN);
    // IP discovery with the SSRC of Ready, then Select Protocol naming the address the
    // voice server saw the discovery come from and the mode it offered first.
    let discoveries = voice.discoveries();
    assert_eq!(discoveries.len(), 1, "{discoveries:?}");
    let (ssrc, from) = discoveries[0];
    assert_eq!(ssrc, SSRC);
    let selected = voice.select_protocols();
    assert_eq!(selected.len(), 1, "{selected:?}");
    let d = &selected[0]["d"];
    assert_eq!(d["protocol"], "udp");
    assert_eq!(d["data"]["address"], from.ip().to_string());
    assert_eq!(d["data"]["port"], from.port());
    assert_eq!(d["data"]["mode"], MODE);
    assert!(
        !conns[0].closed,
        "the voice socket stays open while she is in"
    );

    let l = discord.slash(GENERAL, OWNER, "leave", json!([]), 0);
    // /leave waits for her turn and speech (none here), at most 30 s.
    let said = answer_of(&discord, l, 40).await;
    assert_eq!(said, "Left the voice channel.");
    voice
        .wait_until("closed voice socket", Duration::from_secs(10), |v| {
            v.conns().iter().all(|c| c.closed)
        })
        .await;
    assert_eq!(voice.conns().len(), 1, "no reconnect after leaving");
    // And on the Discord gateway: a voice state update with no channel.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !discord
        .voice_updates()
        .last()
        .is_some_and(|u| u["channel_id"].is_null())
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no leave on the gateway: {:?}",
            discord.voice_updates()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop(child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_server_whose_certificate_no_trusted_root_vouches_for_is_refused() {
    // In this process the test CA is not trusted (no SSL_CERT_FILE naming it).
    let discord = FakeDiscord::start().await;
    let voice = FakeVoice::start(Expect {
        server_id: GUILD,
        user_id: BOT,
    })
    .await;
    discord.use_voice_server(voice.endpoint());
    // songbird's default scheduler is one per process, its task spawned on the runtime
    // that first used it, which dies with that test: each in-process test gets its own.
    let config = call::config()
        .driver_retry(Retry {
            strategy: Strategy::Every(Duration::from_millis(20).into()),
            retry_limit: Some(NonZeroU8::MIN),
        })
        .scheduler(Scheduler::new(SchedulerConfig::default()));
    let manager: Arc<Songbird> = Songbird::serenity_from_config(config);
    let http = HttpBuilder::new("test-token")
        .proxy(discord.api_base())
        .ratelimiter_disabled(true)
        .build();
    let mut client = serenity::client::ClientBuilder::new_with_http(http, intents())
        .register_songbird_with(manager.clone())
        .await
        .unwrap();
    let shards = client.shard_manager.clone();
    let task = tokio::spawn(async move { client.start().await });
    discord.wait_connected().await;

    let joined = tokio::time::timeout(
        call::CONNECT_TIMEOUT + Duration::from_secs(5),
        call::join(&manager, GuildId::new(GUILD), ChannelId::new(LOUNGE)),
    )
    .await
    .expect("join returns within the connect timeout");
    let err = joined.expect_err("an untrusted certificate: the join fails");
    assert!(err.contains("voice server"), "{err}");
    assert!(
        voice.conns().is_empty() && voice.discoveries().is_empty(),
        "no websocket got past TLS: {:?}",
        voice.conns()
    );
    assert!(manager.get(GuildId::new(GUILD)).is_none(), "no call left");
    shards.shutdown_all().await;
    task.abort();
}
