//! The dangerous-shell rules of gate.md: every simple command of a line (each stage of
//! each pipeline, each list item, each `$( )`/backtick body, the script of `sh -c`, the
//! command behind a wrapper such as `env`, `xargs` or `timeout`) is read on its own, and
//! one dangerous part makes the whole line dangerous.

use super::python::python_danger;
use super::shell_words::{is_assignment, parse, Simple};
use super::{base_name, strip_version};

/// Recursive delete: any recursive flag on rm.
pub const RECURSIVE_DELETE: &str = "recursive delete";
/// rm of `/`, `~` or `$HOME`.
pub const DELETE_ROOT_OR_HOME: &str = "delete of root or home";
/// sudo, su, doas.
pub const PRIVILEGE_ESCALATION: &str = "privilege escalation";
/// `curl … | sh` and its kin.
pub const PIPE_TO_SHELL: &str = "pipe to a shell";
/// dd (or a redirection) onto a device.
pub const RAW_DISK_WRITE: &str = "raw disk write";
/// mkfs and its kin.
pub const FILESYSTEM_FORMAT: &str = "filesystem format";
/// `:(){ :|:& };:` and its kin.
pub const FORK_BOMB: &str = "fork bomb";
/// chmod/chown/chgrp -R on `/`, a top-level system folder or home.
pub const RECURSIVE_CHMOD_ROOT: &str = "recursive chmod/chown of /";
/// shutdown, reboot, halt, poweroff.
pub const POWER_CONTROL: &str = "power control";
/// history -c, deleting or overwriting shell history or keys.
pub const HISTORY_OR_KEY_WIPE: &str = "history/key wipe";
/// find -delete, find -exec rm.
pub const DESTRUCTIVE_FIND: &str = "destructive find";
/// truncate, shred.
pub const TRUNCATE_SHRED: &str = "truncate/shred";
/// Nesting or size past what the reader will follow; never assumed harmless.
pub const TOO_COMPLEX: &str = "too complex to check";

/// What matched: the label and a sentence fragment naming the part that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The short label.
    pub label: String,
    /// Which command, flag or path matched, for the card's reasons.
    pub detail: String,
}

fn found(label: &str, detail: String) -> Option<Finding> {
    Some(Finding {
        label: label.to_string(),
        detail,
    })
}

/// How deep `sh -c`, `eval` and substitutions are followed.
const MAX_DEPTH: usize = 8;
/// How many words the reader may look at for one line, all nesting included.
const FUEL: usize = 1_000_000;

const SHELLS: [&str; 12] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "ash", "fish", "csh", "tcsh", "busybox",
];
const INTERPRETERS: [&str; 10] = [
    "python", "pypy", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun",
];
const TRANSFER: [&str; 8] = [
    "curl", "wget", "fetch", "aria2c", "nc", "ncat", "netcat", "socat",
];
/// Commands that run another command named in their arguments.
const WRAPPERS: [&str; 35] = [
    "sudo",
    "doas",
    "su",
    "run0",
    "pkexec",
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
    "command",
    "exec",
    "builtin",
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
];
/// Words that open a compound command and stand before the real command name.
const RESERVED: [&str; 12] = [
    "{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "fi", "done",
];
const SAFE_DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];
const SYSTEM_DIRS: [&str; 15] = [
    "bin", "boot", "dev", "etc", "home", "lib", "lib64", "opt", "proc", "root", "sbin", "srv",
    "sys", "usr", "var",
];

struct Reader {
    fuel: usize,
}

/// The first dangerous part of a shell line, if any.
pub(crate) fn shell_danger(command: &str) -> Option<Finding> {
    let mut reader = Reader { fuel: FUEL };
    reader.line(command, 0)
}

/// The command name a word names: path stripped, lowercased (no version stripping).
fn name_of(word: &str) -> String {
    base_name(word).to_lowercase()
}

/// The words of a simple command from its real command name on: leading reserved
/// words (`then`, `do`, `{`) and `NAME=value` assignments skipped.
fn command_words(simple: &Simple) -> Vec<&str> {
    let texts = simple.texts();
    let start = texts
        .iter()
        .position(|w| !RESERVED.contains(w) && !is_assignment(w))
        .unwrap_or(texts.len());
    texts[start..].to_vec()
}

/// The arguments before a `--` end-of-options marker.
fn option_args<'a>(args: &'a [&'a str]) -> &'a [&'a str] {
    let end = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    &args[..end]
}

/// The first short-option word (`-rf`, `-R`) holding one of `letters`.
fn short_flag(args: &[&str], letters: &[char]) -> Option<String> {
    option_args(args)
        .iter()
        .find(|a| {
            a.starts_with('-')
                && !a.starts_with("--")
                && a.chars().skip(1).any(|c| letters.contains(&c))
        })
        .map(|a| a.to_string())
}

/// The first long option that is `long` or a unique-looking prefix of it (`--rec`).
fn long_flag(args: &[&str], long: &str) -> Option<String> {
    option_args(args)
        .iter()
        .find(|a| {
            let head = a.split('=').next().unwrap_or("");
            head.len() > 2 && head.starts_with("--") && long.starts_with(head)
        })
        .map(|a| a.to_string())
}

/// Lexically cleaned components of a path (`.` dropped, `..` popped).
fn clean_components(rest: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out
}

/// True for `/`, `/*`, `~`, `~/*`, `$HOME`, `${HOME}/` and lexical spellings of them.
fn is_root_or_home(target: &str) -> bool {
    let rest = if let Some(r) = target.strip_prefix('/') {
        r
    } else {
        let home = ["${HOME}", "$HOME", "~"]
            .iter()
            .find_map(|h| target.strip_prefix(h));
        match home {
            Some(r) if r.is_empty() || r.starts_with('/') => r,
            _ => return false,
        }
    };
    let parts = clean_components(rest);
    parts.is_empty() || parts == ["*"]
}

/// True for `/`, a top-level system folder (`/etc`, `/usr`) or home.
fn is_system_root(target: &str) -> bool {
    if is_root_or_home(target) {
        return true;
    }
    match target.strip_prefix('/') {
        Some(rest) => {
            let parts = clean_components(rest);
            parts.len() == 1 && SYSTEM_DIRS.contains(&parts[0])
        }
        None => false,
    }
}

/// True for a path naming shell history, SSH/GPG/cloud keys or the keystore.
fn is_secret_path(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.split('/').any(|seg| {
        matches!(
            seg,
            ".ssh" | ".gnupg" | ".aws" | ".history" | "authorized_keys"
        ) || seg.ends_with("_history")
            || seg.starts_with("keystore")
            || ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
                .iter()
                .any(|k| seg.starts_with(k))
    })
}

fn is_device(target: &str) -> bool {
    target.starts_with("/dev/")
        && !SAFE_DEVICES.contains(&target)
        && !target.starts_with("/dev/fd/")
        && !target.starts_with("/dev/pts/")
}

/// The first word naming a secret path among `args` (options skipped).
fn secret_arg(args: &[&str]) -> Option<String> {
    args.iter()
        .filter(|a| !a.starts_with('-'))
        .find(|a| is_secret_path(a))
        .map(|a| a.to_string())
}

/// The script of `sh -c SCRIPT` (or `python -c CODE`): every argument after the word
/// holding `c`, or the rest of a glued `-cCODE`.
fn dash_c_payloads<'a>(args: &'a [&'a str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut after = false;
    for arg in args {
        if after {
            if !arg.starts_with('-') {
                out.push(arg.to_string());
            }
            continue;
        }
        if arg.starts_with('-') && !arg.starts_with("--") {
            if let Some(glued) = arg.strip_prefix("-c").filter(|g| !g.is_empty()) {
                out.push(glued.to_string());
            } else if arg.chars().skip(1).any(|c| c == 'c') {
                after = true;
            }
        }
    }
    out
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
                format!("the function '{name}' pipes into itself in the background"),
            );
        }
        let line = parse(text);
        for pipeline in &line.pipelines {
            for (i, stage) in pipeline.stages.iter().enumerate() {
                if let Some(f) = self.simple(stage, depth) {
                    return Some(f);
                }
                if i > 0 {
                    if let Some(f) = pipe_to_shell(&pipeline.stages[..i], stage) {
                        return Some(f);
                    }
                }
                if let Some(f) = substituted_download(stage) {
                    return Some(f);
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

    fn simple(&mut self, simple: &Simple, depth: usize) -> Option<Finding> {
        for r in simple.redirects.iter().filter(|r| r.writes()) {
            if is_device(&r.target) {
                return found(
                    RAW_DISK_WRITE,
                    format!("'{} {}' writes to a device", r.op, r.target),
                );
            }
            if is_secret_path(&r.target) {
                return found(
                    HISTORY_OR_KEY_WIPE,
                    format!("'{} {}' overwrites history or keys", r.op, r.target),
                );
            }
        }
        let words = command_words(simple);
        if words.is_empty() {
            return None;
        }
        if let Some(f) = self.command(&words, depth) {
            return Some(f);
        }
        if WRAPPERS.contains(&name_of(words[0]).as_str()) {
            let name = name_of(words[0]);
            for i in 1..words.len() {
                if words[i].starts_with('-') || is_assignment(words[i]) {
                    continue;
                }
                if let Some(f) = self.command(&words[i..], depth) {
                    return Some(f);
                }
            }
            if name == "ssh" || name == "watch" {
                // The remote (or repeated) command is read by a shell: every tail of the
                // arguments is tried as a line, since the host or interval comes first.
                for i in 1..words.len() {
                    if words[i].starts_with('-') {
                        continue;
                    }
                    if let Some(f) = self.line(&words[i..].join(" "), depth + 1) {
                        return Some(f);
                    }
                }
            }
        }
        None
    }

    /// The rules for one command (words[0] is its name).
    fn command(&mut self, words: &[&str], depth: usize) -> Option<Finding> {
        if !self.spend(words.len()) {
            return found(TOO_COMPLEX, "the line is longer than the gate reads".into());
        }
        let name = name_of(words.first()?);
        let args = &words[1..];
        let base = strip_version(&name);
        match name.as_str() {
            "sudo" | "su" | "doas" | "run0" | "pkexec" => found(
                PRIVILEGE_ESCALATION,
                format!("'{name}' runs as another user"),
            ),
            "rm" => rm_rules(args),
            "unlink" | "rmdir" => secret_arg(args).and_then(|p| {
                found(
                    HISTORY_OR_KEY_WIPE,
                    format!("'{name} {p}' deletes history or keys"),
                )
            }),
            "shred" | "truncate" | "wipe" | "srm" => match secret_arg(args) {
                Some(p) => found(HISTORY_OR_KEY_WIPE, format!("'{name}' destroys '{p}'")),
                None => found(TRUNCATE_SHRED, format!("'{name}' destroys file contents")),
            },
            "dd" => dd_rules(args),
            "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" => {
                found(FILESYSTEM_FORMAT, format!("'{name}' rewrites a disk"))
            }
            n if n.starts_with("mkfs") => {
                found(FILESYSTEM_FORMAT, format!("'{name}' formats a filesystem"))
            }
            "chmod" | "chown" | "chgrp" => {
                let flag = short_flag(args, &['R']).or_else(|| long_flag(args, "--recursive"))?;
                let target = option_args(args)
                    .iter()
                    .chain(args.iter().skip_while(|a| **a != "--").skip(1))
                    .find(|a| !a.starts_with('-') && is_system_root(a))?;
                found(
                    RECURSIVE_CHMOD_ROOT,
                    format!("'{name} {flag}' on '{target}' changes the whole system"),
                )
            }
            "shutdown" | "reboot" | "halt" | "poweroff" => {
                found(POWER_CONTROL, format!("'{name}' powers the machine down"))
            }
            "init" | "telinit" if args.iter().any(|a| matches!(*a, "0" | "6")) => {
                found(POWER_CONTROL, format!("'{name}' changes the run level"))
            }
            "systemctl"
                if args.iter().any(|a| {
                    matches!(
                        *a,
                        "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate"
                    )
                }) =>
            {
                found(POWER_CONTROL, "'systemctl' powers the machine down".into())
            }
            "history" => short_flag(args, &['c'])
                .and_then(|f| found(HISTORY_OR_KEY_WIPE, format!("'history {f}' clears history"))),
            "cp" | "ln" | "install" => {
                let last = args.iter().rev().find(|a| !a.starts_with('-'))?;
                is_secret_path(last).then(|| Finding {
                    label: HISTORY_OR_KEY_WIPE.into(),
                    detail: format!("'{name}' overwrites '{last}'"),
                })
            }
            "mv" | "tee" => secret_arg(args).and_then(|p| {
                found(
                    HISTORY_OR_KEY_WIPE,
                    format!("'{name}' moves or overwrites '{p}'"),
                )
            }),
            "find" => self.find_rules(args, depth),
            "eval" => self.line(&args.join(" "), depth + 1),
            _ if SHELLS.contains(&base) => {
                for script in dash_c_payloads(args) {
                    if let Some(f) = self.line(&script, depth + 1) {
                        return Some(f);
                    }
                }
                None
            }
            _ if base == "python" || base == "pypy" => {
                dash_c_payloads(args).iter().find_map(|code| {
                    python_danger(code).map(|f| Finding {
                        label: f.label,
                        detail: format!("'{name} -c' code: {}", f.detail),
                    })
                })
            }
            _ => None,
        }
    }

    fn find_rules(&mut self, args: &[&str], depth: usize) -> Option<Finding> {
        if args.contains(&"-delete") {
            return found(
                DESTRUCTIVE_FIND,
                "'find -delete' deletes what it finds".into(),
            );
        }
        for (i, arg) in args.iter().enumerate() {
            if !matches!(*arg, "-exec" | "-execdir" | "-ok" | "-okdir") {
                continue;
            }
            let rest = &args[i + 1..];
            let end = rest
                .iter()
                .position(|a| *a == ";" || *a == "+")
                .unwrap_or(rest.len());
            let sub = &rest[..end];
            let Some(first) = sub.first() else { continue };
            let name = name_of(first);
            if matches!(
                name.as_str(),
                "rm" | "rmdir" | "unlink" | "shred" | "truncate" | "wipe" | "srm"
            ) {
                return found(
                    DESTRUCTIVE_FIND,
                    format!("'find {arg} {name}' deletes what it finds"),
                );
            }
            if let Some(f) = self.command(sub, depth + 1) {
                return Some(f);
            }
        }
        None
    }
}

fn rm_rules(args: &[&str]) -> Option<Finding> {
    if let Some(flag) = short_flag(args, &['r', 'R']).or_else(|| long_flag(args, "--recursive")) {
        return found(
            RECURSIVE_DELETE,
            format!("'rm {flag}' deletes whole folders"),
        );
    }
    if let Some(flag) = long_flag(args, "--no-preserve-root") {
        return found(DELETE_ROOT_OR_HOME, format!("'rm {flag}' aims at the root"));
    }
    let operands = option_args(args)
        .iter()
        .filter(|a| !a.starts_with('-'))
        .chain(args.iter().skip_while(|a| **a != "--").skip(1));
    for target in operands {
        if is_root_or_home(target) {
            return found(
                DELETE_ROOT_OR_HOME,
                format!("'rm {target}' deletes root or home"),
            );
        }
        if is_secret_path(target) {
            return found(
                HISTORY_OR_KEY_WIPE,
                format!("'rm {target}' deletes history or keys"),
            );
        }
    }
    None
}

fn dd_rules(args: &[&str]) -> Option<Finding> {
    for arg in args {
        if let Some(target) = arg.strip_prefix("of=") {
            if is_device(target) {
                return found(RAW_DISK_WRITE, format!("'dd {arg}' writes onto a device"));
            }
            if is_secret_path(target) {
                return found(HISTORY_OR_KEY_WIPE, format!("'dd {arg}' overwrites keys"));
            }
        }
    }
    None
}

/// The interpreter a pipeline stage feeds its standard input to, if it is one.
fn stage_interpreter(stage: &Simple) -> Option<String> {
    let words = command_words(stage);
    let first = name_of(words.first()?);
    let candidates: Vec<&str> = if WRAPPERS.contains(&first.as_str()) {
        if first == "xargs" || first == "parallel" {
            return None;
        }
        words[1..].to_vec()
    } else {
        vec![words[0]]
    };
    for (i, word) in candidates.iter().enumerate() {
        let base = strip_version(&name_of(word)).to_string();
        if SHELLS.contains(&base.as_str()) || INTERPRETERS.contains(&base.as_str()) {
            let rest = &candidates[i + 1..];
            if dash_c_payloads(rest).is_empty() && !rest.iter().any(|a| *a == "-e" || *a == "-c") {
                return Some(base);
            }
            return None;
        }
    }
    None
}

fn is_transfer(stage: &Simple) -> bool {
    let words = command_words(stage);
    words
        .iter()
        .any(|w| TRANSFER.contains(&strip_version(&name_of(w))))
}

/// `curl … | sh`: a later stage hands its input to a shell, or an interpreter reads what
/// a download tool printed.
fn pipe_to_shell(before: &[Simple], stage: &Simple) -> Option<Finding> {
    let interp = stage_interpreter(stage)?;
    if SHELLS.contains(&interp.as_str()) || before.iter().any(is_transfer) {
        return found(
            PIPE_TO_SHELL,
            format!("a pipe feeds commands into '{interp}'"),
        );
    }
    None
}

/// `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(wget …)"`, `source <(curl …)`.
fn substituted_download(stage: &Simple) -> Option<Finding> {
    let words = command_words(stage);
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

/// The name of a function that pipes into itself in the background (`:(){ :|:& };:`).
fn fork_bomb(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let is_name = |c: char| !";&|(){}<>".contains(c);
    let name_before = |end: usize| -> String {
        let mut start = end;
        while start > 0 && is_name(chars[start - 1]) {
            start -= 1;
        }
        chars[start..end].iter().collect()
    };
    let name_after = |begin: usize| -> (String, usize) {
        let mut end = begin;
        while end < chars.len() && is_name(chars[end]) {
            end += 1;
        }
        (chars[begin..end].iter().collect(), end)
    };
    // Every function defined: `NAME()` or `function NAME` (whitespace already squashed).
    let mut defined = std::collections::HashSet::new();
    for i in 0..chars.len() {
        if chars[i] == '(' && chars.get(i + 1) == Some(&')') {
            let name = name_before(i);
            defined.insert(name.strip_prefix("function").unwrap_or(&name).to_string());
            defined.insert(name);
        }
        if chars[i..].starts_with(&['f', 'u', 'n', 'c', 't', 'i', 'o', 'n']) {
            defined.insert(name_after(i + 8).0);
        }
    }
    for i in 0..chars.len() {
        if chars[i] != '|' {
            continue;
        }
        let left = name_before(i);
        let (right, end) = name_after(i + 1);
        if !left.is_empty()
            && left == right
            && chars.get(end) == Some(&'&')
            && defined.contains(&left)
        {
            return Some(left);
        }
    }
    None
}
