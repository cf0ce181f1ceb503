//! Voice faults over the real protocol (`kotoba serve` as a child, the loopback voice
//! server): a voice socket closed with 4015 is resumed and the room keeps hearing; one
//! closed with 4014 ends the room with one sentence in the voice channel's text chat; a
//! voice server that never answers makes the join fail at its timeout with one
//! sentence and no half-open call. The 4015 and 4014 faults run again with DAVE on
//! (the resumed call keeps its MLS group and is heard end-to-end encrypted). `/health`
//! lists the room as connected while it lasts, and no room once it ended.

use std::time::{Duration, Instant};

use kotoba::surfaces::discord::voice::call::CONNECT_TIMEOUT;
use kotoba::surfaces::discord::voice::rooms::{DAVE_REQUIRED, DISCONNECTED};
use serde_json::json;

use kotoba_testkit::discord::{FakeDiscord, BOT, GENERAL, GUILD, LOUNGE, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::stop;
use kotoba_testkit::speech_server::SpeechServer;
use kotoba_testkit::voice::rig::{answer_of, serve_trusting_the_test_ca_at, spoken};
use kotoba_testkit::voice::{self, Expect, FakeVoice, AUDIBLE};

/// The loopback Discord, a voice server (transport only, or with DAVE on and the owner
/// as its DAVE person), the scripted model, the speech server, and `kotoba serve` with
/// the owner in the lounge.
struct Rig {
    discord: FakeDiscord,
    voice: FakeVoice,
    model: ScriptedModel,
    speech: SpeechServer,
    child: tokio::process::Child,
    /// Her page's address (`/health`).
    web: String,
    _home: tempfile::TempDir,
}

async fn rig() -> Rig {
    rig_with(false).await
}

async fn rig_with(dave: bool) -> Rig {
    let discord = FakeDiscord::start().await;
    let expect = Expect {
        server_id: GUILD,
        user_id: BOT,
    };
    let voice = if dave {
        FakeVoice::start_with_dave(expect, LOUNGE, &[OWNER]).await
    } else {
        FakeVoice::start(expect).await
    };
    discord.use_voice_server(voice.endpoint());
    let model = ScriptedModel::start().await;
    let speech = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let extra = speech.openai_env();
    let web = format!("127.0.0.1:{}", kotoba_testkit::process::free_port());
    let child = serve_trusting_the_test_ca_at(&discord, &model, home.path(), &extra, &web).await;
    discord.voice_state(OWNER, Some(LOUNGE));
    Rig {
        discord,
        voice,
        model,
        speech,
        child,
        web,
        _home: home,
    }
}

/// The voice rooms `/health` lists once it lists `want` of them (waited ≤ 10 s), each
/// as (guild, channel, connected).
async fn health_rooms(r: &Rig, want: usize) -> Vec<(String, String, bool)> {
    let url = format!("http://{}/health", r.web);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v: serde_json::Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        let rooms: Vec<_> = v["voice"]
            .as_array()
            .unwrap_or(&Vec::new())
            .iter()
            .map(|room| {
                (
                    room["guild"].as_str().unwrap_or("").to_string(),
                    room["channel"].as_str().unwrap_or("").to_string(),
                    room["connected"].as_bool().unwrap_or(false),
                )
            })
            .collect();
        let settled = rooms.len() == want && rooms.iter().all(|r| r.2);
        if settled || Instant::now() > deadline {
            return rooms;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `/join` from the owner; her answer (waited ≤ `secs`).
async fn join(r: &Rig, secs: u64) -> String {
    let j = r.discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    answer_of(&r.discord, j, secs).await
}

/// `/join` with DAVE on: joined, and the owner is in her MLS group.
async fn join_with_dave(r: &Rig) {
    let said = join(r, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");
    r.voice
        .wait_until("DAVE group", Duration::from_secs(15), |v| v.dave_ready())
        .await;
}

/// Posts of `text` in the lounge's text chat.
fn posts_of(discord: &FakeDiscord, text: &str) -> usize {
    let path = format!("/channels/{LOUNGE}/messages");
    discord
        .calls()
        .iter()
        .filter(|c| c.method == "POST" && c.path.ends_with(&path) && c.content() == text)
        .count()
}

/// Wait (≤ 10 s) until the bot told the gateway it is in no voice channel.
async fn wait_for_gateway_leave(discord: &FakeDiscord) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !discord
        .voice_updates()
        .last()
        .is_some_and(|u| u["channel_id"].is_null())
    {
        assert!(
            Instant::now() < deadline,
            "no leave on the gateway: {:?}",
            discord.voice_updates()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_socket_closed_with_4015_is_resumed_and_the_room_keeps_hearing() {
    let r = rig().await;
    let said = join(&r, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");
    resumed_and_still_hearing(r, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_dave_on_a_voice_socket_closed_with_4015_is_resumed_and_the_room_keeps_hearing() {
    let r = rig_with(true).await;
    join_with_dave(&r).await;
    resumed_and_still_hearing(r, true).await;
}

/// Close the joined call's socket with 4015: the bot resumes (same server, session and
/// token, no second Identify), and what the person says next is answered aloud (with
/// DAVE on, both ways end-to-end encrypted, on the group made before the close).
async fn resumed_and_still_hearing(r: Rig, dave: bool) {
    let room = (GUILD.to_string(), LOUNGE.to_string(), true);
    assert_eq!(
        health_rooms(&r, 1).await,
        vec![room.clone()],
        "/health lists the room"
    );
    r.model.push(Reply::text("It is noon in Tokyo."));
    r.speech.set_default_transcript("What time is it in Tokyo?");
    r.voice.close(4015);
    r.voice
        .wait_until("Resume on a new socket", Duration::from_secs(15), |v| {
            v.conns().len() >= 2 && !v.sent(7).is_empty()
        })
        .await;
    let resume = &r.voice.sent(7)[0]["d"];
    assert_eq!(resume["server_id"], GUILD.to_string());
    assert_eq!(resume["session_id"], voice::SESSION);
    assert_eq!(resume["token"], voice::TOKEN);
    assert!(
        r.voice.identifies().len() == 1,
        "resumed, not identified again"
    );

    // The same room hears and answers over the resumed connection.
    let mut audio = spoken("What time is it in Tokyo?");
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    r.voice.speak(OWNER, 5555, &audio).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while r.voice.bot_audible().len() < 10 {
        if Instant::now() > deadline {
            let log = stop(r.child).await;
            panic!("no answer after the resume; her log:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        posts_of(&r.discord, DISCONNECTED),
        0,
        "a resumed call is not ended"
    );
    assert_eq!(
        health_rooms(&r, 1).await,
        vec![room],
        "/health says the resumed room is connected"
    );
    if dave {
        let spoke = r.voice.person_packets();
        assert!(
            spoke.iter().filter(|p| p.rms > AUDIBLE).all(|p| p.e2ee),
            "the person spoke end-to-end encrypted after the resume"
        );
        let frames = r.voice.bot_frames();
        let plain = frames.iter().filter(|f| !f.e2ee && !f.is_silence()).count();
        assert!(
            frames.iter().any(|f| f.e2ee) && plain == 0,
            "her answer went end-to-end encrypted ({plain} plain voiced frames)"
        );
        assert_eq!(r.voice.undecryptable(), 0, "the person opened every frame");
    }
    stop(r.child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_socket_closed_with_4014_ends_the_room_with_one_sentence_in_the_text_chat() {
    let r = rig().await;
    let said = join(&r, 20).await;
    assert!(said.starts_with("Joined"), "she joined: {said}");
    ended_with_one_sentence(r, 4014, DISCONNECTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_dave_on_a_voice_socket_closed_with_4014_ends_the_room_with_one_sentence() {
    let r = rig_with(true).await;
    join_with_dave(&r).await;
    ended_with_one_sentence(r, 4014, DISCONNECTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_dave_on_a_voice_socket_closed_with_4017_ends_the_room_with_one_sentence_naming_dave()
{
    let r = rig_with(true).await;
    join_with_dave(&r).await;
    ended_with_one_sentence(r, 4017, DAVE_REQUIRED).await;
}

/// Close the joined call's socket with `code`: not resumed; the room ends with
/// `sentence`, once, in the lounge's text chat, the gateway is told she left, and
/// `/leave` finds no room.
async fn ended_with_one_sentence(r: Rig, code: u16, sentence: &str) {
    r.voice.close(code);
    let path = format!("/channels/{LOUNGE}/messages");
    r.discord
        .wait_for_from(0, 15, |c| {
            c.method == "POST" && c.path.ends_with(&path) && c.content() == sentence
        })
        .await;
    wait_for_gateway_leave(&r.discord).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        health_rooms(&r, 0).await,
        vec![],
        "/health lists no room once it ended"
    );
    assert_eq!(posts_of(&r.discord, sentence), 1, "one sentence");
    assert!(
        r.voice.sent(7).is_empty(),
        "{code} is not resumed: {:?}",
        r.voice.sent(7)
    );
    // The room is gone: /leave says she is in no voice channel.
    let l = r.discord.slash(GENERAL, OWNER, "leave", json!([]), 0);
    let said = answer_of(&r.discord, l, 20).await;
    assert_eq!(said, "I'm not in a voice channel here.");
    stop(r.child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_server_that_never_answers_fails_the_join_at_its_timeout_with_one_sentence() {
    let r = rig().await;
    r.voice.go_silent();
    let started = Instant::now();
    let said = join(&r, CONNECT_TIMEOUT.as_secs() + 20).await;
    let took = started.elapsed();
    assert_eq!(
        said,
        format!(
            "I couldn't connect to the voice channel within {} seconds, so I gave up; please try again.",
            CONNECT_TIMEOUT.as_secs()
        )
    );
    assert!(
        took >= CONNECT_TIMEOUT - Duration::from_secs(1)
            && took <= CONNECT_TIMEOUT + Duration::from_secs(10),
        "the join gave up at its timeout: {took:?}"
    );
    assert!(!r.voice.conns().is_empty(), "the bot did reach the server");
    // No half-open call: the gateway is told she is in no channel, and every voice
    // socket is closed.
    wait_for_gateway_leave(&r.discord).await;
    r.voice
        .wait_until("closed voice sockets", Duration::from_secs(15), |v| {
            v.conns().iter().all(|c| c.closed)
        })
        .await;
    stop(r.child).await;
}
