//! The README's configuration tables checked against the code: every settings.yaml key
//! of [`KEYS`] and every environment variable of `env.rs` has a row with its default,
//! no row names one that does not exist, and every variable the code reads by name is
//! in the table.

use std::path::Path;

use super::env;
use super::keys::{self, Shown, KEYS};
use super::settings::Settings;

const README: &str = include_str!("../../../../README.md");

/// The `| `name` | default | … |` rows of the table under `heading`: (name, default).
fn table(heading: &str) -> Vec<(String, String)> {
    let mut lines = README.lines().skip_while(|l| l.trim() != heading);
    assert!(
        lines.next().is_some(),
        "README.md has no {heading:?} section"
    );
    lines
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].trim_matches('`').to_string(), cells[2].to_string())
        })
        .collect()
}

/// Whether the README's default cell says the same as ours (`1.0` and `1` are one
/// number).
fn same_default(readme: &str, ours: &str) -> bool {
    let number = |s: &str| {
        s.strip_prefix('`')
            .and_then(|s| s.strip_suffix('`'))
            .and_then(|s| s.parse::<f64>().ok())
    };
    readme == ours || matches!((number(readme), number(ours)), (Some(a), Some(b)) if a == b)
}

/// Each row's name once, and only names in `known`.
fn no_unknown_or_repeated_rows(rows: &[(String, String)], known: &[&str], what: &str) {
    let mut seen: Vec<&str> = Vec::new();
    for (name, _) in rows {
        assert!(
            known.contains(&name.as_str()),
            "README.md lists {what} `{name}`, which does not exist"
        );
        assert!(
            !seen.contains(&name.as_str()),
            "README.md lists {what} `{name}` twice"
        );
        seen.push(name);
    }
}

fn rows_hold(rows: &[(String, String)], name: &str, default: &str, what: &str) {
    let Some((_, cell)) = rows.iter().find(|(n, _)| n == name) else {
        panic!("README.md's table lacks {what} `{name}` (default {default})");
    };
    assert!(
        same_default(cell, default),
        "README.md shows {what} `{name}` with the default {cell:?}; the code's is {default:?}"
    );
}

#[test]
fn every_settings_key_is_in_the_readme_with_its_default() {
    let rows = table("### settings.yaml");
    for key in KEYS {
        rows_hold(&rows, key.name, &key.readme_default(), "the setting");
    }
    let known: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
    no_unknown_or_repeated_rows(&rows, &known, "the setting");
}

#[test]
fn every_environment_variable_is_in_the_readme_with_its_default() {
    let rows = table("### Environment variables");
    let vars = env::readme_defaults();
    for (name, default) in &vars {
        rows_hold(&rows, name, default, "the environment variable");
    }
    let known: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
    no_unknown_or_repeated_rows(&rows, &known, "the environment variable");
}

#[test]
fn a_default_the_readme_describes_in_words_is_unset_in_the_code() {
    let defaults = Settings::default();
    for key in KEYS.iter().filter(|k| k.unset_default.is_some()) {
        let value = (key.value)(&defaults);
        assert!(
            value.is_empty() || value == "[]",
            "`{}` has {value:?} by default, yet the README is told it is unset ({:?})",
            key.name,
            key.unset_default
        );
    }
}

#[test]
fn every_default_is_accepted_back_by_its_own_key() {
    let defaults = Settings::default();
    for key in KEYS.iter().filter(|k| k.shown != Shown::ByName) {
        let value = (key.value)(&defaults);
        let mut s = Settings::default();
        let yaml = serde_yaml_ng::from_str(&value)
            .unwrap_or_else(|_| serde_yaml_ng::Value::String(value.clone()));
        assert_eq!(
            (key.apply)(&mut s, &yaml),
            Ok(Vec::new()),
            "{}: {value:?}",
            key.name
        );
        assert_eq!(s, defaults, "{} read back its default", key.name);
    }
}

#[test]
fn every_environment_override_names_a_settings_key() {
    for var in env::ENV {
        if let env::EnvDefault::Setting(key) = var.default {
            assert!(keys::find(key).is_some(), "{} overrides `{key}`", var.name);
        }
    }
}

/// Names read by the code that are the system's, not Kotoba's configuration.
const SYSTEM_NAMES: &[&str] = &["HOME", "PATH"];

/// Names only the test command sets (the README's testing section says so).
const TEST_NAMES: &[&str] = &["KOTOBA_TEST_DATABASE_URL", "CI"];

/// Every name the source under `dir` reads by a literal: a call of `env`, `env.get`,
/// `var`, `var_os` or `from_env` whose one argument is a quoted name in capitals.
fn names_read_under(dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            names_read_under(&path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for opener in ["env(\"", "env.get(\"", "var(\"", "var_os(\"", "from_env(\""] {
            for (at, _) in text.match_indices(opener) {
                let rest = &text[at + opener.len()..];
                let Some(end) = rest.find('"') else { continue };
                let name = &rest[..end];
                let is_name = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                if is_name && rest[end + 1..].starts_with(')') {
                    out.push((name.to_string(), path.display().to_string()));
                }
            }
        }
    }
}

#[test]
fn every_environment_variable_the_code_reads_is_in_the_env_table() {
    let mut read = Vec::new();
    // The whole workspace: the binary crate's `src/` and every crate under `crates/`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    names_read_under(&root.join("src"), &mut read);
    names_read_under(&root.join("crates"), &mut read);
    assert!(
        read.iter().any(|(n, _)| n == "DISCORD_TOKEN"),
        "the scan finds the reads it is for: {read:?}"
    );
    let known: Vec<&str> = env::names().collect();
    for (name, file) in &read {
        assert!(
            known.contains(&name.as_str())
                || SYSTEM_NAMES.contains(&name.as_str())
                || (TEST_NAMES.contains(&name.as_str()) && README.contains(name.as_str())),
            "{file} reads {name}, which is not in config/env.rs's table (nor the README's)"
        );
    }
}
