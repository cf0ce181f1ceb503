//! What was said around her on Discord (docs/discord.md "What was said around her"):
//! the lines others wrote in a server channel since her last reply there reach the
//! model with their authors, as others' words and never as instructions; another
//! channel's lines never; `discord.channel_context` caps them and `0` turns it off.

use std::time::Duration;

use serde_json::Value;

use kotoba_testkit::discord::rig::{posts_in, rig, settle, Rig};
use kotoba_testkit::discord::{name_of, Msg, CAROL, GENERAL, GUEST, OTHER, OWNER};
use kotoba_testkit::model_server::Reply;

/// Mention her in `channel` as the owner, wait for her reply, and return the model
/// request that turn made.
async fn ask(r: &Rig, channel: u64, words: &str) -> String {
    let from = r.discord.calls().len();
    let asked = r.model.requests().len();
    r.model.push(Reply::text("Noted."));
    r.discord.mention(channel, OWNER, words);
    r.discord
        .wait_for_from(from, 20, |c| {
            posts_in(c, channel) && c.content() == "Noted."
        })
        .await;
    let requests: Vec<Value> = r.model.requests();
    assert!(requests.len() > asked, "her turn asked the model");
    requests[asked].to_string()
}

#[tokio::test]
async fn lines_others_wrote_in_the_channel_reach_the_model_with_their_authors_and_never_another_channels(
) {
    let r = rig().await;
    r.discord.say(
        GENERAL,
        GUEST,
        "the release moves to friday",
        Msg::default(),
    );
    r.discord.say(
        GENERAL,
        CAROL,
        "I would rather ship on tuesday",
        Msg::default(),
    );
    r.discord
        .say(OTHER, CAROL, "the vault code is 4242", Msg::default());
    settle().await;
    let asked = ask(&r, GENERAL, "what do you think of what they said?").await;
    for expected in [
        "the release moves to friday",
        "I would rather ship on tuesday",
        name_of(GUEST),
        name_of(CAROL),
        "not instructions",
    ] {
        assert!(asked.contains(expected), "{expected:?} in {asked}");
    }
    let friday = asked.find("the release moves to friday").unwrap();
    let tuesday = asked.find("I would rather ship on tuesday").unwrap();
    let question = asked.find("what do you think of what they said?").unwrap();
    assert!(
        friday < tuesday && tuesday < question,
        "oldest first, before the question"
    );
    assert!(
        !asked.contains("4242"),
        "another channel's line never: {asked}"
    );
    // Her next turn there starts over: only what was said since her reply.
    r.discord
        .say(GENERAL, GUEST, "lunch at noon?", Msg::default());
    settle().await;
    let next = ask(&r, GENERAL, "and now?").await;
    assert!(next.contains("lunch at noon?"), "{next}");
    assert!(!next.contains("the release moves to friday"), "{next}");
    // The other channel's line is there for her turn in that channel.
    let other = ask(&r, OTHER, "anything here?").await;
    assert!(other.contains("the vault code is 4242"), "{other}");
    assert!(!other.contains("lunch at noon?"), "{other}");
}

#[tokio::test]
async fn channel_context_keeps_the_newest_lines_up_to_its_setting_and_zero_turns_it_off() {
    let r = rig().await;
    std::fs::write(
        r._home.path().join("settings.yaml"),
        "discord.channel_context: 2\n",
    )
    .unwrap();
    for n in 1..=4 {
        r.discord
            .say(GENERAL, GUEST, &format!("note number {n}"), Msg::default());
    }
    settle().await;
    let asked = ask(&r, GENERAL, "summarise please").await;
    assert!(
        asked.contains("note number 3") && asked.contains("note number 4"),
        "{asked}"
    );
    assert!(
        !asked.contains("note number 2"),
        "only the newest two: {asked}"
    );
    std::fs::write(
        r._home.path().join("settings.yaml"),
        "discord.channel_context: 0\n",
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    r.discord.say(
        GENERAL,
        CAROL,
        "a line she should not be shown",
        Msg::default(),
    );
    settle().await;
    let off = ask(&r, GENERAL, "and now?").await;
    assert!(!off.contains("a line she should not be shown"), "{off}");
    assert!(!off.contains("What others wrote"), "{off}");
}

#[tokio::test]
async fn a_dm_carries_no_channel_context() {
    let r = rig().await;
    r.discord
        .say(GENERAL, GUEST, "said in general", Msg::default());
    settle().await;
    let from = r.discord.calls().len();
    r.model.push(Reply::text("Noted."));
    r.discord.say(
        kotoba_testkit::discord::DM,
        OWNER,
        "hello there",
        Msg::default(),
    );
    r.discord
        .wait_for_from(from, 20, |c| c.method == "POST" && c.content() == "Noted.")
        .await;
    let asked = r
        .model
        .requests()
        .last()
        .cloned()
        .unwrap_or_default()
        .to_string();
    assert!(!asked.contains("said in general"), "{asked}");
}

#[tokio::test]
async fn status_shows_the_channels_tokens_in_use_against_the_window() {
    let r = rig().await;
    std::fs::write(
        r._home.path().join("settings.yaml"),
        "context:\n  window: 64000\n",
    )
    .unwrap();
    ask(&r, GENERAL, "a few words to start the conversation").await;
    let status = r
        .discord
        .slash(GENERAL, OWNER, "status", serde_json::json!([]), 0);
    let text = r.discord.wait_callback(status).await.content();
    let line = text
        .lines()
        .find(|l| l.starts_with("**Context:**"))
        .unwrap_or_else(|| panic!("no context line: {text}"));
    assert!(line.contains("of 64,000 tokens"), "{line}");
    let used: u64 = line
        .trim_start_matches("**Context:** ")
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(
        used > 100 && used < 64_000,
        "the last request's size: {line}"
    );
}
