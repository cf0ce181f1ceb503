//! Server plans against the loopback Discord: discord_plan stores a layout under an id;
//! discord_apply_plan refuses more than 12 deletions until confirm_deletes, writes a
//! snapshot first, and journals each change so a stopped run resumes without applying
//! anything twice.

use serde_json::{json, Value};

use kotoba_testkit::discord::manage::Fault;
use kotoba_testkit::discord::{Call, GENERAL, GUILD, OWNER};
use kotoba_testkit::model_server::Reply;

use super::discord_manage::{approve_and_wait, calls_matching, manage_rig, tool_result};
use kotoba_testkit::discord::rig::{is_card_post, posts_in, Rig};

/// One owner turn in which the model calls `tool` with `args` and then says `done`.
async fn turn(r: &Rig, tool: &str, args: Value, done: &str) {
    let from = r.discord.calls().len();
    r.model.push(Reply::call(tool, args));
    r.model.push(Reply::text(done));
    r.discord.mention(GENERAL, OWNER, "go on");
    r.discord
        .wait_for_from(from, 20, |c| posts_in(c, GENERAL) && c.content() == done)
        .await;
}

/// One owner turn calling discord_apply_plan with `args`, up to its card.
async fn apply_card(r: &Rig, args: Value) -> Call {
    let from = r.discord.calls().len();
    r.model.push(Reply::call("discord_apply_plan", args));
    r.discord.mention(GENERAL, OWNER, "apply it");
    r.discord
        .wait_for_from(from, 10, |c| is_card_post(c, GENERAL))
        .await
}

/// The plan id in discord_plan's answer.
fn plan_id(said: &str) -> String {
    let at = said.find("plan-").expect("a plan id");
    said[at..at + 13].to_string()
}

#[tokio::test]
async fn more_than_twelve_deletions_wait_for_confirm_deletes_and_a_snapshot_comes_first() {
    let r = manage_rig().await;
    for i in 1..=13 {
        r.discord.add_channel(5000 + i, &format!("old-{i}"));
    }
    let changes: Vec<Value> = (1..=13)
        .map(|i| json!({"op": "delete_channel", "target": format!("#old-{i}")}))
        .collect();
    turn(
        &r,
        "discord_plan",
        json!({ "changes": changes }),
        "Planned.",
    )
    .await;
    let said = tool_result(&r);
    assert!(
        said.contains("13 to delete") && said.contains("confirm_deletes"),
        "{said}"
    );
    assert!(said.contains("shown in the channel as an embed"), "{said}");
    let shown = r
        .discord
        .calls()
        .into_iter()
        .find(|c| posts_in(c, GENERAL) && c.embed_text().starts_with("Plan plan-"))
        .expect("the plan shown as an embed");
    assert_eq!(shown.embed_text().matches("⚠ DELETE").count(), 13);
    let id = plan_id(&said);
    // Without confirm_deletes: refused before any card, nothing deleted.
    turn(
        &r,
        "discord_apply_plan",
        json!({ "plan_id": id }),
        "Needs a yes.",
    )
    .await;
    let said = tool_result(&r);
    assert!(
        said.contains("deletes 13 things, more than 12") && said.contains("'old-13'"),
        "{said}"
    );
    assert!(!r.discord.calls().iter().any(|c| is_card_post(c, GENERAL)));
    assert!(calls_matching(&r, "DELETE", "/channels/").is_empty());
    // With it: one card naming every deletion, then all thirteen go.
    let card = apply_card(&r, json!({"plan_id": id, "confirm_deletes": true})).await;
    let text = card.embed_text();
    assert_eq!(text.matches("⚠ DELETE").count(), 13, "{text}");
    assert!(text.contains("There is no undo"), "{text}");
    approve_and_wait(&r, &card, OWNER, "All gone.").await;
    assert_eq!(calls_matching(&r, "DELETE", "/channels/").len(), 13);
    assert!(!r
        .discord
        .channels()
        .iter()
        .any(|c| c["name"].as_str().is_some_and(|n| n.starts_with("old-"))));
    let said = tool_result(&r);
    assert!(
        said.contains("applied: 13 changes") && said.contains("does not bring back its messages"),
        "{said}"
    );
    // The snapshot was written first, and holds the channels as they were.
    let folder = r._home.path().join("discord/snapshots");
    let files: Vec<_> = std::fs::read_dir(&folder).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{folder:?}");
    let shot = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(
        shot.contains("\"old-13\"") && shot.contains("\"roles\""),
        "{shot}"
    );
    let first_delete = calls_matching(&r, "DELETE", "/channels/")[0].at;
    let modified = files[0].metadata().unwrap().modified().unwrap();
    assert!(
        modified.elapsed().unwrap() >= first_delete.elapsed(),
        "the snapshot came first"
    );
    let rows = r.app.engine.audit_trail(None, 100).await.unwrap();
    assert!(rows.iter().any(|a| a.tool == "discord_apply_plan"
        && a.detail.contains(&files[0].path().display().to_string())));
}

#[tokio::test]
async fn a_plan_stopped_halfway_resumes_and_applies_nothing_twice() {
    let r = manage_rig().await;
    let changes: Vec<Value> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| json!({"op": "create_channel", "target": format!("room-{n}")}))
        .collect();
    turn(
        &r,
        "discord_plan",
        json!({ "changes": changes }),
        "Planned.",
    )
    .await;
    let id = plan_id(&tool_result(&r));
    r.discord.queue_fault(
        Fault::missing_permissions("POST", &format!("guilds/{GUILD}/channels"))
            .when_body_has("room-c"),
    );
    let card = apply_card(&r, json!({ "plan_id": id })).await;
    approve_and_wait(&r, &card, OWNER, "It stopped.").await;
    let said = tool_result(&r);
    assert!(
        said.contains("STOPPED at change 3") && said.contains("resume: true"),
        "{said}"
    );
    // Without resume: refused, nothing tried.
    let before = calls_matching(&r, "POST", &format!("guilds/{GUILD}/channels")).len();
    turn(
        &r,
        "discord_apply_plan",
        json!({ "plan_id": id }),
        "Say resume.",
    )
    .await;
    assert!(
        tool_result(&r).contains("partly applied already (2 of 4"),
        "{}",
        tool_result(&r)
    );
    assert_eq!(
        calls_matching(&r, "POST", &format!("guilds/{GUILD}/channels")).len(),
        before
    );
    // Resumed: only the rest is on the card and applied.
    let card = apply_card(&r, json!({"plan_id": id, "resume": true})).await;
    let text = card.embed_text();
    assert!(
        text.contains("3. create text 'room-c'") && !text.contains("room-a"),
        "{text}"
    );
    approve_and_wait(&r, &card, OWNER, "Finished.").await;
    let posts = calls_matching(&r, "POST", &format!("guilds/{GUILD}/channels"));
    let tries = |n: &str| posts.iter().filter(|c| c.body["name"] == json!(n)).count();
    assert_eq!(
        [
            tries("room-a"),
            tries("room-b"),
            tries("room-c"),
            tries("room-d")
        ],
        [1, 1, 2, 1],
        "a and b once, c failed once then applied, d once"
    );
    for n in ["room-a", "room-b", "room-c", "room-d"] {
        let count = r
            .discord
            .channels()
            .iter()
            .filter(|c| c["name"] == json!(n))
            .count();
        assert_eq!(count, 1, "{n}");
    }
    assert!(
        tool_result(&r).contains("resumed; 2 were done before"),
        "{}",
        tool_result(&r)
    );
}
