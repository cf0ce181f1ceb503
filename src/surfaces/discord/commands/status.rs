//! `/status`: job state, open cards, the voice room (with its last replies' latency,
//! broken down), the model and uptime.

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
    let mut voice = String::new();
    for b in crate::voice::latency::read(&bot.engine.config().paths.home) {
        voice.push_str(&format!("\n- {}", b.line()));
    }
    if !voice.is_empty() {
        voice = format!("\n**Voice latency (last replies):**{voice}");
    }
    Answer::text(format!(
        "**Job:** {job}\n**Open cards:** {cards}\n**Voice room:** {room}{voice}\n**Model:** {model}\n**Up:** {up}"
    ))
}
