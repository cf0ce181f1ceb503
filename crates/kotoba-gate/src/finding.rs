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

/// Which principle of docs/gate.md decided a line ("The gate by principle"): a rule for
/// a named command, or one of the general readings that needs no list. Reported with
/// every decision so the corpus can count what each principle decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Principle {
    /// A rule for a named command or pattern (`rm -r`, `mkfs`, `curl | sh`).
    #[default]
    Named,
    /// 1: a later word begins a command that is dangerous by itself.
    LaterWord,
    /// 2: an argument or option value is itself a dangerous shell line.
    ArgumentLine,
    /// 3: an argument names a block device on a command that can write.
    Device,
    /// 4: the family grant was narrowed to a prefix or refused (nested command, device,
    /// code-running option).
    Family,
    /// 5: a Python call is a spawning or evaluating capability, whatever the module.
    Capability,
    /// 6: a file-name pattern could match a key or history file.
    Glob,
}

impl Principle {
    /// Its number in docs/gate.md (1–6), or `None` for a named rule.
    pub fn number(self) -> Option<u8> {
        match self {
            Principle::Named => None,
            Principle::LaterWord => Some(1),
            Principle::ArgumentLine => Some(2),
            Principle::Device => Some(3),
            Principle::Family => Some(4),
            Principle::Capability => Some(5),
            Principle::Glob => Some(6),
        }
    }
}

/// What matched: the label and a sentence fragment naming the part that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The short label.
    pub label: String,
    /// Which command, flag or path matched, for the card's reasons.
    pub detail: String,
    /// Which principle found it.
    pub principle: Principle,
}

impl Finding {
    /// The same finding, credited to `principle` unless a more specific one found it.
    pub(crate) fn by(mut self, principle: Principle) -> Finding {
        if self.principle == Principle::Named {
            self.principle = principle;
        }
        self
    }
}

/// A finding with `label`, as the `Some` every rule returns.
pub(crate) fn found(label: &str, detail: String) -> Option<Finding> {
    Some(Finding {
        label: label.to_string(),
        detail,
        principle: Principle::Named,
    })
}
