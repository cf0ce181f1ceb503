//! A job's question on Discord (ask_user, clarify): Answer opens a text field whose
//! words reach the job verbatim, Skip lets it go on without them, and only someone who
//! may answer the card can.

use std::time::Duration;

use kotoba::surfaces::discord;
use serde_json::json;

use kotoba_testkit::discord::rig::{posts_in, rig, settle, Rig};
use kotoba_testkit::discord::{Call, GENERAL, GUEST, OWNER};
use kotoba_testkit::model_server::Reply;

/// Start a job in #general whose first step asks `question`; returns the question
/// card's message and its buttons.
async fn asked(r: &Rig, question: &str) -> Call {
    // She follows the channel once someone has spoken to her there.
    r.model.push(Reply::text("Hello."));
    r.discord.mention(GENERAL, OWNER, "hi");
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.content() == "Hello.")
        .await;
    r.model
        .push(Reply::call("clarify", json!({ "question": question })));
    r.model.set_fallback(Reply::text("Done."));
    r.app
        .engine
        .start_job(
            &kotoba_testkit::discord::rig::owner_turn(&discord::session_of(GENERAL)),
            "push the branch",
        )
        .await
        .unwrap();
    r.discord
        .wait_for(|c| posts_in(c, GENERAL) && c.buttons().iter().any(|b| b.0.starts_with("kq:")))
        .await
}

/// Wait until some model request carries `words`.
async fn model_saw(r: &Rig, words: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !r
        .model
        .requests()
        .iter()
        .any(|q| q.to_string().contains(words))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no model request carried {words:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_jobs_question_on_discord_is_answered_in_a_text_field_and_the_job_gets_the_words_verbatim(
) {
    let r = rig().await;
    let card = asked(&r, "Which branch should I push?").await;
    assert!(card.embed_text().contains("Which branch should I push?"));
    let buttons = card.buttons();
    let answer = buttons.iter().find(|b| b.1 == "Answer…").unwrap().0.clone();
    assert!(buttons.iter().any(|b| b.1 == "Skip"), "{buttons:?}");
    assert!(
        !buttons.iter().any(|b| b.1 == "Approve once"),
        "a question is not an approval: {buttons:?}"
    );
    let message = card.message_id.clone().unwrap();
    // Answer opens a modal (callback type 9) with one text field.
    let press = r.discord.press(GENERAL, &message, &answer, OWNER);
    let modal = r.discord.wait_callback(press).await;
    assert_eq!(modal.body["type"], json!(9), "{:?}", modal.body);
    assert_eq!(modal.body["data"]["custom_id"], json!(answer));
    let field = &modal.body["data"]["components"][0]["components"][0];
    assert_eq!(field["type"], json!(4), "a text input: {:?}", modal.body);
    let field_id = field["custom_id"].as_str().unwrap().to_string();
    // A guest's submit is refused privately and changes nothing.
    let guest = r
        .discord
        .submit_modal(GENERAL, &answer, &field_id, "main", GUEST);
    let refused = r.discord.wait_callback(guest).await;
    assert!(refused.ephemeral(), "{:?}", refused.body);
    assert!(
        refused.content().contains("not yours"),
        "{}",
        refused.content()
    );
    // The owner's words reach the job verbatim.
    let words = "release/2.4 — and tag it v2.4.1";
    let owner = r
        .discord
        .submit_modal(GENERAL, &answer, &field_id, words, OWNER);
    assert_eq!(r.discord.wait_callback(owner).await.body["type"], json!(6));
    model_saw(&r, &format!("They answered: {words}")).await;
    let edited = r
        .discord
        .wait_for(|c| {
            c.method == "PATCH"
                && c.path.ends_with(&message)
                && c.embed_text().contains("Answered by")
        })
        .await;
    assert!(
        !edited.embed_text().contains("Approved") && !edited.embed_text().contains(words),
        "the settled question says who answered, not the answer: {}",
        edited.embed_text()
    );
    assert!(
        !r.model
            .requests()
            .iter()
            .any(|q| q.to_string().contains("They answered: main")),
        "the guest's answer never reached the job"
    );
    settle().await;
}

#[tokio::test]
async fn skipping_a_jobs_question_on_discord_lets_the_job_go_on_without_an_answer() {
    let r = rig().await;
    let card = asked(&r, "Should I also update the changelog?").await;
    let skip = card
        .buttons()
        .into_iter()
        .find(|b| b.1 == "Skip")
        .unwrap()
        .0;
    let press = r
        .discord
        .press(GENERAL, card.message_id.as_deref().unwrap(), &skip, OWNER);
    assert_eq!(r.discord.wait_callback(press).await.body["type"], json!(6));
    model_saw(&r, "they skipped the question without answering").await;
    settle().await;
}
