//! Button presses: a question's Answer (opens the text field, `answer.rs`), approval answers (the engine decides who may answer; a refusal is a
//! private sentence and changes nothing), Full output (privately, as a file past 2000
//! characters; a host tool's only to an owner), the job card's Stop (asks for
//! confirmation first), /forget-me's confirmation and Revoke on /grants. Every press is acknowledged at once,
//! inside Discord's 3 s deadline.

use serenity::all::{
    ButtonStyle, ComponentInteraction, Context, CreateActionRow, CreateAttachment, CreateButton,
    CreateInteractionResponse, CreateInteractionResponseMessage,
};

use super::commands::stop::job_words;
use super::send::private;
use super::{approve, cards, Bot};
use crate::protocol::CardAnswer;

async fn respond(ctx: &Context, c: &ComponentInteraction, r: CreateInteractionResponse) {
    if let Err(e) = c.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: answering a button press: {e}");
    }
}

/// Handle one button press.
pub(crate) async fn on_press(bot: &Bot, ctx: &Context, c: ComponentInteraction) {
    let id = c.data.custom_id.clone();
    let user = c.user.id.get();
    let who = approve::answerer(&c.user, c.member.as_ref());
    if let Some(request_id) = cards::parse_answer(&id) {
        return super::answer::on_answer_button(bot, ctx, &c, &request_id).await;
    }
    if let Some(request_id) = cards::parse_with(cards::EDIT, &id) {
        return approve::on_edit(bot, ctx, &c, &request_id, &who).await;
    }
    if let Some(request_id) = cards::parse_with(cards::ALWAYS, &id) {
        return approve::on_always(bot, ctx, &c, &request_id, &who).await;
    }
    if let Some(request_id) = cards::parse_with(cards::DENY_BUTTON, &id) {
        return approve::on_deny(bot, ctx, &c, &request_id, &who).await;
    }
    if let Some((decision, request_id)) = cards::parse_button(&id) {
        let r = match bot
            .engine
            .answer(&request_id, CardAnswer::of(decision), &who)
            .await
        {
            // The card message is edited by the session's view when it settles.
            Ok(()) => CreateInteractionResponse::Acknowledge,
            Err(e) => private(approve::refusal(bot, &request_id, &e).await),
        };
        return respond(ctx, &c, r).await;
    }
    if let Some(key) = id.strip_prefix("ko:").and_then(|k| k.parse::<u64>().ok()) {
        // Any conversation of this channel (a person's own, with `discord.sessions`).
        let channel = c.channel_id.get();
        let r = match bot.outputs.get(key) {
            Some(kept) if super::channel_of(&kept.session) != Some(channel) => {
                private("That output is no longer kept.")
            }
            Some(kept) if kept.owners_only && !bot.is_owner(user) => private(NOT_YOURS_TO_SEE),
            Some(kept) => full_output(&kept.text),
            None => private("That output is no longer kept."),
        };
        return respond(ctx, &c, r).await;
    }
    if let Some(person) = super::commands::forget_me::confirmed(&id) {
        return super::commands::forget_me::on_confirm(bot, ctx, &c, person).await;
    }
    match super::sessions::of_job_button(&id, c.channel_id.get()) {
        Some(("stop", session)) => {
            let what = job_words(bot, &session);
            let confirm = CreateInteractionResponseMessage::new()
                .content(format!(
                    "Stop {what}? Whatever it is doing now dies with it."
                ))
                .ephemeral(true)
                .components(vec![CreateActionRow::Buttons(vec![CreateButton::new(
                    id.replacen("kj:stop", "kj:confirm", 1),
                )
                .label("Yes, stop it")
                .style(ButtonStyle::Danger)])]);
            respond(ctx, &c, CreateInteractionResponse::Message(confirm)).await
        }
        Some(("confirm", session)) => {
            if !bot.is_owner(user) {
                return respond(ctx, &c, private("Only an owner can stop her work.")).await;
            }
            let said = stop_session_work(bot, &session);
            respond(ctx, &c, private(said)).await
        }
        _ if id.starts_with("kg:revoke:") => {
            super::commands::grants::on_revoke(bot, ctx, &c, &id).await
        }
        _ => respond(ctx, &c, private("That button is no longer active.")).await,
    }
}

/// The private reply to a guest who presses Full output on a host tool's row.
pub(crate) const NOT_YOURS_TO_SEE: &str =
    "That output is not yours to see: it comes from one of her owner's host tools, so only an owner may open it.";

/// The Full output reply: in a code block, or as a file past 2000 characters.
pub(crate) fn full_output(text: &str) -> CreateInteractionResponse {
    let body = text.replace("```", "`\u{200b}``");
    let msg = if body.chars().count() + 8 <= super::reply::LIMIT {
        CreateInteractionResponseMessage::new().content(format!("```\n{body}\n```"))
    } else {
        CreateInteractionResponseMessage::new()
            .content("The whole output is attached.")
            .add_file(CreateAttachment::bytes(
                text.as_bytes().to_vec(),
                "output.txt",
            ))
    };
    CreateInteractionResponse::Message(msg.ephemeral(true))
}

/// Stop what works or waits in `session`: exactly the code `cancel_work` runs (the job,
/// and every deferred approval still waiting). The chat turn running in the channel is
/// not cut. It says what it stopped, in cancel_work's own sentence.
pub(crate) fn stop_session_work(bot: &Bot, session: &str) -> String {
    match bot
        .engine
        .stop(session, crate::engine::StopScope::Work)
        .sentence()
    {
        Ok(said) => said,
        Err(nothing) => nothing.to_string(),
    }
}
