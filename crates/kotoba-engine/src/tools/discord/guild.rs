//! A Discord server as the management tools see it (channels, roles, members, her own
//! standing), Discord's permission names and bits, and finding a channel, role or person
//! by mention, id or name. Plain data: the port fills it, the tools read it.

/// Discord's permission names (lowercase, as the tools take and show them) and bits.
pub const PERMISSIONS: &[(&str, u64)] = &[
    ("create_instant_invite", 1 << 0),
    ("kick_members", 1 << 1),
    ("ban_members", 1 << 2),
    ("administrator", 1 << 3),
    ("manage_channels", 1 << 4),
    ("manage_guild", 1 << 5),
    ("add_reactions", 1 << 6),
    ("view_audit_log", 1 << 7),
    ("priority_speaker", 1 << 8),
    ("stream", 1 << 9),
    ("view_channel", 1 << 10),
    ("send_messages", 1 << 11),
    ("send_tts_messages", 1 << 12),
    ("manage_messages", 1 << 13),
    ("embed_links", 1 << 14),
    ("attach_files", 1 << 15),
    ("read_message_history", 1 << 16),
    ("mention_everyone", 1 << 17),
    ("use_external_emojis", 1 << 18),
    ("view_guild_insights", 1 << 19),
    ("connect", 1 << 20),
    ("speak", 1 << 21),
    ("mute_members", 1 << 22),
    ("deafen_members", 1 << 23),
    ("move_members", 1 << 24),
    ("use_vad", 1 << 25),
    ("change_nickname", 1 << 26),
    ("manage_nicknames", 1 << 27),
    ("manage_roles", 1 << 28),
    ("manage_webhooks", 1 << 29),
    ("manage_guild_expressions", 1 << 30),
    ("use_application_commands", 1 << 31),
    ("request_to_speak", 1 << 32),
    ("manage_events", 1 << 33),
    ("manage_threads", 1 << 34),
    ("create_public_threads", 1 << 35),
    ("create_private_threads", 1 << 36),
    ("use_external_stickers", 1 << 37),
    ("send_messages_in_threads", 1 << 38),
    ("use_embedded_activities", 1 << 39),
    ("moderate_members", 1 << 40),
];

/// What the invite asks for: what she reads and writes in channels, slash commands,
/// voice, and what her server-management tools change (channels, roles, messages,
/// threads and forums, moving people between voice channels). Never Administrator.
pub const INVITE: &[&str] = &[
    "view_channel",
    "send_messages",
    "send_messages_in_threads",
    "create_public_threads",
    "manage_threads",
    "embed_links",
    "attach_files",
    "read_message_history",
    "add_reactions",
    "use_application_commands",
    "connect",
    "speak",
    "move_members",
    "manage_channels",
    "manage_roles",
    "manage_messages",
];

/// The permission integer of [`INVITE`].
pub fn invite_permissions() -> u64 {
    INVITE
        .iter()
        .filter_map(|n| permission_bit(n))
        .fold(0, |a, b| a | b)
}

/// The Administrator bit.
pub const ADMINISTRATOR: u64 = 1 << 3;
/// View Channel.
pub const VIEW_CHANNEL: u64 = 1 << 10;
/// Every permission.
pub const ALL: u64 = (1 << 41) - 1;

/// The bit of a permission name (`Manage Channels`, `manage_channels`, `MANAGE_CHANNELS`).
pub fn permission_bit(name: &str) -> Option<u64> {
    let key = name.trim().to_lowercase().replace([' ', '-'], "_");
    PERMISSIONS.iter().find(|(n, _)| *n == key).map(|(_, b)| *b)
}

/// The names of the bits set in `bits`, in Discord's order.
pub fn permission_names(bits: u64) -> Vec<String> {
    PERMISSIONS
        .iter()
        .filter(|(_, b)| bits & b != 0)
        .map(|(n, _)| n.to_string())
        .collect()
}

/// A colour: `#ff8800`, `ff8800`, `0xff8800`, a decimal, or a plain colour word.
pub fn colour(raw: &str) -> Option<u32> {
    let t = raw.trim().to_lowercase();
    let named = match t.as_str() {
        "red" => Some(0xe74c3c),
        "orange" => Some(0xe67e22),
        "yellow" | "gold" => Some(0xf1c40f),
        "green" => Some(0x2ecc71),
        "teal" => Some(0x1abc9c),
        "blue" => Some(0x3498db),
        "purple" => Some(0x9b59b6),
        "pink" => Some(0xe91e63),
        "grey" | "gray" => Some(0x95a5a6),
        "white" => Some(0xffffff),
        "black" => Some(0x010101),
        "none" | "default" => Some(0),
        _ => None,
    };
    if named.is_some() {
        return named;
    }
    let hex = t.strip_prefix('#').or_else(|| t.strip_prefix("0x"));
    let n = match hex {
        Some(h) => u32::from_str_radix(h, 16).ok()?,
        None if t.len() == 6 && t.chars().all(|c| c.is_ascii_hexdigit()) => {
            u32::from_str_radix(&t, 16).ok()?
        }
        None => t.parse().ok()?,
    };
    (n <= 0xffffff).then_some(n)
}

/// The kinds of channel the tools create and show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// A text channel (Discord type 0).
    Text,
    /// A voice channel (2).
    Voice,
    /// A category (4).
    Category,
    /// An announcement channel (5).
    Announcement,
    /// A stage (13).
    Stage,
    /// A forum (15).
    Forum,
    /// Anything else (threads, directories, media).
    Other(u8),
}

impl ChannelKind {
    /// From Discord's channel type.
    pub fn from_type(t: u8) -> ChannelKind {
        match t {
            0 => ChannelKind::Text,
            2 => ChannelKind::Voice,
            4 => ChannelKind::Category,
            5 => ChannelKind::Announcement,
            13 => ChannelKind::Stage,
            15 => ChannelKind::Forum,
            other => ChannelKind::Other(other),
        }
    }

    /// Discord's channel type.
    pub fn to_type(self) -> u8 {
        match self {
            ChannelKind::Text => 0,
            ChannelKind::Voice => 2,
            ChannelKind::Category => 4,
            ChannelKind::Announcement => 5,
            ChannelKind::Stage => 13,
            ChannelKind::Forum => 15,
            ChannelKind::Other(t) => t,
        }
    }

    /// A kind named in `create_channel`'s `value`.
    pub fn named(word: &str) -> Option<ChannelKind> {
        Some(match word.trim().to_lowercase().as_str() {
            "" | "text" => ChannelKind::Text,
            "voice" => ChannelKind::Voice,
            "forum" => ChannelKind::Forum,
            "stage" => ChannelKind::Stage,
            "announcement" | "news" => ChannelKind::Announcement,
            _ => return None,
        })
    }

    /// The word shown for it.
    pub fn word(self) -> &'static str {
        match self {
            ChannelKind::Text => "text",
            ChannelKind::Voice => "voice",
            ChannelKind::Category => "category",
            ChannelKind::Announcement => "announcement",
            ChannelKind::Stage => "stage",
            ChannelKind::Forum => "forum",
            ChannelKind::Other(_) => "other",
        }
    }
}

/// One permission overwrite on a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overwrite {
    /// The role or member it is for.
    pub id: u64,
    /// True for a member, false for a role.
    pub member: bool,
    /// Allowed bits.
    pub allow: u64,
    /// Denied bits.
    pub deny: u64,
}

/// A channel or category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ChannelKind,
    /// Its category.
    pub parent: Option<u64>,
    /// Its position.
    pub position: i64,
    /// Its topic.
    pub topic: Option<String>,
    /// Slowmode seconds.
    pub slowmode: u64,
    /// Its permission overwrites.
    pub overwrites: Vec<Overwrite>,
}

/// A role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    /// Its id (the guild's id for @everyone).
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its colour (0: none).
    pub colour: u32,
    /// Shown apart in the member list.
    pub hoist: bool,
    /// Anyone may mention it.
    pub mentionable: bool,
    /// Its place in the order (higher is above).
    pub position: i64,
    /// Its permission bits.
    pub permissions: u64,
    /// Held by an integration (a bot's own role): it cannot be given or taken.
    pub managed: bool,
}

/// A member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Their user id.
    pub id: u64,
    /// Their username.
    pub username: String,
    /// The name shown in this server (nickname, else global name, else username).
    pub display: String,
    /// Their roles.
    pub roles: Vec<u64>,
    /// A bot.
    pub bot: bool,
}

/// One server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Guild {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its owner's id.
    pub owner: u64,
    /// Her own user id.
    pub me: u64,
    /// The channel of the conversation asking (0: none).
    pub here: u64,
    /// Channels and categories.
    pub channels: Vec<Channel>,
    /// Roles.
    pub roles: Vec<Role>,
    /// Members.
    pub members: Vec<Member>,
}

/// A mention or id inside `<…>` with one of `prefixes`, or a bare id.
fn id_in(raw: &str, prefixes: &[&str]) -> Option<u64> {
    let t = raw.trim();
    if let Ok(id) = t.parse::<u64>() {
        return Some(id);
    }
    let inner = t.strip_prefix('<')?.strip_suffix('>')?;
    prefixes
        .iter()
        .find_map(|p| inner.strip_prefix(p))
        .and_then(|id| id.parse().ok())
}

fn same(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

impl Guild {
    /// The @everyone role.
    pub fn everyone(&self) -> Option<&Role> {
        self.roles.iter().find(|r| r.id == self.id)
    }

    /// A member's server-wide permissions (the owner and Administrator hold all).
    pub fn permissions_of(&self, user: u64) -> u64 {
        if user == self.owner {
            return ALL;
        }
        let mut bits = self.everyone().map(|r| r.permissions).unwrap_or(0);
        if let Some(m) = self.members.iter().find(|m| m.id == user) {
            for r in self.roles.iter().filter(|r| m.roles.contains(&r.id)) {
                bits |= r.permissions;
            }
        }
        if bits & ADMINISTRATOR != 0 {
            ALL
        } else {
            bits
        }
    }

    /// The position of a member's highest role (0: only @everyone).
    pub fn top_of(&self, user: u64) -> i64 {
        let Some(m) = self.members.iter().find(|m| m.id == user) else {
            return 0;
        };
        self.roles
            .iter()
            .filter(|r| m.roles.contains(&r.id))
            .map(|r| r.position)
            .max()
            .unwrap_or(0)
    }

    /// Her own highest role.
    pub fn my_top_role(&self) -> Option<&Role> {
        let m = self.members.iter().find(|m| m.id == self.me)?;
        self.roles
            .iter()
            .filter(|r| m.roles.contains(&r.id))
            .max_by_key(|r| r.position)
    }

    /// A channel or category by `<#id>`, id, `#name` or name.
    pub fn channel(&self, raw: &str) -> Option<&Channel> {
        if let Some(id) = id_in(raw, &["#"]) {
            return self.channels.iter().find(|c| c.id == id);
        }
        let name = raw.trim().trim_start_matches('#');
        self.channels.iter().find(|c| same(&c.name, name))
    }

    /// A role by `<@&id>`, id, `@name` or name.
    pub fn role(&self, raw: &str) -> Option<&Role> {
        if let Some(id) = id_in(raw, &["@&"]) {
            return self.roles.iter().find(|r| r.id == id);
        }
        let t = raw.trim();
        if same(t, "@everyone") || same(t, "everyone") {
            return self.everyone();
        }
        let name = t.trim_start_matches('@');
        self.roles.iter().find(|r| same(&r.name, name))
    }

    /// A member by `<@id>`, `<@!id>`, id, `@name`, username or the name shown here.
    pub fn member(&self, raw: &str) -> Option<&Member> {
        if let Some(id) = id_in(raw, &["@!", "@"]) {
            return self.members.iter().find(|m| m.id == id);
        }
        let name = raw.trim().trim_start_matches('@');
        self.members
            .iter()
            .find(|m| same(&m.display, name) || same(&m.username, name))
    }

    /// The name a member is shown by.
    pub fn member_name(&self, user: u64) -> String {
        self.members
            .iter()
            .find(|m| m.id == user)
            .map(|m| m.display.clone())
            .unwrap_or_else(|| format!("<@{user}>"))
    }

    /// How many members hold `role`.
    pub fn holders_of(&self, role: u64) -> usize {
        if role == self.id {
            return self.members.len();
        }
        self.members
            .iter()
            .filter(|m| m.roles.contains(&role))
            .count()
    }

    /// The name of a role or member an overwrite is for.
    pub fn overwrite_subject(&self, o: &Overwrite) -> String {
        if o.member {
            return self.member_name(o.id);
        }
        if o.id == self.id {
            return "@everyone".into();
        }
        self.roles
            .iter()
            .find(|r| r.id == o.id)
            .map(|r| format!("@{}", r.name))
            .unwrap_or_else(|| format!("<@&{}>", o.id))
    }

    /// One line saying who can see `channel`, from its overwrites.
    pub fn visibility(&self, channel: &Channel) -> String {
        let hidden = channel
            .overwrites
            .iter()
            .any(|o| !o.member && o.id == self.id && o.deny & VIEW_CHANNEL != 0);
        let mut notes: Vec<String> = Vec::new();
        for o in &channel.overwrites {
            let who = self.overwrite_subject(o);
            let allow = permission_names(o.allow);
            let deny = permission_names(o.deny);
            let mut parts = Vec::new();
            if !allow.is_empty() {
                parts.push(format!("+{}", allow.join(" +")));
            }
            if !deny.is_empty() {
                parts.push(format!("-{}", deny.join(" -")));
            }
            if !parts.is_empty() {
                notes.push(format!("{who} {}", parts.join(" ")));
            }
        }
        let head = if hidden {
            let seen: Vec<String> = channel
                .overwrites
                .iter()
                .filter(|o| o.allow & VIEW_CHANNEL != 0)
                .map(|o| self.overwrite_subject(o))
                .collect();
            if seen.is_empty() {
                "private".to_string()
            } else {
                format!("private: {}", seen.join(", "))
            }
        } else if channel.overwrites.is_empty() {
            "everyone".to_string()
        } else {
            "everyone, with overwrites".to_string()
        };
        if notes.is_empty() {
            head
        } else {
            format!("{head} ({})", notes.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guild() -> Guild {
        Guild {
            id: 1,
            name: "g".into(),
            owner: 10,
            me: 20,
            here: 5,
            channels: vec![Channel {
                id: 5,
                name: "general".into(),
                kind: ChannelKind::Text,
                parent: None,
                position: 0,
                topic: None,
                slowmode: 0,
                overwrites: vec![],
            }],
            roles: vec![
                Role {
                    id: 1,
                    name: "@everyone".into(),
                    colour: 0,
                    hoist: false,
                    mentionable: false,
                    position: 0,
                    permissions: VIEW_CHANNEL,
                    managed: false,
                },
                Role {
                    id: 7,
                    name: "Mods".into(),
                    colour: 0,
                    hoist: false,
                    mentionable: true,
                    position: 3,
                    permissions: 1 << 28,
                    managed: false,
                },
            ],
            members: vec![Member {
                id: 20,
                username: "kotoba".into(),
                display: "Kotoba".into(),
                roles: vec![7],
                bot: true,
            }],
        }
    }

    #[test]
    fn a_channel_role_or_person_is_found_by_mention_id_or_name() {
        let g = guild();
        for raw in ["<#5>", "5", "#general", "General"] {
            assert_eq!(g.channel(raw).map(|c| c.id), Some(5), "{raw}");
        }
        for raw in ["<@&7>", "7", "@mods", "Mods"] {
            assert_eq!(g.role(raw).map(|r| r.id), Some(7), "{raw}");
        }
        for raw in ["<@20>", "<@!20>", "20", "@kotoba", "Kotoba"] {
            assert_eq!(g.member(raw).map(|m| m.id), Some(20), "{raw}");
        }
        assert!(g.channel("#nowhere").is_none());
    }

    #[test]
    fn permissions_add_up_over_roles_and_administrator_or_ownership_holds_all() {
        let mut g = guild();
        assert_eq!(g.permissions_of(20), VIEW_CHANNEL | (1 << 28));
        assert_eq!(g.permissions_of(10), ALL);
        g.roles[1].permissions |= ADMINISTRATOR;
        assert_eq!(g.permissions_of(20), ALL);
        assert_eq!(permission_bit("Manage Roles"), Some(1 << 28));
        assert_eq!(
            permission_names(1 << 4 | 1 << 28),
            ["manage_channels", "manage_roles"]
        );
    }
}
