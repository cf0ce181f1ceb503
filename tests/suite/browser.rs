//! The page in a real headless Chromium (Debian's, driven by playwright-core from npm,
//! both installed by scripts/test): load it, send a message, see the streamed answer
//! and a step row, press Approve on a card, see the row close ok; muted, the page says
//! she writes and sends the written register. The page's voice: a fake microphone
//! speaks to her and she answers aloud (tests/browser/voice.cjs). Screenshots are saved
//! under target/browser/ for review. Without Chromium or playwright-core the test fails
//! in CI and skips loudly elsewhere.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::speech_server::{espeak_16k, SpeechServer};
use kotoba_testkit::web::{options, start, start_with, FakeShell};

const CHROMIUM: &str = "/usr/bin/chromium";

fn node_modules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps/node/node_modules")
}

fn missing() -> Option<String> {
    if !std::path::Path::new(CHROMIUM).exists() {
        return Some(format!(
            "{CHROMIUM} is not installed (scripts/system-deps --test installs it)"
        ));
    }
    if !node_modules().join("playwright-core/package.json").exists() {
        return Some("playwright-core is not installed (scripts/test-deps installs it)".into());
    }
    let node = std::process::Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Some("node is not installed".into());
    }
    None
}

/// Run the playwright script `name` (tests/browser/) against `base` with `env`; its
/// one stdout line is what it saw.
async fn run_script(name: &str, base: &str, env: &[(&str, String)]) -> Value {
    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    std::fs::create_dir_all(&shots).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/browser")
        .join(name);
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(&script)
        .env("KOTOBA_BASE", base)
        .env("KOTOBA_WEB_TOKEN", kotoba_testkit::web::WEB_TOKEN)
        .env("KOTOBA_NODE_MODULES", node_modules())
        .env("KOTOBA_SHOTS", &shots)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(150), cmd.output())
        .await
        .expect("the browser run finishes within 150 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the browser run failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// Skip loudly outside CI when Chromium or playwright is missing; true to go on.
fn can_run() -> bool {
    if let Some(why) = missing() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the browser test cannot run in CI: {why}"
        );
        eprintln!("\n\n!!!!! SKIPPED the headless-Chromium page test: {why} !!!!!\n");
        return false;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_hears_a_microphone_she_answers_aloud_and_talking_over_her_stops_her() {
    if !can_run() {
        return;
    }
    let shell = std::sync::Arc::new(FakeShell::new("cleaned"));
    let runs = shell.runs.clone();
    let r = start_with(options(), vec![shell]).await;
    let speech = SpeechServer::start().await;
    r.speak_with(&speech.openai_base(), "openai");
    speech.set_default_transcript("what time is it");
    // Long enough that she is still talking when the microphone speaks again.
    let words = "It is a quarter past noon, and before you ask, I will also tidy the \
                 build folder for you, which takes one command and a moment, so please \
                 bear with me while I ask whether that is really all right with you, \
                 because a tidy folder is a happy folder and I would hate to surprise you \
                 with anything you did not expect to happen today.";
    r.model.push(Reply::text_then_call(
        words,
        "shell",
        json!({"command": "rm -rf build"}),
    ));
    r.model.push(Reply::text("Okay, I left it alone."));
    r.model.push(Reply::text("Written down."));
    // The fake microphone (played once): a second of quiet, the question, a pause long
    // enough for her answer to start on a busy machine, words over her.
    let wav = r.home.path().join("mic.wav");
    let mut pcm = vec![0i16; 16_000];
    pcm.extend(espeak_16k("what time is it").await);
    pcm.extend(vec![0i16; 16_000 * 6]);
    pcm.extend(espeak_16k("no, wait, stop").await);
    pcm.extend(vec![0i16; 16_000 * 40]);
    std::fs::write(&wav, kotoba::speech::wav::encode(&pcm, 16_000)).unwrap();
    let seen = run_script(
        "voice.cjs",
        &r.base,
        &[("KOTOBA_MIC_WAV", wav.display().to_string())],
    )
    .await;
    assert_eq!(seen["errors"], json!([]), "no script errors on the page");
    let heard = seen["heard"].to_string();
    assert!(heard.contains("what time is it"), "{seen}");
    assert!(seen["played"].as_u64().unwrap() > 4800, "{seen}");
    assert!(
        seen["peak"].as_u64().unwrap() > 1000,
        "her voice is not silence: {seen}"
    );
    assert!(
        seen["stops"].as_u64().unwrap() >= 1,
        "talking over her stopped her: {seen}"
    );
    assert_eq!(
        seen["queued_after_stop"], 0,
        "the stop dropped what was queued: {seen}"
    );
    assert!(
        seen["sent"].as_u64().unwrap() > 16_000,
        "the microphone was sent: {seen}"
    );
    assert_eq!(
        seen["said_lines"], 0,
        "her narration is heard, not printed: {seen}"
    );
    assert_eq!(FakeShell::run_count(&runs), 0, "the cut turn ran nothing");
    assert_eq!(
        seen["held"], true,
        "hold to talk turns the microphone on and off"
    );
    let asked = r.model.requests();
    let first = asked.first().cloned().unwrap_or_default().to_string();
    assert!(
        first.contains("what time is it") && first.contains("heard, not read"),
        "{first}"
    );
    let last = asked.last().cloned().unwrap_or_default().to_string();
    assert!(
        last.contains("write it down please") && last.contains("read as text in a chat"),
        "muted, the typed turn is written: {last}"
    );
}

#[tokio::test]
async fn the_page_in_headless_chromium_streams_an_answer_and_approves_a_card() {
    if !can_run() {
        return;
    }
    let r = start().await;
    r.model
        .push(Reply::text("Haha! Hi! I'm right here with you."));
    r.model.push(Reply::call(
        "shell",
        json!({"command": "touch browser-made.txt && echo made browser-made.txt"}),
    ));
    r.model.push(Reply::text("Done, the file is there."));
    r.model.push(Reply::call(
        "shell",
        json!({"command": "touch browser-denied.txt"}),
    ));
    r.model.push(Reply::text("Left it alone."));
    r.model.push(Reply::call(
        "shell",
        json!({"command": "rm -rf old-builds"}),
    ));
    r.model.push(Reply::text("Not that one, then."));
    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    let seen = run_script("page.cjs", &r.base, &[]).await;
    assert_eq!(
        seen["row_action"],
        "$ touch browser-made.txt && echo made browser-made.txt"
    );
    assert_eq!(
        seen["card_action"],
        "touch browser-made.txt && echo made browser-made.txt"
    );
    assert_eq!(
        seen["row_waiting"], "waiting for your answer",
        "a row waiting on a card says so: {seen}"
    );
    // Reloaded mid-turn, the page draws the running turn again: its one row (still
    // waiting on the card), the working chip, and the card, answerable there.
    assert_eq!(
        seen["reload_row_status"], "waiting for your answer",
        "{seen}"
    );
    assert_eq!(seen["reload_chip"], true, "{seen}");
    assert_eq!(seen["reload_rows"], 1, "{seen}");
    assert_eq!(
        seen["reload_muted"], true,
        "the mute choice survives a reload: {seen}"
    );
    assert!(
        seen["countdown"]
            .as_str()
            .unwrap()
            .starts_with("expires in 1"),
        "{seen}"
    );
    assert_eq!(seen["row_status"], "ok");
    assert!(
        seen["settled"].as_str().unwrap().starts_with("Approved"),
        "{seen}"
    );
    assert_eq!(seen["buttons_disabled"], true);
    assert_eq!(seen["errors"], json!([]), "no script errors on the page");
    // The finished turn's face comes from what she wrote, by the one map: "Haha" is
    // happy; an answer with no cue after a tool's working faces is calm again.
    assert_eq!(seen["face_first"], "happy", "{seen}");
    assert_eq!(seen["face_last"], "calm", "{seen}");
    // The page speaks unless muted; muted, it says she writes, and her typed turn is
    // the written register, so her answers keep code, links and digits.
    assert_eq!(seen["mute_offered"], true, "{seen}");
    assert!(
        seen["register_note"]
            .as_str()
            .is_some_and(|n| n.contains("Muted")),
        "{seen}"
    );
    let first = r.model.requests().first().cloned().unwrap_or_default();
    assert!(
        first.to_string().contains("read as text in a chat"),
        "a typed page turn asks for the written register: {first}"
    );
    assert!(
        r.workspace().join("browser-made.txt").exists(),
        "the command really ran"
    );
    assert!(shots.join("page.png").exists());
    // The second card: an edit and the three time boxes are offered; denied with a
    // reason typed on the page, which she is told verbatim; nothing ran.
    assert_eq!(seen["offers_edit"], true, "{seen}");
    assert_eq!(
        seen["time_boxes"],
        json!(["for 1 hour", "for 8 hours", "until revoked"])
    );
    assert!(
        seen["denied"]
            .as_str()
            .is_some_and(|d| d.starts_with("Denied by the owner on the web page")),
        "{seen}"
    );
    assert!(
        r.model
            .requests()
            .iter()
            .any(|q| q.to_string().contains("not in this folder today")),
        "the typed reason reaches her"
    );
    assert!(!r.workspace().join("browser-denied.txt").exists());
    // A dangerous card is drawn as dangerous, with the gate's label, in its own
    // colour, and offers no always.
    let danger = &seen["danger"];
    assert_eq!(danger["marked"], true, "{seen}");
    assert!(
        danger["label"]
            .as_str()
            .is_some_and(|l| l.contains("Dangerous") && l.contains("recursive delete")),
        "{seen}"
    );
    assert_ne!(danger["colour"], danger["plain_colour"], "{seen}");
    assert_eq!(danger["always"], 0, "no always on a dangerous card: {seen}");
    // A page whose microphone is not allowed says so in one sentence and stays in text.
    assert!(
        seen["mic_note"]
            .as_str()
            .is_some_and(|n| n.contains("microphone") && n.contains("typing still works")),
        "{seen}"
    );
    assert_eq!(seen["mic_state"], "off", "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_360_px_the_page_fits_and_the_settings_panel_draws_each_key_as_the_table_says() {
    if !can_run() {
        return;
    }
    let r = start().await;
    let seen = run_script("settings.cjs", &r.base, &[]).await;
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert!(
        seen["scroll_width"].as_f64().unwrap() <= 360.0,
        "nothing overflows sideways: {seen}"
    );
    assert!(
        seen["panel_scroll_width"].as_f64().unwrap() <= 360.0,
        "the open settings panel fits too: {seen}"
    );
    assert!(
        seen["text_width"].as_f64().unwrap() >= 180.0,
        "the message box is wide enough to type in: {seen}"
    );
    assert_eq!(seen["force_ask"]["type"], "checkbox", "{seen}");
    assert_eq!(seen["api"]["tag"], "select", "{seen}");
    assert_eq!(
        seen["api"]["options"],
        json!(["responses", "chat"]),
        "{seen}"
    );
    assert_eq!(
        (&seen["work_timeout"]["type"], &seen["work_timeout"]["min"]),
        (&json!("number"), &json!("30")),
        "{seen}"
    );
    assert_eq!(seen["min_speech"]["max"], "5", "{seen}");
    assert!(
        seen["work_timeout"]["about"]
            .as_str()
            .is_some_and(|a| a.contains("default: 3600")),
        "{seen}"
    );
    assert_eq!(
        seen["model"]["overridden"], "overridden by KOTOBA_MODEL",
        "{seen}"
    );
    assert!(
        seen["note"]
            .as_str()
            .is_some_and(|n| n.starts_with("Saved: force_ask")),
        "{seen}"
    );
    assert_eq!(seen["force_ask_after"], true, "{seen}");
    assert!(r.engine.config().settings().force_ask, "the file says so");
}

#[tokio::test]
async fn a_finished_turn_reloaded_draws_its_rows_again_with_their_outcomes_and_outputs() {
    if !can_run() {
        return;
    }
    let r = start().await;
    super::history::two_checks(&r.model);
    let seen = run_script("reload.cjs", &r.base, &[]).await;
    assert_eq!(seen["errors"], json!([]), "no script errors on the page");
    let before = seen["before"].as_array().unwrap();
    assert_eq!(before.len(), 2, "{seen}");
    assert_eq!(before[0]["action"], "$ echo first check ok", "{seen}");
    assert_eq!(before[0]["outcome"], "ok", "{seen}");
    assert!(
        before[0]["full"]
            .as_str()
            .is_some_and(|f| f.contains("first check ok")),
        "{seen}"
    );
    assert_eq!(before[1]["outcome"], "failed", "{seen}");
    assert!(
        before[1]["full"]
            .as_str()
            .is_some_and(|f| f.contains("no-such-folder")),
        "{seen}"
    );
    // After the reload: the same rows, outcomes, results and outputs behind their
    // expanders, in her bubble before her answer, after the person's line.
    assert_eq!(seen["after"], seen["before"], "{seen}");
    assert_eq!(before[1]["answer_after"], "Both checks ran.", "{seen}");
    assert_eq!(seen["user_lines"], json!(["run the two checks"]), "{seen}");
}
