//! A long conversation's summaries (docs/engine.md, "Long conversations"): when the
//! oldest lines of a session are summarised, the summary is stored with the range of
//! line ids it covers, so a restart resumes from summary + the lines after it. The
//! lines themselves are never deleted: they stay searchable.

use super::db::args;
use super::{now_ms, Store, StoreError};

/// The summary a session's conversation resumes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The first line it covers (its first compaction's first line).
    pub from_id: i64,
    /// The last line it covers: the conversation resumes with the lines after it.
    pub upto_id: i64,
    /// The handoff summary itself.
    pub text: String,
}

impl Store {
    /// Save a summary of `session`'s lines `from_id..=upto_id`; from now on it is the
    /// one the session resumes from. Committed before it returns.
    pub async fn save_summary(&self, session: &str, summary: &Summary) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO summaries(session, from_id, upto_id, text, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                args![
                    session,
                    summary.from_id,
                    summary.upto_id,
                    &summary.text,
                    now_ms()
                ],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// A conversation as it resumes, in one round trip: its newest summary and the last
    /// `limit` visible lines after it, oldest first.
    pub async fn conversation(
        &self,
        session: &str,
        limit: usize,
    ) -> Result<(Option<Summary>, Vec<super::StoredMessage>), StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .run(async |c| {
                c.query(
                "SELECT CAST(0 AS BIGINT), id, from_id, upto_id, '', '', text, CAST(0 AS BIGINT)
                   FROM (SELECT id, from_id, upto_id, text FROM summaries WHERE session = ?1
                         ORDER BY id DESC LIMIT 1) s
                 UNION ALL
                 SELECT CAST(1 AS BIGINT), id, CAST(0 AS BIGINT), CAST(0 AS BIGINT), role, author,
                        text, at_ms
                   FROM (SELECT id, role, author, text, at_ms FROM messages
                         WHERE session = ?1 AND hidden = 0
                           AND id > COALESCE((SELECT upto_id FROM summaries WHERE session = ?1
                                              ORDER BY id DESC LIMIT 1), 0)
                         ORDER BY id DESC LIMIT ?2) m",
                args![session, limit],
            ).await
            })
            .await?;
        let mut summary = None;
        let mut lines = Vec::new();
        for r in rows {
            if r.int(0)? == 0 {
                summary = Some(Summary {
                    from_id: r.int(2)?,
                    upto_id: r.int(3)?,
                    text: r.text(6)?,
                });
            } else {
                lines.push(super::StoredMessage {
                    id: r.int(1)?,
                    role: r.text(4)?,
                    author: r.text(5)?,
                    text: r.text(6)?,
                    at_ms: r.int(7)?,
                });
            }
        }
        lines.sort_by_key(|m| m.id);
        Ok((summary, lines))
    }

    /// The newest summary of `session`, if it was ever compacted.
    pub async fn summary(&self, session: &str) -> Result<Option<Summary>, StoreError> {
        let row = self
            .run(async |c| {
                c.query_opt(
                    "SELECT from_id, upto_id, text FROM summaries WHERE session = ?1
                 ORDER BY id DESC LIMIT 1",
                    args![session],
                )
                .await
            })
            .await?;
        row.map(|r| {
            Ok(Summary {
                from_id: r.int(0)?,
                upto_id: r.int(1)?,
                text: r.text(2)?,
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_summary_survives_reopening_and_the_lines_it_covers_stay_searchable() {
        for db in crate::testing::each() {
            let ids = {
                let s = db.open().await;
                let ids = s
                    .append_lines(
                        "c",
                        &[
                            ("user", "ann", "my locker code is 4471", false),
                            ("assistant", "kotoba", "noted", false),
                            ("user", "ann", "thanks", false),
                        ],
                    )
                    .await
                    .unwrap();
                let summary = Summary {
                    from_id: ids[0],
                    upto_id: ids[1],
                    text: "Ann's locker code is 4471.".into(),
                };
                s.save_summary("c", &summary).await.unwrap();
                ids
            };
            let s = db.open().await;
            let summary = s.summary("c").await.unwrap().unwrap();
            assert_eq!((summary.from_id, summary.upto_id), (ids[0], ids[1]));
            let after = s.lines_after("c", summary.upto_id, 100).await.unwrap();
            assert_eq!(
                after.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
                ["thanks"]
            );
            assert_eq!(s.search_messages("c", "locker", 5).await.unwrap().len(), 1);
            assert!(s.summary("other").await.unwrap().is_none());
        }
    }

    #[tokio::test]
    async fn a_fresh_conversation_leaves_the_old_summary_behind() {
        for db in crate::testing::each() {
            let s = db.open().await;
            let id = s
                .append_message("c", "user", "ann", "hello", false)
                .await
                .unwrap();
            let summary = Summary {
                from_id: id,
                upto_id: id,
                text: "Ann said hello.".into(),
            };
            s.save_summary("c", &summary).await.unwrap();
            s.archive_session("c").await.unwrap();
            assert!(s.summary("c").await.unwrap().is_none());
            assert!(s.history("c", 10).await.unwrap().is_empty());
        }
    }
}
