//! discord_plan: a proposed layout (what to create, change, delete) compared with the
//! server as it stands — what is already there is dropped, what cannot be done is
//! refused by name — stored under an id for discord_apply_plan and shown in the channel
//! as an embed. Nothing changes.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::action::{Action, Mark, OPS};
use super::batch;
use super::{spec, Guild, PortSlot};
use crate::tools::{Availability, Tool, ToolContext, ToolOutput, ToolSpec};

const NAME: &str = "discord_plan";
/// The most changes in one plan.
pub(super) const PLAN_MAX: usize = 100;
/// Past this many deletions a plan is applied only with `confirm_deletes`.
pub(super) const DELETE_CONFIRM_OVER: usize = 12;

/// Whether a `create_*` action names something already there (then it is dropped).
fn already_there(g: &Guild, a: &Action) -> bool {
    let Some(name) = a.target.as_deref() else {
        return false;
    };
    match a.op.as_str() {
        "create_channel" | "create_category" => g.channel(name).is_some(),
        "create_role" => g.role(name).is_some(),
        _ => false,
    }
}

/// discord_plan.
pub struct DiscordPlan {
    spec: ToolSpec,
    port: PortSlot,
}

impl DiscordPlan {
    /// The tool, reading through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "changes": {
                    "type": "array",
                    "maxItems": PLAN_MAX,
                    "description": "The layout as changes in order, each shaped like one of discord_act's actions.",
                    "items": {"type": "object", "properties": {"op": {"type": "string", "enum": OPS}}, "required": ["op"]}
                }
            },
            "required": ["changes"],
            "additionalProperties": false
        });
        DiscordPlan {
            spec: spec(
                NAME,
                "Plan a new layout for this Discord server (what to create, change and delete, in discord_act's change shape, up to 100): it is compared with the server and stored under a plan id for discord_apply_plan. Nothing changes.",
                params,
                ["Let me draw up a plan.", "Still planning…", "Here's the plan.", "I couldn't plan that."],
            ),
            port,
        }
    }
}

#[async_trait]
impl Tool for DiscordPlan {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, ctx: &Availability<'_>) -> bool {
        super::offered_here(&self.port, ctx)
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let actions = match batch::parse(&args, "changes", PLAN_MAX, NAME) {
            Ok(a) => a,
            Err(why) => return ToolOutput::refused(why.to_string()),
        };
        let (port, g) = match batch::read(&self.port, ctx, NAME).await {
            Ok(x) => x,
            Err(why) => {
                let why = why.to_string();
                return ToolOutput::refused(why.replace("nothing changed", "nothing was planned"));
            }
        };
        let Some(store) = &ctx.store else {
            return ToolOutput::refused(
                "There is no store to keep the plan in, so nothing was planned.",
            );
        };
        let (there, wanted): (Vec<Action>, Vec<Action>) =
            actions.into_iter().partition(|a| already_there(&g, a));
        let (ok, refused) = batch::check(&g, &wanted, &[]);
        if ok.is_empty() {
            return ToolOutput::refused(format!(
                "Nothing to plan: every change is already in place or refused.\n{}",
                refused.join("\n")
            ));
        }
        let kept: Vec<&Action> = ok.iter().map(|(_, a, _)| a).collect();
        let changes = match serde_json::to_string(&kept) {
            Ok(c) => c,
            Err(e) => {
                return ToolOutput::failed(format!("The plan could not be written down ({e})."))
            }
        };
        let id = format!("plan-{:08x}", rand::random::<u32>());
        if let Err(e) = store.save_plan(&id, ctx.session(), g.id, &changes).await {
            return ToolOutput::failed(format!("The plan could not be kept ({e})."));
        }
        let deletes = batch::deletions(&ok);
        let creates = ok
            .iter()
            .filter(|(_, a, _)| a.op.starts_with("create_"))
            .count();
        let mut out = vec![format!(
            "Plan {id} for this server (nothing has changed yet): {} changes — {creates} to create, {} to change, {deletes} to delete.",
            ok.len(),
            ok.len() - creates - deletes
        )];
        out.extend(
            ok.iter()
                .enumerate()
                .map(|(i, (_, _, r))| format!("{}. {}", i + 1, r.marked())),
        );
        for a in &there {
            out.push(format!(
                "Already there, left out: {} {}.",
                a.op,
                a.target.as_deref().unwrap_or("")
            ));
        }
        out.extend(refused);
        out.push(format!(
            "To apply it call discord_apply_plan with plan_id {id}{}. There is no undo.",
            if ok.iter().filter(|(_, _, r)| r.mark == Mark::Delete).count() > DELETE_CONFIRM_OVER {
                format!(" and confirm_deletes true once the person has agreed to the {deletes} deletions")
            } else {
                String::new()
            }
        ));
        // Shown in the channel as an embed; the model reads the same text.
        let title = format!("Plan {id} (nothing has changed yet)");
        let shown = match port
            .post_embed(&ctx.turn, &title, &out[1..].join("\n"))
            .await
        {
            Ok(()) => "It is shown in the channel as an embed.".to_string(),
            Err(why) => format!("It could not be shown as an embed: {why}."),
        };
        out.push(shown);
        ToolOutput::ok(out.join("\n"))
    }
}
