//! The dangerous-shell reader of docs/gate.md: every simple command of a line (each
//! stage of each pipeline, each list item, each `$( )`/backtick body, here-documents and
//! here-strings fed to a shell or interpreter, the script of `sh -c`, the program of
//! `perl -e`, the command behind a wrapper or runner such as `env`, `xargs`, `tmux` or
//! `find -exec`, the value of an option that names a command) is read on its own, with
//! the words the shell would hand it, and one dangerous part makes the whole line
//! dangerous. The per-command rules are in `commands`.

use super::commands::{self, DELETERS, PRIVILEGE};
use super::finding::{found, Finding, DESTRUCTIVE_FIND, FORK_BOMB, PIPE_TO_SHELL, TOO_COMPLEX};
use super::interp;
use super::python::python_danger;
use super::shell_words::{is_assignment, parse, Line, Simple};
use super::{base_name, strip_version};

/// How deep `sh -c`, `eval`, runners and substitutions are followed.
const MAX_DEPTH: usize = 8;
/// How many words the reader may look at for one line, all nesting included.
const FUEL: usize = 200_000;

/// Programs that read shell commands (from `-c`, a here-document or standard input).
pub(crate) const SHELLS: [&str; 16] = [
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "yash",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "pwsh",
    "powershell",
    "at",
    "batch",
];
const INTERPRETERS: [&str; 10] = [
    "python", "pypy", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun",
];
const TRANSFER: [&str; 8] = [
    "curl", "wget", "fetch", "aria2c", "nc", "ncat", "netcat", "socat",
];
/// Programs that run another command given as their later arguments.
pub(crate) const WRAPPERS: [&str; 62] = [
    "env",
    "xargs",
    "nohup",
    "time",
    "timeout",
    "nice",
    "ionice",
    "stdbuf",
    "setsid",
    "chroot",
    "unshare",
    "nsenter",
    "ssh",
    "docker",
    "podman",
    "busybox",
    "toybox",
    "command",
    "exec",
    "builtin",
    "coproc",
    "watch",
    "strace",
    "ltrace",
    "flock",
    "chrt",
    "taskset",
    "parallel",
    "script",
    "firejail",
    "torsocks",
    "proxychains",
    "proxychains4",
    "systemd-run",
    "systemd-nspawn",
    "screen",
    "tmux",
    "trap",
    "eval",
    "dbus-launch",
    "dbus-run-session",
    "xvfb-run",
    "valgrind",
    "unbuffer",
    "sg",
    "newgrp",
    "setpriv",
    "prlimit",
    "cgexec",
    "numactl",
    "chpst",
    "daemonize",
    "start-stop-daemon",
    "tsp",
    "nq",
    "entr",
    "fakeroot",
    "bwrap",
    "xterm",
    "gnome-terminal",
    "x-terminal-emulator",
    "nix-shell",
];
/// Runners that hand (some of) their arguments to a shell as one command line.
const STRING_RUNNERS: [&str; 14] = [
    "ssh",
    "watch",
    "tmux",
    "screen",
    "script",
    "flock",
    "xterm",
    "parallel",
    "trap",
    "eval",
    "sg",
    "nix-shell",
    "su",
    "runuser",
];
/// Words that open a compound command and stand before the real command name.
const RESERVED: [&str; 13] = [
    "{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "fi", "done", "time",
];
/// Option names (lowercased) whose value is a command some program will run.
const COMMAND_KEYS: [&str; 15] = [
    "command", "cmd", "exec", "program", "script", "action", "pager", "editor", "shell", "rsh",
    "hook", "filter", "alias", "lessopen", "prompt",
];

struct Reader {
    fuel: usize,
    /// Variables assigned earlier in the line (`X=rm; $X -rf /`).
    vars: Vec<(String, String)>,
}

/// The first dangerous part of a shell line, if any.
pub(crate) fn shell_danger(command: &str) -> Option<Finding> {
    let mut reader = Reader {
        fuel: FUEL,
        vars: Vec::new(),
    };
    reader.line(command, 0)
}

/// The command name a word names: path stripped, lowercased (no version stripping).
fn name_of(word: &str) -> String {
    base_name(word).to_lowercase()
}

/// The words of a simple command from its real command name on: leading reserved
/// words (`then`, `do`, `{`) and `NAME=value` assignments skipped.
fn command_words<'a>(texts: &[&'a str]) -> Vec<&'a str> {
    let start = texts
        .iter()
        .position(|w| !RESERVED.contains(w) && !is_assignment(w))
        .unwrap_or(texts.len());
    texts[start..].to_vec()
}

/// The script of `sh -c SCRIPT` (or `python -c CODE`): every argument after the word
/// holding `c`, or the rest of a glued `-cCODE`.
fn dash_c_payloads(args: &[&str]) -> Vec<String> {
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
            } else if arg.chars().skip(1).any(|c| c == 'c') {
                after = true;
            }
        }
    }
    out
}

/// Values of options that name a command to run: `ProxyCommand=…`,
/// `--checkpoint-action=exec=…`, `--to-command …`, `core.sshCommand=…`, `rsync -e …`.
fn command_values(name: &str, words: &[&str]) -> Vec<String> {
    let keyed = |key: &str| {
        let key = key.trim_start_matches('-').to_lowercase();
        COMMAND_KEYS.iter().any(|k| key.contains(k))
    };
    let clean = |v: &str| {
        let v = v.strip_prefix("exec=").unwrap_or(v);
        v.trim_start_matches(['|', '!', ' ']).to_string()
    };
    let mut out = Vec::new();
    let leading = words.iter().take_while(|w| is_assignment(w)).count();
    for (i, word) in words.iter().enumerate() {
        if let Some((key, value)) = word.split_once('=') {
            // Only where a program reads it as configuration: a glued option, a key
            // after `-o`/`-c`, a dotted config key, or an assignment before the command.
            let after_config_flag = i > 0 && matches!(words[i - 1], "-o" | "-c" | "--config");
            let config = key.starts_with('-') || after_config_flag || key.contains('.');
            if keyed(key) && !key.contains(' ') && (config || i < leading) {
                out.push(clean(value));
            }
        } else if word.starts_with("--") && keyed(word) {
            out.extend(words.get(i + 1).map(|v| clean(v)));
        }
        let pair = matches!((name, *word), ("rsync", "-e") | ("tar", "-I" | "-F"));
        if pair {
            out.extend(words.get(i + 1).map(|v| clean(v)));
        }
    }
    out
}

/// The code language a stage reads from its standard input, if it does.
fn stdin_reader(words: &[&str]) -> Option<String> {
    reads_code(words, false)
}

/// [`stdin_reader`] through wrappers: a wrapper's command is its first word that is not
/// an option, an assignment or an option's number (`nice -n 5 bash`), read the same way
/// (wrappers nest). `as_args`: the input arrives as arguments (`xargs`, `parallel`), so a
/// shell runs it even when it is given `-c`.
fn reads_code(words: &[&str], as_args: bool) -> Option<String> {
    let first = name_of(words.first()?);
    if matches!(first.as_str(), "source" | ".") {
        let from_stdin = words
            .get(1)
            .is_some_and(|a| matches!(*a, "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-"));
        return from_stdin.then(|| "sh".to_string());
    }
    let rest = &words[1..];
    if WRAPPERS.contains(&first.as_str()) {
        let number = |w: &str| w.starts_with(|c: char| c.is_ascii_digit());
        let at = rest
            .iter()
            .position(|w| !w.starts_with('-') && !is_assignment(w) && !number(w))?;
        let fed = as_args || matches!(first.as_str(), "xargs" | "parallel");
        return reads_code(&rest[at..], fed);
    }
    let base = strip_version(&first).to_string();
    if !SHELLS.contains(&base.as_str()) && !INTERPRETERS.contains(&base.as_str()) {
        return None;
    }
    let script_given = !dash_c_payloads(rest).is_empty()
        || rest
            .iter()
            .any(|a| matches!(*a, "-e" | "-c" | "-r" | "--eval"))
        || rest
            .iter()
            .any(|a| !a.starts_with('-') && !matches!(*a, "/dev/stdin" | "/proc/self/fd/0"));
    (!script_given || as_args).then_some(base)
}

fn is_transfer(stage: &Simple) -> bool {
    command_words(&stage.texts())
        .iter()
        .any(|w| TRANSFER.contains(&strip_version(&name_of(w))))
}

/// True when a command (through wrappers and `sh -c`) deletes what it is handed.
fn deletes(words: &[&str], depth: usize) -> bool {
    if depth > 4 {
        return true;
    }
    let Some(first) = words.first() else {
        return false;
    };
    let name = name_of(first);
    if DELETERS.contains(&name.as_str()) {
        return true;
    }
    let args = &words[1..];
    if SHELLS.contains(&strip_version(&name)) {
        return dash_c_payloads(args).iter().any(|script| {
            parse(script)
                .simples()
                .any(|s| deletes(&command_words(&s.texts()), depth + 1))
        });
    }
    if WRAPPERS.contains(&name.as_str()) {
        return (1..words.len())
            .filter(|i| !words[*i].starts_with('-') && !is_assignment(words[*i]))
            .any(|i| deletes(&words[i..], depth + 1));
    }
    false
}

impl Reader {
    fn spend(&mut self, amount: usize) -> bool {
        self.fuel = self.fuel.saturating_sub(amount.max(1));
        self.fuel > 0
    }

    fn line(&mut self, text: &str, depth: usize) -> Option<Finding> {
        if depth > MAX_DEPTH || !self.spend(1 + text.len() / 16) {
            return found(
                TOO_COMPLEX,
                "the line nests shells or substitutions deeper than the gate reads".into(),
            );
        }
        if let Some(name) = fork_bomb(text) {
            return found(
                FORK_BOMB,
                format!("the function '{name}' keeps starting copies of itself"),
            );
        }
        let line = parse(text);
        if line.overflow {
            return found(
                TOO_COMPLEX,
                "a brace expansion makes more words than the gate reads".into(),
            );
        }
        for pipeline in &line.pipelines {
            for (i, stage) in pipeline.stages.iter().enumerate() {
                if let Some(f) = self.simple(stage, &line, depth) {
                    return Some(f);
                }
                if i > 0 {
                    if let Some(f) = self.piped(&pipeline.stages[..i], stage, depth) {
                        return Some(f);
                    }
                }
                if let Some(f) = substituted_download(stage) {
                    return Some(f);
                }
                for body in &stage.output_substitutions {
                    let inner = parse(body);
                    let first = inner.simples().next().map(|s| s.texts());
                    let lang = first.and_then(|w| stdin_reader(&command_words(&w)));
                    if lang.is_some_and(|l| SHELLS.contains(&l.as_str())) {
                        return found(
                            PIPE_TO_SHELL,
                            format!("'>({body})' feeds what is written into a shell"),
                        );
                    }
                }
                for sub in &stage.substitutions {
                    if let Some(f) = self.line(sub, depth + 1) {
                        return Some(f);
                    }
                }
            }
        }
        None
    }

    /// The words of a stage with the variables set earlier in the line put in.
    fn substituted(&mut self, stage: &Simple) -> Vec<String> {
        let mut out = Vec::new();
        for word in &stage.words {
            if !word.expands || self.vars.is_empty() {
                out.push(word.text.clone());
                continue;
            }
            let mut text = word.text.clone();
            for (name, value) in &self.vars {
                text = text
                    .replace(&format!("${{{name}}}"), value)
                    .replace(&format!("${name}"), value);
            }
            out.extend(text.split_whitespace().map(str::to_string));
        }
        let all_assignments = !out.is_empty() && out.iter().all(|w| is_assignment(w));
        let declared = matches!(
            out.first().map(String::as_str),
            Some("export" | "local" | "declare" | "readonly" | "typeset")
        );
        if all_assignments || declared {
            for word in out.iter().filter(|w| is_assignment(w)) {
                if let Some((name, value)) = word.split_once('=') {
                    self.vars.retain(|(n, _)| n != name);
                    self.vars.push((name.to_string(), value.to_string()));
                }
            }
        }
        out
    }

    fn simple(&mut self, stage: &Simple, line: &Line, depth: usize) -> Option<Finding> {
        for r in stage.redirects.iter().filter(|r| r.writes()) {
            if let Some(f) = commands::write_target(&format!("'{}'", r.op), &r.target) {
                return Some(f);
            }
        }
        let owned = self.substituted(stage);
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let words = command_words(&texts);
        for r in stage.redirects.iter().filter(|r| r.feeds_text()) {
            let text = line.heredoc_body(r).unwrap_or(&r.target).to_string();
            if let Some(lang) = stdin_reader(&words) {
                if let Some(f) = self.code(&lang, &text, depth) {
                    return Some(f);
                }
            }
        }
        let name = words.first().map(|w| name_of(w)).unwrap_or_default();
        if !matches!(name.as_str(), "echo" | "printf") {
            for value in command_values(&name, &texts) {
                if let Some(f) = self.line(&value, depth + 1) {
                    return Some(f);
                }
            }
        }
        if words.is_empty() {
            return None;
        }
        self.command(&words, depth)
    }

    /// Code in `lang` (a shell, python, or another interpreter) read as that language.
    fn code(&mut self, lang: &str, code: &str, depth: usize) -> Option<Finding> {
        if SHELLS.contains(&lang) {
            return self.line(code, depth + 1);
        }
        if lang == "python" || lang == "pypy" {
            return python_danger(code).map(|f| Finding {
                label: f.label,
                detail: format!("'{lang}' code: {}", f.detail),
            });
        }
        let lang = if interp::LANGUAGES.contains(&lang) {
            lang
        } else {
            "perl"
        };
        interp::code_danger(lang, code, &mut |l| self.line(l, depth + 1))
    }

    /// The rules for one command (words[0] is its name).
    fn command(&mut self, words: &[&str], depth: usize) -> Option<Finding> {
        if !self.spend(words.len()) || depth > MAX_DEPTH {
            return found(TOO_COMPLEX, "the line is longer than the gate reads".into());
        }
        let first = *words.first()?;
        let name = name_of(first);
        let args = &words[1..];
        let base = strip_version(&name).to_string();
        if let Some(f) = commands::rules(&name, args) {
            return Some(f);
        }
        if first.contains(['$', '`']) {
            // A command name the gate cannot resolve: read its arguments as if it were a
            // runner, so `$SHELL -c 'rm -rf /'` is still seen.
            return self.runner(words, true, depth);
        }
        if SHELLS.contains(&base.as_str()) {
            for script in dash_c_payloads(args) {
                if let Some(f) = self.line(&script, depth + 1) {
                    return Some(f);
                }
            }
        }
        if base == "python" || base == "pypy" {
            for code in dash_c_payloads(args) {
                if let Some(f) = self.code("python", &code, depth) {
                    return Some(f);
                }
            }
        }
        if interp::LANGUAGES.contains(&base.as_str()) {
            for code in interp::code_args(&base, args) {
                if let Some(f) = interp::code_danger(&base, &code, &mut |l| self.line(l, depth + 1))
                {
                    return Some(f);
                }
            }
        }
        if name == "find" {
            return self.find_rules(args, depth);
        }
        if name == "env" {
            let split = args
                .iter()
                .position(|a| *a == "-S" || a.starts_with("--split"));
            if let Some(script) = split.and_then(|i| args.get(i + 1)) {
                if let Some(f) = self.line(script, depth + 1) {
                    return Some(f);
                }
            }
            let glued = args.iter().filter_map(|a| {
                a.strip_prefix("--split-string=")
                    .or_else(|| a.strip_prefix("-S"))
            });
            for glued in glued {
                if let Some(f) = self.line(glued, depth + 1) {
                    return Some(f);
                }
            }
        }
        if WRAPPERS.contains(&name.as_str()) || PRIVILEGE.contains(&name.as_str()) {
            return self.runner(words, STRING_RUNNERS.contains(&name.as_str()), depth);
        }
        None
    }

    /// A runner: every later word that is not an option may be the command it runs; a
    /// string runner also hands every tail of its arguments to a shell.
    fn runner(&mut self, words: &[&str], strings: bool, depth: usize) -> Option<Finding> {
        for i in 1..words.len() {
            if words[i].starts_with('-') || is_assignment(words[i]) || words[i] == ":::" {
                continue;
            }
            if let Some(f) = self.command(&words[i..], depth + 1) {
                return Some(f);
            }
        }
        if strings {
            for i in 1..words.len() {
                if words[i].starts_with('-') {
                    continue;
                }
                if let Some(f) = self.line(words[i], depth + 1) {
                    return Some(f);
                }
                if let Some(f) = self.line(&words[i..].join(" "), depth + 1) {
                    return Some(f);
                }
            }
        }
        None
    }

    fn find_rules(&mut self, args: &[&str], depth: usize) -> Option<Finding> {
        if let Some(a) = args.iter().find(|a| **a == "-delete") {
            return found(
                DESTRUCTIVE_FIND,
                format!("'find {a}' deletes what it finds"),
            );
        }
        for (i, arg) in args.iter().enumerate() {
            if matches!(*arg, "-fprint" | "-fprint0" | "-fprintf" | "-fls") {
                if let Some(f) = args
                    .get(i + 1)
                    .and_then(|t| commands::write_target(&format!("'find {arg}'"), t))
                {
                    return Some(f);
                }
            }
            if !matches!(*arg, "-exec" | "-execdir" | "-ok" | "-okdir") {
                continue;
            }
            let rest = &args[i + 1..];
            let end = rest
                .iter()
                .position(|a| *a == ";" || *a == "+")
                .unwrap_or(rest.len());
            let sub = &rest[..end];
            if sub.is_empty() {
                continue;
            }
            if let Some(f) = self.command(sub, depth + 1) {
                return Some(f);
            }
            if deletes(sub, 0) {
                return found(
                    DESTRUCTIVE_FIND,
                    format!("'find {arg} {}' deletes what it finds", sub.join(" ")),
                );
            }
        }
        None
    }

    /// Rules for a stage fed by the stages before it: a shell reading commands from a
    /// pipe, an interpreter reading a download or echoed code, `find | xargs rm`.
    fn piped(&mut self, before: &[Simple], stage: &Simple, depth: usize) -> Option<Finding> {
        let texts = stage.texts();
        let words = command_words(&texts);
        let first = words.first().map(|w| name_of(w)).unwrap_or_default();
        let finds = before
            .iter()
            .any(|s| command_words(&s.texts()).first().map(|w| name_of(w)) == Some("find".into()));
        if finds && matches!(first.as_str(), "xargs" | "parallel") && deletes(&words, 0) {
            return found(
                DESTRUCTIVE_FIND,
                format!("'find … | {}' deletes what find lists", words.join(" ")),
            );
        }
        let lang = stdin_reader(&words)?;
        if SHELLS.contains(&lang.as_str()) || before.iter().any(is_transfer) {
            return found(
                PIPE_TO_SHELL,
                format!("a pipe feeds commands into '{lang}'"),
            );
        }
        // An interpreter reading what `echo`/`printf` wrote: that text is its program.
        let prev = before.last()?;
        let prev_texts = prev.texts();
        let prev_words = command_words(&prev_texts);
        let echoed = match prev_words.first().map(|w| name_of(w)).as_deref() {
            Some("echo") => prev_words[1..]
                .iter()
                .filter(|a| !a.starts_with('-'))
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
            Some("printf") => prev_words.get(1).map(|s| s.to_string()).unwrap_or_default(),
            _ => return None,
        };
        self.code(&lang, &echoed, depth)
    }
}

/// `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(wget …)"`, `source <(curl …)`.
fn substituted_download(stage: &Simple) -> Option<Finding> {
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
    downloads.then(|| Finding {
        label: PIPE_TO_SHELL.into(),
        detail: format!("'{first}' runs what a download prints"),
    })
}

/// The name of a function that keeps starting copies of itself: it calls itself twice,
/// or once in the background or through a pipe (`:(){ :|:& };:`, `f(){ f & f; }; f`).
fn fork_bomb(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let is_name = |c: char| !";&|(){}<> \t\n\"'".contains(c);
    let mut i = 0;
    while i < chars.len() {
        // `NAME ( ) {` or `function NAME {`.
        let Some(open) = chars[i..].iter().position(|c| *c == '{').map(|p| p + i) else {
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
        for (j, c) in chars.iter().enumerate().skip(open) {
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
