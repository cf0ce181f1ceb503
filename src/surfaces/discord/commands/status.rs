//! `/status`: job state, open cards, the voice room (with its last replies' latency,
//! broken down), the model and uptime. `/status voice:True`: only the voice room — how
//! recognition hears (streamed or uploaded) and each of the last replies' latency,
//! broken down (end of speech → commit, recognition, model first sentence, synthesis
//! first byte, bot share), with their median.

use serenity::all::{CommandDataOptionValue, CommandInteraction};

use super::{option, Answer};
use crate::surfaces::discord::steps::elapsed_words;
use crate::surfaces::discord::{session_of, Bot};
use crate::voice::latency::Breakdown;

/// Handle /status.
pub(crate) fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    if let Some(CommandDataOptionValue::Boolean(true)) = option(&c.data.options, "voice") {
        return Answer::text(voice(bot, c));
    }
    let session = session_of(c.channel_id.get());
    let job = if bot.engine.session(&session).job_running() {
        "a background job is running here"
    } else {
        "no background job here"
    };
    let cards = bot.engine.open_cards(&session).len();
    let model = bot.engine.config().settings().model;
    let context = context_line(&bot.engine.context_use(&session));
    let up = elapsed_words(bot.started.elapsed().as_secs());
    let room = room(bot, c);
    let mut voice = String::new();
    for b in crate::voice::latency::read(&bot.engine.config().paths.home) {
        voice.push_str(&format!("\n- {}", b.line()));
    }
    if !voice.is_empty() {
        voice = format!("\n**Voice latency (last replies):**{voice}");
    }
    Answer::text(format!(
        "**Job:** {job}\n**Open cards:** {cards}\n**Voice room:** {room}{voice}\n**Model:** {model}\n**Context:** {context}\n**Up:** {up}"
    ))
}

/// The session's tokens in use against the window: `12,345 of 128,000 tokens (10%;
/// summarised at 80%)`.
pub(crate) fn context_line(u: &crate::engine::ContextUse) -> String {
    let percent = (u.tokens as f64 * 100.0 / u.window.max(1) as f64).round();
    let summary = if u.summarised {
        "; earlier lines summarised"
    } else {
        ""
    };
    format!(
        "{} of {} tokens ({percent}%; summarised at {}%{summary})",
        thousands(u.tokens as u64),
        thousands(u.window),
        (u.compact_at * 100.0).round()
    )
}

/// `128000` as `128,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Where her voice room is in this guild.
fn room(bot: &Bot, c: &CommandInteraction) -> String {
    c.guild_id
        .and_then(|g| bot.rooms.channel_in(g.get()))
        .map(|ch| format!("in <#{ch}>"))
        .unwrap_or_else(|| "none (/join to start one)".into())
}

/// `/status voice:True`: the room, recognition, and the last replies' latency.
fn voice(bot: &Bot, c: &CommandInteraction) -> String {
    let config = bot.engine.config();
    let settings = config.settings().voice;
    let provider = crate::speech::stt::provider_name(settings.stt_provider);
    let hearing = if crate::speech::stt::streams(&settings) {
        "streamed as it is heard"
    } else {
        "uploaded at each pause and commit"
    };
    let replies = crate::voice::latency::read(&config.paths.home);
    let mut out = format!(
        "**Voice room:** {}\n**Recognition:** {provider}, {hearing}\n",
        room(bot, c)
    );
    if replies.is_empty() {
        out.push_str("**Last replies:** none yet — talk to her in a voice room.");
        return out;
    }
    out.push_str(&format!(
        "**Last {} replies** (end of speech → her first audio):",
        replies.len()
    ));
    for (i, b) in replies.iter().enumerate().rev() {
        out.push_str(&format!("\n{}. {}", replies.len() - i, parts(b)));
    }
    if let Some(m) = median(&replies) {
        out.push_str(&format!("\n**Median:** {}", parts(&m)));
    }
    out
}

/// One reply as `1210 ms: commit 600 · recognition 300 · …` (newest first above).
fn parts(b: &Breakdown) -> String {
    format!(
        "**{} ms**: end of speech → commit {} ms · recognition {} ms · model first sentence {} ms · synthesis first byte {} ms · bot {} ms",
        b.total_ms, b.commit_ms, b.recognition_ms, b.model_ms, b.synthesis_ms, b.bot_ms
    )
}

/// Each figure's median over `all` (the upper middle of an even count).
fn median(all: &[Breakdown]) -> Option<Breakdown> {
    if all.len() < 2 {
        return None;
    }
    let mid = |f: fn(&Breakdown) -> u64| {
        let mut v: Vec<u64> = all.iter().map(f).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    Some(Breakdown {
        total_ms: mid(|b| b.total_ms),
        commit_ms: mid(|b| b.commit_ms),
        recognition_ms: mid(|b| b.recognition_ms),
        model_ms: mid(|b| b.model_ms),
        synthesis_ms: mid(|b| b.synthesis_ms),
        bot_ms: mid(|b| b.bot_ms),
    })
}
