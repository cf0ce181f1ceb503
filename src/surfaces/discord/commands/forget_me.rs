//! `/forget-me`: a person asks her to erase everything she keeps about them
//! (docs/discord.md, "Forget me"). Answered privately with what will go and a
//! confirmation button that only they can press (`fm:confirm:<user>`, press.rs); an
//! owner is told their memory is hers and edited on the machine.

use serenity::all::{
    ButtonStyle, CommandInteraction, ComponentInteraction, Context, CreateActionRow, CreateButton,
    CreateInteractionResponse, CreateInteractionResponseMessage, EditInteractionResponse,
};

use super::Answer;
use crate::surfaces::discord::Bot;
use crate::tools::port::ErasedBy;

/// The confirmation button's id prefix; the user id follows.
pub(crate) const CONFIRM: &str = "fm:confirm:";

/// What the confirmation says will go.
pub(crate) const WHAT_GOES: &str = "your notebook, what I know about you, our DMs, and your \
    lines in server conversations (each becomes \"[removed at their request]\")";

/// Handle /forget-me.
pub(crate) fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let user = c.user.id.get();
    if bot.is_owner(user) {
        return Answer::text(
            "You are her owner: what she keeps is yours, in the data folder on the machine \
             (the page can erase a person for you). /forget-me is for the people she meets.",
        );
    }
    let mut a = Answer::text(format!(
        "Erase everything I keep about you — {WHAT_GOES}? This cannot be undone."
    ));
    a.message = a
        .message
        .components(vec![CreateActionRow::Buttons(vec![CreateButton::new(
            format!("{CONFIRM}{user}"),
        )
        .label("Yes, forget me")
        .style(ButtonStyle::Danger)])]);
    a
}

/// The person a confirmation button is for.
pub(crate) fn confirmed(custom_id: &str) -> Option<u64> {
    custom_id.strip_prefix(CONFIRM)?.parse().ok()
}

/// The confirmation pressed: only by the person it is for, who is then forgotten (the
/// press is deferred at once: an erase may outlast Discord's 3 s).
pub(crate) async fn on_confirm(bot: &Bot, ctx: &Context, c: &ComponentInteraction, person: u64) {
    if c.user.id.get() != person {
        let r = crate::surfaces::discord::send::private(
            "This button is for the person who asked to be forgotten, and only them.",
        );
        if let Err(e) = c.create_response(&ctx.http, r).await {
            tracing::warn!("Discord: answering a forget-me press: {e}");
        }
        return;
    }
    let defer =
        CreateInteractionResponse::Defer(CreateInteractionResponseMessage::new().ephemeral(true));
    if let Err(e) = c.create_response(&ctx.http, defer).await {
        tracing::warn!("Discord: deferring a forget-me press: {e}");
    }
    let text = match bot.engine.forget_person(person, ErasedBy::Themselves).await {
        Ok(erased) => format!(
            "Done: I have forgotten you ({}). Anything you tell me from now on is kept as before.",
            erased.summary()
        ),
        Err(e) => {
            tracing::error!("Discord: forgetting a person: {e}");
            format!("I could not finish erasing ({e}); what was erased stays erased. Try again.")
        }
    };
    let edit = EditInteractionResponse::new()
        .content(text)
        .components(Vec::new());
    if let Err(e) = c.edit_response(&ctx.http, edit).await {
        tracing::warn!("Discord: answering a forget-me press: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirmation_button_names_the_one_person_it_is_for() {
        assert_eq!(confirmed("fm:confirm:42"), Some(42));
        assert_eq!(confirmed("fm:confirm:"), None);
        assert_eq!(confirmed("kj:confirm:42"), None);
    }
}
