//! discord_act: up to 20 declarative changes to this server behind one card. Before the
//! card every change is resolved against the server; what may never be done (Administrator
//! to anyone, a role or person at or above her top role, what she lacks the permission
//! for) is refused by name and the rest is carded. Approved, the changes are applied in
//! order (a role made early is usable later), each result reported and audited.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dashmap::DashMap;
use serde_json::{json, Value};

use super::guild::{permission_names, Guild};
use super::resolve::{remember, resolve, Action, Resolved, OPS};
use super::{write_spec, DiscordPort, PortSlot};
use crate::protocol::Origin;
use crate::store::Approver;
use crate::tools::{Availability, MayAnswer, Prepared, Tool, ToolContext, ToolOutput, ToolSpec};

/// The most changes in one call.
pub const MAX_ACTIONS: usize = 20;
/// Its budget.
pub const ACT_TIMEOUT: Duration = Duration::from_secs(240);

/// What prepare found, kept for the run of the same call.
#[derive(Debug, Clone)]
struct Batch {
    /// The actions to apply, in order (refused ones left out).
    actions: Vec<Action>,
    /// One sentence per refused action.
    refused: Vec<String>,
}

/// discord_act.
pub struct DiscordAct {
    spec: ToolSpec,
    port: PortSlot,
    /// Batches prepared for their card, by session and call id.
    prepared: DashMap<(String, String), Batch>,
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
            prepared: DashMap::new(),
        }
    }

    fn parse(args: &Value) -> Result<Vec<Action>, String> {
        let list = args
            .get("actions")
            .and_then(Value::as_array)
            .ok_or("discord_act needs `actions`: a list of changes, each with an `op`.")?;
        if list.is_empty() {
            return Err("discord_act got an empty `actions` list, so nothing changed.".into());
        }
        if list.len() > MAX_ACTIONS {
            return Err(format!(
                "discord_act takes at most {MAX_ACTIONS} changes in one call, not {}; split the batch.",
                list.len()
            ));
        }
        list.iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value::<Action>(v.clone())
                    .map_err(|e| format!("change {} of discord_act is malformed: {e}.", i + 1))
            })
            .collect()
    }

    /// Resolve every action against `g` in order, as if the earlier ones were done.
    fn check(g: &Guild, actions: &[Action], here: u64) -> (Vec<(Action, Resolved)>, Vec<String>) {
        let mut sim = g.clone();
        let mut ok = Vec::new();
        let mut refused = Vec::new();
        for (i, a) in actions.iter().enumerate() {
            match resolve(&sim, a, here) {
                Ok(r) => {
                    remember(&mut sim, &r.change, Some(0));
                    ok.push((a.clone(), r));
                }
                Err(why) => refused.push(format!(
                    "Refused change {} ({}{}): {why}.",
                    i + 1,
                    a.op,
                    a.target
                        .as_deref()
                        .map(|t| format!(" {t}"))
                        .unwrap_or_default()
                )),
            }
        }
        (ok, refused)
    }

    async fn read(&self, ctx: &ToolContext) -> Result<(Arc<dyn DiscordPort>, Guild), String> {
        if !matches!(ctx.origin, Some(Origin::Discord { .. })) {
            return Err(
                "discord_act works only in a conversation on Discord, so nothing changed.".into(),
            );
        }
        let port = self
            .port
            .get()
            .ok_or("Discord is not connected, so nothing changed.")?;
        let g = port.guild(&ctx.session).await?;
        Ok((port, g))
    }

    fn audit(ctx: &ToolContext, line: &str, ok: bool, result: &str) {
        let Some(store) = &ctx.store else { return };
        let asker = match &ctx.origin {
            Some(Origin::Discord { user, .. }) => format!("<@{user}>"),
            _ => ctx.asker.clone().unwrap_or_else(|| "someone".into()),
        };
        let by = ctx.approved_by.as_deref().unwrap_or("nobody (no card)");
        let detail = format!("asked by {asker}; approved by {by}; {result}");
        let approver = if ok {
            Approver::Executed
        } else {
            Approver::ExecutedFailed
        };
        if let Err(e) = store.audit(
            &ctx.session,
            "discord_act",
            line,
            "write",
            ok,
            approver,
            &detail,
        ) {
            tracing::error!("writing the audit trail: {e}");
        }
    }
}

/// The channel of this conversation, when the guild says so.
fn here_of(g: &Guild) -> u64 {
    g.here
}

#[async_trait]
impl Tool for DiscordAct {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, _ctx: &Availability<'_>) -> bool {
        self.port.get().is_some()
    }

    fn action_line(&self, args: &Value) -> String {
        let ops: Vec<String> = Self::parse(args)
            .map(|l| l.into_iter().map(|a| a.op).collect())
            .unwrap_or_default();
        crate::tools::clip_chars(&format!("discord_act {}", ops.join(", ")), 200)
    }

    async fn prepare(&self, args: &Value, ctx: &ToolContext) -> Prepared {
        let actions = match Self::parse(args) {
            Ok(a) => a,
            Err(why) => return Prepared::Done(ToolOutput::refused(why)),
        };
        let (_, g) = match self.read(ctx).await {
            Ok(x) => x,
            Err(why) => return Prepared::Done(ToolOutput::refused(why)),
        };
        let (ok, refused) = Self::check(&g, &actions, here_of(&g));
        if ok.is_empty() {
            return Prepared::Done(ToolOutput::refused(format!(
                "Nothing was changed and no card was shown: every change was refused.\n{}",
                refused.join("\n")
            )));
        }
        let mut lines: Vec<String> = ok
            .iter()
            .enumerate()
            .map(|(i, (_, r))| format!("{}. {}", i + 1, r.marked()))
            .collect();
        if !refused.is_empty() {
            lines.push(String::new());
            lines.push("Not on this card (refused):".into());
            lines.extend(refused.iter().cloned());
        }
        let needs = ok.iter().fold(0, |acc, (_, r)| acc | r.needs);
        let may_answer = match &ctx.origin {
            Some(Origin::Discord { user, .. }) => Some(MayAnswer {
                asker: user.to_string(),
                asker_needs: permission_names(needs),
                anyone_with: vec!["administrator".into()],
            }),
            _ => None,
        };
        self.prepared.insert(
            (ctx.session.clone(), ctx.call_id.clone()),
            Batch {
                actions: ok.into_iter().map(|(a, _)| a).collect(),
                refused,
            },
        );
        Prepared::Ask {
            action: lines.join("\n"),
            may_answer,
        }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let key = (ctx.session.clone(), ctx.call_id.clone());
        let batch = match self.prepared.remove(&key) {
            Some((_, b)) => b,
            None => match Self::parse(&args) {
                // Not prepared (called outside the gate): check it now.
                Ok(actions) => {
                    let g = match self.read(ctx).await {
                        Ok((_, g)) => g,
                        Err(why) => return ToolOutput::refused(why),
                    };
                    let (ok, refused) = Self::check(&g, &actions, here_of(&g));
                    Batch {
                        actions: ok.into_iter().map(|(a, _)| a).collect(),
                        refused,
                    }
                }
                Err(why) => return ToolOutput::refused(why),
            },
        };
        let (port, mut g) = match self.read(ctx).await {
            Ok(x) => x,
            Err(why) => return ToolOutput::refused(why),
        };
        let here = here_of(&g);
        let mut report = Vec::new();
        let (mut done, mut failed) = (0, 0);
        for (i, a) in batch.actions.iter().enumerate() {
            let n = i + 1;
            // Re-checked against the server as it is now, with the batch's earlier changes.
            let r = match resolve(&g, a, here) {
                Ok(r) => r,
                Err(why) => {
                    failed += 1;
                    report.push(format!("{n}. ✗ {}: not done: {why}.", a.op));
                    Self::audit(ctx, &a.op, false, &format!("not done: {why}"));
                    continue;
                }
            };
            match port.apply(&ctx.session, &r.change).await {
                Ok(id) => {
                    done += 1;
                    remember(&mut g, &r.change, id);
                    report.push(format!("{n}. ✓ {}", r.line));
                    Self::audit(ctx, &r.line, true, "done");
                }
                Err(e) => {
                    failed += 1;
                    let why = e.sentence();
                    report.push(format!("{n}. ✗ {}: {why}", r.line));
                    Self::audit(ctx, &r.line, false, &why);
                }
            }
        }
        let mut text = format!(
            "{done} of {} changes applied{}.\n{}",
            batch.actions.len(),
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            },
            report.join("\n")
        );
        if !batch.refused.is_empty() {
            text.push_str("\nRefused before the card (not done):\n");
            text.push_str(&batch.refused.join("\n"));
        }
        if done == 0 && failed > 0 {
            ToolOutput::failed(text)
        } else {
            ToolOutput::ok(text)
        }
    }
}
