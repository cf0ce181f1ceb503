//! Voice rules over the real voice protocol (`kotoba serve` as a child, songbird to the
//! loopback voice server): joining another voice channel in the same guild moves her
//! one room there, and a spoken turn's card is drawn in the voice channel's own text
//! chat with the 60 s voice window.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use kotoba_testkit::discord::{Call, FakeDiscord, GENERAL, LOUNGE, OWNER, STUDIO};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::stop;
use kotoba_testkit::speech_server::SpeechServer;
use kotoba_testkit::voice::rig::{answer_of, serve_trusting_the_test_ca, spoken, voice_server_for};

/// The `/status` answer of a fresh slash command.
async fn status(discord: &FakeDiscord) -> String {
    let s = discord.slash(GENERAL, OWNER, "status", json!([]), 0);
    discord.wait_callback(s).await.content()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joining_another_voice_channel_in_the_same_guild_moves_her_one_room_there() {
    let discord = FakeDiscord::start().await;
    let voice = voice_server_for(&discord).await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let child = serve_trusting_the_test_ca(&discord, &model, home.path(), &[]).await;

    let join = |channel: u64| {
        discord.slash(
            GENERAL,
            OWNER,
            "join",
            json!([{"type": 7, "name": "channel", "value": channel.to_string()}]),
            0,
        )
    };
    let said = answer_of(&discord, join(LOUNGE), 20).await;
    assert!(said.starts_with("Joined"), "{said}");
    assert!(status(&discord).await.contains(&format!("<#{LOUNGE}>")));

    let said = answer_of(&discord, join(STUDIO), 20).await;
    assert_eq!(said, format!("Joined <#{STUDIO}>. Talk to me!"));
    let last = discord.voice_updates().last().cloned().unwrap_or_default();
    assert_eq!(
        last["channel_id"].to_string().trim_matches('"'),
        STUDIO.to_string(),
        "the gateway was told the new channel: {:?}",
        discord.voice_updates()
    );
    assert!(
        !discord
            .voice_updates()
            .iter()
            .skip(1)
            .any(|u| u["channel_id"].is_null()),
        "a move is not a leave and a join: {:?}",
        discord.voice_updates()
    );
    let now = status(&discord).await;
    assert!(
        now.contains(&format!("<#{STUDIO}>")) && !now.contains(&format!("<#{LOUNGE}>")),
        "one room, in the new channel: {now}"
    );
    voice
        .wait_until("one open voice socket", Duration::from_secs(10), |v| {
            v.conns().iter().filter(|c| !c.closed).count() == 1
        })
        .await;

    // Joining the channel she is in is not a second room.
    let said = answer_of(&discord, join(STUDIO), 20).await;
    assert_eq!(said, format!("I'm already in <#{STUDIO}>."));
    stop(child).await;
}

/// The Unix seconds of the card's "Expires" field (`<t:SECS:R>`).
pub(super) fn expires_at(card: &Call) -> Option<u64> {
    let fields = card.body["embeds"][0]["fields"].as_array()?;
    let value = fields
        .iter()
        .find(|f| f["name"] == "Expires")?
        .get("value")
        .and_then(Value::as_str)?;
    value.strip_prefix("<t:")?.strip_suffix(":R>")?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spoken_turns_card_is_drawn_in_the_voice_channels_text_chat_with_60_seconds() {
    let discord = FakeDiscord::start().await;
    let voice = voice_server_for(&discord).await;
    let model = ScriptedModel::start().await;
    model.push(Reply::call(
        "shell",
        json!({"command": "touch notes-from-voice.txt"}),
    ));
    model.set_fallback(Reply::text("Okay."));
    let speech = SpeechServer::start().await;
    speech.set_default_transcript("Make a notes file for me.");
    let home = tempfile::tempdir().unwrap();
    let child =
        serve_trusting_the_test_ca(&discord, &model, home.path(), &speech.openai_env()).await;
    discord.voice_state(OWNER, Some(LOUNGE));
    let j = discord.slash(GENERAL, OWNER, "join", json!([]), 0);
    assert!(answer_of(&discord, j, 20).await.starts_with("Joined"));

    let mut audio = spoken("Make a notes file for me.");
    audio.extend(std::iter::repeat_n(0i16, 48_000 * 2 * 3 / 2));
    voice.speak(OWNER, 5555, &audio).await;

    let card = discord
        .wait_for_from(0, 40, |c| {
            c.method == "POST"
                && c.path.ends_with("/messages")
                && c.embed_text().contains("touch notes-from-voice.txt")
                && expires_at(c).is_some()
        })
        .await;
    let posted_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        card.path.ends_with(&format!("/channels/{LOUNGE}/messages")),
        "the card is in the voice channel's own text chat, not where /join was typed: {}",
        card.path
    );
    let expires = expires_at(&card).expect("the card names when it expires");
    let window = expires.saturating_sub(posted_at);
    assert!(
        (55..=61).contains(&window),
        "a spoken turn's card has the 60 s voice window, not the 180 s text one: {window} s"
    );
    stop(child).await;
}
