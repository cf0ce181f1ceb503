//! The people's side of the call's media: what a person sends (DAVE-encrypted by their
//! session while they have a key), each frame of the bot's as every person opens it,
//! and whether DAVE was on for her media at a moment; and the people's [`Kind`].

use std::time::Instant;

use super::{Delivery, Kind, GRACE, MARKER};

impl Delivery {
    /// Make everyone in the call now, and whoever comes later, of `kind`.
    pub fn set_kind(&mut self, kind: Kind) {
        self.kind = kind;
        for p in self.people.values_mut() {
            p.kind = kind;
        }
    }

    /// `opus` as person `user` sends it: DAVE-encrypted while they have a key.
    pub fn seal(&mut self, user: u64, opus: &[u8]) -> Vec<u8> {
        match self.people.get_mut(&user) {
            Some(p) => p.seal(opus),
            None => opus.to_vec(),
        }
    }

    /// A frame the bot sent, as the people opened it.
    pub fn open(&mut self, frame: &[u8]) -> Opened {
        if !frame.ends_with(&MARKER) || frame.len() < 11 {
            return Opened {
                opus: Some(frame.to_vec()),
                e2ee: false,
                failed: false,
            };
        }
        let now = Instant::now();
        let mut opus = None;
        let mut failed = false;
        for p in self.people.values_mut() {
            match p.open(self.bot, frame, now) {
                Ok(o) => opus = opus.or(Some(o)),
                Err(counts) => failed |= counts,
            }
        }
        Opened {
            failed: failed || opus.is_none(),
            opus,
            e2ee: true,
        }
    }

    /// Whether DAVE is on for the bot's media at `now`: version 1, and not within
    /// [`GRACE`] of a transition that changed the version.
    pub fn dave_on(&self, now: Instant) -> bool {
        let mut version = 1;
        let mut changed = None;
        for e in &self.executed {
            if e.version != version {
                changed = Some(e.at);
            }
            version = e.version;
        }
        version == 1 && changed.is_none_or(|at| now > at + GRACE)
    }
}

/// A frame of the bot's as the people opened it.
pub struct Opened {
    /// The Opus inside (None when no one could open it).
    pub opus: Option<Vec<u8>>,
    /// Whether it was DAVE-encrypted.
    pub e2ee: bool,
    /// Whether a person in the group could not open it (or no one could).
    pub failed: bool,
}
