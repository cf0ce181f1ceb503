//! Proposals withdrawn (op 27 with operation type 1, Revoke): the server sends Add
//! proposals for people coming into the call, then one of them leaves before the Adds
//! are committed. Discord's document: the server may withdraw proposals it sent
//! before; the payload names them by their MLS proposal refs, and a client removes
//! them from its pending proposals and commits what is left (or nothing). The bot's
//! commit of the first Adds is discarded; its commit after the revoke must carry only
//! what was not withdrawn, which the established people (who took the revoke too)
//! check by processing it.

use openmls::prelude::tls_codec::{Serialize as _, VLBytes};
use serde_json::json;

use super::{Delivery, Out, Pending, Person};

impl Delivery {
    /// Start [`Change::JoinWithdrawn`]: Clients Connect for everyone coming, and one
    /// Append with an Add for each; the server waits for the bot's commit.
    pub(super) fn join_withdrawn(&mut self, stay: Vec<u64>, gone: u64) -> Vec<Out> {
        let mut coming = stay.clone();
        coming.push(gone);
        let mut packages = Vec::new();
        for &id in &coming {
            let person = Person::new(id, self.kind, self.channel, &self.external_sender);
            packages.push(person.key_package.clone());
            self.people.insert(id, person);
        }
        let ids: Vec<String> = coming.iter().map(u64::to_string).collect();
        let mut out = vec![Out::Text(json!({"op": 11, "d": {"user_ids": ids}}))];
        let proposals = self.add_proposals(&packages);
        for p in self
            .people
            .values_mut()
            .filter(|p| p.present && p.established() && !coming.contains(&p.id))
        {
            p.propose(&proposals);
        }
        let mut frame = vec![27, 0];
        frame.extend(proposals);
        out.push(Out::Binary(frame));
        let id = self.next_id();
        self.pending = Some(Pending {
            joiners: coming,
            bot_commits: true,
            withdraw: Some(gone),
            ..Pending::new(id, 1)
        });
        out
    }

    /// `gone` left before the bot's commit of their Add was taken: the commit is
    /// discarded, Client Disconnect (13) and a Revoke naming their Add (27) go out, and
    /// the established people take the revoke. When nobody is left to add, nothing is
    /// committed and the next change starts.
    pub(super) fn revoke_add(&mut self, gone: u64) -> Vec<Out> {
        let refs = self
            .people
            .values()
            .find(|p| p.present && p.established())
            .map(|p| p.add_refs_of(gone))
            .unwrap_or_default();
        if refs.is_empty() {
            self.problems
                .push(format!("no pending Add of {gone} to revoke"));
            return Vec::new();
        }
        let mut named = Vec::new();
        for r in &refs {
            named.extend(
                r.tls_serialize_detached()
                    .expect("a proposal ref serializes"),
            );
        }
        let payload = VLBytes::new(named)
            .tls_serialize_detached()
            .expect("the refs serialize");
        for p in self
            .people
            .values_mut()
            .filter(|p| p.present && p.established())
        {
            p.revoke(&payload);
        }
        if let Some(p) = self.people.get_mut(&gone) {
            p.present = false;
        }
        self.revoked += refs.len();
        let mut frame = vec![27, 1];
        frame.extend(payload);
        let mut out = vec![
            Out::Text(json!({"op": 13, "d": {"user_id": gone.to_string()}})),
            Out::Binary(frame),
        ];
        let nobody_left = match self.pending.as_mut() {
            Some(p) => {
                p.joiners.retain(|&j| j != gone);
                p.joiners.is_empty()
            }
            None => true,
        };
        if nobody_left {
            self.pending = None;
            out.extend(self.advance());
        }
        out
    }
}
