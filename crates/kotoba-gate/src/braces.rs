//! Brace expansion as the shell does it before running a command: `{rm,-rf,~}` is the
//! three words `rm -rf ~`, `a{b,c}d` is `abd acd`, `{1..3}` is `1 2 3`. Only unquoted
//! braces expand, and `${…}` is a parameter, not a brace. Past [`LIMIT`] words the
//! expansion gives up, and the caller treats the word as unreadable. The default
//! `$IFS` splits a word the same way (`rm${IFS}-rf` is `rm -rf`).

/// How a character of a word was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Outside any quote: globs, braces and expansions are live.
    Unquoted,
    /// Inside `"…"` (or `$"…"`): `$` and backticks are live, nothing else.
    Double,
    /// Inside `'…'`, `$'…'` or after a backslash: exactly this character.
    Literal,
}

/// One character of a word with how it was written.
pub(crate) type Piece = (char, Class);

/// The most words one word may expand into.
pub(crate) const LIMIT: usize = 256;

/// The words `word` expands into (itself alone when it holds no brace expression);
/// `None` when it would make more than [`LIMIT`].
pub(crate) fn expand(word: &[Piece]) -> Option<Vec<Vec<Piece>>> {
    let mut out = Vec::new();
    expand_into(word, &mut out, 0)?;
    Some(out)
}

fn is_open(word: &[Piece], i: usize) -> bool {
    word.get(i) == Some(&('{', Class::Unquoted))
        && !(i > 0
            && matches!(
                word.get(i - 1),
                Some(('$', Class::Unquoted | Class::Double))
            ))
}

/// The first brace expression: (open, close, top-level comma positions), or a sequence.
fn find_expression(word: &[Piece]) -> Option<(usize, usize, Vec<usize>)> {
    for open in 0..word.len() {
        if !is_open(word, open) {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (j, piece) in word.iter().enumerate().skip(open) {
            match piece {
                ('{', Class::Unquoted) => depth += 1,
                ('}', Class::Unquoted) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        let inner = &word[open + 1..j];
                        if !commas.is_empty() || shape(inner).is_some() {
                            return Some((open, j, commas));
                        }
                        break;
                    }
                }
                (',', Class::Unquoted) if depth == 1 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

fn expand_into(word: &[Piece], out: &mut Vec<Vec<Piece>>, depth: usize) -> Option<()> {
    if depth > 16 {
        return None;
    }
    let Some((open, close, commas)) = find_expression(word) else {
        if out.len() >= LIMIT {
            return None;
        }
        out.push(word.to_vec());
        return Some(());
    };
    let prefix = &word[..open];
    let suffix = &word[close + 1..];
    let alternatives: Vec<Vec<Piece>> = if commas.is_empty() {
        sequence(&word[open + 1..close])?
            .into_iter()
            .map(|s| s.chars().map(|c| (c, Class::Literal)).collect())
            .collect()
    } else {
        let mut bounds = vec![open];
        bounds.extend(&commas);
        bounds.push(close);
        bounds
            .windows(2)
            .map(|w| word[w[0] + 1..w[1]].to_vec())
            .collect()
    };
    for alt in alternatives {
        let mut next = prefix.to_vec();
        next.extend(alt);
        next.extend_from_slice(suffix);
        expand_into(&next, out, depth + 1)?;
    }
    Some(())
}

/// A sequence expression read: from, to, step, letters or numbers.
type Shape = (i64, i64, i64, bool);

/// `a..e`, `1..10`, `10..1..2`: the bounds of a sequence expression, or `None`.
fn shape(inner: &[Piece]) -> Option<Shape> {
    if inner.iter().any(|(_, class)| *class != Class::Unquoted) {
        return None;
    }
    let text: String = inner.iter().map(|(c, _)| *c).collect();
    let parts: Vec<&str> = text.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let letter = |s: &str| {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as i64),
            _ => None,
        }
    };
    let (from, to, letters) = match (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => (letter(parts[0])?, letter(parts[1])?, true),
    };
    Some((from, to, step, letters))
}

/// The words of a sequence expression; `None` when it is none or too long.
fn sequence(inner: &[Piece]) -> Option<Vec<String>> {
    let (from, to, step, letters) = shape(inner)?;
    let count = (from.abs_diff(to) / step.unsigned_abs()).saturating_add(1);
    if count > LIMIT as u64 {
        return None;
    }
    let mut out = Vec::new();
    let mut value = from;
    for _ in 0..count {
        if letters {
            out.push(char::from_u32(u32::try_from(value).ok()?)?.to_string());
        } else {
            out.push(value.to_string());
        }
        value = if to >= from {
            value + step
        } else {
            value - step
        };
    }
    Some(out)
}

/// `$IFS` and `${IFS…}` read as the default separator, a space.
pub(crate) fn ifs_as_space(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("IFS") {
            out.push(' ');
            rest = tail;
        } else if let Some(inner) = after
            .strip_prefix("{IFS")
            .and_then(|t| t.find('}').map(|end| &t[end + 1..]))
        {
            out.push(' ');
            rest = inner;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let pieces: Vec<Piece> = text.chars().map(|c| (c, Class::Unquoted)).collect();
        expand(&pieces)
            .unwrap_or_default()
            .into_iter()
            .map(|w| w.into_iter().map(|(c, _)| c).collect())
            .collect()
    }

    #[test]
    fn a_comma_list_in_braces_becomes_one_word_per_item() {
        assert_eq!(words("{rm,-rf,~}"), ["rm", "-rf", "~"]);
        assert_eq!(words("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(words("r{m,}"), ["rm", "r"]);
        assert_eq!(words("{a,{b,c}}"), ["a", "b", "c"]);
    }

    #[test]
    fn sequences_count_in_numbers_and_letters() {
        assert_eq!(words("{1..3}"), ["1", "2", "3"]);
        assert_eq!(words("{c..a}"), ["c", "b", "a"]);
        assert_eq!(words("x{0..4..2}"), ["x0", "x2", "x4"]);
    }

    #[test]
    fn braces_without_a_list_and_parameters_stay_as_written() {
        assert_eq!(words("{}"), ["{}"]);
        assert_eq!(words("{a}"), ["{a}"]);
        assert_eq!(words("${a,b}"), ["${a,b}"]);
        let quoted: Vec<Piece> = "{a,b}".chars().map(|c| (c, Class::Literal)).collect();
        assert_eq!(expand(&quoted).map(|w| w.len()), Some(1));
    }

    #[test]
    fn an_expansion_past_the_limit_is_refused() {
        assert!(expand(
            &"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"
                .chars()
                .map(|c| (c, Class::Unquoted))
                .collect::<Vec<_>>()
        )
        .is_none());
        assert!(words("{1..100000}").is_empty());
    }
}
