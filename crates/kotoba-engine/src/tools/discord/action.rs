//! discord_act's declarative action: its argument shape and op names, and what one
//! resolves to (the change, the card's words, the permission it needs, its mark).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::change::Change;

/// Every op discord_act takes.
pub const OPS: &[&str] = &[
    "create_channel",
    "rename_channel",
    "move_channel",
    "set_topic",
    "set_slowmode",
    "delete_channel",
    "create_category",
    "rename_category",
    "delete_category",
    "create_role",
    "rename_role",
    "recolor_role",
    "set_role_flags",
    "delete_role",
    "give_role",
    "take_role",
    "kick",
    "ban",
    "timeout",
    "move_to_voice",
    "nickname",
    "post_message",
    "set_permissions",
    "make_private",
    "make_public",
    "set_forum",
    "forum_post",
];

/// One declarative action, as the model writes it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// What to do (one of [`OPS`]).
    pub op: String,
    /// What it acts on; for `create_*` the new name.
    #[serde(default)]
    pub target: Option<String>,
    /// A new name, a category, a voice channel.
    #[serde(default)]
    pub to: Option<String>,
    /// A person.
    #[serde(default)]
    pub user: Option<String>,
    /// The kind, seconds, minutes, colour or text.
    #[serde(default)]
    pub value: Option<Value>,
    /// A channel topic.
    #[serde(default)]
    pub topic: Option<String>,
    /// Forum tags.
    #[serde(default)]
    pub tags: Option<Value>,
    /// An emoji.
    #[serde(default)]
    pub emoji: Option<String>,
    /// A forum's first post title.
    #[serde(default)]
    pub first_post: Option<String>,
    /// A forum's first post body.
    #[serde(default)]
    pub first_body: Option<String>,
    /// Roles or people (make_private, set_permissions, a private new channel).
    #[serde(default)]
    pub roles: Vec<String>,
    /// Permission names to allow.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Permission names to deny.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Show the role apart.
    #[serde(default)]
    pub hoist: Option<bool>,
    /// Let anyone mention the role.
    #[serde(default)]
    pub mentionable: Option<bool>,
}

/// How a change is marked on the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Nothing special.
    Plain,
    /// A deletion.
    Delete,
    /// A kick.
    Kick,
    /// A ban.
    Ban,
    /// A timeout.
    Timeout,
}

/// One action resolved against the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// What the port applies.
    pub change: Change,
    /// The card's words for it.
    pub line: String,
    /// The permission bits it needs.
    pub needs: u64,
    /// Its mark on the card.
    pub mark: Mark,
}

impl Resolved {
    /// The card line with its mark.
    pub fn marked(&self) -> String {
        match self.mark {
            Mark::Plain => self.line.clone(),
            Mark::Delete => format!("⚠ DELETE: {}", self.line),
            Mark::Kick => format!("⚠ KICK: {}", self.line),
            Mark::Ban => format!("⚠ BAN: {}", self.line),
            Mark::Timeout => format!("⚠ TIMEOUT: {}", self.line),
        }
    }
}

/// Why an action cannot be done, as a sentence (what is wrong, or which rule refuses).
pub type Refusal = String;
