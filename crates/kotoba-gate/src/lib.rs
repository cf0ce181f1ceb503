//! The approval gate's pure policy (gate.md): [`classify`] reads one action — a shell
//! line, a Python snippet or a plain tool call — and says whether it is auto-safe, asks,
//! or is dangerous, and which "always" grants a card may offer. Nothing here runs,
//! waits or stores; the grant lookup and the card live in `approval`.

mod arguments;
mod braces;
mod classify;
mod commands;
mod danger;
mod families;
mod feeds;
mod finding;
mod grammar;
mod interp;
mod names;
mod paths;
mod python;
mod shell_words;

pub use classify::classify;
pub use finding::{
    Principle, DELETE_ROOT_OR_HOME, DESTRUCTIVE_FIND, FILESYSTEM_FORMAT, FORK_BOMB,
    HISTORY_OR_KEY_WIPE, PIPE_TO_SHELL, POWER_CONTROL, PRIVILEGE_ESCALATION, RAW_DISK_WRITE,
    RECURSIVE_CHMOD_ROOT, RECURSIVE_DELETE, TOO_COMPLEX, TRUNCATE_SHRED,
};
pub use python::{
    DATA_UPLOAD, DYNAMIC_EVAL, FILE_WRITE, PROCESS_SPAWN, RAW_SOCKET, SECRET_READ, TREE_DELETION,
};

use kotoba_core::protocol::Risk;

/// First tokens that may auto-run (gate.md "Auto-safe"), when the rest of the line agrees.
pub const READ_ONLY_COMMANDS: [&str; 29] = [
    "ls", "pwd", "echo", "cat", "head", "tail", "wc", "grep", "rg", "find", "stat", "whoami", "id",
    "date", "uname", "true", "printf", "sort", "uniq", "cut", "tr", "mkdir", "base64", "xxd", "od",
    "strings", "hexdump", "tac", "nl",
];

/// What is being asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// One shell command line, as the shell tool would run it.
    Shell {
        /// The line, byte for byte.
        command: String,
    },
    /// A Python snippet for a code tool.
    Code {
        /// The source text.
        code: String,
        /// The family its grant is saved under: the code tool's name.
        family: String,
    },
    /// Any other tool call: its family is its name.
    Tool {
        /// The tool's name.
        name: String,
        /// The tool's risk: `read` is auto-safe, the rest ask.
        risk: Risk,
        /// False when its card must never offer an "always" (the tool declares it).
        may_always: bool,
    },
}

/// The gate's answer before any grant or person is consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Runs without a card.
    AutoSafe,
    /// Needs a person (or a saved grant).
    Ask,
    /// Always asks; no grant of any width covers it, and none can be saved.
    Dangerous {
        /// The short rule name (`recursive delete`, `pipe to a shell`, `file write`).
        label: String,
    },
}

/// The full reading of one action: the verdict, the grant family, which "always"
/// options a card may offer (and why not), and sentences explaining it all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Auto-safe, ask, or dangerous.
    pub verdict: Verdict,
    /// The family a grant would be keyed on (`npm`, `execute_code`, a tool name); `None`
    /// when no command name can be read.
    pub family: Option<String>,
    /// Whether the card may offer "always allow this family".
    pub can_always: bool,
    /// Whether the card may offer "always allow this exact line" (byte for byte).
    pub can_always_exact: bool,
    /// One sentence saying why the family option is missing (set when `can_always` is false).
    pub no_always_reason: Option<String>,
    /// Sentences explaining the verdict: which rule, which token, flag or path.
    pub reasons: Vec<String>,
    /// Which principle of docs/gate.md decided it: the one that found a dangerous
    /// line, or rule 4 when the family was narrowed or refused; `None` otherwise.
    pub principle: Option<Principle>,
}

impl Decision {
    /// True when the verdict is auto-safe.
    pub fn is_auto_safe(&self) -> bool {
        self.verdict == Verdict::AutoSafe
    }

    /// The dangerous label, if the verdict is dangerous.
    pub fn dangerous_label(&self) -> Option<&str> {
        match &self.verdict {
            Verdict::Dangerous { label } => Some(label),
            _ => None,
        }
    }

    /// The one-line verdict: `auto-safe`, `asks` or `dangerous: <label>`.
    pub fn headline(&self) -> String {
        match &self.verdict {
            Verdict::AutoSafe => "auto-safe".to_string(),
            Verdict::Ask => "asks".to_string(),
            Verdict::Dangerous { label } => format!("dangerous: {label}"),
        }
    }

    /// The human explanation `kotoba gate explain` prints: the headline, then each reason
    /// (`- …`), then the grants a card could offer.
    pub fn explain_lines(&self) -> Vec<String> {
        let mut lines = vec![self.headline()];
        lines.extend(self.reasons.iter().map(|r| format!("- {r}")));
        match (&self.family, self.can_always) {
            (Some(f), true) => lines.push(format!("always (family '{f}'): offered")),
            _ => lines.push(format!(
                "always (family): not offered — {}",
                self.no_always_reason
                    .as_deref()
                    .unwrap_or("there is no family to save")
            )),
        }
        let exact_why = if self.can_always_exact {
            ""
        } else if self.dangerous_label().is_some() {
            " — a dangerous action is never saved"
        } else if self.family.is_some() {
            " — only a shell line can be saved exactly"
        } else {
            " — there is no line to save"
        };
        let offered = if self.can_always_exact {
            "offered"
        } else {
            "not offered"
        };
        lines.push(format!("always (this exact line): {offered}{exact_why}"));
        lines
    }

    /// The same as one JSON object: `verdict` (`auto-safe`|`asks`|`dangerous`), `label`,
    /// `family`, `can_always`, `can_always_exact`, `no_always_reason`, `reasons`, `rule`
    /// (the number of the principle that decided it, 1–6, or null).
    pub fn to_json(&self) -> serde_json::Value {
        let verdict = match self.verdict {
            Verdict::AutoSafe => "auto-safe",
            Verdict::Ask => "asks",
            Verdict::Dangerous { .. } => "dangerous",
        };
        serde_json::json!({
            "verdict": verdict,
            "label": self.dangerous_label(),
            "family": self.family,
            "can_always": self.can_always,
            "can_always_exact": self.can_always_exact,
            "no_always_reason": self.no_always_reason,
            "reasons": self.reasons,
            "rule": self.principle.and_then(Principle::number),
        })
    }
}

/// The label of the first dangerous part of a shell line (gate.md "Dangerous"), looking
/// at every command of every pipeline and list, inside `$( )`, backticks, `sh -c` and
/// behind wrappers such as `env`, `xargs` or `timeout`.
pub fn is_dangerous_shell(command: &str) -> Option<String> {
    danger::shell_danger(command).map(|f| f.label)
}

/// The label of the first dangerous pattern in a Python snippet (gate.md, execute_code).
pub fn is_dangerous_python(code: &str) -> Option<String> {
    python::python_danger(code).map(|f| f.label)
}

/// The grant family of a shell line (docs/gate.md rule 4, "families by prefix"): its
/// command word after any `NAME=value` assignments, path stripped, lowercased, trailing
/// version digits dropped (`/usr/bin/Python3.12` → `python`, `pip3` → `pip`), then up to
/// its subcommand: the words through the first plain lowercase word among the next
/// three (`git status`, `cargo build`, `npm test`, `git -C sub log`). A line with no such
/// word is its command's alone (`make -j8` → `make`). `None` when the line has no
/// readable command name. A grant covers only lines of exactly its family.
pub fn family_of(command: &str) -> Option<String> {
    let line = shell_words::parse(command);
    let first = line.simples().next()?;
    let words: Vec<&str> = first
        .words
        .iter()
        .map(|w| w.text.as_str())
        .skip_while(|w| shell_words::is_assignment(w))
        .collect();
    let word = *words.first()?;
    if word.is_empty() || word.contains(['$', '`']) {
        return None;
    }
    let name = base_name(word).to_lowercase();
    if name.is_empty() || name.starts_with('-') {
        return None;
    }
    let mut family = vec![strip_version(&name).to_string()];
    let args = &words[1..];
    let at = args.iter().take(3).position(|a| is_subcommand(a));
    // Words before the subcommand are kept only when they are single plain words.
    let plain =
        |a: &&str| !a.is_empty() && !a.contains(|c: char| c.is_whitespace() || c.is_control());
    if let Some(at) = at.filter(|at| args[..*at].iter().all(plain)) {
        family.extend(args[..=at].iter().map(|a| a.to_string()));
    }
    Some(family.join(" "))
}

/// A word that reads as a subcommand: a plain lowercase name (`status`, `build`,
/// `run-script`), not an option, a path or a value.
pub(crate) fn is_subcommand(word: &str) -> bool {
    let mut chars = word.chars();
    word.len() <= 40
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// The last path component of a command word (`/usr/bin/ls` → `ls`).
pub(crate) fn base_name(word: &str) -> &str {
    let trimmed = word.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((_, name)) => name,
        None => trimmed,
    }
}

/// Names whose trailing digits are part of the name, not a version.
const DIGIT_NAMES: [&str; 9] = [
    "base64", "base32", "md5", "sha1", "sha256", "sha512", "b2", "x264", "x265",
];

/// A lowercased name without its trailing version (`python3.12` → `python`); unchanged
/// when nothing would be left or the digits belong to the name (`base64`).
pub(crate) fn strip_version(name: &str) -> &str {
    if DIGIT_NAMES.contains(&name) {
        return name;
    }
    let stripped = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let stripped = stripped.trim_end_matches(['-', '_']);
    if stripped.is_empty() || stripped.len() == name.len() {
        return name;
    }
    stripped
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fuzz;
#[cfg(test)]
mod tests_paths;
#[cfg(test)]
mod tests_principles;
#[cfg(test)]
mod tests_prop;
#[cfg(test)]
mod tests_python;
#[cfg(test)]
mod tests_spellings;
