//! The voice room end to end at its boundary, with the real pieces around it: a phrase
//! spoken by espeak-ng goes in as 20 ms frames, the real recognizer and synthesizer
//! speak the OpenAI and ElevenLabs HTTP APIs to a loopback speech server, the real
//! model client streams SSE from the scripted model server, and 48 kHz frames come out.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kotoba::engine::Engine;
use kotoba::llm::OpenAiClient;
use kotoba::protocol::Origin;
use kotoba::soul::Soul;
use kotoba::speech::audio::{HEAR_FRAME, PLAY_FRAME};
use kotoba::speech::endpoint::EndpointSettings;
use kotoba::speech::{stt, tts};
use kotoba::store::Store;
use kotoba::tools::builtin::builtin_registry;
use kotoba::voice::boundary::{AudioOut, Heard};
use kotoba::voice::room::{self, Caption, RoomHandle, RoomParts, RoomSide, Trace};
use tokio::sync::mpsc;

use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::speech_server::{espeak_16k, SpeechServer};

#[derive(Default)]
struct Out {
    frames: Mutex<usize>,
}

impl AudioOut for Out {
    fn frame(&self, pcm: &[f32]) {
        assert_eq!(pcm.len(), PLAY_FRAME);
        *self.frames.lock().unwrap() += 1;
    }
    fn stop(&self) {}
}

#[derive(Default)]
struct Chat {
    posts: Mutex<Vec<String>>,
}

#[async_trait]
impl RoomSide for Chat {
    async fn post(&self, caption: Caption) {
        self.posts.lock().unwrap().push(caption.line());
    }
    fn name_of(&self, _user: u64) -> String {
        "Alice".into()
    }
    fn origin(&self, user: u64) -> Origin {
        Origin::Discord { user, owner: true }
    }
    fn author(&self, user: u64) -> String {
        format!("{} ({user})", self.name_of(user))
    }
    async fn before_turn(&self) {}
}

struct Voice {
    model: ScriptedModel,
    speech: SpeechServer,
    room: RoomHandle,
    out: Arc<Out>,
    chat: Arc<Chat>,
    traces: mpsc::UnboundedReceiver<Trace>,
    _home: tempfile::TempDir,
}

/// A room whose providers are `provider` (openai | elevenlabs) on the loopback.
async fn voice_room(provider: &str) -> Voice {
    let model = ScriptedModel::start().await;
    let speech = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let base = match provider {
        "elevenlabs" => speech.elevenlabs_base(),
        _ => speech.openai_base(),
    };
    std::fs::write(
        home.path().join("settings.yaml"),
        format!(
            "stt:\n  provider: {provider}\n  base_url: {base}\ntts:\n  provider: {provider}\n  base_url: {base}\n"
        ),
    )
    .unwrap();
    let config = model.config_with(
        home.path(),
        "responses",
        &[("ELEVENLABS_API_KEY", "test-xi-key")],
    );
    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let client = Arc::new(OpenAiClient::new(config.clone()));
    let engine = Engine::new(
        config.clone(),
        client,
        builtin_registry(),
        Soul::shipped(),
        store,
    );
    let out = Arc::new(Out::default());
    let chat = Arc::new(Chat::default());
    let (trace_tx, traces) = mpsc::unbounded_channel();
    let room = room::spawn(
        RoomParts {
            engine,
            session: "discord:900".into(),
            names: vec!["Kotoba".into()],
            recognizer: stt::recognizer(&config).unwrap(),
            synthesizer: tts::synthesizer(&config).unwrap(),
            out: out.clone(),
            side: chat.clone(),
            endpoint: EndpointSettings::default(),
            speculate: true,
            idle_leave: Duration::from_secs(300),
            trace: Some(trace_tx),
            realtime: None,
        },
        1,
    );
    Voice {
        model,
        speech,
        room,
        out,
        chat,
        traces,
        _home: home,
    }
}

impl Voice {
    /// `pcm` then `silence` seconds of silence from `user`, as fast as the room takes it
    /// (audio time is counted in frames, not on the wall clock).
    async fn utter(&self, user: u64, pcm: &[i16], silence: f64) {
        let mut all = pcm.to_vec();
        all.extend(std::iter::repeat_n(0i16, (silence * 16_000.0) as usize));
        for frame in all.chunks(HEAR_FRAME) {
            let mut frame = frame.to_vec();
            frame.resize(HEAR_FRAME, 0);
            self.room
                .heard
                .send(Heard {
                    frames: vec![(user, frame)],
                })
                .await
                .unwrap();
        }
    }
}

async fn a_spoken_question_round_trips(provider: &str) {
    let mut v = voice_room(provider).await;
    v.speech.push_transcript("what time is it");
    v.model.push(Reply::text("It is noon. Anything else?"));
    let phrase = espeak_16k("what time is it").await;
    v.utter(7, &phrase, 2.2).await;
    let trace = tokio::time::timeout(Duration::from_secs(20), v.traces.recv())
        .await
        .expect("she answered aloud in time")
        .expect("a trace");
    assert!(trace.first_frame.is_some());
    // Let the rest of the answer play out.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let reqs = v.speech.requests();
    let stt_req = reqs
        .iter()
        .find(|r| r.path.contains("transcri") || r.path.contains("speech-to-text"));
    let stt_req = stt_req.expect("recognition was asked");
    assert!(stt_req.has_auth(), "the key was sent");
    let tts_reqs: Vec<_> = reqs
        .iter()
        .filter(|r| r.path.contains("audio/speech") || r.path.contains("text-to-speech"))
        .collect();
    assert!(!tts_reqs.is_empty(), "synthesis was asked");
    assert!(*v.out.frames.lock().unwrap() > 10, "frames came out");
    let posts = v.chat.posts.lock().unwrap().clone();
    assert!(
        posts.iter().any(|p| p.contains("what time is it")),
        "a caption of what she heard: {posts:?}"
    );
    let said = v.model.requests();
    assert_eq!(said.len(), 1, "one turn");
    let body = said[0].to_string();
    assert!(
        body.contains("what time is it"),
        "the words reached the model: {body}"
    );
}

#[tokio::test]
async fn a_spoken_question_round_trips_through_openai_compatible_speech_providers() {
    a_spoken_question_round_trips("openai").await;
}

#[tokio::test]
async fn a_spoken_question_round_trips_through_elevenlabs() {
    a_spoken_question_round_trips("elevenlabs").await;
}

#[tokio::test]
async fn a_failing_recognition_provider_says_so_once_in_the_text_chat_and_the_room_stays_up() {
    let mut v = voice_room("openai").await;
    v.speech.fail(401, "Incorrect API key provided.");
    let phrase = espeak_16k("hello there").await;
    v.utter(7, &phrase, 2.2).await;
    v.utter(7, &phrase, 2.2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    v.speech.succeed();
    v.speech.push_transcript("hello there");
    v.model.push(Reply::text("Hi again."));
    v.utter(7, &phrase, 2.2).await;
    tokio::time::timeout(Duration::from_secs(20), v.traces.recv())
        .await
        .expect("the room is still up and answers")
        .expect("a trace");
    let posts = v.chat.posts.lock().unwrap().clone();
    let notices: Vec<_> = posts.iter().filter(|p| p.contains("401")).collect();
    assert_eq!(notices.len(), 1, "{posts:?}");
    assert!(!notices[0].contains("test-key"), "no key in the notice");
}
