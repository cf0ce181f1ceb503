//! Each command's grammar, where the gate knows it (docs/gate.md "Read by each
//! command's grammar"): which of its words are only text — a topic to look up, a search
//! pattern, a commit message, a test filter, a package name — and which invocations
//! only look (documentation, package queries, device readers, a unit's status). A word
//! is a command, a device or a path to protect only where the command would use it as
//! one: `git log --grep sudo` searches for the word, `man shutdown` reads a page,
//! `fdisk -l` lists partitions. What is not text (an option's value the table does not
//! name, the rest of the words) is read as before, so `man -P 'rm -rf ~'` and
//! `git log --grep x; reboot` are still dangerous.

use super::names::name_of;
use super::strip_version;

/// One invocation the gate knows the grammar of.
struct Rule {
    /// The command (lowercased, path and version stripped).
    command: &'static str,
    /// Its subcommand, the first word after it that is not an option: one of these
    /// (empty: any words, no subcommand needed).
    sub: &'static [&'static str],
    /// One of these options must be present (empty: none needed).
    when: &'static [&'static str],
    /// None of these may be present (they make it act).
    unless: &'static [&'static str],
    /// True when the invocation only looks: no named rule, no later word as a command,
    /// no device or key as something it writes. Option values it does not name as
    /// text are still read as lines a shell could be handed.
    looks: bool,
    /// True when its operands (words that are not options or option values) are only
    /// text: topics, patterns, names, filters.
    operands: bool,
    /// Options whose value is only text (`--grep`, `-m`, `-k`, `-run`).
    text: &'static [&'static str],
    /// Options taking no value, so the word after them is an operand.
    flags: &'static [&'static str],
    /// When not empty, the only options taking a value: every other option is a flag.
    valued: &'static [&'static str],
    /// True when the words after `--` are only text (a test binary's filters).
    after_dashes: bool,
}

/// A rule that looks only, its operands text.
const fn looks(command: &'static str, sub: &'static [&'static str]) -> Rule {
    Rule {
        command,
        sub,
        when: &[],
        unless: &[],
        looks: true,
        operands: true,
        text: &[],
        flags: &[],
        valued: &[],
        after_dashes: false,
    }
}

/// A rule naming the options whose values are only text.
const fn texts(
    command: &'static str,
    sub: &'static [&'static str],
    text: &'static [&'static str],
) -> Rule {
    Rule {
        looks: false,
        operands: false,
        text,
        ..looks(command, sub)
    }
}

/// Flags of the documentation readers (`man -k`, `apropos -a`).
const DOC_FLAGS: &[&str] = &[
    "-k",
    "-f",
    "-a",
    "-w",
    "-W",
    "-e",
    "-r",
    "-l",
    "--apropos",
    "--whatis",
    "--all",
    "--where",
    "--path",
    "--exact",
    "--regex",
    "--wildcard",
    "--long",
];

/// Package and history queries' look-up subcommands.
const PACKAGE_QUERIES: &[&str] = &[
    "view",
    "info",
    "show",
    "search",
    "ls",
    "list",
    "outdated",
    "explain",
    "why",
    "desc",
    "deps",
    "uses",
    "policy",
    "depends",
    "rdepends",
    "showpkg",
    "madison",
    "provides",
    "repoquery",
    "find",
    "query",
    "specification",
];

/// Cargo's options that take a value (every other is a flag).
const CARGO_VALUED: &[&str] = &[
    "-p",
    "--package",
    "-F",
    "--features",
    "--test",
    "--bin",
    "--bench",
    "--example",
    "--target",
    "--target-dir",
    "--manifest-path",
    "-j",
    "--jobs",
    "--color",
    "--config",
    "--exclude",
    "--profile",
    "-Z",
];

/// `git grep`'s options that take a value (every other is a flag).
const GIT_GREP_VALUED: &[&str] = &[
    "-e",
    "-f",
    "-A",
    "-B",
    "-C",
    "-m",
    "--max-count",
    "--max-depth",
    "--threads",
    "--context",
    "--after-context",
    "--before-context",
];

/// Options of `git log` and its kin whose values are patterns or formats.
const GIT_SEARCH: &[&str] = &[
    "--grep",
    "-S",
    "-G",
    "--author",
    "--committer",
    "--grep-reflog",
    "--format",
    "--pretty",
];

const RULES: &[Rule] = &[
    // Documentation readers: their words name topics.
    Rule {
        flags: DOC_FLAGS,
        ..looks("man", &[])
    },
    Rule {
        flags: DOC_FLAGS,
        ..looks("apropos", &[])
    },
    Rule {
        flags: DOC_FLAGS,
        ..looks("whatis", &[])
    },
    looks("info", &[]),
    looks("tldr", &[]),
    looks("help", &[]),
    looks("pydoc", &[]),
    looks("perldoc", &[]),
    looks("ri", &[]),
    // Package queries: the names are packages to look up.
    looks("npm", PACKAGE_QUERIES),
    looks("yarn", PACKAGE_QUERIES),
    looks("pnpm", PACKAGE_QUERIES),
    looks("apt-cache", &[]),
    looks(
        "apt",
        &["show", "search", "list", "policy", "depends", "rdepends"],
    ),
    looks("dnf", PACKAGE_QUERIES),
    looks("yum", PACKAGE_QUERIES),
    looks("brew", PACKAGE_QUERIES),
    looks("pip", &["show", "search", "list", "index"]),
    looks("gem", PACKAGE_QUERIES),
    looks("snap", PACKAGE_QUERIES),
    looks("flatpak", PACKAGE_QUERIES),
    looks("zypper", &["info", "if", "search", "se"]),
    looks("conda", &["search", "list", "info"]),
    looks("cargo", &["search", "info"]),
    looks("dpkg-query", &[]),
    Rule {
        when: &[
            "-l",
            "-L",
            "-s",
            "-S",
            "-p",
            "--list",
            "--listfiles",
            "--status",
            "--search",
        ],
        unless: &[
            "-i",
            "--install",
            "-r",
            "--remove",
            "-P",
            "--purge",
            "--unpack",
        ],
        ..looks("dpkg", &[])
    },
    Rule {
        when: &[
            "-Ss", "-Si", "-Sii", "-Qi", "-Ql", "-Qs", "-Q", "-Qo", "-Qe", "-Qm",
        ],
        ..looks("pacman", &[])
    },
    Rule {
        when: &["-q", "--query"],
        unless: &[
            "-U",
            "-e",
            "-F",
            "--install",
            "--upgrade",
            "--erase",
            "--freshen",
        ],
        ..looks("rpm", &[])
    },
    // A unit's status, a session's listing, a bus's shape.
    looks(
        "systemctl",
        &[
            "status",
            "show",
            "cat",
            "list-dependencies",
            "list-units",
            "list-unit-files",
            "list-timers",
            "list-sockets",
            "list-jobs",
            "is-active",
            "is-enabled",
            "is-failed",
            "get-default",
            "help",
        ],
    ),
    looks(
        "loginctl",
        &[
            "list-sessions",
            "list-users",
            "show-session",
            "session-status",
            "show-user",
            "user-status",
        ],
    ),
    looks(
        "busctl",
        &["list", "status", "tree", "introspect", "get-property"],
    ),
    // Device readers: a device named is read, not written.
    Rule {
        when: &["-l", "--list"],
        ..looks("fdisk", &[])
    },
    Rule {
        when: &[
            "-d",
            "--dump",
            "-l",
            "--list",
            "-J",
            "--json",
            "-s",
            "--show-size",
            "-g",
            "--show-geometry",
            "-V",
            "--verify",
            "-F",
            "--list-free",
        ],
        unless: &[
            "--delete",
            "--part-type",
            "--part-uuid",
            "--part-label",
            "--part-attrs",
            "-N",
        ],
        ..looks("sfdisk", &[])
    },
    Rule {
        unless: &[
            "-s",
            "--smart",
            "-o",
            "--offlineauto",
            "-S",
            "--saveauto",
            "-t",
            "--test",
            "-X",
            "--abort",
            "--set",
        ],
        ..looks("smartctl", &[])
    },
    Rule {
        when: &["-l"],
        unless: &[
            "-c", "-C", "-e", "-E", "-f", "-g", "-i", "-j", "-J", "-L", "-m", "-M", "-o", "-O",
            "-r", "-s", "-T", "-u", "-U", "-I", "-Q",
        ],
        ..looks("tune2fs", &[])
    },
    Rule {
        when: &["-l", "-y", "-L", "-F", "-B"],
        unless: &[
            "-p", "-R", "-H", "-t", "-b", "-N", "-P", "-k", "-s", "-A", "-c", "-o",
        ],
        ..looks("ssh-keygen", &[])
    },
    looks("pgrep", &[]),
    looks("pidof", &[]),
    looks("apk", &["info", "search", "list", "policy", "dot"]),
    looks("cargo", &["tree", "metadata"]),
    looks("udevadm", &["info"]),
    looks("dumpe2fs", &[]),
    Rule {
        unless: &["-a", "--all", "-o", "--offset"],
        ..looks("wipefs", &[])
    },
    Rule {
        when: &["-I", "-i", "-g", "-C", "-t", "-T"],
        unless: &[
            "-a", "-A", "-b", "-B", "-c", "-d", "-D", "-E", "-f", "-F", "-J", "-k", "-K", "-L",
            "-m", "-M", "-N", "-p", "-P", "-Q", "-r", "-R", "-s", "-S", "-u", "-U", "-w", "-W",
            "-X", "-y", "-Y", "-z", "-Z",
        ],
        ..looks("hdparm", &[])
    },
    Rule {
        when: &["-v", "-V"],
        ..looks("command", &[])
    },
    // Finders and viewers: what they are handed is searched or shown; an option that
    // names a program (`--pager`) is still read.
    looks("findmnt", &[]),
    looks("getent", &[]),
    looks("locate", &[]),
    looks("plocate", &[]),
    looks("last", &[]),
    looks("lastb", &[]),
    looks("zgrep", &[]),
    looks("zegrep", &[]),
    looks("zfgrep", &[]),
    looks("ag", &[]),
    looks("ack", &[]),
    looks("bat", &[]),
    looks("batcat", &[]),
    // Search and filter arguments of commands that otherwise act.
    Rule {
        operands: true,
        valued: GIT_GREP_VALUED,
        ..texts("git", &["grep"], &["-e"])
    },
    // Git's readers: revisions, paths and patterns are looked at, never written.
    Rule {
        text: GIT_SEARCH,
        unless: &["--output", "-O", "--open-files-in-pager", "--ext-diff"],
        ..looks(
            "git",
            &[
                "log",
                "shortlog",
                "show",
                "whatchanged",
                "rev-list",
                "reflog",
                "blame",
                "status",
                "ls-files",
                "check-ignore",
                "diff",
            ],
        )
    },
    texts(
        "git",
        &["commit", "tag", "merge", "notes", "stash"],
        &["-m", "--message"],
    ),
    texts("hg", &["commit", "ci"], &["-m", "--message"]),
    texts("svn", &["commit", "ci"], &["-m", "--message"]),
    texts("jj", &["describe", "commit", "new"], &["-m", "--message"]),
    texts(
        "gh",
        &["pr", "issue", "release"],
        &["-t", "--title", "-b", "--body", "-n", "--notes"],
    ),
    Rule {
        operands: true,
        after_dashes: true,
        valued: CARGO_VALUED,
        ..texts("cargo", &["test", "bench", "nextest"], &[])
    },
    texts("pytest", &[], &["-k", "-m"]),
    texts("go", &["test"], &["-run", "-bench", "-skip"]),
    texts(
        "jest",
        &[],
        &["-t", "--testNamePattern", "--testPathPattern"],
    ),
    texts("vitest", &[], &["-t", "--testNamePattern"]),
    texts("deno", &["test"], &["--filter"]),
    texts("mocha", &[], &["-g", "--grep", "-f", "--fgrep"]),
    texts("rspec", &[], &["-e", "--example"]),
    texts("phpunit", &[], &["--filter"]),
    texts("dotnet", &["test"], &["--filter"]),
    texts(
        "ctest",
        &[],
        &["-R", "-E", "--tests-regex", "--exclude-regex"],
    ),
    texts("bats", &[], &["-f", "--filter"]),
    texts("gradle", &[], &["--tests"]),
    texts("mvn", &[], &["-Dtest", "-Dit.test"]),
    texts(
        "journalctl",
        &[],
        &["-g", "--grep", "-u", "--unit", "-t", "--identifier"],
    ),
];

/// How the gate reads one command's words.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reading<'a> {
    /// The words that may act: the command's words without those its grammar says
    /// are only text.
    pub(crate) acting: Vec<&'a str>,
    /// True when the invocation only looks (see [`Rule::looks`]).
    pub(crate) looks: bool,
}

/// Read `words` (words[0] the command) by the command's grammar; a command the table
/// does not know keeps all its words.
pub(crate) fn read<'a>(words: &[&'a str]) -> Reading<'a> {
    let all = Reading {
        acting: words.to_vec(),
        looks: false,
    };
    let Some(first) = words.first() else {
        return all;
    };
    if first.contains(['$', '`']) {
        return all;
    }
    // `--help` or `--version` alone: it prints how it is used.
    if let [_, only] = words {
        if matches!(*only, "--help" | "--version") {
            return Reading {
                acting: words.to_vec(),
                looks: true,
            };
        }
    }
    // A package runner runs the program it names: that program's grammar applies.
    if let Some(at) = runs_program(words) {
        let inner = read(&words[at..]);
        let mut acting = words[..at].to_vec();
        acting.extend(inner.acting);
        return Reading {
            acting,
            looks: false,
        };
    }
    let name = name_of(first);
    let name = match strip_version(&name) {
        // Only these are named with their version (`pip3`, `pydoc3.12`); any other
        // name is taken as written, so no unknown program borrows a grammar.
        versioned @ ("pip" | "pydoc") => versioned,
        _ => name.as_str(),
    };
    let Some((rule, sub)) = RULES
        .iter()
        .filter(|r| r.command == name)
        .find_map(|r| applies(r, words).map(|sub| (r, sub)))
    else {
        return all;
    };
    let mut acting = words[..=sub].to_vec();
    let mut value_of: Option<&str> = None;
    let mut dashes = false;
    for word in &words[sub + 1..] {
        let word = *word;
        if dashes {
            if !rule.after_dashes {
                acting.push(word);
            }
            continue;
        }
        // The value of the option before (an unnamed option's value never starts
        // with `-`: that is the next option).
        if let Some(option) = value_of
            .take()
            .filter(|o| !o.is_empty() || !word.starts_with('-'))
        {
            if !rule.text.contains(&option) {
                acting.push(word);
            }
            continue;
        }
        if word == "--" {
            dashes = true;
            acting.push(word);
            continue;
        }
        if !word.starts_with('-') || word == "-" {
            if !rule.operands {
                acting.push(word);
            }
            continue;
        }
        let (key, valued) = match word.split_once('=') {
            Some((key, _)) => (key, true),
            None => (word, false),
        };
        if rule.text.contains(&key) {
            if !valued {
                value_of = Some(key);
            }
            continue;
        }
        // A short text option in a bundle: its value glued after it (`-S'rm -rf'`,
        // `-Gshutdown`) or the next word (`-am 'message'`).
        let bundled = (!word.starts_with("--")).then(|| {
            rule.text.iter().find_map(|t| {
                let letter = t
                    .strip_prefix('-')
                    .filter(|l| l.len() == 1)?
                    .chars()
                    .next()?;
                super::feeds::bundle_letter(word, letter).map(|at| (*t, at))
            })
        });
        if let Some((option, at)) = bundled.flatten() {
            if at + 1 == word.len() {
                value_of = Some(option);
            }
            continue;
        }
        acting.push(word);
        let flag = rule.flags.contains(&key)
            || valued
            || (!rule.valued.is_empty() && !rule.valued.contains(&key));
        if !flag && rule.operands {
            // An option the table does not name may take the next word as its value:
            // that word is read, never taken for an operand.
            value_of = Some("");
        }
    }
    Reading {
        acting,
        looks: rule.looks,
    }
}

/// Package runners and the word after which the program they run stands:
/// `npx jest …`, `bunx vitest …`, `pnpm exec …`, `bundle exec rspec …`.
const RUNNERS: [(&str, &str); 9] = [
    ("npx", ""),
    ("bunx", ""),
    ("pnpx", ""),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "exec"),
    ("bundle", "exec"),
    ("poetry", "run"),
    ("pipenv", "run"),
];

/// Where the program a package runner runs stands in `words`, if it is one.
fn runs_program(words: &[&str]) -> Option<usize> {
    let name = name_of(words.first()?);
    let (_, sub) = RUNNERS
        .iter()
        .find(|(runner, sub)| *runner == name && (sub.is_empty() || words.get(1) == Some(sub)))?;
    let from = if sub.is_empty() { 1 } else { 2 };
    // Its own options stand first (`npx --yes jest`).
    words[from..]
        .iter()
        .position(|w| !w.starts_with('-'))
        .map(|at| at + from)
}

/// True when the table has a grammar for the command `name` (lowercased).
#[cfg(test)]
pub(crate) fn knows(name: &str) -> bool {
    RULES.iter().any(|r| r.command == name)
}

/// Where the rule's subcommand stands in `words` (0: it needs none), when the rule
/// applies to them.
fn applies(rule: &Rule, words: &[&str]) -> Option<usize> {
    let sub = if rule.sub.is_empty() {
        0
    } else {
        let at = words
            .iter()
            .skip(1)
            .position(|w| !w.starts_with('-'))
            .map(|i| i + 1)?;
        rule.sub.contains(&words[at]).then_some(at)?
    };
    let options = options(words);
    let has = |set: &[&str]| options.iter().any(|o| set.contains(&o.as_str()));
    if !rule.when.is_empty() && !has(rule.when) {
        return None;
    }
    if has(rule.unless) {
        return None;
    }
    Some(sub)
}

/// Every option a line names, before `--`: long ones by name, short bundles letter by
/// letter (`-lf` is `-l` and `-f`), and each short word as written too (`-Ss`).
fn options(words: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for word in words.iter().skip(1).take_while(|w| **w != "--") {
        let Some(rest) = word.strip_prefix('-') else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        if rest.starts_with('-') {
            out.push(word.split('=').next().unwrap_or(word).to_string());
            continue;
        }
        out.push(word.to_string());
        out.extend(rest.chars().map(|c| format!("-{c}")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acting(line: &str) -> (Vec<String>, bool) {
        let words: Vec<&str> = line.split(' ').collect();
        let r = read(&words);
        (r.acting.iter().map(|w| w.to_string()).collect(), r.looks)
    }

    #[test]
    fn text_arguments_are_dropped_and_everything_else_is_kept() {
        assert_eq!(acting("git log --grep sudo").0, ["git", "log"]);
        assert_eq!(acting("git log --grep=sudo -p").0, ["git", "log", "-p"]);
        assert_eq!(acting("git log -Sreboot").0, ["git", "log"]);
        assert_eq!(acting("cargo test shutdown").0, ["cargo", "test"]);
        assert_eq!(acting("cargo test -- reboot").0, ["cargo", "test", "--"]);
        assert_eq!(
            acting("cargo test -p kotoba gate").0,
            ["cargo", "test", "-p", "kotoba"],
            "an option the table does not name keeps its value"
        );
        assert_eq!(acting("pytest -k reboot").0, ["pytest"]);
        assert_eq!(
            acting("go test -run Shutdown ./...").0,
            ["go", "test", "./..."]
        );
        assert_eq!(acting("man -k rm").0, ["man", "-k"]);
        assert_eq!(acting("man -P less ls").0, ["man", "-P", "less"]);
        assert_eq!(acting("frob --grep sudo").0, ["frob", "--grep", "sudo"]);
        assert_eq!(
            acting("git rebase -m x").0,
            ["git", "rebase", "-m", "x"],
            "only the subcommands the table names"
        );
    }

    #[test]
    fn an_invocation_looks_only_with_its_reading_options_and_none_that_act() {
        assert!(acting("fdisk -l /dev/sda").1);
        assert!(!acting("fdisk /dev/sda").1);
        assert!(acting("sfdisk -d /dev/sda").1);
        assert!(!acting("sfdisk --delete /dev/sda 1").1);
        assert!(acting("smartctl -a /dev/sda").1);
        assert!(!acting("smartctl -t long /dev/sda").1);
        assert!(acting("ssh-keygen -lf key.pub").1);
        assert!(!acting("ssh-keygen -f key").1);
        assert!(!acting("ssh-keygen -l -p -f key").1);
        assert!(acting("systemctl status reboot.target").1);
        assert!(!acting("systemctl start reboot.target").1);
        assert!(acting("pacman -Ss sudo").1);
        assert!(!acting("pacman -S sudo").1);
        assert!(acting("npm view rimraf version").1);
        assert!(!acting("npm install rimraf").1);
    }
}
