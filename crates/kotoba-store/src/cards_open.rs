//! The approval cards waiting in every process that shares the store, and the answer
//! each one got: a card drawn in one process is listed and answered from any other's
//! page or terminal; the process whose turn waits on it reads the answer back, woken by
//! PostgreSQL's NOTIFY or by its own look every second (docs/deploy.md). An answer is
//! claimed once, by one conditional update, so two answers from two places never both
//! count.

use super::db::args;
use super::{now_ms, Store, StoreError};

/// The channel a claimed answer is announced on (PostgreSQL `NOTIFY`).
const CHANNEL: &str = "kotoba_cards";

/// One card waiting somewhere, as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingCard {
    /// The card's request id.
    pub request_id: String,
    /// The session whose turn drew it.
    pub session: String,
    /// The card as JSON (protocol `Card`).
    pub card: String,
    /// The process waiting on it ([`Store::owner`]).
    pub owner: i64,
    /// Whether someone answered it already.
    pub answered: bool,
}

/// An answer claimed for one of this process's cards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedAnswer {
    /// The card's request id.
    pub request_id: String,
    /// The answer as JSON (protocol `CardAnswer`).
    pub answer: String,
    /// Who gave it.
    pub by: String,
    /// Where they answered.
    pub via: String,
}

impl Store {
    /// A card of this process waits until `expires_ms` (epoch ms).
    pub async fn card_waiting(
        &self,
        request_id: &str,
        session: &str,
        card: &str,
        expires_ms: i64,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO cards_open(request_id, session, card, owner, expires_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(request_id) DO UPDATE SET session = excluded.session,
                   card = excluded.card, owner = excluded.owner,
                   expires_ms = excluded.expires_ms, answer = NULL, by_name = NULL, via = NULL,
                   claimed_by = NULL",
                args![request_id, session, card, self.owner(), expires_ms],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// A card settled (answered, expired, dismissed): it waits nowhere any more.
    pub async fn card_settled(&self, request_id: &str) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "DELETE FROM cards_open WHERE request_id = ?1",
                args![request_id],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The card `request_id`, if it still waits (answered or not) and has not expired.
    pub async fn waiting_card(&self, request_id: &str) -> Result<Option<WaitingCard>, StoreError> {
        let row = self
            .run(async |c| {
                c.query_opt(
                    "SELECT request_id, session, card, owner, answer IS NOT NULL FROM cards_open
                 WHERE request_id = ?1 AND expires_ms >= ?2",
                    args![request_id, now_ms()],
                )
                .await
            })
            .await?;
        row.map(|r| waiting_of(&r)).transpose()
    }

    /// Every card still waiting for an answer, in every process, soonest to expire first.
    pub async fn waiting_cards(&self) -> Result<Vec<WaitingCard>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT request_id, session, card, owner, answer IS NOT NULL FROM cards_open
                 WHERE answer IS NULL AND expires_ms >= ?1 ORDER BY expires_ms",
                    args![now_ms()],
                )
                .await
            })
            .await?;
        rows.iter().map(waiting_of).collect()
    }

    /// Claim the one answer card `request_id` gets: true when this is it (the card still
    /// waits, unanswered and unexpired). The process waiting on it is woken.
    pub async fn claim_card_answer(
        &self,
        request_id: &str,
        answer: &str,
        by: &str,
        via: &str,
    ) -> Result<bool, StoreError> {
        let shared = self.is_shared();
        self.tx(async |c| {
            let won = c
                .execute(
                    "UPDATE cards_open SET answer = ?2, by_name = ?3, via = ?4, claimed_by = ?6
                 WHERE request_id = ?1 AND answer IS NULL AND expires_ms >= ?5",
                    args![request_id, answer, by, via, now_ms(), self.owner()],
                )
                .await?
                == 1;
            if won && shared {
                // Delivered when the transaction commits, to every listening process.
                c.execute("SELECT pg_notify(?1, ?2)", args![CHANNEL, request_id])
                    .await?;
            }
            Ok(won)
        })
        .await
    }

    /// The answers other processes claimed for this process's cards that it has not
    /// settled yet (an answer claimed here is handed over here, not read back).
    pub async fn answers_for_me(&self) -> Result<Vec<ClaimedAnswer>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT request_id, answer, by_name, via FROM cards_open
                 WHERE owner = ?1 AND answer IS NOT NULL AND claimed_by != ?1",
                    args![self.owner()],
                )
                .await
            })
            .await?;
        rows.iter()
            .map(|r| {
                Ok(ClaimedAnswer {
                    request_id: r.text(0)?,
                    answer: r.text(1)?,
                    by: r.text(2)?,
                    via: r.text(3)?,
                })
            })
            .collect()
    }

    /// A wake-up each time an answer is claimed in another process (PostgreSQL); `None`
    /// on SQLite, where the waiting process looks for itself.
    pub fn listen_for_answers(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<()>> {
        self.listen(CHANNEL)
    }

    /// Forget the cards of processes no longer running (`is_live(owner)` false); how many.
    pub async fn forget_cards_of_the_dead(
        &self,
        is_live: impl Fn(i64) -> bool,
    ) -> Result<usize, StoreError> {
        let owners = self
            .run(async |c| c.query("SELECT DISTINCT owner FROM cards_open", &[]).await)
            .await?;
        let mut gone = 0;
        for r in owners {
            let owner = r.int(0)?;
            if !is_live(owner) {
                gone += self
                    .run(async |c| {
                        c.execute("DELETE FROM cards_open WHERE owner = ?1", args![owner])
                            .await
                    })
                    .await?;
            }
        }
        Ok(gone as usize)
    }
}

fn waiting_of(r: &super::db::Row) -> Result<WaitingCard, StoreError> {
    Ok(WaitingCard {
        request_id: r.text(0)?,
        session: r.text(1)?,
        card: r.text(2)?,
        owner: r.int(3)?,
        answered: r.flag(4)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_card_waiting_in_one_process_is_listed_by_another_and_answered_once() {
        for db in crate::testing::each() {
            let (a, b) = (db.open().await, db.open().await);
            let later = now_ms() + 60_000;
            a.card_waiting("r1", "web:x", "{\"card\":1}", later)
                .await
                .unwrap();
            let seen = b.waiting_cards().await.unwrap();
            assert_eq!(seen.len(), 1, "{}", db.name);
            assert_eq!(seen[0].owner, a.owner());
            assert_eq!(seen[0].card, "{\"card\":1}");
            assert!(b
                .claim_card_answer("r1", "{}", "ann", "the web page")
                .await
                .unwrap());
            assert!(
                !a.claim_card_answer("r1", "{}", "bob", "Discord")
                    .await
                    .unwrap(),
                "the second answer does not count"
            );
            assert!(
                b.waiting_cards().await.unwrap().is_empty(),
                "answered: not listed"
            );
            assert!(b.waiting_card("r1").await.unwrap().unwrap().answered);
            let got = a.answers_for_me().await.unwrap();
            if db.name == "postgres" {
                assert!(b.answers_for_me().await.unwrap().is_empty(), "not b's card");
                assert_eq!(
                    got,
                    [ClaimedAnswer {
                        request_id: "r1".into(),
                        answer: "{}".into(),
                        by: "ann".into(),
                        via: "the web page".into()
                    }]
                );
            } else {
                // Two SQLite stores of one process are one owner (its pid): an answer
                // claimed by the owner itself is handed over in place, never read back.
                assert!(got.is_empty());
            }
            a.card_waiting("r3", "web:x", "{}", later).await.unwrap();
            assert!(a
                .claim_card_answer("r3", "{}", "me", "the terminal")
                .await
                .unwrap());
            assert!(
                a.answers_for_me()
                    .await
                    .unwrap()
                    .iter()
                    .all(|c| c.request_id != "r3"),
                "an answer claimed here is not read back here"
            );
            a.card_settled("r3").await.unwrap();
            a.card_settled("r1").await.unwrap();
            assert!(a.answers_for_me().await.unwrap().is_empty());
            assert!(b.waiting_card("r1").await.unwrap().is_none());
        }
    }

    #[tokio::test]
    async fn an_expired_card_is_not_listed_nor_answerable_and_a_dead_processes_cards_are_forgotten()
    {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.card_waiting("old", "web:x", "{}", now_ms() - 1)
                .await
                .unwrap();
            assert!(s.waiting_cards().await.unwrap().is_empty(), "{}", db.name);
            assert!(s.waiting_card("old").await.unwrap().is_none());
            assert!(!s.claim_card_answer("old", "{}", "ann", "x").await.unwrap());
            s.card_waiting("new", "web:x", "{}", now_ms() + 60_000)
                .await
                .unwrap();
            assert_eq!(s.forget_cards_of_the_dead(|_| true).await.unwrap(), 0);
            assert_eq!(s.forget_cards_of_the_dead(|_| false).await.unwrap(), 2);
            assert!(s.waiting_cards().await.unwrap().is_empty());
        }
    }

    #[tokio::test]
    async fn a_claimed_answer_wakes_a_process_listening_on_postgresql() {
        let Some(url) = crate::testing::postgres_url() else {
            return;
        };
        let (a, b) = (
            Store::connect(&url).await.unwrap(),
            Store::connect(&url).await.unwrap(),
        );
        {
            let mut woken = a.listen_for_answers().expect("PostgreSQL listens");
            // The first wake says the connection is up (and to look once).
            tokio::time::timeout(std::time::Duration::from_secs(10), woken.recv())
                .await
                .unwrap();
            a.card_waiting("r2", "web:x", "{}", now_ms() + 60_000)
                .await
                .unwrap();
            assert!(b.claim_card_answer("r2", "{}", "ann", "x").await.unwrap());
            tokio::time::timeout(std::time::Duration::from_secs(5), woken.recv())
                .await
                .expect("the answer wakes the listener")
                .unwrap();
        }
    }
}
