//! Approval cards: the exact command in a code block, why, where the result lands,
//! risk colour, expiry as a Discord relative timestamp, and only what the gate offers:
//! Approve once, Edit… (a form prefilled with the command), Deny… (a form with an
//! optional reason) and an "Always…" select whose choices carry a time box (1 hour,
//! 8 hours, until revoked). After settlement everything is disabled and the card says
//! who decided what and where, or that it expired and nothing ran. A press is parsed
//! here; the engine decides.

use crate::protocol::{Answerers, Card as GateCard, CardKind, CardSettlement, Decision, Risk};

use super::render::{Button, Card, Select, Style};

/// The custom id prefix of approval buttons.
pub const PREFIX: &str = "kc:";

/// The custom id of `decision` on card `request_id`.
pub fn button_id(decision: Decision, request_id: &str) -> String {
    let d = match decision {
        Decision::Approve => "a",
        Decision::AlwaysExact => "e",
        Decision::AlwaysFamily => "f",
        Decision::Deny => "d",
    };
    format!("{PREFIX}{d}:{request_id}")
}

/// The custom id prefix of an approval card's Edit… button and of the form it opens.
pub const EDIT: &str = "kx:";
/// The custom id prefix of an approval card's Deny… button (it opens the reason form).
pub const DENY_BUTTON: &str = "kc:d:";
/// The custom id prefix of the Deny… form.
pub const DENY: &str = "kn:";
/// The custom id prefix of the "Always…" select.
pub const ALWAYS: &str = "ks:";
/// The text field of the Edit… form.
pub const EDIT_FIELD: &str = "edited";
/// The text field of the Deny… form.
pub const REASON_FIELD: &str = "reason";

/// `prefix` + `request_id`.
pub fn id_with(prefix: &str, request_id: &str) -> String {
    format!("{prefix}{request_id}")
}

/// The card a custom id with `prefix` names.
pub fn parse_with(prefix: &str, custom_id: &str) -> Option<String> {
    custom_id
        .strip_prefix(prefix)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// The time boxes the "Always…" select offers: (label, seconds; none until revoked).
pub const TIME_BOXES: [(&str, Option<u64>); 3] = [
    ("for 1 hour", Some(3600)),
    ("for 8 hours", Some(8 * 3600)),
    ("until revoked", None),
];

/// The value of one "Always…" choice (`e:3600`, `f:0`).
fn always_value(decision: Decision, for_s: Option<u64>) -> String {
    let d = if decision == Decision::AlwaysFamily {
        "f"
    } else {
        "e"
    };
    format!("{d}:{}", for_s.unwrap_or(0))
}

/// The decision and time box of an "Always…" choice.
pub fn parse_always(value: &str) -> Option<(Decision, Option<u64>)> {
    let (d, secs) = value.split_once(':')?;
    let decision = match d {
        "e" => Decision::AlwaysExact,
        "f" => Decision::AlwaysFamily,
        _ => return None,
    };
    let secs: u64 = secs.parse().ok()?;
    let offered = TIME_BOXES.iter().any(|(_, s)| s.unwrap_or(0) == secs);
    offered.then_some((decision, (secs > 0).then_some(secs)))
}

/// The "Always…" select of a card, when the gate offers an always.
fn always_select(card: &GateCard) -> Option<Select> {
    let mut options = Vec::new();
    // The family is named, so the person sees what an "always" would cover.
    let family = match &card.family {
        Some(f) => format!("this family ({})", f.chars().take(48).collect::<String>()),
        None => "this family".to_string(),
    };
    for (scope, decision, offered) in [
        (
            "this exact line",
            Decision::AlwaysExact,
            card.can_always_exact,
        ),
        (family.as_str(), Decision::AlwaysFamily, card.can_always),
    ] {
        if offered {
            for (label, for_s) in TIME_BOXES {
                options.push((
                    format!("Always {scope}, {label}"),
                    always_value(decision, for_s),
                ));
            }
        }
    }
    (!options.is_empty()).then(|| Select {
        id: id_with(ALWAYS, &card.request_id),
        placeholder: "Always…".into(),
        options,
        disabled: false,
    })
}

/// The custom id prefix of a question card's Answer button and of the modal it opens.
pub const ANSWER: &str = "kq:";

/// The custom id of the Answer button (and its modal) of question `request_id`.
pub fn answer_id(request_id: &str) -> String {
    format!("{ANSWER}{request_id}")
}

/// The question an Answer button or its modal names.
pub fn parse_answer(custom_id: &str) -> Option<String> {
    custom_id
        .strip_prefix(ANSWER)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// The text field of the answer modal.
pub const ANSWER_FIELD: &str = "answer";

/// The decision and card a button's custom id names.
pub fn parse_button(custom_id: &str) -> Option<(Decision, String)> {
    let rest = custom_id.strip_prefix(PREFIX)?;
    let (d, id) = rest.split_once(':')?;
    let decision = match d {
        "a" => Decision::Approve,
        "e" => Decision::AlwaysExact,
        "f" => Decision::AlwaysFamily,
        // `d` is an approval's Deny… (it opens a form first); `s` a question's Skip.
        "d" | "s" => Decision::Deny,
        _ => return None,
    };
    (!id.is_empty()).then(|| (decision, id.to_string()))
}

/// The side colour of a risk.
pub fn risk_colour(risk: Risk) -> u32 {
    match risk {
        Risk::Read => 0x57F287,
        Risk::Write => 0xFEE75C,
        Risk::Network => 0x3498DB,
        Risk::Exec => 0xED4245,
    }
}

/// A question card (ask_user, clarify) while it waits: the question, its expiry, an
/// Answer button that opens a text field, and Skip.
fn question(card: &GateCard) -> Card {
    Card {
        title: "A question from the background job".into(),
        description: card.action.clone(),
        colour: 0x5865F2,
        fields: vec![(
            "Expires".to_string(),
            format!("<t:{}:R>", card.expires_at_ms / 1000),
        )],
        footer: Some("Answer opens a text field; Skip lets the job go on without it.".into()),
        buttons: vec![
            Button {
                id: answer_id(&card.request_id),
                label: "Answer…".into(),
                style: Style::Primary,
                disabled: false,
            },
            Button {
                id: format!("{PREFIX}s:{}", card.request_id),
                label: "Skip".into(),
                style: Style::Secondary,
                disabled: false,
            },
        ],
        select: None,
    }
}

/// The card as drawn while it waits; `in_dm` says where the result lands.
pub fn pending(card: &GateCard, in_dm: bool) -> Card {
    if card.kind == CardKind::Input {
        return question(card);
    }
    let lang = match card.tool.as_str() {
        "execute_code" => "py",
        "shell" => "sh",
        _ => "",
    };
    let action = card.action.replace("```", "`\u{200b}``");
    let mut fields = vec![
        (
            "Why".to_string(),
            if card.why.trim().is_empty() {
                "(no reason given)".into()
            } else {
                card.why.clone()
            },
        ),
        (
            "Where the result lands".to_string(),
            if in_dm {
                "only you".into()
            } else {
                "everyone in this channel".into()
            },
        ),
        (
            "Expires".to_string(),
            format!("<t:{}:R>", card.expires_at_ms / 1000),
        ),
    ];
    if let Some(label) = &card.danger {
        // Drawn as dangerous with the gate's rule, first.
        let said = format!("{label}: it asks every time, and no grant covers it.");
        fields.insert(0, ("⚠ Dangerous".to_string(), said));
    }
    if let Some(why) = &card.no_always_reason {
        fields.push(("No \"always (family)\"".into(), why.clone()));
    }
    if let Answerers::Owners { approvers, .. } | Answerers::Holders { approvers, .. } =
        &card.answerers
    {
        if !approvers.is_empty() {
            let named: Vec<String> = approvers.iter().map(|a| approver_mention(a)).collect();
            fields.push((
                "Who may answer".into(),
                format!("the owners, and approvers {}", named.join(", ")),
            ));
        }
    }
    if matches!(&card.answerers, Answerers::Owners { ids, approvers } if ids.is_empty() && approvers.is_empty())
    {
        fields.push((
            "Nobody here can answer".into(),
            "No Discord owner is configured: answer it on the web page or at the terminal, or set KOTOBA_DISCORD_OWNER_IDS (or the `owners` setting)."
                .into(),
        ));
    }
    let mut buttons = vec![Button {
        id: button_id(Decision::Approve, &card.request_id),
        label: "Approve once".into(),
        style: Style::Success,
        disabled: false,
    }];
    if card.can_edit {
        buttons.push(Button {
            id: id_with(EDIT, &card.request_id),
            label: "Edit…".into(),
            style: Style::Primary,
            disabled: false,
        });
    }
    buttons.push(Button {
        id: button_id(Decision::Deny, &card.request_id),
        label: "Deny…".into(),
        style: Style::Danger,
        disabled: false,
    });
    Card {
        title: format!("May I run this? ({})", card.tool),
        description: format!("```{lang}\n{action}\n```"),
        colour: risk_colour(card.risk),
        fields,
        footer: None,
        buttons,
        select: always_select(card),
    }
}

/// The sentence a settled card shows.
pub fn settlement_words(s: &CardSettlement) -> String {
    match s {
        CardSettlement::Decided { decision, by, via } => {
            let by = crate::protocol::who_and_where(by, via);
            match decision {
                Decision::Approve => format!("✅ Approved once by {by}."),
                Decision::AlwaysExact => {
                    format!("✅ Approved by {by}, always for this exact line.")
                }
                Decision::AlwaysFamily => format!("✅ Approved by {by}, always for this family."),
                Decision::Deny => format!("🚫 Denied by {by}. Nothing ran."),
            }
        }
        CardSettlement::Expired => "⌛ This card expired unanswered. Nothing ran.".into(),
        CardSettlement::Dismissed => "This card was dismissed. Nothing ran.".into(),
        CardSettlement::Cancelled => "The turn that asked is gone. Nothing ran.".into(),
    }
}

/// The card after it settled: buttons disabled, the outcome said.
pub fn settled(card: &GateCard, in_dm: bool, how: &CardSettlement) -> Card {
    let mut c = pending(card, in_dm);
    c.fields.retain(|(name, _)| name != "Expires");
    let words = match (card.kind, how) {
        // A question is answered or skipped, never "approved"; the answer itself stays
        // out of the channel's card.
        (CardKind::Input, CardSettlement::Decided { decision, by, via }) if decision.approves() => {
            format!(
                "✅ Answered by {}.",
                crate::protocol::who_and_where(by, via)
            )
        }
        (CardKind::Input, CardSettlement::Decided { by, via, .. }) => {
            format!("⏭ Skipped by {}.", crate::protocol::who_and_where(by, via))
        }
        _ => settlement_words(how),
    };
    c.fields.push(("Decision".into(), words));
    if !matches!(how, CardSettlement::Decided { decision, .. } if decision.approves()) {
        c.colour = 0x99AAB5;
    }
    for b in &mut c.buttons {
        b.disabled = true;
    }
    if let Some(s) = c.select.as_mut() {
        s.disabled = true;
    }
    c
}

/// The words on a card a restart settled: the run that drew it died before anyone
/// answered, so nothing ran.
pub const RESTARTED: &str = "⌛ Kotoba restarted before anyone answered. Nothing ran.";

/// A card left by a run that died: buttons disabled, [`RESTARTED`] said.
pub fn restarted(card: &GateCard, in_dm: bool) -> Card {
    let mut c = settled(card, in_dm, &CardSettlement::Expired);
    for (name, value) in &mut c.fields {
        if name == "Decision" {
            *value = RESTARTED.to_string();
        }
    }
    c
}

/// The private refusal on a card for a change to this server.
pub const NOT_YOURS_SHARED: &str = "That card is not yours to answer: only the person who asked (holding every permission its changes need, checked as you press), an owner or an Administrator may approve it. Nothing changed.";

/// The private answer to a press the engine refused.
pub fn refusal_words(err: &crate::engine::AnswerError) -> String {
    match err {
        crate::engine::AnswerError::NotYours => {
            "That card is not yours to answer: only an owner may approve what runs on this machine. Nothing changed.".into()
        }
        crate::engine::AnswerError::AlreadySettled | crate::engine::AnswerError::Unknown => {
            "That card was already settled, so nothing changed.".into()
        }
        crate::engine::AnswerError::Invalid(why) => {
            format!("That answer does not fit the card ({why}), so nothing changed.")
        }
        crate::engine::AnswerError::StoreUnreachable(_) => {
            "That card waits in another of my processes and the database did not answer, so nothing changed; press again in a moment.".into()
        }
    }
}

/// An approver as Discord draws it: `<@id>` for a person, `<@&id>` for a role; a bare
/// id (either) as the person it would be.
fn approver_mention(a: &str) -> String {
    match a.split_once(':') {
        Some(("role", id)) => format!("<@&{id}>"),
        Some((_, id)) => format!("<@{id}>"),
        None => format!("<@{a}>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate_card(can_always: bool, can_exact: bool) -> GateCard {
        GateCard {
            request_id: "r1".into(),
            session: "discord:1".into(),
            kind: crate::protocol::CardKind::Approval,
            tool: "shell".into(),
            action: "make test".into(),
            why: "to run the tests".into(),
            risk: Risk::Exec,
            can_always,
            can_always_exact: can_exact,
            family: None,
            no_always_reason: (!can_always).then(|| "make is not offered as a family.".into()),
            expires_at_ms: 1_800_000_000_000,
            window_secs: 180,
            answerers: Answerers::Owners {
                ids: vec![1],
                approvers: Vec::new(),
            },
            secret: false,
            can_edit: true,
            danger: None,
        }
    }

    #[test]
    fn an_approval_card_shows_the_exact_command_why_where_expiry_and_only_offered_buttons() {
        let c = pending(&gate_card(false, true), false);
        assert_eq!(c.description, "```sh\nmake test\n```");
        assert!(c
            .fields
            .contains(&("Expires".into(), "<t:1800000000:R>".into())));
        assert!(c.fields.contains(&(
            "Where the result lands".into(),
            "everyone in this channel".into()
        )));
        let ids: Vec<&str> = c.buttons.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["kc:a:r1", "kx:r1", "kc:d:r1"]);
        let labels: Vec<&str> = c.buttons.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(labels, ["Approve once", "Edit…", "Deny…"]);
        assert_eq!(c.colour, risk_colour(Risk::Exec));
        // Only the exact line is offered: three time boxes for it, none for the family.
        let select = c.select.expect("the Always… select");
        assert_eq!(select.id, "ks:r1");
        let values: Vec<&str> = select.options.iter().map(|o| o.1.as_str()).collect();
        assert_eq!(values, ["e:3600", "e:28800", "e:0"]);
        assert!(select.options[0].0.contains("1 hour"));
        let all = pending(&gate_card(true, true), true);
        assert_eq!(all.select.map(|s| s.options.len()), Some(6));
        let none = pending(&gate_card(false, false), true);
        assert_eq!(none.select, None, "no always offered, no select");
    }

    #[test]
    fn the_always_select_names_the_family_a_grant_would_save() {
        let card = GateCard {
            family: Some("make test".into()),
            ..gate_card(true, true)
        };
        let select = pending(&card, false).select.expect("the Always… select");
        let family: Vec<&str> = select
            .options
            .iter()
            .filter(|o| o.1.starts_with("f:"))
            .map(|o| o.0.as_str())
            .collect();
        assert_eq!(family.len(), 3);
        assert!(
            family.iter().all(|l| l.contains("this family (make test)")),
            "{family:?}"
        );
    }

    #[test]
    fn an_always_choice_is_read_back_only_with_a_time_box_the_card_offers() {
        assert_eq!(
            parse_always("e:3600"),
            Some((Decision::AlwaysExact, Some(3600)))
        );
        assert_eq!(
            parse_always("f:28800"),
            Some((Decision::AlwaysFamily, Some(28_800)))
        );
        assert_eq!(parse_always("e:0"), Some((Decision::AlwaysExact, None)));
        assert_eq!(parse_always("e:99"), None, "not a time box the card offers");
        assert_eq!(parse_always("d:0"), None);
    }

    #[test]
    fn a_settled_card_disables_its_buttons_and_says_who_decided_or_that_nothing_ran() {
        let by = CardSettlement::Decided {
            decision: Decision::Deny,
            by: "olive".into(),
            via: "the web page".into(),
        };
        let c = settled(&gate_card(true, true), false, &by);
        assert!(c.buttons.iter().all(|b| b.disabled));
        assert!(c.select.is_some_and(|s| s.disabled));
        assert!(c
            .fields
            .iter()
            .any(|(_, v)| v == "🚫 Denied by olive on the web page. Nothing ran."));
        let e = settled(&gate_card(true, true), false, &CardSettlement::Expired);
        assert!(e
            .fields
            .iter()
            .any(|(_, v)| v.contains("expired unanswered. Nothing ran")));
    }

    #[test]
    fn button_ids_round_trip() {
        for d in [
            Decision::Approve,
            Decision::AlwaysExact,
            Decision::AlwaysFamily,
            Decision::Deny,
        ] {
            assert_eq!(parse_button(&button_id(d, "abc")), Some((d, "abc".into())));
        }
        assert_eq!(parse_button("kc:x:abc"), None);
        assert_eq!(parse_button("ko:1"), None);
    }
}
