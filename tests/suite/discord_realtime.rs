//! `voice_mode: realtime` in a Discord call with DAVE on: `kotoba serve` joins the
//! loopback voice server, what a person says (DAVE-encrypted RTP) streams to their
//! realtime session at the loopback speech server, and the session's audio comes back
//! end-to-end encrypted. A request that needs a tool consults her loop: the card is
//! drawn in the voice channel's text chat (the consult defers it), a spoken yes runs
//! it once, and the result is announced aloud through the session. Speaking over her
//! cuts the realtime answer. In a busy room only her name makes the session answer,
//! and a guest's consult is a guest turn (no host tools offered).

use std::time::Duration;

use serde_json::json;

use kotoba_testkit::discord::{FakeDiscord, GUEST, LOUNGE, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::stop;
use kotoba_testkit::speech_server::{tone, Converse, SpeechServer};
use kotoba_testkit::voice::rig::serve_trusting_the_test_ca;
use kotoba_testkit::voice::rig::{
    assert_media_end_to_end, dave_voice_server_for, join_with_dave, utterance, wait_or_explain,
    whole_answer,
};
use kotoba_testkit::voice::FakeVoice;

/// Everything one realtime call holds.
pub(super) struct Rig {
    pub(super) discord: FakeDiscord,
    pub(super) voice: FakeVoice,
    pub(super) model: ScriptedModel,
    pub(super) speech: SpeechServer,
    pub(super) home: tempfile::TempDir,
}

/// `kotoba serve` with `voice_mode: realtime` at the loopback speech server, in the
/// lounge with `people` (DAVE members), her group up.
pub(super) async fn realtime_call(
    people: &[u64],
    script: impl FnOnce(&Rig),
) -> (Rig, tokio::process::Child) {
    let discord = FakeDiscord::start().await;
    let voice = dave_voice_server_for(&discord, people).await;
    let model = ScriptedModel::start().await;
    let speech = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!(
            "voice_mode: realtime\nrealtime:\n  base_url: {}\n",
            speech.openai_base()
        ),
    )
    .unwrap();
    let rig = Rig {
        discord,
        voice,
        model,
        speech,
        home,
    };
    script(&rig);
    let child = serve_trusting_the_test_ca(
        &rig.discord,
        &rig.model,
        rig.home.path(),
        &rig.speech.openai_env(),
    )
    .await;
    for &p in people.iter().filter(|p| **p != OWNER) {
        rig.discord.voice_state(p, Some(LOUNGE));
    }
    join_with_dave(&rig.discord, &rig.voice).await;
    (rig, child)
}

/// What was posted in the lounge's text chat, in order.
fn lounge_posts(discord: &FakeDiscord) -> Vec<String> {
    let path = format!("/channels/{LOUNGE}/messages");
    discord
        .calls()
        .iter()
        .filter(|c| c.method == "POST" && c.path.ends_with(&path))
        .map(|c| c.content())
        .collect()
}

/// Whether the chained recognizer or synthesizer was asked.
fn chain_asked(speech: &SpeechServer) -> bool {
    speech
        .requests()
        .iter()
        .any(|q| q.path == "/v1/audio/transcriptions" || q.path == "/v1/audio/speech")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_dave_call_a_spoken_question_is_answered_by_the_realtime_models_audio_end_to_end_encrypted(
) {
    let answer = "Hi Olive, it is lovely to hear you.";
    let (r, child) = realtime_call(&[OWNER], |r| {
        r.speech
            .push_exchange("hello there", Converse::Say(answer.into()));
    })
    .await;
    r.voice.speak(OWNER, 5555, &utterance("Hello there.")).await;
    // Her answer is the realtime model's audio: the tone for its words at 24 kHz.
    let expected = Duration::from_millis(tone(answer, 24_000).len() as u64 * 1000 / 24_000);
    let child = whole_answer(child, &r.voice, expected).await;
    let discord = &r.discord;
    let child = wait_or_explain(child, Duration::from_secs(10), "both captions", || {
        let posts = lounge_posts(discord);
        posts.contains(&"🎙️ **olive:** hello there".to_string())
            && posts.contains(&format!("🔊 {answer}"))
    })
    .await;
    let heard = Duration::from_millis(r.voice.bot_audible().len() as u64 * 20);
    assert!(
        heard.abs_diff(expected) <= Duration::from_millis(300),
        "her answer lasted {heard:?}, the realtime model's audio {expected:?}"
    );
    let sessions = r.speech.converse_sessions();
    assert_eq!(sessions.len(), 1, "one session for the one person");
    assert!(
        sessions[0].samples > 24_000,
        "the person's audio streamed to it: {} samples",
        sessions[0].samples
    );
    assert_eq!(
        sessions[0].session["audio"]["input"]["turn_detection"]["create_response"], true,
        "alone with her, the session answers by itself"
    );
    assert_eq!(
        r.model.request_count(),
        0,
        "small talk never reached her loop"
    );
    assert!(!chain_asked(&r.speech), "the chain was never asked");
    assert_media_end_to_end(&r.voice);
    stop(child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_dave_call_a_consult_defers_its_card_to_the_text_chat_a_spoken_yes_runs_it_once_and_the_result_is_said(
) {
    let (r, child) = realtime_call(&[OWNER], |r| {
        r.speech.push_exchange(
            "make a notes file",
            Converse::Call {
                name: "consult".into(),
                arguments: r#"{"request":"make a notes file"}"#.into(),
            },
        );
        r.speech
            .push_exchange("yes, go ahead", Converse::Say("Okay.".into()));
        let marker = r.home.path().join("notes-from-voice.txt");
        r.model.push(Reply::call(
            "shell",
            json!({"command": format!("touch {}", marker.display())}),
        ));
        r.model
            .set_fallback(Reply::text("Your notes file is made."));
    })
    .await;
    let marker = r.home.path().join("notes-from-voice.txt");
    r.voice
        .speak(OWNER, 5555, &utterance("Make a notes file."))
        .await;
    let lounge = format!("/channels/{LOUNGE}/messages");
    let discord = &r.discord;
    let card_up = || {
        discord.calls().iter().any(|c| {
            c.method == "POST"
                && c.path.ends_with(&lounge)
                && c.embed_text().contains("notes-from-voice.txt")
                && c.buttons()
                    .iter()
                    .any(|(_, label, _)| label == "Approve once")
        })
    };
    let speech = &r.speech;
    let child = wait_or_explain(
        child,
        Duration::from_secs(30),
        "the card in the text chat and the consult answered",
        || {
            card_up()
                && speech
                    .converse_sessions()
                    .iter()
                    .any(|s| !s.outputs.is_empty())
        },
    )
    .await;
    assert!(!marker.exists(), "nothing ran before the yes");
    // A consult is an agent call: its card waits as a deferred card (180 s).
    let card = r
        .discord
        .calls()
        .into_iter()
        .find(|c| {
            c.method == "POST"
                && c.buttons()
                    .iter()
                    .any(|(_, label, _)| label == "Approve once")
        })
        .expect("the card");
    let expires = super::discord_voice_rules::expires_at(&card).expect("its expiry");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let window = expires.saturating_sub(now);
    assert!(
        (170..=181).contains(&window),
        "a consult's card is deferred, waiting 180 s (not a spoken turn's 60 s): {window} s"
    );
    let output = r.speech.converse_sessions()[0].outputs[0].1.clone();
    assert!(
        output.contains("permission") || output.contains("approv"),
        "the consult's answer says the card waits: {output}"
    );

    r.voice
        .speak(OWNER, 5555, &utterance("Yes, go ahead."))
        .await;
    let child = wait_or_explain(child, Duration::from_secs(30), "the command run", || {
        marker.exists()
    })
    .await;
    let child = wait_or_explain(child, Duration::from_secs(30), "the result said", || {
        speech.converse_sessions().iter().any(|s| {
            s.said_as_is
                .iter()
                .any(|w| w.contains("notes file is made"))
        })
    })
    .await;
    let child = wait_or_explain(child, Duration::from_secs(15), "its caption", || {
        lounge_posts(discord).contains(&"🔊 Your notes file is made.".to_string())
    })
    .await;
    // The result is said, not also written as a text answer in the chat.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !lounge_posts(&r.discord).contains(&"Your notes file is made.".to_string()),
        "announced once, aloud: {:?}",
        lounge_posts(&r.discord)
    );
    let log = stop(child).await;
    let store = kotoba::store::Store::open(&r.home.path().join("kotoba.db")).unwrap();
    let shell: Vec<_> = store
        .audit_rows(None, 20)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.tool == "shell")
        .collect();
    let ran: Vec<_> = shell
        .iter()
        .filter(|a| a.approver.starts_with("executed"))
        .collect();
    assert_eq!(ran.len(), 1, "it ran once: {shell:?}; her log:\n{log}");
    assert!(
        shell
            .iter()
            .any(|a| a.approver == "user" && a.approved && a.detail.contains("olive")),
        "approved by the person's spoken yes: {shell:?}"
    );
    assert_media_end_to_end(&r.voice);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_dave_call_speaking_over_a_realtime_answer_cuts_her_audio_already_sent_ahead() {
    let long = "Tea came to Japan from China long ago, and the way of tea grew from a \
                simple drink into an art of quiet rooms, seasons and guests, with more \
                to say about every bowl than there is time to say it in.";
    let (r, child) = realtime_call(&[OWNER], |r| {
        r.speech
            .push_exchange("tell me about tea", Converse::Say(long.into()));
        r.speech
            .push_exchange("okay, stop", Converse::Say("Sure.".into()));
        // The provider sends audio far ahead of real time.
        r.speech.set_converse_pace(Duration::from_millis(5));
    })
    .await;
    r.voice
        .speak(OWNER, 5555, &utterance("Tell me about tea."))
        .await;
    let voice = &r.voice;
    let child = wait_or_explain(child, Duration::from_secs(30), "her voice", || {
        voice.bot_audible().len() >= 25
    })
    .await;
    let before = r.voice.person_packets().len();
    r.voice.speak(OWNER, 5555, &utterance("Okay, stop.")).await;
    let first_voiced = r.voice.person_packets()[before..]
        .iter()
        .find(|p| p.rms > kotoba_testkit::voice::AUDIBLE)
        .map(|p| p.at)
        .expect("the person's voiced packet");
    let speech = &r.speech;
    let child = wait_or_explain(
        child,
        Duration::from_secs(20),
        "the cut answer's end",
        || {
            speech
                .converse_sessions()
                .first()
                .is_some_and(|s| s.responses.len() >= 2)
        },
    )
    .await;
    // Her answer had all come before the person spoke: only the room could cut it.
    assert_eq!(
        r.speech.converse_sessions()[0].responses[0].0,
        "completed",
        "the whole answer was sent ahead"
    );
    // Her long answer's frames after the person began: the run of them that goes on
    // without a break (the next answer, "Sure.", comes after one).
    let mut last_hers: Option<std::time::Instant> = None;
    for t in r
        .voice
        .bot_audible()
        .into_iter()
        .filter(|t| *t >= first_voiced)
    {
        let since = last_hers.unwrap_or(first_voiced);
        if t.duration_since(since) > Duration::from_millis(250) {
            break;
        }
        last_hers = Some(t);
    }
    let went_on = last_hers.map_or(Duration::ZERO, |t| t - first_voiced);
    // Two busy cores: a generous bound (the benchmark holds the target).
    assert!(
        went_on <= Duration::from_millis(1_000),
        "her voice went on {went_on:?} after the person's first voiced packet"
    );
    let whole = tone(long, 24_000).len() * 50 / 24_000;
    assert!(
        r.voice.bot_audible().len() < whole / 2,
        "her long answer ({whole} frames) was cut"
    );
    assert!(
        !lounge_posts(&r.discord).contains(&format!("🔊 {long}")),
        "a cut answer is not captioned as said"
    );
    assert_media_end_to_end(&r.voice);
    stop(child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_busy_dave_call_only_her_name_makes_the_session_answer_and_a_guests_consult_is_a_guest_turn(
) {
    let (r, child) = realtime_call(&[OWNER, GUEST], |r| {
        r.speech
            .push_exchange("what time is it", Converse::Say("It is noon.".into()));
        r.speech.push_exchange(
            "kotoba, what is on my list",
            Converse::Call {
                name: "consult".into(),
                arguments: r#"{"request":"what is on my list?"}"#.into(),
            },
        );
        r.model
            .set_fallback(Reply::text("Your list has bread and tea."));
    })
    .await;
    // Gus talks to the room, not to her: his session hears him and says nothing.
    r.voice
        .speak(GUEST, 6666, &utterance("What time is it?"))
        .await;
    let speech = &r.speech;
    let child = wait_or_explain(child, Duration::from_secs(20), "his words heard", || {
        speech.converse_sessions().iter().any(|s| s.utterances >= 1)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        r.voice.bot_audible().is_empty(),
        "words without her name were not answered"
    );
    let sessions = r.speech.converse_sessions();
    assert_eq!(
        sessions[0].session["audio"]["input"]["turn_detection"]["create_response"], false,
        "in a busy room the session only listens"
    );
    assert!(
        sessions[0].responses.is_empty(),
        "{:?}",
        sessions[0].responses
    );

    // Then he calls her by name: the session answers, through her loop, as a guest.
    r.voice
        .speak(GUEST, 6666, &utterance("Kotoba, what is on my list?"))
        .await;
    let child = wait_or_explain(
        child,
        Duration::from_secs(30),
        "the consult's answer said",
        || {
            speech.converse_sessions().iter().any(|s| {
                s.responses
                    .iter()
                    .any(|(status, w)| status == "completed" && w.contains("bread and tea"))
            })
        },
    )
    .await;
    let asked = r.model.requests();
    assert_eq!(asked.len(), 1, "one turn of her loop");
    let body = asked[0].to_string();
    assert!(body.contains("what is on my list?"), "{body}");
    let offered = asked[0]["tools"].to_string();
    assert!(
        !offered.contains("\"shell\""),
        "a guest's consult is offered no host tools: {offered}"
    );
    let posts = lounge_posts(&r.discord);
    assert!(
        posts.contains(&"🎙️ **gus:** what is on my list".to_string()),
        "his words captioned as his, her name taken out: {posts:?}"
    );
    assert!(
        !posts.iter().any(|p| p.contains("what time is it")),
        "words not for her are not captioned: {posts:?}"
    );
    assert_media_end_to_end(&r.voice);
    stop(child).await;
}
