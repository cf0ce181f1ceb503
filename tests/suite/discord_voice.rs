//! songbird on the loopback Discord: a real serenity client with songbird registered
//! asks to join a voice channel over the gateway; the fake answers with a voice server
//! that is not one, and the join must fail with a sentence and leave no call behind.

use std::num::NonZeroU8;
use std::sync::Arc;
use std::time::Duration;

use kotoba::surfaces::discord::intents;
use kotoba::surfaces::discord::voice::call;
use serenity::all::{ChannelId, GuildId, HttpBuilder};
use songbird::driver::retry::{Retry, Strategy};
use songbird::{SerenityInit, Songbird};

use crate::support::discord::{FakeDiscord, GUILD};

/// A voice channel id (songbird does not check that the channel exists).
const VOICE: u64 = 210;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_that_cannot_reach_a_voice_server_fails_with_a_sentence_and_leaves_no_call() {
    let discord = FakeDiscord::start().await;
    // Production settings, but one quick driver retry instead of ~8 s of back-off.
    let config = call::config().driver_retry(Retry {
        strategy: Strategy::Every(Duration::from_millis(20).into()),
        retry_limit: Some(NonZeroU8::MIN),
    });
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
        call::join(&manager, GuildId::new(GUILD), ChannelId::new(VOICE)),
    )
    .await
    .expect("join returns within the connect timeout");
    let err = joined.expect_err("no voice server: the join fails");
    assert!(
        err.contains("voice server"),
        "it got as far as the voice server: {err}"
    );
    assert!(err.ends_with('.') && !err.contains('\n'), "{err}");
    assert_eq!(err.matches(". ").count(), 0, "one sentence: {err}");
    assert!(manager.get(GuildId::new(GUILD)).is_none(), "no call left");

    // Over the gateway: the join asked for the channel, the cleanup left it.
    let channels = |d: &FakeDiscord| -> Vec<String> {
        d.voice_updates()
            .iter()
            .map(|u| u["channel_id"].to_string())
            .collect()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while channels(&discord).last().map(String::as_str) != Some("null") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no leave on the gateway: {:?}",
            channels(&discord)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(channels(&discord).first(), Some(&VOICE.to_string()));

    shards.shutdown_all().await;
    task.abort();
}
