//! A spoken answer to a waiting approval card, in English, Spanish, French, German,
//! Portuguese, Italian or Japanese: a clear yes ("yes", "go ahead", "do it"; "sí,
//! dale"; "oui, vas-y"; "ja, mach es"; "sim"; "sì"; "はい"), a clear no ("no", "don't
//! do it", "stop"; "no lo hagas"; "non"; "nein"; "não"; "non farlo"; "いいえ"), or
//! unclear (both, or a hedge such as "maybe", "wait", "vielleicht", "待って"). Only short utterances count: anything longer is a new request.
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

/// The longest utterance read as an answer, in words. A yes is only ever a word or
/// phrase that cannot start a new request ("los", "pode", "vai" are left out: they
/// begin ordinary sentences), since a false yes would approve a card; a false no only
/// declines one.
const MAX_WORDS: usize = 8;

const YES: &[&str] = &[
    // English
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
    // Spanish
    "sí",
    "si",
    "dale",
    "hazlo",
    "adelante",
    "claro",
    // French
    "oui",
    "vas y",
    "allez y",
    "fais le",
    "d'accord",
    "ok vas y",
    // German
    "ja",
    "mach es",
    "mach das",
    "mach mal",
    "einverstanden",
    // Portuguese
    "sim",
    "pode fazer",
    "faça",
    "vai em frente",
    // Italian
    "sì",
    "fallo",
    "va bene",
    "procedi",
    // Japanese
    "はい",
    "うん",
    "お願い",
    "お願いします",
    "どうぞ",
    "いいよ",
];
const NO: &[&str] = &[
    // English: the negated yeses first, so "don't do it" is a no, not both.
    "don't do it",
    "dont do it",
    "do not do it",
    "don't",
    "dont",
    "do not",
    "no",
    "nope",
    "stop",
    "deny",
    "denied",
    "cancel",
    // Spanish
    "no lo hagas",
    "para",
    "detente",
    "cancela",
    // French
    "ne le fais pas",
    "non",
    "arrête",
    "arrete",
    "annule",
    // German
    "mach es nicht",
    "mach das nicht",
    "nein",
    "nicht",
    "stopp",
    "halt",
    // Portuguese
    "não faça",
    "nao faca",
    "não",
    "nao",
    "pare",
    // Italian
    "non farlo",
    "fermati",
    "annulla",
    // Japanese
    "いいえ",
    "やめて",
    "だめ",
    "ダメ",
    "やめ",
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
    "peut être",
    "attends",
    "je ne sais pas",
    "vielleicht",
    "warte",
    "moment",
    "weiß nicht",
    "weiss nicht",
    "talvez",
    "não sei",
    "nao sei",
    "forse",
    "aspetta",
    "non so",
    "ちょっと待って",
    "待って",
    "たぶん",
    "わからない",
];

/// What `text` says to a waiting card; `None` when it is not a short answer at all.
pub fn consent(text: &str) -> Option<Consent> {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect();
    if words.is_empty() || words.len() > MAX_WORDS {
        return None;
    }
    let mut joined = format!(" {} ", words.join(" "));
    let has = |joined: &str, list: &[&str]| list.iter().any(|p| joined.contains(&format!(" {p} ")));
    let hedge = has(&joined, HEDGES);
    // A no is taken out before the yes is looked for: "don't do it" holds "do it",
    // "mach es nicht" holds "mach es", and each is a no.
    let mut no = false;
    for p in NO {
        let p = format!(" {p} ");
        while let Some(at) = joined.find(&p) {
            no = true;
            joined.replace_range(at..at + p.len(), " ");
        }
    }
    // "don't" and "no" inside a hedge ("no sé", "I don't know") are the hedge's.
    let yes = has(&joined, YES);
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
            ("Don't do it.", Some(Consent::No)),
            ("Oui, vas-y.", Some(Consent::Yes)),
            ("Non, ne le fais pas.", Some(Consent::No)),
            ("Ja, mach es.", Some(Consent::Yes)),
            ("Mach es nicht!", Some(Consent::No)),
            ("Sim, pode fazer.", Some(Consent::Yes)),
            ("Não.", Some(Consent::No)),
            ("Sì, procedi.", Some(Consent::Yes)),
            ("Non farlo.", Some(Consent::No)),
            ("はい、お願いします。", Some(Consent::Yes)),
            ("いいえ、やめて。", Some(Consent::No)),
            ("ちょっと待って", Some(Consent::Unclear)),
            ("vielleicht", Some(Consent::Unclear)),
            ("borra los archivos", None),
            ("vai chover amanhã", None),
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
