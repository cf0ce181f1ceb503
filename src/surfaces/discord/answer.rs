//! Typed answers to a job's question card (ask_user, clarify): the Answer button opens
//! a modal with one text field, and its submit hands the text to the engine verbatim.
//! Who may answer is decided by the engine at the submit, like any card press.

use serenity::all::{
    ActionRowComponent, ComponentInteraction, Context, CreateActionRow, CreateInputText,
    CreateInteractionResponse, CreateModal, InputTextStyle, ModalInteraction,
};

use crate::engine::Answerer;

use super::send::private;
use super::{cards, Bot};

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
    let session = super::session_of(c.channel_id.get());
    let question = bot
        .engine
        .open_cards(&session)
        .into_iter()
        .find(|card| card.request_id == request_id)
        .map(|card| card.action);
    let r = match question {
        Some(q) => modal(request_id, Some(&q)),
        None => private("That question is no longer waiting. Nothing changed."),
    };
    if let Err(e) = c.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: opening the answer field: {e}");
    }
}

/// The text typed into an answer modal.
fn typed(m: &ModalInteraction) -> Option<String> {
    m.data
        .components
        .iter()
        .flat_map(|row| row.components.iter())
        .find_map(|c| match c {
            ActionRowComponent::InputText(t) if t.custom_id == cards::ANSWER_FIELD => {
                t.value.clone()
            }
            _ => None,
        })
}

/// An answer modal was submitted: the typed text answers the question, verbatim.
pub(crate) async fn on_submit(bot: &Bot, ctx: &Context, m: ModalInteraction) {
    let Some(request_id) = cards::parse_answer(&m.data.custom_id) else {
        return;
    };
    let name = m
        .member
        .as_ref()
        .and_then(|mm| mm.nick.clone())
        .or_else(|| m.user.global_name.clone())
        .unwrap_or_else(|| m.user.name.clone());
    let who = Answerer {
        id: m.user.id.get().to_string(),
        name,
        local: false,
    };
    let r = match typed(&m).filter(|t| !t.trim().is_empty()) {
        None => private("The answer was empty, so nothing was sent. Press Answer again."),
        Some(text) => match bot.engine.answer_text(&request_id, &text, &who) {
            // The card message is edited by the session's view when it settles.
            Ok(()) => CreateInteractionResponse::Acknowledge,
            Err(e) => private(cards::refusal_words(&e)),
        },
    };
    if let Err(e) = m.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: answering a submitted answer: {e}");
    }
}
