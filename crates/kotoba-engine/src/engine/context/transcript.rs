//! A session's conversation as the model sees it: the summary of its oldest lines (if
//! it was ever compacted) and every line after it, each with its stored id, its author
//! and its size in tokens, counted once per tokenizer.

use crate::llm::tokens::Tokenizer;
use crate::llm::Item;
use kotoba_store::{StoredMessage, Summary};

/// One line of the conversation.
#[derive(Debug, Clone)]
pub struct Line {
    /// Its row id in the store (0 when it could not be saved): a summary names the
    /// lines it covers by id.
    pub id: i64,
    /// Who said it (a person's name or id, or `kotoba`).
    pub author: String,
    /// What the model reads.
    pub item: Item,
    /// Its size under the tokenizer that last counted it.
    counted: Option<(Tokenizer, usize)>,
}

impl Line {
    /// A line as stored (`user` or `assistant`).
    pub fn stored(m: StoredMessage) -> Line {
        let item = match m.role.as_str() {
            "assistant" => Item::Assistant { text: m.text },
            _ => Item::User { text: m.text },
        };
        Line::new(m.id, &m.author, item)
    }

    /// A line with its id and author.
    pub fn new(id: i64, author: &str, item: Item) -> Line {
        Line {
            id,
            author: author.to_string(),
            item,
            counted: None,
        }
    }

    /// Its size in tokens (counted on first use, then remembered).
    pub fn tokens(&mut self, t: Tokenizer) -> usize {
        match self.counted {
            Some((by, n)) if by == t => n,
            _ => {
                let n = t.item(&self.item);
                self.counted = Some((t, n));
                n
            }
        }
    }

    /// Whether it is the person's (an exchange starts with one).
    pub fn is_person(&self) -> bool {
        matches!(self.item, Item::User { .. })
    }

    /// The line as the summariser reads it: `author: text`.
    pub fn as_said(&self) -> String {
        match &self.item {
            Item::User { text } => format!("{}: {text}", self.author),
            Item::Assistant { text } => format!("Kotoba: {text}"),
            _ => String::new(),
        }
    }
}

/// The conversation: summary, then lines.
#[derive(Debug, Default)]
pub struct Transcript {
    /// The summary of every line before `lines` (durable: the store's newest one).
    pub summary: Option<Summary>,
    /// The summary's size under the tokenizer that last counted it.
    summary_counted: Option<(Tokenizer, usize)>,
    /// The lines after the summary, oldest first.
    pub lines: Vec<Line>,
    /// Bumped by each fresh start (`/new`): a compaction begun before it is dropped.
    pub generation: u64,
    /// What the last request of a turn here cost, in tokens (what `/status` shows).
    pub last_request: Option<usize>,
    /// Bumped each time it is read again from the store (a person forgotten): a turn
    /// begun before it does not push its person's line again.
    pub reloads: u64,
    /// The store could not be read when it was loaded: the next turn reads it again.
    pub stale: bool,
}

impl Transcript {
    /// A conversation loaded from the store.
    pub fn loaded(summary: Option<Summary>, lines: Vec<StoredMessage>) -> Transcript {
        Transcript {
            summary,
            lines: lines.into_iter().map(Line::stored).collect(),
            ..Transcript::default()
        }
    }

    /// A conversation the store could not give: empty, read again at the next turn.
    pub fn unread() -> Transcript {
        Transcript {
            stale: true,
            ..Transcript::default()
        }
    }

    /// The items the model reads: the summary's note, then each line.
    pub fn items(&self) -> Vec<Item> {
        let mut out = Vec::with_capacity(self.lines.len() + 1);
        if let Some(s) = &self.summary {
            out.push(summary_item(&s.text));
        }
        out.extend(self.lines.iter().map(|l| l.item.clone()));
        out
    }

    /// Its size in tokens: the summary's note and every line.
    pub fn tokens(&mut self, t: Tokenizer) -> usize {
        let summary = match (&self.summary, self.summary_counted) {
            (None, _) => 0,
            (Some(_), Some((by, n))) if by == t => n,
            (Some(s), _) => {
                let n = t.item(&summary_item(&s.text));
                self.summary_counted = Some((t, n));
                n
            }
        };
        summary + self.lines.iter_mut().map(|l| l.tokens(t)).sum::<usize>()
    }

    /// Put `summary` in place of the first `covered` lines.
    pub fn replace_oldest(&mut self, covered: usize, summary: Summary) {
        self.lines.drain(..covered.min(self.lines.len()));
        self.summary = Some(summary);
        self.summary_counted = None;
    }

    /// Take `fresh` (read again from the store) in place of everything: a compaction
    /// begun before it is dropped, a turn begun before it pushes only her answer.
    pub fn reload(&mut self, fresh: Transcript) {
        let (generation, reloads) = (self.generation + 1, self.reloads + 1);
        *self = Transcript {
            generation,
            reloads,
            ..fresh
        };
    }

    /// Forget everything (a fresh conversation).
    pub fn clear(&mut self) {
        self.summary = None;
        self.summary_counted = None;
        self.lines.clear();
        self.last_request = None;
        self.generation += 1;
    }
}

/// The summary as the model reads it, at the head of the conversation.
pub fn summary_item(summary: &str) -> Item {
    Item::User {
        text: format!("{SUMMARY_HEAD}\n{summary}"),
    }
}

/// The first line of the summary's note.
pub const SUMMARY_HEAD: &str = "[Summary of the earlier conversation in this session, written \
when it grew long; the lines it covers are still in the store, searchable.]";
