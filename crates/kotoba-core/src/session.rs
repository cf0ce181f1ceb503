//! A session id, typed: where a conversation lives (a Discord channel or thread, with
//! the person when it is their own conversation there; a Discord DM; the page; the
//! terminal; /v1), carrying the name the store, the buses and every external interface
//! know it by — the very string each surface has always used (`discord:<channel>`,
//! `discord:<channel>:<user>`, `terminal:<name>`, `web:<id>`). The surface that received
//! the words builds it and it travels in the turn, so nothing downstream parses a
//! session's name to learn where it is; where only a stored name is left (a job, a
//! reminder, a restart), [`SessionId::parse`] is the one parser (docs/engine.md §1).

use std::fmt;

/// The prefix of every Discord session's name: `discord:<channel>` for a channel,
/// thread or DM, `discord:<channel>:<user>` for a person's own conversation there.
pub const DISCORD_PREFIX: &str = "discord:";
/// The prefix of the terminal's sessions: `terminal:<name>`.
pub const TERMINAL_PREFIX: &str = "terminal:";
/// The prefix of the page's and /v1's sessions: `web:<id>` (they share the ids, so an
/// agent call lands in the page's conversation).
pub const WEB_PREFIX: &str = "web:";

/// Where a conversation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// A Discord server channel or thread; `person` when it is that person's own
    /// conversation with her in the channel (`discord.sessions: person`).
    DiscordChannel {
        /// The channel's (or thread's) id.
        channel: u64,
        /// The person whose own conversation it is, if it is one.
        person: Option<u64>,
    },
    /// A Discord direct message channel.
    DiscordDm {
        /// The DM channel's id.
        channel: u64,
    },
    /// A conversation of the web page.
    Page,
    /// A conversation of the terminal (`kotoba chat`).
    Terminal,
    /// A conversation of the OpenAI-compatible /v1 API.
    V1,
    /// A name no surface gives (a test's, the doctor's measure): nowhere a surface
    /// knows, so nothing Discord-shaped is done in it.
    Elsewhere,
}

/// A session: where it lives and its stored name. Two ids are equal when both agree;
/// the store and the buses key on [`SessionId::as_str`] alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId {
    place: Place,
    name: String,
}

impl SessionId {
    /// A Discord server channel's or thread's conversation: `discord:<channel>`.
    pub fn discord_channel(channel: u64) -> SessionId {
        SessionId {
            place: Place::DiscordChannel {
                channel,
                person: None,
            },
            name: format!("{DISCORD_PREFIX}{channel}"),
        }
    }

    /// `user`'s own conversation with her in a server channel:
    /// `discord:<channel>:<user>`.
    pub fn discord_person(channel: u64, user: u64) -> SessionId {
        SessionId {
            place: Place::DiscordChannel {
                channel,
                person: Some(user),
            },
            name: format!("{DISCORD_PREFIX}{channel}:{user}"),
        }
    }

    /// A Discord DM's conversation: `discord:<channel>`, the same name a channel's has
    /// (a DM is known as one only by the surface that received it).
    pub fn discord_dm(channel: u64) -> SessionId {
        SessionId {
            place: Place::DiscordDm { channel },
            name: format!("{DISCORD_PREFIX}{channel}"),
        }
    }

    /// The page's conversation `id`: `web:<id>`.
    pub fn page(id: &str) -> SessionId {
        SessionId {
            place: Place::Page,
            name: format!("{WEB_PREFIX}{id}"),
        }
    }

    /// /v1's conversation `id` (the `user` field, `X-Session-Id`, or a fresh `v1-<hex>`):
    /// `web:<id>`, the page's name for the same id.
    pub fn v1(id: &str) -> SessionId {
        SessionId {
            place: Place::V1,
            name: format!("{WEB_PREFIX}{id}"),
        }
    }

    /// The terminal's conversation `name`: `terminal:<name>`.
    pub fn terminal(name: &str) -> SessionId {
        SessionId {
            place: Place::Terminal,
            name: format!("{TERMINAL_PREFIX}{name}"),
        }
    }

    /// The session a stored name names — the one parser of session names, for where
    /// only the name is left (a job's or reminder's row, a restart's notices, a request
    /// a surface built from text). The name is kept exactly as given. Two places share
    /// a name, so parsing says the commoner one: a DM's name reads as a Discord
    /// channel's, and a /v1 conversation's as the page's (they are one conversation);
    /// the surface's own value, which knows, wins wherever it has one. A Discord name
    /// that is not exactly what [`SessionId::discord_channel`] or
    /// [`SessionId::discord_person`] writes (`discord:+5`, `discord:5:x`) is
    /// [`Place::Elsewhere`], as is any name of no surface.
    pub fn parse(name: &str) -> SessionId {
        SessionId {
            place: place_of(name),
            name: name.to_string(),
        }
    }

    /// Where it lives.
    pub fn place(&self) -> Place {
        self.place
    }

    /// Its stored name: the key of its store rows, its bus and every external mention.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// Its stored name, owned.
    pub fn into_name(self) -> String {
        self.name
    }

    /// The Discord channel (or thread, or DM) it lives in, if it lives on Discord.
    pub fn discord_channel_id(&self) -> Option<u64> {
        match self.place {
            Place::DiscordChannel { channel, .. } | Place::DiscordDm { channel } => Some(channel),
            _ => None,
        }
    }

    /// The person whose own conversation in a channel it is, if it is one.
    pub fn discord_person_id(&self) -> Option<u64> {
        match self.place {
            Place::DiscordChannel { person, .. } => person,
            _ => None,
        }
    }

    /// Whether it lives on Discord.
    pub fn is_discord(&self) -> bool {
        self.discord_channel_id().is_some()
    }

    /// Whether it is a Discord DM, as the surface that received the words said.
    pub fn is_dm(&self) -> bool {
        matches!(self.place, Place::DiscordDm { .. })
    }
}

/// Where the name `name` says it lives (see [`SessionId::parse`]).
fn place_of(name: &str) -> Place {
    if let Some(rest) = name.strip_prefix(DISCORD_PREFIX) {
        return discord_place(rest).unwrap_or(Place::Elsewhere);
    }
    if name.starts_with(TERMINAL_PREFIX) {
        return Place::Terminal;
    }
    if name.starts_with(WEB_PREFIX) {
        return Place::Page;
    }
    Place::Elsewhere
}

/// `<channel>` or `<channel>:<user>`, each written as an id is written (no sign, no
/// leading zero), else `None`.
fn discord_place(rest: &str) -> Option<Place> {
    let id = |t: &str| t.parse::<u64>().ok().filter(|n| n.to_string() == t);
    let (channel, person) = match rest.split_once(':') {
        Some((channel, user)) => (id(channel)?, Some(id(user)?)),
        None => (id(rest)?, None),
    };
    Some(Place::DiscordChannel { channel, person })
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.name
    }
}

impl From<&str> for SessionId {
    /// [`SessionId::parse`].
    fn from(name: &str) -> SessionId {
        SessionId::parse(name)
    }
}

impl From<String> for SessionId {
    /// [`SessionId::parse`], keeping the string.
    fn from(name: String) -> SessionId {
        SessionId {
            place: place_of(&name),
            name,
        }
    }
}

impl From<&String> for SessionId {
    /// [`SessionId::parse`].
    fn from(name: &String) -> SessionId {
        SessionId::parse(name)
    }
}

impl From<&SessionId> for SessionId {
    /// The same id (where it lives is kept, never parsed again).
    fn from(id: &SessionId) -> SessionId {
        id.clone()
    }
}

impl PartialEq<str> for SessionId {
    fn eq(&self, other: &str) -> bool {
        self.name == other
    }
}

impl PartialEq<&str> for SessionId {
    fn eq(&self, other: &&str) -> bool {
        self.name == *other
    }
}

impl PartialEq<String> for SessionId {
    fn eq(&self, other: &String) -> bool {
        &self.name == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discord_session_id_round_trips_through_its_stored_name() {
        for id in [
            SessionId::discord_channel(200),
            SessionId::discord_person(200, 7),
        ] {
            assert_eq!(SessionId::parse(id.as_str()), id);
        }
        assert_eq!(SessionId::discord_channel(200).as_str(), "discord:200");
        assert_eq!(SessionId::discord_person(200, 7).as_str(), "discord:200:7");
        let person = SessionId::parse("discord:200:7");
        assert_eq!(person.discord_channel_id(), Some(200));
        assert_eq!(person.discord_person_id(), Some(7));
        assert_eq!(SessionId::parse("discord:200").discord_person_id(), None);
    }

    #[test]
    fn every_surfaces_session_keeps_todays_stored_name() {
        assert_eq!(SessionId::discord_dm(9).as_str(), "discord:9");
        assert_eq!(SessionId::page("main").as_str(), "web:main");
        assert_eq!(SessionId::v1("v1-00ab").as_str(), "web:v1-00ab");
        assert_eq!(SessionId::terminal("me").as_str(), "terminal:me");
        for name in ["discord:1", "discord:1:2", "web:x", "terminal:y", "s1", ""] {
            assert_eq!(SessionId::parse(name).as_str(), name);
            assert_eq!(SessionId::from(name.to_string()).into_name(), name);
        }
    }

    #[test]
    fn a_stored_dm_parses_as_a_channel_and_a_v1_name_as_the_pages_while_the_surfaces_own_value_knows(
    ) {
        let dm = SessionId::discord_dm(9);
        assert!(dm.is_dm());
        let parsed = SessionId::parse(dm.as_str());
        assert_eq!(
            parsed.place(),
            Place::DiscordChannel {
                channel: 9,
                person: None
            }
        );
        assert!(!parsed.is_dm());
        assert_eq!(parsed.discord_channel_id(), dm.discord_channel_id());
        assert_ne!(parsed, dm, "the surface's value is not the parsed one");
        assert_eq!(parsed, *dm.as_str(), "but they name the same session");
        assert_eq!(SessionId::parse("web:v1-00ab").place(), Place::Page);
        assert_eq!(SessionId::v1("v1-00ab").place(), Place::V1);
    }

    #[test]
    fn a_name_no_surface_writes_lives_elsewhere_and_names_no_discord_channel() {
        for name in [
            "s1",
            "doctor",
            "discord:",
            "discord:abc",
            "discord:+5",
            "discord:05",
            "discord:5:x",
            "discord:5:7:9",
            "discord:5:",
            "Discord:5",
        ] {
            let id = SessionId::parse(name);
            assert_eq!(id.place(), Place::Elsewhere, "{name}");
            assert_eq!(id.discord_channel_id(), None, "{name}");
        }
        assert_eq!(SessionId::parse("terminal:me").place(), Place::Terminal);
        assert_eq!(SessionId::parse("web:main").place(), Place::Page);
    }
}
