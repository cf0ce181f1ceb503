//! The voice benchmark over the real protocol: `kotoba serve` as a child on the loopback
//! Discord joins the loopback voice server with DAVE on (the test CA trusted by the
//! child only), and a person speaks the same espeak-ng phrase as paced, sealed,
//! end-to-end encrypted Opus RTP. Measured at the voice server: the person's last
//! voiced packet → her first audible packet (the answer), and, as each next
//! utterance talks over her answer, the person's first voiced packet → her last
//! audible packet (barge-in).

use std::time::{Duration, Instant};

use serde_json::json;

use kotoba_testkit::discord::{FakeDiscord, GENERAL, LOUNGE, OWNER};
use kotoba_testkit::process;
use kotoba_testkit::voice::{self, rig, AUDIBLE};

/// The figures of one run.
pub struct Figures {
    /// Last voiced packet → her first audible packet, per utterance.
    pub answer: Vec<Duration>,
    /// First voiced packet → her last audible packet, per utterance that talked over her.
    pub barge: Vec<Duration>,
}

/// Run `n` utterances of `phrase` (16 kHz mono) against a child with the model and
/// speech servers at `model_base` and `speech_base`; `streaming`: recognition streams
/// (`stt.streaming: on`) instead of uploading.
pub async fn run(
    n: usize,
    phrase: &[i16],
    model_base: &str,
    speech_base: &str,
    streaming: bool,
) -> Figures {
    let discord = FakeDiscord::start().await;
    let voice = rig::dave_voice_server_for(&discord, &[OWNER]).await;
    let home = tempfile::tempdir().unwrap();
    let streams = if streaming { "on" } else { "off" };
    std::fs::write(
        home.path().join("settings.yaml"),
        format!("stt.streaming: {streams}\n"),
    )
    .unwrap();
    let mut env = discord.env();
    env.extend(
        [
            ("KOTOBA_LLM_BASE_URL", model_base.to_string()),
            ("OPENAI_API_KEY", "bench-key".into()),
            ("KOTOBA_REASONING_EFFORT", "off".into()),
            ("KOTOBA_MODEL", "scripted".into()),
            ("KOTOBA_STT_PROVIDER", "openai".into()),
            ("KOTOBA_STT_BASE_URL", speech_base.into()),
            ("KOTOBA_TTS_PROVIDER", "openai".into()),
            ("KOTOBA_TTS_BASE_URL", speech_base.into()),
            ("SSL_CERT_FILE", voice::ca_file()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    let mut child = serve_joined(home.path(), env, &discord, &voice).await;

    // The phrase at 48 kHz stereo (each 16 kHz sample three times, both channels),
    // then 200 ms of silence; the room's own silence commit does the rest.
    let mut audio: Vec<i16> = phrase.iter().flat_map(|&s| [s; 6]).collect();
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 / 5));
    let mut figures = Figures {
        answer: Vec::new(),
        barge: Vec::new(),
    };
    for i in 0..n {
        let before = voice.person_packets().len();
        voice.speak(OWNER, 5555, &audio).await;
        let sent = voice.person_packets();
        let voiced: Vec<Instant> = sent[before..]
            .iter()
            .filter(|p| p.rms > AUDIBLE)
            .map(|p| p.at)
            .collect();
        let (Some(&first), Some(&last)) = (voiced.first(), voiced.last()) else {
            continue;
        };
        if i > 0 {
            // She was talking when this utterance began: when did she go quiet?
            if let Some(stop) = voice
                .bot_audible()
                .into_iter()
                .filter(|t| *t >= first)
                .max()
            {
                figures.barge.push(stop - first);
            } else {
                figures.barge.push(Duration::ZERO);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        let answered = loop {
            if let Some(t) = voice.bot_audible().into_iter().find(|t| *t > last) {
                break Some(t);
            }
            if Instant::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let Some(answered) = answered else {
            eprintln!("utterance {i}: no answer within 15 s");
            continue;
        };
        figures.answer.push(answered - last);
        // Let her talk a little, so the next utterance talks over her.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    figures
}

/// `kotoba serve` as a child in `home` with `env`, on the loopback `discord`: once its
/// commands are registered, the owner in the lounge asks it to join, and the call's
/// DAVE group is ready.
pub async fn serve_joined(
    home: &std::path::Path,
    env: Vec<(String, String)>,
    discord: &FakeDiscord,
    voice: &voice::FakeVoice,
) -> tokio::process::Child {
    let web_addr = format!("127.0.0.1:{}", process::free_port());
    let mut cmd = process::command(&["serve"], home, &web_addr);
    cmd.envs(env);
    let child = cmd.spawn().unwrap();
    discord.wait_connected().await;
    discord
        .wait_for_from(0, 30, |c| c.method == "PUT" && c.path.contains("/commands"))
        .await;
    discord.voice_state(OWNER, Some(LOUNGE));
    let j = discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    let said = rig::answer_of(discord, j, 30).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");
    voice
        .wait_until("DAVE group", Duration::from_secs(15), |v| v.dave_ready())
        .await;
    child
}
