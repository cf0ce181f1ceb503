//! The dangerous-command rules of docs/gate.md for one command already resolved to its
//! real name (wrappers, quoting and braces undone by the reader): deletes, devices after
//! path normalisation, formats, power control through any service manager, key and
//! history wipes through any tool that deletes or truncates.

use super::finding::{
    found, Finding, DELETE_ROOT_OR_HOME, FILESYSTEM_FORMAT, HISTORY_OR_KEY_WIPE, POWER_CONTROL,
    PRIVILEGE_ESCALATION, RAW_DISK_WRITE, RECURSIVE_CHMOD_ROOT, RECURSIVE_DELETE, TRUNCATE_SHRED,
};

/// Programs that run a command as another user.
pub(crate) const PRIVILEGE: [&str; 12] = [
    "sudo", "sudoedit", "su", "doas", "run0", "pkexec", "runuser", "gosu", "su-exec", "ksu",
    "please", "calife",
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
const POWER_TARGETS: [&str; 13] = [
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "shutdown",
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
const DISK_TOOLS: [&str; 7] = [
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
    parts.len() == 1 && SYSTEM_DIRS.contains(&parts[0])
}

/// True for a path naming shell history, SSH/GPG/cloud keys, credentials or the keystore.
pub(crate) fn is_secret_path(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.split('/').any(|seg| {
        matches!(
            seg,
            ".ssh"
                | ".gnupg"
                | ".aws"
                | ".azure"
                | ".kube"
                | ".history"
                | ".zhistory"
                | ".histfile"
                | ".lesshst"
                | ".netrc"
                | ".git-credentials"
                | ".pgpass"
                | ".password-store"
                | "keyrings"
                | "gcloud"
                | "authorized_keys"
                | "shadow"
        ) || seg.ends_with("_history")
            || seg.ends_with("_sessions")
            || seg.starts_with("keystore")
            || ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
                .iter()
                .any(|k| seg.starts_with(k))
    })
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

/// The rules for one command whose name (path stripped, lowercased) is `name`.
/// Commands that run other commands are the reader's; this judges what a command does
/// to the machine itself.
pub(crate) fn rules(name: &str, args: &[&str]) -> Option<Finding> {
    if PRIVILEGE.contains(&name) {
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
    match name {
        "rm" => rm_rules(args),
        "unlink" | "rmdir" | "trash" => secret_operand(args).and_then(|p| {
            found(
                HISTORY_OR_KEY_WIPE,
                format!("'{name} {p}' deletes history or keys"),
            )
        }),
        "shred" | "truncate" | "wipe" | "srm" => match secret_operand(args) {
            Some(p) => found(HISTORY_OR_KEY_WIPE, format!("'{name}' destroys '{p}'")),
            None => found(TRUNCATE_SHRED, format!("'{name}' destroys file contents")),
        },
        "dd" | "dcfldd" | "sg_dd" => args.iter().find_map(|a| {
            a.strip_prefix("of=")
                .and_then(|target| write_target(&format!("'{name} of='"), target))
        }),
        "cp" | "mv" | "install" | "ln" | "ddrescue" | "rsync" => copy_rules(name, args),
        "tee" => operands(args)
            .into_iter()
            .find_map(|t| write_target("'tee'", t)),
        "sed" | "perl" | "ruby" => {
            let in_place = short_flag(args, &['i']).or_else(|| long_flag(args, "--in-place"));
            in_place.and(secret_operand(args)).and_then(|p| {
                found(
                    HISTORY_OR_KEY_WIPE,
                    format!("'{name} -i' rewrites '{p}' in place"),
                )
            })
        }
        "gpg" | "gpg2" => args
            .iter()
            .find(|a| a.starts_with("--delete-"))
            .and_then(|a| found(HISTORY_OR_KEY_WIPE, format!("'{name} {a}' deletes keys"))),
        "chmod" | "chown" | "chgrp" => {
            let flag = short_flag(args, &['R']).or_else(|| long_flag(args, "--recursive"))?;
            let target = operands(args).into_iter().find(|a| is_system_root(a))?;
            found(
                RECURSIVE_CHMOD_ROOT,
                format!("'{name} {flag}' on '{target}' changes the whole system"),
            )
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "kexec" => {
            found(POWER_CONTROL, format!("'{name}' powers the machine down"))
        }
        "init" | "telinit" if args.iter().any(|a| matches!(*a, "0" | "6")) => {
            found(POWER_CONTROL, format!("'{name}' changes the run level"))
        }
        "systemctl" | "loginctl" => {
            let target = args.iter().find(|a| {
                let stem = a.split('.').next().unwrap_or("").to_lowercase();
                POWER_TARGETS.contains(&stem.as_str())
            })?;
            found(
                POWER_CONTROL,
                format!("'{name} … {target}' stops or restarts the machine"),
            )
        }
        "dbus-send" | "busctl" | "gdbus" | "qdbus" | "dbus" => {
            let call = args.iter().find(|a| {
                let last = a.rsplit(['.', '/']).next().unwrap_or("").to_lowercase();
                matches!(
                    last.as_str(),
                    "poweroff" | "reboot" | "halt" | "suspend" | "hibernate" | "kexec"
                ) || a.to_lowercase().contains("sysrq")
            })?;
            found(
                POWER_CONTROL,
                format!("'{name}' asks the system bus to {call}"),
            )
        }
        "history" => short_flag(args, &['c', 'd'])
            .and_then(|f| found(HISTORY_OR_KEY_WIPE, format!("'history {f}' clears history"))),
        _ => None,
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
