//! The page's answers beyond yes and no over real HTTP (docs/gate.md, "Answers"):
//! `reason`, `edited` and `for_s` on `POST /api/cards/{id}`, `expires_at` on
//! `GET /api/grants`, answers that do not fit the card refused with a 400 naming why,
//! and `GET /api/cards` listing the cards waiting in every session, answerable here.

use kotoba::engine::TurnOptions;
use kotoba::protocol::{CardSettlement, Frame, Origin, TurnRequest};
use serde_json::{json, Value};

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::web::{of_type, start, WebRig};

/// Type `text` on the page in `session` after scripting a shell call of `command`, and
/// return the card's request id.
async fn card_for(
    r: &WebRig,
    sse: &mut kotoba_testkit::web::Sse,
    session: &str,
    command: &str,
) -> String {
    r.model
        .push(Reply::call("shell", json!({ "command": command })));
    r.say(session, "please").await;
    let frames = sse.until(|v| v["type"] == "card").await;
    let card = frames.last().unwrap().clone();
    assert_eq!(card["action"], command);
    card["request_id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_reason_an_edit_and_a_time_boxed_always_answer_a_card_by_post() {
    let r = start().await;
    let mut sse = r.events("ans").await;

    // Edit, then approve: the edited line is what runs, and the row shows it.
    let id = card_for(&r, &mut sse, "ans", "touch proposed.txt").await;
    assert_eq!(
        r.http
            .get(r.url("/api/cards"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    r.model.push(Reply::text("Ran your version."));
    let ok = r
        .post(
            &format!("/api/cards/{id}"),
            json!({"decision": "approve", "edited": "touch edited.txt"}),
        )
        .await;
    assert_eq!(ok.status(), 200);
    let frames = sse.until(|v| v["type"] == "turn_done").await;
    let done = of_type(&frames, "step")
        .into_iter()
        .rfind(|s| s["phase"] == "done")
        .unwrap()
        .clone();
    assert_eq!(done["action"], "$ touch edited.txt");
    assert!(r.workspace().join("edited.txt").exists());
    assert!(!r.workspace().join("proposed.txt").exists());

    // Deny with a reason: she is told the words verbatim.
    let id = card_for(&r, &mut sse, "ans", "touch nope.txt").await;
    r.model.push(Reply::text("All right."));
    let no = r
        .post(
            &format!("/api/cards/{id}"),
            json!({"decision": "deny", "reason": "we keep that folder clean"}),
        )
        .await;
    assert_eq!(no.status(), 200);
    sse.until(|v| v["type"] == "turn_done").await;
    let told = r.model.requests().last().unwrap().to_string();
    assert!(told.contains("we keep that folder clean"), "{told}");

    // Always, for an hour: the grant carries its expiry.
    let id = card_for(&r, &mut sse, "ans", "touch hourly.txt").await;
    r.model.push(Reply::text("Done."));
    let always = r
        .post(
            &format!("/api/cards/{id}"),
            json!({"decision": "always_exact", "for_s": 3600}),
        )
        .await;
    assert_eq!(always.status(), 200);
    sse.until(|v| v["type"] == "turn_done").await;
    let grants: Value = r.get_json("/api/grants").await;
    let grant = &grants[0];
    assert_eq!(grant["pattern"], "touch hourly.txt");
    let expires = grant["expires_at"].as_str().expect("RFC 3339 expiry");
    assert!(
        expires.len() == 20 && expires.ends_with('Z') && expires.contains('T'),
        "{expires}"
    );
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_card_is_a_400_naming_why_and_the_card_still_waits() {
    let r = start().await;
    let mut sse = r.events("bad").await;
    let id = card_for(&r, &mut sse, "bad", "touch maybe.txt").await;
    for (body, why) in [
        (json!({"decision": "approve", "reason": "x"}), "reason"),
        (json!({"decision": "deny", "for_s": 60}), "for_s"),
        (json!({"decision": "always_exact", "edited": "ls"}), "edit"),
        (json!({"decision": "approve", "bogus": 1}), "bogus"),
    ] {
        let resp = r.post(&format!("/api/cards/{id}"), body.clone()).await;
        // A field the API does not know is the body's shape (422, like any bad body);
        // the rest are answers that do not fit this card (400).
        let want = if why == "bogus" { 422 } else { 400 };
        assert_eq!(resp.status(), want, "{body}");
        let said: Value = resp.json().await.unwrap();
        assert!(
            said["message"].as_str().is_some_and(|m| m.contains(why)),
            "{body}: {said}"
        );
    }
    let waiting: Value = r.get_json("/api/cards").await;
    assert_eq!(
        waiting.as_array().unwrap().len(),
        1,
        "still waiting: {waiting}"
    );
}

#[tokio::test]
async fn an_always_a_dangerous_lines_card_does_not_offer_is_refused_400_and_nothing_runs() {
    let r = start().await;
    let mut sse = r.events("danger").await;
    let target = r.workspace().join("keep");
    std::fs::create_dir_all(&target).unwrap();
    let id = card_for(&r, &mut sse, "danger", "rm -rf keep").await;
    for (decision, why) in [
        ("always_family", "no family grant"),
        ("always_exact", "exact line"),
    ] {
        let resp = r
            .post(&format!("/api/cards/{id}"), json!({ "decision": decision }))
            .await;
        assert_eq!(resp.status(), 400, "{decision}");
        let said: Value = resp.json().await.unwrap();
        assert_eq!(said["error"], "invalid_answer", "{said}");
        assert!(
            said["message"].as_str().is_some_and(|m| m.contains(why)),
            "{decision}: {said}"
        );
    }
    let waiting: Value = r.get_json("/api/cards").await;
    assert_eq!(waiting.as_array().unwrap().len(), 1, "{waiting}");
    assert!(target.exists(), "nothing ran");
    let audit: Value = r.get_json("/api/audit?session=danger").await;
    assert!(
        !audit.to_string().contains("\"executed"),
        "no executed row: {audit}"
    );
}

#[tokio::test]
async fn the_page_lists_a_card_waiting_in_another_session_and_its_answer_there_says_where() {
    let r = start().await;
    // A turn at the terminal (another surface, another session) waits on a card.
    let session = r.engine.session("terminal:desk").await;
    let mut rx = session.subscribe();
    r.model.push(Reply::call(
        "shell",
        json!({"command": "touch from-desk.txt"}),
    ));
    r.model.push(Reply::text("Made it at the desk."));
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        let req = TurnRequest::text(Origin::Owner, "terminal:desk", "me", "make it");
        engine.run_turn(req, TurnOptions::default()).await
    });
    let listed = loop {
        let cards: Value = r.get_json("/api/cards").await;
        if let Some(c) = cards.as_array().and_then(|a| a.first()).cloned() {
            break c;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(listed["session"], "terminal:desk");
    assert_eq!(listed["action"], "touch from-desk.txt");
    let id = listed["request_id"].as_str().unwrap();
    let ok = r
        .post(&format!("/api/cards/{id}"), json!({"decision": "approve"}))
        .await;
    assert_eq!(ok.status(), 200);
    assert_eq!(turn.await.unwrap().text, "Made it at the desk.");
    assert!(r.workspace().join("from-desk.txt").exists());
    let settled = loop {
        if let Frame::CardSettled { settlement, .. } = &rx.recv().await.unwrap().frame {
            break settlement.clone();
        }
    };
    assert!(
        matches!(&settled, CardSettlement::Decided { via, .. } if via == "the web page"),
        "the terminal's copy says where it was decided: {settled:?}"
    );
}
