//! Forget me (docs/discord.md, "Forget me"), on the loopback Discord: a member who says
//! things in a DM and in a server channel, keeps a notebook and is talked about, then
//! uses `/forget-me` (a button only they may press) or asks her (a card that is theirs
//! to answer): afterwards a byte search of the whole data folder finds none of it, her
//! next turn reads "[removed at their request]" where their lines were, what others
//! said stays, and the audit trail says an erase happened without saying what.

use serde_json::json;

use super::discord_manage::tool_result;
use super::discord_people::says;
use super::discord_roles::{approve_of, card_for};
use kotoba_testkit::discord::rig::{posts_in, rig_on, Rig};
use kotoba_testkit::discord::{FakeDiscord, CAROL, DM, GENERAL, GUEST, OTHER, OWNER, VAULT};
use kotoba_testkit::model_server::Reply;

/// Words only gus ever said or had said about him.
const HIS: [&str; 5] = [
    "quokka4471",
    "marmoset",
    "Persimmonpuff",
    "wombat team",
    "axolotl",
];

/// Gus leaves traces everywhere: a DM, lines in two channels, his notebook, a
/// fact the owner keeps about him in the staff channel; carol talks in general too.
async fn gus_is_known(r: &Rig) {
    says(
        r,
        DM,
        GUEST,
        "my locker code is quokka4471",
        None,
        "Got it.",
    )
    .await;
    says(
        r,
        GENERAL,
        GUEST,
        "I collect marmoset stamps",
        None,
        "How lovely.",
    )
    .await;
    says(
        r,
        GENERAL,
        GUEST,
        "remember my cat",
        Some((
            "memory_write",
            json!({"fact": "My cat is called Persimmonpuff.", "topic": "pets"}),
        )),
        "Kept in your notebook.",
    )
    .await;
    says(r, OTHER, GUEST, "my axolotl sleeps all day", None, "Cute.").await;
    says(
        r,
        VAULT,
        OWNER,
        "note this about gus",
        Some((
            "discord_remember_person",
            json!({"person": "gus", "fact": "gus is leaving the wombat team", "source": "told"}),
        )),
        "Noted.",
    )
    .await;
    says(
        r,
        GENERAL,
        CAROL,
        "I like trains",
        None,
        "Trains are great.",
    )
    .await;
    let home = r._home.path();
    assert!(
        home.join("memory/people/2").exists(),
        "his notebook is there"
    );
    assert!(
        found(home, "marmoset"),
        "the words are kept before the erase"
    );
}

/// Whether any file under `dir` holds `word`, byte for byte.
fn found(dir: &std::path::Path, word: &str) -> bool {
    let mut hit = false;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            hit |= found(&p, word);
        } else if let Ok(bytes) = std::fs::read(&p) {
            hit |= bytes.windows(word.len()).any(|w| w == word.as_bytes());
        }
    }
    hit
}

/// What a byte search of the data folder still finds of gus.
fn left_of_him(r: &Rig) -> Vec<&'static str> {
    HIS.into_iter()
        .filter(|w| found(r._home.path(), w))
        .collect()
}

/// After the erase: nothing of his in the bytes, her next turn in general reads the
/// placeholder where he spoke and carol's line as it was, and the audit says an erase
/// happened without its content.
async fn he_is_forgotten(r: &Rig) {
    assert_eq!(
        left_of_him(r),
        Vec::<&str>::new(),
        "a byte search finds him"
    );
    assert!(
        found(r._home.path(), "I like trains"),
        "what carol said stays"
    );
    // His DM is removed whole, not left as placeholders.
    let dm = r
        .app
        .engine
        .store()
        .history(&format!("discord:{DM}"), 50)
        .await
        .unwrap();
    assert!(
        dm.iter().all(|m| m.text != "[removed at their request]"),
        "{dm:?}"
    );
    says(
        r,
        GENERAL,
        CAROL,
        "what did people talk about?",
        None,
        "Trains.",
    )
    .await;
    let reqs = r.model.requests();
    let last = serde_json::to_string(&reqs.last().unwrap()["messages"]).unwrap();
    assert!(last.contains("[removed at their request]"), "{last}");
    assert!(last.contains("I like trains"), "{last}");
    for w in HIS {
        assert!(!last.contains(w), "'{w}' reached her next turn: {last}");
    }
    let audit = r.app.engine.store().audit_rows(None, 100).await.unwrap();
    let row = audit
        .iter()
        .find(|a| a.tool == "erase_person" && a.approver == "user");
    let row = row.expect("the erase is in the audit trail");
    assert!(!row.detail.contains(&GUEST.to_string()), "{row:?}");
    // Her memory of him is gone, in a DM too.
    let recalled = {
        says(
            r,
            DM,
            GUEST,
            "what is my cat called?",
            Some(("memory_recall", json!({"query": "cat"}))),
            "I don't know.",
        )
        .await;
        tool_result(r)
    };
    assert!(!recalled.contains("Persimmonpuff"), "{recalled}");
}

#[tokio::test]
async fn forget_me_asks_to_confirm_only_its_person_confirms_and_then_nothing_of_them_is_left_in_the_bytes(
) {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    gus_is_known(&r).await;
    let asked = r.discord.slash(GENERAL, GUEST, "forget-me", json!([]), 0);
    let confirm = r.discord.wait_callback(asked).await;
    let button = confirm
        .buttons()
        .into_iter()
        .next()
        .expect("a confirmation button")
        .0;
    assert_eq!(button, format!("fm:confirm:{GUEST}"));
    assert_eq!(
        left_of_him(&r),
        HIS.to_vec(),
        "nothing erased before the press"
    );
    // Carol cannot press it for him.
    let carol = r.discord.press(GENERAL, "1", &button, CAROL);
    let refused = r.discord.wait_callback(carol).await;
    assert!(
        refused.content().contains("only them"),
        "{:?}",
        refused.body
    );
    assert!(
        left_of_him(&r).len() == HIS.len(),
        "carol's press erased nothing"
    );
    let gus = r.discord.press(GENERAL, "1", &button, GUEST);
    r.discord.wait_callback(gus).await;
    let done = r
        .discord
        .wait_for(|c| {
            c.method == "PATCH" && c.path.contains("/webhooks/") && c.content().starts_with("Done")
        })
        .await;
    assert!(
        done.content().contains("forgotten you"),
        "{}",
        done.content()
    );
    he_is_forgotten(&r).await;
}

#[tokio::test]
async fn asking_her_to_forget_opens_a_card_that_is_the_persons_own_to_answer_and_never_always() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    gus_is_known(&r).await;
    let card = card_for(&r, DM, GUEST, "forget_me", json!({})).await;
    let buttons = card.buttons();
    assert!(
        buttons.iter().all(|b| !b.0.starts_with("ks:")),
        "no always on an erase: {buttons:?}"
    );
    let (id, approve) = (card.message_id.clone().unwrap(), approve_of(&card));
    r.model.push(Reply::text("Done, I have forgotten you."));
    let gus = r.discord.press(DM, &id, &approve, GUEST);
    r.discord.wait_callback(gus).await;
    r.discord
        .wait_for(|c| posts_in(c, DM) && c.content() == "Done, I have forgotten you.")
        .await;
    assert!(
        tool_result(&r).starts_with("Erased:"),
        "{}",
        tool_result(&r)
    );
    he_is_forgotten(&r).await;
}

#[tokio::test]
async fn nobody_asks_to_forget_someone_else_and_an_owner_may_name_them() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    gus_is_known(&r).await;
    says(
        &r,
        GENERAL,
        CAROL,
        "forget gus",
        Some(("forget_me", json!({"person": GUEST.to_string()}))),
        "I can't.",
    )
    .await;
    assert!(
        tool_result(&r).contains("Only the person themselves"),
        "{}",
        tool_result(&r)
    );
    assert_eq!(left_of_him(&r).len(), HIS.len(), "nothing erased");
    // The owner names him: the card is the owners' to answer.
    let card = card_for(
        &r,
        VAULT,
        OWNER,
        "forget_me",
        json!({"person": format!("<@{GUEST}>")}),
    )
    .await;
    let (id, approve) = (card.message_id.clone().unwrap(), approve_of(&card));
    let gus = r.discord.press(VAULT, &id, &approve, GUEST);
    let refused = r.discord.wait_callback(gus).await;
    assert!(
        refused.content().contains("not yours to answer"),
        "{:?}",
        refused.body
    );
    r.model.push(Reply::text("He is forgotten."));
    let owner = r.discord.press(VAULT, &id, &approve, OWNER);
    r.discord.wait_callback(owner).await;
    r.discord
        .wait_for(|c| posts_in(c, VAULT) && c.content() == "He is forgotten.")
        .await;
    he_is_forgotten(&r).await;
}

#[tokio::test]
async fn the_owner_forgets_a_person_from_the_page_and_a_bad_id_is_a_json_400() {
    let w = kotoba_testkit::web::start().await;
    let store = w.engine.store().clone();
    store
        .append_lines(
            "discord:200",
            &[
                ("user", "gus (2)", "I collect marmoset stamps", false),
                ("user", "carol (3)", "I like trains", false),
            ],
        )
        .await
        .unwrap();
    let notebook = w.home.path().join("memory/people/2/topics");
    std::fs::create_dir_all(&notebook).unwrap();
    std::fs::write(
        notebook.join("pets.md"),
        "- [pets] My cat is Persimmonpuff.\n",
    )
    .unwrap();
    let bad = w.post("/api/people/gus/forget", json!({})).await;
    assert_eq!(bad.status(), 400);
    let why: serde_json::Value = bad.json().await.unwrap();
    assert_eq!(why["error"], "invalid_person", "{why}");
    // Only the owner's page may do it: without the token, nothing happens.
    let stranger = kotoba_testkit::web::plain()
        .post(w.url("/api/people/2/forget"))
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), 401);
    assert!(w.home.path().join("memory/people/2").exists());
    let done = w.post("/api/people/2/forget", json!({})).await;
    assert_eq!(done.status(), 200);
    let body: serde_json::Value = done.json().await.unwrap();
    assert_eq!(body["erased"]["lines"], 1, "{body}");
    assert!(
        !w.home.path().join("memory/people/2").exists(),
        "no Markdown left"
    );
    let lines = store.history("discord:200", 10).await.unwrap();
    assert_eq!(lines[0].text, "[removed at their request]");
    assert_eq!(lines[1].text, "I like trains");
    let audit = store.audit_rows(None, 10).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|a| a.tool == "erase_person" && a.detail.starts_with("asked by an owner")),
        "{audit:?}"
    );
}
