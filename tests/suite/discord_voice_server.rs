//! Voice against a real (loopback) voice server: `kotoba serve` runs as a child that
//! trusts the test CA (SSL_CERT_FILE, its env only), joins over the loopback Discord,
//! and songbird's driver really connects to `support::voice` (TLS websocket, Identify,
//! Ready, IP discovery, Select Protocol, Session Description); `/leave` closes the
//! voice socket; a person's words sent as RTP are answered with audible RTP. In-process, where the test CA is not trusted, the same server is
//! refused: TLS for voice is not weakened.

use std::time::Duration;

use kotoba::surfaces::discord::voice::call;
use serde_json::json;
use serenity::all::{ChannelId, GuildId};

use super::discord_voice::songbird_client;
use kotoba_testkit::discord::{FakeDiscord, BOT, GENERAL, GUILD, LOUNGE, OWNER};
use kotoba_testkit::model_server::ScriptedModel;
use kotoba_testkit::process::stop;
use kotoba_testkit::voice::rig::{answer_of, serve_trusting_the_test_ca, spoken, voice_server_for};
use kotoba_testkit::voice::{self, Expect, FakeVoice, MODE, SSRC};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_reaches_a_real_voice_server_at_gateway_version_8_acknowledging_its_sequence_and_leave_closes_its_socket(
) {
    let discord = FakeDiscord::start().await;
    let voice = voice_server_for(&discord).await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let child = serve_trusting_the_test_ca(&discord, &model, home.path(), &[]).await;

    let j = discord.slash(
        GENERAL,
        OWNER,
        "join",
        json!([{"type": 7, "name": "channel", "value": LOUNGE.to_string()}]),
        0,
    );
    let said = answer_of(&discord, j, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");

    // The voice gateway: version 8 (the one Discord's document recommends), one
    // connection, Identify with what Discord handed out.
    let conns = voice.conns();
    assert_eq!(conns.len(), 1, "{conns:?}");
    assert_eq!(conns[0].path, "/?v=8");
    assert_eq!(conns[0].refused, None);
    let identify = &voice.identifies()[0]["d"];
    assert_eq!(identify["server_id"], GUILD.to_string());
    assert_eq!(identify["user_id"], BOT.to_string());
    assert_eq!(identify["session_id"], voice::SESSION);
    assert_eq!(identify["token"], voice::TOKEN);
    // IP discovery with the SSRC of Ready, then Select Protocol naming the address the
    // voice server saw the discovery come from and the mode it offered first.
    let discoveries = voice.discoveries();
    assert_eq!(discoveries.len(), 1, "{discoveries:?}");
    let (ssrc, from) = discoveries[0];
    assert_eq!(ssrc, SSRC);
    let selected = voice.select_protocols();
    assert_eq!(selected.len(), 1, "{selected:?}");
    let d = &selected[0]["d"];
    assert_eq!(d["protocol"], "udp");
    assert_eq!(d["data"]["address"], from.ip().to_string());
    assert_eq!(d["data"]["port"], from.port());
    assert_eq!(d["data"]["mode"], MODE);
    assert!(
        !conns[0].closed,
        "the voice socket stays open while she is in"
    );
    // Version 8's heartbeats acknowledge the last numbered message she received.
    voice
        .wait_until(
            "a heartbeat acknowledging the last message",
            Duration::from_secs(10),
            |v| {
                v.seq_acks()
                    .last()
                    .is_some_and(|&a| a == i64::from(v.last_seq()))
            },
        )
        .await;
    assert!(
        voice.last_seq() >= 2,
        "Ready and Session Description were numbered"
    );

    let l = discord.slash(GENERAL, OWNER, "leave", json!([]), 0);
    // /leave waits for her turn and speech (none here), at most 30 s.
    let said = answer_of(&discord, l, 40).await;
    assert_eq!(said, "Left the voice channel.");
    voice
        .wait_until("closed voice socket", Duration::from_secs(10), |v| {
            v.conns().iter().all(|c| c.closed)
        })
        .await;
    assert_eq!(voice.conns().len(), 1, "no reconnect after leaving");
    // And on the Discord gateway: a voice state update with no channel.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !discord
        .voice_updates()
        .last()
        .is_some_and(|u| u["channel_id"].is_null())
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no leave on the gateway: {:?}",
            discord.voice_updates()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let log = stop(child).await;
    // Discord's edit of the original response names the interaction's channel; her
    // client reads it back without a complaint.
    assert!(
        !log.contains("Discord: answering /"),
        "an answer to a slash command was refused: {log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_server_whose_certificate_no_trusted_root_vouches_for_is_refused() {
    // In this process the test CA is not trusted (no SSL_CERT_FILE naming it).
    let discord = FakeDiscord::start().await;
    let voice = FakeVoice::start(Expect {
        server_id: GUILD,
        user_id: BOT,
    })
    .await;
    discord.use_voice_server(voice.endpoint());
    let (manager, shards, task) = songbird_client(&discord).await;

    let joined = tokio::time::timeout(
        call::CONNECT_TIMEOUT + Duration::from_secs(5),
        call::join(&manager, GuildId::new(GUILD), ChannelId::new(LOUNGE)),
    )
    .await
    .expect("join returns within the connect timeout");
    let err = joined
        .expect_err("an untrusted certificate: the join fails")
        .to_string();
    assert!(err.contains("voice server"), "{err}");
    assert!(
        voice.conns().is_empty() && voice.discoveries().is_empty(),
        "no websocket got past TLS: {:?}",
        voice.conns()
    );
    assert!(manager.get(GuildId::new(GUILD)).is_none(), "no call left");
    shards.shutdown_all().await;
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_person_says_over_real_rtp_is_answered_with_audible_rtp() {
    use kotoba_testkit::model_server::Reply;
    use kotoba_testkit::speech_server::SpeechServer;
    use kotoba_testkit::voice::rtp;

    let discord = FakeDiscord::start().await;
    let voice = voice_server_for(&discord).await;
    let model = ScriptedModel::start().await;
    model.push(Reply::text("It is noon in Tokyo."));
    let speech = SpeechServer::start().await;
    // Alone with one person, she answers every utterance (no name needed).
    speech.set_default_transcript("What time is it in Tokyo?");
    let home = tempfile::tempdir().unwrap();
    let extra = speech.openai_env();
    let child = serve_trusting_the_test_ca(&discord, &model, home.path(), &extra).await;
    discord.voice_state(OWNER, Some(LOUNGE));
    let j = discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    let said = answer_of(&discord, j, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");

    // The owner speaks (espeak-ng's voice, Opus, sealed RTP), then 1.5 s of silence.
    let mut audio = spoken("What time is it in Tokyo?");
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    voice.speak(OWNER, 5555, &audio).await;

    // She heard it (recognition got audio), and her answer comes back as audio: RTP
    // from her SSRC that opens with the session key and decodes to sound.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while rtp::rms(&voice.bot_audio()) <= 100.0 {
        if std::time::Instant::now() > deadline {
            let mut child = child;
            let _ = child.start_kill();
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use tokio::io::AsyncReadExt;
                let _ = e.read_to_string(&mut err).await;
            }
            panic!(
                "no audible answer within 30 s: {} datagrams from the bot, {} speech \
                 requests {:?}, {} model requests; calls {:?}; her log:\n{err}",
                voice.datagrams().len(),
                speech.request_count(),
                speech
                    .requests()
                    .iter()
                    .map(|r| (
                        r.path.clone(),
                        r.audio_rate,
                        r.audio_samples,
                        r.fields.clone()
                    ))
                    .collect::<Vec<_>>(),
                model.requests().len(),
                discord
                    .calls()
                    .iter()
                    .map(|c| format!("{} {} {}", c.method, c.path, c.content()))
                    .collect::<Vec<_>>(),
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        speech
            .requests()
            .iter()
            .any(|r| r.path == "/v1/audio/transcriptions"),
        "what she heard went to recognition"
    );
    assert!(
        voice.speaking().iter().any(|s| s["d"]["speaking"] != 0),
        "she said she was speaking: {:?}",
        voice.speaking()
    );
    stop(child).await;
}
