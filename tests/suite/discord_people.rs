//! What she knows of people, and who is told it (docs/discord.md, "What she knows of
//! people"), on the loopback Discord: a fact learned in a staff-only channel never
//! reaches the prompt or `discord_people` of a member who cannot read that channel,
//! while one said in public does; the owner and a member who can read the staff
//! channel are told both. Every member has a notebook of their own (memory_write,
//! memory_recall), in every channel and DM, that no other member reads.

use serde_json::json;

use super::discord_manage::{last_system_prompt, tool_result};
use kotoba_testkit::discord::rig::{posts_in, rig_on, Rig};
use kotoba_testkit::discord::{
    FakeDiscord, Msg, ADMIN, CAROL, DM, GENERAL, GUEST, OTHER, OWNER, VAULT,
};
use kotoba_testkit::model_server::Reply;

const SECRET_FACT: &str = "is about to be removed as a moderator";
const PUBLIC_FACT: &str = "plays the cello in a quartet";

/// `who` asks her in `channel` to remember `fact` about gus, as told.
async fn remember(r: &Rig, channel: u64, who: u64, fact: &str) {
    r.model.push(Reply::call(
        "discord_remember_person",
        json!({"person": "gus", "fact": fact, "source": "told"}),
    ));
    r.model.push(Reply::text("Noted."));
    let from = r.discord.calls().len();
    r.discord.mention(channel, who, "remember that about gus");
    r.discord
        .wait_for_from(from, 10, |c| {
            posts_in(c, channel) && c.content() == "Noted."
        })
        .await;
    assert!(
        tool_result(r).contains("Noted about gus"),
        "{}",
        tool_result(r)
    );
}

/// `who` asks in general what she thinks of gus, and she looks him up; her prompt and
/// what discord_people showed her.
async fn asks_about_gus(r: &Rig, who: u64, answer: &str) -> (String, String) {
    r.model
        .push(Reply::call("discord_people", json!({"query": "gus"})));
    r.model.push(Reply::text(answer));
    let from = r.discord.calls().len();
    r.discord
        .mention(GENERAL, who, &format!("what do you think of <@{GUEST}>?"));
    r.discord
        .wait_for_from(from, 10, |c| posts_in(c, GENERAL) && c.content() == answer)
        .await;
    (last_system_prompt(r), tool_result(r))
}

#[tokio::test]
async fn a_fact_learned_in_a_staff_only_channel_reaches_only_those_who_can_read_it_and_a_public_one_reaches_all(
) {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    remember(&r, VAULT, OWNER, SECRET_FACT).await;
    remember(&r, GENERAL, OWNER, PUBLIC_FACT).await;

    // Carol cannot read the vault: the public fact, never the staff one.
    let (prompt, people) = asks_about_gus(&r, CAROL, "He plays well, I hear.").await;
    assert!(prompt.contains(PUBLIC_FACT), "{prompt}");
    assert!(!prompt.contains(SECRET_FACT), "the leak: {prompt}");
    assert!(people.contains(PUBLIC_FACT), "{people}");
    assert!(
        !people.contains(SECRET_FACT),
        "discord_people leaks: {people}"
    );

    // Nor gus himself, who was not told it and cannot read the vault.
    let (prompt, people) = asks_about_gus(&r, GUEST, "You play well, I hear.").await;
    assert!(
        prompt.contains(PUBLIC_FACT) && !prompt.contains(SECRET_FACT),
        "{prompt}"
    );
    assert!(!people.contains(SECRET_FACT), "{people}");

    // The administrator can read the vault, and the owner hears everything.
    for (who, answer) in [(ADMIN, "Both, then."), (OWNER, "Both, as you know.")] {
        let (prompt, people) = asks_about_gus(&r, who, answer).await;
        assert!(
            prompt.contains(PUBLIC_FACT) && prompt.contains(SECRET_FACT),
            "{who}: {prompt}"
        );
        assert!(people.contains(SECRET_FACT), "{who}: {people}");
    }
}

/// `who` says `text` in `channel` (mentioning her outside a DM); she answers `answer`
/// after calling `tool` when given.
pub(crate) async fn says(
    r: &Rig,
    channel: u64,
    who: u64,
    text: &str,
    tool: Option<(&str, serde_json::Value)>,
    answer: &str,
) {
    if let Some((name, args)) = tool {
        r.model.push(Reply::call(name, args));
    }
    r.model.push(Reply::text(answer));
    let from = r.discord.calls().len();
    if channel == DM {
        r.discord.say(DM, who, text, Msg::default());
    } else {
        r.discord.mention(channel, who, text);
    }
    r.discord
        .wait_for_from(from, 10, |c| posts_in(c, channel) && c.content() == answer)
        .await;
}

/// `who` says `text` in `channel` and she calls `tool` with `args`, then answers
/// `answer`; what the tool gave her.
async fn uses(
    r: &Rig,
    channel: u64,
    who: u64,
    text: &str,
    tool: &str,
    args: serde_json::Value,
    answer: &str,
) -> String {
    says(r, channel, who, text, Some((tool, args)), answer).await;
    tool_result(r)
}

#[tokio::test]
async fn every_member_has_a_notebook_of_their_own_in_every_channel_and_dm_and_nobody_else_reads_it()
{
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    let home = r._home.path().to_path_buf();
    // The owner's own memory holds something no guest may hear.
    let said = uses(
        &r,
        GENERAL,
        OWNER,
        "remember the wifi password",
        "memory_write",
        json!({"fact": "The wifi password is tangerine.", "topic": "home"}),
        "Kept.",
    )
    .await;
    assert!(said.contains("Remembered under 'home'"), "{said}");
    // Gus keeps a fact in general…
    let said = uses(
        &r,
        GENERAL,
        GUEST,
        "remember my cat is called Miso",
        "memory_write",
        json!({"fact": "My cat is called Miso.", "topic": "pets"}),
        "Noted, Miso.",
    )
    .await;
    assert!(said.contains("Remembered under 'pets'"), "{said}");
    assert!(
        home.join("memory/people/2/topics/pets.md").exists(),
        "his own notebook"
    );
    assert!(
        !home.join("memory/topics/pets.md").exists(),
        "not the owner's memory"
    );
    // …and she knows it in another channel and in a DM.
    for channel in [OTHER, DM] {
        let said = uses(
            &r,
            channel,
            GUEST,
            "what is my cat called?",
            "memory_recall",
            json!({"query": "cat"}),
            "Miso!",
        )
        .await;
        assert!(said.contains("My cat is called Miso."), "{channel}: {said}");
        assert!(!said.contains("tangerine"), "{channel}: {said}");
    }
    // Gus never reads the owner's memory, even asking for it.
    let said = uses(
        &r,
        GENERAL,
        GUEST,
        "what is the wifi password?",
        "memory_recall",
        json!({"query": "wifi password"}),
        "I don't know that.",
    )
    .await;
    assert!(!said.contains("tangerine"), "{said}");
    // Carol's notebook is her own: nothing of gus's, and his is not hers to open.
    let said = uses(
        &r,
        GENERAL,
        CAROL,
        "what is gus's cat called?",
        "memory_recall",
        json!({"query": "cat"}),
        "No idea.",
    )
    .await;
    assert!(!said.contains("Miso"), "{said}");
    let said = uses(
        &r,
        GENERAL,
        CAROL,
        "read gus's notes",
        "memory_recall",
        json!({"query": "cat", "person": format!("<@{GUEST}>")}),
        "Not yours.",
    )
    .await;
    assert!(
        said.contains("only your own notebook") && !said.contains("Miso"),
        "{said}"
    );
    // The owner's memory has no Miso; she may open gus's notebook.
    let said = uses(
        &r,
        GENERAL,
        OWNER,
        "what do I know of cats?",
        "memory_recall",
        json!({"query": "cat"}),
        "Nothing.",
    )
    .await;
    assert!(!said.contains("Miso"), "{said}");
    let said = uses(
        &r,
        GENERAL,
        OWNER,
        "what did gus tell you?",
        "memory_recall",
        json!({"query": "cat", "person": GUEST.to_string()}),
        "His cat is Miso.",
    )
    .await;
    assert!(said.contains("My cat is called Miso."), "{said}");
}

#[tokio::test]
async fn a_plain_discord_turn_makes_at_most_six_round_trips_to_the_store() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    // Her first turn in a channel or DM also reads its conversation.
    says(&r, GENERAL, GUEST, "warm up", None, "Warm.").await;
    says(&r, DM, GUEST, "warm up", None, "Warm.").await;
    let store = r.app.engine.store().clone();
    for (channel, answer) in [(GENERAL, "Hi."), (DM, "Hi there.")] {
        let before = store.round_trips();
        says(&r, channel, GUEST, "hello", None, answer).await;
        // What is written after her reply is posted (a seen mark) counts too.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let trips = store.round_trips() - before;
        assert!(trips <= 6, "{channel}: {trips} round trips");
    }
}
