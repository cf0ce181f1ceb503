//! The dangerous-Python rules of gate.md for `execute_code`: deleting trees, spawning
//! shells or processes, raw sockets, eval/exec, writing files, sending data out and
//! reading secrets. The snippet is read as Python reads it — tokens, names normalised
//! with NFKC, string literals folded to their values — and judged by rules over those
//! tokens. What the gate cannot follow (`getattr`, `sys.modules`, `vars(os)`, a module
//! or `open` passed around as a value, text it cannot tokenize) is dangerous too:
//! asking costs a click, missing costs the machine.

mod capability;
mod lex;
mod names;
mod scan;
mod strings;

use super::finding::{found, Finding, Principle};

/// shutil.rmtree, os.removedirs and their kin.
pub const TREE_DELETION: &str = "tree deletion";
/// os.system, subprocess, ctypes, importlib, pty, `import os as`.
pub const PROCESS_SPAWN: &str = "shell or process spawn";
/// socket and its kin.
pub const RAW_SOCKET: &str = "raw socket";
/// eval, exec, compile.
pub const DYNAMIC_EVAL: &str = "eval/exec";
/// open for writing, write_text, os.remove, os.rename.
pub const FILE_WRITE: &str = "file write";
/// POST/PUT/PATCH/DELETE, smtplib, ftplib, paramiko.
pub const DATA_UPLOAD: &str = "sending data out";
/// .ssh, id_rsa, /etc/passwd, .aws/credentials, .netrc, .env, the keystore key.
pub const SECRET_READ: &str = "secret read";

/// The labels from the most to the least severe: when a snippet breaks several rules,
/// the most severe one is reported (its first occurrence).
const LABELS: [&str; 7] = [
    TREE_DELETION,
    PROCESS_SPAWN,
    RAW_SOCKET,
    DYNAMIC_EVAL,
    FILE_WRITE,
    DATA_UPLOAD,
    SECRET_READ,
];

/// What the rules found: the first reason given for each label, and which principle
/// gave it.
#[derive(Debug, Default)]
pub(crate) struct Hits {
    found: [Option<(String, Principle)>; 7],
}

impl Hits {
    /// Records `detail` under `label` unless that label already has a reason.
    pub(crate) fn add(&mut self, label: &str, detail: String) {
        self.add_by(label, detail, Principle::Named);
    }

    /// [`Hits::add`], credited to `principle` (rule 5: a capability, not a module).
    pub(crate) fn add_by(&mut self, label: &str, detail: String, principle: Principle) {
        let rank = LABELS.iter().position(|l| *l == label).unwrap_or(0);
        if let Some(slot) = self.found.get_mut(rank) {
            if slot.is_none() {
                *slot = Some((detail, principle));
            }
        }
    }

    /// The most severe finding.
    fn best(self) -> Option<Finding> {
        LABELS.iter().zip(self.found).find_map(|(label, hit)| {
            let (detail, principle) = hit?;
            found(label, detail).map(|f| f.by(principle))
        })
    }
}

/// The most severe dangerous thing in a Python snippet, if any.
pub(crate) fn python_danger(code: &str) -> Option<Finding> {
    if code.trim().is_empty() {
        return None;
    }
    let mut hits = Hits::default();
    if let Some(encoding) = foreign_encoding(code) {
        hits.add(
            DYNAMIC_EVAL,
            format!("it declares the source encoding '{encoding}', which the gate does not read"),
        );
    }
    let lexed = lex::lex(code);
    if let Some(why) = lexed.unreadable {
        hits.add(
            DYNAMIC_EVAL,
            format!("the gate cannot read it the way Python would: {why}"),
        );
    }
    scan::scan(&lexed.toks, &mut hits);
    strings::secrets(&lexed.toks, &mut hits);
    hits.best()
}

/// A `coding:` declaration on the first two lines naming anything but UTF-8 or ASCII.
/// Python decodes the file with it (`utf-7` can hide `os.system` in plain letters), and
/// the gate reads the text as UTF-8.
fn foreign_encoding(code: &str) -> Option<String> {
    for line in code.lines().take(2) {
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(at) = comment.find("coding") else {
            continue;
        };
        let rest = comment.get(at + "coding".len()..).unwrap_or("");
        let Some(value) = rest.strip_prefix([':', '=']) else {
            continue;
        };
        let name: String = value
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        let plain = name.to_lowercase().replace('_', "-");
        if !matches!(plain.as_str(), "utf-8" | "utf8" | "ascii" | "us-ascii") {
            return Some(name);
        }
    }
    None
}
