//! The room's rules pinned at its boundary under a paused clock: real audio (espeak-ng
//! phrases, silence) in per speaker at 20 ms frames, frames out; recognition and
//! synthesis are trait-level fakes here (tests/suite/voice.rs drives the real
//! providers against loopback servers), the model is the engine's scripted one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::boundary::{AudioOut, Heard};
use super::room::{self, Caption, Control, RoomEnd, RoomHandle, RoomParts, RoomSide};
use crate::speech::audio::{FRAME, HEAR_FRAME};
use crate::speech::endpoint::EndpointSettings;
use crate::speech::stt::Recognizer;
use crate::speech::test_audio;
use crate::speech::tts::{Synthesizer, Voice};
use crate::speech::SpeechError;
use kotoba_core::protocol::{CardSettlement, Frame, Origin, Outcome, Phase, Risk};
use kotoba_engine::engine::testing::{call, fake, rig_with, say, Fake, Rig};
use kotoba_engine::llm::{LlmError, ModelReply};

pub(super) const ALICE: u64 = 11;
pub(super) const BOB: u64 = 22;
pub(super) const SESSION: &str = "discord:900";

/// The last audio asked about, when, and the answer it got.
type LastAsk = Option<(Vec<i16>, Instant, Result<String, SpeechError>)>;

/// Answers from a script, in order; records how much audio it was sent. The same
/// audio asked again within 3 s (at a pause, then at the commit with nothing said
/// since) gets the same answer and is recorded once, as one utterance.
#[derive(Default)]
pub(super) struct Ears {
    pub(super) script: Mutex<VecDeque<Result<String, SpeechError>>>,
    pub(super) heard: Mutex<Vec<usize>>,
    last: Mutex<LastAsk>,
    /// Every ask, repeats included: (samples, when).
    pub(super) asks: Mutex<Vec<(usize, Instant)>>,
}

#[async_trait]
impl Recognizer for Ears {
    fn name(&self) -> &'static str {
        "fake"
    }
    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError> {
        let now = Instant::now();
        self.asks.lock().unwrap().push((pcm.len(), now));
        let again = self
            .last
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|(p, at, text)| {
                (p == pcm && now.duration_since(*at) < Duration::from_secs(3)).then(|| text.clone())
            });
        let text = match again {
            Some(text) => text,
            None => {
                self.heard.lock().unwrap().push(pcm.len());
                let text = self
                    .script
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or_else(|| Ok(String::new()));
                *self.last.lock().unwrap() = Some((pcm.to_vec(), now, text.clone()));
                text
            }
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        text
    }
}

/// Speaks every line as a tone of `per_line` (16 kHz); records what and when.
pub(super) struct Mouth {
    pub(super) per_line: Duration,
    pub(super) said: Mutex<Vec<(Instant, String)>>,
    pub(super) fail: bool,
}

impl Mouth {
    pub(super) fn new(per_line: Duration) -> Arc<Mouth> {
        Arc::new(Mouth {
            per_line,
            said: Mutex::default(),
            fail: false,
        })
    }
    pub(super) fn lines(&self) -> Vec<String> {
        self.said
            .lock()
            .unwrap()
            .iter()
            .map(|(_, l)| l.clone())
            .collect()
    }
}

#[async_trait]
impl Synthesizer for Mouth {
    fn name(&self) -> &'static str {
        "fake"
    }
    async fn synthesize(&self, text: &str) -> Result<Voice, SpeechError> {
        self.said
            .lock()
            .unwrap()
            .push((Instant::now(), text.to_string()));
        if self.fail {
            return Err(SpeechError::new(
                "Speech synthesis (fake) failed: HTTP 500.",
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let n = (self.per_line.as_millis() as usize) * 16;
        let tone: Vec<i16> = (0..n)
            .map(|i| ((i as f32 * 0.05).sin() * 8000.0) as i16)
            .collect();
        let chunks: Vec<Result<Vec<i16>, SpeechError>> =
            tone.chunks(1600).map(|c| Ok(c.to_vec())).collect();
        Ok(Voice {
            rate: 16_000,
            audio: Box::pin(futures::stream::iter(chunks)),
        })
    }
}

/// Records the frames handed out and the stops.
#[derive(Default)]
pub(super) struct Out {
    pub(super) frames: Mutex<Vec<Instant>>,
    pub(super) stops: Mutex<Vec<Instant>>,
    /// A player that has stopped playing: everything handed stays queued.
    pub(super) stalled: std::sync::atomic::AtomicBool,
}

impl AudioOut for Out {
    fn frame(&self, pcm: &[f32]) {
        assert_eq!(pcm.len(), crate::speech::audio::PLAY_FRAME);
        self.frames.lock().unwrap().push(Instant::now());
    }
    fn stop(&self) {
        self.stops.lock().unwrap().push(Instant::now());
    }
    fn queued(&self) -> Option<usize> {
        let stalled = self.stalled.load(std::sync::atomic::Ordering::SeqCst);
        stalled.then(|| self.count())
    }
}

impl Out {
    pub(super) fn count(&self) -> usize {
        self.frames.lock().unwrap().len()
    }
    pub(super) fn after(&self, t: Instant) -> usize {
        self.frames
            .lock()
            .unwrap()
            .iter()
            .filter(|f| **f > t)
            .count()
    }
}

#[derive(Default)]
pub(super) struct Side {
    pub(super) posts: Mutex<Vec<String>>,
}

#[async_trait]
impl RoomSide for Side {
    async fn post(&self, caption: Caption) {
        self.posts.lock().unwrap().push(caption.line());
    }
    fn name_of(&self, user: u64) -> String {
        if user == ALICE { "Alice" } else { "Bob" }.into()
    }
    /// Alice owns her; Bob is a guest.
    fn origin(&self, user: u64) -> Origin {
        Origin::Discord {
            user,
            owner: user == ALICE,
        }
    }
    fn author(&self, user: u64) -> String {
        format!("{} ({user})", self.name_of(user))
    }
    async fn before_turn(&self) {}
}

impl Side {
    fn posts(&self) -> Vec<String> {
        self.posts.lock().unwrap().clone()
    }
}

pub(super) struct Stage {
    pub(super) rig: Rig,
    pub(super) ears: Arc<Ears>,
    pub(super) mouth: Arc<Mouth>,
    pub(super) out: Arc<Out>,
    pub(super) side: Arc<Side>,
    pub(super) room: RoomHandle,
}

pub(super) fn stage(
    replies: Vec<Result<ModelReply, LlmError>>,
    tools: Vec<Fake>,
    env: &[(&str, &str)],
    heard: &[&str],
    mouth: Arc<Mouth>,
    humans: usize,
) -> Stage {
    let rig = rig_with(replies, tools, env, "");
    stage_on(rig, heard, mouth, humans)
}

pub(super) fn stage_on(rig: Rig, heard: &[&str], mouth: Arc<Mouth>, humans: usize) -> Stage {
    stage_with(rig, heard, mouth, humans, EndpointSettings::default())
}

/// [`stage_on`] with these end-of-utterance settings.
pub(super) fn stage_with(
    rig: Rig,
    heard: &[&str],
    mouth: Arc<Mouth>,
    humans: usize,
    endpoint: EndpointSettings,
) -> Stage {
    let ears = Arc::new(Ears::default());
    *ears.script.lock().unwrap() = heard.iter().map(|t| Ok(t.to_string())).collect();
    let out = Arc::new(Out::default());
    let side = Arc::new(Side::default());
    let room = room::spawn(
        RoomParts {
            engine: rig.engine.clone(),
            session: SESSION.into(),
            names: vec!["Kotoba".into()],
            recognizer: ears.clone(),
            synthesizer: mouth.clone(),
            out: out.clone(),
            side: side.clone(),
            endpoint,
            speculate: true,
            idle_leave: Duration::from_secs(300),
            trace: None,
            realtime: None,
        },
        humans,
    );
    Stage {
        rig,
        ears,
        mouth,
        out,
        side,
        room,
    }
}

/// How each turn on the bus ended, with her answer, in order.
pub(super) fn turns_done(
    bus: &mut tokio::sync::broadcast::Receiver<Arc<kotoba_core::protocol::Event>>,
) -> Vec<(kotoba_core::protocol::TurnStatus, String)> {
    kotoba_engine::engine::testing::drain(bus)
        .into_iter()
        .filter_map(|f| match f {
            Frame::TurnDone { status, text, .. } => Some((status, text)),
            _ => None,
        })
        .collect()
}

pub(super) fn phrase(text: &str) -> Vec<i16> {
    test_audio::espeak(text)
}

impl Stage {
    /// When she was first asked to say `line`.
    pub(super) fn said_at(&self, line: &str) -> Option<Instant> {
        self.mouth
            .said
            .lock()
            .unwrap()
            .iter()
            .find(|(_, l)| l == line)
            .map(|(t, _)| *t)
    }

    /// Frames handed out after `from` and up to `to`.
    pub(super) fn frames_between(&self, from: Instant, to: Instant) -> usize {
        self.out
            .frames
            .lock()
            .unwrap()
            .iter()
            .filter(|t| **t > from && **t <= to)
            .count()
    }

    /// `who` speaks `pcm` (20 ms frames, one per tick); everyone else is silent.
    pub(super) async fn speak(&self, who: u64, pcm: &[i16]) -> Instant {
        let start = Instant::now();
        for frame in test_audio::frames(pcm) {
            assert_eq!(frame.len(), HEAR_FRAME);
            let _ = self
                .room
                .heard
                .send(Heard {
                    frames: vec![(who, frame)],
                })
                .await;
            tokio::time::sleep(FRAME).await;
        }
        start
    }

    /// Silence for `secs` (Discord sends nothing; the room's clock keeps time).
    pub(super) async fn wait(&self, secs: f64) {
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_spoken_question_is_answered_aloud_with_captions_in_the_text_chat() {
    let s = stage(
        vec![Ok(say("It is noon. Anything else I can do?"))],
        vec![],
        &[],
        &["what time is it"],
        Mouth::new(Duration::from_millis(800)),
        1,
    );
    s.speak(ALICE, &phrase("what time is it")).await;
    s.wait(6.0).await;
    assert_eq!(
        s.ears.heard.lock().unwrap().len(),
        1,
        "one utterance committed"
    );
    assert_eq!(
        s.mouth.lines(),
        ["It is noon.", "Anything else I can do?"],
        "spoken sentence by sentence"
    );
    assert!(
        s.out.count() >= 80,
        "two 0.8 s lines played: {}",
        s.out.count()
    );
    let posts = s.side.posts();
    assert!(
        posts
            .iter()
            .any(|p| p.contains("Alice") && p.contains("what time is it")),
        "{posts:?}"
    );
    assert!(
        posts
            .iter()
            .any(|p| p.starts_with("🔊") && p.contains("It is noon.")),
        "{posts:?}"
    );
    let sent = s.rig.script.sent();
    assert_eq!(sent.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_long_answers_caption_is_cut_to_1900_characters() {
    let long = "All work and no play makes a very long answer indeed. ".repeat(60);
    let s = stage(
        vec![Ok(say(&long))],
        vec![],
        &[],
        &["tell me everything"],
        Mouth::new(Duration::from_millis(50)),
        1,
    );
    s.speak(ALICE, &phrase("tell me everything")).await;
    s.wait(60.0).await;
    let said = s
        .side
        .posts()
        .into_iter()
        .find(|p| p.starts_with("🔊"))
        .expect("a caption of what she said");
    assert!(long.chars().count() > 3000);
    assert!(said.chars().count() <= 1900, "{}", said.chars().count());
    assert!(said.ends_with('…'), "it says it was cut");
}

#[tokio::test(start_paused = true)]
async fn speech_starts_on_the_first_sentence_while_the_answer_still_streams() {
    // The first sentence is synthesised before the second exists: the model streams
    // deltas; a sentence is handed to synthesis as soon as it is complete.
    let s = stage(
        vec![Ok(say(
            "Sure. Here is a much longer second sentence that follows.",
        ))],
        vec![],
        &[],
        &["tell me something"],
        Mouth::new(Duration::from_millis(400)),
        1,
    );
    s.speak(ALICE, &phrase("tell me something")).await;
    s.wait(5.0).await;
    let said = s.mouth.said.lock().unwrap().clone();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].0 <= said[1].0);
    // The second line was asked for while the first was still playing (ahead).
    let first_done = said[0].0 + Duration::from_millis(200 + 400);
    assert!(said[1].0 < first_done, "synthesised ahead: {said:?}");
}

#[tokio::test(start_paused = true)]
async fn barge_in_stops_playback_within_100_ms_and_cuts_the_turn() {
    let long = "This is a very long answer that goes on and on. ".repeat(3);
    let s = stage(
        vec![Ok(say(&long)), Ok(say("Okay."))],
        vec![],
        &[],
        &["tell me a long story", "wait stop"],
        Mouth::new(Duration::from_secs(8)),
        1,
    );
    s.speak(ALICE, &phrase("tell me a long story")).await;
    s.wait(3.0).await;
    assert!(s.out.count() > 10, "she is talking");
    let onset = s.speak(ALICE, &phrase("wait stop")).await;
    let stops = s.out.stops.lock().unwrap().clone();
    let stop = stops
        .iter()
        .find(|t| **t >= onset)
        .copied()
        .expect("playback stopped");
    assert!(
        stop.duration_since(onset) <= Duration::from_millis(100),
        "stopped {:?} after speech began",
        stop.duration_since(onset)
    );
    // Her reply to "wait stop" is a new answer; nothing of the cut one plays before it.
    s.wait(6.0).await;
    let reply_at = s
        .said_at("Okay.")
        .expect("the interruption was heard and answered");
    let cut_frames = s.frames_between(stop, reply_at);
    assert_eq!(
        cut_frames, 0,
        "nothing of the cut answer plays after the stop"
    );
    assert!(s.out.after(reply_at) > 0, "the new answer is spoken");
}

#[tokio::test(start_paused = true)]
async fn barge_in_closes_open_rows_interrupted_and_an_open_card_dismissed() {
    // A non-reasoning model announces the shell tool aloud, then the card waits for a
    // person; she is still saying the announce line when Alice talks over her.
    let mut shell = fake("shell", Risk::Exec);
    shell.spec.lines.announce =
        Some("Let me run that real quick, it will only take a moment.".into());
    let rig = rig_with(
        vec![call("shell", json!({"command": "rm -rf build"}))],
        vec![shell],
        &[],
        "",
    );
    let mut bus = rig.engine.session(SESSION).await.subscribe();
    let s = stage_on(
        rig,
        &["clean the build folder", "no wait"],
        Mouth::new(Duration::from_secs(10)),
        1,
    );
    s.speak(ALICE, &phrase("clean the build folder")).await;
    s.wait(3.0).await;
    assert!(
        s.mouth.lines().iter().any(|l| l.contains("real quick")),
        "{:?}",
        s.mouth.lines()
    );
    s.speak(ALICE, &phrase("no wait")).await;
    s.wait(1.0).await;
    let frames = kotoba_engine::engine::testing::drain(&mut bus);
    assert!(
        frames.iter().any(|f| matches!(f, Frame::Card(_))),
        "a card was open"
    );
    assert!(
        frames.iter().any(|f| matches!(
            f,
            Frame::CardSettled {
                settlement: CardSettlement::Dismissed,
                ..
            }
        )),
        "the card closed dismissed: {frames:?}"
    );
    let closed: Vec<_> = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Step(r) if r.phase == Phase::Done => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert!(
        closed
            .iter()
            .any(|r| r.outcome == Some(Outcome::Interrupted)),
        "the open row closed interrupted: {closed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn in_a_busy_room_only_her_name_wakes_her_and_her_name_alone_opens_a_window() {
    let s = stage(
        vec![Ok(say("Hi Bob.")), Ok(say("It is sunny."))],
        vec![],
        &[],
        &[
            "did you see the game",
            "Kotoba",
            "what is the weather",
            "and what about tomorrow",
        ],
        Mouth::new(Duration::from_millis(300)),
        2,
    );
    s.speak(BOB, &phrase("did you see the game")).await;
    s.wait(3.0).await;
    assert!(
        s.rig.script.sent().is_empty(),
        "chatter between people is not for her"
    );
    assert!(s.mouth.lines().is_empty());
    s.speak(BOB, &phrase("Kotoba")).await;
    s.wait(2.5).await;
    assert_eq!(s.mouth.lines().len(), 1, "an acknowledgement");
    assert!(crate::speech::wake::ACKNOWLEDGEMENTS.contains(&s.mouth.lines()[0].as_str()));
    s.speak(BOB, &phrase("what is the weather")).await;
    s.wait(3.0).await;
    assert_eq!(s.rig.script.sent().len(), 1, "within 8 s no name is needed");
    // The window was spent by that utterance; later chatter needs her name again.
    s.wait(9.0).await;
    s.speak(BOB, &phrase("and what about tomorrow")).await;
    s.wait(3.0).await;
    assert_eq!(
        s.rig.script.sent().len(),
        1,
        "after the window, no name, no turn"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_recognizer_says_so_once_and_the_room_stays_up() {
    let s = stage(
        vec![Ok(say("Hello again."))],
        vec![],
        &[],
        &[],
        Mouth::new(Duration::from_millis(300)),
        1,
    );
    {
        let mut q = s.ears.script.lock().unwrap();
        q.push_back(Err(SpeechError::new(
            "Speech recognition (openai) failed: HTTP 401.",
        )));
        q.push_back(Err(SpeechError::new(
            "Speech recognition (openai) failed: HTTP 401.",
        )));
        q.push_back(Ok("hello".into()));
    }
    for text in ["hello there", "are you there", "hello"] {
        s.speak(ALICE, &phrase(text)).await;
        s.wait(2.5).await;
    }
    let notices: Vec<_> = s
        .side
        .posts()
        .into_iter()
        .filter(|p| p.contains("HTTP 401"))
        .collect();
    assert_eq!(notices.len(), 1, "said once: {:?}", s.side.posts());
    assert_eq!(s.mouth.lines(), ["Hello again."], "the room stayed up");
}

#[tokio::test(start_paused = true)]
async fn a_second_person_calling_her_replaces_the_turn_in_flight() {
    let mut slow = fake("probe", Risk::Read).delay(Duration::from_secs(60));
    slow.spec.timeout = Some(Duration::from_secs(120));
    let s = stage(
        vec![
            call("probe", json!({})),
            Ok(say("Here is a joke.")),
            Ok(say("unused")),
        ],
        vec![slow],
        &[("KOTOBA_REASONING_EFFORT", "low")],
        &["Kotoba check the logs", "Kotoba tell me a joke"],
        Mouth::new(Duration::from_millis(300)),
        2,
    );
    let mut bus = s.rig.engine.session(SESSION).await.subscribe();
    s.speak(ALICE, &phrase("Kotoba check the logs")).await;
    s.wait(5.0).await;
    s.speak(BOB, &phrase("Kotoba tell me a joke")).await;
    s.wait(5.0).await;
    let done = turns_done(&mut bus);
    use kotoba_core::protocol::TurnStatus;
    assert_eq!(done.len(), 2, "{done:?}");
    assert_eq!(done[0].0, TurnStatus::Interrupted);
    assert_eq!(done[1], (TurnStatus::Completed, "Here is a joke.".into()));
}

#[tokio::test(start_paused = true)]
async fn a_trailing_and_waits_for_the_rest_of_the_sentence() {
    let s = stage(
        vec![Ok(say("Done."))],
        vec![],
        &[],
        &[
            "please turn on all of the lights in the kitchen and",
            "the ceiling fan in the bedroom",
        ],
        Mouth::new(Duration::from_millis(300)),
        1,
    );
    s.speak(
        ALICE,
        &phrase("please turn on all of the lights in the kitchen and"),
    )
    .await;
    s.wait(1.5).await;
    s.speak(ALICE, &phrase("the ceiling fan in the bedroom"))
        .await;
    s.wait(4.0).await;
    let sent = s.rig.script.sent();
    assert_eq!(sent.len(), 1, "one turn");
    let asked = format!("{:?}", sent[0].items.last());
    assert!(
        asked.contains("kitchen and the ceiling fan in the bedroom"),
        "{asked}"
    );
}

#[tokio::test(start_paused = true)]
async fn leave_waits_for_playback_to_finish_but_no_longer_than_30_seconds() {
    let s = stage(
        vec![Ok(say("A fairly long goodbye."))],
        vec![],
        &[],
        &["goodbye for now"],
        Mouth::new(Duration::from_secs(5)),
        1,
    );
    s.speak(ALICE, &phrase("goodbye for now")).await;
    s.wait(3.0).await;
    assert!(s.out.count() > 0, "talking");
    let (tx, rx) = oneshot::channel();
    let asked = Instant::now();
    s.room.control.send(Control::Leave(tx)).await.unwrap();
    rx.await.unwrap();
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_secs(1),
        "waited for playback: {waited:?}"
    );
    assert!(waited <= Duration::from_secs(30));
    let frames = s.out.count();
    assert!(frames >= 240, "the whole 5 s line played: {frames}");
    assert_eq!(s.room.task.await.unwrap(), RoomEnd::Left);

    let s = stage(
        vec![Ok(say(&"Words. ".repeat(60)))],
        vec![],
        &[],
        &["talk forever"],
        Mouth::new(Duration::from_secs(5)),
        1,
    );
    s.speak(ALICE, &phrase("talk forever")).await;
    s.wait(3.0).await;
    let (tx, rx) = oneshot::channel();
    let asked = Instant::now();
    s.room.control.send(Control::Leave(tx)).await.unwrap();
    rx.await.unwrap();
    let waited = asked.elapsed();
    assert!(
        (Duration::from_secs(30)..Duration::from_secs(31)).contains(&waited),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn she_leaves_by_herself_after_300_seconds_with_no_human() {
    let s = stage(
        vec![],
        vec![],
        &[],
        &[],
        Mouth::new(Duration::from_millis(300)),
        1,
    );
    s.room.control.send(Control::Humans(0)).await.unwrap();
    s.wait(299.0).await;
    assert!(!s.room.task.is_finished());
    s.room.control.send(Control::Humans(1)).await.unwrap();
    s.wait(100.0).await;
    s.room.control.send(Control::Humans(0)).await.unwrap();
    s.wait(200.0).await;
    assert!(
        !s.room.task.is_finished(),
        "the clock restarted when someone came back"
    );
    s.wait(101.0).await;
    assert!(s.room.task.is_finished());
    assert_eq!(s.room.task.await.unwrap(), RoomEnd::Alone);
}

#[tokio::test(start_paused = true)]
async fn a_failing_synthesizer_says_so_once_in_the_text_chat() {
    let mouth = Arc::new(Mouth {
        per_line: Duration::from_millis(300),
        said: Mutex::default(),
        fail: true,
    });
    let s = stage(
        vec![Ok(say("One. Two. Three."))],
        vec![],
        &[],
        &["count"],
        mouth,
        1,
    );
    s.speak(ALICE, &phrase("count")).await;
    s.wait(4.0).await;
    let notices: Vec<_> = s
        .side
        .posts()
        .into_iter()
        .filter(|p| p.contains("HTTP 500"))
        .collect();
    assert_eq!(notices.len(), 1, "{:?}", s.side.posts());
    assert!(
        s.side.posts().iter().any(|p| p.starts_with("🔊")),
        "the caption still lands"
    );
}
