//! The Discord voice rig: `kotoba serve` as a child on the loopback Discord, trusting
//! the test CA, joined to a loopback voice server (transport only or with DAVE); what a
//! person says (espeak-ng, 48 kHz stereo) and the waits its tests share.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{ca_file, Expect, FakeVoice};
use crate::discord::{FakeDiscord, BOT, GENERAL, GUILD, LOUNGE, OWNER};
use crate::model_server::ScriptedModel;
use crate::process::{free_port, serve, stop};

/// The interaction reply edit of slash command `j` (waited ≤ `secs`).
pub async fn answer_of(discord: &FakeDiscord, j: u64, secs: u64) -> String {
    let token = format!("/tok{j}/messages/@original");
    discord
        .wait_for_from(0, secs, |c| c.method == "PATCH" && c.path.ends_with(&token))
        .await
        .content()
}

/// `kotoba serve` as a child on the loopback Discord (ready: commands registered),
/// with the scripted model, `extra` env, and the test CA trusted (SSL_CERT_FILE names
/// it: the system roots are replaced by it; the bundled webpki roots still apply).
pub async fn serve_trusting_the_test_ca(
    discord: &FakeDiscord,
    model: &ScriptedModel,
    home: &std::path::Path,
    extra: &[(&str, String)],
) -> tokio::process::Child {
    let addr = format!("127.0.0.1:{}", free_port());
    serve_trusting_the_test_ca_at(discord, model, home, extra, &addr).await
}

/// [`serve_trusting_the_test_ca`] with its page at `addr`.
pub async fn serve_trusting_the_test_ca_at(
    discord: &FakeDiscord,
    model: &ScriptedModel,
    home: &std::path::Path,
    extra: &[(&str, String)],
    addr: &str,
) -> tokio::process::Child {
    let mut env = discord.env();
    env.extend(
        model
            .env("chat")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    env.push(("SSL_CERT_FILE".into(), ca_file()));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let child = serve(home, addr, &env);
    discord.wait_connected().await;
    discord
        .wait_for_from(0, 20, |c| c.method == "PUT" && c.path.contains("/commands"))
        .await;
    child
}

/// A voice server expecting the bot in the test guild, and the loopback Discord
/// sending joins to it.
pub async fn voice_server_for(discord: &FakeDiscord) -> FakeVoice {
    let voice = FakeVoice::start(Expect {
        server_id: GUILD,
        user_id: BOT,
    })
    .await;
    discord.use_voice_server(voice.endpoint());
    voice
}

/// `text` spoken by espeak-ng (22.05 kHz mono), as 48 kHz stereo interleaved samples.
pub fn spoken(text: &str) -> Vec<i16> {
    let out = std::process::Command::new("espeak-ng")
        .args(["--stdout", "--", text])
        .output()
        .expect("espeak-ng runs (Debian package espeak-ng)");
    let wav = out.stdout;
    let at = wav
        .windows(4)
        .position(|w| w == b"data")
        .expect("a WAV data chunk")
        + 8;
    let mono: Vec<f64> = wav[at..]
        .chunks_exact(2)
        .map(|b| f64::from(i16::from_le_bytes([b[0], b[1]])))
        .collect();
    let n = mono.len() * 48_000 / 22_050;
    let mut stereo = Vec::with_capacity(n * 2);
    for i in 0..n {
        let x = i as f64 * 22_050.0 / 48_000.0;
        let j = x as usize;
        let f = x - j as f64;
        let a = mono[j.min(mono.len() - 1)];
        let b = mono[(j + 1).min(mono.len() - 1)];
        let s = (a + (b - a) * f) as i16;
        stereo.extend([s, s]);
    }
    stereo
}

/// A voice server with DAVE on and `people` as its DAVE members.
pub async fn dave_voice_server_for(discord: &FakeDiscord, people: &[u64]) -> FakeVoice {
    let voice = FakeVoice::start_with_dave(
        Expect {
            server_id: GUILD,
            user_id: BOT,
        },
        LOUNGE,
        people,
    )
    .await;
    discord.use_voice_server(voice.endpoint());
    voice
}

/// The owner is in the lounge; `/join` brings her there, and DAVE comes up.
pub async fn join_with_dave(discord: &FakeDiscord, voice: &FakeVoice) {
    discord.voice_state(OWNER, Some(LOUNGE));
    let j = discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    let said = answer_of(discord, j, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");
    voice
        .wait_until("DAVE group", Duration::from_secs(15), |v| v.dave_ready())
        .await;
    let sent_binary = voice.binary_ops();
    assert_eq!(
        sent_binary,
        vec![26, 28],
        "the bot sent its key package, then its commit and welcome"
    );
    assert_eq!(
        voice.conns()[0].refused,
        None,
        "the delivery service took the commit"
    );
}

/// Wait (≤ `within`) until `pred` holds; panics with `what` and her log.
pub async fn wait_or_explain(
    child: tokio::process::Child,
    within: Duration,
    what: &str,
    pred: impl Fn() -> bool,
) -> tokio::process::Child {
    let deadline = Instant::now() + within;
    while !pred() {
        if Instant::now() > deadline {
            let log = stop(child).await;
            panic!("no {what} within {within:?}; her log:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child
}

/// Wait (≤ 30 s) until she has said an answer lasting about `expected` (within 100
/// ms) and has been quiet for half a second.
pub async fn whole_answer(
    child: tokio::process::Child,
    voice: &FakeVoice,
    expected: Duration,
) -> tokio::process::Child {
    wait_or_explain(child, Duration::from_secs(30), "her whole answer", || {
        let heard = voice.bot_audible();
        heard.len() as u64 * 20 >= expected.as_millis() as u64 - 100
            && heard
                .last()
                .is_some_and(|t| t.elapsed() > Duration::from_millis(500))
    })
    .await
}

/// Her media went end-to-end encrypted and whole: some DAVE frames, no voice in the
/// clear, and no frame the people could not open (a DAVE failure mid-answer would
/// otherwise pass for a stop).
pub fn assert_media_end_to_end(voice: &FakeVoice) {
    let frames = voice.bot_frames();
    assert!(
        frames.iter().any(|f| f.e2ee),
        "her audio went end-to-end encrypted"
    );
    let plain = frames.iter().filter(|f| f.plain_voice()).count();
    assert_eq!(plain, 0, "none of her voice went in the clear");
    assert_eq!(
        voice.undecryptable(),
        0,
        "the people opened every frame of hers"
    );
}

/// `text` spoken, then 1.5 s of silence (an utterance that commits).
pub fn utterance(text: &str) -> Vec<i16> {
    let mut audio = spoken(text);
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    audio
}
