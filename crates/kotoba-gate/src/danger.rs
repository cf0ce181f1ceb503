//! The dangerous-shell reader of docs/gate.md: every simple command of a line (each
//! stage of each pipeline, each list item, each `$( )`/backtick body, here-documents and
//! here-strings fed to a shell or interpreter, the script of `sh -c`, the program of
//! `perl -e`, the command behind a wrapper or runner such as `env`, `xargs`, `tmux` or
//! `find -exec`, the value of an option that names a command) is read on its own, with
//! the words the shell would hand it, and one dangerous part makes the whole line
//! dangerous. The per-command rules are in `commands`.

use super::arguments::{self, absolute, PROGRAM_OPTIONS};
use super::braces;
use super::commands::{self, is_secret_path, DELETERS};
use super::feeds::{
    dash_c_payloads, fork_bomb, is_transfer, powershell_download, stdin_reader,
    substituted_download,
};
use super::finding::{
    found, Finding, Principle, DESTRUCTIVE_FIND, FORK_BOMB, HISTORY_OR_KEY_WIPE, PIPE_TO_SHELL,
    PRIVILEGE_ESCALATION, RAW_DISK_WRITE, TOO_COMPLEX,
};
use super::grammar;
use super::interp;
use super::names::{self, command_words, name_of, SHELLS, STRING_RUNNERS, WRAPPERS};
use super::python::python_danger;
use super::shell_words::{is_assignment, parse, Line, Simple};
use super::strip_version;

/// How deep `sh -c`, `eval`, runners and substitutions are followed.
const MAX_DEPTH: usize = 8;
/// How many words the reader may look at for one line, all nesting included.
const FUEL: usize = 200_000;

struct Reader {
    /// How many more words the reader may look at before the line is too complex.
    fuel: usize,
    /// Variables assigned earlier in the line (`X=rm; $X -rf /`, `read X <<< …`,
    /// `printf -v X …`), with `IFS` among them when the line sets it.
    vars: Vec<(String, String)>,
    /// The folder an earlier `cd` in the line moved to, for relative paths
    /// (`cd /dev && dd of=sda`).
    cwd: Option<String>,
    /// Scripts written earlier in the line (`echo '…' > x.sh`), by path, so running
    /// one (`bash x.sh`, `./x.sh`, `. x.sh`) is read as what it holds.
    written: Vec<(String, String)>,
    /// Whether an earlier redirection in the line opened a network connection
    /// (`exec 3<>/dev/tcp/…`), for a later shell reading a descriptor.
    network_fd: bool,
}

/// The first dangerous part of a shell line, if any.
pub(crate) fn shell_danger(command: &str) -> Option<Finding> {
    let mut reader = Reader {
        fuel: FUEL,
        vars: Vec::new(),
        cwd: None,
        written: Vec::new(),
        network_fd: false,
    };
    reader.line(command, 0)
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
        if let Some(f) = powershell_download(text) {
            return Some(f);
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
                    let lang = first.and_then(|w| stdin_reader(&w));
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
            // `$(echo rm)` and `` `printf rm` `` are the words they print.
            if let Some(printed) = word.expands.then(|| printed_by(&word.text)).flatten() {
                out.extend(printed.split_whitespace().map(str::to_string));
                continue;
            }
            // `$IFS` the line never set is the shell's default, white space: it splits
            // a word into the words of a command (`rm${IFS}-rf${IFS}~`).
            let default_ifs = self.line_value("IFS").is_none() && word.text.contains("IFS");
            if !word.expands || (self.vars.is_empty() && !default_ifs) {
                out.push(word.text.clone());
                continue;
            }
            let mut text = self.expand(&word.text);
            if default_ifs {
                text = braces::ifs_as_space(&text);
            }
            // Unquoted, the value is split on white space and on the line's own `IFS`.
            let ifs = self.line_value("IFS").unwrap_or_default();
            let split = |c: char| c.is_whitespace() || ifs.contains(c);
            out.extend(
                text.split(split)
                    .filter(|w| !w.is_empty())
                    .map(str::to_string),
            );
        }
        let all_assignments = !out.is_empty() && out.iter().all(|w| is_assignment(w));
        let declared = matches!(
            out.first().map(String::as_str),
            Some("export" | "local" | "declare" | "readonly" | "typeset")
        );
        if all_assignments || declared {
            for word in out.iter().filter(|w| is_assignment(w)) {
                if let Some((name, value)) = word.split_once('=') {
                    self.set(name, value.to_string());
                }
            }
        }
        out
    }

    /// Remember what `echo`, `printf` or `cat <<EOF` writes into a file.
    fn keep_written(&mut self, words: &[&str], stage: &Simple, line: &Line) {
        let Some(first) = words.first() else { return };
        let text = match (name_of(first).as_str(), printed(words)) {
            (_, Some(text)) => text,
            ("cat", None) => match stage.redirects.iter().find(|r| r.feeds_text()) {
                Some(r) => line.heredoc_body(r).unwrap_or(&r.target).to_string(),
                None => return,
            },
            _ => return,
        };
        for r in stage.redirects.iter().filter(|r| r.writes()) {
            let path = script_key(&absolute(&r.target, self.cwd.as_deref()));
            self.written.retain(|(p, _)| *p != path);
            self.written.push((path, text.clone()));
        }
    }

    /// What an earlier part of the line wrote into the script `path`, if anything.
    fn script(&self, path: &str) -> Option<String> {
        let key = script_key(&absolute(path, self.cwd.as_deref()));
        self.written
            .iter()
            .find(|(p, _)| *p == key)
            .map(|(_, text)| text.clone())
    }

    /// `text` with the variables set earlier in the line put in.
    fn expand(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (name, value) in &self.vars {
            text = element_refs(&text, name, value)
                .replace(&format!("${{{name}}}"), value)
                .replace(&format!("${name}"), value);
        }
        text
    }

    /// A variable set earlier in the line.
    fn line_value(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    fn set(&mut self, name: &str, value: String) {
        self.vars.retain(|(n, _)| n != name);
        self.vars.push((name.to_string(), value));
    }

    /// What a stage sets for later ones: the folder `cd DIR` moves to, the variable
    /// `read NAME <<< text` reads, and the one `printf -v NAME FORMAT ARGS…` writes.
    fn remember(&mut self, words: &[&str], stage: &Simple, line: &Line) {
        let Some(first) = words.first() else { return };
        match name_of(first).as_str() {
            "cd" | "pushd" => {
                let dir = words[1..].iter().find(|w| !w.starts_with('-'));
                self.cwd = dir.map(|d| match &self.cwd {
                    Some(cwd) if !d.starts_with(['/', '~', '$']) => {
                        commands::normalise(&format!("{cwd}/{d}"))
                    }
                    _ => commands::normalise(d),
                });
            }
            "read" | "mapfile" | "readarray" => {
                let name = words[1..].iter().rev().find(|w| !w.starts_with('-'));
                let fed = stage.redirects.iter().find(|r| r.feeds_text());
                if let (Some(name), Some(r)) = (name, fed) {
                    let text = line.heredoc_body(r).unwrap_or(&r.target).trim().to_string();
                    self.set(name, text);
                }
            }
            "printf" => {
                let at = words.iter().position(|w| *w == "-v");
                if let Some(name) = at.and_then(|i| words.get(i + 1)) {
                    let rest = &words[at.unwrap_or(0) + 2..];
                    self.set(name, printf_value(rest));
                }
            }
            _ => {}
        }
    }

    fn simple(&mut self, stage: &Simple, line: &Line, depth: usize) -> Option<Finding> {
        for r in stage.redirects.iter().filter(|r| r.writes()) {
            // A variable set earlier is the target it holds (`h=~/.bash_history; > $h`).
            let target = absolute(&self.expand(&r.target), self.cwd.as_deref());
            if let Some(f) = commands::write_target(&format!("'{}'", r.op), &target) {
                return Some(f);
            }
        }
        let owned = self.substituted(stage);
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let words = command_words(&texts);
        if let Some(f) = self.network_shell(&words, stage) {
            return Some(f);
        }
        self.remember(&words, stage, line);
        self.keep_written(&words, stage, line);
        // Pointing history elsewhere or emptying it (`HISTFILE=/dev/null`,
        // `export HISTSIZE=0`) hides what runs next, as a wipe does.
        let history = texts.iter().find(|t| {
            t.split_once('=').is_some_and(|(name, value)| {
                commands::history_variable(name)
                    && (name == "HISTFILE" || value.trim_start_matches('0').is_empty())
            })
        });
        if let Some(set) = history {
            return found(
                HISTORY_OR_KEY_WIPE,
                format!("'{set}' turns shell history off"),
            );
        }
        // 2: a variable set for the command may hold a line something will run
        // (`VISUAL='rm -rf ~' crontab -e`).
        for assignment in texts.iter().take(texts.len() - words.len()) {
            if let Some(f) = self.argument_lines(assignment, depth) {
                return Some(f);
            }
        }
        for r in stage.redirects.iter().filter(|r| r.feeds_text()) {
            let text = line.heredoc_body(r).unwrap_or(&r.target).to_string();
            if let Some(lang) = stdin_reader(&texts) {
                if let Some(f) = self.code(&lang, &text, depth) {
                    return Some(f);
                }
            }
        }
        if words.is_empty() {
            return None;
        }
        self.command(&words, depth)
    }

    /// A shell or interpreter reading from or answering a network connection
    /// (`sh < /dev/tcp/…`, `bash -i >& /dev/tcp/…`, `exec 3<>/dev/tcp/…; sh <&3`).
    fn network_shell(&mut self, words: &[&str], stage: &Simple) -> Option<Finding> {
        let network = |t: &str| {
            let clean = commands::normalise(&self.expand(t));
            clean.starts_with("/dev/tcp/") || clean.starts_with("/dev/udp/")
        };
        let here = stage.redirects.iter().find(|r| network(&r.target));
        if here.is_some() {
            self.network_fd = true;
        }
        let base = words
            .first()
            .map(|w| strip_version(&name_of(w)).to_string())
            .unwrap_or_default();
        let runs_code = SHELLS.contains(&base.as_str())
            || names::INTERPRETERS.contains(&base.as_str())
            || interp::LANGUAGES.contains(&base.as_str());
        let reads_fd = stage.redirects.iter().any(|r| {
            r.op.starts_with('<') && r.op.ends_with('&') && r.target.parse::<u32>().is_ok()
        });
        if runs_code && (here.is_some() || (self.network_fd && reads_fd)) {
            return found(
                PIPE_TO_SHELL,
                format!("'{base}' reads from or answers a network connection"),
            );
        }
        None
    }

    /// Code in `lang` (a shell, python, or another interpreter) read as that language.
    fn code(&mut self, lang: &str, code: &str, depth: usize) -> Option<Finding> {
        if SHELLS.contains(&lang) {
            return self.line(code, depth + 1);
        }
        if lang == "cron" {
            // A crontab line: five time fields (or an `@` schedule), then a command.
            for entry in code.lines().map(str::trim) {
                if entry.is_empty() || entry.starts_with('#') {
                    continue;
                }
                let skip = if entry.starts_with('@') { 1 } else { 5 };
                let command: Vec<&str> = entry.split_whitespace().skip(skip).collect();
                if let Some(f) = self.line(&command.join(" "), depth + 1) {
                    return Some(f);
                }
            }
            return None;
        }
        if lang == "python" || lang == "pypy" {
            return python_danger(code).map(|f| Finding {
                detail: format!("'{lang}' code: {}", f.detail),
                ..f
            });
        }
        let lang = if interp::LANGUAGES.contains(&lang) {
            lang
        } else {
            "perl"
        };
        interp::code_danger(lang, code, &mut |l| self.line(l, depth + 1))
    }

    /// One command (words[0] is its name): what its name is known to do; then, unless it
    /// only reads or prints its words, every later word that could start a command
    /// (rule 1) and what each argument could hold (rules 2 and 3, keys).
    fn command(&mut self, words: &[&str], depth: usize) -> Option<Finding> {
        // By the command's grammar: its text words (patterns, messages, topics, test
        // filters) are never commands, devices or paths; an invocation that only looks
        // has only what its options could hand a shell read (rule 2).
        let reading = grammar::read(words);
        let words = reading.acting.as_slice();
        if reading.looks {
            return words.iter().find_map(|w| self.argument_lines(w, depth));
        }
        if let Some(f) = self.named(words, depth) {
            return Some(by_pattern(f, &words[1..]));
        }
        if arguments::is_reader(words) {
            return None;
        }
        let first = *words.first()?;
        let name = name_of(first);
        // A runner the lists name was always read this way; anything else is rule 1.
        let listed = WRAPPERS.contains(&name.as_str())
            || commands::is_privilege(&name)
            || first.contains(['$', '`']);
        let credit = if listed {
            Principle::Named
        } else {
            Principle::LaterWord
        };
        for i in 1..words.len() {
            let word = words[i];
            if word.starts_with('-') || is_assignment(word) || word == ":::" {
                continue;
            }
            if let Some(f) = self.named(&words[i..], depth + 1) {
                return Some(f.by(credit));
            }
        }
        self.arguments(&name, words, depth)
    }

    /// What the command words[0] names is known to do to the machine or run, read with
    /// the words it is handed. A name the gate has no rule for costs one unit of fuel
    /// and finds nothing.
    fn named(&mut self, words: &[&str], depth: usize) -> Option<Finding> {
        let first = *words.first()?;
        let name = name_of(first);
        let base = strip_version(&name).to_string();
        // A file's name is not the program its stem spells (`sha256sum mkfs.txt`,
        // `git diff src/sudo.rs`), nor is a folder's (`/sudo/`): what such a script
        // does is not known by its name.
        let known = !names::is_file_name(&name)
            && !first.ends_with('/')
            && (commands::is_known(&name)
                || SHELLS.contains(&base.as_str())
                || WRAPPERS.contains(&name.as_str())
                || interp::LANGUAGES.contains(&base.as_str())
                || matches!(base.as_str(), "python" | "pypy" | "find" | "env")
                || PROGRAM_OPTIONS.iter().any(|(n, _)| *n == name));
        let cost = if known { words.len() } else { 1 };
        if !self.spend(cost) || depth > MAX_DEPTH {
            return found(TOO_COMPLEX, "the line is longer than the gate reads".into());
        }
        // A script written earlier in the line, run by its path or handed to a shell.
        let handed = if SHELLS.contains(&base.as_str()) || matches!(base.as_str(), "source" | ".") {
            words[1..].iter().find(|a| !a.starts_with('-')).copied()
        } else {
            Some(first)
        };
        if let Some(text) = handed.and_then(|p| self.script(p)) {
            if let Some(f) = self.line(&text, depth + 1) {
                return Some(f);
            }
        }
        if !known {
            return None;
        }
        let args = &words[1..];
        if let Some(f) = commands::rules(&name, args) {
            return Some(f);
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
            if let Some(f) = self.env_split(args, depth) {
                return Some(f);
            }
        }
        if let Some((_, options)) = PROGRAM_OPTIONS.iter().find(|(n, _)| *n == name) {
            for program in options
                .iter()
                .flat_map(|o| commands::output_values(args, None, o))
            {
                if let Some(f) = self.line(program, depth + 1) {
                    return Some(f);
                }
            }
        }
        if WRAPPERS.contains(&name.as_str()) {
            if let Some(option) = arguments::root_option(args) {
                return found(
                    PRIVILEGE_ESCALATION,
                    format!("'{name} {option}' runs its command as root"),
                );
            }
        }
        if STRING_RUNNERS.contains(&name.as_str()) {
            // Its arguments are joined into one line for a shell.
            for i in 1..words.len() {
                if words[i].starts_with('-') {
                    continue;
                }
                if let Some(f) = self.line(&words[i..].join(" "), depth + 1) {
                    return Some(f);
                }
            }
        }
        None
    }

    /// `env -S '…'` / `--split-string=…`: the string is split into a command line.
    fn env_split(&mut self, args: &[&str], depth: usize) -> Option<Finding> {
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
        None
    }

    /// What the arguments of a command that may act on them hold: a block device (3),
    /// history or keys, or a line a shell could be handed (2).
    fn arguments(&mut self, name: &str, words: &[&str], depth: usize) -> Option<Finding> {
        let args = &words[1..];
        let cwd = self.cwd.clone();
        if let Some(arg) = arguments::device_named(args, cwd.as_deref()) {
            return found(
                RAW_DISK_WRITE,
                format!("'{name}' is handed the device '{arg}' and can write to it"),
            )
            .map(|f| f.by(Principle::Device));
        }
        if !arguments::uses_identities(words) {
            let secret = |p: &&str| is_secret_path(&absolute(p, cwd.as_deref()));
            let named_secret = args
                .iter()
                .find(|a| arguments::path_texts(a).iter().any(secret));
            if let Some(arg) = named_secret {
                return found(
                    HISTORY_OR_KEY_WIPE,
                    format!(
                        "'{name}' is handed '{arg}', history or keys it could change or \
                         destroy"
                    ),
                )
                .map(|f| by_pattern(f, &[arg]));
            }
        }
        // The command word too: `--opt='…'` standing first is still read.
        for word in words {
            if let Some(f) = self.argument_lines(word, depth) {
                return Some(f);
            }
        }
        None
    }

    /// Rule 2: the lines one argument could hand a shell, each judged as a line.
    fn argument_lines(&mut self, word: &str, depth: usize) -> Option<Finding> {
        for text in arguments::command_texts(word) {
            // A word that reads back as itself (`<(curl …)`, whose body is read as a
            // substitution) holds no other line.
            let same = text == word
                && parse(&text)
                    .simples()
                    .flat_map(|s| s.words.iter())
                    .all(|w| w.text == word);
            if same {
                continue;
            }
            if let Some(f) = self.line(&text, depth + 1) {
                return Some(f.by(Principle::ArgumentLine));
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
        let lang = stdin_reader(&texts)?;
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

/// A history or key finding credited to rule 6 when only a pattern among `args` named
/// the secret.
fn by_pattern(f: Finding, args: &[&str]) -> Finding {
    let pattern = args.iter().any(|a| {
        arguments::path_texts(a)
            .iter()
            .any(|p| commands::secret_by_pattern(p))
    });
    if f.label == HISTORY_OR_KEY_WIPE && pattern {
        f.by(Principle::Glob)
    } else {
        f
    }
}

/// `text` with each `${NAME[…]}` (an element of an array the line filled) replaced by
/// `value`.
fn element_refs(text: &str, name: &str, value: &str) -> String {
    let open = format!("${{{name}[");
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(&open) {
        let Some(close) = rest[at..].find("]}") else {
            break;
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + close + 2..];
    }
    out.push_str(rest);
    out
}

/// What a whole-word substitution of a printer prints: `$(echo rm)` → `rm`,
/// `` `printf '%s' rm` `` → `rm`; `None` for anything else.
fn printed_by(text: &str) -> Option<String> {
    let body = text
        .strip_prefix("$(")
        .and_then(|b| b.strip_suffix(')'))
        .or_else(|| text.strip_prefix('`').and_then(|b| b.strip_suffix('`')))?;
    let line = parse(body);
    let mut simples = line.simples();
    let (Some(simple), None) = (simples.next(), simples.next()) else {
        return None;
    };
    if simple.words.iter().any(|w| w.expands) || !simple.redirects.is_empty() {
        return None;
    }
    printed(&simple.texts())
}

/// What `echo` or `printf` (not `printf -v`, which writes a variable) prints with these
/// words; `None` for any other command.
fn printed(words: &[&str]) -> Option<String> {
    let (first, args) = words.split_first()?;
    match name_of(first).as_str() {
        "echo" => Some(
            args.iter()
                .skip_while(|a| a.starts_with('-'))
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "printf" if !args.first().is_some_and(|a| a.starts_with("-v")) => Some(printf_value(args)),
        _ => None,
    }
}

/// A written script's path as a key: `./x.sh` and `x.sh` are one file.
fn script_key(path: &str) -> String {
    commands::normalise(path.trim_start_matches("./"))
}

/// The text `printf FORMAT ARGS…` writes: each `%s`-like conversion takes the next
/// argument (`printf -v c '%s -rf %s' rm '~'` sets `c` to `rm -rf ~`).
fn printf_value(words: &[&str]) -> String {
    let Some(format) = words.first() else {
        return String::new();
    };
    let mut args = words[1..].iter();
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(_) => out.push_str(args.next().copied().unwrap_or("")),
            None => out.push('%'),
        }
    }
    if format.find('%').is_none() {
        for arg in args {
            out.push(' ');
            out.push_str(arg);
        }
    }
    out.trim().to_string()
}
