//! discord_guild_read: this server as she sees it — categories and channels in order
//! (kind, topic, slowmode, who can see it), roles in order (colour, hoist, mentionable,
//! members, notable permissions), her own top role and what she may do here.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::guild::{permission_names, ChannelKind, Guild, ALL};
use super::{spec, PortSlot};
use crate::tools::{Availability, Tool, ToolContext, ToolOutput, ToolSpec};

/// The permissions worth naming on a role.
const NOTABLE: u64 = (1 << 1)
    | (1 << 2)
    | (1 << 3)
    | (1 << 4)
    | (1 << 5)
    | (1 << 13)
    | (1 << 17)
    | (1 << 24)
    | (1 << 27)
    | (1 << 28)
    | (1 << 29)
    | (1 << 40);

/// What she can do as a server manager, by the permission it takes.
const ABILITIES: &[(u64, &str)] = &[
    (1 << 4, "manage channels and categories"),
    (1 << 28, "manage roles and channel permissions"),
    (1 << 1, "kick"),
    (1 << 2, "ban"),
    (1 << 40, "time people out"),
    (1 << 24, "move people between voice channels"),
    (1 << 27, "change nicknames"),
    (1 << 11, "post messages"),
];

/// The text discord_guild_read answers for `g`.
pub(super) fn describe(g: &Guild) -> String {
    let mut out = vec![format!("Server: {} (id {})", g.name, g.id)];
    let line = |c: &super::guild::Channel, indent: &str| {
        let mut l = format!("{indent}#{} ({}, id {})", c.name, c.kind.word(), c.id);
        if let Some(t) = c.topic.as_deref().filter(|t| !t.is_empty()) {
            l.push_str(&format!(", topic \"{}\"", crate::tools::clip_chars(t, 100)));
        }
        if c.slowmode > 0 {
            l.push_str(&format!(", slowmode {} s", c.slowmode));
        }
        l.push_str(&format!(", seen by {}", g.visibility(c)));
        l
    };
    let mut sorted: Vec<_> = g.channels.iter().collect();
    sorted.sort_by_key(|c| (c.position, c.id));
    out.push("Channels:".into());
    for c in sorted
        .iter()
        .filter(|c| c.parent.is_none() && c.kind != ChannelKind::Category)
    {
        out.push(line(c, "  "));
    }
    for cat in sorted.iter().filter(|c| c.kind == ChannelKind::Category) {
        out.push(format!(
            "  Category {} (id {}), seen by {}",
            cat.name,
            cat.id,
            g.visibility(cat)
        ));
        for c in sorted.iter().filter(|c| c.parent == Some(cat.id)) {
            out.push(line(c, "    "));
        }
    }
    out.push("Roles, highest first:".into());
    let mut roles: Vec<_> = g.roles.iter().collect();
    roles.sort_by_key(|r| std::cmp::Reverse((r.position, r.id)));
    for r in roles {
        let mut l = format!(
            "  @{} (id {}, {} members",
            r.name.trim_start_matches('@'),
            r.id,
            g.holders_of(r.id)
        );
        if r.colour != 0 {
            l.push_str(&format!(", colour #{:06x}", r.colour));
        }
        if r.hoist {
            l.push_str(", shown apart");
        }
        if r.mentionable {
            l.push_str(", mentionable");
        }
        if r.managed {
            l.push_str(", a bot's own role");
        }
        let notable = permission_names(r.permissions & NOTABLE);
        if !notable.is_empty() {
            l.push_str(&format!(", can {}", notable.join(", ")));
        }
        l.push(')');
        out.push(l);
    }
    let mine = g.permissions_of(g.me);
    out.push(match g.my_top_role() {
        Some(r) => format!(
            "My highest role: @{} (position {}); I can only change roles and people below it.",
            r.name, r.position
        ),
        None => "I hold no role here beyond @everyone.".into(),
    });
    let can: Vec<&str> = ABILITIES
        .iter()
        .filter(|(b, _)| mine & b != 0)
        .map(|(_, w)| *w)
        .collect();
    out.push(if mine == ALL {
        "I am an Administrator here, but I never give Administrator to anyone.".into()
    } else if can.is_empty() {
        "I may not change anything here.".into()
    } else {
        format!("I may: {}.", can.join(", "))
    });
    out.join("\n")
}

/// discord_guild_read.
pub struct GuildRead {
    spec: ToolSpec,
    port: PortSlot,
}

impl GuildRead {
    /// The tool, reading through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({"type": "object", "properties": {}, "additionalProperties": false});
        GuildRead {
            spec: spec(
                "discord_guild_read",
                "Read this Discord server's layout: categories and channels (kind, topic, slowmode, who can see them), roles in order with their members and notable permissions, my own top role and what I may change here.",
                params,
                ["Let me look at the server.", "Still reading the server…", "Read the server.", "I couldn't read the server."],
            ),
            port,
        }
    }
}

#[async_trait]
impl Tool for GuildRead {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, ctx: &Availability<'_>) -> bool {
        super::offered_here(&self.port, ctx)
    }

    async fn run(&self, _args: Value, ctx: &ToolContext) -> ToolOutput {
        let Some(port) = self.port.get() else {
            return ToolOutput::refused("Discord is not connected, so nothing was read.");
        };
        match port.guild(&ctx.turn).await {
            Ok(g) => ToolOutput::ok(describe(&g)),
            Err(why) => ToolOutput::refused(why.to_string()),
        }
    }
}
