//! DAVE v1 in the loopback voice server: the server is the MLS external sender and
//! delivery service, and each fake person is a DAVE member through davey (the crate
//! songbird 0.6.1 uses). The flow is the one songbird's `driver/tasks/ws.rs` answers:
//! the bot's key package (binary op 26) → Clients Connect (op 11, JSON) naming the
//! people, the external sender (binary op 25) and Add proposals for the people's key
//! packages signed by it (binary op 27, append); the bot commits (binary op 28: commit
//! then welcome) → the commit is announced back to it (binary op 29, transition 1) and
//! the welcome admits the people; its Transition Ready (op 23) → Execute Transition
//! (op 22). Server → client binary frames are `[opcode][payload]` as
//! serenity-voice-model 0.3's `deserialize_binary_event` reads them (voice gateway v4).

use std::collections::BTreeMap;
use std::num::NonZeroU16;

use davey::DaveSession;
use openmls::prelude::tls_codec::{DeserializeBytes as _, Serialize as _, VLBytes};
use openmls::prelude::{
    BasicCredential, ExternalProposal, ExternalSender, GroupEpoch, GroupId, KeyPackageIn,
    MlsMessageIn, OpenMlsProvider, ProtocolVersion, SenderExtensionIndex, SignatureScheme,
};
use openmls_basic_credential::SignatureKeyPair;
use openmls_rust_crypto::OpenMlsRustCrypto;

/// The transition id of the commit that admits the people.
pub const TRANSITION: u16 = 1;
/// The two bytes that end every DAVE-encrypted frame.
pub const MARKER: [u8; 2] = [0xFA, 0xFA];

/// The delivery service for one call: the external sender's key and the people.
pub struct Delivery {
    provider: OpenMlsRustCrypto,
    signer: SignatureKeyPair,
    external_sender: Vec<u8>,
    channel: u64,
    /// Each person's DAVE session and the key package it made.
    people: BTreeMap<u64, (DaveSession, Vec<u8>)>,
    /// Whether the people were welcomed into the bot's group.
    welcomed: bool,
}

impl Delivery {
    /// A delivery service for `channel` with these `people` waiting to be added.
    pub fn new(channel: u64, people: &[u64]) -> Delivery {
        let signer = SignatureKeyPair::new(SignatureScheme::ECDSA_SECP256R1_SHA256)
            .expect("an external sender key");
        let sender = ExternalSender::new(
            signer.public().to_vec().into(),
            BasicCredential::new(b"kotoba-loopback-voice".to_vec()).into(),
        );
        let external_sender = sender
            .tls_serialize_detached()
            .expect("the external sender serializes");
        let version = NonZeroU16::new(1).expect("version 1");
        let people = people
            .iter()
            .map(|&id| {
                let mut session =
                    DaveSession::new(version, id, channel, None).expect("a DAVE session");
                session
                    .set_external_sender(&external_sender)
                    .expect("the person takes the external sender");
                let package = session.create_key_package().expect("a key package");
                (id, (session, package))
            })
            .collect();
        Delivery {
            provider: OpenMlsRustCrypto::default(),
            signer,
            external_sender,
            channel,
            people,
            welcomed: false,
        }
    }

    /// The ids of the people, for Clients Connect.
    pub fn people(&self) -> Vec<u64> {
        self.people.keys().copied().collect()
    }

    /// Binary op 25: the external sender package.
    pub fn external_sender_frame(&self) -> Vec<u8> {
        let mut out = vec![25];
        out.extend_from_slice(&self.external_sender);
        out
    }

    /// Binary op 27 (append): one external Add proposal per person, for the bot's new
    /// group (epoch 0, group id = the channel id big-endian, as davey makes it).
    pub fn proposals_frame(&self) -> Vec<u8> {
        let mut messages = Vec::new();
        for (_, package) in self.people.values() {
            let package = KeyPackageIn::tls_deserialize_exact_bytes(package)
                .expect("the person's key package parses")
                .validate(self.provider.crypto(), ProtocolVersion::Mls10)
                .expect("the person's key package is valid");
            let proposal = ExternalProposal::new_add::<OpenMlsRustCrypto>(
                package,
                GroupId::from_slice(&self.channel.to_be_bytes()),
                GroupEpoch::from(0),
                &self.signer,
                SenderExtensionIndex::new(0),
            )
            .expect("an external Add proposal");
            messages.extend(
                proposal
                    .tls_serialize_detached()
                    .expect("the proposal serializes"),
            );
        }
        let mut out = vec![27, 0];
        out.extend(
            VLBytes::new(messages)
                .tls_serialize_detached()
                .expect("the proposals serialize"),
        );
        out
    }

    /// The bot's binary op 28 (`[28][commit][welcome]`): the people process the
    /// welcome; returns binary op 29 announcing the commit back to the bot, or why not.
    pub fn commit_welcome(&mut self, frame: &[u8]) -> Result<Vec<u8>, String> {
        let body = frame.get(1..).ok_or("an empty op 28")?;
        let (_, welcome) = MlsMessageIn::tls_deserialize_bytes(body)
            .map_err(|e| format!("op 28's commit does not parse: {e:?}"))?;
        let commit = &body[..body.len() - welcome.len()];
        if welcome.is_empty() {
            return Err("op 28 carried no welcome for the people".into());
        }
        for (id, (session, _)) in self.people.iter_mut() {
            session
                .process_welcome(welcome)
                .map_err(|e| format!("person {id} cannot process the welcome: {e:?}"))?;
        }
        self.welcomed = true;
        let mut out = vec![29];
        out.extend_from_slice(&TRANSITION.to_be_bytes());
        out.extend_from_slice(commit);
        Ok(out)
    }

    /// Whether the people are in the bot's group with keys.
    pub fn ready(&self) -> bool {
        self.welcomed && self.people.values().all(|(s, _)| s.is_ready())
    }

    /// `opus` as person `user` sends it: DAVE-encrypted once the group is up (before
    /// that, and for the Opus silence frame, as it is).
    pub fn seal(&mut self, user: u64, opus: &[u8]) -> Vec<u8> {
        match self.people.get_mut(&user) {
            Some((session, _)) if session.is_ready() => session
                .encrypt_opus(opus)
                .map(|c| c.into_owned())
                .unwrap_or_else(|_| opus.to_vec()),
            _ => opus.to_vec(),
        }
    }

    /// A frame the bot (`bot`) sent: Some(Opus, whether it was DAVE-encrypted), or
    /// None when it carries the marker but no person's session can open it.
    pub fn open(&mut self, bot: u64, frame: &[u8]) -> Option<(Vec<u8>, bool)> {
        if !frame.ends_with(&MARKER) || frame.len() < 11 {
            return Some((frame.to_vec(), false));
        }
        let (session, _) = self.people.values_mut().next()?;
        session
            .decrypt(bot, davey::MediaType::AUDIO, frame)
            .ok()
            .map(|opus| (opus, true))
    }
}
