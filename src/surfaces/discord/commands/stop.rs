//! `/stop`: stop the background job here, after a confirmation button that names what
//! dies (the same code as the job card's Stop).

use serenity::all::{ButtonStyle, CommandInteraction, CreateActionRow, CreateButton};

use super::Answer;
use crate::surfaces::discord::press::job_words;
use crate::surfaces::discord::{session_of, Bot};

/// Handle /stop.
pub(crate) fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let session = session_of(c.channel_id.get());
    let what = job_words(bot, &session);
    let mut a = Answer::text(format!(
        "Stop {what}? Whatever it is doing now dies with it."
    ));
    a.message = a
        .message
        .components(vec![CreateActionRow::Buttons(vec![CreateButton::new(
            "kj:confirm",
        )
        .label("Yes, stop it")
        .style(ButtonStyle::Danger)])]);
    a
}
