//! A turn's step rows, kept beside its lines: each closed row is a hidden `step` line
//! (the record of what ran, never part of the model's transcript) holding the row as
//! the surfaces drew it — action, outcome, ending, result and its whole output (capped
//! by the tool, 16,000 characters at most). A deferred row is completed in place when
//! its card is answered. Surfaces redraw a finished turn from [`Store::shown`]: its
//! lines and its rows in the order they happened.

use kotoba_core::protocol::StepRow;

use super::db::args;
use super::{Store, StoreError, StoredMessage};

/// One entry of a conversation as a surface redraws it.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// A line someone said.
    Line(StoredMessage),
    /// A step row of a turn, closed.
    Step {
        /// Its line id (entries are in id order).
        id: i64,
        /// When it closed, unix milliseconds.
        at_ms: i64,
        /// The row as drawn.
        row: StepRow,
    },
}

impl Store {
    /// Keep one closed step row of a turn in `session`, with `text`, its short record
    /// (what a count of steps or an erase reads); its line id.
    pub async fn append_step(
        &self,
        session: &str,
        row: &StepRow,
        text: &str,
    ) -> Result<i64, StoreError> {
        let json = to_json(row);
        let at = super::now_ms();
        let rows = self
            .run(async |c| {
                c.query(
                    "INSERT INTO messages(session, role, author, text, hidden, at_ms, step_id, step_row)
                     VALUES (?1, 'step', ?2, ?3, 1, ?4, ?5, ?6) RETURNING id",
                    args![session, &row.tool, text, at, &row.id, &json],
                )
                .await
            })
            .await?;
        rows.first().map_or(Ok(0), |r| r.int(0))
    }

    /// The row `row.id` of `session` closed again (a deferred call ran, or was refused,
    /// after its turn): its kept row and record replaced. Whether it was there.
    pub async fn complete_step(
        &self,
        session: &str,
        row: &StepRow,
        text: &str,
    ) -> Result<bool, StoreError> {
        let json = to_json(row);
        let n = self
            .run(async |c| {
                c.execute(
                    "UPDATE messages SET step_row = ?1, text = ?2
                     WHERE session = ?3 AND role = 'step' AND step_id = ?4 AND step_row IS NOT NULL",
                    args![&json, text, session, &row.id],
                )
                .await
            })
            .await?;
        Ok(n > 0)
    }

    /// What a surface redraws of `session`: its last `limit` visible lines and the
    /// step rows among and after them, oldest first. A kept row that no longer reads as
    /// a row is left out.
    pub async fn shown(&self, session: &str, limit: usize) -> Result<Vec<Shown>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT id, role, author, text, at_ms, step_row FROM messages
                     WHERE session = ?1
                       AND (hidden = 0 OR step_row IS NOT NULL)
                       AND id >= COALESCE((SELECT MIN(id) FROM (
                             SELECT id FROM messages WHERE session = ?1 AND hidden = 0
                             ORDER BY id DESC LIMIT ?2) AS newest), 0)
                     ORDER BY id",
                    args![session, limit],
                )
                .await
            })
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let (id, at_ms) = (r.int(0)?, r.int(4)?);
            match r.opt_text(5)? {
                Some(json) => {
                    if let Ok(row) = serde_json::from_str::<StepRow>(&json) {
                        out.push(Shown::Step { id, at_ms, row });
                    }
                }
                None => out.push(Shown::Line(StoredMessage {
                    id,
                    role: r.text(1)?,
                    author: r.text(2)?,
                    text: r.text(3)?,
                    at_ms,
                })),
            }
        }
        Ok(out)
    }
}

/// A row as kept: its JSON (a `StepRow` always serialises).
fn to_json(row: &StepRow) -> String {
    serde_json::to_string(row).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use kotoba_core::protocol::{Outcome, Phase, StepKind};

    use super::*;

    fn row(id: &str, action: &str, outcome: Outcome, output: &str) -> StepRow {
        StepRow {
            id: id.into(),
            tool: "shell".into(),
            step_kind: StepKind::Shell,
            action: action.into(),
            phase: Phase::Done,
            outcome: Some(outcome),
            ending: None,
            result: Some(output.lines().next().unwrap_or_default().into()),
            full_output: Some(output.into()),
            clipped: false,
        }
    }

    #[tokio::test]
    async fn a_turns_rows_are_redrawn_between_its_line_and_her_answer_with_their_outcomes_and_outputs(
    ) {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.append_message("web:a", "user", "ann", "list and count", false)
                .await
                .unwrap();
            let ls = row("call_1", "$ ls", Outcome::Ok, "a.txt\nb.txt");
            let wc = row("call_2", "$ wc -l a.txt", Outcome::Failed, "no such file");
            s.append_step("web:a", &ls, "shell \"ls\" → Ok")
                .await
                .unwrap();
            s.append_step("web:a", &wc, "shell \"wc\" → Failed")
                .await
                .unwrap();
            // Another conversation's row stays there.
            s.append_step("web:b", &row("call_9", "$ pwd", Outcome::Ok, "/"), "pwd")
                .await
                .unwrap();
            s.append_message("web:a", "assistant", "kotoba", "Two files.", false)
                .await
                .unwrap();
            let shown = s.shown("web:a", 200).await.unwrap();
            let kinds: Vec<String> = shown
                .iter()
                .map(|e| match e {
                    Shown::Line(m) => format!("{}: {}", m.role, m.text),
                    Shown::Step { row, .. } => format!(
                        "row {} {:?} {}",
                        row.action,
                        row.outcome.unwrap(),
                        row.full_output.as_deref().unwrap()
                    ),
                })
                .collect();
            assert_eq!(
                kinds,
                [
                    "user: list and count",
                    "row $ ls Ok a.txt\nb.txt",
                    "row $ wc -l a.txt Failed no such file",
                    "assistant: Two files.",
                ],
                "{}",
                db.name
            );
            // The model's transcript has the lines only.
            assert_eq!(
                s.history("web:a", 200).await.unwrap().len(),
                2,
                "{}",
                db.name
            );
        }
    }

    #[tokio::test]
    async fn the_shown_window_is_the_last_lines_with_the_rows_among_and_after_them() {
        for db in crate::testing::each() {
            let s = db.open().await;
            for i in 0..3 {
                s.append_message("web:a", "user", "ann", &format!("ask {i}"), false)
                    .await
                    .unwrap();
                let r = row(&format!("c{i}"), &format!("$ step {i}"), Outcome::Ok, "ok");
                s.append_step("web:a", &r, "step").await.unwrap();
            }
            let shown = s.shown("web:a", 2).await.unwrap();
            let ids: Vec<String> = shown
                .iter()
                .map(|e| match e {
                    Shown::Line(m) => m.text.clone(),
                    Shown::Step { row, .. } => row.action.clone(),
                })
                .collect();
            assert_eq!(
                ids,
                ["ask 1", "$ step 1", "ask 2", "$ step 2"],
                "{}",
                db.name
            );
        }
    }

    #[tokio::test]
    async fn a_deferred_row_is_completed_in_place_once_its_card_is_answered() {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.append_message("web:a", "user", "ann", "make it", false)
                .await
                .unwrap();
            let pending = row("call_1", "$ make", Outcome::Pending, "waiting");
            s.append_step("web:a", &pending, "pending").await.unwrap();
            s.append_message("web:a", "assistant", "kotoba", "Asked.", false)
                .await
                .unwrap();
            let done = row("call_1", "$ make", Outcome::Ok, "built");
            assert!(s.complete_step("web:a", &done, "done").await.unwrap());
            let other = row("call_x", "$ make", Outcome::Ok, "built");
            assert!(!s.complete_step("web:a", &other, "done").await.unwrap());
            let shown = s.shown("web:a", 10).await.unwrap();
            let Shown::Step { row: kept, .. } = &shown[1] else {
                panic!("{shown:?}")
            };
            assert_eq!(kept.outcome, Some(Outcome::Ok), "{}", db.name);
            assert_eq!(kept.full_output.as_deref(), Some("built"), "{}", db.name);
            assert_eq!(shown.len(), 3, "{}", db.name);
        }
    }

    #[tokio::test]
    async fn forgetting_a_person_blanks_a_kept_row_that_quotes_them_even_as_escaped_json() {
        for db in crate::testing::each() {
            let s = db.open().await;
            let said = "my locker code is \"quokka 4471\"";
            s.append_lines(
                "discord:200",
                &[
                    ("user", "ann (7)", said, false),
                    ("assistant", "kotoba", "Noted.", false),
                    ("user", "bob (8)", "what did ann say about lockers?", false),
                ],
            )
            .await
            .unwrap();
            let grep = row(
                "c1",
                "$ grep locker notes.txt",
                Outcome::Ok,
                &format!("notes.txt: ann: {said}"),
            );
            s.append_step("discord:200", &grep, "shell \"grep\" → Ok")
                .await
                .unwrap();
            s.erase_person(7, &[]).await.unwrap();
            let shown = format!("{:?}", s.shown("discord:200", 50).await.unwrap());
            assert!(!shown.contains("quokka"), "{}: {shown}", db.name);
            let kept = crate::testing::raw(&s, async |c| {
                c.query(
                    "SELECT COUNT(*) FROM messages WHERE step_row IS NOT NULL",
                    &[],
                )
                .await
            })
            .await
            .unwrap()[0]
                .int(0)
                .unwrap();
            assert_eq!(kept, 0, "{}", db.name);
        }
    }
}
