//! The gate's adversarial corpus (`tests/fixtures/gate_corpus.tsv`): hundreds of lines
//! written from the dangerous families of docs/gate.md and their look-alikes, each with
//! the first line `kotoba gate explain` must print and whether a family grant may be
//! offered. One table test reads them all through the library, and a sample through
//! the real binary, so the CLI and the library cannot drift apart.

use std::path::Path;
use std::process::Command;

use kotoba::gate::{classify, Action, Decision};

/// One case: the expected verdict line, whether a family is offered (None: not said).
struct Case {
    line: String,
    headline: String,
    family: Option<bool>,
}

fn corpus() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gate_corpus.tsv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut cases = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let (expected, line) = raw
            .split_once('\t')
            .unwrap_or_else(|| panic!("line {}: no tab in {raw:?}", n + 1));
        let line = if line.starts_with('"') {
            serde_json::from_str::<String>(line)
                .unwrap_or_else(|e| panic!("line {}: bad JSON string: {e}", n + 1))
        } else {
            line.to_string()
        };
        let (headline, family) = match expected {
            "asks family" => ("asks".to_string(), Some(true)),
            "asks exact" => ("asks".to_string(), Some(false)),
            other => (other.to_string(), None),
        };
        cases.push(Case {
            line,
            headline,
            family,
        });
    }
    cases
}

/// The workspace the corpus is written against: `a.txt`, `notes.txt`, `sub/b.txt`.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    for file in ["a.txt", "notes.txt"] {
        std::fs::write(ws.path().join(file), "text\n").unwrap();
    }
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    std::fs::write(ws.path().join("sub/b.txt"), "text\n").unwrap();
    ws
}

fn judge(ws: &Path, line: &str) -> Decision {
    classify(
        &Action::Shell {
            command: line.to_string(),
        },
        ws,
        true,
    )
}

#[test]
fn every_line_of_the_adversarial_corpus_gets_its_expected_verdict() {
    let ws = workspace();
    let cases = corpus();
    assert!(cases.len() >= 500, "the corpus holds {} lines", cases.len());
    let mut wrong = Vec::new();
    for case in &cases {
        let d = judge(ws.path(), &case.line);
        let family_ok = case.family.is_none_or(|f| f == d.can_always);
        if d.headline() != case.headline || !family_ok {
            wrong.push(format!(
                "{:?}: expected {}{}, got {} (family {})",
                case.line,
                case.headline,
                match case.family {
                    Some(true) => " family",
                    Some(false) => " exact",
                    None => "",
                },
                d.headline(),
                if d.can_always {
                    "offered"
                } else {
                    "not offered"
                },
            ));
        }
        if d.dangerous_label().is_some() {
            assert!(!d.can_always && !d.can_always_exact, "{:?}", case.line);
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} corpus lines misjudged:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_binary_prints_the_corpus_verdicts_as_its_first_line() {
    let ws = workspace();
    let home = tempfile::tempdir().unwrap();
    let cases = corpus();
    for case in cases.iter().step_by(25) {
        let out = Command::new(env!("CARGO_BIN_EXE_kotoba"))
            .args(["gate", "explain", "--workspace"])
            .arg(ws.path())
            .arg(&case.line)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("KOTOBA_HOME", home.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.lines().next(),
            Some(case.headline.as_str()),
            "{:?}: {text}",
            case.line
        );
    }
}
