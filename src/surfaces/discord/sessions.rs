//! Which conversation a line belongs to (`discord.sessions`): `channel` (the default)
//! keeps one conversation per channel, thread and DM; `person` gives each person their
//! own conversation with her in a shared server channel — `discord:<channel>:<user>` —
//! while a thread and a DM stay one conversation either way. In person mode what the
//! others wrote in the channel since that person's last turn there still reaches it as
//! what was said around her (the channel's log, read from each session's own place).

use std::collections::VecDeque;

use serenity::all::ChannelId;

use super::Bot;
use crate::protocol::Said;
use crate::session::SessionId;

/// Lines a channel's log keeps for the people's sessions there.
const LOG_KEEP: usize = 200;

/// One server channel's recent lines, numbered, for the people's sessions there.
#[derive(Debug, Default)]
pub(crate) struct ChannelLog {
    /// The number the next line gets.
    next: u64,
    /// The lines, oldest first: number, author id, the line.
    lines: VecDeque<(u64, u64, Said)>,
}

impl ChannelLog {
    /// Drop every line `user` wrote (they asked to be forgotten).
    pub(crate) fn forget(&mut self, user: u64) {
        self.lines.retain(|(_, author, _)| *author != user);
    }
}

/// Whether lines in `channel` go to their person's own conversation: person mode, and a
/// server channel the cache knows (not a thread, not a DM).
pub(crate) fn per_person(bot: &Bot, channel: u64) -> bool {
    if bot.engine.config().settings().discord_sessions != crate::config::DiscordSessions::Person {
        return false;
    }
    let Some(cache) = bot.cache.get() else {
        return false;
    };
    let id = ChannelId::new(channel.max(1));
    cache.guilds().into_iter().any(|g| {
        cache
            .guild(g)
            .is_some_and(|guild| guild.channels.contains_key(&id))
    })
}

/// The conversation `user`'s line in `channel` belongs to, typed as the message said
/// where it was: a DM (a message with no guild), else their own in person mode, else
/// the channel's (or thread's).
pub(crate) fn session_id_for(bot: &Bot, channel: u64, user: u64, dm: bool) -> SessionId {
    typed(channel, user, dm, !dm && per_person(bot, channel))
}

/// The conversation of `user`'s line in `channel`: a DM's, their own (`own`: person
/// mode in a server channel), or the channel's.
fn typed(channel: u64, user: u64, dm: bool, own: bool) -> SessionId {
    match (dm, own) {
        (true, _) => SessionId::discord_dm(channel),
        (false, true) => SessionId::discord_person(channel, user),
        (false, false) => SessionId::discord_channel(channel),
    }
}

/// The stored name of the conversation `user`'s line in `channel` belongs to (a DM's
/// name is a channel's: person mode never splits one).
pub(crate) fn session_for(bot: &Bot, channel: u64, user: u64) -> String {
    session_id_for(bot, channel, user, false).into_name()
}

/// `user`'s own conversation in `channel`: its stored name.
pub fn person_session(channel: u64, user: u64) -> String {
    SessionId::discord_person(channel, user).into_name()
}

/// The person a stored session name is kept for (person mode), or `None` for a
/// channel's; read by the one parser ([`SessionId::parse`]).
pub fn person_of(session: &str) -> Option<u64> {
    SessionId::parse(session).discord_person_id()
}

/// The Stop button id of a job card of `session`: `kj:stop`, or `kj:stop:<user>`.
pub fn stop_id(session: &str) -> String {
    match person_of(session) {
        Some(user) => format!("kj:stop:{user}"),
        None => "kj:stop".into(),
    }
}

/// The session a job button (`kj:stop[:user]`, `kj:confirm[:user]`) pressed in `channel`
/// is for, with what the button does (`stop` or `confirm`).
pub fn of_job_button(id: &str, channel: u64) -> Option<(&str, String)> {
    let rest = id.strip_prefix("kj:")?;
    let (what, user) = match rest.split_once(':') {
        Some((what, user)) => (what, Some(user.parse::<u64>().ok()?)),
        None => (rest, None),
    };
    let session = match user {
        Some(u) => person_session(channel, u),
        None => super::session_of(channel),
    };
    Some((what, session))
}

/// Keep a line `author` wrote in `channel` for the other people's sessions there.
pub(crate) fn log(bot: &Bot, channel: u64, author: u64, said: Said) {
    let mut log = bot.channel_logs.entry(channel).or_default();
    let n = log.next;
    log.next += 1;
    log.lines.push_back((n, author, said));
    while log.lines.len() > LOG_KEEP {
        log.lines.pop_front();
    }
}

/// What the others wrote in `channel` since `session`'s last turn there (at most
/// `keep`, the newest), oldest first; the session has now read up to here.
pub(crate) fn around(
    bot: &Bot,
    channel: u64,
    session: &str,
    author: u64,
    keep: usize,
) -> Vec<Said> {
    let Some(log) = bot.channel_logs.get(&channel) else {
        return Vec::new();
    };
    let from = bot.read_upto.get(session).map(|n| *n).unwrap_or(0);
    let unread: Vec<Said> = log
        .lines
        .iter()
        .filter(|(n, who, _)| *n >= from && *who != author)
        .map(|(_, _, said)| said.clone())
        .collect();
    bot.read_upto.insert(session.to_string(), log.next);
    let skip = unread.len().saturating_sub(keep);
    unread.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_session_names_its_channel_and_its_person() {
        let s = person_session(200, 7);
        assert_eq!(s, "discord:200:7");
        assert_eq!(super::super::channel_of(&s), Some(200));
        assert_eq!(person_of(&s), Some(7));
        assert_eq!(person_of("discord:200"), None);
        assert_eq!(super::super::channel_of("discord:200"), Some(200));
        assert_eq!(stop_id(&s), "kj:stop:7");
        assert_eq!(of_job_button("kj:confirm:7", 200), Some(("confirm", s)));
        assert_eq!(
            of_job_button("kj:stop", 200),
            Some(("stop", "discord:200".to_string()))
        );
        assert_eq!(of_job_button("kj:stop:x", 200), None);
    }

    #[test]
    fn a_message_with_no_guild_is_typed_a_dm_under_the_channels_stored_name() {
        let dm = typed(9, 7, true, false);
        assert!(dm.is_dm());
        assert_eq!(dm.as_str(), super::super::session_of(9));
        assert_eq!(
            dm.discord_person_id(),
            None,
            "a DM is never split per person"
        );
        let own = typed(200, 7, false, true);
        assert_eq!(own.as_str(), person_session(200, 7));
        assert_eq!(own.discord_person_id(), Some(7));
        let channel = typed(200, 7, false, false);
        assert!(!channel.is_dm());
        assert_eq!(channel.as_str(), super::super::session_of(200));
    }
}
