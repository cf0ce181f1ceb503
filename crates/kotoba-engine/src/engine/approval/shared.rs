//! The board's cards across processes: each card is kept in the shared store while it
//! waits, so any process sharing it lists the card and answers it (the page, the
//! terminal, a Discord button of another process); the answer is claimed in the store
//! once, and the process whose turn waits on the card takes it from there, woken by
//! PostgreSQL's NOTIFY or by its own look every second (docs/deploy.md).

use std::sync::Arc;
use std::time::Duration;

use super::{may_answer, AnswerError, Answerer, CardBoard};
use kotoba_core::protocol::{Card, CardAnswer};
use kotoba_store::Store;

/// How often a process looks for answers given elsewhere without being woken (SQLite
/// has no NOTIFY; a PostgreSQL listener may have been reconnecting).
const LOOK_EVERY: Duration = Duration::from_secs(1);

impl CardBoard {
    /// A board whose cards wait in `store` too, answerable from any process sharing it.
    pub fn with_store(store: Arc<Store>) -> CardBoard {
        CardBoard {
            store: Some(store),
            ..CardBoard::default()
        }
    }

    /// Take the answers other processes claimed for this board's cards, for as long as
    /// the board lives (needs a tokio runtime; without one, nothing is taken).
    pub fn watch(self: &Arc<Self>) {
        let Some(store) = self.store.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let board = Arc::downgrade(self);
        runtime.spawn(async move {
            let mut woken = store.listen_for_answers();
            loop {
                let look = tokio::time::sleep(LOOK_EVERY);
                match woken.as_mut() {
                    Some(rx) => tokio::select! {
                        got = rx.recv() => if got.is_none() { woken = None },
                        () = look => {}
                    },
                    None => look.await,
                }
                let Some(board) = board.upgrade() else {
                    return;
                };
                board.take_answers(&store).await;
            }
        });
    }

    /// Settle each card of this process that was answered in another.
    async fn take_answers(&self, store: &Store) {
        if self.open.is_empty() {
            return;
        }
        let answers = match store.answers_for_me().await {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!("cards: reading answers given elsewhere: {e}");
                return;
            }
        };
        for a in answers {
            if !self.open.contains_key(&a.request_id) {
                continue;
            }
            match serde_json::from_str::<CardAnswer>(&a.answer) {
                Ok(answer) => {
                    let _ = self.deliver(&a.request_id, (answer, a.by, a.via));
                }
                Err(e) => tracing::warn!("cards: an unreadable answer to {}: {e}", a.request_id),
            }
        }
    }

    /// Keep a card of this process in the store while it waits.
    pub(super) async fn keep_waiting(&self, card: &Card) {
        let Some(store) = &self.store else {
            return;
        };
        let kept = match serde_json::to_string(card) {
            Ok(json) => {
                let expires = i64::try_from(card.expires_at_ms).unwrap_or(i64::MAX);
                store
                    .card_waiting(&card.request_id, &card.session, &json, expires)
                    .await
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = kept {
            tracing::warn!(
                "cards: {} is answerable in this process only: {e}",
                card.request_id
            );
        }
    }

    /// A card of this process settled: it waits in the store no more.
    /// A settle may come from a drop, which cannot wait: the row goes on a task of its
    /// own, awaited before the process exits (`Store::finish_later`; with no runtime
    /// left, a restart forgets the cards of the dead).
    pub(super) fn forget_waiting(&self, request_id: &str) {
        let Some(store) = &self.store else {
            return;
        };
        let (later, request_id) = (store.clone(), request_id.to_string());
        store.write_later(async move {
            let store = later;
            if let Err(e) = store.card_settled(&request_id).await {
                tracing::warn!("cards: forgetting {request_id}: {e}");
            }
        });
    }

    /// Claim the one answer a card of this process gets: false when another process
    /// claimed it first (its answer is on its way here). When the store cannot say, or
    /// never kept the card, the answer given here stands.
    pub(super) async fn claim(
        &self,
        request_id: &str,
        answer: &CardAnswer,
        who: &Answerer,
    ) -> bool {
        let Some(store) = &self.store else {
            return true;
        };
        let Ok(json) = serde_json::to_string(answer) else {
            return true;
        };
        match store
            .claim_card_answer(request_id, &json, &who.name, &who.via)
            .await
        {
            Ok(true) => true,
            Ok(false) => !matches!(store.waiting_card(request_id).await, Ok(Some(w)) if w.answered),
            Err(e) => {
                tracing::warn!("cards: claiming the answer to {request_id}: {e}");
                true
            }
        }
    }

    /// The cards waiting in other processes that are still running (for one session, or
    /// all of them).
    pub(super) async fn waiting_elsewhere(&self, session: Option<&str>) -> Vec<Card> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let rows = match store.waiting_cards().await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!("cards: listing the cards of other processes: {e}");
                return Vec::new();
            }
        };
        let rows: Vec<_> = rows
            .into_iter()
            .filter(|w| w.owner != store.owner() && session.is_none_or(|s| w.session == s))
            .collect();
        if rows.is_empty() {
            return Vec::new();
        }
        let live = store.liveness(crate::children::is_live_kotoba).await;
        rows_into_cards(rows.into_iter().filter(|w| live.is_live(w.owner)).collect())
    }

    /// Card `request_id`, waiting in another process that is still running.
    pub(super) async fn card_elsewhere(&self, request_id: &str) -> Result<Card, AnswerError> {
        let store = self.store.as_ref().ok_or(AnswerError::Unknown)?;
        let waiting = store
            .waiting_card(request_id)
            .await
            .map_err(|e| AnswerError::StoreUnreachable(e.to_string()))?
            .filter(|w| w.owner != store.owner())
            .ok_or(AnswerError::Unknown)?;
        if !store
            .liveness(crate::children::is_live_kotoba)
            .await
            .is_live(waiting.owner)
        {
            return Err(AnswerError::Unknown);
        }
        if waiting.answered {
            return Err(AnswerError::AlreadySettled);
        }
        serde_json::from_str(&waiting.card).map_err(|_| AnswerError::Unknown)
    }

    /// Answer a card waiting in another process: the same checks as here, then the
    /// answer is claimed in the store, and that process is woken to take it.
    pub(super) async fn answer_elsewhere(
        &self,
        request_id: &str,
        answer: &CardAnswer,
        who: &Answerer,
    ) -> Result<(), AnswerError> {
        let card = self.card_elsewhere(request_id).await?;
        if let Some(problem) = answer.problem(&card) {
            return Err(AnswerError::Invalid(problem));
        }
        if !may_answer(&card.answerers, who) {
            return Err(AnswerError::NotYours);
        }
        let store = self.store.as_ref().ok_or(AnswerError::Unknown)?;
        let json = serde_json::to_string(answer)
            .map_err(|e| AnswerError::Invalid(format!("that answer cannot be kept: {e}")))?;
        match store
            .claim_card_answer(request_id, &json, &who.name, &who.via)
            .await
        {
            Ok(true) => {
                self.remember_settled(request_id);
                Ok(())
            }
            Ok(false) => Err(AnswerError::AlreadySettled),
            Err(e) => Err(AnswerError::StoreUnreachable(e.to_string())),
        }
    }
}

fn rows_into_cards(rows: Vec<kotoba_store::WaitingCard>) -> Vec<Card> {
    rows.into_iter()
        .filter_map(|w| serde_json::from_str(&w.card).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::super::{AnswerError, Answerer, AskEnd, CardBoard};
    use crate::engine::session::Sessions;
    use kotoba_core::protocol::{Answerers, Card, CardAnswer, CardKind, Decision, Risk};
    use kotoba_store::Store;

    fn card(id: &str) -> Card {
        Card {
            request_id: id.into(),
            session: "web:desk".into(),
            kind: CardKind::Approval,
            tool: "shell".into(),
            action: "touch x".into(),
            why: String::new(),
            risk: Risk::Exec,
            can_always: true,
            can_always_exact: true,
            family: None,
            no_always_reason: None,
            expires_at_ms: 0,
            window_secs: 0,
            answerers: Answerers::Owners {
                ids: vec![100],
                approvers: Vec::new(),
            },
            secret: false,
            can_edit: false,
            danger: None,
        }
    }

    fn person(id: &str, local: bool, via: &str) -> Answerer {
        Answerer {
            id: id.into(),
            name: format!("person {id}"),
            local,
            via: via.into(),
            holds: Vec::new(),
        }
    }

    /// Two processes' boards on one PostgreSQL; `None` without a test server.
    async fn two_boards() -> Option<(Arc<CardBoard>, Arc<CardBoard>, Arc<Store>)> {
        let (a, b) = kotoba_store::testing::two_live_processes().await?;
        let board_a = Arc::new(CardBoard::with_store(a.clone()));
        let board_b = Arc::new(CardBoard::with_store(b));
        board_a.watch();
        Some((board_a, board_b, a))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_answers_from_two_processes_at_once_settle_a_card_once_with_the_winners_answer() {
        let Some((a, b, store_a)) = two_boards().await else {
            return;
        };
        let session = Sessions::default().get_or_load("web:desk", &store_a).await;
        let _listening = session.subscribe();
        for round in 0..100 {
            let id = format!("race-{round}");
            let wait = a
                .post(&session, card(&id), Duration::from_secs(60))
                .await
                .unwrap();
            let (here, there) = (a.clone(), b.clone());
            let (i1, i2) = (id.clone(), id.clone());
            let answer_here = tokio::spawn(async move {
                here.answer(
                    &i1,
                    CardAnswer::of(Decision::Approve),
                    &person("100", false, "Discord"),
                )
                .await
            });
            let answer_there = tokio::spawn(async move {
                there
                    .answer(
                        &i2,
                        CardAnswer::of(Decision::Deny),
                        &person("local", true, "the web page"),
                    )
                    .await
            });
            let (r1, r2) = (answer_here.await.unwrap(), answer_there.await.unwrap());
            assert!(
                r1.is_ok() != r2.is_ok(),
                "exactly one answer counts: {r1:?} {r2:?}"
            );
            let loser = if r1.is_ok() { &r2 } else { &r1 };
            assert_eq!(loser, &Err(AnswerError::AlreadySettled));
            let end = tokio::time::timeout(Duration::from_secs(10), wait.wait())
                .await
                .expect("the card settles");
            let AskEnd::Decided { decision, via, .. } = end else {
                panic!("{end:?}");
            };
            let winner = if r1.is_ok() {
                (Decision::Approve, "Discord")
            } else {
                (Decision::Deny, "the web page")
            };
            assert_eq!((decision, via.as_str()), winner, "round {round}");
            assert!(b.all_open().await.is_empty(), "settled everywhere");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_claimed_here_is_handed_over_here_and_the_watcher_leaves_it_alone() {
        let Some((a, _b, store_a)) = two_boards().await else {
            return;
        };
        let session = Sessions::default().get_or_load("web:desk", &store_a).await;
        let _listening = session.subscribe();
        let wait = a
            .post(&session, card("mine"), Duration::from_secs(60))
            .await
            .unwrap();
        let me = person("local", true, "the terminal");
        let answer = CardAnswer::of(Decision::Approve);
        assert!(a.claim("mine", &answer, &me).await);
        // The watcher looks between the claim and the hand-over: not its answer to take.
        a.take_answers(&store_a).await;
        assert!(
            a.open.contains_key("mine"),
            "the watcher took this process's own answer"
        );
        assert_eq!(
            a.deliver("mine", (answer, me.name.clone(), me.via.clone())),
            Ok(())
        );
        let end = tokio::time::timeout(Duration::from_secs(5), wait.wait())
            .await
            .unwrap();
        assert!(matches!(end, AskEnd::Decided { ref via, .. } if via == "the terminal"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn another_process_lists_a_card_and_refuses_an_answer_its_surface_would_refuse() {
        let Some((a, b, store_a)) = two_boards().await else {
            return;
        };
        let session = Sessions::default().get_or_load("web:desk", &store_a).await;
        let _listening = session.subscribe();
        let wait = a
            .post(&session, card("c1"), Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(b.all_open().await.len(), 1);
        assert_eq!(b.open_cards("web:desk").await.len(), 1);
        assert!(b.open_cards("web:other").await.is_empty());
        let guest = person("200", false, "Discord");
        assert_eq!(b.card_for("c1", &guest).await, Err(AnswerError::NotYours));
        assert_eq!(
            b.answer("c1", CardAnswer::of(Decision::Approve), &guest)
                .await,
            Err(AnswerError::NotYours)
        );
        let mut edit = CardAnswer::of(Decision::Approve);
        edit.edited = Some("touch y".into());
        assert!(matches!(
            b.answer("c1", edit, &person("100", false, "Discord")).await,
            Err(AnswerError::Invalid(_))
        ));
        assert_eq!(
            b.answer("nope", CardAnswer::of(Decision::Approve), &guest)
                .await,
            Err(AnswerError::Unknown)
        );
        b.answer(
            "c1",
            CardAnswer::of(Decision::Approve),
            &person("100", false, "Discord"),
        )
        .await
        .unwrap();
        let end = tokio::time::timeout(Duration::from_secs(10), wait.wait())
            .await
            .unwrap();
        assert!(
            matches!(end, AskEnd::Decided { decision: Decision::Approve, ref by, .. } if by == "person 100")
        );
    }
}
