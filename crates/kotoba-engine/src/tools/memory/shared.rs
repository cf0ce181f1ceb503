//! Her memory in the shared store (PostgreSQL): the same facts, topics and dates as the
//! Markdown files, one row each; and the export that writes any memory as those files
//! (`kotoba memory export`).

use std::collections::BTreeMap;
use std::path::Path;

use super::{normalize, with_new_index_line, write_atomic, Fact, MemoryStore, Written};
use kotoba_store::Store;

fn io(e: kotoba_store::StoreError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// Store one (already checked) fact under the topic `slug`, skipping a duplicate.
pub(super) async fn write(
    store: &Store,
    notebook: &str,
    fact: &str,
    slug: String,
    date: &str,
) -> std::io::Result<Written> {
    if store
        .memory_add(notebook, &slug, fact, &normalize(fact), date)
        .await
        .map_err(io)?
    {
        Ok(Written::Stored(slug))
    } else {
        Ok(Written::AlreadyKnown(slug))
    }
}

/// Every fact of `notebook` (only `topic`'s when set), newest first.
pub(super) async fn facts(
    store: &Store,
    notebook: &str,
    topic: Option<&str>,
) -> std::io::Result<Vec<Fact>> {
    let mut out: Vec<Fact> = store
        .memory_all(notebook, topic)
        .await
        .map_err(io)?
        .into_iter()
        .map(|r| Fact {
            date: r.date,
            topic: r.topic,
            text: r.text,
        })
        .collect();
    // Newest first by date; within a day the store's order (newest row first) stays.
    out.sort_by(|a, b| b.date.cmp(&a.date));
    Ok(out)
}

impl MemoryStore {
    /// Write every fact as the Markdown view into `dir`: `MEMORY.md` (the 50 newest)
    /// and `topics/<topic>.md` (each topic's facts, oldest first). How many facts and
    /// topics were written.
    pub async fn export(&self, dir: &Path) -> std::io::Result<(usize, usize)> {
        let facts = self.facts(None).await?;
        let mut index = String::new();
        for f in facts.iter().rev() {
            index = with_new_index_line(&index, &f.line());
        }
        let mut topics: BTreeMap<&str, Vec<&Fact>> = BTreeMap::new();
        for f in facts.iter().rev() {
            topics.entry(f.topic.as_str()).or_default().push(f);
        }
        write_atomic(&dir.join("MEMORY.md"), &index)?;
        for (topic, list) in &topics {
            let mut body = format!("# {topic}\n\n");
            for f in list {
                body.push_str(&format!("- {} {}\n", f.date, f.text));
            }
            write_atomic(&dir.join("topics").join(format!("{topic}.md")), &body)?;
        }
        Ok((facts.len(), topics.len()))
    }

    /// The Markdown folder of this memory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the facts live in a shared store (else in the Markdown folder).
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn with_a_shared_store_facts_live_there_and_export_writes_the_markdown_view() {
        let Some(url) = kotoba_store::testing::postgres_url() else {
            return;
        };
        let store = std::sync::Arc::new(Store::connect(&url).await.unwrap());
        let home = tempfile::tempdir().unwrap();
        let mem = MemoryStore::with_store(home.path(), Some(store.clone()));
        assert!(mem.is_shared());
        assert_eq!(
            mem.write("Ann plays the cello.", "Music", "2026-12-01")
                .await
                .unwrap(),
            Written::Stored("music".into())
        );
        assert_eq!(
            mem.write("ann plays the cello", "music", "2026-12-02")
                .await
                .unwrap(),
            Written::AlreadyKnown("music".into())
        );
        mem.write("The standup is at nine.", "work", "2026-12-02")
            .await
            .unwrap();
        assert!(
            !home.path().join("memory").exists(),
            "no file is written by a fact"
        );
        // Another process's memory on the same store sees the same facts.
        let other = MemoryStore::with_store(tempfile::tempdir().unwrap().path(), Some(store));
        let (found, _) = other.recall(Some("cello"), None).await.unwrap();
        assert_eq!(found[0].text, "Ann plays the cello.");
        let out = tempfile::tempdir().unwrap();
        assert_eq!(mem.export(out.path()).await.unwrap(), (2, 2));
        let index = std::fs::read_to_string(out.path().join("MEMORY.md")).unwrap();
        assert!(
            index.contains("- 2026-12-02 [work] The standup is at nine."),
            "{index}"
        );
        let music = std::fs::read_to_string(out.path().join("topics/music.md")).unwrap();
        assert_eq!(music, "# music\n\n- 2026-12-01 Ann plays the cello.\n");
        // Read back as a data folder's files, the export holds the same facts.
        let folder = tempfile::tempdir().unwrap();
        mem.export(&folder.path().join("memory")).await.unwrap();
        let files = MemoryStore::new(folder.path()).facts(None).await.unwrap();
        assert_eq!(files.len(), 2, "{files:?}");
    }
}
