//! DAVE v1 in the loopback voice server: the server is the MLS external sender and
//! delivery service of one call's group, and runs its whole life as Discord's protocol
//! document describes it. Each fake person is a DAVE member through davey, the crate
//! the bot's songbird uses (`people.rs`).
//!
//! One change at a time goes through the group, in order:
//! - **Group creation** (the bot's key package, op 26, with no group yet): Clients
//!   Connect (11) naming the people, the external sender (25), external Add proposals
//!   for every present person (27); the bot commits (28: commit, welcome).
//! - **Welcomed into an existing group** ([`Delivery::with_group`]): the people made the
//!   group before the bot came; its key package is committed by a person and the bot
//!   gets the welcome (30).
//! - **A person joins** (11, then an Add proposal) or **leaves** (13 Client Disconnect,
//!   then a Remove proposal); the bot commits, unless people commit
//!   ([`Delivery::people_commit`]): then a person's commit wins and the bot's is lost.
//! - **Epoch reset** (24, epoch 1): everyone starts a new group (as creation).
//! - **Downgrade** (21 to version 0) and **upgrade** (24 to version 1, then creation).
//! - **Invalid commit**: a commit the bot cannot process; it answers 31 with the
//!   transition id and a new key package, and a person commits the bot's removal and
//!   re-addition, welcoming it (30).
//!
//! - **Proposals withdrawn** (op 27 with Revoke, `withdraw.rs`): people join, and one
//!   leaves before their Add is committed; the server discards the bot's commit and
//!   revokes that Add; the bot commits what is left, or nothing.
//!
//! Every commit is announced (29) with a new transition id; the bot answers Transition
//! Ready (23), and after [`Delivery::execute_delay`] the server executes it (22), the
//! people first and the bot [`Delivery::execute_lag`] later. The fake people send with
//! a transition's keys only from its execute; by default ([`Kind::AtExecute`]) they
//! also take its keys only then, so a bot that sends with a new epoch's key before the
//! execute is caught by the people's decryption ([`Kind::PreparesAtCommit`]: they
//! prepare at the announce, as libdave clients do).

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use openmls::prelude::tls_codec::{DeserializeBytes as _, Serialize as _, VLBytes};
use openmls::prelude::{
    BasicCredential, ExternalProposal, ExternalSender, GroupEpoch, GroupId, KeyPackageIn,
    LeafNodeIndex, MlsMessageIn, OpenMlsProvider, ProtocolVersion, SenderExtensionIndex,
    SignatureScheme,
};
use openmls_basic_credential::SignatureKeyPair;
use openmls_rust_crypto::OpenMlsRustCrypto;
use serde_json::json;

pub use super::people::{version_one, Kind, Person, GRACE};
use super::Out;

mod media;
mod withdraw;

pub use media::Opened;

/// The two bytes that end every DAVE-encrypted frame.
pub const MARKER: [u8; 2] = [0xFA, 0xFA];

/// A change to the group, queued until the one before it has executed.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The bot's key package arrived (group creation, or its welcome into the group).
    BotKeyPackage(Vec<u8>),
    /// A person comes into the call.
    Join(u64),
    /// A person leaves the call.
    Leave(u64),
    /// Op 24: everyone starts a new group.
    Reset,
    /// Op 21: media goes to transport encryption only.
    Downgrade,
    /// Op 24 to version 1 from version 0.
    Upgrade,
    /// Op 29 with a commit the bot cannot process.
    BadCommit,
    /// People `stay` and `gone` come into the call together (one Add proposal each);
    /// `gone` leaves before the Adds are committed: the server discards the bot's
    /// commit and revokes `gone`'s Add (op 27, Revoke), and the bot commits `stay`
    /// alone (or nothing, when `stay` is empty).
    JoinWithdrawn {
        /// Who joins and stays.
        stay: Vec<u64>,
        /// Who joins and leaves before being committed.
        gone: u64,
    },
}

/// What the bot is waiting for, or what the server waits for from it.
#[derive(Clone, Debug)]
struct Pending {
    /// The transition id announced.
    id: u16,
    /// The protocol version it moves media to.
    version: u16,
    /// The winning commit, once there is one (people apply it at the execute).
    commit: Option<Vec<u8>>,
    /// The welcome for people joining with it.
    welcome: Option<Vec<u8>>,
    /// People who join the group with this transition.
    joiners: Vec<u64>,
    /// People who leave with it.
    leavers: Vec<u64>,
    /// Whether the server waits for the bot's commit (else a person commits).
    bot_commits: bool,
    /// Whether the bot said Transition Ready.
    ready: bool,
    /// A bad commit: the bot must answer 31, then is re-added.
    bad: bool,
    /// Op 24 went out: the bot's new key package starts the next group.
    awaiting_key_package: bool,
    /// A joiner whose Add the server revokes when the bot's first commit comes.
    withdraw: Option<u64>,
}

impl Pending {
    /// Transition `id` to `version`, the bot committing nothing, no one joining or
    /// leaving.
    fn new(id: u16, version: u16) -> Pending {
        Pending {
            id,
            version,
            commit: None,
            welcome: None,
            joiners: Vec::new(),
            leavers: Vec::new(),
            bot_commits: false,
            ready: false,
            bad: false,
            awaiting_key_package: false,
            withdraw: None,
        }
    }
}

/// An executed transition, for the tests.
#[derive(Clone, Debug)]
pub struct Executed {
    /// Its id.
    pub id: u16,
    /// The protocol version media went to.
    pub version: u16,
    /// When the server executed it (the people had switched).
    pub at: Instant,
}

/// The delivery service for one call.
pub struct Delivery {
    provider: OpenMlsRustCrypto,
    signer: SignatureKeyPair,
    external_sender: Vec<u8>,
    channel: u64,
    /// The bot's user id.
    bot: u64,
    /// Everyone who has been in the call, present or gone.
    people: BTreeMap<u64, Person>,
    /// The epoch of the group as committed so far (0: no group yet).
    epoch: u64,
    /// Whether the bot is a member of the group (its welcome or commit executed).
    bot_in_group: bool,
    /// The bot's latest key package (kept for its welcome into an existing group).
    bot_key_package: Option<Vec<u8>>,
    /// The media protocol version after the last executed transition.
    pub version: u16,
    /// The transition in flight.
    pending: Option<Pending>,
    /// Changes waiting for the one in flight.
    queue: VecDeque<Change>,
    /// The last transition id used.
    last_id: u16,
    /// How long after the bot's Transition Ready the server executes.
    pub execute_delay: Duration,
    /// How long after the people execute a transition its op 22 reaches the bot (the
    /// people got theirs first): their frames under the new keys arrive before her
    /// execute.
    pub execute_lag: Duration,
    /// When the people take a transition's keys (new people come as this kind).
    pub kind: Kind,
    /// Whether a person commits changes even when the bot is in the group.
    pub people_commit: bool,
    /// Every executed transition, in order.
    pub executed: Vec<Executed>,
    /// Transition ids the bot answered with 31.
    pub invalid: Vec<u16>,
    /// How many proposals the server revoked (op 27, Revoke).
    pub revoked: usize,
    /// Why the protocol went wrong on the server's side, if it did.
    pub problems: Vec<String>,
}

impl Delivery {
    /// A delivery service for `channel` (bot `bot`) with `people` present, no group yet:
    /// the bot's key package creates it.
    pub fn new(channel: u64, bot: u64, people: &[u64]) -> Delivery {
        let signer = SignatureKeyPair::new(SignatureScheme::ECDSA_SECP256R1_SHA256)
            .expect("an external sender key");
        let sender = ExternalSender::new(
            signer.public().to_vec().into(),
            BasicCredential::new(b"kotoba-loopback-voice".to_vec()).into(),
        );
        let external_sender = sender
            .tls_serialize_detached()
            .expect("the external sender serializes");
        let mut delivery = Delivery {
            provider: OpenMlsRustCrypto::default(),
            signer,
            external_sender,
            channel,
            bot,
            people: BTreeMap::new(),
            epoch: 0,
            bot_in_group: false,
            bot_key_package: None,
            version: 1,
            pending: None,
            queue: VecDeque::new(),
            last_id: 0,
            execute_delay: Duration::from_millis(300),
            execute_lag: Duration::ZERO,
            kind: Kind::AtExecute,
            people_commit: false,
            executed: Vec::new(),
            invalid: Vec::new(),
            revoked: 0,
            problems: Vec::new(),
        };
        for &id in people {
            let person = Person::new(id, Kind::AtExecute, channel, &delivery.external_sender);
            delivery.people.insert(id, person);
        }
        delivery
    }

    /// Like [`Delivery::new`], with the people already in a group of their own: the
    /// first creates it and commits the rest (two at least), before the bot arrives.
    pub fn with_group(channel: u64, bot: u64, people: &[u64]) -> Delivery {
        let mut delivery = Delivery::new(channel, bot, people);
        let (&first, rest) = people.split_first().expect("at least one person");
        let packages: Vec<Vec<u8>> = rest
            .iter()
            .map(|id| delivery.people[id].key_package.clone())
            .collect();
        let proposals = delivery.add_proposals(&packages);
        let creator = delivery.people.get_mut(&first).expect("the first person");
        let (commit, welcome) = creator
            .commit(&proposals)
            .expect("the first person commits");
        creator.hold_commit(commit);
        for id in rest {
            let welcome = welcome.clone().expect("a welcome for the others");
            delivery
                .people
                .get_mut(id)
                .expect("a person")
                .hold_welcome(welcome);
        }
        delivery.epoch = 1;
        let ids: Vec<u64> = people.to_vec();
        delivery.apply_at_execute(&ids, 0, 1);
        delivery
    }

    /// The ids of the people present now.
    pub fn present(&self) -> Vec<u64> {
        self.people
            .values()
            .filter(|p| p.present)
            .map(|p| p.id)
            .collect()
    }

    /// Person `id`, if they have been in the call.
    pub fn person(&self, id: u64) -> Option<&Person> {
        self.people.get(&id)
    }

    /// Every person who has been in the call.
    pub fn people(&self) -> impl Iterator<Item = &Person> {
        self.people.values()
    }

    /// Whether the people are in a group with the bot and its transition executed.
    pub fn ready(&self) -> bool {
        self.bot_in_group
            && self.pending.is_none()
            && self.queue.is_empty()
            && self
                .people
                .values()
                .filter(|p| p.present)
                .all(|p| p.established())
    }

    /// Whether no change is in flight or queued.
    pub fn idle(&self) -> bool {
        self.pending.is_none() && self.queue.is_empty()
    }

    /// Binary op 25: the external sender package.
    fn external_sender_frame(&self) -> Vec<u8> {
        let mut out = vec![25];
        out.extend_from_slice(&self.external_sender);
        out
    }

    fn group_id(&self) -> GroupId {
        GroupId::from_slice(&self.channel.to_be_bytes())
    }

    /// The proposals blob of op 27 (append) adding these key packages at this epoch.
    fn add_proposals(&self, packages: &[Vec<u8>]) -> Vec<u8> {
        let mut messages = Vec::new();
        for package in packages {
            let package = KeyPackageIn::tls_deserialize_exact_bytes(package)
                .expect("a key package parses")
                .validate(self.provider.crypto(), ProtocolVersion::Mls10)
                .expect("a key package is valid");
            let proposal = ExternalProposal::new_add::<OpenMlsRustCrypto>(
                package,
                self.group_id(),
                GroupEpoch::from(self.epoch),
                &self.signer,
                SenderExtensionIndex::new(0),
            )
            .expect("an external Add proposal");
            messages.extend(proposal.tls_serialize_detached().expect("it serializes"));
        }
        VLBytes::new(messages)
            .tls_serialize_detached()
            .expect("the proposals serialize")
    }

    /// The proposals blob removing these leaves.
    fn remove_proposals(&self, leaves: &[LeafNodeIndex]) -> Vec<u8> {
        let mut messages = Vec::new();
        for &leaf in leaves {
            let proposal = ExternalProposal::new_remove::<OpenMlsRustCrypto>(
                leaf,
                self.group_id(),
                GroupEpoch::from(self.epoch),
                &self.signer,
                SenderExtensionIndex::new(0),
            )
            .expect("an external Remove proposal");
            messages.extend(proposal.tls_serialize_detached().expect("it serializes"));
        }
        VLBytes::new(messages)
            .tls_serialize_detached()
            .expect("the proposals serialize")
    }

    /// The leaf of user `user` in the group, as an established person sees it.
    fn leaf_of(&self, user: u64) -> Option<LeafNodeIndex> {
        self.people
            .values()
            .filter(|p| p.present && p.established())
            .find_map(|p| p.leaf_of(user))
    }

    fn next_id(&mut self) -> u16 {
        self.last_id = self.last_id.wrapping_add(1).max(1);
        self.last_id
    }

    /// Queue `change`; what to send the bot now (if nothing is in flight).
    pub fn change(&mut self, change: Change) -> Vec<Out> {
        self.queue.push_back(change);
        self.advance()
    }

    /// Start queued changes while nothing is in flight.
    fn advance(&mut self) -> Vec<Out> {
        let mut out = Vec::new();
        while self.pending.is_none() {
            let Some(change) = self.queue.pop_front() else {
                break;
            };
            out.extend(self.start(change));
        }
        out
    }

    /// Start one change; what to send the bot.
    fn start(&mut self, change: Change) -> Vec<Out> {
        match change {
            Change::BotKeyPackage(package) => self.bot_key_package_arrived(package),
            Change::Join(id) => {
                let person = Person::new(id, self.kind, self.channel, &self.external_sender);
                let package = person.key_package.clone();
                self.people.insert(id, person);
                let mut out = vec![Out::Text(
                    json!({"op": 11, "d": {"user_ids": [id.to_string()]}}),
                )];
                out.extend(self.propose(self.add_proposals(&[package]), vec![id], Vec::new()));
                out
            }
            Change::Leave(id) => {
                let mut out = vec![Out::Text(
                    json!({"op": 13, "d": {"user_id": id.to_string()}}),
                )];
                let Some(leaf) = self.leaf_of(id) else {
                    self.problems
                        .push(format!("no leaf for leaving person {id}"));
                    return out;
                };
                if let Some(p) = self.people.get_mut(&id) {
                    p.present = false;
                }
                out.extend(self.propose(self.remove_proposals(&[leaf]), Vec::new(), vec![id]));
                out
            }
            Change::Reset | Change::Upgrade => {
                // Everyone starts over with a pending group; the bot's new key package
                // creates the group again.
                self.epoch = 0;
                self.bot_in_group = false;
                for p in self.people.values_mut().filter(|p| p.present) {
                    p.reinit(self.channel);
                }
                self.pending = Some(Pending {
                    bot_commits: true,
                    awaiting_key_package: true,
                    ..Pending::new(0, 1)
                });
                vec![Out::Text(
                    json!({"op": 24, "d": {"protocol_version": 1, "epoch": 1}}),
                )]
            }
            Change::Downgrade => {
                let id = self.next_id();
                self.pending = Some(Pending::new(id, 0));
                for p in self.people.values_mut().filter(|p| p.present) {
                    p.downgrade_announced(id);
                }
                vec![Out::Text(
                    json!({"op": 21, "d": {"transition_id": id, "protocol_version": 0}}),
                )]
            }
            Change::BadCommit => {
                let id = self.next_id();
                self.pending = Some(Pending {
                    bad: true,
                    ..Pending::new(id, 1)
                });
                // A commit for an epoch the bot is not at: it cannot process it.
                let mut frame = vec![29];
                frame.extend_from_slice(&id.to_be_bytes());
                frame.extend_from_slice(&[0x00, 0x01, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef]);
                vec![Out::Binary(frame)]
            }
            Change::JoinWithdrawn { stay, gone } => self.join_withdrawn(stay, gone),
        }
    }

    /// The bot sent its key package (op 26).
    fn bot_key_package_arrived(&mut self, package: Vec<u8>) -> Vec<Out> {
        self.bot_key_package = Some(package.clone());
        let people: Vec<String> = self.present().iter().map(u64::to_string).collect();
        let mut out = vec![
            Out::Text(json!({"op": 11, "d": {"user_ids": people}})),
            Out::Binary(self.external_sender_frame()),
        ];
        if self.epoch == 0 {
            // No group: the bot creates it and commits the people in.
            let present = self.present();
            let packages: Vec<Vec<u8>> = present
                .iter()
                .map(|id| self.people[id].key_package.clone())
                .collect();
            let id = self.next_id();
            self.pending = Some(Pending {
                joiners: present,
                bot_commits: true,
                ..Pending::new(id, 1)
            });
            let mut frame = vec![27, 0];
            frame.extend(self.add_proposals(&packages));
            out.push(Out::Binary(frame));
        } else {
            // A group exists: a person commits the bot in; the bot gets the welcome.
            out.extend(self.person_commits_bot_in(package, None));
        }
        out
    }

    /// A person commits the bot's key package (removing `old` leaf first, after an
    /// invalid commit); the bot is welcomed (30) with a new transition.
    fn person_commits_bot_in(&mut self, package: Vec<u8>, old: Option<LeafNodeIndex>) -> Vec<Out> {
        let mut proposals = Vec::new();
        if let Some(leaf) = old {
            proposals.push(self.remove_proposals(&[leaf]));
        }
        proposals.push(self.add_proposals(&[package]));
        let Some(committer) = self
            .people
            .values()
            .find(|p| p.present && p.established())
            .map(|p| p.id)
        else {
            self.problems
                .push("no established person to commit the bot in".into());
            return Vec::new();
        };
        let mut commit_welcome = None;
        for (&id, p) in self
            .people
            .iter_mut()
            .filter(|(_, p)| p.present && p.established())
        {
            for blob in &proposals {
                let made = p.propose(blob);
                if id == committer {
                    commit_welcome = made.or(commit_welcome.take());
                }
            }
        }
        let Some((commit, welcome)) = commit_welcome else {
            self.problems
                .push("the committing person made no commit".into());
            return Vec::new();
        };
        let Some(welcome) = welcome else {
            self.problems
                .push("the commit that adds the bot has no welcome".into());
            return Vec::new();
        };
        let id = self.next_id();
        self.epoch += 1;
        self.pending = Some(Pending {
            commit: Some(commit),
            ..Pending::new(id, 1)
        });
        self.hand_out();
        let mut frame = vec![30];
        frame.extend_from_slice(&id.to_be_bytes());
        frame.extend_from_slice(&welcome);
        vec![Out::Binary(frame)]
    }

    /// Send proposals to the group: the bot (and every established person) takes them;
    /// the bot commits, or a person does when [`Delivery::people_commit`].
    fn propose(&mut self, proposals: Vec<u8>, joiners: Vec<u64>, leavers: Vec<u64>) -> Vec<Out> {
        let id = self.next_id();
        let bot_commits = !self.people_commit;
        let committer = (!bot_commits)
            .then(|| {
                self.people
                    .values()
                    .find(|p| p.present && p.established())
                    .map(|p| p.id)
            })
            .flatten();
        let mut made = None;
        for (&pid, p) in self
            .people
            .iter_mut()
            .filter(|(_, p)| p.present && p.established() && !joiners.contains(&p.id))
        {
            let commit = p.propose(&proposals);
            if Some(pid) == committer {
                made = commit;
            }
        }
        let mut frame = vec![27, 0];
        frame.extend(proposals);
        let mut out = vec![Out::Binary(frame)];
        let mut pending = Pending {
            joiners,
            leavers,
            bot_commits,
            ..Pending::new(id, 1)
        };
        if let Some((commit, welcome)) = made {
            // A person's commit wins; the bot's own commit (if it sends one) is lost.
            self.epoch += 1;
            pending.commit = Some(commit.clone());
            pending.welcome = welcome;
            out.push(Out::Binary(announce(id, &commit)));
        }
        let announced = pending.commit.is_some();
        self.pending = Some(pending);
        if announced {
            self.hand_out();
        }
        out
    }

    /// The bot's binary op 28 (`[28][commit][welcome]`): the winning commit when the
    /// server waits for the bot's; announced back (29).
    pub fn bot_commit(&mut self, frame: &[u8]) -> Vec<Out> {
        let Some(pending) = self
            .pending
            .as_mut()
            .filter(|p| p.bot_commits && p.commit.is_none())
        else {
            // Lost to a person's commit, or nothing asked: discarded, as Discord does.
            return Vec::new();
        };
        if let Some(gone) = pending.withdraw.take() {
            // A joiner left before this commit: it is discarded, and their Add revoked.
            return self.revoke_add(gone);
        }
        let Some(body) = frame.get(1..) else {
            self.problems.push("an empty op 28".into());
            return Vec::new();
        };
        let (_, welcome) = match MlsMessageIn::tls_deserialize_bytes(body) {
            Ok(parsed) => parsed,
            Err(e) => {
                self.problems
                    .push(format!("op 28's commit does not parse: {e:?}"));
                return Vec::new();
            }
        };
        let commit = body[..body.len() - welcome.len()].to_vec();
        if !pending.joiners.is_empty() && welcome.is_empty() {
            self.problems
                .push("op 28 carried no welcome for the people joining".into());
            return Vec::new();
        }
        pending.commit = Some(commit.clone());
        pending.welcome = (!welcome.is_empty()).then(|| welcome.to_vec());
        let id = pending.id;
        self.epoch += 1;
        self.hand_out();
        vec![Out::Binary(announce(id, &commit))]
    }

    /// The bot said Transition Ready (23) for `id`: the server will execute it after
    /// the delay (the caller schedules [`Delivery::execute`]).
    pub fn bot_ready(&mut self, id: u16) -> bool {
        match self.pending.as_mut() {
            Some(p) if p.id == id && !p.bad => {
                p.ready = true;
                true
            }
            _ => {
                self.problems
                    .push(format!("Transition Ready for unknown transition {id}"));
                false
            }
        }
    }

    /// The bot answered 31 for transition `id` (after the bad commit).
    pub fn bot_invalid(&mut self, id: u16) {
        self.invalid.push(id);
        match self.pending.as_ref() {
            Some(p) if p.id == id && p.bad => self.pending = None,
            _ => self
                .problems
                .push(format!("31 for transition {id}, not the bad commit")),
        }
    }

    /// The bot's new key package after a 31 or a reset: re-added to the group.
    pub fn bot_key_package(&mut self, package: Vec<u8>) -> Vec<Out> {
        if self
            .pending
            .as_ref()
            .is_some_and(|p| p.awaiting_key_package)
        {
            self.pending = None;
            return self.bot_key_package_arrived(package);
        }
        if self.epoch > 0 && self.bot_in_group && self.idle() {
            // After 31: the bot's old leaf is removed and its new package added.
            self.bot_key_package = Some(package.clone());
            let old = self.leaf_of(self.bot);
            self.bot_in_group = false;
            return self.person_commits_bot_in(package, old);
        }
        self.change(Change::BotKeyPackage(package))
    }

    /// Execute the transition in flight if it is `id`: the people apply it now; Some(op
    /// 22) for the bot, then whatever was queued behind it.
    pub fn execute(&mut self, id: u16) -> Vec<Out> {
        let Some(pending) = self.pending.take_if(|p| p.id == id && p.ready) else {
            return Vec::new();
        };
        let now = Instant::now();
        if pending.version == 0 {
            for p in self.people.values_mut().filter(|p| p.present) {
                p.downgrade(id);
            }
        } else {
            let present: Vec<u64> = self.present();
            self.apply_at_execute(&present, id, pending.version);
            for &leaver in &pending.leavers {
                if let Some(p) = self.people.get_mut(&leaver) {
                    p.left_at = Some(now);
                }
            }
            self.bot_in_group = true;
        }
        self.version = pending.version;
        // When the people switched (their MLS work can take a while in a debug build).
        self.executed.push(Executed {
            id,
            version: pending.version,
            at: Instant::now(),
        });
        let mut out = vec![Out::Text(json!({"op": 22, "d": {"transition_id": id}}))];
        out.extend(self.advance());
        out
    }

    /// The transition in flight was announced: each person holds its commit (or the
    /// welcome, when joining with it), and one who prepares at the commit prepares now.
    fn hand_out(&mut self) {
        let Some(pending) = self.pending.as_ref() else {
            return;
        };
        let (id, version) = (pending.id, pending.version);
        for p in self.people.values_mut() {
            if pending.joiners.contains(&p.id) {
                if let Some(w) = &pending.welcome {
                    p.hold_welcome(w.clone());
                }
            } else if p.present && p.established() {
                if let Some(c) = &pending.commit {
                    p.hold_commit(c.clone());
                }
            }
            if let Err(why) = p.announced(id, version) {
                self.problems.push(why.to_string());
            }
        }
    }

    /// People `ids` apply what they hold for transition `id` (to `version`).
    fn apply_at_execute(&mut self, ids: &[u64], id: u16, version: u16) {
        for pid in ids {
            if let Some(p) = self.people.get_mut(pid) {
                if let Err(why) = p.apply(id, version) {
                    self.problems.push(why.to_string());
                }
            }
        }
    }
}

/// Binary op 29: the commit announced with its transition id.
fn announce(id: u16, commit: &[u8]) -> Vec<u8> {
    let mut out = vec![29];
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(commit);
    out
}
