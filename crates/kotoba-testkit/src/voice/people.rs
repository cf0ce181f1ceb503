//! The fake people of a DAVE call: each one a davey session (the crate the bot's
//! songbird uses) that takes proposals when they come (appended or revoked), and is
//! one of two [`Kind`]s: one holds each commit or welcome and applies it — process,
//! prepare, execute — only when its transition executes (the worst case for her
//! sending: her new keys open for them only then); the other prepares as soon as the
//! commit or welcome is announced, as libdave clients do, and switches its sender key
//! at the execute. Both send with the new keys only from the execute. Each person tries
//! every frame the bot sends; a failure counts once the person is in the group (from
//! its first executed transition, plus [`GRACE`]) and until it leaves.

use std::num::NonZeroU16;
use std::time::{Duration, Instant};

use davey::{DaveSession, MediaType, ProposalsOperationType};
use openmls::prelude::hash_ref::ProposalRef;
use openmls::prelude::Proposal;

/// How long after a transition executes a frame under the old keys still counts as in
/// flight (the bot switches when op 22 reaches it, a moment after the server sent it).
pub const GRACE: Duration = Duration::from_millis(400);

/// When a fake person takes a transition's keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// Processes the commit or welcome, prepares and executes all at once when the
    /// transition executes: the worst case for her sending.
    #[default]
    AtExecute,
    /// Processes and prepares when the commit or welcome is announced (it can open the
    /// new epoch's frames from then), and switches its sender key at the execute, as
    /// libdave clients do.
    PreparesAtCommit,
}

/// A commit or welcome held until its transition executes.
#[derive(Clone, Debug)]
enum Held {
    Commit(Vec<u8>),
    Welcome(Vec<u8>),
}

/// One fake person in a DAVE call.
pub struct Person {
    /// Their user id.
    pub id: u64,
    /// When they take a transition's keys.
    pub kind: Kind,
    session: DaveSession,
    /// Their latest key package (what an Add proposal carries).
    pub key_package: Vec<u8>,
    /// Whether they are in the voice channel now.
    pub present: bool,
    held: Option<Held>,
    /// The transition they prepared ahead of its execute ([`Kind::PreparesAtCommit`]).
    prepared: Option<u16>,
    /// When their first transition into the group executed.
    pub established_at: Option<Instant>,
    /// When the transition that removed them executed.
    pub left_at: Option<Instant>,
    /// Frames of the bot's they opened.
    pub opened: usize,
    /// Frames of the bot's they failed while they count (in the group, past the grace).
    pub failed: usize,
    /// Frames of the bot's they opened after leaving (past the grace): must stay 0.
    pub opened_after_leaving: usize,
    /// What went wrong applying a transition, if anything.
    pub problems: Vec<String>,
}

impl Person {
    /// A person with a fresh session, its external sender set and a key package made.
    pub fn new(id: u64, kind: Kind, channel: u64, external_sender: &[u8]) -> Person {
        let mut session =
            DaveSession::new(version_one(), id, channel, None).expect("a DAVE session");
        session
            .set_external_sender(external_sender)
            .expect("the person takes the external sender");
        let key_package = session.create_key_package().expect("a key package");
        Person {
            id,
            kind,
            session,
            key_package,
            present: true,
            held: None,
            prepared: None,
            established_at: None,
            left_at: None,
            opened: 0,
            failed: 0,
            opened_after_leaving: 0,
            problems: Vec::new(),
        }
    }

    /// Whether their keys are the group's (a transition into it executed, and they
    /// have not left).
    pub fn established(&self) -> bool {
        self.established_at.is_some() && self.left_at.is_none()
    }

    /// Start over with a pending group and a new key package (op 24); the keys in use
    /// stay until the next transition replaces them.
    pub fn reinit(&mut self, channel: u64) {
        self.session
            .reinit(version_one(), self.id, channel, None)
            .expect("the person reinitialises");
        self.key_package = self.session.create_key_package().expect("a key package");
        self.held = None;
        self.prepared = None;
    }

    /// Take proposals (op 27, append); the commit and welcome they would send.
    pub fn propose(&mut self, proposals: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        self.proposals(ProposalsOperationType::APPEND, proposals)
    }

    /// Withdraw proposals (op 27, revoke: `refs` is the payload of proposal refs); the
    /// commit and welcome they would send for what is left.
    pub fn revoke(&mut self, refs: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        self.proposals(ProposalsOperationType::REVOKE, refs)
    }

    fn proposals(
        &mut self,
        op: ProposalsOperationType,
        payload: &[u8],
    ) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        match self.session.process_proposals(op, payload, None) {
            Ok(made) => made.map(|cw| (cw.commit, cw.welcome)),
            Err(e) => {
                self.problems.push(format!("proposals ({op:?}): {e:?}"));
                None
            }
        }
    }

    /// The refs of the pending proposals that add user `user` (what a revoke names).
    pub fn add_refs_of(&self, user: u64) -> Vec<ProposalRef> {
        let Some(group) = self.session.group() else {
            return Vec::new();
        };
        group
            .pending_proposals()
            .filter(|q| match q.proposal() {
                Proposal::Add(add) => {
                    add.key_package()
                        .leaf_node()
                        .credential()
                        .serialized_content()
                        == user.to_be_bytes()
                }
                _ => false,
            })
            .map(|q| q.proposal_reference_ref().clone())
            .collect()
    }

    /// How many proposals they hold uncommitted.
    pub fn pending_proposals(&self) -> usize {
        self.session
            .group()
            .map_or(0, |g| g.pending_proposals().count())
    }

    /// The epoch of their group (0: none yet).
    pub fn epoch(&self) -> u64 {
        self.session.epoch().map_or(0, |e| e.as_u64())
    }

    /// Like [`Person::propose`], where a commit must come of it.
    pub fn commit(&mut self, proposals: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        self.propose(proposals)
    }

    /// Hold `commit` until its transition executes.
    pub fn hold_commit(&mut self, commit: Vec<u8>) {
        self.held = Some(Held::Commit(commit));
    }

    /// Hold `welcome` until its transition executes.
    pub fn hold_welcome(&mut self, welcome: Vec<u8>) {
        self.held = Some(Held::Welcome(welcome));
    }

    /// Transition `id` (to `version`) was announced with what they hold: a person who
    /// prepares at the commit processes it and prepares now; the other waits.
    pub fn announced(&mut self, id: u16, version: u16) -> Result<(), Refused> {
        if self.kind != Kind::PreparesAtCommit || self.held.is_none() || id == 0 {
            return Ok(());
        }
        self.process_held(id)?;
        self.session
            .prepare_transition(id, version)
            .map_err(|e| Refused::new(self.id, "prepare", id, e))?;
        self.prepared = Some(id);
        Ok(())
    }

    /// Transition `id` (to version 0) was announced (op 21): a person who prepares at
    /// the commit prepares the downgrade now.
    pub fn downgrade_announced(&mut self, id: u16) {
        if self.kind != Kind::PreparesAtCommit {
            return;
        }
        match self.session.prepare_transition(id, 0) {
            Ok(()) => self.prepared = Some(id),
            Err(e) => self.problems.push(format!("prepare downgrade {id}: {e:?}")),
        }
    }

    /// Process what is held for transition `id`.
    fn process_held(&mut self, id: u16) -> Result<(), Refused> {
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        let who = self.id;
        match held {
            Held::Commit(c) => {
                self.session
                    .process_commit(&c)
                    .map_err(|e| Refused::new(who, "process commit", id, e))?;
            }
            Held::Welcome(w) => {
                self.session
                    .process_welcome(&w, None)
                    .map_err(|e| Refused::new(who, "process welcome", id, e))?;
            }
        }
        Ok(())
    }

    /// Transition `id` (to `version`) executes: apply what is held (or execute what
    /// was prepared at the commit).
    pub fn apply(&mut self, id: u16, version: u16) -> Result<(), Refused> {
        let who = self.id;
        if self.prepared.take_if(|p| *p == id).is_some() {
            self.session
                .execute_transition(id)
                .map_err(|e| Refused::new(who, "execute", id, e))?;
            if self.established_at.is_none() {
                self.established_at = Some(Instant::now());
            }
            return Ok(());
        }
        if self.held.is_none() {
            return Ok(());
        }
        self.process_held(id)?;
        self.session
            .prepare_transition(id, version)
            .map_err(|e| Refused::new(who, "prepare", id, e))?;
        if id != 0 {
            self.session
                .execute_transition(id)
                .map_err(|e| Refused::new(who, "execute", id, e))?;
        }
        if self.established_at.is_none() {
            self.established_at = Some(Instant::now());
        }
        Ok(())
    }

    /// Transition `id` to version 0 executes.
    pub fn downgrade(&mut self, id: u16) {
        let done = if self.prepared.take_if(|p| *p == id).is_some() {
            self.session.execute_transition(id).map(|_| ())
        } else {
            self.session
                .prepare_transition(id, 0)
                .and_then(|()| self.session.execute_transition(id).map(|_| ()))
        };
        if let Err(e) = done {
            self.problems.push(format!("downgrade {id}: {e:?}"));
        }
    }

    /// The leaf of user `user` in the group as this person sees it.
    pub fn leaf_of(&self, user: u64) -> Option<openmls::prelude::LeafNodeIndex> {
        self.session.group()?.members().find_map(|m| {
            let id = u64::from_be_bytes(m.credential.serialized_content().try_into().ok()?);
            (id == user).then_some(m.index)
        })
    }

    /// `opus` as this person sends it: DAVE-encrypted while they have a key.
    pub fn seal(&mut self, opus: &[u8]) -> Vec<u8> {
        if self.present && self.session.can_encrypt() {
            if let Ok(sealed) = self.session.encrypt_opus(opus) {
                return sealed.into_owned();
            }
        }
        opus.to_vec()
    }

    /// Try a DAVE frame from `bot` at `now`: its Opus, or whether the failure counts.
    pub fn open(&mut self, bot: u64, frame: &[u8], now: Instant) -> Result<Vec<u8>, bool> {
        match self.session.decrypt(bot, MediaType::AUDIO, frame) {
            Ok(opus) => {
                self.opened += 1;
                if self.left_at.is_some_and(|l| now > l + GRACE) {
                    self.opened_after_leaving += 1;
                }
                Ok(opus)
            }
            Err(_) => {
                let counts = self.established_at.is_some_and(|e| now > e + GRACE)
                    && self.left_at.is_none_or(|l| now < l);
                if counts {
                    self.failed += 1;
                }
                Err(counts)
            }
        }
    }
}

/// The protocol version of DAVE v1 as davey takes it.
pub fn version_one() -> NonZeroU16 {
    NonZeroU16::new(1).expect("version 1")
}

/// A person's DAVE session refused a step of a transition.
#[derive(Debug, thiserror::Error)]
#[error("person {who} cannot {step} {id}: {detail}")]
pub struct Refused {
    /// The person.
    who: u64,
    /// The step: "process commit", "process welcome", "prepare", "execute".
    step: &'static str,
    /// The transition.
    id: u16,
    /// What davey said.
    detail: String,
}

impl Refused {
    fn new(who: u64, step: &'static str, id: u16, e: impl std::fmt::Debug) -> Refused {
        Refused {
            who,
            step,
            id,
            detail: format!("{e:?}"),
        }
    }
}
