//! `kotoba gate explain` as a person uses it: the first line is the verdict, `--json`
//! carries the same decision, `--code` reads Python, and nothing is run.

use std::process::Command;

use serde_json::Value;

/// What `kotoba gate explain ARGS` printed; its exit status is the verdict's.
fn explain(home: &std::path::Path, args: &[&str]) -> String {
    let (text, status) = explain_status(home, args);
    let first = text.lines().next().unwrap_or("");
    let expected = match first {
        "auto-safe" => 0,
        "asks" => 1,
        _ if first.starts_with("dangerous") => 2,
        _ if text.trim_start().starts_with('{') => status, // --json: checked by its test
        _ => panic!("{args:?}: no verdict first: {text}"),
    };
    assert_eq!(status, expected, "{args:?}: {text}");
    text
}

fn explain_status(home: &std::path::Path, args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kotoba"))
        .args(["gate", "explain"])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home)
        .output()
        .unwrap();
    let status = out.status.code().unwrap_or(-1);
    (String::from_utf8(out.stdout).unwrap(), status)
}

#[test]
fn gate_explain_exits_0_for_auto_safe_1_for_asks_and_2_for_dangerous() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("workspace")).unwrap();
    for (line, status) in [("ls", 0), ("npm install x", 1), ("rm -rf ~/", 2)] {
        assert_eq!(explain_status(home.path(), &[line]).1, status, "{line}");
        assert_eq!(
            explain_status(home.path(), &["--json", line]).1,
            status,
            "--json {line}"
        );
    }
}

#[test]
fn gate_explain_prints_the_verdict_first() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("workspace")).unwrap();
    let table = [
        ("ls", "auto-safe"),
        ("npm install x", "asks"),
        ("cat /etc/passwd", "asks"),
        ("rm -rf ~/", "dangerous: recursive delete"),
        ("curl x | sh", "dangerous: pipe to a shell"),
        ("-rf", "asks"),
    ];
    for (line, first) in table {
        let text = explain(home.path(), &[line]);
        assert_eq!(text.lines().next(), Some(first), "{line:?}: {text}");
    }
    let text = explain(home.path(), &["npm install x"]);
    assert!(
        text.contains("always (family 'npm install'): offered"),
        "{text}"
    );
    assert!(text.contains("always (this exact line): offered"), "{text}");
    let text = explain(home.path(), &["python app.py"]);
    assert!(
        text.contains("always (family): not offered — 'python' is an interpreter"),
        "{text}"
    );
}

#[test]
fn gate_explain_checks_paths_against_the_given_workspace() {
    let home = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("a.txt"), "a").unwrap();
    let inside = format!(
        "cat {}/a.txt",
        other.path().canonicalize().unwrap().display()
    );
    let ws = other.path().to_str().unwrap();
    let text = explain(home.path(), &["--workspace", ws, &inside]);
    assert_eq!(text.lines().next(), Some("auto-safe"), "{text}");
    let text = explain(home.path(), &[&inside]);
    assert_eq!(text.lines().next(), Some("asks"), "{text}");
}

#[test]
fn gate_explain_json_carries_the_whole_decision() {
    let home = tempfile::tempdir().unwrap();
    let v: Value = serde_json::from_str(&explain(home.path(), &["--json", "sudo ls"])).unwrap();
    assert_eq!(v["verdict"], "dangerous");
    assert_eq!(v["label"], "privilege escalation");
    assert_eq!(v["family"], "sudo ls");
    assert_eq!(v["rule"], Value::Null, "a rule about a named command");
    assert_eq!(v["can_always"], false);
    assert_eq!(v["can_always_exact"], false);
    assert!(v["no_always_reason"]
        .as_str()
        .unwrap()
        .contains("never be saved"));
    assert!(!v["reasons"].as_array().unwrap().is_empty());

    let v: Value = serde_json::from_str(&explain(home.path(), &["--json", "npm i"])).unwrap();
    assert_eq!(v["verdict"], "asks");
    assert!(v["label"].is_null());
    assert_eq!(v["family"], "npm i");
    assert_eq!(v["rule"], 4, "the family was narrowed to its subcommand");
    assert_eq!(v["can_always"], true);
    assert_eq!(v["can_always_exact"], true);
    assert!(v["no_always_reason"].is_null());
}

#[test]
fn gate_explain_code_reads_python() {
    let home = tempfile::tempdir().unwrap();
    let text = explain(
        home.path(),
        &["--code", "import shutil; shutil.rmtree('x')"],
    );
    assert_eq!(
        text.lines().next(),
        Some("dangerous: tree deletion"),
        "{text}"
    );
    let raw = explain(home.path(), &["--code", "--json", "print(1)"]);
    let v: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(v["verdict"], "asks");
    assert_eq!(v["family"], "execute_code");
    assert_eq!(v["can_always"], true);
    assert_eq!(v["can_always_exact"], false);
}

#[test]
fn gate_explain_on_a_fresh_data_folder_judges_as_serve_would() {
    let fresh = tempfile::tempdir().unwrap();
    let home = fresh.path().join("never-started");
    let text = explain(&home, &["find . -name '*.rs'"]);
    assert_eq!(
        text.lines().next(),
        Some("auto-safe"),
        "the workspace is created as serve creates it: {text}"
    );
    assert!(!text.contains("cannot be opened"), "{text}");
    assert!(home.join("workspace").is_dir());
}
