//! What DAVE is doing on one call, for the application to show (kotoba patch).

use std::sync::{Arc, Mutex};

/// A snapshot of a call's DAVE state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DaveStatus {
    /// The protocol version media is sent and received with now (0: transport
    /// encryption only).
    pub protocol_version: u16,
    /// The MLS epoch of the group whose keys media uses (None before the first group).
    pub epoch: Option<u64>,
    /// The user ids in that group, this bot included.
    pub members: Vec<u64>,
    /// Transitions executed on this call so far.
    pub transitions: u64,
    /// Frames received with DAVE's marker that could not be decrypted.
    pub undecryptable: u64,
    /// Commits or welcomes this bot could not process (each answered with opcode 31).
    pub invalid: u64,
}

/// Where a call's tasks publish its [`DaveStatus`]; one per driver, kept across
/// reconnections. Cloning it gives another handle on the same status.
#[derive(Clone, Debug, Default)]
pub struct DaveWatch(Arc<Mutex<DaveStatus>>);

impl DaveWatch {
    /// The status now.
    #[must_use]
    pub fn status(&self) -> DaveStatus {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// Change the published status (a poisoned lock is taken over: the status is plain
/// data, always whole).
pub(crate) fn update(watch: &DaveWatch, change: impl FnOnce(&mut DaveStatus)) {
    let mut status = watch.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    change(&mut status);
}

/// Publish what `session` holds now, with media on `protocol_version`.
pub(crate) fn publish(watch: &DaveWatch, session: Option<&davey::DaveSession>, protocol_version: u16) {
    update(watch, |status| {
        status.protocol_version = protocol_version;
        status.epoch = session.and_then(|s| s.epoch()).map(|e| e.as_u64()).filter(|&e| e > 0);
        status.members = session.and_then(|s| s.get_user_ids()).unwrap_or_default();
        status.members.sort_unstable();
    });
}
