//! Who an utterance is for (voice.md "Wake"): her name heard fuzzily, where it sits in
//! what was said, and how many people are in the room.

use std::time::Duration;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

#[cfg(test)]
mod tests;

/// How long after she acknowledged her name the next utterance needs no name.
pub const WAKE_WINDOW: Duration = Duration::from_secs(8);

/// Short lines she says when called by name alone.
pub const ACKNOWLEDGEMENTS: &[&str] = &["Yes?", "Mm-hm?", "I'm here.", "Hm?"];

/// Words a person says before or instead of a request when calling her ("hey Kotoba"),
/// case-folded.
const GREETINGS: &[&str] = &[
    "hey", "hi", "hello", "ok", "okay", "yo", "oi", "oh", "um", "uh", "hm", "hmm", "hola", "oye",
    "ey",
];

/// At most this many greeting words may stand before her name at the start of a clause.
const MAX_GREETINGS: usize = 3;

/// A clause of at most this many words is addressed to her wherever her name sits in it.
/// Longer ones are a room talking about her unless the name opens or closes them.
pub const SHORT_CLAUSE_WORDS: usize = 6;

/// What to do with an utterance heard in the voice room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wake {
    /// Not for her (or nothing was said).
    Ignore,
    /// For her: the words to send her (the heard text, a leading or trailing vocative
    /// "Kotoba," taken out when words are left).
    ForHer(String),
    /// Her name alone (perhaps with a greeting): acknowledge it and open the window.
    NameOnly,
}

/// The names she answers to: display name, username and configured aliases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    names: Vec<Name>,
}

/// One name, folded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Name {
    /// How many words it has ("Big Bob" has two).
    words: usize,
    /// Its letters and digits run together ("bigbob").
    compact: String,
}

impl Names {
    /// The names, case-folded with diacritics and punctuation ignored; blank or
    /// duplicate names are dropped.
    pub fn new(names: &[String]) -> Self {
        let mut out: Vec<Name> = Vec::new();
        for name in names {
            let words = fold_words(name);
            let compact = words.concat();
            if !compact.is_empty() && !out.iter().any(|n| n.compact == compact) {
                out.push(Name {
                    words: words.len(),
                    compact,
                });
            }
        }
        Names { names: out }
    }

    /// Whether there is no name to listen for.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Whether `heard` (one or more words) is close enough to `name`: within 2 edits for a
/// name of 6 or more letters, 1 for 4 or 5, exact for shorter ones. Both are compared
/// case-folded, without diacritics, punctuation or spaces, so "Ko-toba" and "koto ba"
/// are the name "Kotoba".
pub fn name_matches(heard: &str, name: &str) -> bool {
    distance_to(&fold_words(heard).concat(), &fold_words(name).concat()).is_some()
}

/// The edit distance from `heard` to `name` when it is within the name's allowance.
fn distance_to(heard: &str, name: &str) -> Option<usize> {
    if heard.is_empty() || name.is_empty() {
        return None;
    }
    let letters = name.chars().count();
    let allowed = match letters {
        6.. => 2,
        4..=5 => 1,
        _ => 0,
    };
    if heard.chars().count().abs_diff(letters) > allowed {
        return None;
    }
    let d = edit_distance(heard, name);
    (d <= allowed).then_some(d)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = Vec::with_capacity(b.len() + 1);
        row.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let swap = prev[j] + usize::from(ca != *cb);
            row.push(swap.min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

/// Who `heard` is for, with `humans` people in the room and the wake window open or not.
///
/// - Nothing but punctuation, or only transcriber annotations (`[BLANK_AUDIO]`,
///   `(music)`): [`Wake::Ignore`].
/// - Her name alone, perhaps with greetings ("Hey Kotoba!"): [`Wake::NameOnly`], in any
///   room.
/// - With one person in the room (or none counted) every utterance is for her, and so is
///   every utterance while the window is open.
/// - With two or more, it is for her when, in any of its clauses (split at `.`, `!`,
///   `?`, `…`, `;`), her name opens the clause (after up to three greetings), closes it,
///   or the clause has at most [`SHORT_CLAUSE_WORDS`] words. Her name in the middle of a
///   longer clause is talk about her: [`Wake::Ignore`].
///
/// A name is matched fuzzily ([`name_matches`]), over one heard word or two run together
/// ("koto ba"), preferring the closer reading when both match.
pub fn wake(heard: &str, names: &Names, humans: usize, window_open: bool) -> Wake {
    let text = without_annotations(heard);
    let words = words(&text);
    if words.is_empty() {
        return Wake::Ignore;
    }
    let spots = find_names(&words, names);
    let named: Vec<bool> = (0..words.len())
        .map(|i| spots.iter().any(|s| s.start <= i && i < s.end))
        .collect();
    let only_name = words
        .iter()
        .zip(&named)
        .all(|(w, n)| *n || GREETINGS.contains(&w.folded.as_str()));
    if !spots.is_empty() && only_name {
        return Wake::NameOnly;
    }
    let for_her = humans <= 1
        || window_open
        || clauses(&words).any(|c| addressed(&words[c.clone()], c.start, &spots));
    if for_her {
        Wake::ForHer(without_vocative(&text, &words, &spots))
    } else {
        Wake::Ignore
    }
}

/// A heard word: where it is in the text, its folded form and its clause.
#[derive(Debug, Clone)]
struct Word {
    start: usize,
    end: usize,
    folded: String,
    clause: usize,
}

/// Where a name was heard: words `start..end`.
#[derive(Debug, Clone, Copy)]
struct Spot {
    start: usize,
    end: usize,
}

/// The text without bracketed transcriber annotations (`[BLANK_AUDIO]`, `[Music]`), and
/// without a parenthesised one that is all there is (`(laughs)`).
fn without_annotations(heard: &str) -> String {
    let mut out = String::with_capacity(heard.len());
    let mut depth = 0usize;
    for c in heard.chars() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let t = out.trim();
    if t.starts_with('(') && t.ends_with(')') && !t[1..].contains('(') {
        return String::new();
    }
    t.to_string()
}

/// The words of `text`, with their clause numbers; apostrophes stay inside a word, any
/// other punctuation separates words.
fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut clause = 0;
    let mut start: Option<usize> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let in_word = c.is_alphanumeric()
            || is_combining_mark(c)
            || (is_apostrophe(c)
                && start.is_some()
                && chars.get(i + 1).is_some_and(|(_, n)| n.is_alphanumeric()));
        if in_word {
            start.get_or_insert(at);
            continue;
        }
        if let Some(s) = start.take() {
            push_word(&mut out, text, s, at, clause);
        }
        let ends_clause = matches!(c, '!' | '?' | '…' | ';' | '。' | '！' | '？')
            || (c == '.' && !chars.get(i + 1).is_some_and(|(_, n)| n.is_alphanumeric()));
        if ends_clause && out.last().is_some_and(|w: &Word| w.clause == clause) {
            clause += 1;
        }
    }
    if let Some(s) = start {
        push_word(&mut out, text, s, text.len(), clause);
    }
    out
}

fn push_word(out: &mut Vec<Word>, text: &str, start: usize, end: usize, clause: usize) {
    let folded = fold(&text[start..end]);
    if !folded.is_empty() {
        out.push(Word {
            start,
            end,
            folded,
            clause,
        });
    }
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '’' | 'ʼ')
}

/// A word case-folded, without diacritics or punctuation.
fn fold(word: &str) -> String {
    word.nfkd()
        .filter(|c| c.is_alphanumeric() && !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The folded words of a name or phrase.
fn fold_words(text: &str) -> Vec<String> {
    words(text).into_iter().map(|w| w.folded).collect()
}

/// The ranges of word indices of each clause.
fn clauses(words: &[Word]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut start = 0;
    (1..=words.len()).filter_map(move |i| {
        let ends = i == words.len() || words[i].clause != words[i - 1].clause;
        if ends {
            let r = start..i;
            start = i;
            Some(r)
        } else {
            None
        }
    })
}

/// Every place a name was heard, clause by clause, left to right. At each word the
/// name's own number of words and one more are tried (see [`best_at`]), and a longer
/// reading is not taken when the next word alone is as close, so "es kotoba" is the
/// name in its second word only and "koto is" does not swallow "is".
fn find_names(words: &[Word], names: &Names) -> Vec<Spot> {
    let mut spots = Vec::new();
    for clause in clauses(words) {
        let mut i = clause.start;
        while i < clause.end {
            match best_at(words, clause.end, i, names) {
                Some(end) => {
                    spots.push(Spot { start: i, end });
                    i = end;
                }
                None => i += 1,
            }
        }
    }
    spots
}

/// The end of the closest name reading that starts at word `i`, if any: the smallest
/// distance; then a reading over the name's own number of words; then the longest.
fn best_at(words: &[Word], limit: usize, i: usize, names: &Names) -> Option<usize> {
    let mut best: Option<(usize, usize, usize)> = None; // (distance, extra words, end)
    for name in &names.names {
        for extra in [0, 1] {
            let end = i + name.words + extra;
            if end > limit {
                continue;
            }
            let Some(d) = distance_to(&joined(&words[i..end]), &name.compact) else {
                continue;
            };
            if extra > 0 && end - 1 > i {
                let later = distance_to(&joined(&words[i + 1..end]), &name.compact);
                if later.is_some_and(|l| l <= d) {
                    continue;
                }
            }
            let better = best.is_none_or(|(bd, bx, be)| {
                (d, extra) < (bd, bx) || ((d, extra) == (bd, bx) && end > be)
            });
            if better {
                best = Some((d, extra, end));
            }
        }
    }
    best.map(|(_, _, end)| end)
}

fn joined(words: &[Word]) -> String {
    words.iter().map(|w| w.folded.as_str()).collect()
}

/// Whether a clause (words `offset..` of the utterance) is addressed to her.
fn addressed(clause: &[Word], offset: usize, spots: &[Spot]) -> bool {
    let end = offset + clause.len();
    let inside: Vec<&Spot> = spots
        .iter()
        .filter(|s| s.start >= offset && s.end <= end)
        .collect();
    if inside.is_empty() {
        return false;
    }
    let lead = leading_greetings(clause);
    clause.len() <= SHORT_CLAUSE_WORDS
        || inside
            .iter()
            .any(|s| s.start == offset + lead || s.end == end)
}

/// How many greeting words open these words (at most [`MAX_GREETINGS`]).
fn leading_greetings(words: &[Word]) -> usize {
    words
        .iter()
        .take(MAX_GREETINGS)
        .take_while(|w| GREETINGS.contains(&w.folded.as_str()))
        .count()
}

/// The text to send her: a name opening the utterance (after any greetings) or closing
/// it is taken out, with its comma, when other words are left; the greetings stay.
fn without_vocative(text: &str, words: &[Word], spots: &[Spot]) -> String {
    let mut cut_front: Option<(usize, usize)> = None; // byte range to remove
    let mut cut_back: Option<(usize, usize)> = None;
    let lead = leading_greetings(words);
    let n = words.len();
    if let Some(s) = spots.first().filter(|s| s.start == lead && s.end < n) {
        let from = words[s.start].start;
        let to = words[s.end].start;
        cut_front = Some((from, to));
    }
    let front_end = cut_front.map_or(lead, |_| spots.first().map_or(lead, |s| s.end));
    if let Some(s) = spots.last().filter(|s| s.end == n && s.start > front_end) {
        let from = words[s.start - 1].end;
        let to = words[n - 1].end;
        cut_back = Some((from, to));
    }
    let left = (0..n).filter(|i| {
        let gone = |r: Option<(usize, usize)>| {
            r.is_some_and(|(a, b)| words[*i].start >= a && words[*i].end <= b)
        };
        !gone(cut_front) && !gone(cut_back) && !GREETINGS.contains(&words[*i].folded.as_str())
    });
    if left.count() == 0 {
        return text.trim().to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    if let Some((from, to)) = cut_front {
        let greeting = text[..from].trim_end().trim_end_matches(',');
        out.push_str(greeting);
        if !greeting.is_empty() {
            out.push_str(", ");
        }
        at = to;
    }
    match cut_back {
        Some((from, to)) => {
            out.push_str(&text[at..from]);
            out.push_str(&text[to..]);
        }
        None => out.push_str(&text[at..]),
    }
    out.trim().to_string()
}
