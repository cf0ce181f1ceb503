//! Approvals on Discord beyond "Approve once" (docs/gate.md, "Answers"): Edit… opens a
//! form prefilled with the exact command and the edited line is what runs; the
//! "Always…" select saves a grant with its time box; a guest can do neither; every
//! settled copy says who decided and where.

use serde_json::json;

use super::discord::ask_for_a_shell_run;
use kotoba_testkit::discord::rig::{is_card_post, posts_in, rig};
use kotoba_testkit::discord::{GENERAL, GUEST, OWNER};
use kotoba_testkit::model_server::Reply;

#[tokio::test]
async fn edit_opens_a_form_prefilled_with_the_command_and_the_edited_line_is_what_runs() {
    let r = rig().await;
    let (card_id, buttons) = ask_for_a_shell_run(&r, "touch first.txt").await;
    let edit = buttons.iter().find(|b| b.1 == "Edit…").unwrap().0.clone();
    // A guest's press opens no form.
    let guest = r.discord.press(GENERAL, &card_id, &edit, GUEST);
    let refusal = r.discord.wait_callback(guest).await;
    assert!(
        refusal.ephemeral() && refusal.content().contains("not yours to answer"),
        "{:?}",
        refusal.body
    );
    let press = r.discord.press(GENERAL, &card_id, &edit, OWNER);
    let form = r.discord.wait_callback(press).await;
    assert_eq!(form.body["type"], json!(9), "a form: {:?}", form.body);
    let field = form.body["data"]["components"][0]["components"][0].clone();
    assert_eq!(
        field["value"], "touch first.txt",
        "prefilled with the exact line"
    );
    r.model.push(Reply::text("Made the edited one."));
    let submit = r.discord.submit_modal(
        GENERAL,
        form.body["data"]["custom_id"].as_str().unwrap(),
        field["custom_id"].as_str().unwrap(),
        "touch edited.txt",
        OWNER,
    );
    assert_eq!(r.discord.wait_callback(submit).await.body["type"], json!(6));
    let settled = r
        .discord
        .wait_for(|c| c.is("PATCH", &format!("/messages/{card_id}")))
        .await;
    assert!(
        settled
            .embed_text()
            .contains("Approved once by olive on Discord"),
        "{}",
        settled.embed_text()
    );
    r.discord
        .wait_for(|c| c.method == "PATCH" && c.embed_text().contains("✅ ok `$ touch edited.txt`"))
        .await;
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Made the edited one.")
        .await;
    let workspace = r._home.path().join("workspace");
    assert!(workspace.join("edited.txt").exists(), "the edited line ran");
    assert!(
        !workspace.join("first.txt").exists(),
        "the proposed one did not"
    );
    let told = r.model.requests().last().unwrap().to_string();
    assert!(
        told.contains("EDITED") && told.contains("touch edited.txt"),
        "{told}"
    );
}

#[tokio::test]
async fn the_always_select_saves_a_grant_with_its_time_box_and_a_guests_pick_changes_nothing() {
    let r = rig().await;
    let (card_id, buttons) = ask_for_a_shell_run(&r, "touch boxed.txt").await;
    let select = buttons
        .iter()
        .find(|b| b.0.starts_with("ks:"))
        .expect("the Always… select")
        .0
        .clone();
    let guest = r
        .discord
        .select(GENERAL, &card_id, &select, &["e:3600"], GUEST);
    let refusal = r.discord.wait_callback(guest).await;
    assert!(refusal.ephemeral() && refusal.content().contains("not yours"));
    assert!(r.app.engine.grants().await.unwrap().is_empty());
    r.model
        .push(Reply::text("Done, and I may do it again this hour."));
    let pick = r
        .discord
        .select(GENERAL, &card_id, &select, &["e:3600"], OWNER);
    assert_eq!(r.discord.wait_callback(pick).await.body["type"], json!(6));
    let settled = r
        .discord
        .wait_for(|c| c.is("PATCH", &format!("/messages/{card_id}")))
        .await;
    assert!(
        settled.embed_text().contains("always for this exact line"),
        "{}",
        settled.embed_text()
    );
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content().starts_with("Done, and I may"))
        .await;
    let grants = r.app.engine.grants().await.unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0].pattern, "touch boxed.txt");
    let expires = grants[0].expires_at.clone().expect("a time box");
    assert!(expires.ends_with('Z'), "{expires}");
    assert!(grants[0].granted_by.contains("olive"), "{grants:?}");
}

#[tokio::test]
async fn a_dangerous_card_is_drawn_as_dangerous_with_the_gates_label() {
    let r = rig().await;
    r.model.push(Reply::call(
        "shell",
        json!({"command": "rm -rf ~/old-photos"}),
    ));
    r.discord.mention(GENERAL, OWNER, "clear the old photos");
    let card = r.discord.wait_for(|c| is_card_post(c, GENERAL)).await;
    let text = card.embed_text();
    assert!(text.contains("rm -rf ~/old-photos"), "{text}");
    assert!(
        text.contains("⚠ Dangerous") && text.contains("recursive delete"),
        "{text}"
    );
    let buttons = card.buttons();
    assert!(
        !buttons.iter().any(|b| b.1.contains("Always")),
        "a dangerous card offers no always: {buttons:?}"
    );
}
