//! `/new`: a fresh conversation in this channel (the old transcript is archived).

use serenity::all::CommandInteraction;

use super::Answer;
use crate::surfaces::discord::Bot;

/// Handle /new.
pub(crate) async fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let session =
        crate::surfaces::discord::sessions::session_for(bot, c.channel_id.get(), c.user.id.get());
    match bot.engine.reset_session(&session).await {
        Ok(()) => Answer::text("Fresh start: I no longer see what was said here before."),
        Err(e) => {
            tracing::warn!("Discord: /new in {session}: {e}");
            Answer::text("I could not start a fresh conversation just now.")
        }
    }
}
