//! Role tool sets (docs/discord.md, "Role tool sets"), on the loopback Discord:
//! `discord.role_toolsets` offers a role's members tool families beyond the guest list,
//! and every call of one — a read as much as a command the gate calls safe — asks an
//! owner or approver on a card with no "always"; the asker cannot answer it, a member
//! without the role is not offered the tools at all, and only an owner changes the map.

use serde_json::json;

use super::discord_manage::tool_result;
use kotoba_testkit::discord::rig::{is_card_post, posts_in, rig_on, Rig};
use kotoba_testkit::discord::{
    Call, FakeDiscord, Msg, ADMIN, ADMIN_ROLE, CAROL, DM, GENERAL, GUEST, OWNER,
};
use kotoba_testkit::model_server::Reply;

/// The tools offered by the newest model request.
fn offered(r: &Rig) -> Vec<String> {
    let reqs = r.model.requests();
    let last = reqs.last().cloned().unwrap_or_default();
    last["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// `who` asks in `channel` (a DM, or mentioning her) and she calls `tool` with `args`;
/// the card it draws.
pub(crate) async fn card_for(
    r: &Rig,
    channel: u64,
    who: u64,
    tool: &str,
    args: serde_json::Value,
) -> Call {
    r.model.push(Reply::call(tool, args));
    let from = r.discord.calls().len();
    if channel == DM {
        r.discord.say(DM, who, "please do it", Msg::default());
    } else {
        r.discord.mention(channel, who, "please do it");
    }
    r.discord
        .wait_for_from(from, 10, |c| is_card_post(c, channel))
        .await
}

/// A card's Approve once button.
pub(crate) fn approve_of(card: &Call) -> String {
    card.buttons()
        .into_iter()
        .find(|b| b.1 == "Approve once")
        .map(|b| b.0)
        .expect("an Approve once button")
}

#[tokio::test]
async fn a_roles_tool_set_is_offered_to_its_members_and_every_call_asks_an_owner_or_approver_without_always(
) {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    std::fs::write(
        r._home.path().join("settings.yaml"),
        format!(
            "discord:\n  role_toolsets: {{\"{ADMIN_ROLE}\": [file, terminal]}}\n  approvers: [\"<@{CAROL}>\"]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        r._home.path().join("workspace/plans.txt"),
        "the plans are in the drawer",
    )
    .unwrap();
    // Ada (admins) reads a file: offered, and even a read asks.
    let post = card_for(
        &r,
        GENERAL,
        ADMIN,
        "read_file",
        json!({"path": "plans.txt"}),
    )
    .await;
    let (card, buttons) = (post.message_id.clone().unwrap(), post.buttons());
    assert!(offered(&r).contains(&"read_file".to_string()));
    assert!(offered(&r).contains(&"shell".to_string()));
    assert!(
        buttons.iter().all(|b| !b.0.starts_with("ks:")),
        "no always: {buttons:?}"
    );
    let approve = approve_of(&post);
    // She cannot answer her own card; a plain member cannot either.
    for who in [ADMIN, GUEST] {
        let i = r.discord.press(GENERAL, &card, &approve, who);
        let said = r.discord.wait_callback(i).await;
        assert!(
            said.content().contains("not yours to answer"),
            "{who}: {:?}",
            said.body
        );
    }
    r.model.push(Reply::text("Read it."));
    let carol = r.discord.press(GENERAL, &card, &approve, CAROL);
    r.discord.wait_callback(carol).await;
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Read it.")
        .await;
    assert!(
        tool_result(&r).contains("the plans are in the drawer"),
        "{}",
        tool_result(&r)
    );
    // A line the gate would run unasked for an owner still asks her, with no always.
    let post = card_for(&r, GENERAL, ADMIN, "shell", json!({"command": "ls"})).await;
    let (card, buttons) = (post.message_id.clone().unwrap(), post.buttons());
    assert!(
        buttons.iter().all(|b| !b.0.starts_with("ks:")),
        "{buttons:?}"
    );
    r.model.push(Reply::text("Listed."));
    let owner = r.discord.press(GENERAL, &card, &approve_of(&post), OWNER);
    r.discord.wait_callback(owner).await;
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Listed.")
        .await;
    assert!(tool_result(&r).contains("plans.txt"), "{}", tool_result(&r));
    // Gus holds no such role: not offered, and a call is withheld at the door.
    r.model
        .push(Reply::call("read_file", json!({"path": "plans.txt"})));
    r.model.push(Reply::text("I can't."));
    let from = r.discord.calls().len();
    r.discord.mention(GENERAL, GUEST, "read plans.txt");
    r.discord
        .wait_for_from(from, 10, |c| {
            posts_in(c, GENERAL) && c.content() == "I can't."
        })
        .await;
    assert!(!offered(&r).contains(&"read_file".to_string()));
    assert!(
        tool_result(&r).contains("You do not have 'read_file'"),
        "{}",
        tool_result(&r)
    );
}

#[tokio::test]
async fn only_an_owner_changes_the_role_tool_sets_and_a_bad_value_grants_nothing() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    let set = |value: &str| {
        json!([{"type": 1, "name": "set", "options": [
            {"type": 3, "name": "key", "value": "discord.role_toolsets"},
            {"type": 3, "name": "value", "value": value}]}])
    };
    let manage_server = 1u64 << 5;
    let grant = format!("{{\"{ADMIN_ROLE}\": [terminal]}}");
    let i = r
        .discord
        .slash(GENERAL, ADMIN, "settings", set(&grant), manage_server);
    let said = r.discord.wait_callback(i).await;
    assert!(
        said.content().contains("Only an owner can change"),
        "{:?}",
        said.body
    );
    assert!(r
        .app
        .engine
        .config()
        .settings()
        .discord_role_toolsets
        .0
        .is_empty());
    let i = r.discord.slash(GENERAL, OWNER, "settings", set(&grant), 0);
    r.discord.wait_callback(i).await;
    let sets = r.app.engine.config().settings().discord_role_toolsets;
    assert_eq!(sets.granted(&[ADMIN_ROLE]), ["terminal"]);
    // A broken value in the file falls to the safe side: nobody is granted anything.
    std::fs::write(
        r._home.path().join("settings.yaml"),
        "discord:\n  role_toolsets: [terminal]\n",
    )
    .unwrap();
    let sets = r.app.engine.config().settings().discord_role_toolsets;
    assert!(sets.0.is_empty(), "{sets:?}");
}
