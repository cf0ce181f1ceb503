//! One change to a Discord server as the port applies it (ids resolved, nothing left to
//! look up), what it does to the tools' copy of the server (so a batch's later changes
//! find what its earlier ones made), and Discord's error answers as sentences.

use super::guild::{Channel, ChannelKind, Guild, Overwrite, Role};

/// One change, by ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Create a channel or category; answers its id.
    CreateChannel {
        /// Its name.
        name: String,
        /// Its kind.
        kind: ChannelKind,
        /// Its category.
        parent: Option<u64>,
        /// Its topic.
        topic: Option<String>,
        /// Its overwrites.
        overwrites: Vec<Overwrite>,
    },
    /// Change a channel or category.
    EditChannel {
        /// Which.
        channel: u64,
        /// A new name.
        name: Option<String>,
        /// A new category (`Some(None)`: out of any).
        parent: Option<Option<u64>>,
        /// A new topic.
        topic: Option<String>,
        /// New slowmode seconds.
        slowmode: Option<u64>,
        /// Its whole new set of overwrites.
        overwrites: Option<Vec<Overwrite>>,
    },
    /// Delete a channel or category.
    DeleteChannel {
        /// Which.
        channel: u64,
    },
    /// Create a role; answers its id.
    CreateRole {
        /// Its name.
        name: String,
        /// Its colour.
        colour: Option<u32>,
        /// Shown apart.
        hoist: Option<bool>,
        /// Mentionable.
        mentionable: Option<bool>,
        /// Its permission bits.
        permissions: u64,
    },
    /// Change a role.
    EditRole {
        /// Which.
        role: u64,
        /// A new name.
        name: Option<String>,
        /// A new colour.
        colour: Option<u32>,
        /// Shown apart.
        hoist: Option<bool>,
        /// Mentionable.
        mentionable: Option<bool>,
    },
    /// Delete a role.
    DeleteRole {
        /// Which.
        role: u64,
    },
    /// Give a member a role.
    GiveRole {
        /// Who.
        user: u64,
        /// Which role.
        role: u64,
    },
    /// Take a role from a member.
    TakeRole {
        /// Who.
        user: u64,
        /// Which role.
        role: u64,
    },
    /// Kick a member.
    Kick {
        /// Who.
        user: u64,
    },
    /// Ban a member.
    Ban {
        /// Who.
        user: u64,
    },
    /// Time a member out.
    Timeout {
        /// Who.
        user: u64,
        /// For how many minutes.
        minutes: u64,
    },
    /// Set (or, empty, clear) a member's nickname.
    Nickname {
        /// Who.
        user: u64,
        /// The nickname.
        nick: String,
    },
    /// Move a member to a voice channel.
    MoveToVoice {
        /// Who.
        user: u64,
        /// Where.
        channel: u64,
    },
    /// Set a forum up: its tags (name, emoji), guidelines, default reaction and a first
    /// post (title, text).
    SetForum {
        /// Which forum.
        channel: u64,
        /// Its tags.
        tags: Vec<(String, Option<String>)>,
        /// Its guidelines.
        guidelines: Option<String>,
        /// Its default reaction emoji.
        reaction: Option<String>,
        /// A first post.
        first: Option<(String, String)>,
    },
    /// A new post in a forum; answers its id.
    ForumPost {
        /// Which forum.
        channel: u64,
        /// Its title.
        title: String,
        /// Its text.
        body: String,
    },
    /// Post a message.
    Post {
        /// Where.
        channel: u64,
        /// What.
        text: String,
    },
}

/// Discord's answer to a change it refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status (0: Discord was not reached).
    pub status: u16,
    /// Discord's JSON error code (0 when none).
    pub code: i64,
    /// Discord's message (or why it was not reached).
    pub message: String,
}

impl ApiError {
    /// The sentence the model reads (no ids, tokens or URLs).
    pub fn sentence(&self) -> String {
        match self.code {
            50013 => "Discord refused: I am missing a permission for that (Missing Permissions, \
                      50013), or it sits at or above my highest role."
                .into(),
            50001 => "Discord refused: I cannot reach that (Missing Access, 50001).".into(),
            50035 => format!(
                "Discord rejected the values (Invalid Form Body, 50035): {}.",
                self.message.trim_end_matches('.')
            ),
            10003 => "Discord says that channel no longer exists (Unknown Channel).".into(),
            10011 => "Discord says that role no longer exists (Unknown Role).".into(),
            10007 => "Discord says that person is not a member here (Unknown Member).".into(),
            30013 | 30005 => format!(
                "Discord refused: the server is at a limit ({}).",
                self.message.trim_end_matches('.')
            ),
            _ if self.status == 0 => format!("I could not reach Discord ({}).", self.message),
            _ => format!(
                "Discord refused it ({} {}: {}).",
                self.status,
                self.code,
                self.message.trim_end_matches('.')
            ),
        }
    }
}

/// Put what `change` created (answered `id`) or renamed into `g`, so later actions of the
/// same batch find it by name.
pub fn remember(g: &mut Guild, change: &Change, id: Option<u64>) {
    match change {
        Change::CreateChannel {
            name,
            kind,
            parent,
            topic,
            overwrites,
        } => g.channels.push(Channel {
            id: id.unwrap_or(0),
            name: name.clone(),
            kind: *kind,
            parent: *parent,
            position: 0,
            topic: topic.clone(),
            slowmode: 0,
            overwrites: overwrites.clone(),
        }),
        Change::CreateRole {
            name,
            colour,
            hoist,
            mentionable,
            permissions,
        } => g.roles.push(Role {
            id: id.unwrap_or(0),
            name: name.clone(),
            colour: colour.unwrap_or(0),
            hoist: hoist.unwrap_or(false),
            mentionable: mentionable.unwrap_or(false),
            position: 1,
            permissions: *permissions,
            managed: false,
        }),
        Change::EditChannel {
            channel,
            name,
            parent,
            overwrites,
            ..
        } => {
            if let Some(c) = g.channels.iter_mut().find(|c| c.id == *channel) {
                if let Some(n) = name {
                    c.name = n.clone();
                }
                if let Some(p) = parent {
                    c.parent = *p;
                }
                if let Some(o) = overwrites {
                    c.overwrites = o.clone();
                }
            }
        }
        Change::EditRole { role, name, .. } => {
            if let (Some(r), Some(n)) = (g.roles.iter_mut().find(|r| r.id == *role), name) {
                r.name = n.clone();
            }
        }
        Change::DeleteChannel { channel } => g.channels.retain(|c| c.id != *channel),
        Change::DeleteRole { role } => g.roles.retain(|r| r.id != *role),
        Change::GiveRole { user, role } => {
            if let Some(m) = g.members.iter_mut().find(|m| m.id == *user) {
                m.roles.push(*role);
            }
        }
        Change::TakeRole { user, role } => {
            if let Some(m) = g.members.iter_mut().find(|m| m.id == *user) {
                m.roles.retain(|r| r != role);
            }
        }
        Change::Kick { user } | Change::Ban { user } => g.members.retain(|m| m.id != *user),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::ApiError;

    #[test]
    fn discords_errors_become_sentences_naming_what_went_wrong() {
        let e = |status, code, message: &str| ApiError {
            status,
            code,
            message: message.into(),
        };
        assert!(e(403, 50013, "Missing Permissions")
            .sentence()
            .contains("missing a permission"));
        let form = e(
            400,
            50035,
            "Invalid Form Body: name: Must be between 1 and 100 in length.",
        );
        assert!(
            form.sentence().contains("Must be between 1 and 100"),
            "{}",
            form.sentence()
        );
        assert!(e(404, 10011, "Unknown Role")
            .sentence()
            .contains("no longer exists"));
    }
}
