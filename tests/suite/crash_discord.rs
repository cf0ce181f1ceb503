//! A crash with an approval card up on Discord: the real `kotoba serve` draws a card
//! in a channel of the loopback Discord, is killed with SIGKILL, and is started again
//! on the same data folder. The card is edited to say the restart settled it and
//! nothing ran, its buttons disabled, so no orphaned button remains; the command never
//! ran, and the message that asked is not answered a second time.

use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;

use kotoba_testkit::discord::{FakeDiscord, GENERAL, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::{free_port, healthy, serve, stop};

#[tokio::test]
async fn a_card_left_up_by_a_crash_is_settled_on_discord_by_the_restart_and_nothing_ran() {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    model.push(Reply::call(
        "shell",
        json!({ "command": "touch made-by-card.txt" }),
    ));
    model.set_fallback(Reply::text("All right."));
    let home = tempfile::tempdir().unwrap();
    let mut env: Vec<(String, String)> = discord.env();
    env.extend(
        model
            .env("chat")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");

    let mut first = serve(home.path(), &addr, &env);
    healthy(port).await;
    discord.wait_ready().await;
    discord.mention(GENERAL, OWNER, "please make the file");
    let card = discord
        .wait_for_from(0, 20, |c| {
            c.is("POST", &format!("/channels/{GENERAL}/messages"))
                && c.buttons()
                    .iter()
                    .any(|(_, label, _)| label.contains("Approve"))
        })
        .await;
    let card_id = card.message_id.clone().unwrap();
    let answered = model.requests().len();

    kill(Pid::from_raw(first.id().unwrap() as i32), Signal::SIGKILL).unwrap();
    first.wait().await.unwrap();

    let mark = discord.calls().len();
    let second = serve(home.path(), &addr, &env);
    healthy(port).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while discord.identifies() < 2 {
        assert!(
            Instant::now() < deadline,
            "the restarted bot never identified"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let is_edit = |c: &kotoba_testkit::discord::Call| {
        c.is("PATCH", &format!("/channels/{GENERAL}/messages/{card_id}"))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let edit = loop {
        if let Some(c) = discord.calls().iter().skip(mark).find(|c| is_edit(c)) {
            break c.clone();
        }
        if Instant::now() > deadline {
            let log = stop(second).await;
            panic!("the card was never settled on Discord; the restarted serve said:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        edit.embed_text()
            .contains("restarted before anyone answered. Nothing ran."),
        "{}",
        edit.embed_text()
    );
    let buttons = edit.buttons();
    assert!(
        !buttons.is_empty() && buttons.iter().all(|(_, _, disabled)| *disabled),
        "{buttons:?}"
    );
    assert!(
        !home.path().join("workspace/made-by-card.txt").exists(),
        "nothing ran"
    );
    // The message that asked was seen before the crash: the restart does not answer it
    // again (a barrier: a new mention is answered, and it is the only new request).
    model.push(Reply::text("Here now."));
    discord.mention(GENERAL, OWNER, "are you there?");
    discord
        .wait_for_from(mark, 20, |c| {
            c.is("POST", &format!("/channels/{GENERAL}/messages"))
                && c.content().contains("Here now.")
        })
        .await;
    assert_eq!(
        model.requests().len(),
        answered + 1,
        "the asking message was not answered twice"
    );
    stop(second).await;
}
