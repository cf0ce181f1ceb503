//! Voice on the loopback Discord. First songbird alone: a real serenity client with
//! songbird registered asks to join a voice channel over the gateway; the fake answers
//! with a voice server that is not one, and the join must fail with a sentence and
//! leave no call behind. Then the bot itself: /join and "join me" through its port.

use std::num::NonZeroU8;
use std::sync::Arc;
use std::time::Duration;

use kotoba::surfaces::discord::intents;
use kotoba::surfaces::discord::voice::call;
use serenity::all::{ChannelId, GuildId, HttpBuilder};
use songbird::driver::retry::{Retry, Strategy};
use songbird::driver::{Scheduler, SchedulerConfig};
use songbird::{SerenityInit, Songbird};

use serde_json::json;

use super::discord::last_tool_output;
use kotoba_testkit::discord::rig::{posts_in, rig, settle};
use kotoba_testkit::discord::{FakeDiscord, GENERAL, GUILD, OWNER};
use kotoba_testkit::model_server::Reply;

/// A voice channel id (songbird does not check that the channel exists).
const VOICE: u64 = 210;

/// A real serenity client with songbird registered, connected to `discord`: production
/// settings, but one quick driver retry instead of ~8 s of back-off, and a scheduler of
/// its own (songbird's default one lives on the runtime that first used it, which dies
/// with that test). Returns the voice manager, the shard manager and the client's task.
pub(crate) async fn songbird_client(
    discord: &FakeDiscord,
) -> (
    Arc<Songbird>,
    Arc<serenity::gateway::ShardManager>,
    tokio::task::JoinHandle<Result<(), serenity::Error>>,
) {
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
    (manager, shards, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_that_cannot_reach_a_voice_server_fails_with_a_sentence_and_leaves_no_call() {
    let discord = FakeDiscord::start().await;
    let (manager, shards, task) = songbird_client(&discord).await;

    let joined = tokio::time::timeout(
        call::CONNECT_TIMEOUT + Duration::from_secs(5),
        call::join(&manager, GuildId::new(GUILD), ChannelId::new(VOICE)),
    )
    .await
    .expect("join returns within the connect timeout");
    let err = joined
        .expect_err("no voice server: the join fails")
        .to_string();
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

// ---- voice through the bot itself (its serenity client, songbird and the port) ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_join_that_cannot_reach_the_voice_server_answers_one_sentence_and_leaves_no_call() {
    let r = rig().await;
    let j = r.discord.slash(
        GENERAL,
        OWNER,
        "join",
        json!([{"type": 7, "name": "channel", "value": "210"}]),
        0,
    );
    let token = format!("/tok{j}/messages/@original");
    // songbird retries the voice server for a few seconds; the answer comes within the
    // 30 s connect timeout.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(40);
    let edit = loop {
        let found = r
            .discord
            .calls()
            .into_iter()
            .find(|c| c.method == "PATCH" && c.path.ends_with(&token));
        if let Some(c) = found {
            break c;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no answer within the connect timeout"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let said = edit.content();
    assert!(said.contains("voice server"), "{said}");
    // Over the gateway: she asked for the channel, then left it (no half-open call).
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !r
        .discord
        .voice_updates()
        .iter()
        .any(|u| u["channel_id"].is_null())
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let updates = r.discord.voice_updates();
    assert!(
        updates
            .first()
            .is_some_and(|u| u["channel_id"].to_string().contains("210")),
        "she asked for the channel: {updates:?}"
    );
    assert!(
        updates.iter().any(|u| u["channel_id"].is_null()),
        "a leave followed: {updates:?}"
    );
}

#[tokio::test]
async fn join_me_asked_in_words_uses_discord_voice_and_a_person_not_in_voice_is_told_so() {
    let r = rig().await;
    r.model
        .push(Reply::call("discord_voice", json!({"action": "join"})));
    r.model.push(Reply::text(
        "Hop into a voice channel first and I'll follow.",
    ));
    r.model
        .push(Reply::call("discord_voice", json!({"action": "dance"})));
    r.model.push(Reply::text("ok"));
    r.discord.mention(GENERAL, OWNER, "join me in voice");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content().contains("voice channel first"))
        .await;
    let sent = r.model.requests();
    let out = last_tool_output(&sent[1]);
    assert!(out.contains("not in a voice channel"), "{out}");
    // A bad action tells the model what was wrong, and nothing joins.
    r.discord.mention(GENERAL, OWNER, "do a voice dance");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "ok")
        .await;
    let sent = r.model.requests();
    let out = last_tool_output(&sent[3]);
    assert!(out.contains("join, leave or status"), "{out}");
    assert!(r.discord.voice_updates().is_empty(), "nothing joined");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_join_without_a_channel_joins_the_voice_channel_the_person_is_in() {
    use kotoba_testkit::discord::LOUNGE;
    let r = rig().await;
    r.discord.voice_state(OWNER, Some(LOUNGE));
    settle().await;
    r.discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while r.discord.voice_updates().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no voice join on the gateway"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let first = r.discord.voice_updates()[0].clone();
    assert!(
        first["channel_id"]
            .to_string()
            .contains(&LOUNGE.to_string()),
        "she asked for the person's channel: {first}"
    );
    assert!(
        first["guild_id"].to_string().contains(&GUILD.to_string()),
        "{first}"
    );
}

#[tokio::test]
async fn status_voice_shows_how_she_hears_and_each_of_the_last_replies_latency_broken_down() {
    let r = rig().await;
    let voice_status = |r: &kotoba_testkit::discord::rig::Rig| {
        r.discord.slash(
            GENERAL,
            OWNER,
            "status",
            json!([{"type": 5, "name": "voice", "value": true}]),
            0,
        )
    };
    let none = r.discord.wait_callback(voice_status(&r)).await;
    assert!(none.ephemeral(), "{:?}", none.body);
    let text = none.content();
    assert!(text.contains("**Voice room:** none"), "{text}");
    assert!(text.contains("**Last replies:** none yet"), "{text}");
    assert!(!text.contains("**Model:**"), "only the voice room: {text}");

    let home = r.app.engine.config().paths.home.clone();
    for (total, recognition) in [(1210, 300), (1100, 0), (1500, 300)] {
        kotoba::voice::latency::record(
            &home,
            kotoba::voice::latency::Breakdown {
                total_ms: total,
                commit_ms: 600,
                recognition_ms: recognition,
                model_ms: 400,
                synthesis_ms: 200,
                bot_ms: 10,
            },
        );
    }
    let text = r.discord.wait_callback(voice_status(&r)).await.content();
    assert!(
        text.contains("**Recognition:** openai, streamed as it is heard"),
        "stt.streaming auto, OpenAI's own service: {text}"
    );
    assert!(text.contains("**Last 3 replies**"), "{text}");
    let newest = "1. **1500 ms**: end of speech → commit 600 ms · recognition 300 ms · model first sentence 400 ms · synthesis first byte 200 ms · bot 10 ms";
    assert!(text.contains(newest), "newest first: {text}");
    assert!(text.contains("3. **1210 ms**"), "{text}");
    assert!(text.contains("**Median:** **1210 ms**"), "{text}");

    // Plain /status keeps its overview, with the latency lines under the room.
    let all = r.discord.slash(GENERAL, OWNER, "status", json!([]), 0);
    let text = r.discord.wait_callback(all).await.content();
    assert!(
        text.contains("**Model:**") && text.contains("Voice latency"),
        "{text}"
    );
}
