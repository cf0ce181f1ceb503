//! A spoken answer to a waiting approval card: a clear yes ("yes", "go ahead", "do
//! it", "approve"; Spanish "sí", "dale", "hazlo", "adelante"), a clear no ("no",
//! "don't", "stop", "deny"; "no lo hagas", "para"), or unclear (both, or a hedge such as
//! "maybe" or "wait"). Only short utterances count: anything longer is a new request.
//! Only approve-once and deny can be spoken — never an "always".

/// What a short utterance says to a waiting card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    /// Approve it once.
    Yes,
    /// Deny it.
    No,
    /// Neither clearly: she asks again (once).
    Unclear,
}

/// The longest utterance read as an answer, in words.
const MAX_WORDS: usize = 8;

const YES: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "go ahead",
    "do it",
    "approve",
    "approved",
    "okay go",
    "ok go",
    "go for it",
    "sí",
    "si",
    "dale",
    "hazlo",
    "adelante",
    "claro",
];
const NO: &[&str] = &[
    "no",
    "nope",
    "don't",
    "dont",
    "do not",
    "stop",
    "deny",
    "denied",
    "cancel",
    "no lo hagas",
    "para",
    "detente",
    "cancela",
];
const HEDGES: &[&str] = &[
    "maybe",
    "wait",
    "not sure",
    "hmm",
    "hold on",
    "i don't know",
    "perhaps",
    "quizás",
    "quizas",
    "espera",
    "no sé",
    "no se",
];

/// What `text` says to a waiting card; `None` when it is not a short answer at all.
pub fn consent(text: &str) -> Option<Consent> {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect();
    if words.is_empty() || words.len() > MAX_WORDS {
        return None;
    }
    let joined = format!(" {} ", words.join(" "));
    let has = |list: &[&str]| list.iter().any(|p| joined.contains(&format!(" {p} ")));
    let (hedge, no) = (has(HEDGES), has(NO));
    // "don't" and "no" inside a hedge ("no sé", "I don't know") are the hedge's.
    let yes = has(YES);
    match (yes, no, hedge) {
        (_, _, true) | (true, true, _) => Some(Consent::Unclear),
        (true, false, false) => Some(Consent::Yes),
        (false, true, false) => Some(Consent::No),
        (false, false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_clear_yes_or_no_answers_and_anything_else_does_not() {
        let table = [
            ("Yes.", Some(Consent::Yes)),
            ("yes, go ahead", Some(Consent::Yes)),
            ("Do it!", Some(Consent::Yes)),
            ("approve", Some(Consent::Yes)),
            ("Sí, dale.", Some(Consent::Yes)),
            ("No.", Some(Consent::No)),
            ("don't", Some(Consent::No)),
            ("Stop, deny it.", Some(Consent::No)),
            ("no lo hagas", Some(Consent::No)),
            ("yes no", Some(Consent::Unclear)),
            ("maybe", Some(Consent::Unclear)),
            ("wait, yes", Some(Consent::Unclear)),
            ("I don't know", Some(Consent::Unclear)),
            ("no sé", Some(Consent::Unclear)),
            ("what is the weather like in Tokyo today", None),
            (
                "yes I think we should also look at the other folder first",
                None,
            ),
            ("", None),
        ];
        for (text, want) in table {
            assert_eq!(consent(text), want, "{text:?}");
        }
    }
}
