//! The realtime speech-to-speech session (`voice_mode: realtime`) against the loopback
//! speech server's realtime conversation: the session it asks for, an utterance heard
//! and answered in audio, a consult called and its answer said, a barge-in cancelling
//! the answer, a dropped socket and a refused key as one sentence each without the key,
//! and an announce asked while an answer runs said after it, whole (one response at a
//! time, as OpenAI's server requires).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kotoba::config::Config;
use kotoba::speech::realtime_voice::{
    RealtimeConfig, RealtimeError, RealtimeEvent, RealtimeSession, CONSULT,
};
use tokio::sync::mpsc::UnboundedReceiver;

use kotoba_testkit::speech_server::{Converse, SpeechServer};

/// The realtime settings pointing at `server`, with `key` in OPENAI_API_KEY.
fn config(home: &Path, server: &SpeechServer, key: &str) -> RealtimeConfig {
    let yaml = format!(
        "voice_mode: realtime\nrealtime:\n  base_url: {}\n  voice: cedar\n",
        server.openai_base()
    );
    std::fs::write(home.join("settings.yaml"), yaml).unwrap();
    let config: Arc<Config> = Config::for_home(home, &[("OPENAI_API_KEY", key)]);
    RealtimeConfig::from_settings(&config, &config.settings().voice).unwrap()
}

/// A session on `server` (OPENAI_API_KEY `rt-key`), once it is set up.
async fn open_ready(
    server: &SpeechServer,
    home: &Path,
) -> (RealtimeSession, UnboundedReceiver<RealtimeEvent>) {
    let cfg = config(home, server, "rt-key");
    let (session, mut rx) = RealtimeSession::open(&cfg, "You are Kotoba.")
        .await
        .unwrap();
    events_until(&mut rx, |e| *e == RealtimeEvent::Ready).await;
    (session, rx)
}

/// 16 kHz: `ms` of a loud tone, then `quiet_ms` of silence.
fn utterance(ms: usize, quiet_ms: usize) -> Vec<i16> {
    let loud = (0..ms * 16).map(|i| ((i % 32) as i16 - 16) * 600);
    loud.chain(std::iter::repeat_n(0, quiet_ms * 16)).collect()
}

/// Feed `pcm` in 20 ms ticks, as the room does.
async fn speak(session: &RealtimeSession, pcm: &[i16]) {
    for tick in pcm.chunks(320) {
        session.append(tick);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Events until `until` matches one (≤ 10 s); all of them, that one last.
async fn events_until(
    rx: &mut UnboundedReceiver<RealtimeEvent>,
    until: impl Fn(&RealtimeEvent) -> bool,
) -> Vec<RealtimeEvent> {
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no such event; saw {seen:?}"))
            .unwrap_or_else(|| panic!("the session ended; saw {seen:?}"));
        let done = until(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

fn audio_samples(events: &[RealtimeEvent]) -> usize {
    events
        .iter()
        .map(|e| match e {
            RealtimeEvent::Audio(a) => a.len(),
            _ => 0,
        })
        .sum()
}

#[tokio::test]
async fn a_realtime_session_asks_for_speech_to_speech_with_server_vad_her_voice_and_the_consult() {
    let server = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let cfg = config(home.path(), &server, "rt-key");
    assert!(
        cfg.url().ends_with("/v1/realtime?model=gpt-realtime"),
        "{}",
        cfg.url()
    );
    let (_session, mut rx) = RealtimeSession::open(&cfg, "You are Kotoba.")
        .await
        .unwrap();
    events_until(&mut rx, |e| *e == RealtimeEvent::Ready).await;
    let seen = &server.converse_sessions()[0];
    assert_eq!(seen.authorization.as_deref(), Some("Bearer rt-key"));
    assert_eq!(seen.query.as_deref(), Some("model=gpt-realtime"));
    let s = &seen.session;
    assert_eq!(s["instructions"], "You are Kotoba.");
    assert_eq!(s["audio"]["output"]["voice"], "cedar");
    assert_eq!(s["audio"]["input"]["turn_detection"]["type"], "server_vad");
    assert_eq!(
        s["audio"]["input"]["turn_detection"]["interrupt_response"],
        true
    );
    let tools = s["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "one function: {tools:?}");
    assert_eq!(tools[0]["name"], CONSULT);
    assert_eq!(tools[0]["parameters"]["required"][0], "request");
}

#[tokio::test]
async fn an_utterance_is_heard_at_24_khz_and_answered_with_her_audio_and_words() {
    let server = SpeechServer::start().await;
    server.push_exchange("hello there", Converse::Say("Hi! Good to hear you.".into()));
    let home = tempfile::tempdir().unwrap();
    let (session, mut rx) = open_ready(&server, home.path()).await;
    speak(&session, &utterance(600, 500)).await;
    let events = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Done { .. })).await;
    assert!(events.contains(&RealtimeEvent::SpeechStarted), "{events:?}");
    assert!(events
        .iter()
        .any(|e| matches!(e, RealtimeEvent::SpeechStopped { .. })));
    assert!(events.contains(&RealtimeEvent::Heard("hello there".into())));
    assert!(events.contains(&RealtimeEvent::Words("Hi! Good to hear you.".into())));
    assert_eq!(
        events.last(),
        Some(&RealtimeEvent::Done {
            status: "completed".into()
        })
    );
    // Her whole answer came: a tone as long as the words, at 24 kHz.
    let want = kotoba_testkit::speech_server::tone("Hi! Good to hear you.", 24_000).len();
    assert_eq!(audio_samples(&events), want);
    // The 1.1 s heard at 16 kHz went up as 24 kHz (within the resampler's latency).
    let up = server.converse_sessions()[0].samples;
    assert!((26_000..=26_400).contains(&up), "{up} samples at 24 kHz");
}

#[tokio::test]
async fn a_consult_call_comes_out_with_its_request_and_its_answer_is_said() {
    let server = SpeechServer::start().await;
    server.push_exchange(
        "is the build green",
        Converse::Call {
            name: CONSULT.into(),
            arguments: r#"{"request":"is the build green?"}"#.into(),
        },
    );
    let home = tempfile::tempdir().unwrap();
    let (session, mut rx) = open_ready(&server, home.path()).await;
    speak(&session, &utterance(500, 400)).await;
    let events = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Consult { .. })).await;
    let Some(RealtimeEvent::Consult { call_id, request }) = events.last().cloned() else {
        unreachable!()
    };
    assert_eq!(request, "is the build green?");
    session.answer(&call_id, "Yes, all 12 checks passed.");
    events_until(
        &mut rx,
        |e| matches!(e, RealtimeEvent::Words(w) if w == "Yes, all 12 checks passed."),
    )
    .await;
    let after = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Done { .. })).await;
    assert!(
        audio_samples(&after) > 0,
        "the answer is said aloud: {after:?}"
    );
    let seen = &server.converse_sessions()[0];
    assert_eq!(
        seen.outputs,
        vec![(call_id, "Yes, all 12 checks passed.".to_string())]
    );
}

#[tokio::test]
async fn speech_over_her_answer_cancels_it_and_the_next_utterance_is_answered() {
    let server = SpeechServer::start().await;
    let long = "This is a long answer that goes on and on about many things, \
                far longer than anyone would want to sit through in a call.";
    server.push_exchange("tell me everything", Converse::Say(long.into()));
    server.push_exchange("stop, what time is it", Converse::Say("It is noon.".into()));
    let home = tempfile::tempdir().unwrap();
    let (session, mut rx) = open_ready(&server, home.path()).await;
    speak(&session, &utterance(500, 400)).await;
    events_until(&mut rx, |e| matches!(e, RealtimeEvent::Audio(_))).await;
    // Over her answer: the server hears speech start and cancels the response.
    speak(&session, &utterance(500, 0)).await;
    let cut = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Done { .. })).await;
    assert!(cut.contains(&RealtimeEvent::SpeechStarted), "{cut:?}");
    assert_eq!(
        cut.last(),
        Some(&RealtimeEvent::Done {
            status: "cancelled".into()
        })
    );
    speak(&session, &utterance(0, 400)).await;
    let next = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Done { .. })).await;
    assert!(
        next.contains(&RealtimeEvent::Words("It is noon.".into())),
        "{next:?}"
    );
    let responses = &server.converse_sessions()[0].responses;
    assert_eq!(responses[0].0, "cancelled");
    assert_eq!(responses[1].0, "completed");
}

#[tokio::test]
async fn a_dropped_socket_and_a_refused_key_are_one_sentence_each_without_the_key() {
    let server = SpeechServer::start().await;
    server.drop_next_utterance();
    let home = tempfile::tempdir().unwrap();
    let (session, mut rx) = open_ready(&server, home.path()).await;
    speak(&session, &utterance(500, 400)).await;
    let end = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Closed(_))).await;
    let Some(RealtimeEvent::Closed(Some(e))) = end.last() else {
        panic!("closed with a reason: {end:?}")
    };
    assert!(matches!(e, RealtimeError::Dropped(_)), "{e:?}");
    assert!(e
        .to_string()
        .starts_with("Realtime voice (openai) lost its connection"));

    server.require_key("the-right-key");
    let err = RealtimeSession::open(&config(home.path(), &server, "sk-wrong-key-123"), "x")
        .await
        .err()
        .expect("refused");
    let text = err.to_string();
    assert!(
        text.starts_with("Realtime voice (openai) could not connect"),
        "{text}"
    );
    assert!(!text.contains("sk-wrong-key-123"), "{text}");

    // No key for OpenAI's own service: the variable to set.
    std::fs::write(home.path().join("settings.yaml"), "voice_mode: realtime\n").unwrap();
    let bare = Config::for_home(home.path(), &[("KOTOBA_TEST_NOTHING", "x")]);
    let mut s = bare.settings().voice;
    s.realtime_api_key_env = "KOTOBA_TEST_REALTIME_KEY_NEVER_SET".into();
    let err = RealtimeConfig::from_settings(&bare, &s).unwrap_err();
    assert!(
        err.to_string()
            .contains("set KOTOBA_TEST_REALTIME_KEY_NEVER_SET"),
        "{err}"
    );
}

#[tokio::test]
async fn an_announce_asked_while_her_session_still_answers_waits_for_that_answer_and_is_said_whole_after_it(
) {
    let server = SpeechServer::start().await;
    server.push_exchange("yes go ahead", Converse::Say("Okay, doing it now.".into()));
    // The server has decided its answer at the end of speech and says it 400 ms later:
    // a response is in progress all that time, as with OpenAI's model latency.
    server.set_converse_delay(Duration::from_millis(400));
    let home = tempfile::tempdir().unwrap();
    let (session, mut rx) = open_ready(&server, home.path()).await;
    speak(&session, &utterance(600, 500)).await;
    events_until(&mut rx, |e| {
        *e == RealtimeEvent::Heard("yes go ahead".into())
    })
    .await;
    // The result of what the person approved comes in now, while the answer runs.
    session.say("Your notes file is made.");
    let first = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Done { .. })).await;
    let second = events_until(&mut rx, |e| matches!(e, RealtimeEvent::Done { .. })).await;
    let words = |events: &[RealtimeEvent]| -> String {
        events
            .iter()
            .filter_map(|e| match e {
                RealtimeEvent::Words(w) => Some(w.as_str()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(words(&first), "Okay, doing it now.", "{first:?}");
    assert_eq!(words(&second), "Your notes file is made.", "{second:?}");
    for done in [first.last(), second.last()] {
        assert_eq!(
            done,
            Some(&RealtimeEvent::Done {
                status: "completed".into()
            })
        );
    }
    assert!(
        !second.iter().any(|e| matches!(e, RealtimeEvent::Closed(_))),
        "the session stays open: {second:?}"
    );
    let s = &server.converse_sessions()[0];
    assert_eq!(s.said_as_is, ["Your notes file is made."], "said once");
    // Sent before the server said its answer had begun, it was refused once and sent
    // again after it; never more.
    assert!(s.refused_creates <= 1, "{} refused", s.refused_creates);
}
