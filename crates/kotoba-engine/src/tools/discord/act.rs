//! discord_act: up to 20 declarative changes to this server behind one card. Before the
//! card every change is resolved against the server; what may never be done (Administrator
//! to anyone, a role or person at or above her top role, what she lacks the permission
//! for) is refused by name and the rest is carded. Approved, the changes are applied in
//! order (a role made early is usable later), each result reported and audited.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::action::OPS;
use super::batch;
use super::{write_spec, PortSlot};
use crate::tools::{Availability, Prepared, Tool, ToolContext, ToolOutput, ToolSpec};

/// The tool's name.
const NAME: &str = "discord_act";
/// The most changes in one call.
pub(super) const MAX_ACTIONS: usize = 20;
/// Its budget.
pub(super) const ACT_TIMEOUT: Duration = Duration::from_secs(240);

/// discord_act.
pub struct DiscordAct {
    spec: ToolSpec,
    port: PortSlot,
    /// Batches checked for their card, until their run.
    prepared: batch::Stash,
}

impl DiscordAct {
    /// The tool, acting through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "actions": {
                    "type": "array",
                    "maxItems": MAX_ACTIONS,
                    "description": "The changes, applied in order (a role or channel created early can be used later).",
                    "items": {
                        "type": "object",
                        "properties": {
                            "op": {"type": "string", "enum": OPS},
                            "target": {"type": "string", "description": "What it acts on (#channel, a category name, @role, a person; by mention, id or name); for create_* the new name."},
                            "to": {"type": "string", "description": "A new name (rename_*), a category (create_channel, move_channel), a voice channel (move_to_voice)."},
                            "user": {"type": "string", "description": "A person (give_role, take_role, kick, ban, timeout, nickname, move_to_voice)."},
                            "value": {"description": "The kind for create_channel (text, voice, forum, stage, announcement), slowmode seconds, timeout minutes, a colour (#ff8800) or message text."},
                            "topic": {"type": "string"},
                            "tags": {"type": "array", "items": {}},
                            "emoji": {"type": "string"},
                            "first_post": {"type": "string"},
                            "first_body": {"type": "string"},
                            "roles": {"type": "array", "items": {"type": "string"}, "description": "Roles or people: who may see a private channel, whom set_permissions sets."},
                            "allow": {"type": "array", "items": {"type": "string"}, "description": "Permission names to allow (view_channel, send_messages, …)."},
                            "deny": {"type": "array", "items": {"type": "string"}, "description": "Permission names to deny."},
                            "hoist": {"type": "boolean"},
                            "mentionable": {"type": "boolean"}
                        },
                        "required": ["op"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["actions"],
            "additionalProperties": false
        });
        DiscordAct {
            spec: write_spec(
                "discord_act",
                "Change this Discord server: channels, categories, roles, members, permissions, messages. Up to 20 changes in one call, shown on one approval card and applied in order.",
                params,
                ACT_TIMEOUT,
                ["Let me set that up.", "Still changing the server…", "Done with the server.", "I couldn't change the server."],
            ),
            port,
            prepared: batch::Stash::default(),
        }
    }
}

#[async_trait]
impl Tool for DiscordAct {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, ctx: &Availability<'_>) -> bool {
        super::offered_here(&self.port, ctx)
    }

    fn action_line(&self, args: &Value) -> String {
        let ops: Vec<String> = batch::parse(args, "actions", MAX_ACTIONS, NAME)
            .map(|l| l.into_iter().map(|a| a.op).collect())
            .unwrap_or_default();
        crate::tools::clip_chars(&format!("{NAME} {}", ops.join(", ")), 200)
    }

    async fn prepare(&self, args: &Value, ctx: &ToolContext) -> Prepared {
        let actions = match batch::parse(args, "actions", MAX_ACTIONS, NAME) {
            Ok(a) => a,
            Err(why) => return Prepared::Done(ToolOutput::refused(why.to_string())),
        };
        let (_, g) = match batch::read(&self.port, ctx, NAME).await {
            Ok(x) => x,
            Err(why) => return Prepared::Done(ToolOutput::refused(why.to_string())),
        };
        let (ok, refused) = batch::check(&g, &actions, &[]);
        if ok.is_empty() {
            return Prepared::Done(ToolOutput::refused(format!(
                "Nothing was changed and no card was shown: every change was refused.\n{}",
                refused.join("\n")
            )));
        }
        let action = batch::card_lines(&ok, &refused).join("\n");
        let may_answer = batch::may_answer(ctx, &ok);
        self.prepared.keep(ctx, batch::Kept::of(ok, refused));
        Prepared::Ask { action, may_answer }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (port, mut g) = match batch::read(&self.port, ctx, NAME).await {
            Ok(x) => x,
            Err(why) => return ToolOutput::refused(why.to_string()),
        };
        let prepared = match self.prepared.take(ctx) {
            Some(k) => k,
            // Not prepared (called outside the gate): check it now.
            None => match batch::parse(&args, "actions", MAX_ACTIONS, NAME) {
                Ok(actions) => {
                    let (ok, refused) = batch::check(&g, &actions, &[]);
                    batch::Kept::of(ok, refused)
                }
                Err(why) => return ToolOutput::refused(why.to_string()),
            },
        };
        let mut report = Vec::new();
        let (mut done, mut failed) = (0, 0);
        for (n, a) in &prepared.actions {
            // Re-checked against the server as it is now, with the batch's earlier changes.
            match batch::apply_one(&port, ctx, &mut g, a).await {
                Ok(line) => {
                    done += 1;
                    report.push(format!("{n}. ✓ {line}"));
                    batch::audit(ctx, NAME, &line, true, "done").await;
                }
                Err((line, why)) => {
                    failed += 1;
                    report.push(format!("{n}. ✗ {line}: {why}"));
                    batch::audit(ctx, NAME, &line, false, &why).await;
                }
            }
        }
        let mut text = format!(
            "{done} of {} changes applied{}.\n{}",
            prepared.actions.len(),
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            },
            report.join("\n")
        );
        if !prepared.refused.is_empty() {
            text.push_str("\nRefused before the card (not done):\n");
            text.push_str(&prepared.refused.join("\n"));
        }
        if done == 0 && failed > 0 {
            ToolOutput::failed(text)
        } else {
            ToolOutput::ok(text)
        }
    }
}
