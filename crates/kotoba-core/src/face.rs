//! Her face: the one map from what she wrote (an audio tag, an expression word or an
//! emoji) to the face a finished turn shows, read alike by the page, the terminal and
//! Discord (docs/engine.md, "Faces").
//!
//! The first cue in the answer wins: a bracketed audio tag (`[laughs]`, `[sighs
//! warmly]`, or a face's own name such as `[thinking]`), else an expression word on word
//! boundaries (`haha`, `oops`, `hmm`, `unfortunately`…) or an emoji. Code (fenced or
//! inline) is never read. An answer with no cue is *calm*.

/// The face a finished turn shows when nothing she wrote asks for another.
pub const CALM: &str = "calm";

/// Every face a surface may be asked to draw, with the emoji that stands for it where a
/// surface draws emoji (Discord's reaction, the terminal's line). The working faces
/// (*determined* with the chip, a tool's focus face, *fail*) are here too.
pub const FACES: &[(&str, &str)] = &[
    (CALM, "🙂"),
    ("happy", "😄"),
    ("excited", "🤩"),
    ("affectionate", "🥰"),
    ("sad", "😢"),
    ("surprised", "😮"),
    ("thinking", "🤔"),
    ("confused", "😕"),
    ("embarrassed", "😅"),
    ("scared", "😨"),
    ("sleepy", "😴"),
    ("angry", "😠"),
    ("determined", "😤"),
    ("fail", "😣"),
];

/// The audio tags she may write, each with the face it wears. A face's own name is a tag
/// too (`[thinking]`).
const TAGS: &[(&str, &str)] = &[
    ("laughs softly", "happy"),
    ("laughs", "happy"),
    ("giggles", "happy"),
    ("happily", "happy"),
    ("mischievously", "happy"),
    ("excited", "excited"),
    ("warmly", "affectionate"),
    ("curious", "confused"),
    ("sad", "sad"),
    ("sighs", "sad"),
    ("gasps", "surprised"),
    ("awe", "surprised"),
    ("nervous", "scared"),
    ("tired", "sleepy"),
    ("sarcastic", CALM),
    ("whispers", CALM),
    ("pause", CALM),
    ("rushed", CALM),
    ("drawn out", CALM),
];

/// Expression words and emoji, each with its face. Words match whole (case aside);
/// several words match as a phrase.
const CUES: &[(&str, &str)] = &[
    ("haha", "happy"),
    ("hahaha", "happy"),
    ("hehe", "happy"),
    ("lol", "happy"),
    ("yay", "excited"),
    ("woohoo", "excited"),
    ("hooray", "excited"),
    ("aww", "affectionate"),
    ("awww", "affectionate"),
    ("<3", "affectionate"),
    ("unfortunately", "sad"),
    ("sorry to hear", "sad"),
    ("i'm so sorry", "sad"),
    ("wow", "surprised"),
    ("whoa", "surprised"),
    ("no way", "surprised"),
    ("hmm", "thinking"),
    ("hmmm", "thinking"),
    ("let me think", "thinking"),
    ("huh", "confused"),
    ("oops", "embarrassed"),
    ("whoops", "embarrassed"),
    ("my bad", "embarrassed"),
    ("yawn", "sleepy"),
    ("hmph", "angry"),
];

/// Emoji she may write, each with its face (matched anywhere outside code).
const EMOJI: &[(&str, &str)] = &[
    ("😄", "happy"),
    ("😊", "happy"),
    ("😀", "happy"),
    ("😁", "happy"),
    ("😂", "happy"),
    ("🙂", CALM),
    ("🎉", "excited"),
    ("🤩", "excited"),
    ("🥰", "affectionate"),
    ("❤️", "affectionate"),
    ("💕", "affectionate"),
    ("😢", "sad"),
    ("😭", "sad"),
    ("😮", "surprised"),
    ("😲", "surprised"),
    ("🤔", "thinking"),
    ("😕", "confused"),
    ("😅", "embarrassed"),
    ("😳", "embarrassed"),
    ("😨", "scared"),
    ("😴", "sleepy"),
    ("😠", "angry"),
];

/// The face a finished turn shows for the answer `text`: the first cue in it, or
/// [`CALM`].
pub fn finished(text: &str) -> &'static str {
    let prose = without_code(text);
    first_cue(&prose).unwrap_or(CALM)
}

/// The emoji that stands for `face` (the calm one for a name this map does not know).
pub fn emoji(face: &str) -> &'static str {
    FACES
        .iter()
        .find(|(name, _)| *name == face)
        .map(|(_, e)| *e)
        .unwrap_or("🙂")
}

/// The text with fenced blocks and inline code replaced by spaces (so positions of
/// what is left stay comparable and nothing inside code is read as a cue).
fn without_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            out.push('\n');
            continue;
        }
        if in_fence {
            out.push('\n');
            continue;
        }
        let mut in_tick = false;
        for c in line.chars() {
            if c == '`' {
                in_tick = !in_tick;
                out.push(' ');
            } else {
                out.push(if in_tick { ' ' } else { c });
            }
        }
    }
    out
}

/// The face of the earliest cue of any kind, by its position in `prose`.
fn first_cue(prose: &str) -> Option<&'static str> {
    let lower = prose.to_lowercase();
    let mut best: Option<(usize, &'static str)> = None;
    let mut offer = |at: usize, face: &'static str| {
        if best.is_none_or(|(b, _)| at < b) {
            best = Some((at, face));
        }
    };
    if let Some((at, face)) = first_tag(&lower) {
        offer(at, face);
    }
    for (cue, face) in CUES {
        if let Some(at) = find_whole(&lower, cue) {
            offer(at, face);
        }
    }
    for (e, face) in EMOJI {
        if let Some(at) = lower.find(e) {
            offer(at, face);
        }
    }
    best.map(|(_, face)| face)
}

/// The first `[…]` whose words are all tags (or faces' names), not glued to a word on
/// its left (`arr[0]`) and not a link's label (`[docs](…)`): its position and face.
fn first_tag(lower: &str) -> Option<(usize, &'static str)> {
    let mut from = 0;
    while let Some(open) = lower[from..].find('[').map(|i| i + from) {
        let close = lower[open..].find(']').map(|i| i + open)?;
        from = open + 1;
        let glued = lower[..open]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ']' || c == ')');
        let link = lower[close + 1..].starts_with('(');
        if glued || link || close - open > 41 {
            continue;
        }
        if let Some(face) = tag_face(&lower[open + 1..close]) {
            return Some((open, face));
        }
    }
    None
}

/// The face of a bracket's content when every word in it is a tag: the first tag's.
fn tag_face(inside: &str) -> Option<&'static str> {
    let words: Vec<&str> = inside
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let mut faces = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let two = words.get(i + 1).map(|next| format!("{} {next}", words[i]));
        if let Some(face) = two.as_deref().and_then(tag) {
            faces.push(face);
            i += 2;
        } else {
            faces.push(tag(words[i])?);
            i += 1;
        }
    }
    faces.first().copied()
}

/// The face one tag (or a face's own name) wears.
fn tag(word: &str) -> Option<&'static str> {
    TAGS.iter()
        .find(|(t, _)| *t == word)
        .map(|(_, f)| *f)
        .or_else(|| FACES.iter().find(|(f, _)| *f == word).map(|(f, _)| *f))
}

/// The position of `cue` in `hay` as whole words (no letter or digit either side).
fn find_whole(hay: &str, cue: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = hay[from..].find(cue).map(|i| i + from) {
        let end = at + cue.len();
        let before = hay[..at].chars().next_back();
        let after = hay[end..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '\'');
        if !word(before) && !word(after) {
            return Some(at);
        }
        from = at + cue.len().max(1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finished_face_comes_from_the_first_cue_she_wrote() {
        let table = [
            ("[laughs] Of course I remember.", "happy"),
            ("[sighs warmly] Fine, one more.", "sad"),
            ("[thinking] Let me see.", "thinking"),
            ("[laughs softly] okay", "happy"),
            ("Haha, that's a good one.", "happy"),
            ("Oops, I got that wrong.", "embarrassed"),
            ("Hmm. Maybe tomorrow?", "thinking"),
            ("Unfortunately the build failed.", "sad"),
            ("Wow! It worked 🎉", "surprised"),
            ("It worked 🎉 wow", "excited"),
            ("Aww, thank you.", "affectionate"),
            ("Done. The file is saved.", CALM),
            ("", CALM),
        ];
        for (text, face) in table {
            assert_eq!(finished(text), face, "{text:?}");
        }
    }

    #[test]
    fn code_links_and_indexes_are_never_read_as_a_face() {
        let table = [
            ("Run `echo haha` and see.", CALM),
            ("```\nprint('wow')\n```\nThere you go.", CALM),
            ("Read [sad](https://example.com/sad) first.", CALM),
            ("Use arr[sad] here.", CALM),
            ("The word showcase has no cue.", CALM),
            ("[sad and warmly] is prose", CALM),
            ("[1] a citation", CALM),
        ];
        for (text, face) in table {
            assert_eq!(finished(text), face, "{text:?}");
        }
    }

    #[test]
    fn every_face_the_map_gives_has_an_emoji() {
        for (_, face) in TAGS.iter().chain(CUES).chain(EMOJI) {
            assert!(FACES.iter().any(|(f, _)| f == face), "{face} is not a face");
        }
        assert_eq!(emoji("happy"), "😄");
        assert_eq!(emoji("no such face"), "🙂");
    }
}
