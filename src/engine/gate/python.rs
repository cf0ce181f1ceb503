//! The dangerous-Python rules of gate.md for `execute_code`: deleting trees, spawning
//! shells or processes, raw sockets, eval/exec, writing files, sending data out and
//! reading secrets. Text patterns, read conservatively: a match inside a string or a
//! comment still asks, because asking costs a click and missing costs the machine.

use std::sync::OnceLock;

use regex::Regex;

use super::danger::Finding;

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

/// The rules in the order they are tried; `open(…)` modes are read by hand in between.
const RULES: [(&str, &str); 7] = [
    (
        TREE_DELETION,
        r"\bshutil\s*\.\s*rmtree\b|\bos\s*\.\s*(removedirs|rmdir)\b|\brmtree\s*\(|\.rmdir\s*\(|\bfrom\s+shutil\s+import\b[^\n]*\brmtree\b",
    ),
    (
        PROCESS_SPAWN,
        r"\bos\s*\.\s*(system|popen\w*|exec\w*|spawn\w*|posix_spawn\w*|fork\w*|startfile)\b|\bsubprocess\b|create_subprocess_(exec|shell)|\bimport\s+os\s+as\b|\bfrom\s+os\s+import\b[^\n]*(\b(system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*)\b|\*)|\bctypes\b|\bcffi\b|\bimportlib\b|\b__import__\b|\bpty\b|\bgetattr\s*\(\s*os\b|\bpexpect\b|\bplumbum\b",
    ),
    (
        RAW_SOCKET,
        r"\bsocket\b|\bopen_connection\s*\(|\bstart_server\s*\(|\btelnetlib\b|\bscapy\b",
    ),
    (
        DYNAMIC_EVAL,
        r"(?m)(^|[^.\w])(eval|exec|compile)\s*\(|\b__builtins__\b|\bbuiltins\s*\.\s*(eval|exec|compile)\b|\bpickle\s*\.\s*loads?\b|\bmarshal\s*\.\s*loads?\b",
    ),
    (
        FILE_WRITE,
        r"\.write_text\s*\(|\.write_bytes\s*\(|\bos\s*\.\s*(remove|unlink|rename|renames|replace|truncate|ftruncate|write|chmod|chown|link|symlink|mkfifo)\b|\.unlink\s*\(|\.rename\s*\(|\.touch\s*\(|\.symlink_to\s*\(|\.hardlink_to\s*\(|\bshutil\s*\.\s*(copy\w*|move|chown)\b|\bO_(WRONLY|RDWR|APPEND|CREAT|TRUNC)\b|\.to_(csv|excel|json|parquet|pickle|feather|hdf|sql|html|latex|stata)\s*\(|\bsavefig\s*\(|\b(np|numpy)\s*\.\s*save\w*\s*\(|\bfrom\s+os\s+import\b[^\n]*\b(remove|unlink|rename|replace)\b|\bfrom\s+shutil\s+import\b",
    ),
    (
        DATA_UPLOAD,
        r#"(?i)\b(requests|httpx|aiohttp|urllib3|niquests)\s*\.\s*(post|put|patch|delete|request)\s*\(|\b\w*(session|client)\s*\.\s*(post|put|patch|delete)\s*\(|\bmethod\s*=\s*['"](post|put|patch|delete)|\.request\s*\(\s*['"](post|put|patch|delete)|\burlopen\s*\([^)\n]*\bdata\s*=|\bRequest\s*\([^)\n]*\bdata\s*=|\b(smtplib|ftplib|paramiko|pysftp|poplib|imaplib|xmlrpc)\b|\b(requests|httpx)\s*\.\s*get\s*\(\s*(f['"]|[^)\n]*?(\+|%\s|\.format\s*\())"#,
    ),
    (
        SECRET_READ,
        r"(?i)\.ssh\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|[\\/]etc[\\/](passwd|shadow|gshadow|sudoers)\b|\.aws[\\/]+credentials|\.netrc\b|(^|[^\w)\]])\.env\b|dotenv|keystore\.key|\.kotoba[\\/]|\.gnupg\b|\.git-credentials|\.pgpass\b|\.kube[\\/]+config|\.docker[\\/]+config\.json|\bkeyring\b",
    ),
];

/// The compiled rules. A rule whose pattern does not compile is kept as `None`, which
/// counts as a match: a broken rule asks about everything rather than nothing.
fn rules() -> &'static [(&'static str, Option<Regex>)] {
    static RULES_COMPILED: OnceLock<Vec<(&'static str, Option<Regex>)>> = OnceLock::new();
    RULES_COMPILED.get_or_init(|| {
        RULES
            .iter()
            .map(|(label, pattern)| (*label, Regex::new(pattern).ok()))
            .collect()
    })
}

/// The first dangerous pattern in a Python snippet, if any.
pub(crate) fn python_danger(code: &str) -> Option<Finding> {
    if code.trim().is_empty() {
        return None;
    }
    for (label, rule) in rules() {
        if *label == DATA_UPLOAD {
            // Writes are tried before uploads: `open(…, 'w')` belongs with the file rules.
            if let Some(detail) = open_for_writing(code) {
                return Some(Finding {
                    label: FILE_WRITE.into(),
                    detail,
                });
            }
        }
        let hit = match rule {
            Some(re) => re.find(code).map(|m| m.as_str().trim().to_string()),
            None => Some(format!("the {label} rule could not be read")),
        };
        if let Some(text) = hit {
            let shown: String = text.chars().take(60).collect();
            return Some(Finding {
                label: (*label).to_string(),
                detail: format!("it matches `{shown}`"),
            });
        }
    }
    None
}

/// A call to `open(…)`/`fdopen(…)` whose mode writes, or whose mode is not a literal.
fn open_for_writing(code: &str) -> Option<String> {
    let chars: Vec<char> = code.chars().collect();
    let is_ident = |c: char| c == '_' || c.is_alphanumeric();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_ident(chars[i - 1]);
        let token = if !starts_word {
            None
        } else if chars[i..].starts_with(&['o', 'p', 'e', 'n']) {
            Some(4)
        } else if chars[i..].starts_with(&['f', 'd', 'o', 'p', 'e', 'n']) {
            Some(6)
        } else {
            None
        };
        let Some(len) = token else {
            i += 1;
            continue;
        };
        let mut j = i + len;
        if j < chars.len() && is_ident(chars[j]) {
            i = j;
            continue;
        }
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        if chars.get(j) != Some(&'(') {
            i = j.max(i + 1);
            continue;
        }
        // `Path(p).open('w')` takes the mode first; builtin `open(path, mode)` second.
        let method = i > 0 && chars[i - 1] == '.';
        let args = call_args(&chars[j + 1..]);
        for (k, arg) in args.iter().enumerate() {
            let (kw, value) = match arg.split_once('=') {
                Some((k, v)) if k.trim().chars().all(is_ident) && !k.trim().is_empty() => {
                    (Some(k.trim()), v.trim())
                }
                _ => (None, arg.trim()),
            };
            let is_mode_slot = kw == Some("mode") || (kw.is_none() && k == 1);
            let literal_slot = is_mode_slot || (method && kw.is_none() && k == 0);
            match string_literal(value) {
                Some(s) if is_write_mode(&s) && literal_slot => {
                    return Some(format!("it opens a file with mode '{s}'"));
                }
                None if is_mode_slot && !value.is_empty() => {
                    return Some(format!("it opens a file with a mode it computes ({value})"));
                }
                _ => {}
            }
        }
        i = j + 1;
    }
    None
}

/// The top-level, comma-separated arguments after an opening `(` (up to its `)`).
fn call_args(chars: &[char]) -> Vec<String> {
    let mut args = vec![String::new()];
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut k = 0;
    while k < chars.len() && k < 4000 {
        let c = chars[k];
        k += 1;
        if let Some(q) = quote {
            if c == '\\' {
                if let (Some(last), Some(next)) = (args.last_mut(), chars.get(k)) {
                    last.push(c);
                    last.push(*next);
                }
                k += 1;
                continue;
            }
            if c == q {
                quote = None;
            }
        } else {
            match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth == 0 => break,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    args.push(String::new());
                    continue;
                }
                _ => {}
            }
        }
        if let Some(last) = args.last_mut() {
            last.push(c);
        }
    }
    args.retain(|a| !a.trim().is_empty());
    args
}

/// The content of a simple Python string literal (`'w'`, `"ab+"`, `r"x"`).
fn string_literal(value: &str) -> Option<String> {
    let v = value.trim_start_matches(['r', 'R', 'b', 'B', 'u', 'U']);
    let q = v.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = v.strip_prefix(q)?.strip_suffix(q)?;
    (!inner.contains(q)).then(|| inner.to_string())
}

/// A mode string (`w`, `ab`, `r+`, `xt`) that writes, appends, creates or updates.
fn is_write_mode(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= 4
        && s.chars().all(|c| "rwaxbtU+".contains(c))
        && s.chars().any(|c| "wax+".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_python_rule_compiles() {
        assert!(rules().iter().all(|(_, re)| re.is_some()));
    }

    #[test]
    fn open_reads_its_mode_from_the_second_argument_or_mode_keyword() {
        assert!(open_for_writing("open(os.path.join(a, 'b'), 'w')").is_some());
        assert!(open_for_writing("open('x', mode='a+')").is_some());
        assert!(open_for_writing("Path('x').open('w')").is_some());
        assert!(open_for_writing("open('x', m)").is_some());
        assert!(open_for_writing("open('x.csv').read().split('w')").is_none());
        assert!(open_for_writing("open('x', 'r', encoding='utf-8')").is_none());
        assert!(open_for_writing("reopen('x', 'w')").is_none());
        assert!(open_for_writing("open('a')").is_none());
    }
}
