//! The families the gate can make a promise about (docs/gate.md "Grants"): an
//! "always (family …)" is a promise about every line of that family, so it is offered
//! only for a command in this table — with its subcommands where it has them, and what
//! a line of each may do, said on the card. A command the table does not name offers
//! "once" and "always this exact line" only; a family saved by an older version for a
//! command or subcommand no longer here covers nothing (grants are narrowed, never
//! widened). Grown from the everyday corpus (`tests/fixtures/gate_everyday.tsv`).

/// What a line of a family may do: the card says it beside "always (family)".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Does {
    /// Only reads and prints (status, logs, listings, lookups).
    Reads,
    /// Changes files or a repository on this machine.
    Writes,
    /// Runs this project's own code (build scripts, tests, recipes, the program).
    RunsProject,
    /// Downloads packages and runs their install scripts.
    Installs,
    /// Talks to another machine (a remote, a cluster).
    Network,
    /// Starts, stops or reloads services.
    Services,
}

impl Does {
    /// One sentence for the card: what saying "always" to the family allows.
    pub(crate) fn sentence(self, family: &str) -> String {
        let what = match self {
            Does::Reads => "only read and print",
            Does::Writes => "change files on this machine",
            Does::RunsProject => "run this project's own code (its builds, tests or recipes)",
            Does::Installs => "download packages and run their install scripts",
            Does::Network => "talk to another machine",
            Does::Services => "start, stop or reload services",
        };
        format!("The gate knows the family '{family}': its lines {what}.")
    }
}

/// Which lines of a command form families the gate knows.
enum Subs {
    /// Every family of the command (its words are all read by the gate's rules): the
    /// family is as derived (`cp`, `tar -czf sub.tgz sub`, `make test`).
    Any(Does),
    /// Only `command subcommand` for these subcommands; no other family of it.
    Only(&'static [(&'static str, Does)]),
}

use Does::{Installs, Network, Reads, RunsProject, Services, Writes};

/// The table: command (lowercased, version stripped) → its families.
const KNOWN: &[(&str, Subs)] = &[
    (
        "git",
        Subs::Only(&[
            ("status", Reads),
            ("log", Reads),
            ("diff", Reads),
            ("show", Reads),
            ("blame", Reads),
            ("rev-parse", Reads),
            ("ls-files", Reads),
            ("grep", Reads),
            ("describe", Reads),
            ("shortlog", Reads),
            ("reflog", Reads),
            ("whatchanged", Reads),
            ("range-diff", Reads),
            ("cherry", Reads),
            ("count-objects", Reads),
            ("name-rev", Reads),
            ("add", Writes),
            ("commit", Writes),
            ("stash", Writes),
            ("switch", Writes),
            ("restore", Writes),
            ("checkout", Writes),
            ("branch", Writes),
            ("tag", Writes),
            ("rm", Writes),
            ("mv", Writes),
            ("revert", Writes),
            ("reset", Writes),
            ("rebase", Writes),
            ("merge", Writes),
            ("cherry-pick", Writes),
            ("init", Writes),
            ("apply", Writes),
            ("format-patch", Writes),
            ("push", Network),
            ("fetch", Network),
            ("pull", Network),
            ("clone", Network),
            ("remote", Network),
            ("ls-remote", Network),
        ]),
    ),
    (
        "cargo",
        Subs::Only(&[
            ("build", RunsProject),
            ("check", RunsProject),
            ("test", RunsProject),
            ("run", RunsProject),
            ("clippy", RunsProject),
            ("doc", RunsProject),
            ("bench", RunsProject),
            ("fmt", Writes),
            ("add", Writes),
            ("remove", Writes),
            ("update", Writes),
            ("clean", Writes),
            ("tree", Reads),
            ("metadata", Reads),
            ("search", Reads),
            ("fetch", Installs),
        ]),
    ),
    (
        "npm",
        Subs::Only(&[
            ("install", Installs),
            ("i", Installs),
            ("add", Installs),
            ("ci", Installs),
            ("update", Installs),
            ("up", Installs),
            ("uninstall", Writes),
            ("rm", Writes),
            ("test", RunsProject),
            ("t", RunsProject),
            ("run", RunsProject),
            ("start", RunsProject),
            ("outdated", Reads),
            ("ls", Reads),
            ("list", Reads),
            ("view", Reads),
            ("info", Reads),
            ("audit", Reads),
        ]),
    ),
    (
        "yarn",
        Subs::Only(&[
            ("install", Installs),
            ("add", Installs),
            ("upgrade", Installs),
            ("remove", Writes),
            ("build", RunsProject),
            ("test", RunsProject),
            ("run", RunsProject),
            ("lint", RunsProject),
            ("info", Reads),
            ("why", Reads),
            ("list", Reads),
        ]),
    ),
    (
        "pnpm",
        Subs::Only(&[
            ("install", Installs),
            ("add", Installs),
            ("update", Installs),
            ("remove", Writes),
            ("test", RunsProject),
            ("run", RunsProject),
            ("build", RunsProject),
            ("lint", RunsProject),
            ("list", Reads),
            ("why", Reads),
            ("outdated", Reads),
        ]),
    ),
    (
        "pip",
        Subs::Only(&[
            ("install", Installs),
            ("download", Installs),
            ("uninstall", Writes),
            ("list", Reads),
            ("show", Reads),
            ("freeze", Reads),
            ("check", Reads),
        ]),
    ),
    (
        "go",
        Subs::Only(&[
            ("build", RunsProject),
            ("test", RunsProject),
            ("vet", RunsProject),
            ("run", RunsProject),
            ("mod", Installs),
            ("get", Installs),
            ("fmt", Writes),
            ("list", Reads),
            ("doc", Reads),
            ("env", Reads),
            ("version", Reads),
        ]),
    ),
    (
        "kubectl",
        Subs::Only(&[
            ("get", Network),
            ("describe", Network),
            ("logs", Network),
            ("top", Network),
            ("explain", Network),
            ("rollout", Network),
            ("api-resources", Network),
        ]),
    ),
    (
        "systemctl",
        Subs::Only(&[
            ("status", Reads),
            ("show", Reads),
            ("cat", Reads),
            ("list-units", Reads),
            ("list-unit-files", Reads),
            ("list-timers", Reads),
            ("is-active", Reads),
            ("is-enabled", Reads),
            ("is-failed", Reads),
            ("start", Services),
            ("stop", Services),
            ("restart", Services),
            ("reload", Services),
            ("enable", Services),
            ("disable", Services),
        ]),
    ),
    (
        "loginctl",
        Subs::Only(&[
            ("list-sessions", Reads),
            ("list-users", Reads),
            ("show-session", Reads),
            ("session-status", Reads),
        ]),
    ),
    (
        "ruff",
        Subs::Only(&[("check", RunsProject), ("format", Writes)]),
    ),
    (
        "qemu-img",
        Subs::Only(&[
            ("info", Reads),
            ("check", Reads),
            ("convert", Writes),
            ("create", Writes),
            ("resize", Writes),
        ]),
    ),
    ("make", Subs::Any(RunsProject)),
    ("cmake", Subs::Any(RunsProject)),
    ("pytest", Subs::Any(RunsProject)),
    ("mypy", Subs::Any(Reads)),
    ("black", Subs::Any(Writes)),
    ("gcc", Subs::Any(Writes)),
    ("cc", Subs::Any(Writes)),
    ("clang", Subs::Any(Writes)),
    ("journalctl", Subs::Any(Reads)),
    ("gpg", Subs::Any(Writes)),
    ("cp", Subs::Any(Writes)),
    ("mv", Subs::Any(Writes)),
    ("rm", Subs::Any(Writes)),
    ("rmdir", Subs::Any(Writes)),
    ("touch", Subs::Any(Writes)),
    ("ln", Subs::Any(Writes)),
    ("chmod", Subs::Any(Writes)),
    ("chown", Subs::Any(Writes)),
    ("dd", Subs::Any(Writes)),
    ("sed", Subs::Any(Writes)),
    ("split", Subs::Any(Writes)),
    ("tar", Subs::Any(Writes)),
    ("zip", Subs::Any(Writes)),
    ("unzip", Subs::Any(Writes)),
    ("gzip", Subs::Any(Writes)),
    ("gunzip", Subs::Any(Writes)),
    ("zstd", Subs::Any(Writes)),
    ("xz", Subs::Any(Writes)),
    ("bzip2", Subs::Any(Writes)),
    ("export", Subs::Any(Writes)),
    ("unset", Subs::Any(Writes)),
    ("tree", Subs::Any(Reads)),
    ("du", Subs::Any(Reads)),
    ("df", Subs::Any(Reads)),
    ("free", Subs::Any(Reads)),
    ("uptime", Subs::Any(Reads)),
    ("ps", Subs::Any(Reads)),
    ("lsblk", Subs::Any(Reads)),
    ("file", Subs::Any(Reads)),
    ("realpath", Subs::Any(Reads)),
    ("dirname", Subs::Any(Reads)),
    ("basename", Subs::Any(Reads)),
    ("jq", Subs::Any(Reads)),
    ("diff", Subs::Any(Reads)),
    ("cmp", Subs::Any(Reads)),
    ("comm", Subs::Any(Reads)),
    ("column", Subs::Any(Reads)),
    ("paste", Subs::Any(Reads)),
    ("fold", Subs::Any(Reads)),
    ("rev", Subs::Any(Reads)),
    ("shuf", Subs::Any(Reads)),
    ("seq", Subs::Any(Reads)),
    ("sleep", Subs::Any(Reads)),
    ("runlevel", Subs::Any(Reads)),
    ("md5sum", Subs::Any(Reads)),
    ("sha1sum", Subs::Any(Reads)),
    ("sha256sum", Subs::Any(Reads)),
    ("sha512sum", Subs::Any(Reads)),
];

/// What a line of `family` (as `family_of` derives it) may do when the gate knows the
/// family; otherwise one sentence saying why no family is offered.
pub(crate) fn known(family: &str) -> Result<Does, String> {
    let mut words = family.split(' ');
    let command = words.next().unwrap_or(family);
    let rest: Vec<&str> = words.collect();
    let Some((_, subs)) = KNOWN.iter().find(|(name, _)| *name == command) else {
        return Err(format!(
            "The gate has no table of what '{command}' may do, so an \"always\" for its \
             family could promise nothing; only this exact line can be saved."
        ));
    };
    match subs {
        Subs::Any(does) => Ok(*does),
        Subs::Only(table) => match rest.as_slice() {
            [sub] => table
                .iter()
                .find(|(name, _)| name == sub)
                .map(|(_, does)| *does)
                .ok_or_else(|| {
                    format!(
                        "The gate knows '{command}' but not what '{command} {sub}' may do, \
                         so only this exact line can be saved."
                    )
                }),
            _ => Err(format!(
                "A family of '{command}' is one of its subcommands the gate knows, and \
                 this line names none before its other words; only this exact line can \
                 be saved."
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_known_only_for_a_command_and_subcommand_in_the_table() {
        assert_eq!(known("git push"), Ok(Network));
        assert_eq!(known("cargo test"), Ok(RunsProject));
        assert_eq!(known("tar -czf sub.tgz sub"), Ok(Writes));
        assert_eq!(known("make"), Ok(RunsProject));
        for unknown in [
            "diskutil",
            "rclone sync",
            "busctl call",
            "dzdo",
            "openrc-shutdown",
            "chronic make",
            "git",
            "git -C sub",
            "git frobnicate",
            "systemctl isolate",
            "npm exec",
        ] {
            assert!(known(unknown).is_err(), "{unknown}");
        }
    }

    #[test]
    fn every_command_and_subcommand_is_listed_once() {
        let mut names: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before);
        for (name, subs) in KNOWN {
            if let Subs::Only(table) = subs {
                let mut s: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
                s.sort_unstable();
                let n = s.len();
                s.dedup();
                assert_eq!(s.len(), n, "{name}");
            }
        }
    }
}
