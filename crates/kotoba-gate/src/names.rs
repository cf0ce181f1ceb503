//! The command names the shell reader knows by kind: shells, interpreters, transfer
//! tools, runners that run a command given as their arguments, runners that hand their
//! arguments to a shell as one line, and the shell's own reserved words; how a word
//! names a command.

use super::base_name;
use super::shell_words::is_assignment;

/// Programs that read shell commands (from `-c`, a here-document or standard input).
pub(crate) const SHELLS: [&str; 37] = [
    "sh",
    "bash",
    "rbash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "oksh",
    "loksh",
    "lksh",
    "pdksh",
    "posh",
    "yash",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "elvish",
    "xonsh",
    "nu",
    "nush",
    "ion",
    "murex",
    "osh",
    "ysh",
    "oil",
    "rc",
    "es",
    "scsh",
    "busybox",
    "pwsh",
    "powershell",
    "iex",
    "invoke-expression",
    "at",
    "batch",
    "bash-static",
];
pub(crate) const INTERPRETERS: [&str; 10] = [
    "python", "pypy", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun",
];
pub(crate) const TRANSFER: [&str; 12] = [
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
];
/// Programs that run another command given as their later arguments.
pub(crate) const WRAPPERS: [&str; 63] = [
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
    "machinectl",
];
/// Runners that hand (some of) their arguments to a shell as one command line.
pub(crate) const STRING_RUNNERS: [&str; 14] = [
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
pub(crate) const RESERVED: [&str; 13] = [
    "{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "fi", "done", "time",
];

/// Extensions of documents, sources and data: a word ending in one names a file
/// (`src/sudo.rs`, `mkfs.txt`, `shutdown.log`), never the program its stem spells.
const FILE_EXTENSIONS: [&str; 48] = [
    "rs", "md", "txt", "rst", "adoc", "ts", "tsx", "js", "jsx", "mjs", "cjs", "py", "rb", "go",
    "c", "h", "cc", "cpp", "hpp", "java", "kt", "swift", "cs", "json", "yaml", "yml", "toml",
    "lock", "log", "csv", "html", "css", "scss", "sh", "bash", "zsh", "conf", "cfg", "ini", "xml",
    "sql", "bak", "orig", "diff", "patch", "pdf", "png", "svg",
];

/// True when the (lowercased) name ends in a document, source or data extension.
pub(crate) fn is_file_name(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && FILE_EXTENSIONS.contains(&ext))
}

/// The command name a word names: path stripped, lowercased (no version stripping).
pub(crate) fn name_of(word: &str) -> String {
    base_name(word).to_lowercase()
}

/// The words of a simple command from its real command name on: leading reserved
/// words (`then`, `do`, `{`) and `NAME=value` assignments skipped.
pub(crate) fn command_words<'a>(texts: &[&'a str]) -> Vec<&'a str> {
    let start = texts
        .iter()
        .position(|w| !RESERVED.contains(w) && !is_assignment(w))
        .unwrap_or(texts.len());
    texts[start..].to_vec()
}
