//! Sentences of an answer while it streams, so she starts speaking when the first one
//! is complete rather than when the whole answer is.

use super::{heading_text, list_item_text};

/// Marks that end a sentence when whitespace follows them (and their runs: `?!`, `...`).
const TERMINALS: &[char] = &['.', '!', '?', '…'];
/// Full stops of scripts written without a space after them; they end a sentence at once.
const UNSPACED: &[char] = &['。', '！', '？'];
/// What may close a sentence after its mark: quotes, brackets, emphasis.
const CLOSERS: &[char] = &[
    '"', '\'', '”', '’', '»', ')', ']', '}', '」', '』', '）', '*', '_', '`',
];
/// Words a single full stop does not end a sentence after (English and Spanish titles and
/// Latin shorthand). Initials and dotted letters (`J.`, `e.g.`, `U.S.`) are caught apart.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "sra", "srta", "jr", "st", "vs", "etc", "cf", "approx",
    "aprox", "ej", "fig", "vol", "dra", "ud", "uds", "inc", "ltd",
];
/// Text held with no sentence end is cut at its last space after this many characters
/// (outside code fences), so a reply without punctuation still reaches her voice and no
/// synthesis request grows past a provider's limit.
const MAX_HELD: usize = 500;

/// A streaming sentence splitter.
///
/// [`push`](Sentences::push) takes the answer's deltas as they arrive and returns the
/// sentences they completed, trimmed, as raw text (apply [`super::spoken`] to each);
/// [`finish`](Sentences::finish) returns what is left and makes the splitter fresh
/// again, so it can also be called at a tool-call seam. However the text is split into
/// deltas, the sentences are the same as for the whole text pushed at once.
///
/// A sentence ends:
/// - at `.` `!` `?` `…` or a run of them (`?!`, `...`), with any closing quotes, brackets
///   or emphasis marks, when whitespace follows, unless the next word starts with a
///   lower-case letter (`Well... maybe`, `"Why?" she asked`: the same sentence goes on)
///   or a single `.` follows an abbreviation (`e.g.`, `Mr.`, `Dr.`, `etc.`, an initial) or
///   is a numbered-list marker (`2. `). Numbers (`3.5`) and links (`example.com/x`) never
///   have whitespace after their dots, so they never end one;
/// - at once after `。` `！` `？`;
/// - at a blank line, and at the end of a list item, heading or table row line;
/// - after the line that closes a fenced code block. Inside a fence nothing ends a
///   sentence: the block is held whole, with the words before it, until it closes;
/// - after 500 characters with no end, at the last space.
///
/// Short fragments: the first sentence is never held, so her first words are as early as
/// they can be. After it, a fragment of one word ("Okay.") is held and said together with
/// the sentence that follows it, one sentence later; a held fragment is never held
/// twice, and `finish` releases it.
#[derive(Debug, Clone)]
pub struct Sentences {
    /// Text received and not yet returned, starting at a non-blank character.
    pending: String,
    /// Whether `pending` starts at the beginning of a line.
    line_start: bool,
    /// Whether a sentence was returned since the splitter was fresh.
    said: bool,
    /// A one-word fragment waiting for the next sentence.
    held: Option<String>,
}

impl Default for Sentences {
    fn default() -> Self {
        Self::new()
    }
}

/// The outcome of looking for the end of the first sentence in the pending text.
enum Scan {
    /// The sentence is `..end`; the next one starts at `next` (character indices).
    Cut { end: usize, next: usize },
    /// No end can be decided without more text.
    More,
}

impl Sentences {
    /// A fresh splitter.
    pub fn new() -> Self {
        Sentences {
            pending: String::new(),
            line_start: true,
            said: false,
            held: None,
        }
    }

    /// Add a delta of the answer; returns the sentences it completed.
    pub fn push(&mut self, delta: &str) -> Vec<String> {
        self.pending.push_str(delta);
        let mut out = Vec::new();
        loop {
            let blank = self.pending.len() - self.pending.trim_start().len();
            if blank > 0 {
                if self.pending[..blank].contains('\n') {
                    self.line_start = true;
                }
                self.pending.drain(..blank);
            }
            if self.pending.is_empty() {
                break;
            }
            let starts_line = self.line_start;
            let Scan::Cut { end, next } = scan(&self.pending, self.line_start) else {
                break;
            };
            let (end, next) = (byte_at(&self.pending, end), byte_at(&self.pending, next));
            let sentence = self.pending[..end].trim().to_string();
            self.line_start = self.pending[..next].ends_with('\n');
            self.pending.drain(..next);
            if !sentence.is_empty() {
                self.emit(sentence, starts_line, &mut out);
            }
        }
        out
    }

    /// The rest of the answer (with any held fragment), or none if nothing is left; the
    /// splitter is fresh afterwards.
    pub fn finish(&mut self) -> Option<String> {
        let rest = self.pending.trim().to_string();
        let held = self.held.take();
        let gap = if self.line_start { '\n' } else { ' ' };
        *self = Sentences::new();
        match (held, rest.is_empty()) {
            (Some(h), true) => Some(h),
            (Some(h), false) => Some(format!("{h}{gap}{rest}")),
            (None, true) => None,
            (None, false) => Some(rest),
        }
    }

    /// Pass a completed sentence on, holding a one-word fragment after the first. A held
    /// fragment is joined to the next sentence by a line break when that sentence began
    /// a line (so a list or table keeps its lines for [`super::spoken`]), else a space.
    fn emit(&mut self, sentence: String, starts_line: bool, out: &mut Vec<String>) {
        if !self.said {
            self.said = true;
            out.push(sentence);
        } else if let Some(h) = self.held.take() {
            let gap = if starts_line { '\n' } else { ' ' };
            out.push(format!("{h}{gap}{sentence}"));
        } else if sentence.split_whitespace().count() < 2 {
            self.held = Some(sentence);
        } else {
            out.push(sentence);
        }
    }
}

/// The byte offset of character `i` in `text` (its length past the end).
fn byte_at(text: &str, i: usize) -> usize {
    text.char_indices().nth(i).map_or(text.len(), |(b, _)| b)
}

/// Find the end of the first sentence of `text`, which starts at a non-blank character
/// (at the beginning of a line when `line_start`).
fn scan(text: &str, line_start: bool) -> Scan {
    let cs: Vec<char> = text.chars().collect();
    let len = cs.len();
    let next_newline = |from: usize| (from..len).find(|i| cs[*i] == '\n');
    let mut fence: Option<(char, usize)> = None;
    let mut line_begin = 0;
    let mut real_line = line_start;
    let mut last_space: Option<usize> = None;
    let mut k = 0;
    while k < len {
        if fence.is_none() && k >= MAX_HELD {
            let at = last_space.filter(|s| *s > 0).unwrap_or(k);
            return Scan::Cut { end: at, next: at };
        }
        let starts_line = if k == 0 {
            line_start
        } else {
            cs[k - 1] == '\n'
        };
        if starts_line {
            line_begin = k;
            real_line = true;
            let m = (k..len)
                .find(|i| cs[*i] != ' ' && cs[*i] != '\t')
                .unwrap_or(len);
            if m == len {
                return Scan::More;
            }
            if cs[m] == '`' || cs[m] == '~' {
                let run = (m..len).take_while(|i| cs[*i] == cs[m]).count();
                if m + run == len {
                    return Scan::More;
                }
                match fence {
                    None if run >= 3 => {
                        fence = Some((cs[m], run));
                        match next_newline(m + run) {
                            Some(nl) => {
                                k = nl + 1;
                                continue;
                            }
                            None => return Scan::More,
                        }
                    }
                    Some((c, n)) if cs[m] == c && run >= n => match next_newline(m + run) {
                        None => return Scan::More,
                        Some(nl) if cs[m + run..nl].iter().all(|x| x.is_whitespace()) => {
                            return Scan::Cut {
                                end: nl,
                                next: nl + 1,
                            };
                        }
                        Some(_) => {}
                    },
                    _ => {}
                }
            }
            if fence.is_some() {
                match next_newline(k) {
                    Some(nl) => {
                        k = nl + 1;
                        continue;
                    }
                    None => return Scan::More,
                }
            }
        }
        let c = cs[k];
        if c.is_whitespace() {
            last_space = Some(k);
        }
        if c == '\n' {
            let line: String = cs[line_begin..k].iter().collect();
            if real_line && is_block_line(&line) {
                return Scan::Cut {
                    end: k,
                    next: k + 1,
                };
            }
            let j = (k + 1..len).find(|i| !matches!(cs[*i], ' ' | '\t' | '\r'));
            match j {
                None => return Scan::More,
                Some(j) if cs[j] == '\n' => {
                    return Scan::Cut {
                        end: k,
                        next: j + 1,
                    }
                }
                Some(_) => {}
            }
        } else if TERMINALS.contains(&c) || UNSPACED.contains(&c) {
            let unspaced = UNSPACED.contains(&c);
            let mut j = k;
            while j + 1 < len && (TERMINALS.contains(&cs[j + 1]) || UNSPACED.contains(&cs[j + 1])) {
                j += 1;
            }
            let mut e = j;
            while e + 1 < len && CLOSERS.contains(&cs[e + 1]) {
                e += 1;
            }
            if e + 1 == len {
                return Scan::More;
            }
            if unspaced {
                return Scan::Cut {
                    end: e + 1,
                    next: e + 1,
                };
            }
            let single_dot = j == k && c == '.';
            let guarded = single_dot
                && ((real_line && is_list_number(&cs[line_begin..k])) || is_abbreviation(&cs[..k]));
            if !cs[e + 1].is_whitespace() || guarded {
                k = e + 1;
                continue;
            }
            let n = (e + 1..len).find(|i| !cs[*i].is_whitespace());
            let newlines = cs[e + 1..n.unwrap_or(len)]
                .iter()
                .filter(|x| **x == '\n')
                .count();
            if newlines < 2 {
                match n {
                    None => return Scan::More,
                    Some(n) if cs[n].is_lowercase() => {
                        k = e + 1;
                        continue;
                    }
                    Some(_) => {}
                }
            }
            return Scan::Cut {
                end: e + 1,
                next: e + 1,
            };
        }
        k += 1;
    }
    Scan::More
}

/// A list item, heading or table row line.
fn is_block_line(line: &str) -> bool {
    let t = line.trim_start();
    heading_text(t).is_some() || list_item_text(t).is_some() || t.starts_with('|')
}

/// The digits of a numbered-list marker, from the start of the line.
fn is_list_number(prefix: &[char]) -> bool {
    let digits: Vec<&char> = prefix.iter().filter(|c| !c.is_whitespace()).collect();
    (1..=9).contains(&digits.len()) && digits.iter().all(|c| c.is_ascii_digit())
}

/// Whether the word before a full stop is an abbreviation or an initial.
fn is_abbreviation(before: &[char]) -> bool {
    let start = before
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |i| i + 1);
    let word: String = before[start..]
        .iter()
        .collect::<String>()
        .trim_start_matches(['(', '[', '"', '\'', '“', '‘', '¿', '¡', '*', '_'])
        .to_lowercase();
    if word.is_empty() {
        return false;
    }
    ABBREVIATIONS.contains(&word.as_str())
        || word
            .split('.')
            .all(|part| part.chars().count() == 1 && part.chars().all(char::is_alphabetic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every sentence of `text` pushed in the given pieces, the rest included.
    fn split(pieces: &[&str]) -> Vec<String> {
        let mut s = Sentences::new();
        let mut out: Vec<String> = pieces.iter().flat_map(|p| s.push(p)).collect();
        out.extend(s.finish());
        out
    }

    fn whole(text: &str) -> Vec<String> {
        split(&[text])
    }

    #[test]
    fn sentence_ends_are_found_where_a_listener_hears_them() {
        let table: &[(&str, &[&str])] = &[
            ("Hi there. How are you?", &["Hi there.", "How are you?"]),
            ("Really?! Yes.", &["Really?!", "Yes."]),
            (
                "He said \"stop.\" Then he left.",
                &["He said \"stop.\"", "Then he left."],
            ),
            (
                "It costs 3.5 euros. Cheap.",
                &["It costs 3.5 euros.", "Cheap."],
            ),
            (
                "Use a tool, e.g. a hammer. Done now.",
                &["Use a tool, e.g. a hammer.", "Done now."],
            ),
            (
                "Ask Dr. Smith and Mr. Jones today. Now.",
                &["Ask Dr. Smith and Mr. Jones today.", "Now."],
            ),
            (
                "Apples, pears, etc. Also plums.",
                &["Apples, pears, etc. Also plums."],
            ),
            (
                "Read example.com/x first. Then go.",
                &["Read example.com/x first.", "Then go."],
            ),
            (
                "Well... maybe not. Okay then.",
                &["Well... maybe not.", "Okay then."],
            ),
            (
                "Wait… It worked! Great news.",
                &["Wait…", "It worked!", "Great news."],
            ),
            ("First part\n\nSecond part", &["First part", "Second part"]),
            ("Line one\nline two.", &["Line one\nline two."]),
            (
                "Steps:\n- open it\n- run it\nDone here.",
                &["Steps:\n- open it", "- run it", "Done here."],
            ),
            (
                "1. Open the file.\n2. Save the file.",
                &["1. Open the file.", "2. Save the file."],
            ),
            ("# Title\nSome text here.", &["# Title", "Some text here."]),
            (
                "これは本です。あれも本です。",
                &["これは本です。", "あれも本です。"],
            ),
            (
                "**Done.** Next thing here.",
                &["**Done.**", "Next thing here."],
            ),
            (
                "J. R. R. Tolkien wrote it. Yes indeed.",
                &["J. R. R. Tolkien wrote it.", "Yes indeed."],
            ),
        ];
        for (text, want) in table {
            assert_eq!(whole(text), *want, "{text:?}");
        }
    }

    #[test]
    fn a_code_fence_is_held_whole_until_it_closes() {
        let text =
            "Here it is:\n```rust\nfn main() { x. Y! }\n\nlet a = 1;\n```\nThat was it. Bye now.";
        assert_eq!(
            whole(text),
            [
                "Here it is:\n```rust\nfn main() { x. Y! }\n\nlet a = 1;\n```",
                "That was it.",
                "Bye now."
            ]
        );
        let mut s = Sentences::new();
        assert!(s.push("Look.\n``").len() == 1);
        assert!(
            s.push("`\nA. B. C.\n\n").is_empty(),
            "nothing leaves an open fence"
        );
        assert_eq!(s.push("``").len(), 0);
        assert_eq!(s.push("`\nafter").len(), 1);
        assert_eq!(s.finish().as_deref(), Some("after"));
    }

    #[test]
    fn the_first_sentence_leaves_as_soon_as_it_is_complete() {
        let mut s = Sentences::new();
        assert!(s.push("Sure").is_empty());
        assert!(
            s.push(".").is_empty(),
            "a mark at the very end may still grow"
        );
        assert!(
            s.push(" ").is_empty(),
            "the next word decides a lower-case continuation"
        );
        assert_eq!(s.push("L"), ["Sure."]);
        assert!(s.push("et me check").is_empty());
        assert_eq!(s.finish().as_deref(), Some("Let me check"));
    }

    #[test]
    fn a_one_word_fragment_after_the_first_sentence_rides_with_the_next() {
        let text = "Okay. That went well. Right. Now the second part. Fine.";
        assert_eq!(
            whole(text),
            [
                "Okay.",
                "That went well.",
                "Right. Now the second part.",
                "Fine."
            ]
        );
        let mut s = Sentences::new();
        s.push("I checked it. Done. ");
        assert_eq!(
            s.finish().as_deref(),
            Some("Done."),
            "finish releases a held fragment"
        );
    }

    #[test]
    fn a_reply_without_punctuation_is_cut_at_a_space_after_five_hundred_characters() {
        let text = "word ".repeat(300);
        let out = whole(&text);
        assert!(out.len() >= 3, "{}", out.len());
        assert!(out.iter().all(|s| s.chars().count() <= MAX_HELD));
        assert!(out.iter().all(|s| s.split(' ').all(|w| w == "word")));
    }

    #[test]
    fn finish_makes_the_splitter_fresh() {
        let mut s = Sentences::new();
        s.push("One two. Three");
        assert_eq!(s.finish().as_deref(), Some("Three"));
        assert_eq!(s.finish(), None);
        assert_eq!(s.push("Ok. More words here. "), ["Ok."]);
    }

    fn pieces() -> impl Strategy<Value = String> {
        let atoms = prop::sample::select(vec![
            "Hello",
            "world",
            "it",
            "the",
            "e.g.",
            "i.e.",
            "Mr.",
            "Dr.",
            "etc.",
            "3.5",
            "10",
            ".",
            "!",
            "?",
            "...",
            "…",
            "?!",
            " ",
            " ",
            " ",
            "\n",
            "\n\n",
            "```",
            "```\n",
            "~~~",
            "- ",
            "1. ",
            "# ",
            "| a | b |",
            "example.com/x",
            "https://a.b/c?d=1.",
            "\"",
            ")",
            "**",
            "。",
            "Ok",
            "yes",
            "J.",
            "``",
            "`x`",
            "\t",
            "word",
        ]);
        prop::collection::vec(atoms, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn random_splits_give_the_same_sentences_as_the_whole_text(
            text in pieces(),
            cuts in prop::collection::vec(0usize..400, 0..12),
        ) {
            let chars: Vec<char> = text.chars().collect();
            let mut at: Vec<usize> = cuts.into_iter().map(|c| c % (chars.len() + 1)).collect();
            at.sort_unstable();
            let mut parts = Vec::new();
            let mut from = 0;
            for c in at.into_iter().chain([chars.len()]) {
                parts.push(chars[from..c].iter().collect::<String>());
                from = c;
            }
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            prop_assert_eq!(split(&parts), whole(&text));
        }

        #[test]
        fn no_text_is_lost_or_invented(text in pieces()) {
            let said: String = whole(&text).concat();
            let strip = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
            prop_assert_eq!(strip(&said), strip(&text));
        }
    }
}
