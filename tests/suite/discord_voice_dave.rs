//! Voice with DAVE (end-to-end encryption, protocol v1) on, against the loopback voice
//! server as MLS external sender and delivery service: `kotoba serve` joins, its
//! songbird commits the people into its group, and what the person says (DAVE-
//! encrypted by the person's davey session) is heard and answered aloud with frames
//! the person's session opens; a person speaking over her stops her, and cuts her
//! turn: its open row closes interrupted and its open card dismissed. With two people
//! only her name wakes her, and each one's words are captioned as theirs (the SSRC of
//! each stream is mapped to its person from the Speaking events).

use std::time::Duration;

use serde_json::json;

use kotoba_testkit::discord::{FakeDiscord, GUEST, LOUNGE, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::stop;
use kotoba_testkit::speech_server::SpeechServer;
use kotoba_testkit::voice::rig::{
    assert_media_end_to_end, dave_voice_server_for, join_with_dave, utterance, wait_or_explain,
    whole_answer,
};
use kotoba_testkit::voice::rig::{serve_trusting_the_test_ca, spoken};
use kotoba_testkit::voice::{FakeVoice, AUDIBLE};

/// A voice server with DAVE on and the owner as its one DAVE person.
async fn dave_voice_server(discord: &FakeDiscord) -> FakeVoice {
    dave_voice_server_for(discord, &[OWNER]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_dave_on_what_a_person_says_is_heard_and_answered_aloud_end_to_end_encrypted() {
    let discord = FakeDiscord::start().await;
    let voice = dave_voice_server(&discord).await;
    let model = ScriptedModel::start().await;
    let answer = "It is noon in Tokyo.";
    model.push(Reply::text(answer));
    let speech = SpeechServer::start().await;
    speech.set_default_transcript("What time is it in Tokyo?");
    let home = tempfile::tempdir().unwrap();
    let child =
        serve_trusting_the_test_ca(&discord, &model, home.path(), &speech.openai_env()).await;
    join_with_dave(&discord, &voice).await;

    let mut audio = spoken("What time is it in Tokyo?");
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    voice.speak(OWNER, 5555, &audio).await;
    let voiced = voice.person_packets();
    assert!(
        voiced.iter().filter(|p| p.rms > AUDIBLE).all(|p| p.e2ee),
        "every voiced packet the person sent was DAVE-encrypted"
    );

    // Her answer: the tone for its text (100 ms + 50 ms a character), in audible
    // frames that only the person's DAVE session could open.
    let expected = Duration::from_millis(100 + 50 * answer.chars().count() as u64);
    let child = whole_answer(child, &voice, expected).await;
    let transcriptions: Vec<_> = speech
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/audio/transcriptions")
        .collect();
    assert!(
        transcriptions.iter().any(|r| r.audio_samples > 16_000),
        "the recognizer was asked with the person's audio: {:?}",
        transcriptions
            .iter()
            .map(|r| r.audio_samples)
            .collect::<Vec<_>>()
    );
    assert!(
        model
            .requests()
            .iter()
            .any(|r| r.to_string().contains("What time is it in Tokyo?")),
        "the model got what she heard as a turn"
    );
    let frames = voice.bot_frames();
    let e2ee = frames.iter().filter(|f| f.e2ee).count();
    let plain_voiced = frames.iter().filter(|f| !f.e2ee && !f.is_silence()).count();
    assert!(
        e2ee > 0 && plain_voiced == 0,
        "her audio went end-to-end encrypted: {e2ee} DAVE frames, {plain_voiced} plain"
    );
    assert_eq!(voice.undecryptable(), 0, "the person opened every frame");
    let heard = Duration::from_millis(voice.bot_audible().len() as u64 * 20);
    let off = heard.abs_diff(expected);
    assert!(
        off <= Duration::from_millis(200),
        "her answer lasted {heard:?}, the synthesised answer {expected:?}"
    );
    assert!(
        voice.speaking().iter().any(|s| s["d"]["speaking"] != 0),
        "she said she was speaking: {:?}",
        voice.speaking()
    );
    stop(child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_dave_on_a_person_speaking_over_her_stops_her_within_the_bound() {
    let discord = FakeDiscord::start().await;
    let voice = dave_voice_server(&discord).await;
    let model = ScriptedModel::start().await;
    // A long answer: ~12 s of her voice.
    let long = "Tokyo is a big city with many parks, old temples, tall towers, busy \
                markets and quiet gardens, and there is much more to say about every \
                one of its many neighbourhoods, so let me go on for quite a while.";
    model.push(Reply::text(long));
    model.set_fallback(Reply::text("Okay."));
    let speech = SpeechServer::start().await;
    speech.push_transcript("Tell me about Tokyo.");
    speech.set_default_transcript("Stop, please.");
    let home = tempfile::tempdir().unwrap();
    let child =
        serve_trusting_the_test_ca(&discord, &model, home.path(), &speech.openai_env()).await;
    join_with_dave(&discord, &voice).await;

    let mut ask = spoken("Tell me about Tokyo.");
    ask.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    voice.speak(OWNER, 5555, &ask).await;
    let child = wait_or_explain(child, Duration::from_secs(30), "voice from her", || {
        voice.bot_audible().len() >= 25
    })
    .await;

    // She has talked for half a second; the person talks over her.
    let before = voice.person_packets().len();
    let mut over = spoken("Stop, please.");
    over.extend(std::iter::repeat_n(0i16, 48_000 * 2));
    voice.speak(OWNER, 5555, &over).await;
    let first_voiced = voice.person_packets()[before..]
        .iter()
        .find(|p| p.rms > AUDIBLE)
        .map(|p| p.at)
        .expect("the person's voiced packet");
    let last_hers = voice
        .bot_audible()
        .into_iter()
        .filter(|t| *t >= first_voiced)
        .max();
    let stopped_after = last_hers.map_or(Duration::ZERO, |t| t - first_voiced);
    // Two busy cores: a generous bound (the benchmark holds the target).
    assert!(
        stopped_after <= Duration::from_millis(1_500),
        "her voice went on {stopped_after:?} after the person's first voiced packet"
    );
    let total = voice.bot_audible().len() as u64 * 20;
    assert!(
        total < 100 + 50 * long.chars().count() as u64 / 2,
        "she did not finish the long answer ({total} ms of voice)"
    );
    assert_media_end_to_end(&voice);
    stop(child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_dave_on_talking_over_her_cuts_her_turn_its_rows_close_interrupted_and_its_card_dismissed(
) {
    let discord = FakeDiscord::start().await;
    let voice = dave_voice_server(&discord).await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("ran-it");
    // Her words before the tool are long enough to still be playing while the card
    // waits for an answer.
    let words = "Sure, I will clean out the build folder for you now; it takes one \
                 command and only a moment, so please bear with me while I ask you \
                 whether that is really all right with you first.";
    model.push(Reply::text_then_call(
        words,
        "shell",
        json!({"command": format!("touch {}", marker.display())}),
    ));
    model.set_fallback(Reply::text("Okay, I left it alone."));
    let speech = SpeechServer::start().await;
    speech.push_transcript("Clean the build folder.");
    speech.set_default_transcript("No, wait.");
    let child =
        serve_trusting_the_test_ca(&discord, &model, home.path(), &speech.openai_env()).await;
    join_with_dave(&discord, &voice).await;

    voice
        .speak(OWNER, 5555, &utterance("Clean the build folder."))
        .await;
    let lounge = format!("/channels/{LOUNGE}/messages");
    let card_up = |discord: &FakeDiscord| {
        discord.calls().iter().any(|c| {
            c.method == "POST"
                && c.path.ends_with(&lounge)
                && c.buttons()
                    .iter()
                    .any(|(_, label, _)| label == "Approve once")
        })
    };
    let child = wait_or_explain(
        child,
        Duration::from_secs(30),
        "her voice and a card",
        || voice.bot_audible().len() >= 25 && card_up(&discord),
    )
    .await;

    // The person talks over her while she speaks and the card waits.
    let mut over = spoken("No, wait.");
    over.extend(std::iter::repeat_n(0i16, 48_000 * 2));
    voice.speak(OWNER, 5555, &over).await;
    let edited = |discord: &FakeDiscord, text: &str| {
        discord.calls().iter().any(|c| {
            c.method == "PATCH"
                && c.path.contains(&lounge)
                && (c.content().contains(text) || c.embed_text().contains(text))
        })
    };
    let child = wait_or_explain(child, Duration::from_secs(20), "the card dismissed", || {
        edited(&discord, "This card was dismissed. Nothing ran.")
    })
    .await;
    let child = wait_or_explain(
        child,
        Duration::from_secs(20),
        "the row interrupted",
        || edited(&discord, "interrupted"),
    )
    .await;
    let log = stop(child).await;
    assert!(!marker.exists(), "the command never ran; her log:\n{log}");
    let store = kotoba::store::Store::open(&home.path().join("kotoba.db")).unwrap();
    let shell: Vec<String> = store
        .audit_rows(None, 20)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.tool == "shell")
        .map(|a| a.approver)
        .collect();
    assert_eq!(shell, ["dismissed"], "the card's audit row");
    assert_media_end_to_end(&voice);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_people_only_her_name_wakes_her_and_each_ones_words_stay_theirs() {
    let discord = FakeDiscord::start().await;
    let voice = dave_voice_server_for(&discord, &[OWNER, GUEST]).await;
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("Sure."));
    let speech = SpeechServer::start().await;
    speech.push_transcript("What time is it?");
    speech.push_transcript("Kotoba, what is the weather like?");
    speech.push_transcript("Kotoba, what time is it in Tokyo?");
    let home = tempfile::tempdir().unwrap();
    let child =
        serve_trusting_the_test_ca(&discord, &model, home.path(), &speech.openai_env()).await;
    discord.voice_state(GUEST, Some(LOUNGE));
    join_with_dave(&discord, &voice).await;

    // Gus asks without her name: heard, but not for her.
    voice
        .speak(GUEST, 6666, &utterance("What time is it?"))
        .await;
    let child = wait_or_explain(child, Duration::from_secs(20), "recognition", || {
        speech.request_count() >= 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        model.request_count(),
        0,
        "words without her name did not wake her"
    );

    // Then each calls her by name, on their own streams.
    voice
        .speak(GUEST, 6666, &utterance("Kotoba, what is the weather like?"))
        .await;
    voice
        .speak(OWNER, 5555, &utterance("Kotoba, what time is it in Tokyo?"))
        .await;
    let path = format!("/channels/{LOUNGE}/messages");
    let captions = |discord: &FakeDiscord| -> Vec<String> {
        discord
            .calls()
            .iter()
            .filter(|c| c.method == "POST" && c.path.ends_with(&path))
            .map(|c| c.content())
            .filter(|t| t.starts_with("🎙️"))
            .collect()
    };
    let child = wait_or_explain(child, Duration::from_secs(20), "two captions", || {
        captions(&discord).len() >= 2
    })
    .await;
    let seen = captions(&discord);
    assert!(
        seen.contains(&"🎙️ **gus:** what is the weather like?".to_string()),
        "gus's words are his: {seen:?}"
    );
    assert!(
        seen.contains(&"🎙️ **olive:** what time is it in Tokyo?".to_string()),
        "olive's words are hers: {seen:?}"
    );
    assert!(
        voice
            .person_packets()
            .iter()
            .filter(|p| p.rms > AUDIBLE)
            .all(|p| p.e2ee),
        "both people spoke end-to-end encrypted"
    );
    let child = wait_or_explain(child, Duration::from_secs(20), "her answer", || {
        voice.bot_audible().len() >= 5
    })
    .await;
    assert_media_end_to_end(&voice);
    stop(child).await;
}
