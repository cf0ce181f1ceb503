//! Forget a person (docs/discord.md, "Forget me"): everything the store keeps about one
//! Discord user, erased in one transaction. Their DM conversations and their own
//! conversations in shared channels go whole; their lines in server conversations become
//! [`REMOVED`]; the facts about them or told by them, their notebook's rows and their
//! reminders are deleted; a step row, an answer or an audit row quoting what was erased
//! is blanked; the summaries of every conversation they were in are dropped, to be
//! rebuilt from what is left. Then the bytes go too: SQLite's full-text index is rebuilt
//! and the file vacuumed (with `secure_delete` on), PostgreSQL's tables vacuumed.

use std::collections::BTreeSet;

use super::conn::Conn;
use super::db::{args, Dialect, Val};
use super::seen::as_i64;
use super::{Store, StoreError};

/// What a removed line of a server conversation says instead.
pub const REMOVED: &str = "[removed at their request]";

/// The shortest erased text searched for in other rows (a shorter one would blank rows
/// that merely share a common word).
const QUOTE_MIN_CHARS: usize = 8;

/// What an erase removed, counted (never what it said).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Erased {
    /// Every conversation it changed or removed: loaded ones are read again.
    pub sessions: Vec<String>,
    /// Conversations removed whole (DMs, their own in a shared channel).
    pub conversations: usize,
    /// Their lines in other conversations, replaced by [`REMOVED`].
    pub lines: usize,
    /// Her answers and the steps of their turns there, replaced by [`REMOVED`] too.
    pub answers: usize,
    /// Facts about them or told by them.
    pub facts: usize,
    /// Rows of their notebook (with a shared store).
    pub notebook: usize,
    /// Their reminders.
    pub reminders: usize,
    /// Other rows (steps, answers, audit rows) that quoted what was erased, blanked.
    pub quotes: usize,
}

impl Erased {
    /// The counts in words, for the person and the audit trail.
    pub fn summary(&self) -> String {
        format!(
            "{} conversation(s) removed, {} line(s) and {} answer(s) replaced, {} fact(s), {} \
             notebook row(s), {} reminder(s), {} quoting row(s) blanked",
            self.conversations,
            self.lines,
            self.answers,
            self.facts,
            self.notebook,
            self.reminders,
            self.quotes
        )
    }
}

/// `col` holds `?n` as a substring, in `d`'s SQL.
fn holds(d: Dialect, col: &str, n: usize) -> String {
    match d {
        Dialect::Sqlite => format!("instr({col}, ?{n}) > 0"),
        Dialect::Postgres => format!("strpos({col}, ?{n}) > 0"),
    }
}

impl Store {
    /// Remember that DM session `session` is `user`'s (so forgetting them removes it).
    pub async fn note_dm(&self, user: u64, session: &str) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO discord_dms(\"user\", session) VALUES (?1, ?2)
                 ON CONFLICT DO NOTHING",
                args![as_i64(user), session],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Erase everything kept about Discord user `user`; `quoted` are more texts of theirs
    /// kept elsewhere (their Markdown notebook's facts) whose quotes must go too.
    pub async fn erase_person(&self, user: u64, quoted: &[String]) -> Result<Erased, StoreError> {
        let erased = self.tx(async |c| erase_in(c, user, quoted).await).await?;
        self.shred().await;
        Ok(erased)
    }

    /// Make deleted bytes unreadable: on SQLite, rebuild the full-text index from the
    /// visible lines, vacuum and truncate the write-ahead log; on PostgreSQL, vacuum the
    /// tables an erase touches. Failures are logged (the rows are already gone).
    async fn shred(&self) {
        let done = self
            .run(async |c| {
                c.batch(match c.dialect() {
                    Dialect::Sqlite => {
                        "INSERT INTO messages_fts(messages_fts) VALUES('delete-all');
                         INSERT INTO messages_fts(rowid, text)
                            SELECT id, text FROM messages WHERE hidden = 0;
                         VACUUM;
                         PRAGMA wal_checkpoint(TRUNCATE);"
                    }
                    Dialect::Postgres => {
                        "VACUUM messages, summaries, people_facts, memory_facts, reminders, \
                         audit_log, discord_dms"
                    }
                })
                .await
            })
            .await;
        if let Err(e) = done {
            tracing::warn!("erase: clearing the deleted bytes: {e}");
        }
    }
}

/// The whole erase, inside one transaction.
async fn erase_in(c: &mut Conn<'_>, user: u64, quoted: &[String]) -> Result<Erased, StoreError> {
    let d = c.dialect();
    let id = as_i64(user);
    let mut out = Erased::default();
    // Their own conversations: their DMs and their conversations in shared channels
    // (`discord:<channel>:<user>`), with any archived after a /new.
    let dms = "SELECT session FROM discord_dms WHERE \"user\" = ?1";
    let mut own: BTreeSet<String> = texts(c, dms, args![id]).await?.into_iter().collect();
    let mut patterns: Vec<String> = own
        .iter()
        .flat_map(|s| [s.clone(), format!("{s}#archived-%")])
        .collect();
    patterns.push(format!("discord:%:{user}"));
    patterns.push(format!("discord:%:{user}#archived-%"));
    for p in &patterns {
        let like = "SELECT DISTINCT session FROM messages WHERE session LIKE ?1";
        own.extend(texts(c, like, args![p]).await?);
    }
    // What of theirs may be quoted elsewhere: their words, the facts, the notebook.
    let mut quotes: Vec<String> = quoted.to_vec();
    for s in &own {
        let said = "SELECT text FROM messages WHERE session = ?1 AND role = 'user'";
        quotes.extend(texts(c, said, args![s]).await?);
        out.conversations += 1;
        for sql in [
            "DELETE FROM messages WHERE session = ?1",
            "DELETE FROM summaries WHERE session = ?1",
            "DELETE FROM inflight WHERE session = ?1",
            "DELETE FROM cards_open WHERE session = ?1",
            "DELETE FROM jobs_underway WHERE session = ?1",
            "DELETE FROM restart_notices WHERE session = ?1",
            "DELETE FROM reminders WHERE session = ?1",
        ] {
            c.execute(sql, args![s]).await?;
        }
    }
    c.execute("DELETE FROM discord_dms WHERE \"user\" = ?1", args![id])
        .await?;
    // Their turns in everyone else's conversations: their line, and her answer and the
    // steps that followed it (one turn at a time per conversation: up to the next line).
    let mut shared: BTreeSet<String> = BTreeSet::new();
    let author = format!("%({user})");
    for r in c
        .query(
            "SELECT id, session, text FROM messages WHERE role = 'user' AND author LIKE ?1",
            args![&author],
        )
        .await?
    {
        let (line, session) = (r.int(0)?, r.text(1)?);
        quotes.push(r.text(2)?);
        c.execute(
            "UPDATE messages SET text = ?1, author = ?2 WHERE id = ?3",
            args![REMOVED, "[removed]", line],
        )
        .await?;
        out.lines += 1;
        let next = c
            .query_opt(
                "SELECT MIN(id) FROM messages WHERE session = ?1 AND id > ?2 AND role = 'user'",
                args![&session, line],
            )
            .await?
            .map(|r| r.opt_int(0))
            .transpose()?
            .flatten()
            .unwrap_or(i64::MAX);
        out.answers += usize::try_from(
            c.execute(
                "UPDATE messages SET text = ?1, step_row = NULL
               WHERE session = ?2 AND id > ?3 AND id < ?4 AND role <> 'user'
               AND (text <> ?1 OR step_row IS NOT NULL)",
                args![REMOVED, &session, line, next],
            )
            .await?,
        )
        .unwrap_or(usize::MAX);
        shared.insert(session);
    }
    for s in &shared {
        c.execute("DELETE FROM summaries WHERE session = ?1", args![s])
            .await?;
    }
    // The facts about them and the facts they told, their notebook (with a shared
    // store) and their reminders; what they said may be quoted elsewhere.
    let mut facts = Vec::new();
    let notebook = user.to_string();
    out.facts = take(
        c,
        "people_facts",
        "fact",
        "\"user\" = ?1 OR told_by = ?1",
        args![id],
        &mut facts,
    )
    .await?;
    out.notebook = take(
        c,
        "memory_facts",
        "text",
        "notebook = ?1",
        args![&notebook],
        &mut facts,
    )
    .await?;
    out.reminders = take(
        c,
        "reminders",
        "text",
        "asker LIKE ?1",
        args![&author],
        &mut facts,
    )
    .await?;
    // Quotes: their words where they spoke, the facts wherever they are quoted.
    let sessions: Vec<&String> = own.iter().chain(shared.iter()).collect();
    let long = |t: &String| t.trim().chars().count() >= QUOTE_MIN_CHARS;
    for q in quotes.iter().filter(|t| long(t)) {
        for s in &sessions {
            out.quotes += blank_quotes(c, d, q, Some(s.as_str())).await?;
        }
    }
    for q in facts.iter().filter(|t| long(t)) {
        out.quotes += blank_quotes(c, d, q, None).await?;
    }
    out.sessions = sessions.into_iter().cloned().collect();
    Ok(out)
}

/// The first column of every row `sql` selects, as text.
async fn texts(c: &mut Conn<'_>, sql: &str, args: &[Val]) -> Result<Vec<String>, StoreError> {
    c.query(sql, args)
        .await?
        .iter()
        .map(|r| r.text(0))
        .collect()
}

/// Delete the rows of `table` that `filter` picks, first keeping their `column` texts in
/// `kept` (they may be quoted in other rows); how many rows went. The three kinds of
/// rows about a person outside conversations (facts, notebook, reminders) go this one
/// way.
async fn take(
    c: &mut Conn<'_>,
    table: &str,
    column: &str,
    filter: &str,
    args: &[Val],
    kept: &mut Vec<String>,
) -> Result<usize, StoreError> {
    let select = format!("SELECT {column} FROM {table} WHERE {filter}");
    kept.extend(texts(c, &select, args).await?);
    let gone = c
        .execute(&format!("DELETE FROM {table} WHERE {filter}"), args)
        .await?;
    Ok(usize::try_from(gone).unwrap_or(usize::MAX))
}

/// Blank every message and audit row holding `quote` (in `session` only, when given);
/// how many rows changed.
async fn blank_quotes(
    c: &mut Conn<'_>,
    d: Dialect,
    quote: &str,
    session: Option<&str>,
) -> Result<usize, StoreError> {
    let q = quote.trim();
    let (scope, args) = match session {
        Some(s) => (" AND session = ?3", args![REMOVED, q, s].to_vec()),
        None => ("", args![REMOVED, q].to_vec()),
    };
    let mut n = c
        .execute(
            &format!(
                "UPDATE messages SET text = ?1, step_row = NULL WHERE {}{scope}",
                holds(d, "text", 2)
            ),
            &args,
        )
        .await?;
    // A kept step row (store/steps.rs) holds the quote as JSON text: a quote with a
    // quotation mark, a backslash or a line break is escaped there.
    let escaped = serde_json::to_string(q).unwrap_or_default();
    let escaped = escaped.trim_matches('"');
    let mut row_args = vec![Val::from(REMOVED), Val::from(escaped)];
    row_args.extend(args.iter().skip(2).cloned());
    n += c
        .execute(
            &format!(
                "UPDATE messages SET text = ?1, step_row = NULL WHERE {}{scope}",
                holds(d, "step_row", 2)
            ),
            &row_args,
        )
        .await?;
    n += c
        .execute(
            &format!(
                "UPDATE audit_log SET action = ?1, detail = '' WHERE ({} OR {}){scope}",
                holds(d, "action", 2),
                holds(d, "detail", 2)
            ),
            &args,
        )
        .await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Approver, PersonFact};
    use kotoba_core::protocol::{Channel, Register, Reminder};

    const ANN: u64 = 7;
    const BOB: u64 = 8;

    fn fact(user: u64, told_by: u64, text: &str) -> PersonFact {
        PersonFact {
            user,
            name: if user == ANN { "ann" } else { "bob" }.into(),
            fact: text.into(),
            source: "said".into(),
            by: "them".into(),
            heard_in: 200,
            told_by,
        }
    }

    /// Every table's rows as text (PostgreSQL), or the file's bytes and its log (SQLite).
    async fn everything(s: &Store, file: Option<&std::path::Path>) -> String {
        if let Some(f) = file {
            let mut bytes = std::fs::read(f).unwrap();
            bytes.extend(std::fs::read(f.with_extension("db-wal")).unwrap_or_default());
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        let mut all = String::new();
        for table in [
            "messages",
            "summaries",
            "people_facts",
            "memory_facts",
            "reminders",
            "audit_log",
            "discord_dms",
        ] {
            let rows = s
                .run(async |c| {
                    c.query(&format!("SELECT t::text FROM {table} t"), &[])
                        .await
                })
                .await
                .unwrap();
            for r in rows {
                all.push_str(&r.text(0).unwrap());
            }
        }
        all
    }

    #[tokio::test]
    async fn forgetting_a_person_erases_their_conversations_lines_facts_notebook_and_quotes_to_the_byte(
    ) {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.note_dm(ANN, "discord:900").await.unwrap();
            s.note_dm(ANN, "discord:900").await.unwrap();
            s.append_lines(
                "discord:900",
                &[
                    ("user", "ann (7)", "my locker code is quokka4471", false),
                    ("assistant", "kotoba", "Noted, quokka.", false),
                ],
            )
            .await
            .unwrap();
            s.append_message(
                "discord:200:7",
                "user",
                "ann (7)",
                "zebrafinch secret",
                false,
            )
            .await
            .unwrap();
            let shared = s
                .append_lines(
                    "discord:200",
                    &[
                        ("user", "ann (7)", "I collect marmoset stamps", false),
                        ("assistant", "kotoba", "Lovely: marmoset ones!", false),
                        ("user", "bob (8)", "I like trains", false),
                        ("assistant", "kotoba", "Trains and stamps!", false),
                    ],
                )
                .await
                .unwrap();
            s.append_message(
                "discord:200",
                "step",
                "memory_write",
                "memory_write \"ann likes persimmon jam\" → Ok",
                true,
            )
            .await
            .unwrap();
            s.save_summary(
                "discord:200",
                &crate::Summary {
                    from_id: shared[0],
                    upto_id: shared[3],
                    text: "Ann collects marmoset stamps; Bob likes trains.".into(),
                },
            )
            .await
            .unwrap();
            s.add_person_fact(1, &fact(ANN, 1, "ann is leaving the wombat team"))
                .await
                .unwrap();
            s.add_person_fact(1, &fact(BOB, ANN, "bob hums capybara songs"))
                .await
                .unwrap();
            s.add_person_fact(1, &fact(BOB, 1, "bob runs the trains channel"))
                .await
                .unwrap();
            s.memory_add(
                "7",
                "general",
                "ann likes persimmon jam",
                "k1",
                "2026-12-05",
            )
            .await
            .unwrap();
            s.memory_add("", "general", "the owner likes tea", "k2", "2026-12-05")
                .await
                .unwrap();
            s.add_reminder(&Reminder {
                id: 0,
                session: "discord:200".into(),
                text: "water the axolotl".into(),
                due_ms: 1,
                register: Register::Text,
                channel: Channel::Text,
                every_secs: None,
                asker: "ann (7)".into(),
            })
            .await
            .unwrap();
            s.audit(
                "discord:200",
                "memory_write",
                "memory_write ann likes persimmon jam",
                "write",
                true,
                Approver::AutoSafe,
                "",
            )
            .await
            .unwrap();
            s.audit(
                "discord:5",
                "discord_remember_person",
                "remember ann is leaving the wombat team",
                "write",
                true,
                Approver::AutoSafe,
                "",
            )
            .await
            .unwrap();

            let erased = s.erase_person(ANN, &[]).await.unwrap();
            assert_eq!(
                (
                    erased.conversations,
                    erased.lines,
                    erased.facts,
                    erased.notebook
                ),
                (2, 1, 2, 1),
                "{}: {erased:?}",
                db.name
            );
            assert_eq!((erased.reminders, erased.answers), (1, 1), "{}", db.name);
            assert!(erased.sessions.contains(&"discord:200".to_string()));
            assert!(s.history("discord:900", 10).await.unwrap().is_empty());
            assert!(s.history("discord:200:7", 10).await.unwrap().is_empty());
            let lines = s.history("discord:200", 10).await.unwrap();
            assert_eq!(
                lines
                    .iter()
                    .map(|m| (m.author.as_str(), m.text.as_str()))
                    .collect::<Vec<_>>(),
                [
                    ("[removed]", REMOVED),
                    ("kotoba", REMOVED),
                    ("bob (8)", "I like trains"),
                    ("kotoba", "Trains and stamps!"),
                ],
                "{}",
                db.name
            );
            assert!(
                s.summary("discord:200").await.unwrap().is_none(),
                "rebuilt later"
            );
            assert!(s
                .search_messages("discord:200", "marmoset", 5)
                .await
                .unwrap()
                .is_empty());
            assert_eq!(
                s.search_messages("discord:200", "trains", 5)
                    .await
                    .unwrap()
                    .len(),
                2
            );
            let kept = s.person_facts(1, None).await.unwrap();
            assert_eq!(
                kept.iter().map(|f| f.fact.as_str()).collect::<Vec<_>>(),
                ["bob runs the trains channel"]
            );
            assert!(s.memory_all("7", None).await.unwrap().is_empty());
            assert_eq!(
                s.memory_all("", None).await.unwrap().len(),
                1,
                "the owner's stays"
            );
            let audit = s.audit_rows(None, 10).await.unwrap();
            assert!(audit.iter().all(|r| !r.action.contains("persimmon")));
            assert!(audit.iter().all(|r| !r.action.contains("wombat")));
            drop(s);
            let s = db.open().await;
            let file = db.file();
            let bytes = everything(&s, file.as_deref()).await;
            for word in [
                "quokka4471",
                "zebrafinch",
                "marmoset",
                "persimmon",
                "wombat",
                "capybara",
                "axolotl",
            ] {
                assert!(
                    !bytes.contains(word),
                    "{}: '{word}' is still there",
                    db.name
                );
            }
            assert!(bytes.contains("trains"), "{}: the rest stays", db.name);
        }
    }
}
