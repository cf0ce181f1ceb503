//! What was under way when Kotoba stopped: turns still running, approval cards still
//! waiting, executed rows with no outcome yet. Each is written before it starts and
//! removed (or completed) when it ends; whatever a killed Kotoba left open is closed at
//! the next start-up as cut or expired by the restart (docs/engine.md §6).

use super::db::{args, Dialect};
use super::{now_ms, Approver, Store, StoreError};

/// The line a turn that was running at the crash ends with in its transcript.
pub const CUT_TURN_LINE: &str = "(This turn was cut by a restart: Kotoba stopped before it \
     finished, and anything it was running was ended.)";
/// The detail of an executed row that never got its outcome.
pub(super) const CUT_RUN_DETAIL: &str =
    "cut by a restart: Kotoba stopped while it ran, so its outcome is unknown and it was ended";
/// The detail of an approval card that was still waiting.
pub(super) const EXPIRED_CARD_DETAIL: &str =
    "expired by a restart: the card was still waiting when Kotoba stopped; nothing ran";

/// What a start-up closed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Sessions whose running turn was closed as cut.
    pub turns: Vec<String>,
    /// Approval cards (inline or deferred) settled as expired.
    pub cards: usize,
    /// Executed rows closed as cut.
    pub runs: usize,
}

impl Recovered {
    /// Whether nothing was left open.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.cards == 0 && self.runs == 0
    }
}

impl Store {
    /// A turn starts in `session` with the person's line (`author`, `text`): the line
    /// stored and the turn marked as running, durably, in one round trip on PostgreSQL
    /// (one statement); the line's id and the mark's.
    pub async fn begin_turn(
        &self,
        session: &str,
        author: &str,
        text: &str,
    ) -> Result<(i64, i64), StoreError> {
        let at = now_ms();
        // One statement on PostgreSQL; on SQLite two, in one transaction: both or none.
        self.one_or_tx(async |c| match c.dialect() {
            Dialect::Postgres => {
                let row = c
                    .query_opt(
                        "WITH line AS (
                        INSERT INTO messages(session, role, author, text, hidden, at_ms)
                        VALUES (?1, 'user', ?2, ?3, 0, ?4) RETURNING id),
                     mark AS (
                        INSERT INTO inflight(kind, session, tool, action, risk, owner, at_ms)
                        VALUES ('turn', ?1, '', '', '', ?5, ?4) RETURNING id)
                     SELECT (SELECT id FROM line), (SELECT id FROM mark)",
                        args![session, author, text, at, self.owner()],
                    )
                    .await?;
                match row {
                    Some(r) => Ok((r.int(0)?, r.int(1)?)),
                    None => Err(StoreError::Column {
                        index: 0,
                        wanted: "the new rows' ids",
                    }),
                }
            }
            // One local connection: two statements, each durable as it returns.
            Dialect::Sqlite => Ok((
                c.insert(
                    "INSERT INTO messages(session, role, author, text, hidden, at_ms)
                     VALUES (?1, 'user', ?2, ?3, 0, ?4) RETURNING id",
                    args![session, author, text, at],
                )
                .await?,
                c.insert(
                    "INSERT INTO inflight(kind, session, tool, action, risk, owner, at_ms)
                     VALUES ('turn', ?1, '', '', '', ?2, ?3) RETURNING id",
                    args![session, self.owner(), at],
                )
                .await?,
            )),
        })
        .await
    }

    /// A turn of `session` ends with her `answer` (none when empty): her line stored and
    /// the running mark `mark` removed, in one round trip on PostgreSQL; her line's id
    /// (0 without an answer).
    pub async fn end_turn(
        &self,
        session: &str,
        answer: &str,
        mark: Option<i64>,
    ) -> Result<i64, StoreError> {
        let at = now_ms();
        let mark = mark.unwrap_or(0);
        self.one_or_tx(async |c| match (c.dialect(), answer.is_empty()) {
            (_, true) => {
                c.execute("DELETE FROM inflight WHERE id = ?1", args![mark])
                    .await?;
                Ok(0)
            }
            (Dialect::Postgres, false) => {
                c.insert(
                    "WITH gone AS (DELETE FROM inflight WHERE id = ?4)
                 INSERT INTO messages(session, role, author, text, hidden, at_ms)
                 VALUES (?1, 'assistant', 'kotoba', ?2, 0, ?3) RETURNING id",
                    args![session, answer, at, mark],
                )
                .await
            }
            (Dialect::Sqlite, false) => {
                let id = c
                    .insert(
                        "INSERT INTO messages(session, role, author, text, hidden, at_ms)
                     VALUES (?1, 'assistant', 'kotoba', ?2, 0, ?3) RETURNING id",
                        args![session, answer, at],
                    )
                    .await?;
                c.execute("DELETE FROM inflight WHERE id = ?1", args![mark])
                    .await?;
                Ok(id)
            }
        })
        .await
    }

    /// A turn starts in `session`; the id closes it.
    pub async fn open_turn(&self, session: &str) -> Result<i64, StoreError> {
        self.open_inflight("turn", session, "", "", "").await
    }

    /// An approval card is waiting (inline or for a deferred run); the id closes it.
    pub async fn open_card(
        &self,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Result<i64, StoreError> {
        self.open_inflight("card", session, tool, action, risk)
            .await
    }

    async fn open_inflight(
        &self,
        kind: &str,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Result<i64, StoreError> {
        self.run(async |c| {
            c.insert(
                "INSERT INTO inflight(kind, session, tool, action, risk, owner, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
                args![kind, session, tool, action, risk, self.owner(), now_ms()],
            )
            .await
        })
        .await
    }

    /// A turn or card ended while Kotoba was alive.
    pub async fn close_inflight(&self, id: i64) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute("DELETE FROM inflight WHERE id = ?1", args![id])
                .await
        })
        .await?;
        Ok(())
    }

    /// A command starts: its `executed` row is written now, with no outcome yet.
    pub async fn audit_started(
        &self,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
    ) -> Result<i64, StoreError> {
        self.run(async |c| {
            c.insert(
                "INSERT INTO audit_log(at_ms, session, tool, action, risk, approved, approver,
                                       detail, running, owner)
                 VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, 'running', 1, ?7) RETURNING id",
                args![
                    now_ms(),
                    session,
                    tool,
                    action,
                    risk,
                    Approver::Executed.as_str(),
                    self.owner()
                ],
            )
            .await
        })
        .await
    }

    /// The command ended: complete its row with the outcome (`executed` or
    /// `executed:failed`), or remove it when nothing reached the machine after all.
    pub async fn audit_finished(
        &self,
        id: i64,
        outcome: Option<(Approver, &str)>,
    ) -> Result<(), StoreError> {
        self.run(async |c| match outcome {
            Some((approver, detail)) => {
                c.execute(
                    "UPDATE audit_log SET approver = ?2, detail = ?3, running = 0 WHERE id = ?1",
                    args![id, approver.as_str(), detail],
                )
                .await
            }
            None => {
                c.execute(
                    "DELETE FROM audit_log WHERE id = ?1 AND running = 1",
                    args![id],
                )
                .await
            }
        })
        .await?;
        Ok(())
    }

    /// Close everything a Kotoba that is no longer running (`is_live(owner)` false) left
    /// open, in one transaction: a cut line in each running turn's transcript, an
    /// `expired` row for each waiting card, and each running executed row closed as
    /// `executed:failed`, cut by a restart.
    pub async fn recover(&self, is_live: impl Fn(i64) -> bool) -> Result<Recovered, StoreError> {
        self.tx(async |c| {
            let mut done = Recovered::default();
            let runs = c
                .query("SELECT id, owner FROM audit_log WHERE running = 1", &[])
                .await?;
            for r in runs {
                let (id, owner) = (r.int(0)?, r.int(1)?);
                if is_live(owner) {
                    continue;
                }
                c.execute(
                    "UPDATE audit_log SET approver = ?2, detail = ?3, running = 0 WHERE id = ?1",
                    args![id, Approver::ExecutedFailed.as_str(), CUT_RUN_DETAIL],
                )
                .await?;
                done.runs += 1;
            }
            let open = c
                .query(
                    "SELECT id, kind, session, tool, action, risk, owner FROM inflight ORDER BY id",
                    &[],
                )
                .await?;
            let at = now_ms();
            for r in open {
                if is_live(r.int(6)?) {
                    continue;
                }
                let session = r.text(2)?;
                if r.text(1)? == "turn" {
                    c.execute(
                        "INSERT INTO messages(session, role, author, text, hidden, at_ms)
                         VALUES (?1, 'assistant', 'kotoba', ?2, 0, ?3)",
                        args![&session, CUT_TURN_LINE, at],
                    )
                    .await?;
                    done.turns.push(session);
                } else {
                    c.execute(
                        "INSERT INTO audit_log(at_ms, session, tool, action, risk, approved,
                                               approver, detail)
                         VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7)",
                        args![
                            at,
                            &session,
                            r.text(3)?,
                            r.text(4)?,
                            r.text(5)?,
                            Approver::Expired.as_str(),
                            EXPIRED_CARD_DETAIL
                        ],
                    )
                    .await?;
                    done.cards += 1;
                }
                c.execute("DELETE FROM inflight WHERE id = ?1", args![r.int(0)?])
                    .await?;
            }
            Ok(done)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_a_dead_kotoba_left_open_is_closed_as_cut_or_expired_by_the_restart() {
        for db in crate::testing::each() {
            {
                let s = db.open().await;
                s.append_message("web:a", "user", "ann", "please run it", false)
                    .await
                    .unwrap();
                s.open_turn("web:a").await.unwrap();
                s.open_card("web:b", "shell", "rm x", "exec").await.unwrap();
                s.audit_started("web:a", "shell", "sleep 5", "exec")
                    .await
                    .unwrap();
                let done = s
                    .audit_started("web:a", "shell", "ls", "exec")
                    .await
                    .unwrap();
                s.audit_finished(done, Some((Approver::Executed, "exit 0")))
                    .await
                    .unwrap();
            }
            let s = db.open().await;
            // This process wrote the rows; pretend it is the Kotoba that died.
            let got = s.recover(|_| false).await.unwrap();
            assert_eq!(
                got,
                Recovered {
                    turns: vec!["web:a".into()],
                    cards: 1,
                    runs: 1
                }
            );
            let h = s.history("web:a", 10).await.unwrap();
            assert_eq!(h.last().unwrap().text, CUT_TURN_LINE);
            assert_eq!(h[0].text, "please run it");
            let rows = s.audit_rows(None, 10).await.unwrap();
            let cut = rows.iter().find(|r| r.action == "sleep 5").unwrap();
            assert_eq!(
                (cut.approver.as_str(), cut.detail.as_str()),
                ("executed:failed", CUT_RUN_DETAIL)
            );
            let ok = rows.iter().find(|r| r.action == "ls").unwrap();
            assert_eq!(
                (ok.approver.as_str(), ok.detail.as_str()),
                ("executed", "exit 0")
            );
            let card = rows.iter().find(|r| r.action == "rm x").unwrap();
            assert_eq!((card.approver.as_str(), card.approved), ("expired", false));
            // Closed once: a second start-up finds nothing.
            assert!(s.recover(|_| false).await.unwrap().is_empty());
        }
    }

    #[tokio::test]
    async fn a_live_kotobas_open_rows_are_left_alone_and_an_unstarted_run_leaves_no_row() {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.open_turn("web:a").await.unwrap();
            let run = s
                .audit_started("web:a", "shell", "sleep 5", "exec")
                .await
                .unwrap();
            assert!(s.recover(|_| true).await.unwrap().is_empty());
            s.audit_finished(run, None).await.unwrap();
            assert!(s.audit_rows(None, 10).await.unwrap().is_empty());
        }
    }
}
