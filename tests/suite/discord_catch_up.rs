//! Catch-up after a restart, over the loopback Discord: what was said to her while she
//! was down (at most `discord.catch_up` seconds ago) is answered once, oldest first,
//! in its channel; what was not for her, what is too old and what she already answered
//! stays unanswered — across a second restart too.

use std::time::Duration;

use kotoba::app::App;

use kotoba_testkit::discord::rig::{posts_in, start_bot};

use kotoba_testkit::discord::{FakeDiscord, GENERAL, GUEST, OTHER, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};

/// Wait until the bot has started `n` times in all: identified, and registered its
/// slash commands (the last step of its start-up) once per start.
async fn wait_started(discord: &FakeDiscord, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let registered = || {
        discord
            .calls()
            .iter()
            .filter(|c| c.method == "PUT" && c.path.contains("/commands"))
            .count()
    };
    while discord.identifies() < n || registered() < n {
        assert!(
            std::time::Instant::now() < deadline,
            "the bot did not start a {n}th time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn messages_for_her_while_she_was_down_are_answered_once_after_a_restart() {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();

    // First run: she sees the channel and answers.
    let first = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 1).await;
    model.push(Reply::text("Hello, Olive."));
    discord.mention(GENERAL, OWNER, "hello");
    discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content().contains("Hello, Olive."))
        .await;
    first.stop().await;

    // While she is down: one too old, one not for her, one for her; and a channel she
    // has never seen.
    discord.said_while_away(GENERAL, OWNER, "an old question", true, 3_600);
    discord.said_while_away(GENERAL, GUEST, "just chatting with friends", false, 40);
    discord.said_while_away(GENERAL, OWNER, "are you back?", true, 30);
    discord.said_while_away(OTHER, OWNER, "over here too?", true, 20);

    // Second run: a new gateway session, so she catches up.
    let answered_before = model.requests().len();
    model.push(Reply::text("Yes, I'm back."));
    let mark = discord.calls().len();
    let second = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 2).await;
    let reply = discord
        .wait_for_from(mark, 20, |c| {
            posts_in(c, GENERAL) && c.content().contains("back")
        })
        .await;
    assert!(
        reply.content().contains("Yes, I'm back."),
        "{}",
        reply.content()
    );
    let asked = model.requests();
    assert_eq!(
        asked.len(),
        answered_before + 1,
        "one caught-up message answered"
    );
    let last = asked.last().unwrap().to_string();
    assert!(last.contains("are you back?"), "{last}");
    assert!(
        !last.contains("an old question"),
        "too old is never answered: {last}"
    );
    // A barrier: a live mention is answered after the catch-up, and only it.
    model.push(Reply::text("Still here."));
    discord.mention(GENERAL, OWNER, "still there?");
    discord
        .wait_for_from(mark, 20, |c| {
            posts_in(c, GENERAL) && c.content().contains("Still here.")
        })
        .await;
    assert_eq!(model.requests().len(), answered_before + 2);
    second.stop().await;

    // Third run: nothing new was said, so nothing is answered twice.
    model.push(Reply::text("Third run barrier."));
    let mark = discord.calls().len();
    let third = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 3).await;
    discord.mention(GENERAL, OWNER, "barrier");
    discord
        .wait_for_from(mark, 20, |c| {
            posts_in(c, GENERAL) && c.content().contains("Third run barrier.")
        })
        .await;
    let asked = model.requests();
    assert_eq!(
        asked.len(),
        answered_before + 3,
        "nothing was answered twice"
    );
    assert!(asked.last().unwrap().to_string().contains("barrier"));
    let posts = discord
        .calls()
        .iter()
        .skip(mark)
        .filter(|c| posts_in(c, GENERAL))
        .count();
    assert_eq!(posts, 1, "the third run posted only the barrier's answer");
    third.stop().await;
}

#[tokio::test]
async fn catch_up_zero_turns_it_off() {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        "discord:\n  catch_up: 0\n",
    )
    .unwrap();
    let first = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 1).await;
    model.push(Reply::text("Hi."));
    discord.mention(GENERAL, OWNER, "hi");
    discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content().contains("Hi."))
        .await;
    first.stop().await;
    discord.said_while_away(GENERAL, OWNER, "are you back?", true, 10);
    model.push(Reply::text("Barrier."));
    let second = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 2).await;
    discord.mention(GENERAL, OWNER, "barrier");
    discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content().contains("Barrier."))
        .await;
    let asked = model.requests();
    assert_eq!(
        asked.len(),
        2,
        "with catch_up 0 the missed message is left alone"
    );
    assert!(!asked.last().unwrap().to_string().contains("are you back?"));
    second.stop().await;
}

#[tokio::test]
async fn what_a_crash_cut_in_a_discord_session_is_told_once_in_its_channel() {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    // What start-up leaves for Discord after a crash cut a job in #general.
    let line = kotoba::store::cut_job_line("sort the photos", 3);
    {
        let config = discord.config(home.path(), &model, &[]);
        let app = App::build(config).await.unwrap();
        let session = kotoba::surfaces::discord::session_of(GENERAL);
        app.engine
            .store()
            .add_restart_notice(&session, &line)
            .await
            .unwrap();
    }
    let first = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 1).await;
    let told = discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content().contains("sort the photos"))
        .await;
    assert!(told.content().contains("NOT done"), "{}", told.content());
    first.stop().await;
    let mark = discord.calls().len();
    let second = start_bot(&discord, &model, home.path(), &[]).await;
    wait_started(&discord, 2).await;
    model.push(Reply::text("Barrier."));
    discord.mention(GENERAL, OWNER, "barrier");
    discord
        .wait_for_from(mark, 20, |c| {
            posts_in(c, GENERAL) && c.content().contains("Barrier.")
        })
        .await;
    let again = discord
        .calls()
        .iter()
        .skip(mark)
        .filter(|c| posts_in(c, GENERAL) && c.content().contains("sort the photos"))
        .count();
    assert_eq!(again, 0, "told once");
    second.stop().await;
}
