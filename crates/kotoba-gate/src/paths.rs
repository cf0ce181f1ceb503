//! Workspace confinement for auto-safe lines: which words are paths (a slash, a leading
//! `~`, `.`/`..`, a bare word naming an existing file, a value glued to an option, a
//! glob), and whether each, links resolved, stays inside the workspace.

use std::path::Path;

use super::shell_words::Word;
use kotoba_core::confine::resolve_in_workspace;

/// The file names an option word carries inside it: `--file=V`, `-o=V`, `-oV`.
fn option_values(arg: &str) -> Option<&str> {
    if let Some((_, value)) = arg.split_once('=') {
        return Some(value);
    }
    if arg.starts_with("--") {
        return None;
    }
    let mut chars = arg.char_indices().skip(2);
    chars.next().map(|(i, _)| &arg[i..])
}

/// Every path argument (operands, and values glued to options) stays inside the workspace.
pub(crate) fn check_paths(args: &[Word], workspace: &Path) -> Result<(), String> {
    let mut operands_only = false;
    for word in args {
        let arg = word.text.as_str();
        if !operands_only && arg == "--" {
            operands_only = true;
            continue;
        }
        let candidate = if !operands_only && arg.starts_with('-') && arg.len() > 1 {
            match option_values(arg) {
                Some(v) => v,
                None => continue,
            }
        } else {
            arg
        };
        check_path(candidate, word.glob, workspace)
            .map_err(|why| format!("{}, so it asks.", capitalized(&why)))?;
    }
    Ok(())
}

/// A sentence fragment with its first letter in upper case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `Err(sentence fragment)` when `text`, as a path, leaves the workspace.
fn check_path(text: &str, glob: bool, workspace: &Path) -> Result<(), String> {
    if text.is_empty() || text == "-" {
        return Ok(());
    }
    if text.starts_with('~') {
        return Err(format!(
            "'{text}' starts at the home folder, outside the workspace"
        ));
    }
    if glob && text.contains(['*', '?', '[']) {
        return check_glob(text, workspace);
    }
    let path_like = text.contains('/') || text == "." || text == "..";
    if !path_like && std::fs::symlink_metadata(workspace.join(text)).is_err() {
        return Ok(());
    }
    resolve_in_workspace(workspace, text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// How many names a pattern may expand to before the gate stops checking it.
const GLOB_CAP: usize = 10_000;

/// A pattern the shell expands (docs/gate.md rule 6): judged by what it could match.
/// It may not be able to match `..` or a hidden name, and every name it matches now in
/// the workspace, folder by folder (`*/`, `*/*.rs`), must stay inside it, links
/// resolved.
fn check_glob(text: &str, workspace: &Path) -> Result<(), String> {
    let parts: Vec<&str> = text.split('/').collect();
    let is_pattern = |p: &&str| p.contains(['*', '?', '[']);
    if parts.iter().any(|p| is_pattern(p) && p.starts_with('.')) {
        return Err(format!(
            "'{text}' is a pattern that could match '..', outside the workspace"
        ));
    }
    let Some(at) = parts.iter().position(is_pattern) else {
        return resolve_in_workspace(workspace, text)
            .map(|_| ())
            .map_err(|e| e.to_string());
    };
    let start = match parts[..at].join("/") {
        d if d.is_empty() && text.starts_with('/') => "/".to_string(),
        d if d.is_empty() => ".".to_string(),
        d => d,
    };
    let root = workspace
        .canonicalize()
        .map_err(|e| format!("the workspace cannot be opened ({e})"))?;
    let mut folders = vec![resolve_in_workspace(workspace, &start).map_err(|e| e.to_string())?];
    for part in parts.iter().skip(at) {
        if part.is_empty() || *part == "." {
            continue;
        }
        let mut next = Vec::new();
        for folder in &folders {
            if !is_pattern(part) {
                next.push(folder.join(part));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') || !glob_match(part, &name) {
                    continue;
                }
                next.push(entry.path());
                if next.len() > GLOB_CAP {
                    return Err(format!(
                        "'{text}' could match more files than the gate checks"
                    ));
                }
            }
        }
        for path in &next {
            // Every name matched so far, links resolved, stays in the workspace.
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            if !real.starts_with(&root) {
                return Err(format!(
                    "'{text}' can expand to '{}', which leads outside the workspace",
                    path.strip_prefix(&root).unwrap_or(path).display()
                ));
            }
        }
        folders = next;
    }
    Ok(())
}

enum GlobTok {
    Any,
    Star,
    Char(char),
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

fn glob_tokens(pattern: &str) -> Vec<GlobTok> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push(GlobTok::Star),
            '?' => out.push(GlobTok::Any),
            '[' => {
                let mut j = i + 1;
                let negated = matches!(chars.get(j), Some('!' | '^'));
                if negated {
                    j += 1;
                }
                let start = j;
                let mut items = Vec::new();
                while j < chars.len() && (chars[j] != ']' || j == start) {
                    if chars.get(j + 1) == Some(&'-') && chars.get(j + 2).is_some_and(|c| *c != ']')
                    {
                        items.push((chars[j], chars[j + 2]));
                        j += 3;
                    } else {
                        items.push((chars[j], chars[j]));
                        j += 1;
                    }
                }
                if j < chars.len() {
                    out.push(GlobTok::Class { negated, items });
                    i = j;
                } else {
                    out.push(GlobTok::Char('['));
                }
            }
            c => out.push(GlobTok::Char(c)),
        }
        i += 1;
    }
    out
}

/// Whether a file name matches a shell pattern (`*`, `?`, `[a-z]`, `[!x]`).
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let toks = glob_tokens(pattern);
    let name: Vec<char> = name.chars().collect();
    let one = |t: &GlobTok, c: char| match t {
        GlobTok::Any => true,
        GlobTok::Star => false,
        GlobTok::Char(x) => *x == c,
        GlobTok::Class { negated, items } => {
            items.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated
        }
    };
    let (mut t, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if t < toks.len() && matches!(toks[t], GlobTok::Star) {
            star = Some((t, n));
            t += 1;
        } else if t < toks.len() && one(&toks[t], name[n]) {
            t += 1;
            n += 1;
        } else if let Some((st, sn)) = star {
            t = st + 1;
            n = sn + 1;
            star = Some((st, sn + 1));
        } else {
            return false;
        }
    }
    toks[t.min(toks.len())..]
        .iter()
        .all(|tok| matches!(tok, GlobTok::Star))
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn glob_match_follows_shell_patterns() {
        let table = [
            ("*.txt", "a.txt", true),
            ("*.txt", "link", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("[ab]x", "bx", true),
            ("[!ab]x", "bx", false),
            ("[a-c]*", "cat", true),
            ("*", "", true),
            ("[", "[", true),
            ("*a*b", "xxaxxb", true),
            ("*a*b", "xxaxx", false),
        ];
        for (pattern, name, expected) in table {
            assert_eq!(glob_match(pattern, name), expected, "{pattern} {name}");
        }
    }
}
