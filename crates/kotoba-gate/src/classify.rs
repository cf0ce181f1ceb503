//! [`classify`]: the verdict for one action. Dangerous rules first (never auto, never
//! grantable), then the auto-safe test of gate.md (read-only first token, no shell
//! metacharacter, no escape flag, every path inside the workspace), then which "always"
//! grants a card may offer and why not.

use std::path::Path;

use super::arguments::device_named;
use super::commands::{is_known, is_privilege};
use super::danger::shell_danger;
use super::families;
use super::finding::Principle;
use super::names::{RESERVED, SHELLS, WRAPPERS};
use super::paths::check_paths;
use super::python::python_danger;
use super::shell_words::{is_assignment, parse, Line, Simple, Word};
use super::{base_name, family_of, strip_version, Action, Decision, Verdict, READ_ONLY_COMMANDS};
use kotoba_core::protocol::Risk;

/// Characters that make the first token stop describing what runs on the host.
const METACHARS: [char; 10] = [';', '&', '|', '`', '\n', '<', '>', '$', '{', '}'];

/// Never grantable as a family (gate.md "Grants"), by kind.
const INTERPRETERS: [&str; 27] = [
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "ash",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "pypy",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "tclsh",
    "rscript",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
];
const EXEC_WRAPPERS: [&str; 18] = [
    "sudo", "doas", "su", "env", "xargs", "nohup", "time", "timeout", "ssh", "docker", "podman",
    "setsid", "stdbuf", "nice", "ionice", "chroot", "unshare", "crontab",
];
const PAGERS_EDITORS: [&str; 17] = [
    "less", "more", "pg", "vi", "vim", "view", "vimdiff", "rvim", "rview", "nano", "pico", "emacs",
    "ed", "ex", "man", "info", "perldoc",
];
const TRANSFER_TOOLS: [&str; 10] = [
    "curl", "wget", "scp", "sftp", "rsync", "ftp", "nc", "ncat", "netcat", "socat",
];

/// Classify one action. `workspace` is the folder commands run in; `host` is true when
/// commands run on the host (production), which switches on the metacharacter and path
/// rules. Pure apart from reading file metadata under the workspace (links, existence).
pub fn classify(action: &Action, workspace: &Path, host: bool) -> Decision {
    match action {
        Action::Shell { command } => classify_shell(command, workspace, host),
        Action::Code { code, family } => classify_code(code, family),
        Action::Tool {
            name,
            risk,
            may_always,
        } => classify_tool(name, *risk, *may_always),
    }
}

fn classify_shell(command: &str, workspace: &Path, host: bool) -> Decision {
    let family = family_of(command);
    if command.trim().is_empty() {
        return Decision {
            verdict: Verdict::Ask,
            family: None,
            can_always: false,
            can_always_exact: false,
            no_always_reason: Some("There is no command, so there is nothing to save.".into()),
            reasons: vec!["The command is empty, so the gate has nothing to read.".into()],
            principle: None,
        };
    }
    if let Some(f) = shell_danger(command) {
        return Decision {
            verdict: Verdict::Dangerous {
                label: f.label.clone(),
            },
            family,
            can_always: false,
            can_always_exact: false,
            no_always_reason: Some(format!(
                "It is a {}, so it asks every time and can never be saved.",
                f.label
            )),
            reasons: vec![format!(
                "Dangerous ({}): {}. It asks every time, and no grant covers it.",
                f.label, f.detail
            )],
            principle: Some(f.principle),
        };
    }
    let line = parse(command);
    let mut no_always_reason = family_refusal(command, family.as_deref(), &line);
    // Rule 4 decides when it refuses the family or narrows it to a subcommand.
    let mut principle = family
        .as_deref()
        .is_some_and(|f| f.contains(' '))
        .then_some(Principle::Family);
    // Only a family in the gate's table is a promise it can keep (families.rs).
    let mut does = None;
    if let (None, Some(f)) = (&no_always_reason, family.as_deref()) {
        match families::known(f) {
            Ok(d) => does = Some(d.sentence(f)),
            Err(why) => {
                no_always_reason = Some(why);
                principle = Some(Principle::Family);
            }
        }
    }
    if no_always_reason.is_none() {
        no_always_reason = family.as_deref().and_then(|f| beyond_prefix(f, &line));
        if no_always_reason.is_some() {
            principle = Some(Principle::Family);
        }
    }
    let (verdict, reason) = match auto_safe(&line, command, workspace, host) {
        Ok(why) => (Verdict::AutoSafe, why),
        Err(why) => (Verdict::Ask, why),
    };
    let mut reasons = vec![reason];
    if no_always_reason.is_none() {
        reasons.extend(does);
    }
    Decision {
        verdict,
        can_always: no_always_reason.is_none(),
        can_always_exact: true,
        no_always_reason,
        family,
        reasons,
        principle,
    }
}

fn classify_code(code: &str, family: &str) -> Decision {
    match python_danger(code) {
        Some(f) => Decision {
            verdict: Verdict::Dangerous {
                label: f.label.clone(),
            },
            family: Some(family.to_string()),
            can_always: false,
            can_always_exact: false,
            no_always_reason: Some(format!(
                "It is a {}, so it asks every time, even under a saved {family} grant.",
                f.label
            )),
            reasons: vec![format!(
                "Dangerous ({}): {}. Code like this asks every time, even under a saved \
                 {family} grant.",
                f.label, f.detail
            )],
            principle: Some(f.principle),
        },
        None => Decision {
            verdict: Verdict::Ask,
            family: Some(family.to_string()),
            can_always: true,
            can_always_exact: false,
            no_always_reason: None,
            reasons: vec![
                format!(
                    "Code never runs on its own: it asks unless a saved {family} grant covers it."
                ),
                "No dangerous pattern was found (tree deletion, process spawn, sockets, eval, \
                 file writes, uploads, secrets)."
                    .into(),
            ],
            principle: None,
        },
    }
}

fn classify_tool(name: &str, risk: Risk, may_always: bool) -> Decision {
    let family = (!name.trim().is_empty()).then(|| name.to_string());
    let (verdict, reason) = match risk {
        Risk::Read => (
            Verdict::AutoSafe,
            format!("'{name}' only reads (risk read), so it runs without asking."),
        ),
        Risk::Write => (
            Verdict::Ask,
            format!("'{name}' changes files or memory (risk write), so it asks."),
        ),
        Risk::Exec => (
            Verdict::Ask,
            format!("'{name}' runs a process on the host (risk exec), so it asks."),
        ),
        Risk::Network => (
            Verdict::Ask,
            format!("'{name}' reaches the network (risk network), so it asks."),
        ),
    };
    // Installing third-party code is asked for every time: a saved "always" would let
    // any later install run unseen.
    let never_saved = !may_always;
    let no_always_reason = if family.is_none() {
        Some("The tool has no name, so there is nothing to save.".to_string())
    } else if never_saved {
        Some(format!(
            "'{name}' asks every time and can never be saved: it installs third-party code or \
             changes a place others share."
        ))
    } else {
        None
    };
    Decision {
        verdict,
        can_always: family.is_some() && !never_saved,
        can_always_exact: false,
        no_always_reason,
        family,
        reasons: vec![reason],
        principle: None,
    }
}

/// Why a family grant cannot be offered for this (non-dangerous) line, or `None`.
fn family_refusal(command: &str, family: Option<&str>, line: &Line) -> Option<String> {
    let Some(family) = family else {
        return Some(
            "I can't read a command name in this line, so there is no family to save.".into(),
        );
    };
    let f = family.split(' ').next().unwrap_or(family);
    if RESERVED.contains(&f) || f == "function" {
        return Some(format!(
            "'{f}' opens a compound command of the shell, so there is no one command to save."
        ));
    }
    if INTERPRETERS.contains(&f) {
        return Some(format!(
            "'{f}' is an interpreter: it runs whatever program it is handed, so a rule for \
             it would allow anything."
        ));
    }
    if EXEC_WRAPPERS.contains(&f) || WRAPPERS.contains(&f) || SHELLS.contains(&f) {
        return Some(format!(
            "'{f}' runs another command named in its arguments, so a rule for it would \
             allow anything."
        ));
    }
    if PAGERS_EDITORS.contains(&f) {
        return Some(format!(
            "'{f}' can open a shell from inside, so a rule for it would allow anything."
        ));
    }
    if TRANSFER_TOOLS.contains(&f) {
        return Some(format!(
            "'{f}' moves data off this machine and can send any file it can read, so a \
             rule for it would allow sending anything."
        ));
    }
    if READ_ONLY_COMMANDS.contains(&f) {
        // Inside the workspace these already run without a card; a family rule could
        // only ever widen them to reading the rest of the machine (keys, secrets).
        return Some(format!(
            "'{f}' already runs freely inside the workspace; a rule for it would let it \
             read anything on this machine, so only this exact line can be saved."
        ));
    }
    if let Some(c) = command.chars().find(|c| METACHARS.contains(c)) {
        return Some(format!(
            "This line contains {}, so it can run more than '{f}'; a rule for '{f}' would \
             not describe it.",
            show(c)
        ));
    }
    if line.unbalanced {
        return Some(format!(
            "A quote in this line never closes, so a rule for '{f}' would not describe it."
        ));
    }
    if let Some(what) = unplain(line) {
        return Some(format!(
            "This line uses {what}, which the gate does not read as plainly as a rule for \
             '{family}' needs; only this exact line can be saved."
        ));
    }
    None
}

/// Rule 4: what in a plain line would let a grant for its family cover more than the
/// family says — a command nested in its words, a device, an option that runs code.
fn beyond_prefix(family: &str, line: &Line) -> Option<String> {
    let simple = line.simples().next()?;
    let texts = simple.texts();
    let words: Vec<&str> = texts.into_iter().skip_while(|w| is_assignment(w)).collect();
    let prefix = family.split(' ').count();
    for (i, word) in words.iter().enumerate().skip(1) {
        let name = base_name(word).to_lowercase();
        let base = strip_version(&name);
        let runs = SHELLS.contains(&base)
            || INTERPRETERS.contains(&base)
            || WRAPPERS.contains(&base)
            || EXEC_WRAPPERS.contains(&base)
            || PAGERS_EDITORS.contains(&base)
            || TRANSFER_TOOLS.contains(&base)
            || is_privilege(base);
        // After the prefix, any command the gate knows is nested in the line; as the
        // subcommand itself (`npm install`, `git rm`), only one that runs programs.
        if runs || (i >= prefix && is_known(base)) {
            return Some(format!(
                "'{word}' in this line is a command of its own, so a rule for '{family}' \
                 would cover whatever it runs; only this exact line can be saved."
            ));
        }
        if let Some(option) = code_option(word) {
            return Some(format!(
                "'{option}' can make '{family}' run other code, so a rule for it would \
                 cover that code; only this exact line can be saved."
            ));
        }
    }
    if let Some(device) = device_named(&words[1..], None) {
        return Some(format!(
            "'{device}' names a disk, so only this exact line can be saved."
        ));
    }
    None
}

/// Option names (lowercased, without dashes) that hand a program code or a program to
/// run: `-c`, `--config`, `--exec`, `--upload-pack`, `--editor`, `-e`, `-x`.
const CODE_OPTIONS: [&str; 17] = [
    "config",
    "exec",
    "command",
    "cmd",
    "program",
    "script",
    "hook",
    "pager",
    "editor",
    "shell",
    "filter",
    "plugin",
    "eval",
    "rsh",
    "proxy",
    "upload-pack",
    "receive-pack",
];

/// The option in `word` that could make its program run other code, if any.
fn code_option(word: &str) -> Option<&str> {
    if matches!(word, "-c" | "-e" | "-x") {
        return Some(word);
    }
    let key = word.strip_prefix("--")?.split('=').next()?.to_lowercase();
    CODE_OPTIONS.iter().any(|k| key.contains(k)).then_some(word)
}

/// What in a line keeps it from being a plain command word with plain arguments
/// (docs/gate.md: only such a line may get a family grant), or `None`.
fn unplain(line: &Line) -> Option<&'static str> {
    if line.overflow {
        return Some("a brace expansion too large to follow");
    }
    let mut simples = line.simples();
    let (Some(simple), None) = (simples.next(), simples.next()) else {
        return Some("more than one command");
    };
    if !line.heredocs.is_empty() {
        return Some("a here-document");
    }
    if !simple.redirects.is_empty() {
        return Some("a redirection");
    }
    if !simple.substitutions.is_empty() {
        return Some("a command substitution");
    }
    for word in &simple.words {
        if word.expands {
            return Some("an expansion ($…)");
        }
        if word.glob {
            return Some("a file-name pattern");
        }
        if !word.plain {
            return Some("escapes, ANSI-C or locale quoting, or a brace expansion");
        }
        if word.text.chars().any(char::is_control) {
            return Some("a control character");
        }
    }
    None
}

/// How a metacharacter is named in a sentence.
fn show(c: char) -> String {
    match c {
        '\n' => "a newline".to_string(),
        '`' => "a backtick (`)".to_string(),
        c => format!("'{c}'"),
    }
}

/// `Ok(why it is auto-safe)` or `Err(why it asks)`.
fn auto_safe(line: &Line, command: &str, workspace: &Path, host: bool) -> Result<String, String> {
    if line.overflow {
        return Err("A brace expansion in the line is too large to follow, so it asks.".into());
    }
    if line.unbalanced {
        return Err(
            "A quote, backtick or $( in the line never closes, so the gate cannot \
                    read it the way the shell would; it asks."
                .into(),
        );
    }
    if host {
        if let Some(c) = command.chars().find(|c| METACHARS.contains(c)) {
            return Err(format!(
                "The line contains {}, which can chain, redirect or substitute commands on \
                 the host, so it asks.",
                show(c)
            ));
        }
    }
    let mut simples: Vec<Simple> = Vec::new();
    collect_simples(line, host, 0, &mut simples)?;
    if simples.is_empty() {
        return Err("No command could be read in the line, so it asks.".into());
    }
    if host && simples.len() != 1 {
        return Err("The line holds more than one command, so it asks.".into());
    }
    let mut first_name = String::new();
    for simple in &simples {
        let Some(first) = simple.words.first() else {
            return Err("A redirection without a command cannot be checked, so it asks.".into());
        };
        let name = first.text.as_str();
        if !READ_ONLY_COMMANDS.contains(&name) {
            return Err(not_read_only(name));
        }
        if !first.plain {
            return Err(format!(
                "The command name '{name}' is written with escapes or quoting, so it asks."
            ));
        }
        let args = &simple.words[1..];
        if let Some((flag, why)) = escape_flag(name, args) {
            return Err(format!("'{flag}' {why}, so '{name}' asks here."));
        }
        if let Some(why) = still_acts(name, args) {
            return Err(format!("{why}, so '{name}' asks here."));
        }
        if host {
            check_paths(args, workspace)?;
        }
        if first_name.is_empty() {
            first_name = name.to_string();
        }
    }
    Ok(if host {
        format!(
            "'{first_name}' is on the read-only list, the line has no shell metacharacters \
             and no flag that runs, writes or waits, and every path stays inside the \
             workspace."
        )
    } else {
        format!(
            "'{first_name}' is on the read-only list and carries no flag that runs, writes or \
             waits; commands do not run on the host, so paths and metacharacters are not \
             checked."
        )
    })
}

/// Every simple command of the line; off the host, substitution bodies too.
fn collect_simples(
    line: &Line,
    host: bool,
    depth: usize,
    out: &mut Vec<Simple>,
) -> Result<(), String> {
    if depth > 4 {
        return Err("The line nests substitutions too deeply to check, so it asks.".into());
    }
    for simple in line.simples() {
        if !host {
            for body in &simple.substitutions {
                let inner = parse(body);
                if inner.unbalanced {
                    return Err("A substitution never closes, so it asks.".into());
                }
                collect_simples(&inner, host, depth + 1, out)?;
            }
        }
        out.push(simple.clone());
    }
    Ok(())
}

fn not_read_only(name: &str) -> String {
    if name.contains('/') {
        format!(
            "'{name}' names a program by its path; only the bare names on the read-only list \
             run without asking."
        )
    } else if is_assignment(name) {
        format!("'{name}' sets a variable that can change what the command does, so it asks.")
    } else {
        format!("'{name}' is not on the read-only list (ls, cat, grep, …), so it asks.")
    }
}

/// Options that make a read-only command run, write or wait: exact single-dash words
/// (find), short letters (bundled or glued), and long names (any unique prefix).
struct EscapeSpec {
    words: &'static [&'static str],
    shorts: &'static [char],
    longs: &'static [&'static str],
    why: &'static str,
}

fn escape_spec(name: &str) -> Option<EscapeSpec> {
    let spec = match name {
        "find" => EscapeSpec {
            words: &[
                "-exec",
                "-execdir",
                "-ok",
                "-okdir",
                "-delete",
                "-fls",
                "-fprint",
                "-fprint0",
                "-fprintf",
                "-L",
                "-follow",
                "-files0-from",
            ],
            shorts: &[],
            longs: &[],
            why: "makes find run a command, delete or write files, or follow links out",
        },
        "rg" => EscapeSpec {
            words: &[],
            shorts: &['L', 'z'],
            longs: &[
                "--pre",
                "--pre-glob",
                "--hostname-bin",
                "--follow",
                "--search-zip",
            ],
            why: "makes rg run another program or follow links out",
        },
        "sort" => EscapeSpec {
            words: &[],
            shorts: &['o'],
            longs: &["--output", "--compress-program", "--files0-from"],
            why: "makes sort write a file, run a program or read a list of files",
        },
        "tail" => EscapeSpec {
            words: &[],
            shorts: &['f', 'F'],
            longs: &["--follow", "--retry"],
            why: "makes tail wait for more forever",
        },
        "grep" => EscapeSpec {
            words: &[],
            shorts: &['Z', 'R'],
            longs: &["--null", "--dereference-recursive"],
            why: "changes how grep frames its output (NUL after names) or follows links out",
        },
        "date" => EscapeSpec {
            words: &[],
            shorts: &['s'],
            longs: &["--set"],
            why: "sets the clock",
        },
        "wc" => EscapeSpec {
            words: &[],
            shorts: &[],
            longs: &["--files0-from"],
            why: "reads a list of files to open",
        },
        _ => return None,
    };
    Some(spec)
}

/// Operands of a read-only command, skipping the values of the options listed in
/// `valued` (`-l 16`).
fn operands<'a>(args: &'a [Word], valued: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut only = false;
    for word in args {
        let a = word.text.as_str();
        if skip {
            skip = false;
        } else if only || !a.starts_with('-') || a == "-" {
            out.push(a);
        } else if a == "--" {
            only = true;
        } else if valued.contains(&a) {
            skip = true;
        }
    }
    out
}

/// Why a read-only command still acts on the machine with these arguments: `xxd in
/// out` and `uniq in out` write their second file, `date 0101…` sets the clock.
fn still_acts(name: &str, args: &[Word]) -> Option<String> {
    match name {
        "xxd" => (operands(args, &["-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-len"]).len()
            >= 2)
            .then(|| "'xxd' with two files writes the second one".to_string()),
        "uniq" => (operands(args, &["-f", "-s", "-w"]).len() >= 2)
            .then(|| "'uniq' with two files writes the second one".to_string()),
        "date" => operands(args, &["-d", "-f", "-r", "--date", "--file", "--reference"])
            .iter()
            .find(|a| !a.starts_with('+'))
            .map(|a| format!("'date {a}' sets the clock")),
        _ => None,
    }
}

/// The first escape flag among `args` (before `--`), with what it does.
fn escape_flag(name: &str, args: &[Word]) -> Option<(String, &'static str)> {
    let spec = escape_spec(name)?;
    for word in args {
        let arg = word.text.as_str();
        // find reads its whole line as an expression: `--` ends nothing there.
        if arg == "--" && name != "find" {
            break;
        }
        let hit = if name == "find" {
            spec.words.contains(&arg) || arg.starts_with("-fprint")
        } else if arg.starts_with("--") && arg.len() > 2 {
            let head = arg.split('=').next().unwrap_or(arg);
            spec.longs.iter().any(|l| l.starts_with(head))
        } else if arg.starts_with('-') {
            arg.chars().skip(1).any(|c| spec.shorts.contains(&c))
        } else {
            name == "tail" && arg.starts_with('+') && arg.contains(['f', 'F'])
        };
        if hit {
            return Some((arg.to_string(), spec.why));
        }
    }
    None
}
