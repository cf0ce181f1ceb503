//! Sessions per person (docs/discord.md, "Sessions"): with `discord.sessions: person`
//! each person has their own conversation with her in a shared server channel — their
//! lines and her answers to them, nobody else's — while what the others wrote there
//! since their last turn still reaches her as what was said around her. A DM stays one
//! conversation. With the default (`channel`) the channel is one conversation.

use serde_json::Value;

use kotoba_testkit::discord::rig::{posts_in, rig_on, Rig};
use kotoba_testkit::discord::{FakeDiscord, CAROL, GENERAL, GUEST, OWNER};
use kotoba_testkit::model_server::Reply;

/// `who` says `text` to her in general; she answers `answer`. The model's request.
async fn turn(r: &Rig, who: u64, text: &str, answer: &str) -> String {
    r.model.push(Reply::text(answer));
    let from = r.discord.calls().len();
    r.discord.mention(GENERAL, who, text);
    r.discord
        .wait_for_from(from, 10, |c| posts_in(c, GENERAL) && c.content() == answer)
        .await;
    let reqs = r.model.requests();
    serde_json::to_string(reqs.last().unwrap_or(&Value::Null)).unwrap()
}

async fn lines(r: &Rig, session: &str) -> Vec<String> {
    r.app
        .engine
        .store()
        .history(session, 50)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect()
}

#[tokio::test]
async fn per_person_each_has_their_own_conversation_in_a_shared_channel_and_hears_the_others_as_context(
) {
    let r = rig_on(FakeDiscord::start().await, &[]).await;
    std::fs::write(
        r._home.path().join("settings.yaml"),
        "discord:\n  sessions: person\n",
    )
    .unwrap();
    turn(&r, OWNER, "my favourite colour is teal", "Teal, noted.").await;
    // Gus and Carol speak in turn in the same channel.
    let gus = turn(
        &r,
        GUEST,
        "I am planning a trip to Lisbon",
        "Lisbon, lovely.",
    )
    .await;
    assert!(
        gus.contains("my favourite colour is teal"),
        "olive's line reaches gus's turn as what was said around her: {gus}"
    );
    assert!(
        !gus.contains("Teal, noted."),
        "not her answer to olive: {gus}"
    );
    let carol = turn(
        &r,
        CAROL,
        "what did I say earlier?",
        "You have not said anything yet.",
    )
    .await;
    assert!(carol.contains("planning a trip to Lisbon"), "{carol}");
    assert!(!carol.contains("Lisbon, lovely."), "{carol}");
    let gus = turn(&r, GUEST, "where am I going?", "To Lisbon.").await;
    assert!(
        gus.contains("Lisbon, lovely."),
        "his own conversation goes on: {gus}"
    );
    assert!(
        gus.contains("what did I say earlier?"),
        "carol's line, as context: {gus}"
    );
    assert!(
        !gus.contains("my favourite colour is teal"),
        "context he already had is not given twice: {gus}"
    );
    // Each conversation is kept apart in the store.
    let of = async |who: u64| lines(&r, &format!("discord:{GENERAL}:{who}")).await;
    assert_eq!(
        of(GUEST).await,
        [
            "I am planning a trip to Lisbon",
            "Lisbon, lovely.",
            "where am I going?",
            "To Lisbon."
        ]
    );
    assert_eq!(
        of(OWNER).await,
        ["my favourite colour is teal", "Teal, noted."]
    );
    assert_eq!(of(CAROL).await.len(), 2);
    assert!(
        lines(&r, &format!("discord:{GENERAL}")).await.is_empty(),
        "no shared conversation"
    );
}

#[tokio::test]
async fn by_default_the_channel_is_one_conversation() {
    let r = rig_on(FakeDiscord::start().await, &[]).await;
    turn(&r, OWNER, "my favourite colour is teal", "Teal, noted.").await;
    let gus = turn(&r, GUEST, "what is olive's colour?", "Teal.").await;
    assert!(gus.contains("Teal, noted."), "one conversation: {gus}");
    assert_eq!(lines(&r, &format!("discord:{GENERAL}")).await.len(), 4);
}
