//! Full-text search over past turns (session_search), over visible lines only, so a
//! hidden turn such as `__work_done__` is never found: FTS5 on SQLite, a `tsvector`
//! (websearch syntax, which reads the same quoted words and OR) on PostgreSQL.

use super::db::{args, Dialect};
use super::{rows_into, Store, StoreError};

/// One line a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// `user` or `assistant`.
    pub role: String,
    /// Who said it.
    pub author: String,
    /// What was said.
    pub text: String,
    /// When, unix milliseconds.
    pub at_ms: i64,
}

/// The words of `query` as an FTS5 expression: each word quoted (so no word is read as
/// an operator), all of them required (`and`) or any of them (`or`). `None` when the
/// query holds no word.
pub(super) fn fts_query(query: &str, any: bool) -> Option<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '_')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.replace('"', "")))
        .collect();
    if words.is_empty() {
        return None;
    }
    Some(words.join(if any { " OR " } else { " " }))
}

impl Store {
    /// The best `limit` visible lines of `session` matching every word of `query`, or,
    /// when no line holds them all, any of them; best first (bm25).
    pub async fn search_messages(
        &self,
        session: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>, StoreError> {
        for any in [false, true] {
            let Some(expr) = fts_query(query, any) else {
                return Ok(Vec::new());
            };
            let hits = self.search_expr(session, &expr, limit).await?;
            if !hits.is_empty() {
                return Ok(hits);
            }
        }
        Ok(Vec::new())
    }

    async fn search_expr(
        &self,
        session: &str,
        expr: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let limit = limit as i64;
        let rows = self
            .run(async |c| match c.dialect() {
                Dialect::Sqlite => {
                    c.query(
                        "SELECT m.role, m.author, m.text, m.at_ms FROM messages_fts
                 JOIN messages m ON m.id = messages_fts.rowid
                 WHERE messages_fts MATCH ?1 AND m.session = ?2 AND m.hidden = 0
                 ORDER BY bm25(messages_fts), m.id DESC LIMIT ?3",
                        args![expr, session, limit],
                    )
                    .await
                }
                Dialect::Postgres => {
                    c.query(
                        "SELECT m.role, m.author, m.text, m.at_ms
                 FROM messages m, websearch_to_tsquery('simple', ?1) q
                 WHERE m.tsv @@ q AND m.session = ?2 AND m.hidden = 0
                 ORDER BY ts_rank(m.tsv, q) DESC, m.id DESC LIMIT ?3",
                        args![expr, session, limit],
                    )
                    .await
                }
            })
            .await?;
        rows_into(rows, |r| {
            Ok(SearchHit {
                role: r.text(0)?,
                author: r.text(1)?,
                text: r.text(2)?,
                at_ms: r.int(3)?,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_are_quoted_so_none_is_read_as_an_operator() {
        assert_eq!(
            fts_query("NEAR the \"red\" OR kite*", false).as_deref(),
            Some("\"NEAR\" \"the\" \"red\" \"OR\" \"kite\"")
        );
        assert_eq!(fts_query("a b", true).as_deref(), Some("\"a\" OR \"b\""));
        assert_eq!(fts_query(" ?! ", false), None);
    }

    #[tokio::test]
    async fn a_search_never_finds_a_hidden_line_or_another_sessions_line() {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.append_message("s1", "user", "ann", "the blue kite flew", false)
                .await
                .unwrap();
            s.append_message("s1", "user", "system", "__work_done__ blue kite", true)
                .await
                .unwrap();
            s.append_message("s2", "user", "bob", "my blue kite", false)
                .await
                .unwrap();
            let hits = s.search_messages("s1", "blue kite", 5).await.unwrap();
            assert_eq!(hits.len(), 1);
            assert_eq!(hits[0].text, "the blue kite flew");
            assert!(s
                .search_messages("s1", "__work_done__", 5)
                .await
                .unwrap()
                .is_empty());
        }
    }

    #[tokio::test]
    async fn when_no_line_holds_every_word_any_word_is_enough() {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.append_message("s1", "user", "ann", "tea is lovely", false)
                .await
                .unwrap();
            let hits = s.search_messages("s1", "lovely coffee", 5).await.unwrap();
            assert_eq!(hits.len(), 1);
        }
    }
}
