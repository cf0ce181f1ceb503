//! The realtime path with nothing in the way (`voice_mode: realtime`, docs/voice.md
//! "Realtime voice"): a person's audio reaches their realtime session as each packet
//! arrives — not a playout buffer and a tick later, and never twice — and when their
//! packets stop the room counts silence for them in audio time, so the provider's turn
//! detection ends the utterance on time. At the room's boundary with the loopback
//! realtime server, and over the real protocol (`kotoba serve`, DAVE on), judged by
//! the floor of the packets' lags (a buffer puts a floor under every one; load only
//! adds). That the provider's first audio leaves in songbird's next 20 ms frame is a
//! figure, not a rule a debug child on busy cores can be timed against: the benchmark
//! holds it (`cargo bench --bench voice`, benches/README.md: downstream share 48 →
//! 11 ms), and `her_voice_reaches_songbird_already_parsed_so_no_tick_goes_to_parsing_it`
//! the parse tick.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kotoba::engine::Engine;
use kotoba::llm::OpenAiClient;
use kotoba::protocol::Origin;
use kotoba::soul::Soul;
use kotoba::speech::audio::{FRAME, HEAR_FRAME};
use kotoba::speech::endpoint::EndpointSettings;
use kotoba::speech::realtime_voice::RealtimeConfig;
use kotoba::speech::{stt, tts};
use kotoba::store::Store;
use kotoba::tools::builtin::builtin_registry;
use kotoba::voice::boundary::{Arrived, AudioOut, Heard};
use kotoba::voice::room::{self, Caption, RoomHandle, RoomParts, RoomSide};
use kotoba_testkit::discord::OWNER;
use kotoba_testkit::model_server::ScriptedModel;
use kotoba_testkit::process::stop;
use kotoba_testkit::speech_server::{espeak_16k, Converse, SpeechServer};
use kotoba_testkit::voice::rig::{utterance, wait_or_explain};
use kotoba_testkit::voice::rtp;
use tokio::time::Instant;

use super::discord_realtime::realtime_call;

/// What the loopback's voice detector hears as speech (RMS).
const LOUD: f64 = 500.0;

#[derive(Default)]
struct Out {
    frames: Mutex<usize>,
}

impl AudioOut for Out {
    fn frame(&self, _pcm: &[f32]) {
        *self.frames.lock().unwrap() += 1;
    }
    fn stop(&self) {}
}

struct Side;

#[async_trait]
impl RoomSide for Side {
    async fn post(&self, _caption: Caption) {}
    fn name_of(&self, _user: u64) -> String {
        "olive".into()
    }
    fn origin(&self, user: u64) -> Origin {
        Origin::Discord { user, owner: true }
    }
    fn author(&self, user: u64) -> String {
        format!("olive ({user})")
    }
    async fn before_turn(&self) {}
}

/// A realtime room at the loopback speech server, one person with her.
async fn realtime_room(
    model: &ScriptedModel,
    speech: &SpeechServer,
    home: &std::path::Path,
) -> (RoomHandle, Arc<Out>) {
    std::fs::write(
        home.join("settings.yaml"),
        format!(
            "voice_mode: realtime\nrealtime:\n  base_url: {}\n",
            speech.openai_base()
        ),
    )
    .unwrap();
    let config = model.config_with(home, "responses", &[]);
    let realtime = RealtimeConfig::from_settings(&config, &config.settings().voice).unwrap();
    let engine = Engine::new(
        config.clone(),
        Arc::new(OpenAiClient::new(config.clone())),
        builtin_registry(),
        Soul::shipped(),
        Arc::new(Store::open(&config.paths.db).unwrap()),
    );
    let out = Arc::new(Out::default());
    let room = room::spawn(
        RoomParts {
            engine,
            session: "discord:901".into(),
            names: vec!["Kotoba".into()],
            recognizer: stt::recognizer(&config).unwrap(),
            synthesizer: tts::synthesizer(&config).unwrap(),
            out: out.clone(),
            side: Arc::new(Side),
            endpoint: EndpointSettings::default(),
            speculate: false,
            idle_leave: Duration::from_secs(300),
            trace: None,
            realtime: Some(realtime),
        },
        1,
    );
    (room, out)
}

fn rms(pcm: &[i16]) -> f64 {
    let sum: f64 = pcm.iter().map(|&s| f64::from(s).powi(2)).sum();
    (sum / pcm.len().max(1) as f64).sqrt()
}

/// The provider's loud appends so far (its first session).
fn loud_appends(speech: &SpeechServer) -> Vec<std::time::Instant> {
    speech
        .converse_sessions()
        .first()
        .map(|s| {
            s.appends
                .iter()
                .filter(|(_, r)| *r > LOUD)
                .map(|(t, _)| t.into_std())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_realtime_a_persons_audio_reaches_the_provider_as_each_packet_arrives_once_and_their_silence_is_counted(
) {
    let model = ScriptedModel::start().await;
    let speech = SpeechServer::start().await;
    speech.push_exchange("what time is it", Converse::Say("It is noon.".into()));
    let home = tempfile::tempdir().unwrap();
    let (room, out) = realtime_room(&model, &speech, home.path()).await;
    let phrase = espeak_16k("what time is it").await;
    let mut frames: Vec<Vec<i16>> = phrase
        .chunks(HEAR_FRAME)
        .map(|c| {
            let mut f = c.to_vec();
            f.resize(HEAR_FRAME, 0);
            f
        })
        .collect();
    // Cut after its last loud frame: then no packet comes at all.
    let end = frames.iter().rposition(|f| rms(f) > LOUD).unwrap();
    frames.truncate(end + 1);
    let loud = frames.iter().filter(|f| rms(f) > LOUD).count();

    // The person's packets arrive, one every 20 ms; songbird's ticks have not come yet.
    let mut tick = tokio::time::interval(FRAME);
    let mut last = Instant::now();
    for f in &frames {
        tick.tick().await;
        room.arrived
            .send(Arrived {
                user: 7,
                pcm: f.clone(),
            })
            .await
            .unwrap();
        last = Instant::now();
    }
    let heard = Instant::now() + Duration::from_secs(5);
    while loud_appends(&speech).len() < loud && Instant::now() < heard {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        loud_appends(&speech).len(),
        loud,
        "every loud frame reached the provider as its packet arrived, before any tick"
    );

    // Then the ticks carry the same audio (a playout buffer later), and then nothing:
    // the session does not hear it again.
    for f in &frames {
        room.heard
            .send(Heard {
                frames: vec![(7, f.clone())],
            })
            .await
            .unwrap();
    }
    // Her answer: the provider ended the utterance on the silence the room counted
    // (no packet, no tick came after the speech).
    let answered = Instant::now() + Duration::from_secs(10);
    while *out.frames.lock().unwrap() == 0 && Instant::now() < answered {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(*out.frames.lock().unwrap() > 0, "her answer played");
    assert_eq!(
        loud_appends(&speech).len(),
        loud,
        "the ticks' copy of the audio never reached the session"
    );
    let session = speech.converse_sessions()[0].clone();
    let (stopped, _) = session.stops[0];
    let waited = stopped.duration_since(last);
    // The loopback's turn detection needs 300 ms of quiet after the last loud audio.
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_millis(450),
        "the silence was counted as the packets would have come: the stop came {waited:?} after the last packet"
    );
    drop(room);
}

/// Over the protocol: the person's loud packets (as the bot decodes them) sent, and
/// the provider's loud appends, in order.
fn lags(
    sent: &[kotoba_testkit::voice::PersonPacket],
    audio: &[i16],
    appends: &[std::time::Instant],
) -> Vec<Duration> {
    let decoded = rtp::decode(&rtp::encode(audio));
    let loud: Vec<std::time::Instant> = decoded
        .chunks(rtp::FRAME * 2)
        .zip(sent)
        .filter(|(pcm, _)| rtp::rms(pcm) > LOUD)
        .map(|(_, p)| p.at)
        .collect();
    loud.iter()
        .zip(appends)
        .map(|(p, a)| a.saturating_duration_since(*p))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_dave_call_a_persons_audio_reaches_the_provider_as_each_packet_arrives() {
    let (r, child) = realtime_call(&[OWNER], |r| {
        r.speech
            .push_exchange("hello there", Converse::Say("Hi.".into()));
    })
    .await;
    let audio = utterance("Hello there.");
    r.voice.speak(OWNER, 5555, &audio).await;
    let speech = &r.speech;
    let child = wait_or_explain(
        child,
        Duration::from_secs(20),
        "the utterance's end",
        || {
            speech
                .converse_sessions()
                .first()
                .is_some_and(|s| !s.stops.is_empty())
        },
    )
    .await;
    let lags = lags(&r.voice.person_packets(), &audio, &loud_appends(&r.speech));
    assert!(lags.len() > 10, "the loud packets were heard: {lags:?}");
    // songbird's playout buffer (40 ms) and tick put a floor of 40 ms under every
    // packet's lag; a busy machine only adds to it, so the floor is what is judged.
    let floor = lags.iter().min().copied().unwrap_or(Duration::MAX);
    assert!(
        floor < Duration::from_millis(20),
        "each packet's audio reached the provider as it arrived: the quickest {floor:?} after it was sent ({lags:?})"
    );
    stop(child).await;
}
