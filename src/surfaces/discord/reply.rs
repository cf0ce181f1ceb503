//! Her written answer, made fit for Discord: link tidying (tracking parameters
//! stripped, previews suppressed for bare links), the users she means to ping, and the
//! fence-safe split into ≤ 2000-character parts (at most five, the last saying so).

use std::sync::OnceLock;

use regex::Regex;

/// Discord's message length limit, in characters.
pub const LIMIT: usize = 2000;
/// The most parts one answer is sent in.
pub const MAX_PARTS: usize = 5;
/// Added to the fifth part when the answer did not fit.
pub const CUT_NOTE: &str = "\n*(The answer was too long for Discord, so it was cut here.)*";

/// Query parameters that only track the reader.
const TRACKING: &[&str] = &[
    "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "yclid", "_hsenc",
    "_hsmi", "ref_src", "si",
];

fn url_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"<?https?://[^\s<>()\[\]`]+>?").ok())
        .as_ref()
}

/// Strip tracking parameters from a URL.
pub fn strip_tracking(url: &str) -> String {
    let (base, frag) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let Some((path, query)) = base.split_once('?') else {
        return url.to_string();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| {
            let k = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
            !(k.is_empty() || k.starts_with("utm_") || TRACKING.contains(&k.as_str()))
        })
        .collect();
    let mut out = path.to_string();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(f) = frag {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// Tidy every link outside code: tracking parameters stripped; a bare link wrapped in
/// `<…>` so Discord shows no preview. Links inside code blocks and inline code, and
/// inside `[text](url)`, keep their form.
pub fn tidy_links(text: &str) -> String {
    let Some(re) = url_re() else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            out.push_str(line);
            continue;
        }
        if in_fence {
            out.push_str(line);
            continue;
        }
        for (j, seg) in line.split('`').enumerate() {
            if j > 0 {
                out.push('`');
            }
            if j % 2 == 1 {
                out.push_str(seg);
                continue;
            }
            let mut last = 0;
            for m in re.find_iter(seg) {
                out.push_str(&seg[last..m.start()]);
                let raw = m.as_str();
                let in_md_link = seg[..m.start()].ends_with("](");
                let (wrapped, inner) = match raw.strip_prefix('<').and_then(|r| r.strip_suffix('>'))
                {
                    Some(inner) => (true, inner),
                    None => (false, raw.trim_start_matches('<').trim_end_matches('>')),
                };
                // Trailing sentence punctuation is not part of the link.
                let trimmed = inner.trim_end_matches(['.', ',', '!', '?', ';', ':']);
                let tail = &inner[trimmed.len()..];
                let clean = strip_tracking(trimmed);
                if wrapped || !in_md_link {
                    out.push('<');
                    out.push_str(&clean);
                    out.push('>');
                } else {
                    out.push_str(&clean);
                }
                out.push_str(tail);
                last = m.end();
            }
            out.push_str(&seg[last..]);
        }
    }
    out
}

/// The user ids she writes as mentions (`<@id>`, `<@!id>`): the only pings allowed.
pub fn pinged_users(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<@") {
        let tail = &rest[start + 2..];
        let body = tail.trim_start_matches('!');
        let digits: String = body.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() && body[digits.len()..].starts_with('>') {
            if let Ok(id) = digits.parse::<u64>() {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        rest = tail;
    }
    out.truncate(100);
    out
}

/// The fence opener (```lang) still open at the end of `text`, given one open before.
fn open_fence_after(text: &str, mut open: Option<String>) -> Option<String> {
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            open = match open {
                Some(_) => None,
                None => Some(t.trim_end().to_string()),
            };
        }
    }
    open
}

fn char_prefix(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Where to cut `candidate` (a byte index): the last paragraph break, else sentence
/// end, else line break, else space in its second half; else all of it.
fn cut_point(candidate: &str) -> usize {
    let half = candidate.len() / 2;
    let found = |pat: &[&str]| {
        pat.iter()
            .filter_map(|p| candidate.rfind(p).map(|i| i + p.len()))
            .filter(|&i| i > half)
            .max()
    };
    found(&["\n\n"])
        .or_else(|| found(&[". ", "! ", "? ", ".\n", "!\n", "?\n"]))
        .or_else(|| found(&["\n"]))
        .or_else(|| found(&[" "]))
        .unwrap_or(candidate.len())
}

/// Split `text` into Discord messages: each ≤ [`LIMIT`] characters; a code fence open
/// at a cut is closed and reopened with its language; at most [`MAX_PARTS`] parts,
/// the last ending with [`CUT_NOTE`] when text was left over.
pub fn split(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = text.trim();
    let mut open: Option<String> = None;
    while !rest.is_empty() {
        let prefix = open.as_ref().map(|f| format!("{f}\n")).unwrap_or_default();
        let last_allowed = parts.len() + 1 == MAX_PARTS;
        let whole = format!("{prefix}{rest}");
        let whole_open = open_fence_after(rest, open.clone());
        let whole_len = whole.chars().count() + if whole_open.is_some() { 4 } else { 0 };
        if whole_len <= LIMIT {
            let mut part = whole;
            if whole_open.is_some() {
                part.push_str("\n```");
            }
            parts.push(part);
            break;
        }
        let reserve = 4 + if last_allowed {
            CUT_NOTE.chars().count()
        } else {
            0
        };
        let budget = LIMIT - prefix.chars().count() - reserve;
        let candidate = char_prefix(rest, budget);
        let cut = cut_point(candidate);
        let piece = candidate[..cut].trim_end();
        let after = open_fence_after(piece, open.clone());
        let mut part = format!("{prefix}{piece}");
        if after.is_some() {
            part.push_str("\n```");
        }
        rest = rest[cut..].trim_start_matches(['\n', ' ']);
        if last_allowed {
            part.push_str(CUT_NOTE);
            parts.push(part);
            break;
        }
        parts.push(part);
        open = after;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fences_balanced(part: &str) -> bool {
        part.lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count()
            % 2
            == 0
    }

    #[test]
    fn a_long_answer_with_a_code_fence_splits_into_parts_of_at_most_2000_with_fences_balanced() {
        let mut text = String::from("Here is the plan.\n\n");
        for i in 0..40 {
            text.push_str(&format!(
                "Paragraph {i} says something useful about the job at hand. "
            ));
        }
        text.push_str("\n\n```rust\n");
        for i in 0..150 {
            text.push_str(&format!("let value_{i} = compute({i}); // step\n"));
        }
        text.push_str("```\n\nThat is all.");
        assert!(text.chars().count() > 9000 || text.chars().count() > 7000);
        let parts = split(&text);
        assert!(
            parts.len() >= 4 && parts.len() <= MAX_PARTS,
            "{}",
            parts.len()
        );
        for (i, p) in parts.iter().enumerate() {
            assert!(
                p.chars().count() <= LIMIT,
                "part {i} is {}",
                p.chars().count()
            );
            assert!(fences_balanced(p), "part {i} unbalanced:\n{p}");
        }
        let reopened = parts
            .iter()
            .skip(1)
            .filter(|p| p.starts_with("```rust\n"))
            .count();
        assert!(
            reopened >= 1,
            "a part cut inside the fence reopens it with its language"
        );
    }

    #[test]
    fn a_nine_thousand_character_answer_is_cut_at_five_parts_and_says_so() {
        let mut text = String::from("```python\n");
        while text.chars().count() < 12_000 {
            text.push_str("print('a line of python that goes on for a while')\n");
        }
        text.push_str("```\n");
        let parts = split(&text);
        assert_eq!(parts.len(), MAX_PARTS);
        assert!(parts
            .iter()
            .all(|p| p.chars().count() <= LIMIT && fences_balanced(p)));
        assert!(parts[4].ends_with(CUT_NOTE));
        assert!(parts[1].starts_with("```python\n"));
    }

    #[test]
    fn a_short_answer_is_one_part_and_unchanged() {
        assert_eq!(split("hello"), vec!["hello".to_string()]);
        assert!(split("   ").is_empty());
    }

    #[test]
    fn tracking_parameters_are_stripped_and_bare_links_lose_their_preview() {
        assert_eq!(
            tidy_links("see https://ex.com/a?utm_source=x&id=3&fbclid=9."),
            "see <https://ex.com/a?id=3>."
        );
        assert_eq!(
            tidy_links("[doc](https://ex.com/?utm_medium=m)"),
            "[doc](https://ex.com/)"
        );
        assert_eq!(
            tidy_links("`https://ex.com/?utm_a=1`"),
            "`https://ex.com/?utm_a=1`"
        );
        assert_eq!(
            tidy_links("```\nhttps://ex.com/?utm_a=1\n```"),
            "```\nhttps://ex.com/?utm_a=1\n```"
        );
        assert_eq!(
            tidy_links("<https://ex.com/x?gclid=1>"),
            "<https://ex.com/x>"
        );
    }

    #[test]
    fn only_users_she_writes_as_mentions_may_be_pinged() {
        assert_eq!(
            pinged_users("hi <@12> and <@!34>, not <@&5> or @everyone"),
            vec![12, 34]
        );
        assert!(pinged_users("nobody @here").is_empty());
    }
}
