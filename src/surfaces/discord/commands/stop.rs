//! `/stop`: stop the background job here, after a confirmation button that names what
//! dies (the same code as the job card's Stop).

use serenity::all::{ButtonStyle, CommandInteraction, CreateActionRow, CreateButton};

use super::Answer;
use crate::surfaces::discord::steps::elapsed_words;
use crate::surfaces::discord::Bot;

/// Handle /stop.
pub(crate) fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let session =
        crate::surfaces::discord::sessions::session_for(bot, c.channel_id.get(), c.user.id.get());
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

/// "the background job" with what is known of it (a seam for the work-mode job card:
/// elapsed time, step count and goal come from the job once work mode lands).
pub(crate) fn job_words(bot: &Bot, session: &str) -> String {
    match bot.engine.job(session) {
        Some(info) => format!(
            "the background job '{}' ({} in, {} steps so far; none of it is kept)",
            info.goal,
            elapsed_words(info.elapsed.as_secs()),
            info.steps
        ),
        None => "what is running in this channel".into(),
    }
}
