//! Issue 12's rules on the Discord surface, over the loopback Discord: who may see a
//! row's Full output, what Stop stops, and that secrets are never asked for in a channel.

use std::time::Duration;

use kotoba::surfaces::discord;
use serde_json::json;

use kotoba_testkit::discord::rig::{is_card_post, is_steps, posts_in, rig, settle, Rig};
use kotoba_testkit::discord::{GENERAL, GUEST, OWNER};
use kotoba_testkit::model_server::Reply;

#[tokio::test]
async fn a_guest_pressing_full_output_on_an_owners_host_tool_row_gets_a_private_not_yours_and_none_of_it(
) {
    let r = rig().await;
    r.model.push(Reply::call(
        "shell",
        json!({"command": "echo owner-only-words"}),
    ));
    r.model.push(Reply::text("Echoed."));
    r.discord.mention(GENERAL, OWNER, "echo something");
    let done = r
        .discord
        .wait_for(|c| {
            is_steps(c, GENERAL)
                && c.embed_text().contains("✅ ok")
                && c.buttons().iter().any(|b| b.0.starts_with("ko:"))
        })
        .await;
    let full = done
        .buttons()
        .into_iter()
        .find(|b| b.0.starts_with("ko:"))
        .unwrap();
    let steps_id = done
        .message_id
        .clone()
        .unwrap_or_else(|| done.path.rsplit('/').next().unwrap().to_string());
    let guest = r.discord.press(GENERAL, &steps_id, &full.0, GUEST);
    let c = r.discord.wait_callback(guest).await;
    assert!(c.ephemeral(), "{:?}", c.body);
    assert!(c.content().contains("not yours"), "{:?}", c.body);
    assert!(
        !c.raw.contains("owner-only-words"),
        "none of the output reaches a guest: {}",
        c.raw
    );
    // The owner pressing the same button gets the whole output, privately.
    let owner = r.discord.press(GENERAL, &steps_id, &full.0, OWNER);
    let c = r.discord.wait_callback(owner).await;
    assert!(
        c.ephemeral() && c.raw.contains("owner-only-words"),
        "{}",
        c.raw
    );
}

/// The approval card posted in GENERAL for `command`: its message id and Approve button.
async fn card_for(r: &Rig, command: &str) -> (String, String) {
    let card = r
        .discord
        .wait_for(|c| is_card_post(c, GENERAL) && c.embed_text().contains(command))
        .await;
    let approve = card
        .buttons()
        .into_iter()
        .find(|b| b.1 == "Approve once")
        .unwrap()
        .0;
    (card.message_id.unwrap(), approve)
}

#[tokio::test]
async fn discords_stop_runs_exactly_cancel_works_code_and_leaves_the_chat_turn_running() {
    let r = rig().await;
    let session = discord::session_of(GENERAL);
    // A chat turn is running: it waits on its card.
    r.model
        .push(Reply::call("shell", json!({"command": "touch kept.txt"})));
    r.discord.mention(GENERAL, OWNER, "make kept.txt");
    let (chat_card, approve) = card_for(&r, "touch kept.txt").await;
    // A background job runs in the same channel and waits on a card of its own.
    r.model
        .push(Reply::call("shell", json!({"command": "make long-build"})));
    r.app
        .engine
        .start_job(
            &kotoba_testkit::discord::rig::owner_turn(&session),
            "long build",
        )
        .await
        .unwrap();
    card_for(&r, "make long-build").await;
    let job_card = r
        .discord
        .wait_for(|c| posts_in(c, GENERAL) && c.buttons().iter().any(|b| b.0 == "kj:stop"))
        .await;
    // Stop → a private confirmation naming what dies → Yes.
    let stop = r.discord.press(
        GENERAL,
        job_card.message_id.as_deref().unwrap(),
        "kj:stop",
        OWNER,
    );
    let ask = r.discord.wait_callback(stop).await;
    assert!(
        ask.ephemeral() && ask.content().contains("'long build'"),
        "{:?}",
        ask.body
    );
    assert!(ask.buttons().iter().any(|b| b.0 == "kj:confirm"));
    let confirm = r.discord.press(GENERAL, "1", "kj:confirm", OWNER);
    let said = r.discord.wait_callback(confirm).await;
    assert!(said.ephemeral(), "{:?}", said.body);
    assert!(
        said.content()
            .starts_with("Stopped the job 'long build' after")
            && said.content().ends_with("Nothing of it is kept."),
        "cancel_work's own sentence: {}",
        said.content()
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while r.app.engine.job(&session).is_some() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the job never stopped"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The chat turn was not cut: its card still answers, the command runs, she replies.
    r.model.push(Reply::text("Made kept.txt."));
    let press = r.discord.press(GENERAL, &chat_card, &approve, OWNER);
    assert_eq!(r.discord.wait_callback(press).await.body["type"], json!(6));
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Made kept.txt.")
        .await;
    assert!(r._home.path().join("workspace/kept.txt").exists());
    settle().await;
}

#[tokio::test]
async fn secrets_are_never_asked_for_in_a_discord_channel_and_the_answer_points_to_the_page_or_terminal(
) {
    let r = rig().await;
    let session = discord::session_of(GENERAL);
    // Someone talks to her here, so the channel is followed (a card could be shown).
    r.model.push(Reply::text("hi"));
    r.discord.mention(GENERAL, OWNER, "hello");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "hi")
        .await;
    for tool in ["ask_secret", "request_credential"] {
        let before = r.model.request_count();
        r.model.push(Reply::call(
            tool,
            json!({"name": "github-token", "why": "to push the branch"}),
        ));
        r.model.push(Reply::text("I need it entered on the page."));
        r.model.set_fallback(Reply::text("Told them."));
        r.app
            .engine
            .start_job(
                &kotoba_testkit::discord::rig::owner_turn(&session),
                "push the branch",
            )
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let answer = loop {
            let fed = r
                .model
                .requests()
                .into_iter()
                .skip(before)
                .map(|q| q.to_string())
                .find(|q| q.contains("NOTHING was asked"));
            if let Some(fed) = fed {
                break fed;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{tool}: no answer reached the model (was it asked in the channel?)"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(
            answer.contains("secrets are NEVER asked for in a Discord channel"),
            "{answer}"
        );
        assert!(
            answer.contains("web page") && answer.contains("kotoba chat"),
            "{answer}"
        );
        while r.app.engine.job(&session).is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the job never ended"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        settle().await;
        assert!(
            !r.discord.calls().iter().any(|c| posts_in(c, GENERAL)
                && (c.embed_text().contains("github-token")
                    || c.content().contains("Enter the secret"))),
            "{tool}: nothing was asked in the channel"
        );
        assert!(
            r.app.engine.open_cards(&session).await.is_empty(),
            "no card waits for a secret"
        );
    }
}

#[tokio::test]
async fn slash_stop_asks_for_confirmation_naming_the_job_and_yes_stops_it() {
    let r = rig().await;
    let session = discord::session_of(GENERAL);
    r.model.push(Reply::text("hi"));
    r.discord.mention(GENERAL, OWNER, "hello");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "hi")
        .await;
    r.model
        .push(Reply::call("shell", json!({"command": "make long-build"})));
    r.app
        .engine
        .start_job(
            &kotoba_testkit::discord::rig::owner_turn(&session),
            "long build",
        )
        .await
        .unwrap();
    let (job_card, _) = card_for(&r, "make long-build").await;
    let slash = r.discord.slash(GENERAL, OWNER, "stop", json!([]), 0);
    let ask = r.discord.wait_callback(slash).await;
    assert!(ask.ephemeral(), "{:?}", ask.body);
    assert!(
        ask.content().contains("'long build'") && ask.content().contains("1 steps so far"),
        "the question names what dies: {}",
        ask.content()
    );
    assert!(
        r.app.engine.job(&session).is_some(),
        "nothing stops before the confirmation"
    );
    // A guest's Yes stops nothing.
    let guest = r.discord.press(GENERAL, "1", "kj:confirm", GUEST);
    let no = r.discord.wait_callback(guest).await;
    assert!(
        no.ephemeral() && no.content().contains("Only an owner"),
        "{:?}",
        no.body
    );
    assert!(r.app.engine.job(&session).is_some());
    let yes = r.discord.press(GENERAL, "1", "kj:confirm", OWNER);
    let said = r.discord.wait_callback(yes).await;
    assert!(
        said.content().starts_with("Stopped the job 'long build'"),
        "{}",
        said.content()
    );
    r.discord
        .wait_for(|c| c.is("PATCH", &format!("/messages/{job_card}")))
        .await;
    assert!(r.app.engine.job(&session).is_none(), "the job is gone");
}
