//! The memory family: `memory_write` and `memory_recall` over plain Markdown files in the
//! data folder (`memory/MEMORY.md`, an index of the 50 newest facts, and
//! `memory/topics/<slug>.md`, one file per topic) that she and the owner both read and edit.
//! Every person has a notebook of their own, laid out the same under
//! `memory/people/<discord id>/` (memory/notebook.rs): a call reads and writes the
//! notebook of the person its turn speaks for. With a store shared by processes
//! (PostgreSQL) the facts live in it instead (memory/shared.rs), and `kotoba memory
//! export` writes the owner's as those files.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{opt_str, req_str};
use super::Behaviour;
use super::{Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::Risk;

/// How many facts the index keeps.
pub const INDEX_KEEP: usize = 50;
/// The longest single fact accepted, in characters.
pub const MAX_FACT_CHARS: usize = 300;
/// Most facts one recall returns.
pub const MAX_RECALL: usize = 20;
/// The topic used when none is given.
pub const DEFAULT_TOPIC: &str = "general";

const INDEX_HEADER: &str = "# Memory\n\nRecent facts, newest first (the last 50). Every topic \
    keeps all of its facts in topics/<topic>.md. Edit freely.\n\n";

/// Serialises writes inside this process so two calls cannot interleave a rewrite.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// One remembered fact as read back from the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// `YYYY-MM-DD`, or empty when a hand-written line has none.
    pub date: String,
    /// The topic slug.
    pub topic: String,
    /// The fact itself.
    pub text: String,
}

impl Fact {
    pub(crate) fn line(&self) -> String {
        let date = if self.date.is_empty() {
            String::new()
        } else {
            format!("{} ", self.date)
        };
        format!("- {date}[{}] {}", self.topic, self.text)
    }
}

/// One notebook of her memory: its folder under `<home>/memory`, or its rows of the
/// shared store when there is one.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    /// The Markdown folder (read and written without a shared store; where an export
    /// goes by default).
    dir: PathBuf,
    /// The store shared by every process of the bot, which then holds the facts.
    shared: Option<std::sync::Arc<kotoba_store::Store>>,
    /// Whose notebook: `""` (hers, the owner's) or a person's Discord id.
    notebook: String,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// A new fact was stored under this topic.
    Stored(String),
    /// The same fact was already there under this topic.
    AlreadyKnown(String),
}

impl MemoryStore {
    /// The memory folder inside the data folder `home`.
    pub fn new(home: &Path) -> Self {
        Self::notebook(home, None, Notebook::Owner)
    }

    /// The notebook a tool call reads and writes: its person's (the owner's memory for an
    /// owner), in the shared store when the turn's store is shared, else the data
    /// folder's files. `None` for a turn of nobody in particular.
    pub fn for_call(ctx: &ToolContext) -> Option<Self> {
        let notebook = Notebook::of(ctx.turn.origin())?;
        Some(Self::notebook(&ctx.paths.home, ctx.store.clone(), notebook))
    }

    /// The owner's memory of data folder `home` with `store` (used only when it is
    /// shared).
    pub fn with_store(home: &Path, store: Option<std::sync::Arc<kotoba_store::Store>>) -> Self {
        Self::notebook(home, store, Notebook::Owner)
    }

    /// Notebook `notebook` of data folder `home` with `store` (used only when shared).
    pub fn notebook(
        home: &Path,
        store: Option<std::sync::Arc<kotoba_store::Store>>,
        notebook: Notebook,
    ) -> Self {
        MemoryStore {
            dir: notebook.dir(home),
            shared: store.filter(|s| s.is_shared()),
            notebook: notebook.key(),
        }
    }

    /// The index file.
    pub fn index_path(&self) -> PathBuf {
        self.dir.join("MEMORY.md")
    }

    /// The file of one topic (by its slug).
    pub fn topic_path(&self, slug: &str) -> PathBuf {
        self.dir.join("topics").join(format!("{slug}.md"))
    }

    /// Store one (already checked) fact under `topic` dated `date`, skipping a duplicate.
    pub async fn write(&self, fact: &str, topic: &str, date: &str) -> std::io::Result<Written> {
        let slug = slug(topic);
        if let Some(store) = &self.shared {
            return shared::write(store, &self.notebook, fact, slug, date).await;
        }
        let (me, fact, date) = (self.clone(), fact.to_string(), date.to_string());
        off(move || me.write_files(&fact, slug, &date)).await
    }

    /// [`MemoryStore::write`] into the Markdown files (blocking file work).
    fn write_files(&self, fact: &str, slug: String, date: &str) -> std::io::Result<Written> {
        let _held = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let topic_file = self.topic_path(&slug);
        let existing = read_or_empty(&topic_file)?;
        let key = normalize(fact);
        if existing
            .lines()
            .filter_map(|l| parse_line(l, &slug))
            .any(|f| normalize(&f.text) == key)
        {
            return Ok(Written::AlreadyKnown(slug));
        }
        std::fs::create_dir_all(self.dir.join("topics"))?;
        let mut body = if existing.trim().is_empty() {
            format!("# {slug}\n\n")
        } else {
            existing
        };
        if !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str(&format!("- {date} {fact}\n"));
        write_atomic(&topic_file, &body)?;

        let new = Fact {
            date: date.to_string(),
            topic: slug.clone(),
            text: fact.to_string(),
        };
        let index = read_or_empty(&self.index_path())?;
        write_atomic(
            &self.index_path(),
            &with_new_index_line(&index, &new.line()),
        )?;
        Ok(Written::Stored(slug))
    }

    /// Every fact: the index's first (newest first), then each topic file's newest first,
    /// without repeats. `topic` limits it to one topic.
    pub async fn facts(&self, topic: Option<&str>) -> std::io::Result<Vec<Fact>> {
        let want = topic.map(slug);
        if let Some(store) = &self.shared {
            return shared::facts(store, &self.notebook, want.as_deref()).await;
        }
        let me = self.clone();
        off(move || me.facts_in_files(want)).await
    }

    /// [`MemoryStore::facts`] from the Markdown files (blocking file work).
    fn facts_in_files(&self, want: Option<String>) -> std::io::Result<Vec<Fact>> {
        let mut out: Vec<Fact> = Vec::new();
        let index = read_or_empty(&self.index_path())?;
        out.extend(index.lines().filter_map(|l| parse_line(l, DEFAULT_TOPIC)));
        let topics_dir = self.dir.join("topics");
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&topics_dir) {
            Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        files.retain(|p| p.extension().is_some_and(|x| x == "md"));
        files.sort();
        for file in files {
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = read_or_empty(&file)?;
            let mut facts: Vec<Fact> = text.lines().filter_map(|l| parse_line(l, &name)).collect();
            facts.reverse();
            out.extend(facts);
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|f| seen.insert((f.topic.clone(), normalize(&f.text))));
        if let Some(want) = want {
            out.retain(|f| f.topic == want);
        }
        // Newest first; a stable sort keeps file order within a day.
        out.sort_by(|a, b| b.date.cmp(&a.date));
        Ok(out)
    }

    /// Facts matching `query` (case-insensitive words), best first, at most `MAX_RECALL`;
    /// with no query, the newest. Also returns how many matched in all.
    pub async fn recall(
        &self,
        query: Option<&str>,
        topic: Option<&str>,
    ) -> std::io::Result<(Vec<Fact>, usize)> {
        let facts = self.facts(topic).await?;
        let Some(query) = query.filter(|q| !q.trim().is_empty()) else {
            let total = facts.len();
            return Ok((facts.into_iter().take(MAX_RECALL).collect(), total));
        };
        let mut wanted: Vec<String> = words(query)
            .into_iter()
            .filter(|w| !is_stopword(w))
            .collect();
        if wanted.is_empty() {
            wanted = words(query);
        }
        wanted.dedup();
        let mut scored: Vec<(usize, Fact)> = facts
            .into_iter()
            .filter_map(|f| {
                let mut have = words(&f.text);
                have.extend(words(&f.topic));
                let score = wanted
                    .iter()
                    .filter(|w| have.iter().any(|h| word_hits(h, w)))
                    .count();
                (score > 0).then_some((score, f))
            })
            .collect();
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        let total = scored.len();
        Ok((
            scored
                .into_iter()
                .take(MAX_RECALL)
                .map(|(_, f)| f)
                .collect(),
            total,
        ))
    }
}

/// Why `fact` is not one fact, or `None` when it is.
pub fn compound_reason(fact: &str) -> Option<&'static str> {
    if fact.contains('\n') || fact.contains('\r') {
        return Some("it spans several lines");
    }
    if fact.chars().count() > MAX_FACT_CHARS {
        return Some("it is longer than 300 characters");
    }
    if fact.contains(';') {
        return Some("it joins clauses with ';'");
    }
    let lower = fact.to_lowercase();
    if words(&lower)
        .windows(2)
        .any(|w| w[0] == "and" && w[1] == "also")
    {
        return Some("it joins facts with 'and also'");
    }
    if sentence_count(fact) > 1 {
        return Some("it has several sentences");
    }
    None
}

fn sentence_count(text: &str) -> usize {
    const ABBREV: [&str; 12] = [
        "mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "no",
    ];
    let chars: Vec<char> = text.trim().chars().collect();
    let mut count = 1;
    for i in 0..chars.len() {
        if !matches!(chars[i], '.' | '!' | '?') {
            continue;
        }
        let next_word = chars[i + 1..].iter().find(|c| !c.is_whitespace());
        let spaced = chars.get(i + 1).is_some_and(|c| c.is_whitespace());
        if !spaced || !next_word.is_some_and(|c| c.is_uppercase()) {
            continue;
        }
        let before: String = chars[..i]
            .iter()
            .rev()
            .take_while(|c| !c.is_whitespace())
            .collect();
        let before: String = before.chars().rev().collect::<String>().to_lowercase();
        if before.chars().count() <= 1 || ABBREV.contains(&before.as_str()) {
            continue;
        }
        count += 1;
    }
    count
}

/// A topic name as a file-safe slug: lowercase letters and digits joined by `-`, at most
/// 40 characters; empty becomes `general`.
pub fn slug(topic: &str) -> String {
    let mut out = String::new();
    for c in topic.trim().to_lowercase().chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_end_matches('-').chars().take(40).collect();
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        DEFAULT_TOPIC.to_string()
    } else {
        out
    }
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn word_hits(have: &str, want: &str) -> bool {
    have == want || (want.chars().count() >= 4 && have.starts_with(want))
}

fn is_stopword(w: &str) -> bool {
    const STOP: [&str; 24] = [
        "a", "an", "the", "is", "are", "was", "do", "does", "did", "i", "my", "me", "you", "your",
        "what", "who", "of", "to", "in", "on", "and", "or", "about", "know",
    ];
    STOP.contains(&w)
}

pub(crate) fn normalize(text: &str) -> String {
    let collapsed = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    collapsed.trim_end_matches(['.', '!']).to_string()
}

/// Read one bullet line: `- [YYYY-MM-DD ][[topic] ]fact`.
fn parse_line(line: &str, topic: &str) -> Option<Fact> {
    let rest = line
        .trim()
        .strip_prefix("- ")
        .or_else(|| line.trim().strip_prefix("* "))?;
    let (date, rest) = match rest.split_once(' ') {
        Some((d, r)) if is_date(d) => (d.to_string(), r),
        _ => (String::new(), rest),
    };
    let (topic, text) = match rest.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((t, r)) => (t.to_string(), r),
        None => (topic.to_string(), rest),
    };
    let text = text.trim();
    (!text.is_empty()).then(|| Fact {
        date,
        topic,
        text: text.to_string(),
    })
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// The index with `line` placed before its first bullet and bullets past 50 dropped;
/// everything else the owner wrote stays where it was.
pub(crate) fn with_new_index_line(index: &str, line: &str) -> String {
    let base = if index.trim().is_empty() {
        INDEX_HEADER
    } else {
        index
    };
    let mut out = Vec::new();
    let mut inserted = false;
    let mut bullets = 0;
    for l in base.lines() {
        let is_bullet = parse_line(l, DEFAULT_TOPIC).is_some();
        if is_bullet && !inserted {
            out.push(line.to_string());
            inserted = true;
            bullets += 1;
        }
        if is_bullet {
            bullets += 1;
            if bullets > INDEX_KEEP {
                continue;
            }
        }
        out.push(l.to_string());
    }
    if !inserted {
        out.push(line.to_string());
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn read_or_empty(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    }
}

pub(crate) fn write_atomic(path: &Path, body: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension("md.tmp");
    std::fs::write(&tmp, body)?;
    std::fs::rename(&tmp, path)
}

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    date_from_days(i64::try_from(secs / 86_400).unwrap_or(0))
}

pub(crate) use kotoba_store::clock::date_from_days;

fn memory_spec(
    name: &str,
    description: &str,
    risk: Risk,
    lines: ToolLines,
    params: Value,
) -> ToolSpec {
    ToolSpec {
        // Every person has a notebook: a guest's turn is offered it too, and it reads
        // and writes only their own.
        behaviour: Behaviour::guest(),
        ..ToolSpec::plain(name, description, "memory", risk, lines, params)
    }
}

/// Blocking file work on the blocking pool.
async fn off<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
}

/// Remembers one fact in the memory files.
#[derive(Debug, Clone)]
pub struct MemoryWrite {
    spec: ToolSpec,
}

impl Default for MemoryWrite {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryWrite {
    /// The tool with its spec.
    pub fn new() -> Self {
        MemoryWrite {
            spec: memory_spec(
                "memory_write",
                "Remember one fact for later (about the person, their plans, preferences, \
                 or things you agreed). Exactly one short fact per call, one sentence, no ';' \
                 — call again for each further fact. 'topic' groups it (default 'general').",
                Risk::Write,
                ToolLines::of(
                    "Oh, that's worth remembering. I'll keep it.",
                    &["Writing it down.", "Still jotting that down."],
                    "Got it, I'll remember that.",
                    "Hm, I couldn't write that down.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "fact": {"type": "string", "description": "One fact, one sentence, at most 300 characters."},
                        "topic": {"type": "string", "description": "A short topic name, e.g. 'music' or 'work' (default 'general')."}
                    },
                    "required": ["fact"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

#[async_trait]
impl Tool for MemoryWrite {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (fact, topic) = match (
            req_str(&args, "fact", "memory_write"),
            opt_str(&args, "topic", "memory_write"),
        ) {
            (Ok(f), Ok(t)) => (f.trim().to_string(), t.unwrap_or(DEFAULT_TOPIC).to_string()),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        if fact.is_empty() {
            return ToolOutput::refused(
                "memory_write: argument 'fact' is empty. Nothing was stored.",
            );
        }
        if let Some(why) = compound_reason(&fact) {
            return ToolOutput::refused(format!(
                "memory_write: that is more than one fact ({why}). Nothing was stored. Call \
                 memory_write once per fact, each a single short sentence."
            ));
        }
        let Some(store) = MemoryStore::for_call(ctx) else {
            return ToolOutput::refused(NO_NOTEBOOK);
        };
        match store.write(&fact, &topic, &today()).await {
            Ok(Written::Stored(slug)) => {
                ToolOutput::ok(format!("Remembered under '{slug}': {fact}"))
            }
            Ok(Written::AlreadyKnown(slug)) => ToolOutput::ok(format!(
                "Already remembered under '{slug}': {fact}. Nothing new was written."
            )),
            Err(e) => ToolOutput::failed(format!("memory_write: could not save the fact: {e}.")),
        }
    }
}

/// Looks facts up in the memory files.
#[derive(Debug, Clone)]
pub struct MemoryRecall {
    spec: ToolSpec,
}

impl Default for MemoryRecall {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryRecall {
    /// The tool with its spec.
    pub fn new() -> Self {
        MemoryRecall {
            spec: memory_spec(
                "memory_recall",
                "Look up what you remembered. 'query' finds facts sharing its words (best \
                 first, up to 20); without a query you get the most recent facts. 'topic' \
                 limits it to one topic.",
                Risk::Read,
                ToolLines::of(
                    "Let me think back.",
                    &["Still thinking back.", "It's in here somewhere."],
                    "Right, I remember.",
                    "My memory's failing me there.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Words to look for."},
                        "topic": {"type": "string", "description": "Only this topic."},
                        "person": {"type": "string", "description": "The owner only: read this person's notebook instead (their Discord id or mention)."}
                    },
                    "additionalProperties": false
                }),
            ),
        }
    }
}

#[async_trait]
impl Tool for MemoryRecall {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (query, topic, person) = match (
            opt_str(&args, "query", "memory_recall"),
            opt_str(&args, "topic", "memory_recall"),
            opt_str(&args, "person", "memory_recall"),
        ) {
            (Ok(q), Ok(t), Ok(p)) => (q.map(str::to_string), t.map(str::to_string), p),
            (Err(r), _, _) | (_, Err(r), _) | (_, _, Err(r)) => return r,
        };
        let Some(own) = Notebook::of(ctx.turn.origin()) else {
            return ToolOutput::refused(NO_NOTEBOOK);
        };
        let notebook = match person.filter(|p| !p.trim().is_empty()) {
            None => own,
            Some(p) => match Notebook::named(p) {
                None => {
                    return ToolOutput::refused(format!(
                        "memory_recall: '{p}' is not a Discord id or mention. Nothing was read."
                    ))
                }
                Some(named) if own == Notebook::Owner || named == own => named,
                Some(_) => {
                    return ToolOutput::refused(
                        "memory_recall: only your own notebook can be read here; another \
                         person's is theirs. Nothing was read.",
                    )
                }
            },
        };
        let store = MemoryStore::notebook(&ctx.paths.home, ctx.store.clone(), notebook);
        let (facts, total) = match store.recall(query.as_deref(), topic.as_deref()).await {
            Ok(found) => found,
            Err(e) => {
                return ToolOutput::failed(format!("memory_recall: could not read memory: {e}."))
            }
        };
        if facts.is_empty() {
            let text = match (
                query.as_deref().filter(|q| !q.trim().is_empty()),
                topic.as_deref(),
            ) {
                (Some(q), Some(t)) => {
                    format!("Nothing in memory under '{}' matches '{q}'.", slug(t))
                }
                (Some(q), None) => format!("Nothing in memory matches '{q}'."),
                (None, Some(t)) => format!("Nothing is remembered under '{}'.", slug(t)),
                (None, None) => "Nothing is remembered yet.".to_string(),
            };
            return ToolOutput::ok(text);
        }
        let mut text = facts.iter().map(Fact::line).collect::<Vec<_>>().join("\n");
        if total > facts.len() {
            text.push_str(&format!("\n[showing {} of {total}]", facts.len()));
        }
        ToolOutput::ok(text)
    }
}

/// What a turn of nobody in particular is told: there is no notebook to use.
const NO_NOTEBOOK: &str = "Memory is kept per person, and this turn speaks for nobody in \
    particular, so nothing was read or stored.";

mod notebook;
mod shared;

pub use notebook::Notebook;

#[cfg(test)]
mod tests;
