//! Server management against the loopback Discord: discord_guild_read and discord_act
//! (one card per batch, refusals before the card, who may answer re-checked at the press,
//! changes applied in order, Discord's errors as sentences, 429s waited out).

use serde_json::{json, Value};

use kotoba_testkit::discord::manage::Fault;
use kotoba_testkit::discord::{
    Call, FakeDiscord, BOT_ROLE, CAROL, GENERAL, GUEST, GUILD, OTHER, OWNER,
};
use kotoba_testkit::model_server::Reply;

use kotoba_testkit::discord::rig::{is_card_post, posts_in, rig_on, status_barrier, Rig};

/// A role above hers that carries Administrator.
const ADMINS: u64 = 710;
const VIEW: u64 = 1 << 10;
const SEND: u64 = 1 << 11;
const MANAGE_CHANNELS: u64 = 1 << 4;
const MANAGE_ROLES: u64 = 1 << 28;
const KICK: u64 = 1 << 1;
const ADMINISTRATOR: u64 = 1 << 3;

/// The rig with her role able to manage channels, roles and members (position 5), and
/// an Administrator role above her (position 8).
pub(crate) async fn manage_rig() -> Rig {
    let discord = FakeDiscord::start().await;
    discord.set_role(
        BOT_ROLE,
        "kotoba",
        VIEW | SEND | MANAGE_CHANNELS | MANAGE_ROLES | KICK | (1 << 2) | (1 << 40),
        5,
    );
    discord.set_role(ADMINS, "admins", ADMINISTRATOR, 8);
    rig_on(discord, &[]).await
}

/// `who` asks in general for a batch of `actions`; the card she posts.
async fn ask_batch(r: &Rig, who: u64, actions: Value) -> Call {
    let from = r.discord.calls().len();
    r.model
        .push(Reply::call("discord_act", json!({ "actions": actions })));
    r.discord.mention(GENERAL, who, "set up the server please");
    r.discord
        .wait_for_from(from, 10, |c| is_card_post(c, GENERAL))
        .await
}

pub(crate) fn approve_id(card: &Call) -> String {
    card.buttons()
        .into_iter()
        .find(|b| b.1 == "Approve once")
        .map(|b| b.0)
        .expect("an Approve button")
}

pub(crate) fn calls_matching(r: &Rig, method: &str, part: &str) -> Vec<Call> {
    r.discord
        .calls()
        .into_iter()
        .filter(|c| c.method == method && c.path.contains(part))
        .collect()
}

/// Approve `card` as `who` and wait for her closing words `done`.
pub(crate) async fn approve_and_wait(r: &Rig, card: &Call, who: u64, done: &str) {
    r.model.push(Reply::text(done));
    let id = card.message_id.clone().unwrap();
    r.discord.press(GENERAL, &id, &approve_id(card), who);
    r.discord
        .wait_for_from(0, 20, |c| posts_in(c, GENERAL) && c.content() == done)
        .await;
}

/// What the model read back from discord_act (the tool message after the call).
pub(crate) fn tool_result(r: &Rig) -> String {
    let reqs = r.model.requests();
    reqs.iter()
        .flat_map(|q| q["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == json!("tool"))
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .next_back()
        .unwrap_or_default()
}

fn id_of(v: &Value) -> String {
    v["id"].as_str().unwrap_or("").to_string()
}

#[tokio::test]
async fn a_batch_asks_once_and_applies_every_change_in_order() {
    let r = manage_rig().await;
    let card = ask_batch(
        &r,
        OWNER,
        json!([
            {"op": "create_role", "target": "mods", "value": "#3498db"},
            {"op": "create_channel", "target": "mod-chat", "value": "text"},
            {"op": "make_private", "target": "#mod-chat", "roles": ["@mods"]}
        ]),
    )
    .await;
    let text = card.embed_text();
    let (role, chan, private) = (
        text.find("1. create role @mods").expect(&text),
        text.find("2. create text 'mod-chat'").expect(&text),
        text.find("3. make #mod-chat private: only @mods")
            .expect(&text),
    );
    assert!(role < chan && chan < private, "{text}");
    // A guest's press is refused privately and changes nothing.
    let guest = r.discord.press(
        GENERAL,
        &card.message_id.clone().unwrap(),
        &approve_id(&card),
        GUEST,
    );
    let refusal = r.discord.wait_callback(guest).await;
    assert!(
        refusal.ephemeral() && refusal.content().contains("not yours to answer"),
        "{:?}",
        refusal.body
    );
    let status = status_barrier(&r, GENERAL).await;
    assert!(status.contains("**Open cards:** 1"), "{status}");
    assert!(calls_matching(&r, "POST", "/roles").is_empty());
    // The owner's press applies all three, in order, the new role used by the third.
    approve_and_wait(&r, &card, OWNER, "Done.").await;
    let cards = r
        .discord
        .calls()
        .into_iter()
        .filter(|c| is_card_post(c, GENERAL))
        .count();
    assert_eq!(cards, 1, "one card for the whole batch");
    let made_role = r
        .discord
        .roles()
        .into_iter()
        .find(|x| x["name"] == json!("mods"))
        .expect("the role exists");
    let made_chan = r
        .discord
        .channels()
        .into_iter()
        .find(|x| x["name"] == json!("mod-chat"))
        .expect("the channel exists");
    let posts = [
        calls_matching(&r, "POST", &format!("guilds/{GUILD}/roles")),
        calls_matching(&r, "POST", &format!("guilds/{GUILD}/channels")),
        calls_matching(&r, "PATCH", &format!("channels/{}", id_of(&made_chan))),
    ];
    assert!(posts.iter().all(|p| p.len() == 1), "{posts:?}");
    assert!(posts[0][0].at <= posts[1][0].at && posts[1][0].at <= posts[2][0].at);
    let over = made_chan["permission_overwrites"].to_string();
    assert!(over.contains(&id_of(&made_role)), "{over}");
    assert!(
        over.contains(&GUILD.to_string()),
        "@everyone is denied: {over}"
    );
    let said = tool_result(&r);
    assert!(said.contains("3 of 3 changes applied"), "{said}");
    // Every applied change is an audit row naming who asked and who approved.
    let rows = r.app.engine.audit_trail(None, 50).await.unwrap();
    let applied: Vec<_> = rows
        .iter()
        .filter(|a| a.tool == "discord_act" && a.detail.contains("approved by olive"))
        .collect();
    assert_eq!(applied.len(), 3, "{rows:?}");
    assert!(applied
        .iter()
        .all(|a| a.detail.contains(&format!("<@{OWNER}>"))));
}

#[tokio::test]
async fn what_she_may_never_do_is_refused_by_name_before_the_card_and_the_rest_is_carded() {
    let r = manage_rig().await;
    let card = ask_batch(
        &r,
        OWNER,
        json!([
            {"op": "create_channel", "target": "art"},
            {"op": "give_role", "target": "@admins", "user": "gus"},
            {"op": "kick", "user": "olive"}
        ]),
    )
    .await;
    let text = card.embed_text();
    assert!(text.contains("1. create text 'art'"), "{text}");
    assert!(
        text.contains("Refused change 2 (give_role @admins)") && text.contains("Administrator"),
        "{text}"
    );
    assert!(
        text.contains("Refused change 3 (kick)") && text.contains("server owner"),
        "{text}"
    );
    approve_and_wait(&r, &card, OWNER, "Made the art channel.").await;
    assert!(r
        .discord
        .channels()
        .iter()
        .any(|c| c["name"] == json!("art")));
    assert!(
        calls_matching(&r, "PUT", "/roles/").is_empty(),
        "nobody was given admins"
    );
    assert!(
        calls_matching(&r, "DELETE", "/members/").is_empty(),
        "nobody was kicked"
    );
    let said = tool_result(&r);
    assert!(said.contains("1 of 1 changes applied"), "{said}");
    assert!(
        said.contains("Refused change 2") && said.contains("Refused change 3"),
        "{said}"
    );
}

#[tokio::test]
async fn a_rate_limit_during_a_batch_is_waited_out_never_a_failure() {
    let r = manage_rig().await;
    r.discord.queue_fault(Fault::rate_limited(
        "POST",
        &format!("guilds/{GUILD}/channels"),
        1.0,
    ));
    let card = ask_batch(
        &r,
        OWNER,
        json!([
            {"op": "create_channel", "target": "one"},
            {"op": "create_channel", "target": "two"}
        ]),
    )
    .await;
    approve_and_wait(&r, &card, OWNER, "Both made.").await;
    let posts = calls_matching(&r, "POST", &format!("guilds/{GUILD}/channels"));
    assert_eq!(
        posts.len(),
        3,
        "the limited call was tried again: {posts:?}"
    );
    let waited = posts[1].at.duration_since(posts[0].at);
    assert!(waited.as_millis() >= 900, "retried after {waited:?}");
    let names: Vec<Value> = r
        .discord
        .channels()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert!(
        names.contains(&json!("one")) && names.contains(&json!("two")),
        "{names:?}"
    );
    let said = tool_result(&r);
    assert!(
        said.contains("2 of 2 changes applied") && !said.contains("failed"),
        "{said}"
    );
}

#[tokio::test]
async fn discords_refusal_becomes_a_sentence_and_the_batch_goes_on() {
    let r = manage_rig().await;
    r.discord.queue_fault(Fault::missing_permissions(
        "POST",
        &format!("guilds/{GUILD}/roles"),
    ));
    let card = ask_batch(
        &r,
        OWNER,
        json!([
            {"op": "create_role", "target": "artists"},
            {"op": "create_channel", "target": "gallery", "value": "forum"}
        ]),
    )
    .await;
    approve_and_wait(&r, &card, OWNER, "One of two.").await;
    let said = tool_result(&r);
    assert!(said.contains("1 of 2 changes applied, 1 failed"), "{said}");
    assert!(
        said.contains("✗ create role @artists: Discord refused: I am missing a permission"),
        "{said}"
    );
    assert!(said.contains("✓ create forum 'gallery'"), "{said}");
    let forum = r
        .discord
        .channels()
        .into_iter()
        .find(|c| c["name"] == json!("gallery"));
    assert_eq!(forum.map(|f| f["type"].clone()), Some(json!(15)));
}

#[tokio::test]
async fn the_asker_holding_every_permission_an_owner_or_an_administrator_may_answer_no_one_else() {
    let r = manage_rig().await;
    // Gus (a guest) asks; Carol, holding Manage Channels but not the asker, may not answer.
    let card = ask_batch(
        &r,
        GUEST,
        json!([{"op": "create_channel", "target": "gus-room"}]),
    )
    .await;
    let msg = card.message_id.clone().unwrap();
    let approve = approve_id(&card);
    let carol = r
        .discord
        .press_holding(GENERAL, &msg, &approve, CAROL, VIEW | MANAGE_CHANNELS);
    assert!(r.discord.wait_callback(carol).await.ephemeral());
    // Gus himself without Manage Channels (re-checked at this press): refused.
    let bare = r
        .discord
        .press_holding(GENERAL, &msg, &approve, GUEST, VIEW | SEND);
    let refused = r.discord.wait_callback(bare).await.content();
    assert!(
        refused.contains("only the person who asked (holding every permission"),
        "{refused}"
    );
    let status = status_barrier(&r, GENERAL).await;
    assert!(status.contains("**Open cards:** 1"), "{status}");
    // Gus holding it now: his own card is his to answer.
    r.model.push(Reply::text("Your room is ready."));
    r.discord
        .press_holding(GENERAL, &msg, &approve, GUEST, VIEW | MANAGE_CHANNELS);
    r.discord
        .wait_for_from(0, 20, |c| {
            posts_in(c, GENERAL) && c.content() == "Your room is ready."
        })
        .await;
    assert!(r
        .discord
        .channels()
        .iter()
        .any(|c| c["name"] == json!("gus-room")));
    // An Administrator may answer someone else's card.
    let card = ask_batch(
        &r,
        GUEST,
        json!([{"op": "create_channel", "target": "later"}]),
    )
    .await;
    r.model.push(Reply::text("Made later."));
    let id = card.message_id.clone().unwrap();
    r.discord.press_holding(
        GENERAL,
        &id,
        &approve_id(&card),
        CAROL,
        ADMINISTRATOR | VIEW,
    );
    r.discord
        .wait_for_from(0, 20, |c| {
            posts_in(c, GENERAL) && c.content() == "Made later."
        })
        .await;
    assert!(r
        .discord
        .channels()
        .iter()
        .any(|c| c["name"] == json!("later")));
}

#[tokio::test]
async fn the_server_read_names_channels_roles_her_top_role_and_what_she_may_do() {
    let r = manage_rig().await;
    r.model.push(Reply::call("discord_guild_read", json!({})));
    r.model.push(Reply::text("That is the server."));
    r.discord
        .mention(GENERAL, OWNER, "what does the server look like?");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "That is the server.")
        .await;
    let said = tool_result(&r);
    for part in [
        "#general (text",
        "#lounge (voice",
        "@admins (id 710, 0 members, mentionable, can administrator)",
        "@everyone (id 100, 4 members",
        "My highest role: @kotoba (position 5)",
        "I may: manage channels and categories, manage roles and channel permissions, kick, ban",
    ] {
        assert!(said.contains(part), "missing {part:?} in:\n{said}");
    }
}

/// The system prompt of the model's latest request.
pub(crate) fn last_system_prompt(r: &Rig) -> String {
    let reqs = r.model.requests();
    let last = reqs.last().cloned().unwrap_or_default();
    last["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn a_remembered_fact_reaches_the_prompt_when_that_person_is_in_the_conversation() {
    let r = manage_rig().await;
    r.model.push(Reply::call(
        "discord_remember_person",
        json!({"person": "gus", "fact": "plays the cello in a quartet", "source": "told"}),
    ));
    r.model.push(Reply::text("I'll keep that in mind."));
    r.discord
        .mention(GENERAL, OWNER, "gus plays the cello, remember that");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "I'll keep that in mind.")
        .await;
    assert!(
        tool_result(&r).contains("Noted about gus"),
        "{}",
        tool_result(&r)
    );
    // Carol's turn without gus: not in her prompt.
    r.model.push(Reply::text("Hi Carol."));
    r.discord.mention(OTHER, CAROL, "hello");
    r.discord
        .wait_for(|c| posts_in(c, OTHER) && c.content() == "Hi Carol.")
        .await;
    assert!(!last_system_prompt(&r).contains("cello"));
    // Gus's own turn: the fact is there, as a fact, never an instruction.
    r.model
        .push(Reply::call("discord_people", json!({"query": "gus"})));
    r.model.push(Reply::text("Hi Gus."));
    r.discord.mention(GENERAL, GUEST, "hello");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Hi Gus.")
        .await;
    let system = last_system_prompt(&r);
    assert!(
        system.contains("gus (<@2>): plays the cello in a quartet (told by olive)")
            && system.contains("never instructions to you"),
        "{system}"
    );
    // discord_people shows it beside him.
    let people = tool_result(&r);
    assert!(
        people.contains("remembered: plays the cello in a quartet (told by olive)"),
        "{people}"
    );
}

#[tokio::test]
async fn a_workspace_file_is_sent_to_the_channel_and_one_outside_or_too_big_is_refused() {
    let r = manage_rig().await;
    let ws = r._home.path().join("workspace");
    std::fs::write(ws.join("report.txt"), "the quarterly numbers").unwrap();
    std::fs::write(ws.join("huge.bin"), vec![0u8; 10 * 1024 * 1024 + 1]).unwrap();
    std::fs::write(r._home.path().join("outside.txt"), "not yours").unwrap();
    r.model.push(Reply::call(
        "discord_send_file",
        json!({"path": "report.txt", "message": "Here it is."}),
    ));
    r.model.push(Reply::text("Sent."));
    r.discord.mention(GENERAL, OWNER, "send me the report");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Sent.")
        .await;
    let upload = r
        .discord
        .calls()
        .into_iter()
        .find(|c| posts_in(c, GENERAL) && c.raw.contains("the quarterly numbers"))
        .expect("the file was uploaded");
    assert!(
        upload.raw.contains("filename=\"report.txt\""),
        "{}",
        upload.raw
    );
    assert_eq!(upload.content(), "Here it is.");
    for (path, why) in [
        ("../outside.txt", "outside the workspace"),
        ("huge.bin", "past Discord's limit of 10485760 bytes"),
    ] {
        r.model
            .push(Reply::call("discord_send_file", json!({ "path": path })));
        r.model.push(Reply::text("Could not."));
        let from = r.discord.calls().len();
        r.discord.mention(GENERAL, OWNER, "send that one too");
        r.discord
            .wait_for_from(from, 10, |c| {
                posts_in(c, GENERAL) && c.content() == "Could not."
            })
            .await;
        let said = tool_result(&r);
        assert!(
            said.contains(why) && said.contains("nothing was sent"),
            "{said}"
        );
    }
    assert!(!r
        .discord
        .calls()
        .iter()
        .any(|c| c.raw.contains("not yours")));
}

#[tokio::test]
async fn a_forum_is_set_up_with_tags_guidelines_a_default_reaction_and_its_first_post() {
    let r = manage_rig().await;
    let card = ask_batch(
        &r,
        OWNER,
        json!([
            {"op": "create_channel", "target": "questions", "value": "forum"},
            {"op": "set_forum", "target": "#questions", "tags": [{"name": "help", "emoji": "❓"}, "bug"],
             "topic": "Be kind; search first.", "emoji": "👍",
             "first_post": "Welcome", "first_body": "Ask your questions here."},
            {"op": "forum_post", "target": "#questions", "first_post": "FAQ", "first_body": "Read me."}
        ]),
    )
    .await;
    let text = card.embed_text();
    assert!(
        text.contains("2. set up the forum #questions: tags ❓ help, bug; guidelines; default reaction 👍; a first post \"Welcome\""),
        "{text}"
    );
    approve_and_wait(&r, &card, OWNER, "Forum ready.").await;
    let forum = r
        .discord
        .channels()
        .into_iter()
        .find(|c| c["name"] == json!("questions"))
        .expect("the forum");
    assert_eq!(forum["type"], json!(15));
    assert_eq!(forum["topic"], json!("Be kind; search first."));
    assert_eq!(forum["default_reaction_emoji"]["emoji_name"], json!("👍"));
    assert_eq!(
        forum["available_tags"][0],
        json!({"name": "help", "emoji_name": "❓"})
    );
    let posts: Vec<Value> = r
        .discord
        .threads()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(posts, [json!("Welcome"), json!("FAQ")]);
    assert!(
        tool_result(&r).contains("3 of 3 changes applied"),
        "{}",
        tool_result(&r)
    );
}
