//! What a typed line says to an approval card at the terminal: `y`, `n [reason]`, `e`
//! (the next line is the edited command), `a [1h|8h]` (always this exact line, for an
//! hour, eight hours, or until revoked), `f [1h|8h]` (always its family). Anything else
//! is not an answer: the card keeps waiting and the choices are printed again.

use crate::protocol::{Card, CardAnswer, Decision};

/// What the typed line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Typed {
    /// Answer the card with this.
    Answer(CardAnswer),
    /// Read the next line as the edited command, then approve it.
    Edit,
    /// Not an answer; say this and keep the card waiting.
    Unclear(String),
}

/// The choices, as the card's prompt and an unclear answer print them.
pub(super) fn choices(card: &Card) -> String {
    let mut c = vec!["[y]es".to_string(), "[n]o [reason]".to_string()];
    if card.can_edit {
        c.push("[e]dit".into());
    }
    if card.can_always_exact {
        c.push("[a]lways this line [1h|8h]".into());
    }
    if card.can_always {
        // The family is named, so the person sees what an "always" would cover.
        c.push(match &card.family {
            Some(f) => format!("always the [f]amily ({f}) [1h|8h]"),
            None => "always the [f]amily [1h|8h]".into(),
        });
    }
    c.join(" / ")
}

/// Read one typed line as an answer to `card`.
pub(super) fn read(card: &Card, line: &str) -> Typed {
    let line = line.trim();
    let (word, rest) = match line.split_once(char::is_whitespace) {
        Some((w, r)) => (w, r.trim()),
        None => (line, ""),
    };
    let unclear = || {
        Typed::Unclear(format!(
            "'{line}' is not an answer; the card still waits. Type {}",
            choices(card)
        ))
    };
    match word.to_lowercase().as_str() {
        "y" | "yes" if rest.is_empty() => Typed::Answer(CardAnswer::of(Decision::Approve)),
        "n" | "no" => Typed::Answer(CardAnswer {
            reason: (!rest.is_empty()).then(|| rest.to_string()),
            ..CardAnswer::of(Decision::Deny)
        }),
        "e" | "edit" if rest.is_empty() && card.can_edit => Typed::Edit,
        "a" | "always" if card.can_always_exact => {
            always(Decision::AlwaysExact, rest).unwrap_or_else(unclear)
        }
        "f" | "family" if card.can_always => {
            always(Decision::AlwaysFamily, rest).unwrap_or_else(unclear)
        }
        _ => unclear(),
    }
}

/// An "always" with its time box: none (until revoked), `1h` or `8h`.
fn always(decision: Decision, rest: &str) -> Option<Typed> {
    let for_s = match rest.to_lowercase().as_str() {
        "" => None,
        "1h" | "1" => Some(3600),
        "8h" | "8" => Some(8 * 3600),
        _ => return None,
    };
    Some(Typed::Answer(CardAnswer {
        for_s,
        ..CardAnswer::of(decision)
    }))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::protocol::{Answerers, CardKind, Risk};

    /// An approval card for a shell line, every option open.
    pub(in crate::surfaces::terminal) fn card() -> Card {
        Card {
            request_id: "c".into(),
            session: "s".into(),
            kind: CardKind::Approval,
            tool: "shell".into(),
            action: "cargo test".into(),
            why: String::new(),
            risk: Risk::Exec,
            can_always: true,
            can_always_exact: true,
            family: None,
            no_always_reason: None,
            expires_at_ms: 0,
            window_secs: 180,
            answerers: Answerers::Local,
            secret: false,
            can_edit: true,
            danger: None,
        }
    }

    #[test]
    fn a_typed_line_reads_as_yes_no_with_a_reason_edit_or_a_time_boxed_always() {
        let c = card();
        let answer = |l: &str| match read(&c, l) {
            Typed::Answer(a) => Some((a.decision, a.reason, a.for_s)),
            _ => None,
        };
        assert_eq!(answer("y"), Some((Decision::Approve, None, None)));
        assert_eq!(answer("n"), Some((Decision::Deny, None, None)));
        assert_eq!(
            answer("n  not on the main branch "),
            Some((Decision::Deny, Some("not on the main branch".into()), None))
        );
        assert_eq!(answer("a"), Some((Decision::AlwaysExact, None, None)));
        assert_eq!(
            answer("a 1h"),
            Some((Decision::AlwaysExact, None, Some(3600)))
        );
        assert_eq!(
            answer("f 8h"),
            Some((Decision::AlwaysFamily, None, Some(28_800)))
        );
        assert_eq!(read(&c, "e"), Typed::Edit);
        for unclear in ["maybe", "a 3 weeks", "yes please", ""] {
            assert!(
                matches!(read(&c, unclear), Typed::Unclear(_)),
                "{unclear:?}"
            );
        }
    }

    #[test]
    fn choices_the_card_does_not_offer_are_not_answers() {
        let c = Card {
            can_edit: false,
            danger: None,
            can_always: false,
            can_always_exact: false,
            family: None,
            ..card()
        };
        for l in ["e", "a", "f 1h"] {
            assert!(matches!(read(&c, l), Typed::Unclear(_)), "{l}");
        }
        assert_eq!(choices(&c), "[y]es / [n]o [reason]");
    }

    #[test]
    fn the_family_choice_names_the_family_it_would_save() {
        let c = Card {
            family: Some("cargo test".into()),
            ..card()
        };
        assert!(
            choices(&c).ends_with("always the [f]amily (cargo test) [1h|8h]"),
            "{}",
            choices(&c)
        );
    }
}
