//! `voice_mode: realtime` on the page's voice socket: the room streams what the page
//! hears to a realtime speech-to-speech session (the loopback speech server's realtime
//! conversation), plays its audio back, captions both sides, and runs a turn of her loop
//! when the realtime model consults her — the answer goes back as the function's output
//! and is said. The chained recognizer is never asked. A realtime server that cannot be
//! reached is one sentence, and the chained pipeline answers instead.

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::speech_server::{espeak_16k, Converse, SpeechServer};
use kotoba_testkit::web::WebRig;

use super::web_voice::{has_text, open, rig};

/// Switch the rig's room to realtime at `base` (speech otherwise at the loopback).
fn realtime_at(r: &WebRig, speech: &SpeechServer, base: &str) {
    let speech_base = speech.openai_base();
    std::fs::write(
        r.home.path().join("settings.yaml"),
        format!(
            "voice_mode: realtime\nrealtime:\n  base_url: {base}\nstt:\n  provider: openai\n  base_url: {speech_base}\ntts:\n  provider: openai\n  base_url: {speech_base}\n"
        ),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_voice_mode_realtime_the_realtime_model_answers_aloud_and_a_consult_runs_her_loop() {
    let (r, speech) = rig(Vec::new()).await;
    realtime_at(&r, &speech, &speech.openai_base());
    speech.push_exchange("hello there", Converse::Say("Hi, good to hear you.".into()));
    speech.push_exchange(
        "is the kettle on",
        Converse::Call {
            name: "consult".into(),
            arguments: r#"{"request":"is the kettle on?"}"#.into(),
        },
    );
    r.model.push(Reply::text("The kettle is on."));
    let mut page = open(&r, "realtime").await;

    // Small talk: the realtime model answers in its own audio; her loop is not asked.
    let phrase = espeak_16k("hello there").await;
    page.speak(&phrase, 1.0).await;
    page.wait(20, "the caption of what she heard", |h| {
        has_text(h, "heard", "text", "hello there")
    })
    .await;
    page.wait(20, "her realtime answer's caption", |h| {
        has_text(h, "said", "text", "Hi, good to hear you.")
    })
    .await;
    let want = kotoba_testkit::speech_server::tone("Hi, good to hear you.", 24_000).len();
    page.wait(20, "her realtime answer's audio", |h| {
        h.samples * 10 >= want * 9
    })
    .await;
    assert_eq!(
        r.model.requests().len(),
        0,
        "small talk never reaches her loop"
    );

    // Real work: the consult runs a turn of her loop, whose answer the model says.
    let phrase = espeak_16k("is the kettle on").await;
    page.speak(&phrase, 1.0).await;
    page.wait(20, "the consult's answer said", |h| {
        has_text(h, "said", "text", "The kettle is on.")
    })
    .await;
    let asked = r.model.requests();
    assert_eq!(asked.len(), 1, "one turn of her loop");
    let body = asked[0].to_string();
    assert!(
        body.contains("is the kettle on?"),
        "the request reached her loop: {body}"
    );
    assert!(
        body.contains("heard, not read"),
        "a consult is a spoken-register turn: {body}"
    );
    let sessions = speech.converse_sessions();
    assert_eq!(sessions.len(), 1, "one session for the one person");
    assert_eq!(
        sessions[0]
            .outputs
            .iter()
            .map(|(_, o)| o.as_str())
            .collect::<Vec<_>>(),
        vec!["The kettle is on."],
        "her loop's answer went back as the function's output"
    );
    assert!(
        sessions[0].session["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("consult")),
        "her soul and the consult rule are the instructions"
    );
    assert!(
        !speech
            .requests()
            .iter()
            .any(|q| q.path == "/v1/audio/transcriptions" || q.path == "/v1/audio/speech"),
        "the chained recognizer and synthesizer were never asked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_realtime_server_that_cannot_be_reached_is_one_sentence_and_the_chain_answers() {
    let (r, speech) = rig(Vec::new()).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    realtime_at(&r, &speech, &gone);
    speech.set_default_transcript("what time is it");
    r.model.push(Reply::text("It is noon."));
    let mut page = open(&r, "fallback").await;
    let phrase = espeak_16k("what time is it").await;
    page.speak(&phrase, 2.2).await;
    page.wait(20, "one sentence about the realtime voice", |h| {
        has_text(
            h,
            "notice",
            "text",
            "Realtime voice (openai) could not connect",
        )
    })
    .await;
    page.wait(30, "the chained answer", |h| {
        has_text(h, "said", "text", "It is noon.")
    })
    .await;
    let notices = page
        .texts()
        .iter()
        .filter(|t| {
            t["kind"] == "notice"
                && t["text"]
                    .as_str()
                    .is_some_and(|s| s.contains("Realtime voice"))
        })
        .count();
    assert_eq!(notices, 1, "said once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speaking_over_the_realtime_answer_stops_her_audio_and_cancels_the_answer() {
    let (r, speech) = rig(Vec::new()).await;
    realtime_at(&r, &speech, &speech.openai_base());
    let long = "This is a long answer about the history of tea, from its first leaves \
                to the kettles of today, and it would go on for a good while longer.";
    speech.push_exchange("tell me about tea", Converse::Say(long.into()));
    speech.push_exchange("okay, stop", Converse::Say("Sure.".into()));
    let mut page = open(&r, "barge").await;
    page.speak(&espeak_16k("tell me about tea").await, 1.0)
        .await;
    page.wait(20, "the start of her long answer", |h| h.samples >= 24_000)
        .await;
    page.speak(&espeak_16k("okay, stop").await, 1.0).await;
    page.wait(10, "a stop", |h| {
        h.texts.iter().any(|t| t["type"] == "stop")
    })
    .await;
    page.wait(20, "the next answer's caption", |h| {
        has_text(h, "said", "text", "Sure.")
    })
    .await;
    let whole = kotoba_testkit::speech_server::tone(long, 24_000).len();
    assert!(
        page.samples() < whole,
        "her long answer was cut: {} of {whole} samples",
        page.samples()
    );
    let session = &speech.converse_sessions()[0];
    assert_eq!(
        session.responses.first().map(|r| r.0.as_str()),
        Some("cancelled"),
        "the realtime answer was cancelled: {:?}",
        session.responses
    );
    assert!(
        !page
            .texts()
            .iter()
            .any(|t| t["kind"] == "said" && t["text"].as_str() == Some(long)),
        "a cut answer is not captioned as said"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_realtime_socket_dropping_mid_answer_is_one_sentence_and_the_chain_answers_that_utterance(
) {
    let (r, speech) = rig(Vec::new()).await;
    realtime_at(&r, &speech, &speech.openai_base());
    speech.push_exchange(
        "tell me about tea",
        Converse::Say("Tea is a long story, so let me start at its very beginning.".into()),
    );
    speech.drop_mid_answer();
    // Its answer starts after the room's own ear has ended the utterance.
    speech.set_converse_delay(std::time::Duration::from_millis(1500));
    speech.set_default_transcript("tell me about tea");
    r.model.push(Reply::text("Tea is a drink from a leaf."));
    let mut page = open(&r, "dropped").await;
    page.speak(&espeak_16k("tell me about tea").await, 1.0)
        .await;
    page.wait(20, "one sentence about the lost connection", |h| {
        has_text(
            h,
            "notice",
            "text",
            "Realtime voice (openai) lost its connection",
        )
    })
    .await;
    page.wait(30, "the chain's answer to that utterance", |h| {
        has_text(h, "said", "text", "Tea is a drink from a leaf.")
    })
    .await;
    let asked = r.model.requests();
    assert_eq!(asked.len(), 1, "her loop answered it once");
    assert!(asked[0].to_string().contains("tell me about tea"));
    assert!(
        speech
            .requests()
            .iter()
            .any(|q| q.path == "/v1/audio/transcriptions" && q.audio_samples > 8_000),
        "the chained recognizer heard the utterance the session left"
    );
    assert!(
        !page
            .texts()
            .iter()
            .any(|t| t["kind"] == "said"
                && t["text"].as_str().is_some_and(|s| s.contains("long story"))),
        "the broken answer is not captioned as said"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consults_deferred_card_is_answered_by_a_spoken_yes_and_the_command_runs_once() {
    let shell = std::sync::Arc::new(kotoba_testkit::web::FakeShell::new("cleaned"));
    let runs = shell.runs.clone();
    let (r, speech) = rig(vec![shell]).await;
    realtime_at(&r, &speech, &speech.openai_base());
    speech.push_exchange(
        "clean the build folder",
        Converse::Call {
            name: "consult".into(),
            arguments: r#"{"request":"clean the build folder"}"#.into(),
        },
    );
    speech.push_exchange("yes, go ahead", Converse::Say("Okay.".into()));
    r.model.push(Reply::call(
        "shell",
        serde_json::json!({"command": "rm -rf build"}),
    ));
    let mut events = r.events("deferred").await;
    let mut page = open(&r, "deferred").await;
    page.speak(&espeak_16k("clean the build folder").await, 1.0)
        .await;
    events.until(|f| f["type"] == "card").await;
    // The consult deferred: its turn ended with the card still waiting.
    page.wait(20, "the consult's answer said", |h| {
        has_text(h, "said", "text", "permission")
    })
    .await;
    assert_eq!(
        kotoba_testkit::web::FakeShell::run_count(&runs),
        0,
        "nothing ran before the yes"
    );
    page.speak(&espeak_16k("yes, go ahead").await, 1.0).await;
    let frames = events.until(|f| f["type"] == "card_settled").await;
    let settled = frames.last().unwrap().to_string();
    assert!(settled.contains("approve"), "{settled}");
    assert!(settled.contains("the voice call"), "said where: {settled}");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    while kotoba_testkit::web::FakeShell::run_count(&runs) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the deferred command never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        kotoba_testkit::web::FakeShell::run_count(&runs),
        1,
        "it ran once"
    );
}
