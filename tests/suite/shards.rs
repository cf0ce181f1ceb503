//! One bot, several processes: `kotoba serve` processes sharing one PostgreSQL, each
//! running its shards (`KOTOBA_DISCORD_SHARDS=i-j/N`) against the loopback Discord with
//! guilds spread over the shards. Each guild's mention is answered exactly once, by the
//! process holding its shard (each process talks to its own scripted model, whose
//! words say which one answered); a DM goes to shard 0's.

use kotoba_testkit::until;
use std::time::{Duration, Instant};

use tokio::process::Child;

use super::crash::model_env;
use kotoba_testkit::discord::{FakeDiscord, DM, GUEST, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::postgres::fresh_database;
use kotoba_testkit::process::{free_port, healthy, serve, stop};

/// A `kotoba serve` on the shared store and the loopback Discord, running `shards`,
/// answering with `model`.
pub(super) async fn shard_process(
    discord: &FakeDiscord,
    model: &ScriptedModel,
    url: &str,
    shards: &str,
) -> (Child, tempfile::TempDir, u16) {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut env: Vec<(String, String)> = model_env(model)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    env.extend(discord.env());
    env.push(("KOTOBA_DATABASE_URL".into(), url.into()));
    env.push(("KOTOBA_DISCORD_SHARDS".into(), shards.into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let child = serve(home.path(), &format!("127.0.0.1:{port}"), &env);
    healthy(port).await;
    (child, home, port)
}

/// The bot's messages in `channel` so far.
pub(super) fn answers_in(discord: &FakeDiscord, channel: u64) -> Vec<String> {
    discord
        .calls()
        .iter()
        .filter(|c| c.is("POST", &format!("/channels/{channel}/messages")))
        .map(|c| c.content())
        .collect()
}

/// `GET /metrics` of the process on `port`.
async fn metrics(port: u16) -> String {
    let r = reqwest::get(format!("http://127.0.0.1:{port}/metrics"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    r.text().await.unwrap()
}

/// Every two IDENTIFYs in one identify bucket (shard modulo `buckets`), whichever
/// process sent them, came Discord's 5 s apart (4.5 s: a tolerance for a busy machine).
fn assert_identifies_spaced(discord: &FakeDiscord, buckets: u32) {
    let ids = discord.identify_times();
    for (i, (shard, at)) in ids.iter().enumerate() {
        for (other, later) in &ids[i + 1..] {
            if shard % buckets == other % buckets {
                let gap = later.duration_since(*at);
                assert!(
                    gap >= Duration::from_millis(4_500),
                    "shards {shard} and {other} (bucket {}) identified {gap:?} apart",
                    shard % buckets
                );
            }
        }
    }
}

fn scripted(words: &str) -> ScriptedModel {
    let model = futures::executor::block_on(ScriptedModel::start());
    model.set_fallback(Reply::text(words));
    model
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_processes_each_guild_is_answered_once_by_the_process_holding_its_shard_and_a_dm_by_shard_0s(
) {
    let Some(url) = fresh_database("shards by range") else {
        return;
    };
    let discord = FakeDiscord::start().await;
    discord.recommend_shards(2);
    let guilds = discord.add_guilds(4);
    let (model_a, model_b) = (scripted("Shard zero here."), scripted("Shard one here."));
    let (a, _home_a, port_a) = shard_process(&discord, &model_a, &url, "0-0/2").await;
    let (b, _home_b, port_b) = shard_process(&discord, &model_b, &url, "1/2").await;
    discord.wait_shards(2, Duration::from_secs(40)).await;
    // One identify bucket (max_concurrency 1): the two processes took turns.
    assert_identifies_spaced(&discord, 1);
    for (k, (_, channel)) in guilds.iter().enumerate() {
        discord.mention(*channel, GUEST, &format!("hello from guild {k}"));
    }
    discord.say(DM, OWNER, "a quiet word", Default::default());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let done = guilds
            .iter()
            .all(|(_, c)| !answers_in(&discord, *c).is_empty())
            && !answers_in(&discord, DM).is_empty();
        if done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not every mention was answered: {:?}",
            discord
                .calls()
                .iter()
                .map(|c| c.path.clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Time for a second answer, were one coming.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (guild, channel) in &guilds {
        let said = answers_in(&discord, *channel);
        let expected = if (guild >> 22) % 2 == 0 {
            "Shard zero here."
        } else {
            "Shard one here."
        };
        assert_eq!(
            said,
            [expected],
            "guild {guild} (shard {}) identified {:?}",
            (guild >> 22) % 2,
            discord.identified_shards()
        );
    }
    assert_eq!(
        answers_in(&discord, DM),
        ["Shard zero here."],
        "a DM is shard 0's"
    );
    // Each process's /metrics: its one shard, the turns it ran (three guilds and the DM
    // on shard 0's, two guilds on shard 1's).
    for (port, turns) in [(port_a, 3), (port_b, 2)] {
        let text = metrics(port).await;
        assert!(
            text.lines().any(|l| l == "kotoba_discord_shards_held 1"),
            "{text}"
        );
        let ran: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("kotoba_turns_total "))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(ran >= turns, "{port}: {ran} turns:\n{text}");
        assert!(
            text.contains("# TYPE kotoba_turn_duration_seconds histogram"),
            "{text}"
        );
    }
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_two_processes_both_hold_a_shard_each_message_is_answered_once() {
    let Some(url) = fresh_database("shard overlap") else {
        return;
    };
    let discord = FakeDiscord::start().await;
    let (model_a, model_b) = (scripted("From A."), scripted("From B."));
    let (a, _home_a, _) = shard_process(&discord, &model_a, &url, "0/1").await;
    let (b, _home_b, _) = shard_process(&discord, &model_b, &url, "0/1").await;
    // Both sessions of shard 0 live at once: Discord sends both every event.
    let deadline = Instant::now() + Duration::from_secs(20);
    while discord.identified_shards().len() < 2 {
        assert!(Instant::now() < deadline, "both processes identify");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let lines = 6;
    for k in 0..lines {
        discord.mention(
            kotoba_testkit::discord::GENERAL,
            GUEST,
            &format!("question {k}"),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while answers_in(&discord, kotoba_testkit::discord::GENERAL).len() < lines {
        assert!(Instant::now() < deadline, "every question is answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let said = answers_in(&discord, kotoba_testkit::discord::GENERAL);
    assert_eq!(
        said.len(),
        lines,
        "one answer per message, never two: {said:?}"
    );
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auto_shards_a_newcomer_gets_its_share_and_a_killed_process_shards_are_taken_over_within_30_s(
) {
    let Some(url) = fresh_database("auto shards") else {
        return;
    };
    let discord = FakeDiscord::start().await;
    discord.recommend_shards(2);
    let guilds = discord.add_guilds(4);
    let (model_a, model_b) = (scripted("From A."), scripted("From B."));
    let (mut a, _home_a, _) = shard_process(&discord, &model_a, &url, "auto/2").await;
    // Alone, A claims both shards.
    discord.wait_shards(2, Duration::from_secs(30)).await;
    let (b, _home_b, _) = shard_process(&discord, &model_b, &url, "auto/2").await;
    // A gives one up for B: some shard identifies a second time.
    until(
        "the newcomer takes a shard",
        Duration::from_secs(40),
        async || discord.identified_shards().len() >= 3,
    )
    .await;
    discord.wait_shards(2, Duration::from_secs(20)).await;
    for (k, (_, channel)) in guilds.iter().enumerate() {
        discord.mention(*channel, GUEST, &format!("before {k}"));
    }
    until(
        "each guild's first mention is answered",
        Duration::from_secs(30),
        async || {
            guilds
                .iter()
                .all(|(_, c)| answers_in(&discord, *c).len() == 1)
        },
    )
    .await;
    let by_a: Vec<u64> = guilds
        .iter()
        .filter(|(_, c)| answers_in(&discord, *c) == ["From A."])
        .map(|(_, c)| *c)
        .collect();
    assert!(
        !by_a.is_empty() && by_a.len() < guilds.len(),
        "the two processes share the guilds: {by_a:?}"
    );
    a.start_kill().unwrap();
    a.wait().await.unwrap();
    let killed = Instant::now();
    // Said while nobody runs A's shards: lost by the gateway, caught up by B.
    for c in &by_a {
        discord.mention(*c, GUEST, "while nobody listens");
    }
    until(
        "B answers what was said in A's guilds",
        Duration::from_secs(45),
        async || by_a.iter().all(|c| answers_in(&discord, *c).len() == 2),
    )
    .await;
    let took_over = killed.elapsed();
    assert!(
        took_over < Duration::from_secs(30),
        "A's shards were taken over after {took_over:?}"
    );
    for c in &by_a {
        assert_eq!(
            answers_in(&discord, *c),
            ["From A.", "From B."],
            "channel {c}"
        );
    }
    for (k, (_, channel)) in guilds.iter().enumerate() {
        discord.mention(*channel, GUEST, &format!("after {k}"));
    }
    until(
        "every guild is answered by B",
        Duration::from_secs(30),
        async || {
            guilds.iter().all(|(_, c)| {
                answers_in(&discord, *c).last().map(String::as_str) == Some("From B.")
                    && answers_in(&discord, *c).len() >= 2
            })
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (_, c) in &guilds {
        let said = answers_in(&discord, *c);
        let expected = if by_a.contains(c) { 3 } else { 2 };
        assert_eq!(
            said.len(),
            expected,
            "each message answered once in {c}: {said:?}"
        );
    }
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_both_processes_know_comes_due_once() {
    use kotoba::protocol::{Channel, Register, Reminder};
    let Some(url) = fresh_database("reminder across processes") else {
        return;
    };
    let general = kotoba_testkit::discord::GENERAL;
    // Stored before either process starts, so both schedulers wait for the same time.
    let store = kotoba::store::Store::connect(&url).await.unwrap();
    store
        .add_reminder(&Reminder {
            id: 0,
            session: format!("discord:{general}"),
            text: "water the plants".into(),
            due_ms: kotoba::store::now_ms() + 8_000,
            every_secs: None,
            register: Register::Text,
            channel: Channel::Text,
            asker: format!("olive ({OWNER})"),
        })
        .await
        .unwrap();
    let discord = FakeDiscord::start().await;
    discord.recommend_shards(2);
    let (model_a, model_b) = (scripted("From A."), scripted("From B."));
    let (a, _home_a, _) = shard_process(&discord, &model_a, &url, "0/2").await;
    let (b, _home_b, _) = shard_process(&discord, &model_b, &url, "1/2").await;
    let posts = || {
        discord
            .calls()
            .iter()
            .filter(|c| c.method == "POST" && c.content().contains("water the plants"))
            .count()
    };
    until(
        "the reminder comes due",
        Duration::from_secs(30),
        async || posts() >= 1,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(posts(), 1, "one post, whichever process claimed it");
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_started_together_identify_in_turns_per_bucket_and_answer_each_guild_once()
{
    let Some(url) = fresh_database("three processes") else {
        return;
    };
    let discord = FakeDiscord::start().await;
    discord.recommend_shards(3);
    // Two identify buckets: shards 0 and 2 share one, shard 1 has the other.
    discord.set_max_concurrency(2);
    let guilds = discord.add_guilds(6);
    let models = [
        scripted("Process zero."),
        scripted("Process one."),
        scripted("Process two."),
    ];
    let (p0, p1, p2) = tokio::join!(
        shard_process(&discord, &models[0], &url, "0/3"),
        shard_process(&discord, &models[1], &url, "1/3"),
        shard_process(&discord, &models[2], &url, "2/3"),
    );
    discord.wait_shards(3, Duration::from_secs(60)).await;
    assert_identifies_spaced(&discord, 2);
    for (k, (_, channel)) in guilds.iter().enumerate() {
        discord.mention(*channel, GUEST, &format!("hello from guild {k}"));
    }
    until(
        "every guild answered",
        Duration::from_secs(30),
        async || {
            guilds
                .iter()
                .all(|(_, c)| !answers_in(&discord, *c).is_empty())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (guild, channel) in &guilds {
        let shard = ((guild >> 22) % 3) as usize;
        let expected = ["Process zero.", "Process one.", "Process two."][shard];
        assert_eq!(answers_in(&discord, *channel), [expected], "guild {guild}");
    }
    for (child, _home, _port) in [p0, p1, p2] {
        stop(child).await;
    }
}
