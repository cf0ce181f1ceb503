//! Approvers (docs/discord.md, "Approvers"): `discord.approvers` names people or roles
//! who may answer host cards besides the owners. On the loopback Discord: a member of an
//! approving role answers an owner's shell card and it runs, named on the card and in
//! the audit trail, while a plain member cannot; a person named by id can too; and only
//! an owner changes who approves — someone with Manage Server cannot make themselves an
//! approver or an owner.

use serde_json::json;

use super::discord_roles::{approve_of, card_for};
use kotoba_testkit::discord::rig::{posts_in, rig_on, Rig};
use kotoba_testkit::discord::{FakeDiscord, ADMIN, ADMIN_ROLE, CAROL, GENERAL, GUEST, OWNER};
use kotoba_testkit::model_server::Reply;

/// The owner asks for `command` in general; the card's message id and its Approve
/// button.
async fn owners_card(r: &Rig, command: &str) -> (String, String, String) {
    let card = card_for(r, GENERAL, OWNER, "shell", json!({ "command": command })).await;
    (
        card.message_id.clone().unwrap(),
        approve_of(&card),
        card.embed_text(),
    )
}

fn approvers(r: &Rig, yaml: &str) {
    std::fs::write(r._home.path().join("settings.yaml"), yaml).unwrap();
}

#[tokio::test]
async fn a_member_of_an_approving_role_answers_a_host_card_and_a_plain_member_cannot() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    approvers(
        &r,
        &format!("discord:\n  approvers: [\"<@&{ADMIN_ROLE}>\"]\n"),
    );
    let (card, approve, text) = owners_card(&r, "touch approved-by-role.txt").await;
    assert!(
        text.contains(&format!("the owners, and approvers <@&{ADMIN_ROLE}>")),
        "the card says who may answer: {text}"
    );
    let carol = r.discord.press(GENERAL, &card, &approve, CAROL);
    let refused = r.discord.wait_callback(carol).await;
    assert!(
        refused.content().contains("not yours to answer"),
        "{:?}",
        refused.body
    );
    assert!(!r
        ._home
        .path()
        .join("workspace/approved-by-role.txt")
        .exists());
    r.model.push(Reply::text("Done by ada's leave."));
    let ada = r.discord.press(GENERAL, &card, &approve, ADMIN);
    r.discord.wait_callback(ada).await;
    let settled = r
        .discord
        .wait_for(|c| {
            c.is("PATCH", &format!("/messages/{card}"))
                && c.embed_text().contains("Approved once by")
        })
        .await;
    assert!(
        settled.embed_text().contains("Approved once by ada"),
        "{}",
        settled.embed_text()
    );
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Done by ada's leave.")
        .await;
    assert!(r
        ._home
        .path()
        .join("workspace/approved-by-role.txt")
        .exists());
    let audit = r.app.engine.audit_trail(None, 20).await.unwrap();
    let audit = serde_json::to_string(&audit).unwrap();
    assert!(
        audit.contains("ada"),
        "the audit names who answered: {audit}"
    );
}

#[tokio::test]
async fn a_person_named_as_approver_answers_and_only_an_owner_changes_who_approves() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    let set = |key: &str, value: &str| {
        json!([{"type": 1, "name": "set", "options": [
            {"type": 3, "name": "key", "value": key},
            {"type": 3, "name": "value", "value": value}]}])
    };
    // Gus manages the server but is no owner: he can neither approve himself nor own her.
    let manage_server = 1u64 << 5;
    for (key, value) in [
        ("discord.approvers", format!("[{GUEST}]")),
        ("owners", format!("[{GUEST}]")),
        ("allowlist", "[\"rm -rf build\"]".to_string()),
    ] {
        let i = r
            .discord
            .slash(GENERAL, GUEST, "settings", set(key, &value), manage_server);
        let said = r.discord.wait_callback(i).await;
        assert!(
            said.content().contains("Only an owner can change"),
            "{key}: {:?}",
            said.body
        );
    }
    let s = r.app.engine.config().settings();
    assert!(s.discord_approvers.is_empty() && s.allowlist.is_empty());
    assert!(!r.app.engine.config().owners().contains(&GUEST));
    // How she behaves in the server is his to set.
    let i = r.discord.slash(
        GENERAL,
        GUEST,
        "settings",
        set("discord.catch_up", "120"),
        manage_server,
    );
    r.discord.wait_callback(i).await;
    assert_eq!(r.app.engine.config().settings().discord_catch_up, 120);
    // The owner names carol.
    let i = r.discord.slash(
        GENERAL,
        OWNER,
        "settings",
        set("discord.approvers", &format!("[\"<@{CAROL}>\"]")),
        0,
    );
    r.discord.wait_callback(i).await;
    assert_eq!(
        r.app.engine.config().settings().discord_approvers,
        [format!("user:{CAROL}")]
    );
    let (card, approve, _) = owners_card(&r, "touch approved-by-carol.txt").await;
    let gus = r.discord.press(GENERAL, &card, &approve, GUEST);
    assert!(r
        .discord
        .wait_callback(gus)
        .await
        .content()
        .contains("not yours to answer"));
    r.model.push(Reply::text("Carol said yes."));
    let carol = r.discord.press(GENERAL, &card, &approve, CAROL);
    r.discord.wait_callback(carol).await;
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Carol said yes.")
        .await;
    assert!(r
        ._home
        .path()
        .join("workspace/approved-by-carol.txt")
        .exists());
}

#[tokio::test]
async fn an_owner_from_the_settings_is_one_while_named_and_a_bad_id_there_leaves_them_a_guest() {
    // Guest (2) is an owner by the `owners` setting alone (the variable names OWNER).
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    approvers(&r, &format!("owners: [\"{GUEST}\"]\n"));
    let set = |value: &str| {
        json!([{"type": 1, "name": "set", "options": [
            {"type": 3, "name": "key", "value": "allowlist"},
            {"type": 3, "name": "value", "value": value}]}])
    };
    let i = r
        .discord
        .slash(GENERAL, GUEST, "settings", set("[\"make\"]"), 0);
    let said = r.discord.wait_callback(i).await;
    assert!(said.content().contains("is now"), "{:?}", said.body);
    // One id in the list is no user id: the whole setting names no owner (the safe
    // side), so he is a guest again at once, while the variable's owner stays one.
    approvers(&r, &format!("owners: [\"{GUEST}\", gus]\n# bad\n"));
    let i = r
        .discord
        .slash(GENERAL, GUEST, "settings", set("[\"make test\"]"), 0);
    let said = r.discord.wait_callback(i).await;
    assert!(
        said.content().starts_with("Only an owner"),
        "{:?}",
        said.body
    );
    assert!(r.app.engine.config().settings().allowlist.is_empty());
    assert_eq!(r.app.engine.config().owners(), [OWNER]);
    assert!(r
        .app
        .engine
        .config()
        .settings_warnings()
        .iter()
        .any(|w| w.starts_with("setting 'owners': must be Discord user ids")));
}
