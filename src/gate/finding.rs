//! What a dangerous-pattern rule reports: its label (the names every reader of shell,
//! inline interpreter code and Python shares) and the part that matched.

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

/// A finding with `label`, as the `Some` every rule returns.
pub(crate) fn found(label: &str, detail: String) -> Option<Finding> {
    Some(Finding {
        label: label.to_string(),
        detail,
    })
}
