//! Her hearing while the group changes, with DAVE on, against the loopback voice server
//! running the group's life (`crates/kotoba-testkit/src/voice/dave.rs`): two people
//! speak DAVE-encrypted while a join, a leave, an epoch reset, and a downgrade to
//! version 0 and back are each in flight. One person's media takes a slower path than
//! the gateway, so frames sent under the old keys just before a transition executes
//! reach her after her own execute; the other's op 22 reaches her after theirs (the
//! people execute first), so frames under the new keys reach her before it. Every
//! voiced frame each of them sent must be in what she uploads to the recogniser (as a
//! decoder of their stream makes it: `crates/kotoba-testkit/src/voice/hearing.rs`),
//! and `/status voice` must count no frame she could not decrypt. Both kinds of fake
//! people are heard: ones who take a transition's keys only at its execute, and ones
//! who prepare at the commit as libdave clients do; both send with the new keys only
//! from the execute.

use std::time::{Duration, Instant};

use serde_json::json;

use kotoba_testkit::discord::{FakeDiscord, CAROL, GENERAL, GUEST, LOUNGE, OWNER};
use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::process::stop;
use kotoba_testkit::speech_server::SpeechServer;
use kotoba_testkit::voice::dave::{Change, Kind};
use kotoba_testkit::voice::hearing::{lost_frames, reference, Lost, FRAME};
use kotoba_testkit::voice::rig::{
    dave_voice_server_for, join_with_dave, serve_trusting_the_test_ca, utterance, wait_or_explain,
};
use kotoba_testkit::voice::rtp;
use kotoba_testkit::voice::AUDIBLE;

/// A person who joins mid-call.
const THIRD: u64 = 7777;
/// What the two people say, once per transition (about 4 s of espeak-ng each, no pause
/// long enough to end it; without her name, so she only listens; different, so each
/// one's frames are found only in their own uploads).
const PHRASES: [&str; 2] = [
    "The parks and the old temples of Tokyo are lovely in the spring when the cherry \
     trees along the river are in bloom",
    "My grandmother grew tomatoes and beans behind the little house near the old \
     railway station every single summer",
];
/// How long into the phrase the change starts.
const CHANGE_AFTER: Duration = Duration::from_millis(900);
/// How much later than the people her op 22 comes.
const LAG: Duration = Duration::from_millis(140);
/// How much later than sent Carol's packets reach her: more than the lag and the
/// people's own MLS work at the execute (their sending waits for it; a few hundred ms
/// in a debug build on busy cores).
const SLOW: Duration = Duration::from_millis(1200);
/// Voiced frames of one utterance allowed missing from her uploads. On two busy cores
/// a debug build stalls at each transition (the MLS work holds the DAVE session her
/// receive task needs, and the people's holds the loopback server's), and songbird's
/// short playout conceals what comes too late: up to 9 frames measured with both
/// tests beside each other (6 Dec 2026). A frame she cannot open is counted exactly
/// in `/status` instead; a frame decoded wrongly throws the rest of the utterance off.
const TOLERANCE: usize = 15;

/// `/status voice:True` in the general channel; its text.
async fn status_voice(discord: &FakeDiscord) -> String {
    let s = discord.slash(
        GENERAL,
        OWNER,
        "status",
        json!([{"type": 5, "name": "voice", "value": true}]),
        0,
    );
    discord.wait_callback(s).await.content()
}

/// The audio of every upload to the recogniser from the `since`-th request on.
fn uploads(speech: &SpeechServer, since: usize) -> Vec<Vec<i16>> {
    speech
        .requests()
        .into_iter()
        .skip(since)
        .filter(|r| r.path == "/v1/audio/transcriptions")
        .map(|r| r.audio)
        .collect()
}

/// What one person said across one transition, and which of its frames she missed.
#[derive(Debug)]
struct Heard {
    change: Change,
    who: u64,
    lost: Lost,
    /// Voiced frames they sent under the new keys that reached her before her op 22.
    early_new: usize,
    /// Voiced frames they sent under the old keys that reached her after her op 22.
    late_old: usize,
}

/// Owner and Carol speak across each change in turn (Gus is there to leave); what
/// each of them said, measured against her uploads.
async fn speak_across_each_change(kind: Kind) {
    let discord = FakeDiscord::start().await;
    let voice = dave_voice_server_for(&discord, &[OWNER, CAROL, GUEST]).await;
    voice.set_people_kind(kind);
    voice.set_execute_lag(LAG);
    voice.set_media_delay(CAROL, SLOW);
    let model = ScriptedModel::start().await;
    model.set_fallback(Reply::text("Okay."));
    let speech = SpeechServer::start().await;
    speech.set_default_transcript("The parks of Tokyo are lovely in the spring.");
    let home = tempfile::tempdir().unwrap();
    let mut child =
        serve_trusting_the_test_ca(&discord, &model, home.path(), &speech.openai_env()).await;
    for p in [OWNER, CAROL, GUEST] {
        discord.voice_state(p, Some(LOUNGE));
    }
    join_with_dave(&discord, &voice).await;
    let words = PHRASES.map(utterance);

    let changes = [
        Change::Join(THIRD),
        Change::Leave(GUEST),
        Change::Reset,
        Change::Downgrade,
        Change::Upgrade,
    ];
    let mut heard = Vec::new();
    for change in changes {
        let since = speech.requests().len();
        let executed = voice.dave(|d| d.executed.len());
        let started = Instant::now();
        let changing = async {
            tokio::time::sleep(CHANGE_AFTER).await;
            voice.dave_change(change.clone());
        };
        tokio::join!(
            voice.speak(OWNER, 5555, &words[0]),
            voice.speak(CAROL, 6666, &words[1]),
            changing
        );
        child = wait_or_explain(
            child,
            Duration::from_secs(20),
            &format!("{change:?} executed and both utterances uploaded"),
            || {
                voice.dave(|d| d.idle() && d.executed.len() > executed)
                    && uploads(&speech, since).len() >= 2
            },
        )
        .await;
        // The commit upload follows a pause upload; let it come.
        tokio::time::sleep(Duration::from_millis(800)).await;
        let at = voice.dave(|d| d.executed.last().map(|e| e.at).unwrap());
        for (who, ssrc) in [(OWNER, 5555), (CAROL, 6666)] {
            let packets: Vec<_> = voice
                .person_packets()
                .into_iter()
                .filter(|p| p.ssrc == ssrc && p.at >= started)
                .collect();
            let sent: Vec<Vec<u8>> = packets.iter().map(|p| p.opus.clone()).collect();
            let delay = if who == CAROL { SLOW } else { Duration::ZERO };
            let voiced = |p: &&kotoba_testkit::voice::PersonPacket| p.e2ee && p.rms > AUDIBLE;
            let early_new = packets
                .iter()
                .filter(voiced)
                .filter(|p| p.at >= at && p.at + delay < at + LAG)
                .count();
            let late_old = packets
                .iter()
                .filter(voiced)
                .filter(|p| p.at < at && p.at + delay > at + LAG)
                .count();
            heard.push(Heard {
                change: change.clone(),
                who,
                lost: lost_frames(&reference(&sent), &uploads(&speech, since)),
                early_new,
                late_old,
            });
        }
    }

    let versions: Vec<u16> = voice.dave(|d| d.executed.iter().map(|e| e.version).collect());
    assert_eq!(
        versions,
        vec![1, 1, 1, 1, 0, 1],
        "created, joined, left, reset, downgraded, upgraded"
    );
    let summary: Vec<String> = heard
        .iter()
        .map(|h| {
            format!(
                "{:?} by {}: {} of {} voiced frames missing; {} new before her execute, {} old after",
                h.change,
                h.who,
                h.lost.lost.len(),
                h.lost.voiced,
                h.early_new,
                h.late_old
            )
        })
        .collect();
    let status = status_voice(&discord).await;
    assert!(
        status.contains("frames she could not decrypt: 0"),
        "she decrypted every frame they sent: {status}; {summary:#?}"
    );
    for h in &heard {
        // Owner's new-key frames reach her before her op 22 (not after a downgrade:
        // plain); Carol's old-key frames after it (not before an upgrade: plain).
        let in_flight = match (&h.change, h.who) {
            (Change::Downgrade, OWNER) | (Change::Upgrade, CAROL) => true,
            (_, OWNER) => h.early_new >= 3,
            _ => h.late_old >= 3,
        };
        assert!(
            h.lost.voiced > 100 && in_flight,
            "{h:?}: frames were in flight across the transition; all: {summary:#?}"
        );
        assert!(
            h.lost.lost.len() <= TOLERANCE,
            "she heard every voiced frame {} sent across {:?}: missing {:?}; all: {summary:#?}",
            h.who,
            h.change,
            h.lost.lost
        );
    }
    assert_eq!(
        voice.dave_problems(),
        Vec::<String>::new(),
        "the group's life"
    );
    stop(child).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_frame_people_send_across_a_join_a_leave_a_reset_and_a_downgrade_and_back_is_heard_when_they_switch_keys_at_the_execute(
) {
    speak_across_each_change(Kind::AtExecute).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_frame_people_send_across_a_join_a_leave_a_reset_and_a_downgrade_and_back_is_heard_when_they_prepare_at_the_commit(
) {
    speak_across_each_change(Kind::PreparesAtCommit).await;
}

/// A voiced sweep, `n` frames of 48 kHz stereo.
fn sweep(n: usize) -> Vec<i16> {
    (0..n * rtp::FRAME)
        .flat_map(|i| {
            let t = i as f64 / 48_000.0;
            let s = ((t * (200.0 + 300.0 * t) * std::f64::consts::TAU).sin() * 8000.0) as i16;
            [s, s]
        })
        .collect()
}

#[test]
fn the_hearing_measure_finds_every_frame_heard_in_order_and_names_a_concealed_one() {
    let frames = rtp::encode(&sweep(50));
    let sent = reference(&frames);
    // Heard whole, after 10 frames of pre-roll silence, with a silent frame the room
    // put in at frame 20 (a late packet).
    let mut heard: Vec<i16> = vec![0; FRAME * 10];
    for (i, f) in sent.iter().enumerate() {
        if i == 20 {
            heard.extend(std::iter::repeat_n(0, FRAME));
        }
        heard.extend(f);
    }
    let whole = lost_frames(&sent, &[heard]);
    assert!(whole.voiced > 40, "{whole:?}");
    assert_eq!(whole.lost, Vec::<usize>::new());

    // Frame 30 lost: the decoder conceals it; and frame 40 decoded still encrypted
    // (noise).
    let mut dec = opus2::Decoder::new(16_000, opus2::Channels::Mono).unwrap();
    let mut buf = vec![0i16; FRAME * 6];
    let mut heard = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let n = match i {
            30 => dec.decode(&[], &mut buf, false).unwrap(),
            40 => {
                let garbled: Vec<u8> = f.iter().map(|b| b ^ 0x5a).collect();
                dec.decode(&garbled, &mut buf, false).unwrap_or(FRAME)
            }
            _ => dec.decode(f, &mut buf, false).unwrap(),
        };
        heard.extend_from_slice(&buf[..n]);
    }
    let two = lost_frames(&sent, &[heard]);
    assert!(two.lost.contains(&30) && two.lost.contains(&40), "{two:?}");
    // A concealed frame costs at most the next two as the decoder settles; a garbled
    // one may throw the rest off (its length is anyone's guess).
    assert!(two.lost.iter().filter(|&&i| i < 40).count() <= 3, "{two:?}");
}
