//! Her memory in the shared store (with PostgreSQL): one row per fact with its notebook
//! (the owner's, `""`, or a person's, their Discord id), topic and date, so every process
//! remembers the same things. With SQLite her memory stays the Markdown files of the
//! data folder (tools/memory.rs); `kotoba memory export` writes this table as those files.

use super::db::args;
use super::{now_ms, Store, StoreError};

/// One remembered fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRow {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The topic's slug.
    pub topic: String,
    /// The fact.
    pub text: String,
}

impl Store {
    /// Remember `text` under `topic` in `notebook`; false when a fact with the same `key`
    /// (its words, normalised by the caller) is already there.
    pub async fn memory_add(
        &self,
        notebook: &str,
        topic: &str,
        text: &str,
        key: &str,
        date: &str,
    ) -> Result<bool, StoreError> {
        let changed = self
            .run(async |c| {
                c.execute(
                    "INSERT INTO memory_facts(notebook, topic, text, key, date, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(notebook, topic, key) DO NOTHING",
                    args![notebook, topic, text, key, date, now_ms()],
                )
                .await
            })
            .await?;
        Ok(changed == 1)
    }

    /// Every fact of `notebook`, newest first (only `topic`'s when it is set).
    pub async fn memory_all(
        &self,
        notebook: &str,
        topic: Option<&str>,
    ) -> Result<Vec<MemoryRow>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT date, topic, text FROM memory_facts
                 WHERE notebook = ?1 AND (CAST(?2 AS TEXT) IS NULL OR topic = ?2)
                 ORDER BY id DESC",
                    args![notebook, topic],
                )
                .await
            })
            .await?;
        rows.iter()
            .map(|r| {
                Ok(MemoryRow {
                    date: r.text(0)?,
                    topic: r.text(1)?,
                    text: r.text(2)?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_fact_is_kept_once_per_topic_and_read_back_newest_first() {
        for db in crate::testing::each() {
            let s = db.open().await;
            assert!(s
                .memory_add(
                    "",
                    "music",
                    "Ann plays the cello.",
                    "ann plays the cello",
                    "2026-12-01"
                )
                .await
                .unwrap());
            assert!(
                !s.memory_add(
                    "",
                    "music",
                    "ann plays the cello",
                    "ann plays the cello",
                    "2026-12-02"
                )
                .await
                .unwrap(),
                "{}",
                db.name
            );
            assert!(s
                .memory_add(
                    "",
                    "work",
                    "Ann plays the cello.",
                    "ann plays the cello",
                    "2026-12-02"
                )
                .await
                .unwrap());
            assert!(s
                .memory_add(
                    "",
                    "work",
                    "Ann starts at nine.",
                    "ann starts at nine",
                    "2026-12-03"
                )
                .await
                .unwrap());
            let all = s.memory_all("", None).await.unwrap();
            assert_eq!(all.len(), 3);
            assert_eq!(all[0].text, "Ann starts at nine.");
            let music = s.memory_all("", Some("music")).await.unwrap();
            assert_eq!(music.len(), 1);
            assert_eq!(music[0].date, "2026-12-01");
            // A person's notebook is apart: the same fact is theirs too, and neither
            // notebook sees the other's.
            assert!(s
                .memory_add(
                    "2",
                    "music",
                    "Ann plays the cello.",
                    "ann plays the cello",
                    "2026-12-04"
                )
                .await
                .unwrap());
            assert!(s
                .memory_add(
                    "2",
                    "pets",
                    "My cat is Miso.",
                    "my cat is miso",
                    "2026-12-04"
                )
                .await
                .unwrap());
            assert_eq!(
                s.memory_all("2", None).await.unwrap().len(),
                2,
                "{}",
                db.name
            );
            assert!(s
                .memory_all("", None)
                .await
                .unwrap()
                .iter()
                .all(|r| r.text != "My cat is Miso."));
            assert!(s.memory_all("3", None).await.unwrap().is_empty());
        }
    }
}
