//! discord_people: the members of this guild, through the port, with what she
//! remembers about each (discord_remember_person).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{spec, PortSlot};
use crate::tools::args::opt_str;
use crate::tools::{Availability, Tool, ToolContext, ToolOutput, ToolSpec};

/// discord_people: the members of this guild.
pub struct People {
    spec: ToolSpec,
    port: PortSlot,
}

impl People {
    /// The tool, reading through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Part of a name to look for; everyone when left out."}
            },
            "additionalProperties": false
        });
        People {
            spec: spec(
                "discord_people",
                "List the members of this Discord server (only this one), optionally matching a name.",
                params,
                ["Let me look at who's here.", "Still looking…", "Found them.", "I couldn't list the members."],
            ),
            port,
        }
    }
}

#[async_trait]
impl Tool for People {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, _ctx: &Availability<'_>) -> bool {
        self.port.get().is_some()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let query = match opt_str(&args, "query", "discord_people") {
            Ok(q) => q,
            Err(r) => return r,
        };
        let Some(port) = self.port.get() else {
            return ToolOutput::refused("Discord is not connected, so nobody was listed.");
        };
        match port.people(&ctx.turn, query).await {
            Ok(text) => ToolOutput::ok(with_facts(text, &*port, ctx).await),
            Err(why) => ToolOutput::refused(why.to_string()),
        }
    }
}

/// Each member's line of `text` (`… (id N)…`) followed by what she remembers of them —
/// what the person asking could have heard ([`super::remember::may_hear`]).
async fn with_facts(text: String, port: &dyn super::DiscordPort, ctx: &ToolContext) -> String {
    let (Some(guild), Some(store)) = (port.guild_id(&ctx.turn), ctx.store.as_ref()) else {
        return text;
    };
    let facts = super::remember::heard_by(
        store.person_facts(guild, None).await.unwrap_or_default(),
        &ctx.turn,
        port,
    );
    if facts.is_empty() {
        return text;
    }
    text.lines()
        .map(|line| {
            let mine: Vec<String> = facts
                .iter()
                .filter(|f| line.contains(&format!("(id {})", f.user)))
                .map(super::remember::fact_words)
                .collect();
            if mine.is_empty() {
                line.to_string()
            } else {
                format!("{line}; remembered: {}", mine.join("; "))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
