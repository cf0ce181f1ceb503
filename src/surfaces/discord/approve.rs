//! Answering an approval card on Discord beyond "Approve once": Deny… opens a form with
//! an optional reason, Edit… opens a form prefilled with the exact command or code (the
//! edited line goes through the gate again), and the "Always…" select answers with a
//! time box. Who may answer is checked before a form opens and again by the engine at
//! the submit; a refusal is a private sentence and changes nothing.

use serenity::all::{
    ActionRowComponent, ComponentInteraction, ComponentInteractionDataKind, Context,
    CreateActionRow, CreateInputText, CreateInteractionResponse, CreateModal, InputTextStyle,
    ModalInteraction,
};

use crate::engine::{AnswerError, Answerer};
use crate::protocol::{Answerers, CardAnswer, Decision};

use super::cards;
use super::send::private;
use super::Bot;

/// Discord's limit on a text field's value.
const FIELD_MAX: usize = 4000;

/// The person behind an interaction, as an answerer on Discord: who they are and what
/// they hold where they pressed, as Discord computed it into the interaction's member
/// for this very press (a carded tool's card checks it at every press).
pub(crate) fn answerer(
    user: &serenity::all::User,
    member: Option<&serenity::all::Member>,
) -> Answerer {
    Answerer {
        id: user.id.get().to_string(),
        name: member
            .and_then(|m| m.nick.clone())
            .or_else(|| user.global_name.clone())
            .unwrap_or_else(|| user.name.clone()),
        local: false,
        via: "Discord".into(),
        // What they hold where they pressed: Discord's permission names and their roles
        // (`role:<id>`, for `discord.approvers`).
        holds: member
            .and_then(|m| m.permissions)
            .map(|p| crate::tools::discord::guild::permission_names(p.bits()))
            .unwrap_or_default()
            .into_iter()
            .chain(
                member
                    .into_iter()
                    .flat_map(|m| m.roles.iter().map(|r| format!("role:{}", r.get()))),
            )
            .collect(),
    }
}

/// The private sentence for a refused answer: a carded tool's shared card says who may
/// answer it; any other card, why not.
pub(crate) async fn refusal(bot: &Bot, request_id: &str, e: &AnswerError) -> String {
    let shared =
        bot.engine.all_open_cards().await.iter().any(|k| {
            k.request_id == request_id && matches!(k.answerers, Answerers::Holders { .. })
        });
    match e {
        AnswerError::NotYours if shared => cards::NOT_YOURS_SHARED.to_string(),
        _ => cards::refusal_words(e),
    }
}

async fn respond(ctx: &Context, c: &ComponentInteraction, r: CreateInteractionResponse) {
    if let Err(e) = c.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: answering an approval press: {e}");
    }
}

/// Deny… was pressed: the reason form, if the presser may answer.
pub(crate) async fn on_deny(
    bot: &Bot,
    ctx: &Context,
    c: &ComponentInteraction,
    id: &str,
    who: &Answerer,
) {
    let r = match bot.engine.card_for(id, who).await {
        Ok(_) => {
            let field = CreateInputText::new(
                InputTextStyle::Paragraph,
                "Why not? (optional; she is told your words)",
                cards::REASON_FIELD,
            )
            .required(false);
            CreateInteractionResponse::Modal(
                CreateModal::new(cards::id_with(cards::DENY, id), "Deny")
                    .components(vec![CreateActionRow::InputText(field)]),
            )
        }
        Err(e) => private(refusal(bot, id, &e).await),
    };
    respond(ctx, c, r).await
}

/// Edit… was pressed: the form prefilled with the exact line, if the presser may answer.
pub(crate) async fn on_edit(
    bot: &Bot,
    ctx: &Context,
    c: &ComponentInteraction,
    id: &str,
    who: &Answerer,
) {
    let r = match bot.engine.card_for(id, who).await {
        Ok(card) if card.action.chars().count() <= FIELD_MAX => {
            let field = CreateInputText::new(
                InputTextStyle::Paragraph,
                "The line to run (checked again by the gate)",
                cards::EDIT_FIELD,
            )
            .value(card.action)
            .required(true);
            CreateInteractionResponse::Modal(
                CreateModal::new(cards::id_with(cards::EDIT, id), "Edit, then approve")
                    .components(vec![CreateActionRow::InputText(field)]),
            )
        }
        Ok(_) => private("That line is too long to edit on Discord; edit it on the web page or at the terminal. Nothing changed."),
        Err(e) => private(refusal(bot, id, &e).await),
    };
    respond(ctx, c, r).await
}

/// A choice in the "Always…" select: always, with its time box.
pub(crate) async fn on_always(
    bot: &Bot,
    ctx: &Context,
    c: &ComponentInteraction,
    id: &str,
    who: &Answerer,
) {
    let chosen = match &c.data.kind {
        ComponentInteractionDataKind::StringSelect { values } => {
            values.first().and_then(|v| cards::parse_always(v))
        }
        _ => None,
    };
    let r = match chosen {
        None => private("That choice is not one the card offers. Nothing changed."),
        Some((decision, for_s)) => {
            let answer = CardAnswer {
                for_s,
                ..CardAnswer::of(decision)
            };
            match bot.engine.answer(id, answer, who).await {
                // The card message is edited by the session's view when it settles.
                Ok(()) => CreateInteractionResponse::Acknowledge,
                Err(e) => private(refusal(bot, id, &e).await),
            }
        }
    };
    respond(ctx, c, r).await
}

/// The value of text field `field` in a submitted form.
pub(crate) fn field(m: &ModalInteraction, field: &str) -> Option<String> {
    m.data
        .components
        .iter()
        .flat_map(|row| row.components.iter())
        .find_map(|c| match c {
            ActionRowComponent::InputText(t) if t.custom_id == field => t.value.clone(),
            _ => None,
        })
}

/// A Deny… or Edit… form was submitted; `None` when it is neither.
pub(crate) fn answer_of(m: &ModalInteraction) -> Option<(String, CardAnswer)> {
    let custom = m.data.custom_id.as_str();
    if let Some(id) = cards::parse_with(cards::DENY, custom) {
        let reason = field(m, cards::REASON_FIELD).filter(|r| !r.trim().is_empty());
        let answer = CardAnswer {
            reason: reason.map(|r| r.trim().to_string()),
            ..CardAnswer::of(Decision::Deny)
        };
        return Some((id, answer));
    }
    let id = cards::parse_with(cards::EDIT, custom)?;
    let answer = CardAnswer {
        edited: Some(field(m, cards::EDIT_FIELD).unwrap_or_default()),
        ..CardAnswer::of(Decision::Approve)
    };
    Some((id, answer))
}
