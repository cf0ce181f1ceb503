//! The dangerous-command rules of docs/gate.md for one command already resolved to its
//! real name (wrappers, quoting and braces undone by the reader): deletes, devices after
//! path normalisation, formats, power control through any service manager, key and
//! history wipes through any tool that deletes or truncates.

use super::finding::{
    found, Finding, DELETE_ROOT_OR_HOME, FILESYSTEM_FORMAT, HISTORY_OR_KEY_WIPE, POWER_CONTROL,
    PRIVILEGE_ESCALATION, RAW_DISK_WRITE, RECURSIVE_CHMOD_ROOT, RECURSIVE_DELETE, TRUNCATE_SHRED,
};
use super::paths::glob_match;

/// Programs that run a command as another user.
pub(crate) const PRIVILEGE: [&str; 19] = [
    "sudo", "sudoedit", "su", "doas", "run0", "pkexec", "runuser", "gosu", "su-exec", "ksu",
    "please", "calife", "gksu", "kdesu", "beesu", "pfexec", "dzdo", "pbrun", "sesu",
];
/// Programs that delete or empty the files they are given.
pub(crate) const DELETERS: [&str; 8] = [
    "rm", "unlink", "rmdir", "shred", "truncate", "wipe", "srm", "trash",
];
const SAFE_DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
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
/// Targets of a service manager that stop or restart the machine.
const POWER_TARGETS: [&str; 15] = [
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "shutdown",
    "runlevel0",
    "runlevel6",
    "soft-reboot",
    "rescue",
    "emergency",
    "ctrl-alt-del",
];
/// Names (of programs) that format, partition or erase a disk.
const FORMAT_PREFIXES: [&str; 14] = [
    "mkfs",
    "mke2fs",
    "mkdosfs",
    "mkntfs",
    "mkswap",
    "mkexfat",
    "mkudffs",
    "mkreiserfs",
    "mkhfs",
    "mkjfs",
    "mkxfs",
    "mkbtrfs",
    "newfs",
    "mformat",
];
const DISK_TOOLS: [&str; 11] = [
    "sg_format",
    "lvremove",
    "vgremove",
    "pvremove",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "blkdiscard",
];

/// A path read the way the kernel reads it: `//dev/sda`, `/./dev/sda`,
/// `/dev/../dev/sda` and `/proc/self/root/dev/sda` are all `/dev/sda`. Relative paths
/// are returned unchanged.
pub(crate) fn normalise(path: &str) -> String {
    let Some(rest) = path.strip_prefix('/') else {
        return path.to_string();
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
        // `/proc/self/root` and `/proc/<pid>/root` are the root folder again.
        if parts.len() == 3 && parts[0] == "proc" && parts[2] == "root" {
            parts.clear();
        }
    }
    format!("/{}", parts.join("/"))
}

/// True for `/`, `/*`, `~`, `~/*`, `$HOME`, `${HOME}/` and lexical spellings of them.
pub(crate) fn is_root_or_home(target: &str) -> bool {
    // Another user's home is a home (`~root`, `~alice/`).
    let user_home = target.strip_prefix('~').is_some_and(|rest| {
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        user.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && user
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
            && matches!(tail, "" | "*")
    });
    if user_home {
        return true;
    }
    let home = ["${HOME}", "$HOME", "~"]
        .iter()
        .find_map(|h| target.strip_prefix(h))
        .filter(|r| r.is_empty() || r.starts_with('/'));
    let rest = match (target.starts_with('/'), home) {
        (true, _) => normalise(target),
        (false, Some(r)) => normalise(&format!("/{r}")),
        (false, None) => return false,
    };
    rest == "/" || rest == "/*"
}

/// True for `/`, a top-level system folder (`/etc`, `/usr`) or home.
fn is_system_root(target: &str) -> bool {
    if is_root_or_home(target) {
        return true;
    }
    if !target.starts_with('/') {
        return false;
    }
    let clean = normalise(target);
    let parts: Vec<&str> = clean.split('/').filter(|p| !p.is_empty()).collect();
    // A person's home folder by its path (`/home/alice`, `/Users/alice`).
    let a_home = parts.len() == 2 && matches!(parts[0], "home" | "Users");
    a_home || (parts.len() == 1 && SYSTEM_DIRS.contains(&parts[0]))
}

/// Names of history, key and credential files and folders, as the segments of a path
/// that make it secret (checked exactly, and against patterns: `~/.ss?/id_*`).
const SECRET_NAMES: [&str; 17] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".history",
    ".zhistory",
    ".histfile",
    ".lesshst",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".password-store",
    "keyrings",
    "gcloud",
    "authorized_keys",
    "shadow",
];
/// Secret names kept by their ending or beginning, with one example each for patterns.
const SECRET_EXAMPLES: [&str; 9] = [
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".bash_sessions",
    "keystore.key",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
];

/// True when one path segment names a secret (`.ssh`, `id_rsa`, `.bash_history` …).
fn is_secret_segment(seg: &str) -> bool {
    let lower = seg.to_lowercase();
    SECRET_NAMES.contains(&lower.as_str())
        || lower.ends_with("_history")
        || lower.ends_with("_sessions")
        || lower.starts_with("keystore")
        || ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
            .iter()
            .any(|k| lower.starts_with(k))
}

/// True when a segment holding a pattern (`.ss?`, `id_*`, `.*_hist*`) could match a
/// secret name.
fn could_match_secret(seg: &str) -> bool {
    SECRET_NAMES
        .iter()
        .chain(SECRET_EXAMPLES.iter())
        .any(|name| glob_match(seg, name))
}

/// True for a path naming shell history, SSH/GPG/cloud keys, credentials or the keystore,
/// after normalisation. A pattern (`*`, `?`, `[…]`) is judged by what it could match
/// (docs/gate.md "Globs"): `~/.ss?/id_*` names keys. A pattern in a path relative to the
/// workspace (no `/`, `~` or `..` at its start) matches files there, never the home
/// folder's keys, so only its literal segments count.
pub(crate) fn is_secret_path(path: &str) -> bool {
    let normal = normalise(path);
    let reaches_out = path.starts_with(['/', '~', '$']) || path.split('/').any(|s| s == "..");
    normal.split('/').any(|seg| {
        if seg.contains(['*', '?', '[']) {
            reaches_out && could_match_secret(seg)
        } else {
            is_secret_segment(seg)
        }
    })
}

/// True when a path names history or keys only through a pattern (`~/.ss?/id_*`):
/// its literal segments alone would not (docs/gate.md rule 6).
pub(crate) fn secret_by_pattern(path: &str) -> bool {
    let literal = normalise(path)
        .split('/')
        .any(|seg| !seg.contains(['*', '?', '[']) && is_secret_segment(seg));
    !literal && is_secret_path(path)
}

/// Device names that hold disks and partitions (docs/gate.md rule 3).
const BLOCK_DEVICES: [&str; 18] = [
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "mapper/", "disk/", "nbd",
    "zram", "sr", "rbd", "pmem", "mtdblock", "root",
];

/// True for a path naming a block device (a disk, a partition, a mapped or loop device)
/// or the device folder itself, after normalisation: `/dev/sda`, `//dev/nvme0n1p1`,
/// `/dev/disk/by-id/…`, `/dev/mapper/x`, `/dev`.
pub(crate) fn is_block_device(path: &str) -> bool {
    let clean = normalise(path);
    if clean == "/dev" {
        return true;
    }
    clean
        .strip_prefix("/dev/")
        .is_some_and(|rest| BLOCK_DEVICES.iter().any(|d| rest.starts_with(d)))
}

/// True for a block or character device other than the harmless ones, after normalisation.
pub(crate) fn is_device(target: &str) -> bool {
    let clean = normalise(target);
    clean.starts_with("/dev/")
        && !SAFE_DEVICES.contains(&clean.as_str())
        && !clean.starts_with("/dev/fd/")
        && !clean.starts_with("/dev/pts/")
        && !clean.starts_with("/dev/shm/")
}

/// True for the kernel's magic key file, which can reboot or power off the machine.
pub(crate) fn is_sysrq(target: &str) -> bool {
    normalise(target) == "/proc/sysrq-trigger"
}

/// What writing to `target` would destroy, if anything: a device, the power switch, keys.
pub(crate) fn write_target(how: &str, target: &str) -> Option<Finding> {
    // bash's network paths are connections, not disks (the reader judges what reads
    // from them).
    let clean = normalise(target);
    if clean.starts_with("/dev/tcp/") || clean.starts_with("/dev/udp/") {
        return None;
    }
    if is_device(target) {
        return found(
            RAW_DISK_WRITE,
            format!("{how} '{target}' writes to a device"),
        );
    }
    if is_sysrq(target) {
        return found(
            POWER_CONTROL,
            format!("{how} '{target}' can reboot or power off the machine"),
        );
    }
    if is_secret_path(target) {
        return found(
            HISTORY_OR_KEY_WIPE,
            format!("{how} '{target}' overwrites history or keys"),
        );
    }
    None
}

/// The arguments before a `--` end-of-options marker.
pub(crate) fn option_args<'a>(args: &'a [&'a str]) -> &'a [&'a str] {
    let end = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    &args[..end]
}

/// Operands: arguments that are not options (everything after `--` counts).
fn operands<'a>(args: &'a [&'a str]) -> Vec<&'a str> {
    let after = args.iter().skip_while(|a| **a != "--").skip(1).copied();
    option_args(args)
        .iter()
        .filter(|a| !a.starts_with('-') || **a == "-")
        .copied()
        .chain(after)
        .collect()
}

/// The first short-option word (`-rf`, `-R`) holding one of `letters`.
pub(crate) fn short_flag(args: &[&str], letters: &[char]) -> Option<String> {
    option_args(args)
        .iter()
        .find(|a| {
            a.starts_with('-')
                && !a.starts_with("--")
                && a.chars().skip(1).any(|c| letters.contains(&c))
        })
        .map(|a| a.to_string())
}

/// The first long option that is `long` or a prefix of it of at least three letters.
pub(crate) fn long_flag(args: &[&str], long: &str) -> Option<String> {
    option_args(args)
        .iter()
        .find(|a| {
            let head = a.split('=').next().unwrap_or("");
            head.len() > 2 && head.starts_with("--") && long.starts_with(head)
        })
        .map(|a| a.to_string())
}

/// The first operand naming a secret path.
fn secret_operand(args: &[&str]) -> Option<String> {
    operands(args)
        .into_iter()
        .find(|a| is_secret_path(a))
        .map(str::to_string)
}

/// True for a chmod mode that sets the set-user or set-group id bit: `u+s`, `g+s`,
/// `+s`, `4755`, `2755`, `6755`.
fn sets_id_bit(mode: &str) -> bool {
    // `o+s` sets nothing: only the user and group parts carry the bit.
    let symbolic = mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(who, what)| who != "o" && what.contains('s'))
    });
    let numeric = mode.len() == 4
        && mode.chars().all(|c| c.is_ascii_digit() && c < '8')
        && mode.starts_with(['2', '3', '4', '5', '6', '7']);
    symbolic || numeric
}

/// True for the variables that say where and how much shell history is kept.
pub(crate) fn history_variable(name: &str) -> bool {
    matches!(name, "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST")
}

/// One rule: the command names it judges and what it finds in their arguments.
type Rule = fn(&str, &[&str]) -> Option<Finding>;

/// Every command the gate has a rule for, by name (the one table: [`rules`] and
/// [`is_known`] both read it). Privilege, format and disk tools are matched by kind
/// before it.
const RULES: [(&[&str], Rule); 23] = [
    (&["rm"], |_, a| rm_rules(a)),
    (&["unlink", "rmdir", "trash"], |n, a| {
        secret_operand(a).and_then(|p| {
            found(
                HISTORY_OR_KEY_WIPE,
                format!("'{n} {p}' deletes history or keys"),
            )
        })
    }),
    (
        &["shred", "truncate", "wipe", "srm"],
        |n, a| match secret_operand(a) {
            Some(p) => found(HISTORY_OR_KEY_WIPE, format!("'{n}' destroys '{p}'")),
            None => found(TRUNCATE_SHRED, format!("'{n}' destroys file contents")),
        },
    ),
    (&["dd", "dcfldd", "sg_dd"], |n, a| {
        a.iter().find_map(|a| {
            a.strip_prefix("of=")
                .and_then(|target| write_target(&format!("'{n} of='"), target))
        })
    }),
    (
        &["cp", "mv", "install", "ln", "ddrescue", "rsync"],
        copy_rules,
    ),
    (&["tee", "sponge"], |n, a| {
        operands(a)
            .into_iter()
            .find_map(|t| write_target(&format!("'{n}'"), t))
    }),
    (&["sed", "perl", "ruby", "gawk", "awk"], in_place_rules),
    // rclone's deleting subcommands: `sync` deletes what its source lacks at the
    // destination (as `rsync --delete`); `purge`, `delete` and `rmdirs` delete a tree.
    (&["rclone"], |n, a| {
        let ops = operands(a);
        let (sub, target) = match ops.as_slice() {
            ["sync", _, dst, ..] => ("sync", *dst),
            [sub @ ("purge" | "delete" | "rmdirs"), target, ..] => (*sub, *target),
            _ => return None,
        };
        if is_system_root(target) {
            return found(
                DELETE_ROOT_OR_HOME,
                format!("'{n} {sub}' deletes what is in '{target}'"),
            );
        }
        found(
            RECURSIVE_DELETE,
            format!("'{n} {sub}' deletes a whole tree at '{target}'"),
        )
    }),
    (&["sort"], |_, a| {
        output_values(a, Some('o'), "--output").find_map(|t| write_target("'sort -o'", t))
    }),
    (&["uniq", "xxd"], |n, a| {
        operands(a)
            .get(1)
            .and_then(|t| write_target(&format!("'{n}' writing its second file"), t))
    }),
    (&["gpg", "gpg2"], |n, a| {
        a.iter()
            .find(|a| a.starts_with("--delete-"))
            .and_then(|a| found(HISTORY_OR_KEY_WIPE, format!("'{n} {a}' deletes keys")))
    }),
    (&["chmod", "chown", "chgrp"], |n, a| {
        // A set-user or set-group id bit makes a program run as its owner (root).
        if n == "chmod" {
            if let Some(mode) = operands(a).into_iter().find(|m| sets_id_bit(m)) {
                return found(
                    PRIVILEGE_ESCALATION,
                    format!("'chmod {mode}' makes a program run as its owner"),
                );
            }
        }
        let flag = short_flag(a, &['R']).or_else(|| long_flag(a, "--recursive"))?;
        let target = operands(a).into_iter().find(|a| is_system_root(a))?;
        found(
            RECURSIVE_CHMOD_ROOT,
            format!("'{n} {flag}' on '{target}' changes the whole system"),
        )
    }),
    (
        &[
            "shutdown",
            "reboot",
            "halt",
            "poweroff",
            "kexec",
            "openrc-shutdown",
            "systemd-shutdown",
        ],
        |n, _| found(POWER_CONTROL, format!("'{n}' powers the machine down")),
    ),
    // Any run level but a reload (`q`, `u`) stops services or the machine: 0, 1, 6, S.
    (&["init", "telinit"], |n, a| {
        let level = operands(a)
            .into_iter()
            .find(|l| !matches!(*l, "q" | "Q" | "u" | "U"))?;
        found(
            POWER_CONTROL,
            format!("'{n} {level}' changes the run level"),
        )
    }),
    (&["systemctl", "loginctl"], |n, a| {
        let target = a.iter().find(|a| {
            let stem = a.split('.').next().unwrap_or("").to_lowercase();
            POWER_TARGETS.contains(&stem.as_str())
        })?;
        found(
            POWER_CONTROL,
            format!("'{n} … {target}' stops or restarts the machine"),
        )
    }),
    (
        &["dbus-send", "busctl", "gdbus", "qdbus", "dbus"],
        |n, a| {
            let call = a.iter().find(|a| {
                let last = a.rsplit(['.', '/']).next().unwrap_or("").to_lowercase();
                matches!(
                    last.as_str(),
                    "poweroff" | "reboot" | "halt" | "suspend" | "hibernate" | "kexec"
                ) || a.to_lowercase().contains("sysrq")
            })?;
            found(
                POWER_CONTROL,
                format!("'{n}' asks the system bus to {call}"),
            )
        },
    ),
    // Suspend, hibernate or power off through the clock, the BMC or the desktop.
    (&["rtcwake"], |n, a| {
        let mode = a
            .iter()
            .position(|a| *a == "-m" || a.starts_with("--mode"))
            .and_then(|i| {
                a[i].split_once('=')
                    .map(|(_, v)| v)
                    .or(a.get(i + 1).copied())
            });
        if matches!(mode, Some("no" | "show" | "disable")) {
            return None;
        }
        found(
            POWER_CONTROL,
            format!("'{n}' suspends or powers off the machine"),
        )
    }),
    (&["ipmitool"], |n, a| {
        let at = a.iter().position(|a| *a == "power")?;
        let what = a
            .get(at + 1)
            .filter(|w| matches!(**w, "off" | "cycle" | "reset" | "soft" | "down"))?;
        found(
            POWER_CONTROL,
            format!("'{n} power {what}' cuts the machine's power"),
        )
    }),
    (
        &["gnome-session-quit", "xfce4-session-logout", "lxqt-leave"],
        |n, a| {
            let flag = a.iter().find(|a| {
                matches!(
                    **a,
                    "--power-off"
                        | "--poweroff"
                        | "--reboot"
                        | "--halt"
                        | "--shutdown"
                        | "--suspend"
                )
            })?;
            found(
                POWER_CONTROL,
                format!("'{n} {flag}' powers the machine down"),
            )
        },
    ),
    // Deletes whole trees by design (npm's rimraf).
    (&["rimraf"], |n, _| {
        found(RECURSIVE_DELETE, format!("'{n}' deletes whole folders"))
    }),
    // Turning history off hides what runs next: `unset HISTFILE`, `set +o history`.
    (&["unset", "set"], |n, a| {
        let off = a.iter().any(|w| history_variable(w))
            || a.windows(2).any(|w| w[0] == "+o" && w[1] == "history");
        if !off {
            return None;
        }
        found(
            HISTORY_OR_KEY_WIPE,
            format!("'{n}' turns shell history off"),
        )
    }),
    (&["history"], |_, a| {
        short_flag(a, &['c', 'd'])
            .and_then(|f| found(HISTORY_OR_KEY_WIPE, format!("'history {f}' clears history")))
    }),
    // A shell on a machine (the host by default) as root unless another user is named.
    (&["machinectl"], |n, a| {
        let shell = a.iter().find(|a| matches!(**a, "shell" | "login"))?;
        found(
            PRIVILEGE_ESCALATION,
            format!("'{n} {shell}' opens a shell on a machine, as root by default"),
        )
    }),
];

/// Tools with subcommands or options that erase, format or destroy a disk or a pool.
const DISK_SUBCOMMANDS: [(&str, &[&str]); 10] = [
    ("nvme", &["format", "sanitize"]),
    (
        "cryptsetup",
        &[
            "luksformat",
            "erase",
            "lukserase",
            "lukskillslot",
            "reencrypt",
        ],
    ),
    (
        "parted",
        &["mklabel", "mktable", "mkpart", "rm", "resizepart"],
    ),
    ("zpool", &["create", "destroy", "labelclear"]),
    ("zfs", &["destroy"]),
    ("mdadm", &["--zero-superblock", "--create"]),
    (
        "hdparm",
        &[
            "--security-erase",
            "--security-erase-enhanced",
            "--trim-sector-ranges",
            "--write-sector",
        ],
    ),
    ("btrfs", &["mkfs", "replace"]),
    (
        "diskutil",
        &[
            "erasedisk",
            "erasevolume",
            "zerodisk",
            "randomdisk",
            "secureerase",
            "partitiondisk",
            "reformat",
        ],
    ),
    ("dmsetup", &["remove", "remove_all", "wipe_table", "clear"]),
];

/// True for a program that runs a command as another user: the known ones and their
/// look-alikes (`sudo-rs`, `sudo.ws`, `gksudo`, `doas-keepenv`).
pub(crate) fn is_privilege(name: &str) -> bool {
    let program = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    PRIVILEGE.contains(&name)
        || (program
            && (name.contains("sudo") || name.starts_with("doas") || name.starts_with("su-")))
}

/// True when the gate has a rule for a command of this name (so a later word naming it
/// is a command the gate reads, not plain text).
pub(crate) fn is_known(name: &str) -> bool {
    is_privilege(name)
        || FORMAT_PREFIXES.iter().any(|p| name.starts_with(p))
        || DISK_TOOLS.contains(&name)
        || DISK_SUBCOMMANDS.iter().any(|(n, _)| *n == name)
        || RULES.iter().any(|(names, _)| names.contains(&name))
}

/// The rules for one command whose name (path stripped, lowercased) is `name`.
/// Commands that run other commands are the reader's; this judges what a command does
/// to the machine itself.
pub(crate) fn rules(name: &str, args: &[&str]) -> Option<Finding> {
    if is_privilege(name) {
        return found(
            PRIVILEGE_ESCALATION,
            format!("'{name}' runs as another user"),
        );
    }
    if FORMAT_PREFIXES.iter().any(|p| name.starts_with(p)) || DISK_TOOLS.contains(&name) {
        return found(
            FILESYSTEM_FORMAT,
            format!("'{name}' formats or rewrites a disk"),
        );
    }
    if let Some((_, subs)) = DISK_SUBCOMMANDS.iter().find(|(n, _)| *n == name) {
        if let Some(sub) = args
            .iter()
            .find(|a| subs.contains(&a.to_lowercase().as_str()))
        {
            return found(
                FILESYSTEM_FORMAT,
                format!("'{name} {sub}' erases or rewrites a disk"),
            );
        }
    }
    let (_, rule) = RULES.iter().find(|(names, _)| names.contains(&name))?;
    rule(name, args)
}

/// In-place editing (`sed -i`, `perl -i`, `gawk -i inplace`) of history or keys.
fn in_place_rules(name: &str, args: &[&str]) -> Option<Finding> {
    let in_place = short_flag(args, &['i']).or_else(|| long_flag(args, "--in-place"));
    in_place.and(secret_operand(args)).and_then(|p| {
        found(
            HISTORY_OR_KEY_WIPE,
            format!("'{name} -i' rewrites '{p}' in place"),
        )
    })
}

/// The values of an option: `-o V`, `-oV` (when it has a `short` letter), `--output V`,
/// `--output=V` (any unique prefix of the long name), before a `--`.
pub(crate) fn output_values<'a>(
    args: &'a [&'a str],
    short: Option<char>,
    long: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    let args = option_args(args);
    args.iter().enumerate().filter_map(move |(i, a)| {
        let next = || args.get(i + 1).copied();
        if let Some(rest) = a.strip_prefix("--") {
            let (head, value) = match rest.split_once('=') {
                Some((h, v)) => (h, Some(v)),
                None => (rest, None),
            };
            let matches = !head.is_empty() && long.trim_start_matches('-').starts_with(head);
            return matches.then(|| value.or_else(next)).flatten();
        }
        let (flags, short) = (a.strip_prefix('-')?, short?);
        let at = flags.find(short)?;
        let glued = &flags[at + short.len_utf8()..];
        if glued.is_empty() {
            next()
        } else {
            Some(glued)
        }
    })
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
    for target in operands(args) {
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

/// cp/mv/install/ln/rsync: the target (last operand) may be a device or a key; mv also
/// takes its sources away; rsync `--delete` deletes whatever the source lacks.
fn copy_rules(name: &str, args: &[&str]) -> Option<Finding> {
    let ops = operands(args);
    if name == "rsync" {
        let delete = option_args(args).iter().find(|a| {
            a.starts_with("--del") || a.starts_with("--remove-source") || **a == "--prune-empty"
        });
        if let Some(flag) = delete.filter(|a| a.starts_with("--del")) {
            let target = ops.last().copied().unwrap_or("");
            if is_root_or_home(target) {
                return found(
                    DELETE_ROOT_OR_HOME,
                    format!("'rsync {flag}' empties '{target}'"),
                );
            }
            return found(
                RECURSIVE_DELETE,
                format!("'rsync {flag}' deletes everything in '{target}' the source lacks"),
            );
        }
    }
    let last = *ops.last()?;
    if let Some(f) = write_target(&format!("'{name}' onto"), last) {
        return Some(f);
    }
    if name == "mv" {
        if let Some(p) = ops.iter().find(|a| is_secret_path(a)) {
            return found(
                HISTORY_OR_KEY_WIPE,
                format!("'mv {p}' takes history or keys away"),
            );
        }
    }
    None
}
