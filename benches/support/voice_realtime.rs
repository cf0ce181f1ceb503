//! The realtime part of the voice benchmark (`voice_mode: realtime`, docs/voice.md):
//! the same phrase fed into a room at its boundary, at real pace and without a break
//! (silence between utterances), the room streaming it to a realtime session at the
//! loopback speech server, which ends each utterance after [`QUIET`] of quiet (in
//! audio time) and sends its first audio [`PROVIDER`] later. Per utterance: the person's end
//! of speech → her first 48 kHz frame handed to the AudioOut, the provider's own time
//! (its speech stop → its first audio delta, as it recorded them), and the bot's share:
//! how late the audio that ended the utterance reached the provider (upstream: the
//! stop's instant minus when the room was handed the frame that completed it, found
//! by the samples the provider had counted) plus the provider's first audio delta →
//! her first frame handed out (downstream).
//! Over the real protocol ([`over_the_protocol`]): `kotoba serve` as a child on the
//! loopback Discord joins the loopback voice server with DAVE on, the same phrase goes
//! as paced, end-to-end encrypted Opus RTP, and her answer comes back as RTP; the
//! figures are taken at the voice server and at the provider (one clock: both run in
//! this process).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kotoba::engine::Engine;
use kotoba::speech::audio::{FRAME, HEAR_FRAME};
use kotoba::speech::endpoint::EndpointSettings;
use kotoba::speech::realtime_voice::RealtimeConfig;
use kotoba::speech::{stt, tts};
use kotoba::voice::boundary::{AudioOut, Heard};
use kotoba::voice::room::{self, RoomParts, RoomSide};
use tokio::time::Instant;

use crate::speech_server::{Converse, SpeechServer};

/// The realtime provider's own time: its speech stop → its first audio.
pub const PROVIDER: Duration = Duration::from_millis(250);
/// Its end of turn: this much quiet, in audio time (the loopback's VAD; OpenAI's
/// `server_vad` waits 500 ms by default).
pub const QUIET: Duration = Duration::from_millis(500);
/// What the realtime model says to each utterance.
const ANSWER: &str = "It is noon.";
/// Samples per 20 ms at the realtime rate (24 kHz).
const RT_FRAME: usize = 480;
/// A frame louder than this (RMS) is speech to the loopback's VAD; the phrase is cut
/// after its last such frame, so the bench and the provider agree where speech ends.
pub const LOUD: f64 = 500.0;

/// The figures, one per utterance answered.
#[derive(Default)]
pub struct Figures {
    /// The person's end of speech (the end of the last voiced frame) → her first frame.
    pub from_speech_end: Vec<Duration>,
    /// The provider's own time after its end-of-turn wait.
    pub provider: Vec<Duration>,
    /// Upstream + downstream.
    pub bot: Vec<Duration>,
    /// The utterance's last audio handed to the room → the provider's stop.
    pub upstream: Vec<Duration>,
    /// The provider's first audio delta → her first frame handed out.
    pub downstream: Vec<Duration>,
}

/// Records when each frame of hers is handed out.
#[derive(Default)]
struct Out {
    frames: Mutex<Vec<Instant>>,
}

impl AudioOut for Out {
    fn frame(&self, _pcm: &[f32]) {
        self.frames.lock().unwrap().push(Instant::now());
    }
    fn stop(&self) {}
}

pub fn rms(frame: &[i16]) -> f64 {
    let sum: f64 = frame.iter().map(|&s| f64::from(s).powi(2)).sum();
    (sum / frame.len().max(1) as f64).sqrt()
}

/// `phrase` (16 kHz) as heard frames, cut after its last loud frame.
pub fn phrase_frames(phrase: &[i16]) -> Vec<Vec<i16>> {
    let mut frames: Vec<Vec<i16>> = phrase
        .chunks(HEAR_FRAME)
        .map(|c| {
            let mut v = c.to_vec();
            v.resize(HEAR_FRAME, 0);
            v
        })
        .collect();
    let last = frames.iter().rposition(|f| rms(f) > LOUD).unwrap_or(0);
    frames.truncate(last + 1);
    frames
}

/// `n` utterances of `phrase` into a realtime room built from `engine` (whose settings
/// point `realtime.base_url` at `speech`).
pub async fn run(
    engine: Arc<Engine>,
    side: Arc<dyn RoomSide>,
    n: usize,
    phrase: &[i16],
    speech: &SpeechServer,
) -> Figures {
    let config = engine.config().clone();
    let realtime = RealtimeConfig::from_settings(&config, &config.settings().voice).unwrap();
    speech.set_converse_delay(PROVIDER);
    speech.set_converse_quiet(QUIET);
    let out = Arc::new(Out::default());
    let room = room::spawn(
        RoomParts {
            engine,
            session: "discord:2".into(),
            names: vec!["Kotoba".into()],
            recognizer: stt::recognizer(&config).unwrap(),
            synthesizer: tts::synthesizer(&config).unwrap(),
            out: out.clone(),
            side,
            endpoint: EndpointSettings::default(),
            speculate: false,
            idle_leave: Duration::from_secs(3600),
            trace: None,
            realtime: Some(realtime),
        },
        1,
    );
    let sessions_before = speech.converse_sessions().len();
    let words = phrase_frames(phrase);
    let silence = vec![0i16; HEAR_FRAME];
    // When each frame went in, the whole run through (the provider counts them all).
    let mut fed: Vec<Instant> = Vec::new();
    let mut tick = tokio::time::interval(FRAME);
    let mut feed = async |frame: &Vec<i16>, fed: &mut Vec<Instant>| {
        tick.tick().await;
        fed.push(Instant::now());
        room.heard
            .send(Heard {
                frames: vec![(7, frame.clone())],
            })
            .await
            .unwrap();
    };
    let mut ends = Vec::new();
    let mut firsts = Vec::new();
    for _ in 0..n {
        speech.push_exchange("what time is it", Converse::Say(ANSWER.into()));
        for f in &words {
            feed(f, &mut fed).await;
        }
        let speech_end = *fed.last().unwrap() + FRAME;
        let before = out.frames.lock().unwrap().len();
        // Silence until her answer has played out (400 ms without a frame of hers).
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            feed(&silence, &mut fed).await;
            let frames = out.frames.lock().unwrap();
            let done = frames.len() > before
                && frames
                    .last()
                    .is_some_and(|t| t.elapsed() > Duration::from_millis(400));
            if done || Instant::now() > give_up {
                break;
            }
        }
        ends.push(speech_end);
        firsts.push(out.frames.lock().unwrap().get(before).copied());
    }
    drop(room);
    let sessions = speech.converse_sessions();
    let Some(session) = sessions.get(sessions_before) else {
        return Figures::default();
    };
    let mut figures = Figures::default();
    for (i, (end, first)) in ends.iter().zip(&firsts).enumerate() {
        let (Some(first), Some(&(stopped, samples)), Some(&(_, sent))) =
            (first, session.stops.get(i), session.first_audio.get(i))
        else {
            continue;
        };
        // The frame whose audio completed the provider's count at its stop.
        let k = samples.div_ceil(RT_FRAME).saturating_sub(1);
        let Some(handed) = fed.get(k) else { continue };
        let upstream = stopped.saturating_duration_since(*handed);
        let downstream = first.saturating_duration_since(sent);
        figures.from_speech_end.push(first.duration_since(*end));
        figures.provider.push(sent.duration_since(stopped));
        figures.upstream.push(upstream);
        figures.downstream.push(downstream);
        figures.bot.push(upstream + downstream);
    }
    figures
}
