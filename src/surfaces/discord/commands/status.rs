//! `/status`: job state, open cards, the voice room, the model and uptime.

use serenity::all::CommandInteraction;

use super::Answer;
use crate::surfaces::discord::steps::elapsed_words;
use crate::surfaces::discord::{session_of, Bot};

/// Handle /status.
pub(crate) fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let session = session_of(c.channel_id.get());
    let job = if bot.engine.session(&session).job_running() {
        "a background job is running here"
    } else {
        "no background job here"
    };
    let cards = bot.engine.open_cards(&session).len();
    let model = bot.engine.config().settings().model;
    let up = elapsed_words(bot.started.elapsed().as_secs());
    let room = c
        .guild_id
        .and_then(|g| bot.rooms.channel_in(g.get()))
        .map(|ch| format!("in <#{ch}>"))
        .unwrap_or_else(|| "none (/join to start one)".into());
    Answer::text(format!(
        "**Job:** {job}\n**Open cards:** {cards}\n**Voice room:** {room}\n**Model:** {model}\n**Up:** {up}"
    ))
}
