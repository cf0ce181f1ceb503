//! Reminders on Discord, over the loopback Discord: a reminder comes due in the channel
//! where it was set, mentioning the person who set it, and one that came due while the
//! process was down is posted once at start-up (docs/discord.md, "Reminders").

use std::time::Duration;

use kotoba::protocol::{Channel, Register, Reminder};
use kotoba::store::{now_ms, Store};
use kotoba::surfaces::discord;
use serde_json::json;

use kotoba_testkit::discord::rig::{posts_in, rig, rig_in, Rig};
use kotoba_testkit::discord::{Call, FakeDiscord, Msg, DM, GENERAL, OTHER, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};

/// Whether `c` is a reminder post in `channel` carrying `text`.
fn reminder_post(c: &Call, channel: u64, text: &str) -> bool {
    posts_in(c, channel) && c.content().contains("Reminder") && c.content().contains(text)
}

/// The users a post lets its mentions ping.
fn pinged(c: &Call) -> Vec<String> {
    c.body["allowed_mentions"]["users"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| {
            u.as_str()
                .map(str::to_string)
                .or_else(|| Some(u.to_string()))
        })
        .collect()
}

#[tokio::test]
async fn a_reminder_set_in_a_channel_comes_due_in_that_channel_mentioning_who_set_it() {
    let r = rig().await;
    r.model.push(Reply::call(
        "cronjob",
        json!({"action": "create", "text": "stretch your legs", "in_minutes": 0.01}),
    ));
    r.model.push(Reply::text("Set, in a moment."));
    r.discord
        .mention(GENERAL, OWNER, "remind me to stretch your legs in a moment");
    let due = r
        .discord
        .wait_for(|c| reminder_post(c, GENERAL, "stretch your legs"))
        .await;
    assert!(
        due.content().contains(&format!("<@{OWNER}>")),
        "the asker is mentioned: {}",
        due.content()
    );
    assert_eq!(pinged(&due), [OWNER.to_string()], "{:?}", due.body);
    assert!(
        !r.discord
            .calls()
            .iter()
            .any(|c| reminder_post(c, OTHER, "stretch")),
        "no other channel gets it"
    );
}

#[tokio::test]
async fn a_reminder_set_in_a_dm_comes_due_in_that_dm_mentioning_who_set_it() {
    let r = rig().await;
    r.model.push(Reply::call(
        "cronjob",
        json!({"action": "create", "text": "call the dentist", "in_minutes": 0.01}),
    ));
    r.model.push(Reply::text("Noted."));
    r.discord
        .say(DM, OWNER, "remind me to call the dentist", Msg::default());
    let due = r
        .discord
        .wait_for(|c| reminder_post(c, DM, "call the dentist"))
        .await;
    assert!(
        due.content().contains(&format!("<@{OWNER}>")),
        "{}",
        due.content()
    );
    assert!(!r
        .discord
        .calls()
        .iter()
        .any(|c| reminder_post(c, GENERAL, "dentist")));
}

/// A rig whose store already holds `seed` (as if set before the process went down).
async fn rig_after_downtime(seed: &Reminder) -> Rig {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    let config = discord.config(home.path(), &model, &[]);
    Store::open(&config.paths.db)
        .unwrap()
        .add_reminder(seed)
        .await
        .unwrap();
    rig_in(discord, model, home, &[]).await
}

#[tokio::test]
async fn a_reminder_that_came_due_while_the_process_was_down_is_posted_once_at_start_in_its_channel(
) {
    let r = rig_after_downtime(&Reminder {
        id: 0,
        session: discord::session_of(GENERAL),
        text: "water the plants".into(),
        due_ms: now_ms() - 3_600_000,
        register: Register::Text,
        channel: Channel::Text,
        every_secs: None,
        asker: format!("Olive ({OWNER})"),
    })
    .await;
    let due = r
        .discord
        .wait_for(|c| reminder_post(c, GENERAL, "water the plants"))
        .await;
    assert!(
        due.content().contains(&format!("<@{OWNER}>")),
        "{}",
        due.content()
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let posts = r
        .discord
        .calls()
        .iter()
        .filter(|c| c.content().contains("water the plants"))
        .count();
    assert_eq!(posts, 1, "posted once");
    assert!(r
        .app
        .engine
        .store()
        .reminders_of(&discord::session_of(GENERAL))
        .await
        .unwrap()
        .is_empty());
}
