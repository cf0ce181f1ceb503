//! The Discord surface against the loopback Discord: serenity really connects (HELLO,
//! IDENTIFY, READY, GUILD_CREATE), users write and press buttons over the gateway,
//! and the tests assert the REST calls the bot made.

use std::time::Duration;

use kotoba::app::App;
use kotoba::surfaces::discord::{self, DiscordError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use kotoba_testkit::discord::rig::{
    barrier, is_card_post, is_steps, posts_in, rig, settle, status_barrier, Rig, BARRIER,
};
use kotoba_testkit::discord::{
    FakeDiscord, Msg, BOT, CAROL, DM, GENERAL, GUEST, HOME, OTHER, OWNER,
};
use kotoba_testkit::model_server::{Reply, ScriptedModel};

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
async fn her_finished_face_is_a_reaction_on_her_reply_and_a_calm_answer_adds_none() {
    let r = rig().await;
    r.model.push(Reply::text("Haha, that is a good one."));
    r.discord.mention(GENERAL, OWNER, "tell me a joke");
    let reply = r.discord.wait_for(|c| posts_in(c, GENERAL)).await;
    let id = reply.message_id.clone().unwrap();
    let reaction = r
        .discord
        .wait_for(|c| c.method == "PUT" && c.path.contains("/reactions/"))
        .await;
    assert!(
        reaction
            .path
            .contains(&format!("/channels/{GENERAL}/messages/{id}/reactions/")),
        "on her reply: {}",
        reaction.path
    );
    assert!(
        reaction.path.contains("%F0%9F%98%84") || reaction.path.contains('😄'),
        "the happy face's emoji: {}",
        reaction.path
    );
    r.model.push(Reply::text("The build finished."));
    r.discord.mention(GENERAL, OWNER, "and the build?");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "The build finished.")
        .await;
    settle().await;
    let reactions = r
        .discord
        .calls()
        .iter()
        .filter(|c| c.path.contains("/reactions/"))
        .count();
    assert_eq!(reactions, 1, "a calm answer adds no reaction");
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
    barrier(&r, GENERAL).await;
    barrier(&r, OTHER).await;
    assert_eq!(replies_in(&r.discord, GENERAL), vec![BARRIER]);
    assert_eq!(replies_in(&r.discord, OTHER), vec![BARRIER]);
    assert_eq!(r.model.request_count(), 2, "only the two barriers");
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
    let hers = kotoba_testkit::discord::payloads::message(
        &kotoba_testkit::discord::payloads::MessageSpec {
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
    status_barrier(&r, GENERAL).await; // a mention here would open a window of its own
    r.discord
        .say(GENERAL, OWNER, "still there?", Msg::default());
    barrier(&r, GENERAL).await;
    assert_eq!(
        replies_in(&r.discord, GENERAL),
        vec!["first", "second", BARRIER]
    );
}

#[tokio::test]
async fn a_refused_token_is_one_sentence_naming_the_fix() {
    let discord = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = discord.config(home.path(), &model, &[("DISCORD_TOKEN", "refused-token")]);
    let app = App::build(config).await.unwrap();
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
    let app = App::build(discord.config(home.path(), &model, &[]))
        .await
        .unwrap();
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
    let app = App::build(config).await.unwrap();
    assert!(discord::start(&app, CancellationToken::new())
        .await
        .is_none());
    let err = discord::run(
        app.engine.clone(),
        app.discord_port.clone(),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, DiscordError::NoToken));
}

/// A mention that makes the model call shell; returns the card's message id and buttons.
pub(crate) async fn ask_for_a_shell_run(
    r: &Rig,
    command: &str,
) -> (String, Vec<(String, String, bool)>) {
    r.model
        .push(Reply::call("shell", json!({"command": command})));
    r.discord.mention(GENERAL, OWNER, "make the file please");
    let card = r.discord.wait_for(|c| is_card_post(c, GENERAL)).await;
    assert!(card.embed_text().contains(command), "{}", card.embed_text());
    (card.message_id.clone().unwrap(), card.buttons())
}

#[tokio::test]
async fn end_to_end_a_guest_cannot_approve_the_owner_can_and_the_command_runs() {
    let r = rig().await;
    let (card_id, buttons) = ask_for_a_shell_run(&r, "touch built.txt").await;
    let approve = buttons
        .iter()
        .find(|b| b.1 == "Approve once")
        .unwrap()
        .0
        .clone();
    assert!(buttons.iter().any(|b| b.1 == "Deny…"));
    let steps = r.discord.wait_for(|c| is_steps(c, GENERAL)).await;
    assert!(
        steps
            .embed_text()
            .contains("⏳ running `$ touch built.txt`"),
        "{}",
        steps.embed_text()
    );
    // A guest's press: a private refusal, nothing changes.
    let guest = r.discord.press(GENERAL, &card_id, &approve, GUEST);
    let refusal = r.discord.wait_callback(guest).await;
    assert!(
        refusal.ephemeral() && refusal.content().contains("not yours to answer"),
        "{:?}",
        refusal.body
    );
    // The card is still open after the press, so nothing can have run it.
    let status = status_barrier(&r, GENERAL).await;
    assert!(status.contains("**Open cards:** 1"), "{status}");
    assert!(!r._home.path().join("workspace/built.txt").exists());
    // The owner's press: acknowledged (deferred update), the command runs.
    r.model.push(Reply::text("Made it."));
    let owner = r.discord.press(GENERAL, &card_id, &approve, OWNER);
    let ack = r.discord.wait_callback(owner).await;
    assert_eq!(ack.body["type"], json!(6), "{:?}", ack.body);
    let settled = r
        .discord
        .wait_for(|c| c.is("PATCH", &format!("/messages/{card_id}")))
        .await;
    assert!(
        settled.embed_text().contains("Approved once by olive"),
        "{}",
        settled.embed_text()
    );
    assert!(settled.buttons().iter().all(|b| b.2), "buttons disabled");
    r.discord
        .wait_for(|c| c.method == "PATCH" && c.embed_text().contains("✅ ok `$ touch built.txt`"))
        .await;
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Made it.")
        .await;
    assert!(r._home.path().join("workspace/built.txt").exists());
}

#[tokio::test]
async fn deny_opens_a_reason_form_and_she_is_told_the_reason_verbatim_and_nothing_runs() {
    let r = rig().await;
    let (card_id, buttons) = ask_for_a_shell_run(&r, "touch denied.txt").await;
    let deny = buttons.iter().find(|b| b.1 == "Deny…").unwrap().0.clone();
    // A guest's press opens no form: a private refusal, nothing changes.
    let guest = r.discord.press(GENERAL, &card_id, &deny, GUEST);
    let refusal = r.discord.wait_callback(guest).await;
    assert!(
        refusal.ephemeral() && refusal.content().contains("not yours to answer"),
        "{:?}",
        refusal.body
    );
    // The owner's press opens the reason form (a modal, interaction response type 9).
    let press = r.discord.press(GENERAL, &card_id, &deny, OWNER);
    let form = r.discord.wait_callback(press).await;
    assert_eq!(form.body["type"], json!(9), "{:?}", form.body);
    let form_id = form.body["data"]["custom_id"].as_str().unwrap().to_string();
    let field = form.body["data"]["components"][0]["components"][0].clone();
    assert_eq!(
        field["required"],
        json!(false),
        "the reason is optional: {field}"
    );
    r.model.push(Reply::text("Fine, I left it."));
    let reason = "not on a Friday, the build server is frozen";
    let submit = r.discord.submit_modal(
        GENERAL,
        &form_id,
        field["custom_id"].as_str().unwrap(),
        reason,
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
            .contains("Denied by olive on Discord. Nothing ran."),
        "{}",
        settled.embed_text()
    );
    r.discord
        .wait_for(|c| c.method == "PATCH" && c.embed_text().contains("🚫 refused (declined)"))
        .await;
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Fine, I left it.")
        .await;
    assert!(!r._home.path().join("workspace/denied.txt").exists());
    let told = r.model.requests().last().unwrap().to_string();
    assert!(
        told.contains(reason),
        "the model is told the reason verbatim: {told}"
    );
    let trail = r.app.engine.audit_trail(None, 10).await.unwrap();
    assert!(
        trail
            .iter()
            .any(|row| !row.approved && row.detail.contains(reason)),
        "the audit row keeps the reason: {trail:?}"
    );
    // A stale press afterwards changes nothing and says so privately.
    let stale = r.discord.press(GENERAL, &card_id, &deny, OWNER);
    let c = r.discord.wait_callback(stale).await;
    assert!(
        c.ephemeral() && c.content().contains("already settled"),
        "{:?}",
        c.body
    );
}

#[tokio::test]
async fn an_expired_card_says_it_expired_unanswered_and_nothing_ran() {
    // The engine's expiry (its window, under paused time) is pinned in the engine's own
    // tests; here the surface renders the engine's settlement frame.
    let r = rig().await;
    r.model.push(Reply::text("hi"));
    r.discord.mention(GENERAL, OWNER, "hello");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "hi")
        .await;
    let session = r.app.engine.session(&discord::session_of(GENERAL)).await;
    let card = kotoba::protocol::Card {
        request_id: "req-exp".into(),
        session: session.id.clone(),
        kind: kotoba::protocol::CardKind::Approval,
        tool: "shell".into(),
        action: "touch late.txt".into(),
        why: "testing".into(),
        risk: kotoba::protocol::Risk::Exec,
        can_always: false,
        can_always_exact: true,
        family: None,
        no_always_reason: None,
        expires_at_ms: 1,
        window_secs: 180,
        answerers: kotoba::protocol::Answerers::Owners {
            ids: vec![OWNER],
            approvers: Vec::new(),
        },
        secret: false,
        can_edit: false,
        danger: None,
    };
    session.emit(None, kotoba::protocol::Frame::Card(Box::new(card)));
    let posted = r.discord.wait_for(|c| is_card_post(c, GENERAL)).await;
    session.emit(
        None,
        kotoba::protocol::Frame::CardSettled {
            request_id: "req-exp".into(),
            settlement: kotoba::protocol::CardSettlement::Expired,
        },
    );
    let id = posted.message_id.unwrap();
    let edit = r
        .discord
        .wait_for(|c| c.is("PATCH", &format!("/messages/{id}")))
        .await;
    assert!(
        edit.embed_text()
            .contains("expired unanswered. Nothing ran."),
        "{}",
        edit.embed_text()
    );
    assert!(edit.buttons().iter().all(|b| b.2));
}

#[tokio::test]
async fn a_guests_turn_has_host_tools_withheld_at_the_door() {
    let r = rig().await;
    r.model
        .push(Reply::call("shell", json!({"command": "touch guest.txt"})));
    r.model.push(Reply::text("I can't do that for you."));
    r.discord.mention(GENERAL, GUEST, "run something");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "I can't do that for you.")
        .await;
    let reqs = r.model.requests();
    let offered = reqs[0]["tools"].to_string();
    assert!(
        !offered.contains("\"shell\""),
        "shell offered to a guest: {offered}"
    );
    assert!(reqs[1].to_string().contains("You do not have 'shell'"));
    assert!(!r.discord.calls().iter().any(|c| is_card_post(c, GENERAL)));
    assert!(!r._home.path().join("workspace/guest.txt").exists());
}

#[tokio::test]
async fn full_output_is_sent_privately_as_a_file_when_long() {
    let r = rig().await;
    let (card_id, buttons) = ask_for_a_shell_run(&r, "seq 1 3000").await;
    r.model.push(Reply::text("Counted."));
    let approve = buttons
        .iter()
        .find(|b| b.1 == "Approve once")
        .unwrap()
        .0
        .clone();
    r.discord.press(GENERAL, &card_id, &approve, OWNER);
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Counted.")
        .await;
    let done = r
        .discord
        .wait_for(|c| c.method == "PATCH" && c.embed_text().contains("✅ ok `$ seq 1 3000`"))
        .await;
    let full = done
        .buttons()
        .into_iter()
        .find(|b| b.0.starts_with("ko:"))
        .unwrap();
    let steps_id = done.path.rsplit('/').next().unwrap().to_string();
    let press = r.discord.press(GENERAL, &steps_id, &full.0, OWNER);
    let c = r.discord.wait_callback(press).await;
    assert!(c.ephemeral(), "{:?}", c.body);
    assert!(
        c.raw.contains("filename=\"output.txt\"") && c.raw.contains("2999\n3000"),
        "sent as a file"
    );
}

#[tokio::test]
async fn settings_set_refuses_a_bad_value_naming_the_key_and_a_good_one_is_live() {
    let r = rig().await;
    let opts = |v: &str| {
        json!([{"type": 1, "name": "set", "options": [
        {"type": 3, "name": "key", "value": "work_max_tool_calls"},
        {"type": 3, "name": "value", "value": v}]}])
    };
    let bad = r.discord.slash(GENERAL, OWNER, "settings", opts("abc"), 0);
    let c = r.discord.wait_callback(bad).await;
    assert!(
        c.ephemeral() && c.content().contains("work_max_tool_calls"),
        "{:?}",
        c.body
    );
    assert_eq!(r.app.engine.config().settings().work_max_tool_calls, 40);
    let good = r.discord.slash(GENERAL, OWNER, "settings", opts("7"), 0);
    r.discord.wait_callback(good).await;
    assert_eq!(
        r.app.engine.config().settings().work_max_tool_calls,
        7,
        "live for the next job"
    );
    // A guest without Manage Server may not; with it, not this key either: the work
    // caps spend the owner's compute (keys::server_managers_may_set).
    let guest = r.discord.slash(GENERAL, GUEST, "settings", opts("9"), 0);
    assert!(r
        .discord
        .wait_callback(guest)
        .await
        .content()
        .contains("Only an owner"));
    let manager = r
        .discord
        .slash(GENERAL, GUEST, "settings", opts("9"), 1 << 5);
    assert!(r
        .discord
        .wait_callback(manager)
        .await
        .content()
        .contains("Only an owner can change `work_max_tool_calls`"));
    assert_eq!(r.app.engine.config().settings().work_max_tool_calls, 7);
}

#[tokio::test]
async fn slash_commands_answer_status_join_new_and_audit_with_their_gating() {
    let r = rig().await;
    let s = r.discord.slash(GENERAL, GUEST, "status", json!([]), 0);
    let c = r.discord.wait_callback(s).await;
    assert!(
        c.ephemeral() && c.content().contains("Model:") && c.content().contains("scripted"),
        "{:?}",
        c.body
    );
    // /join is deferred at once (a join may take up to 30 s), then answered by an edit.
    let j = r.discord.slash(GENERAL, GUEST, "join", json!([]), 0);
    let deferred = r.discord.wait_callback(j).await;
    assert_eq!(deferred.body["type"], 5, "{:?}", deferred.body);
    let token = format!("/tok{j}/messages/@original");
    let edit = r
        .discord
        .wait_for(move |c| c.method == "PATCH" && c.path.ends_with(&token))
        .await;
    assert!(
        edit.content().contains("Join a voice channel first"),
        "{:?}",
        edit.body
    );
    let a = r.discord.slash(
        GENERAL,
        GUEST,
        "audit",
        json!([{"type": 4, "name": "n", "value": 3}]),
        0,
    );
    assert!(r
        .discord
        .wait_callback(a)
        .await
        .content()
        .contains("Only an owner"));
    let a = r.discord.slash(
        GENERAL,
        OWNER,
        "audit",
        json!([{"type": 4, "name": "n", "value": 3}]),
        0,
    );
    assert!(r.discord.wait_callback(a).await.ephemeral());
    // /new: the model no longer sees the earlier line.
    r.model.push(Reply::text("noted"));
    r.discord
        .mention(GENERAL, OWNER, "remember the word pineapple");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "noted")
        .await;
    let n = r.discord.slash(GENERAL, OWNER, "new", json!([]), 0);
    let c = r.discord.wait_callback(n).await;
    assert!(!c.ephemeral(), "/new is meant for the channel");
    r.model.push(Reply::text("fresh"));
    r.discord.mention(GENERAL, OWNER, "what was the word?");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "fresh")
        .await;
    let last = r.model.requests().last().unwrap().to_string();
    assert!(!last.contains("pineapple"), "{last}");
}

#[tokio::test]
async fn grants_list_with_revoke_buttons_that_only_an_owner_may_press() {
    let r = rig().await;
    r.app
        .engine
        .store()
        .add_grant("touch ok.txt", kotoba::store::GrantScope::Exact, "olive")
        .await
        .unwrap();
    let g = r.discord.slash(GENERAL, OWNER, "grants", json!([]), 0);
    let c = r.discord.wait_callback(g).await;
    assert!(c.content().contains("touch ok.txt"), "{:?}", c.body);
    let revoke = c
        .buttons()
        .into_iter()
        .find(|b| b.0.starts_with("kg:revoke:"))
        .unwrap()
        .0;
    let p = r.discord.press(GENERAL, "1", &revoke, GUEST);
    assert!(r
        .discord
        .wait_callback(p)
        .await
        .content()
        .contains("Only an owner"));
    assert_eq!(r.app.engine.grants().await.unwrap().len(), 1);
    let p = r.discord.press(GENERAL, "1", &revoke, OWNER);
    assert!(r
        .discord
        .wait_callback(p)
        .await
        .content()
        .contains("Revoked"));
    assert!(r.app.engine.grants().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_gateway_drop_mid_turn_resumes_the_reply_still_arrives_and_nothing_is_answered_twice() {
    let r = rig().await;
    r.discord.replay_overlap(2);
    let (card_id, buttons) = ask_for_a_shell_run(&r, "touch resumed.txt").await;
    r.discord.drop_gateway();
    r.discord.wait_connected().await;
    assert!(r.discord.resumes() >= 1, "serenity resumed");
    r.model.push(Reply::text("Done after the drop."));
    let approve = buttons
        .iter()
        .find(|b| b.1 == "Approve once")
        .unwrap()
        .0
        .clone();
    r.discord.press(GENERAL, &card_id, &approve, OWNER);
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Done after the drop.")
        .await;
    barrier(&r, GENERAL).await;
    let cards = r
        .discord
        .calls()
        .iter()
        .filter(|c| is_card_post(c, GENERAL))
        .count();
    assert_eq!(cards, 1, "the replayed message was not answered again");
    assert_eq!(
        r.model.request_count(),
        3,
        "two for the turn, one for the barrier"
    );
    assert_eq!(
        replies_in(&r.discord, GENERAL),
        vec!["Done after the drop.", BARRIER]
    );
}

#[tokio::test]
async fn a_finished_background_job_is_announced_once_in_its_channel() {
    let r = rig().await;
    r.model.push(Reply::call(
        "start_work",
        json!({"goal": "count the files"}),
    ));
    r.model.set_fallback(Reply::text("There are 3 files."));
    r.discord
        .mention(GENERAL, OWNER, "count my files in the background");
    // Her reply, then the announcement of the job's result, both in the channel.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let announced = r
            .model
            .requests()
            .iter()
            .filter(|q| q.to_string().contains("__work_done__"))
            .count();
        if announced >= 1 && replies_in(&r.discord, GENERAL).len() >= 2 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no announcement: {:?}",
            replies_in(&r.discord, GENERAL)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    barrier(&r, GENERAL).await;
    let announce_turns = r
        .model
        .requests()
        .iter()
        .filter(|q| q.to_string().contains("__work_done__"))
        .count();
    assert_eq!(announce_turns, 1, "announced exactly once");
    assert!(replies_in(&r.discord, GENERAL)
        .iter()
        .all(|p| !p.contains("__work_done__")));
    let stored = r
        .app
        .engine
        .store()
        .history(&discord::session_of(GENERAL), 50)
        .await
        .unwrap();
    assert!(
        stored.iter().any(|m| m.text == "There are 3 files."),
        "{stored:?}"
    );
    assert!(stored.iter().all(|m| !m.text.contains("__work_done__")));
}

/// A loopback file host for attachment URLs: `/cat.png` and `/notes.zip`.
async fn file_host() -> String {
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/cat.png",
            get(|| async {
                (
                    [("content-type", "image/png")],
                    vec![0x89u8, b'P', b'N', b'G', 1, 2, 3],
                )
            }),
        )
        .route(
            "/notes.zip",
            get(|| async { ([("content-type", "application/zip")], vec![1u8, 2, 3]) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

fn attachment(id: u64, name: &str, mime: &str, size: u64, url: String) -> serde_json::Value {
    json!({"id": id.to_string(), "filename": name, "size": size, "url": url.clone(), "proxy_url": url, "content_type": mime})
}

#[tokio::test]
async fn an_attached_image_reaches_the_model_and_other_files_are_named_as_not_received() {
    let r = rig().await;
    let host = file_host().await;
    r.model.push(Reply::text("A cat!"));
    let opts = Msg {
        mentions: vec![(BOT, "kotoba".into())],
        attachments: vec![
            attachment(1, "cat.png", "image/png", 7, format!("{host}/cat.png")),
            attachment(
                2,
                "notes.zip",
                "application/zip",
                3,
                format!("{host}/notes.zip"),
            ),
            attachment(
                3,
                "huge.png",
                "image/png",
                9 * 1024 * 1024,
                format!("{host}/cat.png"),
            ),
        ],
        ..Msg::default()
    };
    r.discord
        .say(GENERAL, OWNER, &format!("<@{BOT}> what is this?"), opts);
    let reply = r.discord.wait_for(|c| posts_in(c, GENERAL)).await;
    assert_eq!(reply.content(), "A cat!");
    let sent = r.model.requests()[0].to_string();
    assert!(
        sent.contains("data:image/png;base64,iVBORwECAw=="),
        "the image reached the model: {sent}"
    );
    assert!(
        sent.contains("'notes.zip' (only images and PDFs reach you)"),
        "{sent}"
    );
    assert!(sent.contains("'huge.png' (larger than 8 MB)"), "{sent}");
    let stored = r
        .app
        .engine
        .store()
        .history(&discord::session_of(GENERAL), 10)
        .await
        .unwrap();
    assert!(
        stored.iter().all(|m| !m.text.contains("base64")),
        "the transcript keeps words, not files"
    );
}

#[tokio::test]
async fn a_token_saved_in_the_keystore_starts_the_surface_without_discord_token() {
    let fake = FakeDiscord::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = fake.config(home.path(), &model, &[("DISCORD_TOKEN", "")]);
    let app = App::build(config).await.unwrap();
    assert!(
        discord::start(&app, CancellationToken::new())
            .await
            .is_none(),
        "no token anywhere yet"
    );
    app.engine
        .save_secret(discord::KEYSTORE_TOKEN, "saved-token")
        .await
        .unwrap();
    let shutdown = CancellationToken::new();
    let task = discord::start(&app, shutdown.clone())
        .await
        .expect("the saved token starts it");
    fake.wait_ready().await;
    let call = fake.wait_for(|c| c.authorization.is_some()).await;
    assert_eq!(call.authorization.as_deref(), Some("Bot saved-token"));
    shutdown.cancel();
    app.engine.shutdown();
    task.abort();
}

/// The text the model was handed for its last tool call, in either wire format.
pub(crate) fn last_tool_output(body: &serde_json::Value) -> String {
    let list = body
        .get("messages")
        .or_else(|| body.get("input"))
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    list.iter()
        .rev()
        .find(|i| i["role"] == "tool" || i["type"] == "function_call_output")
        .and_then(|i| i.get("content").or_else(|| i.get("output")))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn the_read_tools_read_this_channels_history_and_this_guilds_members() {
    let r = rig().await;
    r.discord
        .say(GENERAL, CAROL, "the deploy is at five", Msg::default());
    status_barrier(&r, GENERAL).await;
    r.model
        .push(Reply::call("discord_read_history", json!({"limit": 5})));
    r.model
        .push(Reply::call("discord_people", json!({"query": "car"})));
    r.model
        .push(Reply::text("Carol said the deploy is at five."));
    r.discord.mention(GENERAL, OWNER, "what did carol say?");
    let reply = r.discord.wait_for(|c| posts_in(c, GENERAL)).await;
    assert_eq!(reply.content(), "Carol said the deploy is at five.");
    let sent = r.model.requests();
    let history = last_tool_output(&sent[1]);
    assert!(history.contains("the deploy is at five"), "{history}");
    let people = last_tool_output(&sent[2]);
    assert!(
        people.contains("carol") && !people.contains("olive"),
        "{people}"
    );
}
