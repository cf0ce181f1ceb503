//! `/leave`: leave this server's voice channel once her turn and playback end (≤30 s).

use std::sync::Arc;

use serenity::all::CommandInteraction;

use crate::surfaces::discord::voice::rooms;
use crate::surfaces::discord::Bot;

/// Handle /leave; the answer is one sentence.
pub(crate) async fn run(bot: &Arc<Bot>, c: &CommandInteraction) -> String {
    let Some(guild) = c.guild_id.map(|g| g.get()) else {
        return "Voice works in a server, not in direct messages.".into();
    };
    match rooms::leave(bot, guild).await {
        Ok(said) => said,
        Err(why) => why.to_string(),
    }
}
