//! Tool-call leaks: the syntax of a tool call (or of hidden reasoning) that a model
//! sometimes writes into its answer text, found so the spoken filter can drop it.
//!
//! A JSON object is a leak when it has the shape of a call ("name" with "arguments",
//! "tool" with "parameters"), when it stands on lines of its own, or when it sits
//! against a call's recipient (`to=functions.x`, `functions.x`, a chat-format token).
//! A bare `functions.map` in a sentence is prose and stays.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

use super::{re, replace};

/// Tagged blocks removed whole (an unclosed one runs to the end): tool-call tags,
/// `<function=…>` blocks and thinking blocks; chat-format tokens (`<|call|>`) removed.
pub(super) fn drop_tagged_leaks(text: &str) -> String {
    static CALL_TAGS: OnceLock<Option<Regex>> = OnceLock::new();
    static FUNCTION: OnceLock<Option<Regex>> = OnceLock::new();
    static THINKING: OnceLock<Option<Regex>> = OnceLock::new();
    static CHANNEL: OnceLock<Option<Regex>> = OnceLock::new();
    static TOKEN: OnceLock<Option<Regex>> = OnceLock::new();
    let blank = |_: &regex::Captures<'_>| " ".to_string();
    let t = replace(
        text,
        re(
            &CALL_TAGS,
            r"(?s)<(?:tool_calls?|tool_use|function_calls?|tool_code|invoke)\b[^>]*>.*?(?:</(?:tool_calls?|tool_use|function_calls?|tool_code|invoke)>|\z)",
        ),
        blank,
    );
    let t = replace(
        &t,
        re(&FUNCTION, r"(?s)<function=[^>]*>.*?(?:</function>|\z)"),
        blank,
    );
    let t = replace(
        &t,
        re(
            &THINKING,
            r"(?s)<(?:think|thinking|reasoning)>.*?(?:</(?:think|thinking|reasoning)>|\z)",
        ),
        blank,
    );
    let t = replace(
        &t,
        re(&CHANNEL, r"<\|(?:channel|constrain)\|>\s*\w*"),
        blank,
    );
    replace(&t, re(&TOKEN, r"<\|[A-Za-z0-9_]{1,40}\|>"), blank)
}

/// Call recipients, call expressions and leaked JSON objects removed.
pub(super) fn drop_tool_calls(text: &str) -> String {
    static RECIPIENT: OnceLock<Option<Regex>> = OnceLock::new();
    static CALLEE: OnceLock<Option<Regex>> = OnceLock::new();
    let mut drop: Vec<Range<usize>> = Vec::new();
    let mut bare: Vec<Range<usize>> = Vec::new();
    if let Some(r) = re(&RECIPIENT, r"\bto=[^\s{(<]+") {
        drop.extend(r.find_iter(text).map(|m| m.range()));
    }
    if let Some(r) = re(&CALLEE, r"\b(?:functions|multi_tool_use)\.[A-Za-z_][\w.]*") {
        for m in r.find_iter(text) {
            let after = &text[m.end()..];
            let gap = after.len() - after.trim_start().len();
            if after.trim_start().starts_with('(') {
                let open = m.end() + gap;
                let end = balanced(text, open, '(', ')').unwrap_or_else(|| line_end(text, open));
                drop.push(m.start()..end);
            } else {
                bare.push(m.range());
            }
        }
    }
    let mut objects = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find('{') {
        let start = at + i;
        if drop.iter().any(|r| r.contains(&start)) {
            at = start + 1;
            continue;
        }
        match balanced(text, start, '{', '}') {
            Some(end) => {
                objects.push(start..end);
                at = end;
            }
            None => {
                if on_own_line(text, start, text.len()) && keyed(&text[start..]) {
                    drop.push(start..line_end(text, start));
                }
                at = start + 1;
            }
        }
    }
    let markers: Vec<Range<usize>> = drop.iter().chain(bare.iter()).cloned().collect();
    for o in objects {
        let body = &text[o.clone()];
        let leaked = call_shaped(body)
            || (on_own_line(text, o.start, o.end) && (keyed(body) || body == "{}"))
            || markers.iter().any(|m| touching(text, m, &o));
        if leaked {
            drop.push(o);
        }
    }
    let dropped = drop.clone();
    drop.extend(
        bare.into_iter()
            .filter(|b| dropped.iter().any(|d| touching(text, b, d))),
    );
    cut(text, drop)
}

/// `text` with the ranges replaced by a space each.
fn cut(text: &str, mut ranges: Vec<Range<usize>>) -> String {
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in ranges {
        if r.end <= at {
            continue;
        }
        out.push_str(&text[at..r.start.max(at)]);
        out.push(' ');
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Where the bracket opened at `open` closes (one past it), skipping JSON strings.
fn balanced(text: &str, open: usize, left: char, right: char) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[open..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        } else if c == left {
            depth += 1;
        } else if c == right {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(open + i + c.len_utf8());
            }
        }
    }
    None
}

/// The end of the line holding byte `at`.
fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |i| at + i)
}

/// Whether `start..end` has only blanks before it on its first line and only blanks,
/// commas or semicolons after it on its last.
fn on_own_line(text: &str, start: usize, end: usize) -> bool {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..start].trim();
    let after = &text[end..line_end(text, end)];
    before.is_empty()
        && after
            .chars()
            .all(|c| c.is_whitespace() || c == ',' || c == ';')
}

/// An object that opens with a quoted key: `{"…": …`.
fn keyed(body: &str) -> bool {
    let inner = body.trim_start_matches('{').trim_start();
    inner.starts_with('"') && (inner.contains("\":") || inner.contains("\" :"))
}

/// An object with the shape of a tool call.
fn call_shaped(body: &str) -> bool {
    static NAME: OnceLock<Option<Regex>> = OnceLock::new();
    static ARGS: OnceLock<Option<Regex>> = OnceLock::new();
    let name = re(
        &NAME,
        r#""(?:name|tool|tool_name|function|recipient_name)"\s*:"#,
    );
    let args = re(&ARGS, r#""(?:arguments|parameters|args|input)"\s*:"#);
    match (name, args) {
        (Some(n), Some(a)) => n.is_match(body) && a.is_match(body),
        _ => false,
    }
}

/// Whether two ranges have nothing but blanks between them.
fn touching(text: &str, a: &Range<usize>, b: &Range<usize>) -> bool {
    let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
    first.end <= second.start && text[first.end..second.start].trim().is_empty()
}
