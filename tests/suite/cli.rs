//! The `kotoba` binary as a person uses it: `kotoba chat` over a pipe against the
//! scripted model server, and `kotoba doctor`.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use kotoba_testkit::model_server::{Reply, ScriptedModel};

pub(super) fn kotoba(server: &ScriptedModel, home: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kotoba"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home)
        .env("KOTOBA_LLM_BASE_URL", server.base_url())
        // Speech at loopback too: the doctor asks each provider's server.
        .env("KOTOBA_STT_BASE_URL", server.base_url())
        .env("KOTOBA_TTS_BASE_URL", server.base_url())
        .env("KOTOBA_LLM_API", "chat")
        .env("KOTOBA_REASONING_EFFORT", "off")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Read the child's stdout until it contains `needle` (or 20 s pass).
pub(super) async fn read_until(child: &mut Child, seen: &mut String, needle: &str) {
    let out = child.stdout.as_mut().unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut buf = [0u8; 4096];
    while !seen.contains(needle) {
        let n = tokio::time::timeout_at(deadline, out.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} in output: {seen}"))
            .unwrap();
        if n == 0 {
            panic!("output ended without {needle:?}: {seen}");
        }
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

/// `kotoba chat --session <session>` opened again in `home`: the child and what it
/// printed up to its prompt (the earlier lines it redraws come first).
pub(super) async fn resumed(
    server: &ScriptedModel,
    home: &std::path::Path,
    session: &str,
) -> (Child, String) {
    let mut again = kotoba(server, home, &["chat", "--session", session])
        .spawn()
        .unwrap();
    let mut seen = String::new();
    read_until(&mut again, &mut seen, "Kotoba is listening").await;
    (again, seen)
}

#[tokio::test]
async fn kotoba_chat_streams_her_answer_to_the_terminal() {
    let server = ScriptedModel::start().await;
    server.push(Reply::text("Hello from the loopback model."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hi there\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "Hello from the loopback model.").await;
    drop(stdin);
    let status = child.wait().await.unwrap();
    assert!(status.success());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_terminal_shows_the_face_her_answer_asks_for_and_nothing_for_a_calm_one() {
    let server = ScriptedModel::start().await;
    server.push(Reply::text("Oops, I mixed those up."));
    server.push(Reply::text("Here it is, all fixed."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"you swapped them\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "😅 embarrassed").await;
    stdin.write_all(b"thanks\n").await.unwrap();
    read_until(&mut child, &mut seen, "all fixed.").await;
    drop(stdin);
    assert!(child.wait().await.unwrap().success());
    let after = seen.split("all fixed.").nth(1).unwrap_or_default();
    assert!(
        !after.contains("calm") && !after.contains("🙂"),
        "a calm answer adds no face line: {seen:?}"
    );
}

#[tokio::test]
async fn a_card_is_answered_at_the_keyboard_and_the_command_runs() {
    let server = ScriptedModel::start().await;
    server.push(Reply::call(
        "shell",
        json!({"command": "echo approved-and-ran | tee ran.txt"}),
    ));
    server.push(Reply::text("It printed the words."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"run the echo\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "[y]es").await;
    assert!(
        seen.contains("echo approved-and-ran | tee ran.txt"),
        "the card shows the exact command: {seen}"
    );
    stdin.write_all(b"y\n").await.unwrap();
    read_until(&mut child, &mut seen, "It printed the words.").await;
    assert!(
        seen.contains("✓ $ echo approved-and-ran | tee ran.txt"),
        "{seen}"
    );
    drop(stdin);
    child.wait().await.unwrap();
}

#[tokio::test]
async fn at_the_keyboard_n_takes_a_reason_e_edits_the_line_and_an_unclear_answer_changes_nothing() {
    let server = ScriptedModel::start().await;
    server.push(Reply::call("shell", json!({"command": "touch first.txt"})));
    server.push(Reply::text("Held off."));
    server.push(Reply::call("shell", json!({"command": "touch second.txt"})));
    server.push(Reply::text("Made your version."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"make the first file\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "[e]dit").await;
    stdin.write_all(b"perhaps\n").await.unwrap();
    read_until(
        &mut child,
        &mut seen,
        "is not an answer; the card still waits",
    )
    .await;
    stdin.write_all(b"n not in this folder\n").await.unwrap();
    read_until(&mut child, &mut seen, "Held off.").await;
    let told = server.requests().last().unwrap().to_string();
    assert!(told.contains("not in this folder"), "{told}");
    seen.clear();
    stdin.write_all(b"make the second file\n").await.unwrap();
    read_until(&mut child, &mut seen, "[e]dit").await;
    stdin.write_all(b"e\n").await.unwrap();
    read_until(&mut child, &mut seen, "Type the line as it should run").await;
    stdin.write_all(b"touch edited.txt\n").await.unwrap();
    read_until(&mut child, &mut seen, "Made your version.").await;
    assert!(seen.contains("✓ $ touch edited.txt"), "{seen}");
    drop(stdin);
    child.wait().await.unwrap();
    let workspace = home.path().join("workspace");
    assert!(workspace.join("edited.txt").exists());
    assert!(!workspace.join("first.txt").exists() && !workspace.join("second.txt").exists());
}

#[tokio::test]
async fn stop_with_an_argument_answers_the_word_instead_of_acting() {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"/stop 2\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "was not acted on").await;
    drop(stdin);
    child.wait().await.unwrap();
    assert_eq!(server.requests().len(), 0, "nothing reached the model");
}

#[tokio::test]
async fn doctor_names_the_missing_key_without_printing_any_secret() {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let out = kotoba(&server, home.path(), &["doctor"])
        .env("OPENAI_API_KEY", "sk-secret-value")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("OPENAI_API_KEY is set"), "{text}");
    assert!(text.contains("model server:   answers"), "{text}");
    assert!(
        !text.contains("CompanionCaps") && !text.contains("Responses API"),
        "readable: {text}"
    );
    assert!(!text.contains("sk-secret-value"));
    let out = kotoba(&server, home.path(), &["doctor"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("KOTOBA_LLM_BASE_URL")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("missing:") && text.contains("set OPENAI_API_KEY"),
        "{text}"
    );
    assert!(
        text.contains("model server:   not asked until the key below is set"),
        "OpenAI's own service is not asked without a key: {text}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "something needed is missing: {text}"
    );
}

#[tokio::test]
async fn doctor_says_when_the_model_server_cannot_be_reached_and_exits_non_zero() {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let out = kotoba(&server, home.path(), &["doctor"])
        .env("KOTOBA_LLM_BASE_URL", &url)
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("model server:   NOT reached"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}

#[tokio::test]
async fn doctor_says_how_she_will_hear_and_speak_and_that_espeak_stands_in_without_a_key() {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let out = kotoba(&server, home.path(), &["doctor"])
        .env("OPENAI_API_KEY", "sk-secret-value")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("voice hearing:  openai (ready)"), "{text}");
    assert!(text.contains("voice speaking: openai (ready)"), "{text}");
    assert!(!text.contains("sk-secret-value"));
    // OpenAI's own service (the default base) needs the key; without it nothing is asked.
    let out = kotoba(&server, home.path(), &["doctor"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("KOTOBA_STT_BASE_URL")
        .env_remove("KOTOBA_TTS_BASE_URL")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("voice hearing:  openai — ") && text.contains("set OPENAI_API_KEY"),
        "{text}"
    );
    assert!(text.contains("voice speaking: espeak stands in"), "{text}");
}

#[tokio::test]
async fn with_voice_mode_realtime_doctor_opens_a_realtime_session_and_names_a_refused_key() {
    use kotoba_testkit::speech_server::SpeechServer;
    let server = ScriptedModel::start().await;
    let speech = SpeechServer::start().await;
    speech.require_key("realtime-key");
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.yaml"),
        format!(
            "voice_mode: realtime\nrealtime:\n  base_url: {}\n  api_key_env: REALTIME_KEY\n",
            speech.openai_base()
        ),
    )
    .unwrap();
    let realtime_line = |out: &std::process::Output| -> String {
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            !text.contains("realtime-key") && !text.contains("wrong-key"),
            "{text}"
        );
        assert!(
            out.status.success(),
            "voice does not fail the doctor: {text}"
        );
        text.lines()
            .find(|l| l.starts_with("realtime voice:"))
            .unwrap_or_else(|| panic!("no realtime voice line: {text}"))
            .to_string()
    };
    let refused = kotoba(&server, home.path(), &["doctor"])
        .env("REALTIME_KEY", "wrong-key")
        .output()
        .await
        .unwrap();
    let line = realtime_line(&refused);
    assert!(
        line.contains("NOT reached") && line.contains("401"),
        "a refused key is said: {line}"
    );
    let ready = kotoba(&server, home.path(), &["doctor"])
        .env("REALTIME_KEY", "realtime-key")
        .output()
        .await
        .unwrap();
    let line = realtime_line(&ready);
    assert!(
        line.contains("gpt-realtime (ready)") && line.contains("/v1/realtime?model=gpt-realtime"),
        "{line}"
    );
    let sessions = speech.converse_sessions();
    assert_eq!(
        sessions.len(),
        1,
        "one session opened, with the key it takes"
    );
    assert_eq!(
        sessions[0].authorization.as_deref(),
        Some("Bearer realtime-key")
    );
    assert_eq!(sessions[0].session["type"], "realtime", "and set up");
    assert_eq!(sessions[0].samples, 0, "nothing was said to it");
    // Without realtime voice there is no such line.
    std::fs::remove_file(home.path().join("settings.yaml")).unwrap();
    let out = kotoba(&server, home.path(), &["doctor"])
        .output()
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("realtime voice:"));
}

#[tokio::test]
async fn doctor_asks_each_speech_providers_server_whether_it_answers_and_takes_the_key() {
    use kotoba_testkit::speech_server::SpeechServer;
    let server = ScriptedModel::start().await;
    let speech = SpeechServer::start().await;
    speech.require_key("speech-key");
    let home = tempfile::tempdir().unwrap();
    let voice_line = |text: &str, label: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line: {text}"))
            .to_string()
    };
    // Hearing at an OpenAI-compatible server that refuses OPENAI_API_KEY's value;
    // speaking at ElevenLabs with the key it wants.
    let out = kotoba(&server, home.path(), &["doctor"])
        .env("KOTOBA_STT_PROVIDER", "openai")
        .env("KOTOBA_STT_BASE_URL", speech.openai_base())
        .env("KOTOBA_TTS_PROVIDER", "elevenlabs")
        .env("KOTOBA_TTS_BASE_URL", speech.elevenlabs_base())
        .env("ELEVENLABS_API_KEY", "speech-key")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let hearing = voice_line(&text, "voice hearing:");
    assert!(
        hearing.contains("openai — NOT reached")
            && hearing.contains("HTTP 401")
            && hearing.contains("OPENAI_API_KEY"),
        "the refused key is named: {hearing}"
    );
    assert!(
        !text.contains("test-key") && !text.contains("speech-key"),
        "no key is printed, not even one the server repeats: {text}"
    );
    let speaking = voice_line(&text, "voice speaking:");
    assert_eq!(
        speaking,
        format!(
            "voice speaking: elevenlabs (ready) — its server answers at {}/v1/models",
            speech.elevenlabs_base()
        )
    );
    assert!(
        out.status.success(),
        "voice is not needed for text, so it does not fail the doctor: {text}"
    );
    let asked: Vec<_> = speech
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/models")
        .collect();
    assert!(
        asked
            .iter()
            .any(|r| r.xi_api_key.as_deref() == Some("speech-key"))
            && asked
                .iter()
                .any(|r| r.authorization.as_deref() == Some("Bearer test-key")),
        "each provider was asked with its own key, as it takes it: {asked:?}"
    );

    // A hearing server that is not there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let out = kotoba(&server, home.path(), &["doctor"])
        .env("KOTOBA_STT_BASE_URL", &gone)
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let hearing = voice_line(&text, "voice hearing:");
    assert!(
        hearing.contains("NOT reached") && hearing.contains("could not connect"),
        "{hearing}"
    );
    let speaking = voice_line(&text, "voice speaking:");
    assert!(
        speaking.contains("openai (ready) — its server answers"),
        "the loopback model server answers for speaking: {speaking}"
    );
}

#[tokio::test]
async fn doctor_says_how_much_of_the_window_is_left_for_the_conversation() {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let room = |text: &str| -> (u64, u64) {
        let line = text
            .lines()
            .find(|l| l.starts_with("context:"))
            .unwrap_or_else(|| panic!("no context line: {text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let n = |after: &str| {
            let at = words.iter().position(|w| *w == after).unwrap();
            words[at + 1].trim_end_matches(';').parse::<u64>().unwrap()
        };
        (n("window"), n("take"))
    };
    // `kotoba doctor`'s report with settings.yaml's window at `window`.
    let doctor = |window: u64| {
        let path = home.path().join("settings.yaml");
        std::fs::write(path, format!("context:\n  window: {window}\n")).unwrap();
        let mut cmd = kotoba(&server, home.path(), &["doctor"]);
        async move {
            let out = cmd.output().await.unwrap();
            String::from_utf8_lossy(&out.stdout).to_string()
        }
    };
    let text = doctor(50_000).await;
    let (window, fixed) = room(&text);
    assert_eq!(window, 50_000, "{text}");
    assert!(fixed > 200 && fixed < 40_000, "{text}");
    let left = 40_000 - fixed;
    assert!(
        text.contains(&format!("{left} left for the conversation")),
        "{text}"
    );
    assert!(!text.contains("little room"), "{text}");
    // A window the instructions nearly fill is called out.
    let text = doctor(fixed + 300).await;
    assert!(text.contains("little room is left"), "{text}");
}

#[tokio::test]
async fn kotoba_chat_settings_lists_the_live_keys_with_the_work_caps_under_advanced_and_no_companion_cap(
) {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("settings.yaml"), "work_max_iter: 12\n").unwrap();
    let out = kotoba(&server, home.path(), &["chat", "--settings"])
        .env("KOTOBA_MAX_TOOL_CALLS", "5")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let general = text.find("Settings:\n").expect("the general keys");
    let work = text.find("Advanced (work):\n").expect("the work caps");
    assert!(general < work, "{text}");
    for line in [
        "  work_max_iter: 12",
        "  work_max_tool_calls: 40",
        "  work_fail_limit: 6",
        "  work_timeout: 3600",
    ] {
        assert!(text[work..].contains(line), "{line} in {text}");
    }
    assert!(text[..work].contains("  model: "), "{text}");
    assert!(!text.contains("KOTOBA_MAX_TOOL_CALLS") && !text.contains("  max_tool_calls"));
    assert_eq!(server.requests().len(), 0, "no turn runs");
}

#[tokio::test]
async fn a_jobs_question_card_takes_the_typed_line_as_the_answer_not_a_yes_or_no() {
    let server = ScriptedModel::start().await;
    server.push(Reply::call(
        "start_work",
        json!({"goal": "push the branch"}),
    ));
    // The conversation and the job ask the model in an order of their own: the job's
    // first request (its brief) is answered with the question, whenever it comes.
    let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    server.set_responder(Arc::new(move |body: &Value| {
        let brief = body.to_string().contains("Goal of this background job");
        let first = !asked.load(std::sync::atomic::Ordering::SeqCst);
        let answered = body.to_string().contains("They answered");
        (brief && first && !answered).then(|| {
            asked.store(true, std::sync::atomic::Ordering::SeqCst);
            let question = json!({"question": "Which branch should I push?"});
            (Reply::call("clarify", question), Duration::ZERO)
        })
    }));
    server.set_fallback(Reply::text("All set."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"push my branch\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "type your answer").await;
    assert!(seen.contains("Which branch should I push?"), "{seen}");
    assert!(
        !seen.contains("[y]es"),
        "a question is not an approval: {seen}"
    );
    stdin.write_all(b"release/2.4 please\n").await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let answered = loop {
        let hit = server
            .requests()
            .iter()
            .any(|r| r.to_string().contains("They answered: release/2.4 please"));
        if hit || tokio::time::Instant::now() > deadline {
            break hit;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        answered,
        "the job's next request carries the typed line verbatim"
    );
    drop(stdin);
    let _ = child.kill().await;
}

#[tokio::test]
async fn with_no_home_and_no_kotoba_home_she_stops_with_one_sentence_and_guesses_no_folder() {
    let cwd = tempfile::tempdir().unwrap();
    for args in [&["doctor"][..], &["serve"][..], &["chat"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_kotoba"))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .current_dir(cwd.path())
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("set KOTOBA_HOME"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    }
    assert!(
        std::fs::read_dir(cwd.path()).unwrap().next().is_none(),
        "no folder was made where she was started"
    );
}

#[tokio::test]
async fn help_lists_the_commands_without_asking_her_and_a_resumed_session_shows_its_last_lines() {
    let server = ScriptedModel::start().await;
    server.set_fallback(Reply::text("The kettle is on."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat", "--session", "kitchen"])
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "Kotoba is listening").await;
    assert!(
        !seen.contains("earlier in this session"),
        "a new session: {seen}"
    );
    stdin.write_all(b"/help\n").await.unwrap();
    read_until(&mut child, &mut seen, "/quit, /exit").await;
    assert!(seen.contains("/cards") && seen.contains("/stop"), "{seen}");
    assert_eq!(server.request_count(), 0, "/help never reaches her");
    stdin.write_all(b"put the kettle on\n").await.unwrap();
    read_until(&mut child, &mut seen, "The kettle is on.").await;
    stdin.write_all(b"/quit\n").await.unwrap();
    child.wait().await.unwrap();

    let (mut again, seen) = resumed(&server, home.path(), "kitchen").await;
    assert!(seen.contains("(earlier in this session)"), "{seen}");
    assert!(
        seen.contains("you: put the kettle on") && seen.contains("Kotoba: The kettle is on."),
        "{seen}"
    );
    drop(again.stdin.take());
    again.wait().await.unwrap();
}

#[tokio::test]
async fn the_spinner_stops_above_a_card_and_never_writes_over_its_prompt() {
    let server = ScriptedModel::start().await;
    server.push(Reply::call("shell", json!({"command": "touch spun.txt"})));
    server.set_fallback(Reply::text("Made it."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"touch the file\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "[y]es").await;
    // The spinner ticks every 120 ms: a second with the card up would show it.
    let out = child.stdout.as_mut().unwrap();
    let mut buf = [0u8; 4096];
    let mut after = String::new();
    let until = tokio::time::Instant::now() + Duration::from_millis(1200);
    while let Ok(Ok(n)) = tokio::time::timeout_at(until, out.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        after.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let prompt_at = seen.find("[y]es").unwrap();
    let tail = format!("{}{after}", &seen[prompt_at..]);
    assert!(
        !tail.contains('\r') && !tail.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c)),
        "the spinner wrote over the card's prompt: {tail:?}"
    );
    let spun = seen.rfind('⠋').expect("the spinner started");
    assert!(
        seen[spun..prompt_at].contains('\n'),
        "the card is drawn below the stopped spinner: {seen:?}"
    );
    stdin.write_all(b"y\n").await.unwrap();
    read_until(&mut child, &mut seen, "Made it.").await;
    assert!(home.path().join("workspace/spun.txt").exists());
}

#[tokio::test]
async fn ctrl_c_on_a_waiting_card_records_it_as_dismissed_before_she_exits() {
    let server = ScriptedModel::start().await;
    server.push(Reply::call(
        "shell",
        json!({"command": "touch never-ran.txt"}),
    ));
    server.set_fallback(Reply::text("Stopped."));
    let home = tempfile::tempdir().unwrap();
    let mut child = kotoba(&server, home.path(), &["chat"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"touch the file\n").await.unwrap();
    let mut seen = String::new();
    read_until(&mut child, &mut seen, "[y]es").await;
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("she exits after Ctrl-C")
        .unwrap();
    assert!(
        status.code().is_some(),
        "exited, not killed by the signal: {status:?}"
    );
    let store = kotoba::store::Store::open(&home.path().join("kotoba.db")).unwrap();
    let rows = store.audit_rows(None, 10).await.unwrap();
    assert!(
        rows.iter()
            .any(|r| r.action == "touch never-ran.txt" && r.approver == "dismissed"),
        "{rows:?}"
    );
    assert!(!home.path().join("workspace/never-ran.txt").exists());
}

#[tokio::test]
async fn doctor_checks_the_discord_token_and_intents_and_prints_the_invite_url() {
    use kotoba_testkit::discord::FakeDiscord;
    let server = ScriptedModel::start().await;
    let discord = FakeDiscord::start().await;
    let home = tempfile::tempdir().unwrap();
    let doctor = |token: &str| {
        let mut cmd = kotoba(&server, home.path(), &["doctor"]);
        cmd.env("DISCORD_TOKEN", token)
            .env("KOTOBA_DISCORD_API_BASE", discord.api_base());
        cmd
    };
    let out = doctor("test-token").output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("the token is accepted: Kotoba"), "{text}");
    assert!(
        text.contains("Message Content and Server Members are on"),
        "{text}"
    );
    let permissions = kotoba::tools::discord::guild::invite_permissions();
    assert!(
        text.contains(&format!(
            "https://discord.com/oauth2/authorize?client_id=901&scope=bot%20applications.commands&permissions={permissions}"
        )),
        "{text}"
    );
    assert!(!text.contains("test-token"), "the token is never printed");

    discord.set_app_flags(0);
    let out = doctor("test-token").output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("switch on Message Content Intent and Server Members Intent"),
        "{text}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "intents she needs are off: {text}"
    );

    let out = doctor("revoked-token").output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the bot token is refused: put a valid one in DISCORD_TOKEN"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1), "a refused token: {text}");
}

#[tokio::test]
async fn doctor_names_the_shards_this_process_would_hold_and_refuses_a_bad_shard_setting() {
    use kotoba_testkit::discord::FakeDiscord;
    let server = ScriptedModel::start().await;
    let discord = FakeDiscord::start().await;
    let home = tempfile::tempdir().unwrap();
    let doctor = |shards: &str| {
        let mut cmd = kotoba(&server, home.path(), &["doctor"]);
        cmd.env("DISCORD_TOKEN", "test-token")
            .env("KOTOBA_DISCORD_API_BASE", discord.api_base())
            .env("KOTOBA_DISCORD_SHARDS", shards);
        cmd
    };
    let out = doctor("2-3/8").output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("shards:         shards 2 to 3 of 8"),
        "{text}"
    );
    assert!(out.status.success(), "{text}");
    let out = doctor("4-2/8").output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("KOTOBA_DISCORD_SHARDS=\"4-2/8\" is not a shard setting"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
}

#[tokio::test]
async fn doctor_with_a_model_address_that_is_not_a_url_names_no_host_and_warns_once() {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let out = kotoba(&server, home.path(), &["doctor"])
        .env("KOTOBA_LLM_BASE_URL", "notaurl")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    let model = text.lines().find(|l| l.starts_with("model:")).unwrap_or("");
    assert!(model.contains("via no server"), "{model}");
    assert!(
        !text.contains("api.openai.com"),
        "a host it will not call: {text}"
    );
    assert_eq!(
        log.matches("KOTOBA_LLM_BASE_URL: must be an http(s) URL")
            .count(),
        1,
        "warned once: {log}"
    );
    assert_eq!(server.requests().len(), 0, "nothing reached any model");
}
