//! The spoken filter (what of her answer may be said aloud: no code, links, markdown,
//! tool-call leaks, mentions, emoji or audio tags) and sentence streaming ([`Sentences`]).
//!
//! [`spoken`] works on a whole piece of text, usually one sentence that [`Sentences`] has
//! just completed. It removes things rather than describing them, so it is the same in
//! every language; the two exceptions are the link stand-in after a connector word and
//! the pointer said when a piece was nothing but code.

use std::sync::OnceLock;

use regex::{Captures, Regex};

mod leaks;
mod sentences;
#[cfg(test)]
mod tests;

pub use sentences::Sentences;

/// Said instead when everything in a piece of text was code.
pub const CODE_POINTER: &str = "I put the code in the chat.";

/// The longest inline code that is read as a word (`useState`, `README.md`).
const SHORT_WORD: usize = 24;

/// The longest `[…]` that is taken for an audio or emotion tag (`[laughs]`,
/// `[sighs warmly]`) or a citation mark (`[1]`) and dropped whole.
const TAG_LEN: usize = 40;

/// What may be said aloud of `text`.
///
/// - Fenced code blocks are dropped whole; a piece that was nothing but code becomes
///   [`CODE_POINTER`]. Inline code stays as its content when that is one short word
///   (`cargo`, `README.md`), and is dropped otherwise.
/// - Links: `[label](url)` becomes its label, and an image is dropped. A bare URL
///   (`http://`, `https://`, `www.`, or a domain with a path such as `example.com/docs`)
///   is dropped, except right after a word that needs something to follow it ("at",
///   "on", "see", "is", a colon; Spanish "en", "es", "visita"…), where it becomes "the
///   link" (or "el enlace"), so "the docs are at https://…" does not end beheaded.
///   File paths (`/home/me/notes.txt`, `~/x`, `C:\x`) are treated the same way, with
///   "your files" (or "tus archivos") as the stand-in.
/// - Markdown becomes plain words: heading, quote, bullet, numbered-list and checkbox
///   markers go; a table row becomes its cells joined with commas; horizontal rules and
///   table rulers go. A heading, list item or table row that ends without punctuation
///   gets a full stop, so it is heard as its own phrase.
/// - Tool-call leaks are dropped: JSON objects carrying "name"/"arguments" or
///   "tool"/"parameters", `<tool_call>…</tool_call>`, `<function=…>…</function>`,
///   thinking blocks, calls like `functions.shell({...})`, `to=functions.x`, chat-format
///   tokens such as `<|call|>`, and JSON objects standing on lines of their own.
/// - Discord mentions, channels, roles, timestamps and custom emoji are dropped, as are
///   emoji, HTML tags and short `[…]` tags (her audio/emotion tags, citation marks).
/// - Whitespace is collapsed and no markup character (`*`, `#`, backticks, `|`, `~`,
///   brackets, braces) is ever returned. Text with nothing speakable left in it (no
///   letter or digit) gives an empty string.
pub fn spoken(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let text = leaks::drop_tagged_leaks(&text);
    let (text, mut had_code) = drop_fences(&text);
    let text = leaks::drop_tool_calls(&text);
    let text = plain_lines(&text);
    let (text, dropped_code) = inline_code(&text);
    had_code |= dropped_code;
    let text = inline(&text);
    let text = tidy(&text);
    if text.chars().any(char::is_alphanumeric) {
        text
    } else if had_code {
        CODE_POINTER.to_string()
    } else {
        String::new()
    }
}

/// A compiled pattern, or none if it failed to compile (then that rule is skipped).
fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// Replace every match of the pattern (if it compiled) using `with`.
fn replace(
    text: &str,
    pattern: Option<&Regex>,
    with: impl FnMut(&Captures<'_>) -> String,
) -> String {
    match pattern {
        Some(p) => p.replace_all(text, with).into_owned(),
        None => text.to_string(),
    }
}

/// A line that opens or closes a fence: its character and how many of it.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// Fenced code blocks removed (an unclosed one runs to the end), and whether there was
/// one.
fn drop_fences(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<(char, usize)> = None;
    let mut had = false;
    for line in text.split_inclusive('\n') {
        match (open, fence_marker(line)) {
            (None, Some(m)) => {
                open = Some(m);
                had = true;
            }
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && closes(line, c) => {
                open = None;
                out.push('\n');
            }
            (Some(_), _) => {}
            (None, None) => out.push_str(line),
        }
    }
    (out, had)
}

/// A closing fence line holds only the fence characters.
fn closes(line: &str, c: char) -> bool {
    line.trim().chars().all(|x| x == c)
}

/// Line markup made plain: headings, quotes, bullets, numbers, checkboxes, tables and
/// rules.
fn plain_lines(text: &str) -> String {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let mut t = line.trim();
        if is_rule(t) || is_table_ruler(t) {
            continue;
        }
        let mut structural = false;
        while let Some(rest) = t.strip_prefix('>') {
            t = rest.trim_start();
        }
        if let Some(rest) = heading_text(t) {
            t = rest;
            structural = true;
        }
        if let Some(rest) = list_item_text(t) {
            t = rest;
            structural = true;
            for box_ in ["[ ] ", "[x] ", "[X] "] {
                if let Some(r) = t.strip_prefix(box_) {
                    t = r.trim_start();
                }
            }
        }
        let mut line = if t.starts_with('|') || (t.ends_with('|') && t.contains(' ')) {
            structural = true;
            let cells: Vec<&str> = t
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            cells.join(", ")
        } else {
            t.to_string()
        };
        if structural && !line.is_empty() && !line.ends_with(PUNCTUATION) {
            line.push('.');
        }
        out.push(line);
    }
    out.join("\n")
}

/// Punctuation that already ends a phrase.
const PUNCTUATION: &[char] = &['.', '!', '?', '…', ':', ';', ',', '。', '！', '？'];

/// A horizontal rule: three or more of one of `-`, `*`, `_`, nothing else but spaces.
fn is_rule(t: &str) -> bool {
    let marks: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3
        && ['-', '*', '_']
            .iter()
            .any(|m| marks.chars().all(|c| c == *m))
}

/// A table's header ruler: `|---|:--:|`.
fn is_table_ruler(t: &str) -> bool {
    t.contains('-')
        && t.contains('|')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// The text of a heading line without its `#` marks.
fn heading_text(t: &str) -> Option<&str> {
    let hashes = t.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim_end())
}

/// The text of a bullet or numbered list item without its marker.
fn list_item_text(t: &str) -> Option<&str> {
    for bullet in ["- ", "* ", "+ ", "• ", "· "] {
        if let Some(rest) = t.strip_prefix(bullet) {
            return Some(rest.trim_start());
        }
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let rest = &t[digits..];
        for mark in [". ", ") "] {
            if let Some(r) = rest.strip_prefix(mark) {
                return Some(r.trim_start());
            }
        }
    }
    None
}

/// Inline code spans: a short word stays as itself, anything else goes. Returns whether
/// any code was dropped.
fn inline_code(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut dropped = false;
    let mut rest = text;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|c| *c == '`').count();
        let ticks = &rest[at..at + run];
        let body_start = at + run;
        match find_run(&rest[body_start..], ticks) {
            Some(end) => {
                let body = rest[body_start..body_start + end].trim();
                if is_short_word(body) {
                    out.push_str(body);
                } else {
                    out.push(' ');
                    dropped = true;
                }
                rest = &rest[body_start + end + run..];
            }
            None => {
                rest = &rest[body_start..];
            }
        }
    }
    out.push_str(rest);
    (out, dropped)
}

/// Where a run of exactly `ticks` backticks starts in `text`.
fn find_run(text: &str, ticks: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(ticks) {
        let at = from + i;
        let after = &text[at + ticks.len()..];
        let before_tick = at > 0 && text[..at].ends_with('`');
        if !after.starts_with('`') && !before_tick {
            return Some(at);
        }
        from = at + ticks.len() + after.chars().take_while(|c| *c == '`').count();
    }
    None
}

/// One short word: letters or digits, with `.`, `-`, `_` or `'` inside.
fn is_short_word(s: &str) -> bool {
    let count = s.chars().count();
    (1..=SHORT_WORD).contains(&count)
        && s.chars().next().is_some_and(char::is_alphanumeric)
        && s.chars().any(char::is_alphabetic)
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '\''))
}

/// Links, URLs, mentions, tags and emoji.
fn inline(text: &str) -> String {
    static IMAGE: OnceLock<Option<Regex>> = OnceLock::new();
    static LINK: OnceLock<Option<Regex>> = OnceLock::new();
    static AUTOLINK: OnceLock<Option<Regex>> = OnceLock::new();
    static DISCORD: OnceLock<Option<Regex>> = OnceLock::new();
    static HTML: OnceLock<Option<Regex>> = OnceLock::new();
    static TAG: OnceLock<Option<Regex>> = OnceLock::new();
    let t = replace(text, re(&IMAGE, r"!\[[^\]\n]*\]\([^)\n]*\)"), |_| {
        String::new()
    });
    let t = replace(&t, re(&LINK, r"\[([^\[\]\n]*)\]\([^)\n]*\)"), |c| {
        c[1].to_string()
    });
    let t = replace(&t, re(&AUTOLINK, r"<((?:https?://|www\.)[^\s<>]+)>"), |c| {
        c[1].to_string()
    });
    let t = replace(
        &t,
        re(
            &DISCORD,
            r"<(?:@[!&]?\d+|#\d+|a?:\w+:\d+|t:-?\d+(?::[a-zA-Z])?|id:\w+|/[\w -]+:\d+)>",
        ),
        |_| " ".to_string(),
    );
    let t = replace(
        &t,
        re(&HTML, r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>"),
        |_| " ".to_string(),
    );
    let t = urls(&t);
    let tag = format!(r"\[[^\[\]\n]{{0,{TAG_LEN}}}\]");
    let t = replace(&t, re(&TAG, &tag), |_| " ".to_string());
    let t: String = t.chars().filter(|c| !is_emoji(*c)).collect();
    emphasis(&t)
}

/// Bare URLs and file paths: a stand-in after a connector word, nothing otherwise.
fn urls(text: &str) -> String {
    static URL: OnceLock<Option<Regex>> = OnceLock::new();
    static PATH: OnceLock<Option<Regex>> = OnceLock::new();
    let t = unspeakable(
        text,
        re(
            &URL,
            r#"(?i)\b(?:https?://|www\.[a-z0-9-])[^\s<>"'\]\[(){}]*|\b(?:[a-z0-9-]+\.)+[a-z]{2,}/[^\s<>"'\]\[(){}]*"#,
        ),
        ("the link", "el enlace"),
    );
    unspeakable(
        &t,
        re(
            &PATH,
            r"(?:~|\.{1,2})/[\w.-]+(?:/[\w.-]+)*/?|/[\w.-]+(?:/[\w.-]+)+/?|\b[A-Za-z]:\\[^\s]+",
        ),
        ("your files", "tus archivos"),
    )
}

/// Every match of `pattern` that starts a word replaced by the stand-in for the
/// connector word before it (English, Spanish), or by nothing; sentence punctuation at
/// its end is kept.
fn unspeakable(text: &str, pattern: Option<&Regex>, stand_ins: (&str, &str)) -> String {
    let Some(pattern) = pattern else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in pattern.find_iter(text) {
        let glued = text[..m.start()]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '/' || c == '.');
        if glued {
            continue;
        }
        out.push_str(&text[last..m.start()]);
        let body = m.as_str();
        let kept = body.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '"']);
        match connector(&text[..m.start()]) {
            Some(Language::English) => out.push_str(stand_ins.0),
            Some(Language::Spanish) => out.push_str(stand_ins.1),
            None => {}
        }
        out.push_str(&body[kept.len()..]);
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

/// The language of a connector word.
enum Language {
    English,
    Spanish,
}

/// The language of the word just before a link or path when that word needs something
/// to follow it (a preposition, a copula, a colon); none otherwise.
fn connector(before: &str) -> Option<Language> {
    const EN: &[&str] = &[
        "at", "on", "to", "from", "in", "into", "via", "through", "under", "visit", "see", "open",
        "check", "is", "are", "was", "were", "here's", "it's", "that's",
    ];
    const ES: &[&str] = &[
        "en", "a", "al", "de", "del", "desde", "es", "está", "esta", "son", "visita", "abre",
        "mira", "aquí",
    ];
    let b = before.trim_end();
    if b.ends_with(':') {
        return Some(Language::English);
    }
    let tail: Vec<char> = b
        .chars()
        .rev()
        .take_while(|c| c.is_alphabetic() || *c == '\'' || *c == '’')
        .collect();
    let word: String = tail.into_iter().rev().collect::<String>().to_lowercase();
    let word = word.replace('’', "'");
    if EN.contains(&word.as_str()) {
        Some(Language::English)
    } else if ES.contains(&word.as_str()) {
        Some(Language::Spanish)
    } else {
        None
    }
}

/// Emoji, their joiners, variation selectors, skin tones, flags and keycaps.
fn is_emoji(c: char) -> bool {
    matches!(
        c as u32,
        0x1F000..=0x1FAFF
            | 0x2600..=0x27BF
            | 0x2300..=0x23FF
            | 0x2B00..=0x2BFF
            | 0xFE00..=0xFE0F
            | 0x200D
            | 0x20E3
            | 0x3030
            | 0x303D
            | 0x3297
            | 0x3299
            | 0xE0020..=0xE007F
    )
}

/// Bold, italic and strike marks removed; an underscore inside a word becomes a space
/// (`file_name` is said as two words), one at a word's edge goes.
fn emphasis(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, c) in chars.iter().enumerate() {
        match c {
            '*' | '~' | '`' | '#' | '|' | '[' | ']' | '{' | '}' => out.push(' '),
            '_' => {
                let inside = i > 0
                    && chars[i - 1].is_alphanumeric()
                    && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
                if inside {
                    out.push(' ');
                }
            }
            '\\' if chars.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) => {}
            '@' if (i == 0 || chars[i - 1].is_whitespace())
                && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric()) => {}
            _ => out.push(*c),
        }
    }
    out
}

/// Whitespace collapsed; spaces before punctuation, empty brackets and dangling commas
/// left by removals tidied away.
fn tidy(text: &str) -> String {
    static SPACE_PUNCT: OnceLock<Option<Regex>> = OnceLock::new();
    static EMPTY_PARENS: OnceLock<Option<Regex>> = OnceLock::new();
    static COMMA_STOP: OnceLock<Option<Regex>> = OnceLock::new();
    static REPEATED: OnceLock<Option<Regex>> = OnceLock::new();
    let t = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = replace(&t, re(&EMPTY_PARENS, r"\(\s*[,.;:]*\s*\)"), |_| {
        String::new()
    });
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = replace(
        &t,
        re(&SPACE_PUNCT, r"\s+([.,!?;:…)。、！？])"),
        |c| c[1].to_string(),
    );
    let t = replace(&t, re(&COMMA_STOP, r"[,;:]+([.!?…])"), |c| {
        c[1].to_string()
    });
    let t = replace(&t, re(&REPEATED, r"([,;:])[,;:]+"), |c| c[1].to_string());
    t.trim_start_matches([',', ';', ':', '.', ' ', ')'])
        .trim_end_matches([',', ';', ' ', '('])
        .to_string()
}
