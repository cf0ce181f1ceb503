//! The gate's adversarial corpus (`tests/fixtures/gate_corpus.tsv`): hundreds of lines
//! written from the dangerous families of docs/gate.md and their look-alikes, each with
//! the first line `kotoba gate explain` must print and whether a family grant may be
//! offered. One table test reads them all through the library, and a sample through
//! the real binary, so the CLI and the library cannot drift apart.

use std::path::Path;
use std::process::Command;

use kotoba::gate::{classify, Action, Decision, Principle};

/// One case: the expected verdict line, whether a family is offered (None: not said).
struct Case {
    line: String,
    headline: String,
    family: Option<bool>,
}

/// Every case of the adversarial corpus: the named families and the principles.
fn corpus() -> Vec<Case> {
    let mut cases = table("gate_corpus.tsv");
    cases.extend(table("gate_corpus_principles.tsv"));
    cases
}

/// The cases of one fixture table.
fn table(name: &str) -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
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

/// The cases whose verdict or family offer differs from what the table says.
fn misjudged(ws: &Path, cases: &[Case]) -> Vec<String> {
    let mut wrong = Vec::new();
    for case in cases {
        let d = judge(ws, &case.line);
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
    }
    wrong
}

#[test]
fn every_line_of_the_adversarial_corpus_gets_its_expected_verdict() {
    let ws = workspace();
    let cases = corpus();
    assert!(
        cases.len() >= 1000,
        "the corpus holds {} lines",
        cases.len()
    );
    let wrong = misjudged(ws.path(), &cases);
    assert!(
        wrong.is_empty(),
        "{} of {} corpus lines misjudged:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn no_dangerous_line_of_any_table_offers_a_grant() {
    let ws = workspace();
    let mut cases = corpus();
    cases.extend(table("gate_everyday.tsv"));
    let mut dangerous = 0;
    for case in &cases {
        let d = judge(ws.path(), &case.line);
        if d.dangerous_label().is_some() {
            dangerous += 1;
            assert!(
                !d.can_always && !d.can_always_exact,
                "{:?} is dangerous yet offers a grant: {d:?}",
                case.line
            );
        }
    }
    assert!(dangerous > 500, "{dangerous} dangerous lines were checked");
}

#[test]
fn two_hundred_everyday_developer_lines_are_never_dangerous_and_keep_their_family_grants() {
    let ws = workspace();
    let cases = table("gate_everyday.tsv");
    assert_eq!(cases.len(), 200);
    for case in &cases {
        let d = judge(ws.path(), &case.line);
        assert_eq!(d.dangerous_label(), None, "{:?}: {d:?}", case.line);
    }
    let wrong = misjudged(ws.path(), &cases);
    assert!(
        wrong.is_empty(),
        "{} misjudged:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    let families = cases.iter().filter(|c| c.family == Some(true)).count();
    assert!(
        families >= 80,
        "{families} everyday lines keep a family grant"
    );
}

#[test]
fn each_principle_decides_lines_of_the_corpus_and_the_figures_are_printed() {
    let ws = workspace();
    let cases = corpus();
    let mut counts = [0usize; 7];
    for case in &cases {
        let d = judge(ws.path(), &case.line);
        if let Some(n) = d.principle.and_then(Principle::number) {
            counts[usize::from(n)] += 1;
        }
    }
    let dangerous = cases
        .iter()
        .filter(|c| c.headline.starts_with("dangerous"))
        .count();
    print_figure(&format!(
        "corpus: {} lines ({dangerous} dangerous); decided by rule 1: {}, 2: {}, 3: {}, \
         4: {}, 5: {}, 6: {}",
        cases.len(),
        counts[1],
        counts[2],
        counts[3],
        counts[4],
        counts[5],
        counts[6]
    ));
    for (rule, count) in counts.iter().enumerate().skip(1) {
        assert!(*count >= 3, "rule {rule} decides {count} lines");
    }
}

#[allow(clippy::print_stderr)]
fn print_figure(text: &str) {
    eprintln!("{text}");
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

#[test]
fn everyday_look_alikes_that_only_mention_a_scary_word_are_at_most_two_percent_dangerous() {
    let ws = workspace();
    let cases = table("gate_lookalikes.tsv");
    assert!(cases.len() >= 200, "{} look-alikes", cases.len());
    assert!(cases.iter().all(|c| c.headline == "lookalike"));
    let started = std::time::Instant::now();
    let red: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let d = judge(ws.path(), &c.line);
            d.dangerous_label()
                .map(|label| format!("{:?}: {label}", c.line))
        })
        .collect();
    let per_line = started.elapsed() / cases.len() as u32;
    print_figure(&format!(
        "look-alikes: {} of {} labelled dangerous ({:.1}%), {per_line:?} per line:\n{}",
        red.len(),
        cases.len(),
        red.len() as f64 * 100.0 / cases.len() as f64,
        red.join("\n")
    ));
    assert!(
        red.len() * 50 <= cases.len(),
        "more than 2% of the look-alikes are red:\n{}",
        red.join("\n")
    );
}
