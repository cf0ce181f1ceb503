//! `/status`: job state, open cards, the voice room (with its last replies' latency,
//! broken down), the model and uptime. `/status voice:True`: only the voice room — how
//! recognition hears (streamed or uploaded) and each of the last replies' latency,
//! broken down (end of speech → commit, recognition, model first sentence, synthesis
//! first byte, bot share), with their median — and the call's end-to-end encryption
//! (DAVE: protocol version, epoch, who is in the group, transitions, and the frames she
//! could not decrypt), so an owner can see a bad call.

use serenity::all::{CommandDataOptionValue, CommandInteraction};

use super::{option, Answer};
use crate::surfaces::discord::steps::elapsed_words;
use crate::surfaces::discord::Bot;
use crate::voice::latency::Breakdown;

/// Handle /status.
pub(crate) async fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    if let Some(CommandDataOptionValue::Boolean(true)) = option(&c.data.options, "voice") {
        return Answer::text(voice(bot, c));
    }
    let session =
        crate::surfaces::discord::sessions::session_for(bot, c.channel_id.get(), c.user.id.get());
    let job = if bot.engine.session(&session).await.job_running() {
        "a background job is running here"
    } else {
        "no background job here"
    };
    let cards = bot.engine.open_cards(&session).await.len();
    let model = bot.engine.config().settings().model;
    let context = context_line(&bot.engine.context_use(&session).await);
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
    if let Some(guild) = c.guild_id.map(|g| g.get()) {
        if let Some(status) = bot.rooms.dave_in(guild) {
            let name =
                |user| crate::surfaces::discord::voice::rooms::display_name(bot, guild, user);
            out.push_str(&format!("{}\n", dave_line(&status, name)));
        }
    }
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

/// The call's DAVE state in words: `**End-to-end encryption (DAVE):** on, protocol 1,
/// epoch 3; in the group: gus, olive, Kotoba; 4 transitions; frames she could not
/// decrypt: 0`.
pub(crate) fn dave_line(s: &songbird::driver::DaveStatus, name: impl Fn(u64) -> String) -> String {
    let mut out = String::from("**End-to-end encryption (DAVE):** ");
    match s.epoch {
        Some(epoch) if s.protocol_version > 0 => {
            let people: Vec<String> = s.members.iter().map(|&u| name(u)).collect();
            out.push_str(&format!(
                "on, protocol {}, epoch {epoch}; in the group: {}",
                s.protocol_version,
                people.join(", ")
            ));
        }
        _ if s.protocol_version > 0 => out.push_str("starting (no group yet)"),
        _ => out.push_str("off (transport encryption only)"),
    }
    out.push_str(&format!(
        "; {} transitions; frames she could not decrypt: {}",
        s.transitions, s.undecryptable
    ));
    if s.invalid > 0 {
        out.push_str(&format!("; commits she could not process: {}", s.invalid));
    }
    if s.undecryptable > 0 || s.invalid > 0 {
        out.push_str(" ⚠️");
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

#[cfg(test)]
mod tests {
    use super::*;
    use songbird::driver::DaveStatus;

    fn name(user: u64) -> String {
        format!("u{user}")
    }

    #[test]
    fn the_dave_line_names_the_version_the_epoch_and_everyone_in_the_group() {
        let s = DaveStatus {
            protocol_version: 1,
            epoch: Some(3),
            members: vec![1, 2, 9],
            transitions: 4,
            undecryptable: 0,
            invalid: 0,
        };
        assert_eq!(
            dave_line(&s, name),
            "**End-to-end encryption (DAVE):** on, protocol 1, epoch 3; in the group: u1, u2, u9; 4 transitions; frames she could not decrypt: 0"
        );
    }

    #[test]
    fn a_bad_call_is_marked_with_its_undecryptable_frames_and_failed_commits() {
        let s = DaveStatus {
            protocol_version: 1,
            epoch: Some(2),
            members: vec![1, 9],
            transitions: 2,
            undecryptable: 17,
            invalid: 1,
        };
        let line = dave_line(&s, name);
        assert!(line.contains("frames she could not decrypt: 17"), "{line}");
        assert!(line.contains("commits she could not process: 1"), "{line}");
        assert!(
            line.ends_with('⚠'.to_string().as_str()) || line.ends_with("⚠️"),
            "{line}"
        );
    }

    #[test]
    fn after_a_downgrade_the_dave_line_says_transport_encryption_only() {
        let s = DaveStatus {
            protocol_version: 0,
            epoch: None,
            members: vec![],
            transitions: 3,
            undecryptable: 0,
            invalid: 0,
        };
        assert!(dave_line(&s, name).contains("off (transport encryption only)"));
    }
}
