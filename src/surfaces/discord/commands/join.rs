//! `/join [channel]`: join the named voice channel, or the one the person is in.
//! Joining where she already is in this server moves her.

use std::sync::Arc;

use serenity::all::{CommandDataOptionValue, CommandInteraction};

use super::option;
use crate::surfaces::discord::voice::rooms;
use crate::surfaces::discord::Bot;

/// Handle /join; the answer is one sentence.
pub(crate) async fn run(bot: &Arc<Bot>, c: &CommandInteraction) -> String {
    let Some(guild) = c.guild_id.map(|g| g.get()) else {
        return "Voice works in a server, not in direct messages.".into();
    };
    let channel = match option(&c.data.options, "channel") {
        Some(CommandDataOptionValue::Channel(id)) => id.get(),
        _ => match rooms::channel_of_user(bot, guild, c.user.id.get()) {
            Some(ch) => ch,
            None => {
                return "Join a voice channel first, or name one: /join channel:…".into();
            }
        },
    };
    match rooms::join(bot, guild, channel).await {
        Ok(said) => said,
        Err(why) => why.to_string(),
    }
}
