//! Streamed recognition against the loopback speech server's realtime WebSocket
//! (OpenAI's `/v1/realtime?intent=transcription`): the session it asks for, the audio
//! as base64 pcm16 at 24 kHz, a commit at each pause and at the end, the words joined
//! in order, `stt.streaming` choosing it, and every failure one sentence without the
//! key (the room then falls back to the batch upload).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kotoba::config::Config;
use kotoba::speech::stt::{recognizer, Recognizer};

use kotoba_testkit::speech_server::{SpeechServer, StreamFault};

fn stt(home: &Path, yaml: &str, env: &[(&str, &str)]) -> Arc<dyn Recognizer> {
    std::fs::write(home.join("settings.yaml"), yaml).unwrap();
    recognizer(&Config::for_home(home, env)).unwrap()
}

fn streaming(server: &SpeechServer, home: &Path) -> Arc<dyn Recognizer> {
    let yaml = format!(
        "stt.provider: openai\nstt.base_url: {}\nstt.streaming: on\nstt.language: en\n",
        server.openai_base()
    );
    stt(home, &yaml, &[("OPENAI_API_KEY", "test-key")])
}

/// `ms` of a 16 kHz tone in 20 ms frames.
fn frames(ms: usize) -> Vec<Vec<i16>> {
    (0..ms / 20)
        .map(|_| (0..320).map(|i| ((i % 40) * 400 - 8000) as i16).collect())
        .collect()
}

#[tokio::test]
async fn a_streamed_utterance_goes_up_as_24_khz_pcm16_and_commits_at_the_pause_and_at_the_end() {
    let server = SpeechServer::start().await;
    server.push_transcript(" I want to ");
    server.push_transcript("book a table.");
    let home = tempfile::tempdir().unwrap();
    let r = streaming(&server, home.path());
    let stream = r.stream().expect("stt.streaming: on streams");
    assert_eq!(stream.provider(), "openai");

    for f in frames(1000) {
        stream.push(&f);
    }
    assert_eq!(stream.words().await.unwrap(), "I want to");
    for f in frames(500) {
        stream.push(&f);
    }
    assert_eq!(stream.finish().await.unwrap(), "I want to book a table.");

    let sessions = server.stream_sessions();
    assert_eq!(sessions.len(), 1, "one session per utterance");
    let s = &sessions[0];
    assert_eq!(s.query.as_deref(), Some("intent=transcription"));
    assert_eq!(s.authorization.as_deref(), Some("Bearer test-key"));
    assert_eq!(s.session["type"], "transcription");
    let input = &s.session["audio"]["input"];
    assert_eq!(input["format"]["type"], "audio/pcm");
    assert_eq!(input["format"]["rate"], 24_000);
    assert_eq!(input["transcription"]["model"], "gpt-4o-mini-transcribe");
    assert_eq!(input["transcription"]["language"], "en");
    assert!(input["turn_detection"].is_null(), "the client commits");
    // 1 s and 0.5 s at 16 kHz are 1 s and 0.5 s at 24 kHz.
    assert_eq!(s.commits, vec![24_000, 12_000]);
    assert!(server.requests().is_empty(), "no batch upload");
}

#[tokio::test]
async fn the_words_at_a_pause_are_the_words_at_the_commit_when_nothing_was_said_since() {
    let server = SpeechServer::start().await;
    server.push_transcript("What time is it?");
    server.push_transcript("this would be a second recognition");
    let home = tempfile::tempdir().unwrap();
    let stream = streaming(&server, home.path()).stream().unwrap();
    for f in frames(800) {
        stream.push(&f);
    }
    assert_eq!(stream.words().await.unwrap(), "What time is it?");
    assert_eq!(stream.finish().await.unwrap(), "What time is it?");
    let commits = &server.stream_sessions()[0].commits;
    assert_eq!(commits.len(), 1, "nothing new to recognise at the end");
}

#[tokio::test]
async fn only_quiet_heard_since_the_pause_is_not_committed_so_the_end_waits_for_no_recognition() {
    let server = SpeechServer::start().await;
    server.push_transcript("What time is it?");
    server.push_transcript("this would be a second recognition");
    let home = tempfile::tempdir().unwrap();
    let stream = streaming(&server, home.path()).stream().unwrap();
    for f in frames(800) {
        stream.push(&f);
    }
    assert_eq!(stream.words().await.unwrap(), "What time is it?");
    // The quiet after the pause goes up as heard (the utterance's tail)…
    for _ in 0..5 {
        stream.push(&[0i16; 320]);
    }
    assert_eq!(stream.finish().await.unwrap(), "What time is it?");
    let s = &server.stream_sessions()[0];
    // A second segment would be a second recognition waited for.
    assert_eq!(s.commits.len(), 1, "…but is not a segment: {:?}", s.commits);
}

#[tokio::test]
async fn a_segment_under_100_ms_is_padded_with_silence_so_the_commit_is_accepted() {
    let server = SpeechServer::start().await;
    server.push_transcript("Hi.");
    let home = tempfile::tempdir().unwrap();
    let stream = streaming(&server, home.path()).stream().unwrap();
    for f in frames(40) {
        stream.push(&f);
    }
    assert_eq!(stream.finish().await.unwrap(), "Hi.");
    assert_eq!(server.stream_sessions()[0].commits, vec![2400]);
}

#[tokio::test]
async fn a_refused_dropped_or_failing_stream_is_one_sentence_naming_the_provider_never_the_key() {
    let secret = "sk-stream-secret-7777";
    for (fault, want) in [
        (StreamFault::Refuse, "could not connect to ws://127.0.0.1:"),
        (StreamFault::Drop, "the connection"),
        (
            StreamFault::Error,
            "the stream reported: The server had an error.",
        ),
    ] {
        let server = SpeechServer::start().await;
        server.set_stream_fault(Some(fault));
        let home = tempfile::tempdir().unwrap();
        let yaml = format!(
            "stt.provider: openai\nstt.base_url: {}\nstt.streaming: on\n",
            server.openai_base()
        );
        let stream = stt(home.path(), &yaml, &[("OPENAI_API_KEY", secret)])
            .stream()
            .unwrap();
        for f in frames(300) {
            stream.push(&f);
        }
        let e = stream.words().await.unwrap_err();
        assert!(
            e.0.starts_with("Speech recognition (openai) failed: ") && e.0.contains(want),
            "{fault:?}: {e}"
        );
        assert!(!e.0.contains('\n') && e.0.ends_with('.'), "{e}");
        assert!(!format!("{e} {e:?}").contains(secret), "{e}");
        // Every later question gets the failure too, at once.
        assert!(stream.finish().await.is_err());
    }
}

#[tokio::test]
async fn a_wrong_key_is_refused_at_the_upgrade_and_the_failure_hides_it() {
    let server = SpeechServer::start().await;
    server.require_key("the-right-key");
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt.provider: openai\nstt.base_url: {}\nstt.streaming: on\n",
        server.openai_base()
    );
    let secret = "wrong-stream-key-31337";
    let stream = stt(home.path(), &yaml, &[("OPENAI_API_KEY", secret)])
        .stream()
        .unwrap();
    stream.push(&frames(100).concat());
    let e = stream.finish().await.unwrap_err();
    assert!(
        e.0.starts_with("Speech recognition (openai) failed:"),
        "{e}"
    );
    assert!(!e.0.contains(secret), "{e}");
}

#[tokio::test]
async fn streaming_is_chosen_by_stt_streaming_auto_only_on_openais_own_host() {
    let server = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let base = server.openai_base();
    let local = |mode: &str| {
        let yaml = format!("stt.provider: openai\nstt.base_url: {base}\n{mode}");
        stt(home.path(), &yaml, &[]).stream().is_some()
    };
    assert!(
        !local(""),
        "auto: a local base is not OpenAI's realtime service"
    );
    assert!(local("stt.streaming: on\n"));
    assert!(!local("stt.streaming: off\n"));
    let own = |mode: &str| {
        let yaml = format!("stt.provider: openai\n{mode}");
        stt(home.path(), &yaml, &[("OPENAI_API_KEY", "k")])
            .stream()
            .is_some()
    };
    assert!(own(""), "auto streams to api.openai.com");
    assert!(!own("stt.streaming: off\n"));
    let eleven = format!(
        "stt.provider: elevenlabs\nstt.base_url: {}\nstt.streaming: on\n",
        server.elevenlabs_base()
    );
    assert!(
        stt(home.path(), &eleven, &[]).stream().is_none(),
        "the batch path for providers without a stream"
    );
}

#[tokio::test]
async fn after_a_failed_stream_utterances_are_uploaded_for_a_minute_before_streaming_again() {
    let server = SpeechServer::start().await;
    server.set_stream_fault(Some(StreamFault::Refuse));
    let home = tempfile::tempdir().unwrap();
    let r = streaming(&server, home.path());
    let stream = r.stream().unwrap();
    stream.push(&frames(200).concat());
    assert!(stream.finish().await.is_err());
    server.set_stream_fault(None);
    assert!(r.stream().is_none(), "resting: the upload only");
    tokio::time::pause();
    tokio::time::advance(kotoba::speech::stt::STREAM_REST - Duration::from_secs(1)).await;
    assert!(r.stream().is_none(), "still resting");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(r.stream().is_some(), "a minute later it streams again");
}
