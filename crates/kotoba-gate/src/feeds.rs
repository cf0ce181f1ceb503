//! Shapes of a line that feed code to a shell or interpreter (docs/gate.md "pipe to a
//! shell", "fork bomb"): the script of `sh -c`, a stage that reads its program from
//! standard input (through wrappers, with `-s`, `/dev/stdin`), a download run by a
//! substitution or by PowerShell, and a function that keeps starting copies of itself.

use super::arguments;
use super::commands;
use super::finding::{found, Finding, PIPE_TO_SHELL};
use super::names::{command_words, name_of, INTERPRETERS, SHELLS, TRANSFER};
use super::shell_words::{is_assignment, parse, Simple};
use super::strip_version;

/// The script of `sh -c SCRIPT` (or `python -c CODE`): every argument after the word
/// holding `c`, or the rest of a glued `-cCODE`.
pub(crate) fn dash_c_payloads(args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut after = false;
    for arg in args {
        if after {
            if !arg.starts_with('-') {
                out.push(arg.to_string());
            }
            continue;
        }
        let lower = arg.to_lowercase();
        if lower.starts_with("-com") || lower == "-c" && arg.len() == 2 {
            after = true;
        } else if arg.starts_with('-') && !arg.starts_with("--") {
            if let Some(glued) = arg.strip_prefix("-c").filter(|g| !g.is_empty()) {
                out.push(glued.to_string());
            } else if let Some(at) = bundle_letter(arg, 'c') {
                // `-Ic'…'`, `-ec`: what follows the `c` in the bundle may be the code,
                // or more flags before it.
                let glued = &arg[at + 1..];
                if !glued.is_empty() {
                    out.push(glued.to_string());
                }
                after = true;
            } else if arg.chars().skip(1).any(|c| c == 'c') {
                after = true;
            }
        }
    }
    out
}

/// Where `letter` stands in a bundle of short flags (`-Ic…` → 2), when every letter
/// before it is a flag letter.
pub(crate) fn bundle_letter(arg: &str, letter: char) -> Option<usize> {
    let rest = arg.strip_prefix('-').filter(|r| !r.starts_with('-'))?;
    let at = rest.find(letter)?;
    rest[..at]
        .chars()
        .all(|c| c.is_ascii_alphabetic())
        .then_some(at + 1)
}

/// The code language a stage reads from its standard input, if it does. `texts` are
/// the stage's words with the assignments before its command: a shell told to read its
/// start-up file from standard input (`BASH_ENV=/dev/stdin bash -c :`, `ENV=…`) reads
/// its input as code too.
pub(crate) fn stdin_reader(texts: &[&str]) -> Option<String> {
    let words = command_words(texts);
    let startup_from_stdin = texts
        .iter()
        .take(texts.len() - words.len())
        .filter_map(|t| t.split_once('='))
        .any(|(name, value)| matches!(name, "BASH_ENV" | "ENV") && is_stdin(value));
    let shell = words
        .first()
        .is_some_and(|w| SHELLS.contains(&strip_version(&name_of(w))));
    if startup_from_stdin && shell {
        return Some("sh".to_string());
    }
    reads_code(&words, false)
}

/// [`stdin_reader`] through wrappers: a wrapper's command is its first word that is not
/// an option, an assignment or an option's number (`nice -n 5 bash`), read the same way
/// (wrappers nest). `as_args`: the input arrives as arguments (`xargs`, `parallel`), so a
/// shell runs it even when it is given `-c`.
fn reads_code(words: &[&str], as_args: bool) -> Option<String> {
    let first = name_of(words.first()?);
    if matches!(first.as_str(), "source" | ".") {
        let from_stdin = words.get(1).is_some_and(|a| is_stdin(a));
        return from_stdin.then(|| "sh".to_string());
    }
    let rest = &words[1..];
    let base = strip_version(&first).to_string();
    // `at` and `batch` take a time, never a script: they read their commands from
    // standard input unless given `-f FILE`. `crontab` installs the lines it reads.
    if matches!(base.as_str(), "at" | "batch") {
        return (!rest.iter().any(|a| a.starts_with("-f"))).then(|| "sh".to_string());
    }
    if base == "crontab" {
        let from_stdin = rest.is_empty() || rest.iter().any(|a| is_stdin(a));
        return from_stdin.then(|| "cron".to_string());
    }
    // make reading its makefile from standard input runs the recipes it is fed.
    if matches!(base.as_str(), "make" | "gmake") {
        let makefile = rest
            .iter()
            .position(|a| *a == "-f" || *a == "--file")
            .and_then(|i| rest.get(i + 1).copied())
            .or_else(|| rest.iter().find_map(|a| a.strip_prefix("--file=")));
        return makefile.is_some_and(is_stdin).then(|| "sh".to_string());
    }
    // A multi-call binary runs the applet its first word names (`busybox sh`).
    if matches!(base.as_str(), "busybox" | "toybox") && !rest.is_empty() {
        return reads_code(rest, as_args);
    }
    if SHELLS.contains(&base.as_str()) || INTERPRETERS.contains(&base.as_str()) {
        let shell = SHELLS.contains(&base.as_str());
        if !script_given(rest, shell) || as_args {
            return Some(base);
        }
        // A script that runs a reader of standard input hands it the shell's own
        // (`sh -c sh <<< …`, `bash -c 'source /dev/stdin'`, `bash -c 'python3 -'`).
        if shell {
            return dash_c_payloads(rest).iter().find_map(|script| {
                parse(script)
                    .simples()
                    .find_map(|s| stdin_reader(&s.texts()))
            });
        }
        return None;
    }
    if arguments::is_reader(words) {
        return None;
    }
    // A wrapper, named or not (`nice`, `chronic`, `xargs`): the program it runs is a
    // later word, read the same way (wrappers nest).
    let number = |w: &str| w.starts_with(|c: char| c.is_ascii_digit());
    let fed = as_args || matches!(first.as_str(), "xargs" | "parallel");
    (0..rest.len())
        .filter(|i| !rest[*i].starts_with('-') && !is_assignment(rest[*i]) && !number(rest[*i]))
        .find_map(|i| reads_code(&rest[i..], fed))
}

/// A path that is the reader's own standard input: `-`, `/dev/stdin`, `/dev/fd/0`,
/// `/proc/self/fd/0`, `/proc/$$/fd/0`.
fn is_stdin(path: &str) -> bool {
    let clean = commands::normalise(path);
    matches!(clean.as_str(), "-" | "/dev/stdin" | "/dev/fd/0")
        || clean.starts_with("/proc/")
            && clean.ends_with("/fd/0")
            && clean.matches('/').count() == 4
}

/// True when a shell or interpreter is handed its program (`-c`, `-e`, a script file)
/// rather than reading it from standard input (`bash`, `bash -s stable`,
/// `sh /dev/stdin`).
fn script_given(args: &[&str], shell: bool) -> bool {
    if !dash_c_payloads(args).is_empty()
        || args
            .iter()
            .any(|a| matches!(*a, "-e" | "-c" | "-r" | "--eval" | "-Command" | "-command"))
    {
        return true;
    }
    let mut options = args
        .iter()
        .take_while(|a| a.starts_with('-') && **a != "-" && **a != "--");
    let from_stdin = shell && options.any(|a| !a.starts_with("--") && a.contains('s'));
    if from_stdin {
        return false;
    }
    args.iter()
        .find(|a| !a.starts_with('-') || **a == "-")
        .is_some_and(|a| !is_stdin(a))
}

pub(crate) fn is_transfer(stage: &Simple) -> bool {
    command_words(&stage.texts())
        .iter()
        .any(|w| TRANSFER.contains(&strip_version(&name_of(w))))
}

/// PowerShell running what a download returns: `iex (iwr …)`, `iwr … | iex`,
/// `Invoke-Expression (New-Object Net.WebClient).DownloadString(…)`.
pub(crate) fn powershell_download(text: &str) -> Option<Finding> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '.'))
        .collect();
    let evaluates = words
        .iter()
        .any(|w| matches!(*w, "iex" | "invoke-expression"));
    let downloads = words.iter().any(|w| {
        matches!(
            *w,
            "iwr" | "irm" | "invoke-webrequest" | "invoke-restmethod" | "start-bitstransfer"
        ) || w.ends_with("downloadstring")
            || w.ends_with("net.webclient")
    });
    if !(evaluates && downloads) {
        return None;
    }
    found(
        PIPE_TO_SHELL,
        "PowerShell runs what a download returns (Invoke-Expression)".into(),
    )
}

/// `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(wget …)"`, `source <(curl …)`.
pub(crate) fn substituted_download(stage: &Simple) -> Option<Finding> {
    let texts = stage.texts();
    let words = command_words(&texts);
    let first = strip_version(&name_of(words.first()?)).to_string();
    let runs_code = SHELLS.contains(&first.as_str())
        || INTERPRETERS.contains(&first.as_str())
        || matches!(first.as_str(), "eval" | "source" | ".");
    if !runs_code {
        return None;
    }
    let downloads = stage
        .substitutions
        .iter()
        .any(|body| parse(body).simples().any(is_transfer));
    if downloads {
        return found(
            PIPE_TO_SHELL,
            format!("'{first}' runs what a download prints"),
        );
    }
    let decodes = stage
        .substitutions
        .iter()
        .any(|body| parse(body).simples().any(is_decoder));
    if !decodes {
        return None;
    }
    found(
        PIPE_TO_SHELL,
        format!("'{first}' runs text decoded as it runs (base64, xxd -r …)"),
    )
}

/// A stage that turns hidden text back into a command: `base64 -d`, `xxd -r`,
/// `openssl … -d`, `uudecode`, `rev`.
fn is_decoder(stage: &Simple) -> bool {
    let texts = stage.texts();
    let words = command_words(&texts);
    let Some(first) = words.first() else {
        return false;
    };
    let name = strip_version(&name_of(first)).to_string();
    let args = &words[1..];
    let flag = |f: &str| {
        args.iter()
            .any(|a| *a == f || a.starts_with(&format!("{f}=")))
    };
    match name.as_str() {
        "base64" | "base32" | "basenc" => {
            flag("-d") || flag("--decode") || flag("-D") || args.iter().any(|a| a.starts_with("-d"))
        }
        "xxd" => args.iter().any(|a| a.starts_with("-r")),
        "openssl" => flag("-d") || flag("-base64") && flag("-d"),
        "uudecode" | "rev" => true,
        _ => false,
    }
}

/// `text` with what stands inside single or double quotes blanked out, one character
/// for one (so positions agree with the text's).
fn outside_quotes(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                    out.push(c);
                    continue;
                }
                out.push(' ');
            }
            None => {
                if !escaped && (c == '\'' || c == '"') {
                    quote = Some(c);
                }
                escaped = !escaped && c == '\\';
                out.push(c);
            }
        }
    }
    out
}

/// The name of a function that keeps starting copies of itself: it calls itself twice,
/// or once in the background or through a pipe (`:(){ :|:& };:`, `f(){ f & f; }; f`).
pub(crate) fn fork_bomb(text: &str) -> Option<String> {
    // A definition is found outside quotes: quoted text is data (`echo ':(){ :|:& };:'`),
    // and what runs it — `sh -c`, `eval`, a pipe into a shell — reads it again as a line
    // of its own. Inside a body, a quoted word is still a call (`f(){ "f"|"f"& }`).
    let outside = outside_quotes(text);
    let chars: Vec<char> = text.chars().collect();
    let is_name = |c: char| !";&|(){}<> \t\n\"'".contains(c);
    let mut i = 0;
    while i < chars.len() {
        // `NAME ( ) {` or `function NAME {`.
        let Some(open) = outside[i..].iter().position(|c| *c == '{').map(|p| p + i) else {
            break;
        };
        let head: String = chars[..open].iter().collect();
        let head = head.trim_end();
        let name = if let Some(h) = head.strip_suffix(')') {
            let h = h.trim_end();
            h.strip_suffix('(').map(|n| {
                let n = n.trim_end();
                let start = n.rfind(|c: char| !is_name(c)).map(|p| p + 1).unwrap_or(0);
                n[start..].to_string()
            })
        } else {
            let start = head
                .rfind(|c: char| !is_name(c))
                .map(|p| p + 1)
                .unwrap_or(0);
            let word = &head[start..];
            head[..start]
                .trim_end()
                .ends_with("function")
                .then(|| word.to_string())
        };
        let name = name.map(|n| n.strip_prefix("function").unwrap_or(&n).to_string());
        // The body: up to the matching `}`.
        let mut depth = 0usize;
        let mut close = chars.len();
        for (j, c) in outside.iter().enumerate().skip(open) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            let body: String = chars[open + 1..close.max(open + 1)].iter().collect();
            let calls = body
                .split(|c: char| !is_name(c))
                .filter(|t| *t == name)
                .count();
            if calls >= 2 || (calls >= 1 && body.contains(['&', '|'])) {
                return Some(name);
            }
        }
        i = open + 1;
    }
    None
}
