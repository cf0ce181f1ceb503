//! The approval card board: puts a card on a session's bus, waits for an answer within
//! its window, and settles it exactly once (decided, expired, dismissed, cancelled).
//! Until the gate issue lands every exec call asks here; nobody listening → unreachable.

pub mod policy;
mod shared;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dashmap::DashMap;
use tokio::sync::oneshot;

use kotoba_core::protocol::{Answerers, Card, CardAnswer, CardSettlement, Decision, Ending, Frame};
use kotoba_store::now_ms;

use super::session::Session;

/// Who is answering a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answerer {
    /// Their id on the surface (a Discord user id, "local" for the terminal).
    pub id: String,
    /// Display name for "who decided what".
    pub name: String,
    /// True when the person is the owner by construction (the terminal, the page behind
    /// its login): they may answer any card waiting for the owner, in any session.
    pub local: bool,
    /// Where they answer from, as every copy of the settled card names it ("Discord",
    /// "the web page", "the terminal", "voice").
    pub via: String,
    /// What they hold where the card is (their permission names, as their surface read
    /// them at the press): an [`Answerers::Holders`] card checks them. Empty elsewhere.
    pub holds: Vec<String>,
}

/// Why an answer changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The card settled already (answered, expired or dismissed).
    #[error("that card was already settled; nothing changed")]
    AlreadySettled,
    /// No such card.
    #[error("there is no card with that id")]
    Unknown,
    /// The answerer may not answer this card.
    #[error("that card is not yours to answer")]
    NotYours,
    /// The answer does not fit the card (an edit of a card that cannot be edited…).
    #[error("{0}")]
    Invalid(String),
    /// The card waits in another process and the shared store could not be reached to
    /// read it or to hand it the answer; nothing changed, and answering again may work.
    #[error("the card waits in another process and the store did not answer ({0}); nothing changed, try again")]
    StoreUnreachable(String),
}

/// How an ask ended, from the asker's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskEnd {
    /// A person decided.
    Decided {
        /// What.
        decision: Decision,
        /// Who.
        by: String,
        /// Where they answered.
        via: String,
        /// Why they said no, in their words.
        reason: Option<String>,
        /// The line as they edited it before approving.
        edited: Option<String>,
        /// How long an "always" lasts (seconds; none until revoked).
        for_s: Option<u64>,
    },
    /// Nobody could be asked (no listener); no card was shown.
    Unreachable,
    /// The card expired unanswered.
    Expired,
    /// The card went away when the person spoke over it.
    Dismissed,
}

impl AskEnd {
    /// The refusal ending, when the action must not run.
    pub fn ending(&self) -> Option<Ending> {
        match self {
            AskEnd::Decided { decision, .. } if decision.approves() => None,
            AskEnd::Decided { .. } => Some(Ending::Declined),
            AskEnd::Unreachable => Some(Ending::Unreachable),
            AskEnd::Expired => Some(Ending::Unanswered),
            AskEnd::Dismissed => Some(Ending::Dismissed),
        }
    }
}

/// The sentence the model is handed for each refusal ending.
pub fn refusal_sentence(ending: Ending, tool: &str, window: Duration) -> String {
    match ending {
        Ending::Declined => format!(
            "The person DECLINED '{tool}' on the approval card, so NOTHING ran and there is no result. \
             Tell them, in the first person and in their language, that you held off because they said no. \
             Do not retry it or route around it."
        ),
        Ending::Unanswered => format!(
            "The approval card for '{tool}' EXPIRED unanswered after {} s: nobody decided and NOTHING ran. \
             Do not say they declined it and do not say it ran; tell them the card timed out and nothing happened.",
            window.as_secs()
        ),
        Ending::Unreachable => format!(
            "'{tool}' needs a person's approval, but nobody could be asked (no one is watching this conversation \
             to answer a card), so NOTHING ran and there is no result. Tell them plainly it did not run and why."
        ),
        Ending::Dismissed => format!(
            "The approval card for '{tool}' went away when the person spoke over it, so NOTHING ran. \
             Do not say it ran or that they declined; answer what they just said."
        ),
        Ending::Policy => format!("'{tool}' was refused before it started, so NOTHING ran."),
    }
}

/// What an answer carries: the answer, who gave it, and where.
type Reply = (CardAnswer, String, String);

struct Pending {
    card: Card,
    tx: oneshot::Sender<Reply>,
}

/// Every open card of the process.
#[derive(Default)]
pub struct CardBoard {
    /// The cards this process waits on, by request id, with where their answer goes.
    open: DashMap<String, Pending>,
    /// The ids settled lately, so a late answer hears "already settled", not "unknown".
    settled: Mutex<VecDeque<String>>,
    /// The store every process of the bot shares: each card is kept there while it
    /// waits, so another process lists and answers it, and each answer is claimed there
    /// once ([`CardBoard::with_store`]). None for a board of its own (unit tests).
    store: Option<Arc<kotoba_store::Store>>,
}

const SETTLED_MEMORY: usize = 4096;

impl CardBoard {
    fn remember_settled(&self, id: &str) {
        let mut s = match self.settled.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        s.push_back(id.to_string());
        while s.len() > SETTLED_MEMORY {
            s.pop_front();
        }
    }

    fn was_settled(&self, id: &str) -> bool {
        match self.settled.lock() {
            Ok(g) => g.iter().any(|s| s == id),
            Err(p) => p.into_inner().iter().any(|s| s == id),
        }
    }

    /// Every card still open, in any session and any process sharing the store (the
    /// owner's view across surfaces), soonest to expire first.
    pub async fn all_open(&self) -> Vec<Card> {
        let mut cards: Vec<Card> = self.open.iter().map(|p| p.card.clone()).collect();
        cards.extend(self.waiting_elsewhere(None).await);
        cards.sort_by_key(|c| c.expires_at_ms);
        cards
    }

    /// The cards still open for a session, here or in another process.
    pub async fn open_cards(&self, session: &str) -> Vec<Card> {
        let mut cards: Vec<Card> = self
            .open
            .iter()
            .filter(|p| p.card.session == session)
            .map(|p| p.card.clone())
            .collect();
        cards.extend(self.waiting_elsewhere(Some(session)).await);
        cards
    }

    /// Show `card` on the session's bus and wait up to `window` for an answer. With no
    /// listener nothing is shown and the ask is unreachable. Dropping the future (the
    /// turn was cut) settles the card as dismissed.
    pub async fn ask(
        self: &Arc<Self>,
        session: &Arc<Session>,
        card: Card,
        window: Duration,
    ) -> AskEnd {
        match self.post(session, card, window).await {
            Some(wait) => wait.wait().await,
            None => AskEnd::Unreachable,
        }
    }

    /// Show `card` now and hand back the wait, which may outlive the caller (a deferred
    /// runner). `None` when nobody listens: nothing is shown.
    pub async fn post(
        self: &Arc<Self>,
        session: &Arc<Session>,
        mut card: Card,
        window: Duration,
    ) -> Option<CardWait> {
        if !session.has_listener() {
            return None;
        }
        card.window_secs = window.as_secs();
        card.expires_at_ms = (now_ms().max(0) as u64).saturating_add(window.as_millis() as u64);
        let id = card.request_id.clone();
        let (tx, rx) = oneshot::channel();
        self.open.insert(
            id.clone(),
            Pending {
                card: card.clone(),
                tx,
            },
        );
        self.keep_waiting(&card).await;
        session.emit(None, Frame::Card(Box::new(card)));
        Some(CardWait {
            board: self.clone(),
            session: session.clone(),
            id,
            rx: Some(rx),
            window,
            armed: true,
        })
    }

    fn settle(&self, session: &Session, id: &str, settlement: CardSettlement) {
        self.open.remove(id);
        self.remember_settled(id);
        self.forget_waiting(id);
        session.emit(
            None,
            Frame::CardSettled {
                request_id: id.to_string(),
                settlement,
            },
        );
    }

    /// Answer a card with everything a person may say: a decision, a reason for a no,
    /// an edited line, how long an "always" lasts, or a question's text. Refused (and
    /// nothing changes) for someone who may not answer it, for a card already settled,
    /// for an unknown id, or for an answer that does not fit the card.
    pub async fn answer(
        &self,
        request_id: &str,
        answer: CardAnswer,
        who: &Answerer,
    ) -> Result<(), AnswerError> {
        // The map's entry is let go before any await.
        let here = self.open.get(request_id).map(|p| {
            answer
                .problem(&p.card)
                .map_or_else(|| Ok(may_answer(&p.card.answerers, who)), Err)
        });
        let allowed = match here {
            None if self.was_settled(request_id) => return Err(AnswerError::AlreadySettled),
            None => return self.answer_elsewhere(request_id, &answer, who).await,
            Some(Err(problem)) => return Err(AnswerError::Invalid(problem)),
            Some(Ok(allowed)) => allowed,
        };
        if !allowed {
            return Err(AnswerError::NotYours);
        }
        if !self.claim(request_id, &answer, who).await {
            return Err(AnswerError::AlreadySettled);
        }
        self.deliver(request_id, (answer, who.name.clone(), who.via.clone()))
    }

    /// Hand an answer to the wait of card `request_id`: the one place a card of this
    /// process is settled by an answer, given here or claimed in another process.
    fn deliver(&self, request_id: &str, reply: Reply) -> Result<(), AnswerError> {
        let Some((_, pending)) = self.open.remove(request_id) else {
            return Err(AnswerError::AlreadySettled);
        };
        self.remember_settled(request_id);
        pending
            .tx
            .send(reply)
            .map_err(|_| AnswerError::AlreadySettled)
    }

    /// The open card `request_id` when `who` may answer it (a surface checks before it
    /// opens a form for the answer); the same refusal an answer would get otherwise.
    pub async fn card_for(&self, request_id: &str, who: &Answerer) -> Result<Card, AnswerError> {
        let here = self
            .open
            .get(request_id)
            .map(|p| may_answer(&p.card.answerers, who).then(|| p.card.clone()));
        match here {
            None if self.was_settled(request_id) => Err(AnswerError::AlreadySettled),
            None => {
                let card = self.card_elsewhere(request_id).await?;
                if may_answer(&card.answerers, who) {
                    Ok(card)
                } else {
                    Err(AnswerError::NotYours)
                }
            }
            Some(Some(card)) => Ok(card),
            Some(None) => Err(AnswerError::NotYours),
        }
    }
}

/// Whether `who` may answer a card for `answerers`: the owner at their own surface
/// (terminal, page) answers any card; on Discord, the card's owners, and for a carded
/// tool's card also whoever holds what it declared (`who.holds`).
fn may_answer(answerers: &Answerers, who: &Answerer) -> bool {
    let held =
        |name: &String| name == crate::tools::ASKER_ALONE || who.holds.iter().any(|h| h == name);
    // One of the owners, by their Discord user id (a local answerer's id is no number).
    let owner = |ids: &[u64]| who.id.parse::<u64>().is_ok_and(|id| ids.contains(&id));
    who.local
        || match answerers {
            Answerers::Local => false,
            Answerers::Owners { ids, approvers } => owner(ids) || is_approver(approvers, who),
            Answerers::Holders {
                owners,
                asker,
                asker_needs,
                anyone_with,
                approvers,
                ..
            } => {
                owner(owners)
                    || is_approver(approvers, who)
                    || anyone_with
                        .iter()
                        .any(|n| n != crate::tools::ASKER_ALONE && held(n))
                    || (&who.id == asker && !asker_needs.is_empty() && asker_needs.iter().all(held))
            }
        }
}

/// Whether `who` is one of `approvers`: `user:<id>` is that person, `role:<id>` anyone
/// holding that role where they answer (`role:<id>` among what they hold), a bare id
/// either.
pub(crate) fn is_approver(approvers: &[String], who: &Answerer) -> bool {
    approvers.iter().any(|a| {
        let (kind, id) = a.split_once(':').unwrap_or(("", a.as_str()));
        let as_user = kind != "role" && id == who.id;
        let as_role = kind != "user"
            && who
                .holds
                .iter()
                .any(|h| h.strip_prefix("role:") == Some(id));
        !id.is_empty() && (as_user || as_role)
    })
}

/// A card on screen, waiting for its answer. Dropped unsettled, it settles dismissed.
pub struct CardWait {
    board: Arc<CardBoard>,
    session: Arc<Session>,
    id: String,
    rx: Option<oneshot::Receiver<Reply>>,
    window: Duration,
    armed: bool,
}

impl CardWait {
    /// The card's request id.
    pub fn request_id(&self) -> &str {
        &self.id
    }

    /// Wait for the answer, the expiry, or the card's removal.
    pub async fn wait(self) -> AskEnd {
        self.wait_reply().await.0
    }

    /// Like [`CardWait::wait`], also handing back typed text (input cards).
    pub async fn wait_reply(mut self) -> (AskEnd, Option<String>) {
        let (end, text) = match self.rx.take() {
            None => (AskEnd::Dismissed, None),
            Some(rx) => tokio::select! {
                answer = rx => match answer {
                    Ok((answer, by, via)) => (
                        AskEnd::Decided {
                            decision: answer.decision,
                            by,
                            via,
                            reason: answer.reason.filter(|r| !r.trim().is_empty()),
                            edited: answer.edited,
                            for_s: answer.for_s.filter(|s| *s > 0),
                        },
                        answer.text,
                    ),
                    Err(_) => (AskEnd::Dismissed, None),
                },
                _ = tokio::time::sleep(self.window) => (AskEnd::Expired, None),
            },
        };
        self.armed = false;
        let settlement = match &end {
            AskEnd::Decided {
                decision, by, via, ..
            } => CardSettlement::Decided {
                decision: *decision,
                by: by.clone(),
                via: via.clone(),
            },
            AskEnd::Expired => CardSettlement::Expired,
            _ => CardSettlement::Dismissed,
        };
        self.board.settle(&self.session, &self.id, settlement);
        (end, text)
    }
}

impl Drop for CardWait {
    fn drop(&mut self) {
        if self.armed {
            self.board
                .settle(&self.session, &self.id, CardSettlement::Dismissed);
        }
    }
}
