//! The Discord surface against the loopback Discord: serenity really connects (HELLO,
//! IDENTIFY, READY, GUILD_CREATE), users write and press buttons over the gateway,
//! and the tests assert the REST calls the bot made.

use std::time::Duration;

use kotoba::app::App;
use kotoba::surfaces::discord::{self, DiscordError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::discord::{
    FakeDiscord, Msg, BOT, CAROL, DM, GENERAL, GUEST, HOME, OTHER, OWNER,
};
use crate::support::model_server::{Reply, ScriptedModel};

struct Rig {
    discord: FakeDiscord,
    model: ScriptedModel,
    app: App,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), DiscordError>>,
    _home: tempfile::TempDir,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.app.engine.shutdown();
        self.task.abort();
    }
}

async fn rig_with(extra: &[(&str, &str)]) -> Rig {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    let config = discord.config(home.path(), &model.base_url(), extra);
    let app = App::build(config).unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(discord::run(
        app.engine.clone(),
        app.discord_port.clone(),
        shutdown.clone(),
    ));
    discord.wait_ready().await;
    Rig {
        discord,
        model,
        app,
        shutdown,
        task,
        _home: home,
    }
}

async fn rig() -> Rig {
    rig_with(&[]).await
}

fn posts_in(c: &crate::support::discord::Call, channel: u64) -> bool {
    c.is("POST", &format!("/channels/{channel}/messages"))
}

/// Give the bot a moment to (not) act.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(400)).await;
}

fn replies_in(d: &FakeDiscord, channel: u64) -> Vec<String> {
    d.calls()
        .iter()
        .filter(|c| {
            posts_in(c, channel)
                && c.body
                    .get("embeds")
                    .is_none_or(|e| e.as_array().is_none_or(|a| a.is_empty()))
        })
        .map(|c| c.content())
        .collect()
}

#[tokio::test]
async fn serenity_connects_with_the_intents_she_needs_and_registers_the_slash_commands() {
    let r = rig().await;
    let intents = r.discord.intents().unwrap();
    // guilds, guild members, voice states, guild messages, direct messages, message content
    for bit in [0, 1, 7, 9, 12, 15] {
        assert!(
            intents & (1 << bit) != 0,
            "intent bit {bit} missing from {intents:b}"
        );
    }
    let reg = r
        .discord
        .wait_for(|c| c.method == "PUT" && c.path.ends_with("/applications/901/commands"))
        .await;
    let names: Vec<&str> = reg
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for n in [
        "settings", "stop", "status", "grants", "audit", "new", "join", "leave",
    ] {
        assert!(names.contains(&n), "{n} not registered: {names:?}");
    }
    assert_eq!(reg.authorization.as_deref(), Some("Bot test-token"));
}

#[tokio::test]
async fn a_mention_is_answered_as_a_reply_that_pings_nobody() {
    let r = rig().await;
    r.model.push(Reply::text("Hello olive!"));
    let msg = r.discord.mention(GENERAL, OWNER, "hi there");
    let reply = r.discord.wait_for(|c| posts_in(c, GENERAL)).await;
    assert_eq!(reply.content(), "Hello olive!");
    assert_eq!(reply.body["message_reference"]["message_id"], msg["id"]);
    assert_eq!(reply.body["allowed_mentions"]["replied_user"], json!(false));
    assert_eq!(reply.body["allowed_mentions"]["parse"], json!([]));
    assert!(r
        .discord
        .calls()
        .iter()
        .any(|c| c.is("POST", &format!("/channels/{GENERAL}/typing"))));
    // Her own mention token was stripped before the model saw the line.
    let sent = r.model.requests()[0].to_string();
    assert!(
        sent.contains("hi there") && !sent.contains(&format!("<@{BOT}>")),
        "{sent}"
    );
}

#[tokio::test]
async fn a_plain_line_is_ignored_and_everyone_alone_does_not_count() {
    let r = rig().await;
    r.model.set_fallback(Reply::text("should not be said"));
    r.discord
        .say(GENERAL, OWNER, "just talking", Msg::default());
    r.discord.say(
        OTHER,
        OWNER,
        "@everyone look",
        Msg {
            everyone: true,
            ..Msg::default()
        },
    );
    r.discord.say(GENERAL, GUEST, "", Msg::default());
    settle().await;
    assert!(replies_in(&r.discord, GENERAL).is_empty());
    assert!(replies_in(&r.discord, OTHER).is_empty());
    assert_eq!(r.model.request_count(), 0);
}

#[tokio::test]
async fn a_dm_a_reply_to_her_and_a_home_channel_are_answered() {
    let r = rig().await;
    r.model.push(Reply::text("dm answer"));
    r.discord.say(DM, OWNER, "hello in private", Msg::default());
    r.discord
        .wait_for(|c| posts_in(c, DM) && c.content() == "dm answer")
        .await;
    r.model.push(Reply::text("home answer"));
    r.discord.say(HOME, GUEST, "anyone here?", Msg::default());
    r.discord
        .wait_for(|c| posts_in(c, HOME) && c.content() == "home answer")
        .await;
    // A reply to one of her messages.
    let hers = crate::support::discord::payloads::message(
        &crate::support::discord::payloads::MessageSpec {
            id: 55,
            channel: OTHER,
            guild: Some(100),
            author: BOT,
            author_name: "Kotoba",
            author_bot: true,
            content: "earlier",
            referenced: None,
            mentions: vec![],
            mention_everyone: false,
            attachments: vec![],
        },
    );
    r.model.push(Reply::text("reply answer"));
    r.discord.say(
        OTHER,
        CAROL,
        "about that",
        Msg {
            reply_to: Some(hers),
            ..Msg::default()
        },
    );
    r.discord
        .wait_for(|c| posts_in(c, OTHER) && c.content() == "reply answer")
        .await;
}

#[tokio::test]
async fn the_follow_up_window_answers_the_same_author_but_not_after_someone_spoke_between() {
    let r = rig().await;
    r.model.push(Reply::text("first"));
    r.discord.mention(GENERAL, OWNER, "start");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "first")
        .await;
    r.model.push(Reply::text("second"));
    r.discord
        .say(GENERAL, OWNER, "and another thing", Msg::default());
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "second")
        .await;
    // Another author is not answered, and closes the window for the first.
    r.model.set_fallback(Reply::text("should not be said"));
    r.discord.say(GENERAL, GUEST, "me too?", Msg::default());
    settle().await;
    r.discord
        .say(GENERAL, OWNER, "still there?", Msg::default());
    settle().await;
    assert_eq!(replies_in(&r.discord, GENERAL), vec!["first", "second"]);
}

#[tokio::test]
async fn a_refused_token_is_one_sentence_naming_the_fix() {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = discord.config(
        home.path(),
        &model.base_url(),
        &[("DISCORD_TOKEN", "refused-token")],
    );
    let app = App::build(config).unwrap();
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        discord::run(
            app.engine.clone(),
            app.discord_port.clone(),
            CancellationToken::new(),
        ),
    )
    .await
    .unwrap()
    .unwrap_err();
    let s = err.to_string();
    assert!(matches!(err, DiscordError::TokenRefused), "{s}");
    assert!(
        s.contains("DISCORD_TOKEN") && !s.contains("refused-token") && !s.contains('\n'),
        "{s}"
    );
}

#[tokio::test]
async fn missing_privileged_intents_are_one_sentence_naming_the_portal_switches() {
    let discord = FakeDiscord::start().await;
    discord.refuse_privileged_intents();
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let app = App::build(discord.config(home.path(), &model.base_url(), &[])).unwrap();
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        discord::run(
            app.engine.clone(),
            app.discord_port.clone(),
            CancellationToken::new(),
        ),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert!(matches!(err, DiscordError::IntentsMissing), "{err}");
    assert!(err.to_string().contains("Message Content"), "{err}");
}

#[tokio::test]
async fn no_token_means_the_surface_stays_off_with_a_sentence() {
    let home = tempfile::tempdir().unwrap();
    let config = kotoba::config::Config::for_home(home.path(), &[]);
    let app = App::build(config).unwrap();
    assert!(discord::start(&app, CancellationToken::new()).is_none());
    let err = discord::run(
        app.engine.clone(),
        app.discord_port.clone(),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, DiscordError::NoToken));
}
