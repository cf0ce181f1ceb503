//! The realtime part of the voice benchmark over the real protocol: `kotoba serve`
//! (`voice_mode: realtime`) as a child on the loopback Discord joins the loopback voice
//! server with DAVE on (the test CA trusted by the child only), a person speaks the
//! phrase as paced, end-to-end encrypted Opus RTP (cut after its last loud frame, then
//! the 100 ms of silence a client sends before it stops), and the realtime session at
//! the loopback speech server answers it ([`QUIET`] of quiet ends the utterance, its
//! first audio comes [`PROVIDER`] after that). The voice server, the provider and this
//! program share one clock. Per utterance:
//!
//! - the end of speech: the person's last loud packet sent (the phrase is cut so that
//!   its last packet is clearly loud and the next ones quiet, as decoded);
//! - her first audible RTP packet after it, at the voice server;
//! - upstream, her share: that packet sent → the provider has its audio (the arrival
//!   of the provider's last loud append before its stop);
//! - the provider's own time: its stop → its first audio delta (after its [`QUIET`]);
//! - downstream, her share: the provider's first audio delta → her first audible RTP
//!   packet at the voice server;
//! - her whole share: end of speech → her first RTP packet, minus [`QUIET`] and the
//!   provider's own time (upstream, downstream, and any lateness of the silence that
//!   lets the provider count its quiet).

use std::time::{Duration, Instant};

use kotoba_testkit::discord::{FakeDiscord, OWNER};
use kotoba_testkit::model_server::ScriptedModel;
use kotoba_testkit::voice::{self, rig, rtp};

use crate::speech_server::{Converse, SpeechServer};
use crate::voice_realtime::{phrase_frames, rms, LOUD, PROVIDER, QUIET};

/// What the realtime model says to each utterance.
const ANSWER: &str = "It is noon.";

/// The figures, one per utterance answered.
#[derive(Default)]
pub struct Figures {
    /// End of speech → her first audible RTP packet at the voice server.
    pub from_speech_end: Vec<Duration>,
    /// The provider's own time after its end-of-turn wait: its stop → its first audio.
    pub provider: Vec<Duration>,
    /// The person's last loud packet sent → the provider has its audio.
    pub upstream: Vec<Duration>,
    /// The provider's first audio → her first audible RTP packet.
    pub downstream: Vec<Duration>,
    /// End of speech → her first RTP packet, minus the quiet and the provider's time.
    pub share: Vec<Duration>,
}

/// `n` utterances of `phrase` (16 kHz mono) in a realtime call, against `model` (never
/// asked: small talk stays with the realtime model) and `speech`'s realtime session.
pub async fn over_the_protocol(
    n: usize,
    phrase: &[i16],
    model: &ScriptedModel,
    speech: &SpeechServer,
) -> Figures {
    speech.set_converse_delay(PROVIDER);
    speech.set_converse_quiet(QUIET);
    let discord = FakeDiscord::start().await;
    let voice = rig::dave_voice_server_for(&discord, &[OWNER]).await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!(
            "voice_mode: realtime\nrealtime:\n  base_url: {}\n",
            speech.openai_base()
        ),
    )
    .unwrap();
    let mut env = discord.env();
    env.extend(
        model
            .env("chat")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    env.extend(
        speech
            .openai_env()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    env.push(("SSL_CERT_FILE".into(), voice::ca_file()));
    let mut child = super::voice_protocol::serve_joined(home.path(), env, &discord, &voice).await;

    // The phrase at 48 kHz stereo (each 16 kHz sample three times, both channels), cut
    // after its last frame well over the detector's threshold, that frame's last 8 ms
    // silenced (so Opus, which carries a packet's last 6.5 ms into the next, leaves the
    // next one quiet: speech ends crisply at a packet's end), then the 5 silent packets
    // a client sends as it stops.
    let frames = phrase_frames(phrase);
    let last = frames
        .iter()
        .rposition(|f| rms(f) > 2.0 * LOUD)
        .unwrap_or(0);
    let mut words: Vec<i16> = frames[..=last].concat();
    let cut = words.len().saturating_sub(8 * 16);
    words[cut..].iter_mut().for_each(|s| *s = 0);
    let mut audio: Vec<i16> = words.iter().flat_map(|&s| [s; 6]).collect();
    audio.extend(std::iter::repeat_n(0i16, rtp::FRAME * 2 * 5));
    // Each packet's loudness as the bot decodes it.
    let decoded = rtp::decode(&rtp::encode(&audio));
    let loud: Vec<bool> = decoded
        .chunks(rtp::FRAME * 2)
        .map(|p| rtp::rms(p) > LOUD)
        .collect();
    let last_loud = loud.iter().rposition(|l| *l).expect("a loud packet");
    assert_eq!(
        last_loud, last,
        "speech ends at the phrase's last packet, as the bot decodes it"
    );

    let sessions_before = speech.converse_sessions().len();
    // (end of speech, her first audible packet) per utterance.
    let mut heard: Vec<(Instant, Option<Instant>)> = Vec::new();
    for i in 0..n {
        speech.push_exchange("what time is it", Converse::Say(ANSWER.into()));
        let before = voice.person_packets().len();
        voice.speak(OWNER, 5555, &audio).await;
        let sent = voice.person_packets();
        let Some(end) = sent.get(before + last_loud).map(|p| p.at) else {
            continue;
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        let first = loop {
            if let Some(t) = voice.bot_audible().into_iter().find(|t| *t > end) {
                break Some(t);
            }
            if Instant::now() > deadline {
                eprintln!("realtime utterance {i}: no answer within 15 s");
                break None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        heard.push((end, first));
        // Let her finish (400 ms without an audible packet of hers), so the next
        // utterance does not talk over her.
        let give_up = Instant::now() + Duration::from_secs(10);
        while Instant::now() < give_up
            && voice
                .bot_audible()
                .last()
                .is_some_and(|t| t.elapsed() < Duration::from_millis(400))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;

    let sessions = speech.converse_sessions();
    let Some(session) = sessions.get(sessions_before) else {
        return Figures::default();
    };
    let mut figures = Figures::default();
    for (i, (end, first)) in heard.iter().enumerate() {
        let (Some(first), Some(&(stopped, _)), Some(&(_, delta))) =
            (first, session.stops.get(i), session.first_audio.get(i))
        else {
            continue;
        };
        let (stopped, delta) = (stopped.into_std(), delta.into_std());
        // The provider's last loud append before its stop carried the end of speech.
        let Some(has_it) = session
            .appends
            .iter()
            .filter(|(t, rms)| t.into_std() <= stopped && *rms > LOUD)
            .map(|(t, _)| t.into_std())
            .next_back()
        else {
            continue;
        };
        let total = first.saturating_duration_since(*end);
        let provider = delta.saturating_duration_since(stopped);
        figures.from_speech_end.push(total);
        figures.provider.push(provider);
        figures
            .upstream
            .push(has_it.saturating_duration_since(*end));
        figures
            .downstream
            .push(first.saturating_duration_since(delta));
        figures
            .share
            .push(total.saturating_sub(QUIET).saturating_sub(provider));
    }
    figures
}
