//! Typed answers on Discord: a job's question card (ask_user, clarify), whose Answer button opens
//! a modal with one text field, and its submit hands the text to the engine verbatim.
//! Who may answer is decided by the engine at the submit, like any card press.

use serenity::all::{
    ComponentInteraction, Context, CreateActionRow, CreateInputText, CreateInteractionResponse,
    CreateModal, InputTextStyle, ModalInteraction,
};

use super::send::private;
use super::{cards, Bot};
use crate::protocol::CardAnswer;

/// The modal an Answer button opens for question `request_id`.
pub(crate) fn modal(request_id: &str, question: Option<&str>) -> CreateInteractionResponse {
    let mut field = CreateInputText::new(
        InputTextStyle::Paragraph,
        "Your answer",
        cards::ANSWER_FIELD,
    )
    .required(true);
    if let Some(q) = question {
        // Discord shows at most 100 characters of a placeholder.
        field = field.placeholder(q.chars().take(100).collect::<String>());
    }
    CreateInteractionResponse::Modal(
        CreateModal::new(cards::answer_id(request_id), "Answer her question")
            .components(vec![CreateActionRow::InputText(field)]),
    )
}

/// The Answer button of a question card was pressed: open the modal.
pub(crate) async fn on_answer_button(
    bot: &Bot,
    ctx: &Context,
    c: &ComponentInteraction,
    request_id: &str,
) {
    // Any conversation of this channel's (a person's own, with `discord.sessions`).
    let channel = c.channel_id.get();
    let question = bot
        .engine
        .all_open_cards()
        .await
        .into_iter()
        .find(|card| {
            card.request_id == request_id && super::channel_of(&card.session) == Some(channel)
        })
        .map(|card| card.action);
    let r = match question {
        Some(q) => modal(request_id, Some(&q)),
        None => private("That question is no longer waiting. Nothing changed."),
    };
    if let Err(e) = c.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: opening the answer field: {e}");
    }
}

/// A form was submitted: a question's answer (the typed text, verbatim), or an
/// approval's Deny… (with its reason) or Edit… (the edited line, approved once).
pub(crate) async fn on_submit(bot: &Bot, ctx: &Context, m: ModalInteraction) {
    let who = super::approve::answerer(&m.user, m.member.as_ref());
    let r = if let Some((request_id, answer)) = super::approve::answer_of(&m) {
        match bot.engine.answer(&request_id, answer, &who).await {
            // The card message is edited by the session's view when it settles.
            Ok(()) => CreateInteractionResponse::Acknowledge,
            Err(e) => private(super::approve::refusal(bot, &request_id, &e).await),
        }
    } else if let Some(request_id) = cards::parse_answer(&m.data.custom_id) {
        let typed = super::approve::field(&m, cards::ANSWER_FIELD);
        match typed.filter(|t| !t.trim().is_empty()) {
            None => private("The answer was empty, so nothing was sent. Press Answer again."),
            Some(text) => match bot
                .engine
                .answer(&request_id, CardAnswer::text(text), &who)
                .await
            {
                Ok(()) => CreateInteractionResponse::Acknowledge,
                Err(e) => private(cards::refusal_words(&e)),
            },
        }
    } else {
        return;
    };
    if let Err(e) = m.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: answering a submitted form: {e}");
    }
}
