//! Inline programs of the other interpreters (perl, ruby, node, php, lua, awk,
//! osascript): which arguments are code, and what that code does that the gate calls
//! dangerous — calling the shell (its string literals are read as shell lines), deleting
//! trees, forking in a loop, writing to devices or deleting keys. Read conservatively:
//! a literal that would be dangerous as a shell line counts wherever it stands.

use super::commands::{is_secret_path, write_target};
use super::finding::{
    found, Finding, FORK_BOMB, HISTORY_OR_KEY_WIPE, PIPE_TO_SHELL, RECURSIVE_DELETE,
};

/// Interpreters whose inline code this module reads.
pub(crate) const LANGUAGES: [&str; 13] = [
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "luajit",
    "bun",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
];

/// Words that call the shell or another program, in any of the languages.
const SHELL_CALLS: [&str; 22] = [
    "system",
    "exec",
    "spawn",
    "popen",
    "child_process",
    "execsync",
    "spawnsync",
    "execfile",
    "os.execute",
    "shell_exec",
    "passthru",
    "proc_open",
    "pcntl_exec",
    "open3",
    "kernel.",
    "do shell script",
    "qx",
    "%x",
    "`",
    "getline",
    "|&",
    "pty",
];
/// Words that delete a whole tree.
const TREE_DELETES: [&str; 6] = [
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_tree",
    "remove_entry",
    "remove_dir",
];

/// Names of functions that remove a file or a folder, a tree when told to recurse.
const REMOVE_CALLS: [&str; 7] = [
    "rm",
    "rmsync",
    "rmdir",
    "rmdirsync",
    "remove",
    "removesync",
    "unlink",
];

/// The first name in [`REMOVE_CALLS`] that (lowercased) `code` uses as an identifier,
/// called or not (`fs.rmSync(…)`, `const r = fs.rmSync`, `fs['rmSync']`).
fn remove_name(code: &str) -> Option<&'static str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find_map(|token| REMOVE_CALLS.iter().find(|c| **c == token).copied())
}

/// The code arguments of `lang` among `args` (the program of awk; the values of `-e`
/// and its bundles elsewhere).
pub(crate) fn code_args(lang: &str, args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if lang.ends_with("awk") {
        let mut skip = false;
        for (i, arg) in args.iter().enumerate() {
            if skip {
                skip = false;
                continue;
            }
            match *arg {
                "-f" | "--file" => return out,
                "-F" | "-v" | "--assign" | "--field-separator" => skip = true,
                "-e" | "--source" => {
                    out.extend(args.get(i + 1).map(|s| s.to_string()));
                    skip = true;
                }
                a if a.starts_with("--source=") => {
                    out.push(a.trim_start_matches("--source=").to_string());
                }
                a if a.starts_with('-') && a.len() > 1 => {}
                a => {
                    out.push(a.to_string());
                    return out;
                }
            }
        }
        return out;
    }
    let takes_code = |a: &str| -> bool {
        match lang {
            "node" | "nodejs" | "bun" => matches!(a, "-e" | "--eval" | "-p" | "--print" | "-pe"),
            "php" => a == "-r",
            _ => a.starts_with('-') && !a.starts_with("--") && a.ends_with(['e', 'E']),
        }
    };
    for (i, arg) in args.iter().enumerate() {
        if takes_code(arg) {
            out.extend(args.get(i + 1).map(|s| s.to_string()));
        } else if let Some(glued) = arg.strip_prefix("-e").filter(|g| !g.is_empty()) {
            if !matches!(lang, "node" | "nodejs" | "bun" | "php") {
                out.push(glued.to_string());
            }
        } else if let Some(v) = arg.strip_prefix("--eval=") {
            out.push(v.to_string());
        } else if let Some(at) = super::feeds::bundle_letter(arg, 'e') {
            // Flags glued before the code: `perl -we'…'`, `ruby -Ke'…'`.
            let glued = &arg[at + 1..];
            if !glued.is_empty() && !matches!(lang, "node" | "nodejs" | "bun" | "php") {
                out.push(glued.to_string());
            }
        }
    }
    out
}

/// The string literals of `code`, with runs joined by `.` or `+` (`"r"."m -rf /"`)
/// read as one.
pub(crate) fn literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    let mut last_end: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i];
        let close = match c {
            '\'' | '"' | '`' => Some(c),
            'q' | '%' => perl_quote_open(&chars, i).map(|(open, close)| {
                i = open;
                close
            }),
            _ => None,
        };
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let open_char = chars.get(i).copied().unwrap_or(close);
        let start = i;
        i += 1;
        let mut text = String::new();
        let mut depth = 1usize;
        while i < chars.len() {
            let x = chars[i];
            if x == '\\' {
                if let Some(n) = chars.get(i + 1) {
                    text.push(match n {
                        'n' => '\n',
                        't' => '\t',
                        other => *other,
                    });
                }
                i += 2;
                continue;
            }
            if x == open_char && open_char != close {
                depth += 1;
            } else if x == close {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            text.push(x);
            i += 1;
        }
        let between: String = match last_end {
            Some(end) if end <= start => chars[end..start].iter().collect(),
            _ => String::from("none"),
        };
        let joins = matches!(between.trim(), "." | "+" | ".." | "");
        match out.last_mut() {
            Some(prev) if joins && last_end.is_some() => prev.push_str(&text),
            _ => out.push(text),
        }
        i += 1;
        last_end = Some(i.min(chars.len()));
    }
    out
}

/// At `q(`, `qq{`, `qx/`, `%x(`…: the index of the opening delimiter and its closer.
fn perl_quote_open(chars: &[char], i: usize) -> Option<(usize, char)> {
    if i > 0 && chars[i - 1].is_alphanumeric() {
        return None;
    }
    let mut j = i + 1;
    if chars[i] == 'q' && matches!(chars.get(j), Some('q' | 'x' | 'w')) {
        j += 1;
    }
    if chars[i] == '%' && matches!(chars.get(j), Some('x' | 'q' | 'Q' | 'w')) {
        j += 1;
    } else if chars[i] != 'q' {
        return None;
    }
    let open = *chars.get(j)?;
    let close = match open {
        '(' => ')',
        '{' => '}',
        '[' => ']',
        '<' => '>',
        c if !c.is_alphanumeric() && !c.is_whitespace() && c != '_' => c,
        _ => return None,
    };
    Some((j, close))
}

/// The first dangerous thing `code` (in `lang`) does; `line` judges a shell line.
pub(crate) fn code_danger(
    lang: &str,
    code: &str,
    line: &mut dyn FnMut(&str) -> Option<Finding>,
) -> Option<Finding> {
    let lower = code.to_lowercase();
    let forks = lower.matches("fork").count();
    let looped = ["while", "until", "loop", "each", "redo", "goto"]
        .iter()
        .any(|w| lower.contains(w));
    if forks >= 2 || (forks == 1 && looped) {
        return found(FORK_BOMB, format!("'{lang}' code forks in a loop"));
    }
    // A remove told to recurse, in any runtime's spelling (node's `fs.rm`,
    // `fs.promises.rm`, `rmSync`, `rmdirSync`; Deno's `remove`), however it is reached.
    if lower.contains("recursive") {
        if let Some(call) = remove_name(&lower) {
            return found(
                RECURSIVE_DELETE,
                format!("'{lang}' code deletes whole trees ({call} with recursive)"),
            );
        }
    }
    if let Some(word) = TREE_DELETES.iter().find(|w| lower.contains(*w)) {
        return found(
            RECURSIVE_DELETE,
            format!("'{lang}' code deletes whole trees ({word})"),
        );
    }
    let texts = literals(code);
    let calls_shell = SHELL_CALLS.iter().any(|w| lower.contains(w))
        || (lang.ends_with("awk") && lower.contains('|'));
    if calls_shell {
        let mut candidates = texts.clone();
        candidates.push(texts.join(" "));
        for text in &candidates {
            if let Some(f) = line(text) {
                return Some(Finding {
                    detail: format!("'{lang}' code runs a shell line: {}", f.detail),
                    ..f
                });
            }
            let first = text.split_whitespace().next().unwrap_or("");
            let name = first.rsplit('/').next().unwrap_or("");
            if lang.ends_with("awk") && matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh") {
                return found(
                    PIPE_TO_SHELL,
                    format!("'{lang}' prints commands into '{name}'"),
                );
            }
        }
    }
    for text in &texts {
        let target = text.trim_start_matches(['>', '+', '<', ' ']);
        if text.starts_with(['>', '+']) || lower.contains("write") {
            if let Some(f) = write_target(&format!("'{lang}' code writing"), target) {
                return Some(f);
            }
        }
        let deletes = ["unlink", "remove", "delete", "truncate", "rm"]
            .iter()
            .any(|w| lower.contains(w));
        if deletes && is_secret_path(target) {
            return found(
                HISTORY_OR_KEY_WIPE,
                format!("'{lang}' code deletes or empties '{target}'"),
            );
        }
    }
    None
}
