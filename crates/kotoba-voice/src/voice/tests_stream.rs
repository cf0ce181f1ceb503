//! Streamed recognition at the room's boundary under a paused clock, with espeak-ng
//! phrases: a recognizer whose stream answers a fixed 100 ms after it is asked (and
//! only for audio with sound it has not answered yet), beside the batch fake of
//! [`super::tests`] (300 ms) as the fallback. The words are ready at the pause, the
//! commit waits for no recognition, a pause then more words is one utterance, and a
//! failing stream falls back to the upload for that utterance without a word in the
//! chat.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::room::{self, RoomParts, Trace};
use super::tests::{phrase, Ears, Mouth, Out, Side, Stage, ALICE, SESSION};
use crate::speech::endpoint::EndpointSettings;
use crate::speech::stt::{refuse, Command, RecognitionStream, Recognizer};
use crate::speech::test_audio::silence;
use crate::speech::SpeechError;
use kotoba_engine::engine::testing::{rig_with, say};

/// How long the fake stream takes to answer once asked.
const LATENCY: Duration = Duration::from_millis(100);

/// One stream as the fake saw it.
#[derive(Debug, Default, Clone)]
struct Session {
    /// Samples pushed.
    pushed: usize,
    /// Each question: when asked, when answered.
    asks: Vec<(Instant, Instant)>,
}

/// Streams with scripted words per segment (what was pushed since the last answer);
/// uploads go to the batch fake.
struct Streamer {
    upload: Arc<Ears>,
    script: Arc<Mutex<VecDeque<Result<String, SpeechError>>>>,
    sessions: Arc<Mutex<Vec<Session>>>,
}

#[async_trait]
impl Recognizer for Streamer {
    fn name(&self) -> &'static str {
        "fake-stream"
    }

    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError> {
        self.upload.transcribe(pcm).await
    }

    fn stream(&self) -> Option<RecognitionStream> {
        let script = self.script.clone();
        let sessions = self.sessions.clone();
        let at = {
            let mut s = sessions.lock().unwrap();
            s.push(Session::default());
            s.len() - 1
        };
        Some(RecognitionStream::spawn(
            "fake-stream",
            move |mut rx| async move {
                let mut words: Vec<String> = Vec::new();
                let mut fresh = 0;
                while let Some(c) = rx.recv().await {
                    let (reply, last) = match c {
                        Command::Audio(pcm) => {
                            // Quiet holds no words: like the real stream, it is no
                            // segment of its own.
                            if crate::speech::endpoint::has_sound(&pcm) {
                                fresh += pcm.len();
                            }
                            sessions.lock().unwrap()[at].pushed += pcm.len();
                            continue;
                        }
                        Command::Words(reply) => (reply, false),
                        Command::Finish(reply) => (reply, true),
                    };
                    let asked = Instant::now();
                    if fresh > 0 {
                        fresh = 0;
                        tokio::time::sleep(LATENCY).await;
                        let next = script.lock().unwrap().pop_front();
                        match next.unwrap_or_else(|| Ok(String::new())) {
                            Ok(w) => words.push(w),
                            Err(e) => {
                                let _ = reply.send(Err(e.clone()));
                                refuse(rx, e).await;
                                return;
                            }
                        }
                    }
                    sessions.lock().unwrap()[at]
                        .asks
                        .push((asked, Instant::now()));
                    let _ = reply.send(Ok(words.join(" ")));
                    if last {
                        return;
                    }
                }
            },
        ))
    }
}

struct Streaming {
    stage: Stage,
    script: Arc<Mutex<VecDeque<Result<String, SpeechError>>>>,
    sessions: Arc<Mutex<Vec<Session>>>,
    traces: mpsc::UnboundedReceiver<Trace>,
}

/// A room whose recognizer streams `streamed` (per segment) and uploads to a batch
/// fake answering `uploaded`; the model says `answer`.
fn streaming(streamed: Vec<Result<&str, &str>>, uploaded: &[&str], answer: &str) -> Streaming {
    let rig = rig_with(vec![Ok(say(answer)), Ok(say(answer))], vec![], &[], "");
    let upload = Arc::new(Ears::default());
    *upload.script.lock().unwrap() = uploaded.iter().map(|t| Ok(t.to_string())).collect();
    let script = Arc::new(Mutex::new(
        streamed
            .into_iter()
            .map(|r| r.map(str::to_string).map_err(SpeechError::new))
            .collect(),
    ));
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let recognizer = Arc::new(Streamer {
        upload: upload.clone(),
        script: script.clone(),
        sessions: sessions.clone(),
    });
    let mouth = Mouth::new(Duration::from_millis(500));
    let out = Arc::new(Out::default());
    let side = Arc::new(Side::default());
    let (trace, traces) = mpsc::unbounded_channel();
    let room = room::spawn(
        RoomParts {
            engine: rig.engine.clone(),
            session: SESSION.into(),
            names: vec!["Kotoba".into()],
            recognizer,
            synthesizer: mouth.clone(),
            out: out.clone(),
            side: side.clone(),
            endpoint: EndpointSettings::default(),
            speculate: true,
            idle_leave: Duration::from_secs(300),
            trace: Some(trace),
            realtime: None,
        },
        1,
    );
    Streaming {
        stage: Stage {
            rig,
            ears: upload,
            mouth,
            out,
            side,
            room,
        },
        script,
        sessions,
        traces,
    }
}

impl Streaming {
    /// The next answer's timings (a room that never answers fails here, in paused
    /// time).
    async fn answer(&mut self) -> Trace {
        tokio::time::timeout(Duration::from_secs(20), self.traces.recv())
            .await
            .expect("she answered within 20 s")
            .expect("a trace")
    }

    fn sessions(&self) -> Vec<Session> {
        self.sessions.lock().unwrap().clone()
    }

    fn uploads(&self) -> usize {
        self.stage.ears.asks.lock().unwrap().len()
    }

    /// The words of every turn asked of the model, in order.
    fn turns(&self) -> Vec<String> {
        self.stage
            .rig
            .script
            .sent()
            .iter()
            .map(|r| format!("{r:?}"))
            .collect()
    }
}

#[tokio::test(start_paused = true)]
async fn a_streamed_transcript_is_ready_at_the_pause_so_the_commit_waits_for_no_recognition() {
    let mut s = streaming(vec![Ok("What time is it in Tokyo?")], &[], "It is noon.");
    let spoken = [phrase("what time is it in Tokyo"), silence(3.0)].concat();
    s.stage.speak(ALICE, &spoken).await;
    let t = s.answer().await;
    assert_eq!(
        t.recognised, t.committed,
        "the words were in hand at the commit"
    );
    let commit = t.committed.duration_since(t.speech_end);
    assert!(
        commit >= Duration::from_millis(580) && commit <= Duration::from_millis(640),
        "the early commit, 0.6 s after the speech: {commit:?}"
    );
    assert_eq!(t.stt, LATENCY, "the stream's answer at the pause");
    let sessions = s.sessions();
    assert_eq!(sessions.len(), 1, "one stream for the utterance");
    let (asked, answered) = sessions[0].asks[0];
    let pause = asked.duration_since(t.speech_end);
    assert!(
        pause <= Duration::from_millis(340),
        "asked at the pause: {pause:?}"
    );
    assert!(answered < t.committed, "ready before the commit");
    assert!(sessions[0].pushed > 16_000, "it heard the utterance");
    assert_eq!(s.uploads(), 0, "no upload");
    assert_eq!(s.turns().len(), 1);
    assert!(s.turns()[0].contains("What time is it in Tokyo?"));
}

#[tokio::test(start_paused = true)]
async fn words_left_open_at_the_pause_wait_the_full_silence_but_not_for_recognition_again() {
    // No end punctuation: not complete, so the full 1.0 s silence commits.
    let mut s = streaming(vec![Ok("what time is it in Tokyo right now")], &[], "Noon.");
    let spoken = [phrase("what time is it in Tokyo right now"), silence(3.0)].concat();
    s.stage.speak(ALICE, &spoken).await;
    let t = s.answer().await;
    let commit = t.committed.duration_since(t.speech_end);
    assert!(
        commit >= Duration::from_millis(980),
        "the full wait: {commit:?}"
    );
    assert_eq!(t.recognised, t.committed, "nothing new to recognise");
    assert_eq!(t.stt, Duration::ZERO);
    assert_eq!(s.sessions()[0].asks.len(), 2, "the pause, then the commit");
    assert_eq!(s.uploads(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_pause_then_more_words_streams_one_utterance_whose_words_are_joined_in_order() {
    let mut s = streaming(
        vec![Ok("I want to"), Ok("book a table for two.")],
        &[],
        "Done.",
    );
    let spoken = [
        phrase("I want to"),
        silence(0.7),
        phrase("book a table for two"),
        silence(3.0),
    ]
    .concat();
    s.stage.speak(ALICE, &spoken).await;
    let t = s.answer().await;
    assert_eq!(t.recognised, t.committed);
    let turns = s.turns();
    assert_eq!(turns.len(), 1, "one utterance: {turns:?}");
    assert!(
        turns[0].contains("I want to book a table for two."),
        "{turns:?}"
    );
    assert_eq!(s.sessions().len(), 1, "one stream");
    assert_eq!(s.uploads(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_failing_stream_falls_back_to_the_upload_for_that_utterance_without_a_word_in_the_chat() {
    let mut s = streaming(
        vec![Err(
            "Speech recognition (fake-stream) failed: the stream ended.",
        )],
        &["What time is it in Tokyo?"],
        "It is noon.",
    );
    let spoken = [phrase("what time is it in Tokyo"), silence(3.0)].concat();
    s.stage.speak(ALICE, &spoken).await;
    let t = s.answer().await;
    assert!(
        t.stt >= Duration::from_millis(300),
        "the upload's time: {t:?}"
    );
    assert_eq!(s.uploads(), 1, "uploaded once, at the pause");
    // The pause (0.2 s) + the stream's failure (0.1 s) + the upload (0.3 s): the
    // early commit as soon as the words are in, before the full 1.0 s.
    let commit = t.committed.duration_since(t.speech_end);
    assert!(
        commit <= Duration::from_millis(760) && t.recognised == t.committed,
        "the upload at the pause still commits early, words in hand: {commit:?}"
    );
    assert!(s.turns()[0].contains("What time is it in Tokyo?"));
    let posts = s.stage.side.posts.lock().unwrap().clone();
    assert!(
        posts.iter().all(|p| !p.contains("can't hear")),
        "nothing in the chat: {posts:?}"
    );

    // The next utterance streams again.
    s.script
        .lock()
        .unwrap()
        .push_back(Ok("And in Paris?".into()));
    s.stage
        .speak(ALICE, &[phrase("and in Paris"), silence(3.0)].concat())
        .await;
    assert_eq!(s.sessions().len(), 2);
    assert_eq!(s.uploads(), 1, "no second upload");
}

#[tokio::test(start_paused = true)]
async fn a_streamed_utterance_is_asked_for_its_words_after_100_ms_of_quiet_not_the_longer_short_pause(
) {
    let mut s = streaming(vec![Ok("What time is it in Tokyo?")], &[], "It is noon.");
    let spoken = [phrase("what time is it in Tokyo"), silence(3.0)].concat();
    s.stage.speak(ALICE, &spoken).await;
    let t = s.answer().await;
    let (asked, answered) = s.sessions()[0].asks[0];
    let pause = asked.duration_since(t.speech_end);
    assert!(
        pause >= Duration::from_millis(80) && pause <= Duration::from_millis(140),
        "asked at 100 ms of quiet (voice.early_pause is 200 ms): {pause:?}"
    );
    // The words 100 ms later: the model is asked 200 ms after the end of speech.
    assert!(answered.duration_since(t.speech_end) <= Duration::from_millis(240));
    assert_eq!(s.uploads(), 0);
}
