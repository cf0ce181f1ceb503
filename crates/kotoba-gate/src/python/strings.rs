//! Secret paths in the Python gate's string literals (gate.md, execute_code). A path
//! can be spelt in pieces, so besides each literal the gate reads every statement's
//! literals joined (`'~/.s' + 'sh/id_rsa'`, `f'/etc/{"pass"}wd'`) and joined with `/`
//! (`os.path.join(home, '.ssh', 'id_rsa')`), the whole snippet's literals the same way,
//! each literal reversed, and literals that decode as base64 or hex, and runs of numbers
//! read as characters (`''.join(map(chr, [47, 101, …]))`).

use std::sync::OnceLock;

use base64::Engine;
use regex::Regex;

use super::lex::Tok;
use super::{Hits, SECRET_READ};

/// Paths and names that hold secrets: SSH and GPG keys, system password files, cloud,
/// registry and database credentials, `.env` files, the bot's own keystore, and a
/// process's environment under `/proc`.
const SECRET_PATTERN: &str = r"(?i)\.ssh\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|[\\/]etc[\\/]+(passwd|shadow|gshadow|sudoers|master\.passwd)\b|\.aws[\\/]+(credentials|config)\b|\.netrc\b|(^|[^\w)\]])\.env\b|dotenv|keystore\.key|\.kotoba[\\/]|\.gnupg\b|\.git-credentials|\.pgpass\b|\.kube[\\/]+config|\.docker[\\/]+config\.json|\bkeyring\b|[\\/]proc[\\/]+[^\\/]+[\\/]+(environ|mem)\b|\.npmrc\b|\.pypirc\b|\.config[\\/]+gcloud|\.azure[\\/]|\.password-store|\.(bash|zsh|python|psql|mysql)_history\b|\.my\.cnf\b";

/// The compiled pattern; `None` if it does not compile, which the caller treats as a
/// match (a broken rule asks about everything rather than nothing).
fn secret_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(SECRET_PATTERN).ok()).as_ref()
}

/// A format template's placeholders: `%s`, `%(home)s`, `%-10.2f`, `{}`, `{0}`,
/// `{home!r:>10}`.
const PLACEHOLDER_PATTERN: &str =
    r"%(\([^)]*\))?[-#0 +]*(\*|\d+)?(\.(\*|\d+))?[hlL]?[diouxXeEfFgGcrsab]|\{[^{}]*\}";

fn placeholder_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(PLACEHOLDER_PATTERN).ok())
        .as_ref()
}

/// A text read as the path it builds: each format placeholder stands for a path piece
/// the gate cannot see (so it ends a segment), and `/./`, `//` and `seg/..` are
/// collapsed as the file system does (`'/etc/./%s' % 'passwd'`, joined with its
/// literal, reads `/etc/passwd`). `None` when that changes nothing.
fn as_path(text: &str) -> Option<String> {
    if !text.contains(['/', '%', '{']) {
        return None;
    }
    let filled = match placeholder_re() {
        Some(re) => re.replace_all(text, "/").into_owned(),
        None => text.to_string(),
    };
    let mut segs: Vec<&str> = Vec::new();
    for seg in filled.split('/') {
        match seg {
            "" | "." => {}
            ".." if segs.last().is_some_and(|l| *l != "..") => {
                segs.pop();
            }
            s => segs.push(s),
        }
    }
    let mut out = String::with_capacity(filled.len());
    if filled.starts_with('/') {
        out.push('/');
    }
    out.push_str(&segs.join("/"));
    if filled.ends_with('/') && !segs.is_empty() {
        out.push('/');
    }
    (out != text).then_some(out)
}

/// Checks one candidate text, as written and read as a path; true when it named a
/// secret (and was recorded).
fn check(text: &str, hits: &mut Hits) -> bool {
    check_one(text, hits) || as_path(text).is_some_and(|p| check_one(&p, hits))
}

fn check_one(text: &str, hits: &mut Hits) -> bool {
    let Some(re) = secret_re() else {
        hits.add(SECRET_READ, "the secret-path rule could not be read".into());
        return true;
    };
    match re.find(text) {
        Some(m) => {
            let shown: String = text
                .get(m.start().saturating_sub(20)..)
                .unwrap_or(text)
                .chars()
                .take(60)
                .collect();
            hits.add(
                SECRET_READ,
                format!("a string names a secret path (`{}`)", shown.trim()),
            );
            true
        }
        None => false,
    }
}

/// ROT13 of a text (`/rgp/cnffjq` → `/etc/passwd`).
fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => char::from(b'a' + (c as u8 - b'a' + 13) % 26),
            'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + 13) % 26),
            _ => c,
        })
        .collect()
}

/// Decodings of one literal worth a look: reversed, base64 and hex (and ROT13 when
/// the snippet names that codec).
fn decodings(s: &str, rot: bool) -> Vec<String> {
    let mut out = vec![s.chars().rev().collect::<String>()];
    if rot {
        out.push(rot13(s));
    }
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.len() >= 8 {
        let engines = [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::URL_SAFE,
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        for e in engines {
            if let Ok(bytes) = e.decode(&compact) {
                out.push(String::from_utf8_lossy(&bytes).into_owned());
                break;
            }
        }
        if compact.len().is_multiple_of(2) && compact.chars().all(|c| c.is_ascii_hexdigit()) {
            let bytes: Vec<u8> = (0..compact.len() / 2)
                .filter_map(|k| compact.get(2 * k..2 * k + 2))
                .filter_map(|h| u8::from_str_radix(h, 16).ok())
                .collect();
            out.push(String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    out
}

/// A number token's value as a character, when it is one (`47` → `/`).
fn as_char(text: &str) -> Option<char> {
    let t = text.replace('_', "");
    let value = match t.get(..2) {
        Some("0x" | "0X") => u32::from_str_radix(t.get(2..)?, 16).ok()?,
        Some("0o" | "0O") => u32::from_str_radix(t.get(2..)?, 8).ok()?,
        Some("0b" | "0B") => u32::from_str_radix(t.get(2..)?, 2).ok()?,
        _ => t.parse().ok()?,
    };
    char::from_u32(value).filter(|c| !c.is_control() || *c == '\t')
}

/// Records a secret read when any literal, alone or joined, names a secret path.
pub(super) fn secrets(toks: &[Tok], hits: &mut Hits) {
    let rot = toks.iter().any(|t| {
        matches!(t, Tok::Str(s) if matches!(s.to_lowercase().replace(['-', '_'], "").as_str(), "rot13"))
    });
    let mut all = String::new();
    let mut all_slashed = String::from("/");
    let mut stmt = String::new();
    let mut stmt_slashed = String::from("/");
    let mut numbers = String::new();
    let flush = |stmt: &mut String, slashed: &mut String, numbers: &mut String, hits: &mut Hits| {
        let found = check(stmt, hits) || check(slashed, hits) || check(numbers, hits);
        stmt.clear();
        slashed.clear();
        slashed.push('/');
        numbers.clear();
        found
    };
    for t in toks {
        match t {
            Tok::Str(s) => {
                if check(s, hits) || decodings(s, rot).iter().any(|d| check(d, hits)) {
                    return;
                }
                stmt.push_str(s);
                stmt_slashed.push_str(s);
                stmt_slashed.push('/');
                all.push_str(s);
                all_slashed.push_str(s);
                all_slashed.push('/');
            }
            Tok::Num(n) => {
                if let Some(c) = as_char(n) {
                    numbers.push(c);
                }
            }
            Tok::End if flush(&mut stmt, &mut stmt_slashed, &mut numbers, hits) => return,
            _ => {}
        }
    }
    if flush(&mut stmt, &mut stmt_slashed, &mut numbers, hits) {
        return;
    }
    let _ = check(&all, hits) || check(&all_slashed, hits);
}
