//! discord_apply_plan: applies a stored plan behind one card naming every deletion. More
//! than 12 deletions are refused until `confirm_deletes`; a snapshot of the server
//! (channels, roles, overwrites) is written to the data folder first; each change is
//! paced and journalled in the store, so a run that stopped resumes with `resume` and
//! applies nothing twice. There is no undo.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::action::Action;
use super::batch;
use super::guild::Guild;
use super::plan::DELETE_CONFIRM_OVER;
use super::{write_spec, PortSlot};
use crate::tools::{Availability, Prepared, Tool, ToolContext, ToolOutput, ToolSpec};

const NAME: &str = "discord_apply_plan";
/// Its budget.
pub(super) const APPLY_TIMEOUT: Duration = Duration::from_secs(600);
/// The pause between two changes (Discord limits bursts of server changes).
pub(super) const PACE: Duration = Duration::from_millis(200);
/// What the answer and the card always say.
pub(super) const NO_UNDO: &str = "There is no undo: what is deleted is gone, and recreating a channel does not bring back its messages.";

/// The server as JSON (channels with their overwrites, roles), for the snapshot.
fn snapshot(g: &Guild) -> Value {
    let overwrites = |c: &super::guild::Channel| -> Vec<Value> {
        c.overwrites
            .iter()
            .map(|o| json!({"id": o.id.to_string(), "type": u8::from(o.member), "allow": o.allow.to_string(), "deny": o.deny.to_string()}))
            .collect()
    };
    json!({
        "guild": {"id": g.id.to_string(), "name": g.name},
        "channels": g.channels.iter().map(|c| json!({
            "id": c.id.to_string(), "name": c.name, "type": c.kind.to_type(),
            "parent_id": c.parent.map(|p| p.to_string()), "position": c.position,
            "topic": c.topic, "rate_limit_per_user": c.slowmode,
            "permission_overwrites": overwrites(c)
        })).collect::<Vec<_>>(),
        "roles": g.roles.iter().map(|r| json!({
            "id": r.id.to_string(), "name": r.name, "color": r.colour, "hoist": r.hoist,
            "mentionable": r.mentionable, "position": r.position,
            "permissions": r.permissions.to_string(), "managed": r.managed
        })).collect::<Vec<_>>()
    })
}

/// Why a plan was not applied and no card was shown (the sentence the model reads).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum PlanError {
    /// The call names no plan.
    #[error("discord_apply_plan needs `plan_id`: the id discord_plan gave.")]
    NoId,
    /// No store keeps plans here.
    #[error("There is no store holding plans.")]
    NoStore,
    /// The store did not give the plan back.
    #[error("The plan could not be read ({0}).")]
    Unread(String),
    /// No plan has that id.
    #[error("There is no plan '{0}'; make one with discord_plan.")]
    NoPlan(String),
    /// The plan is for another server than this conversation's.
    #[error("Plan '{0}' is for another server, so nothing changed.")]
    OtherServer(String),
    /// The plan's changes no longer read as changes.
    #[error("Plan '{id}' cannot be read back ({error}).")]
    Garbled {
        /// The plan.
        id: String,
        /// What the reader said.
        error: String,
    },
    /// The store did not give back which steps were done.
    #[error("The plan's journal could not be read ({0}).")]
    Journal(String),
    /// Reading the server (or the call's changes) failed.
    #[error(transparent)]
    Batch(#[from] batch::BatchError),
    /// Part of the plan was applied and the call did not say `resume`.
    #[error(
        "Plan {id} was partly applied already ({done} of {total} changes, journalled), so nothing \
         changed now. Call again with resume: true to apply the rest; nothing already done is \
         applied twice."
    )]
    PartlyApplied {
        /// The plan.
        id: String,
        /// Changes done before.
        done: usize,
        /// Changes in the plan.
        total: usize,
    },
    /// Every change of the plan was applied before.
    #[error("Plan {0} is already fully applied; nothing is left to do.")]
    Applied(String),
    /// The plan deletes more than a card may without `confirm_deletes`.
    #[error(
        "Plan {id} deletes {deletes} things, more than {DELETE_CONFIRM_OVER}, so it was NOT \
         applied and no card was shown. Show the person every deletion below; only if they \
         agree, call again with confirm_deletes: true. {NO_UNDO}\n{list}"
    )]
    Deletes {
        /// The plan.
        id: String,
        /// How many deletions it makes.
        deletes: usize,
        /// One numbered line per deletion.
        list: String,
    },
    /// Every change left was refused against the server as it is.
    #[error("Nothing in plan {id} can be applied now.\n{refused}")]
    NothingApplicable {
        /// The plan.
        id: String,
        /// One line per refused change.
        refused: String,
    },
}

/// The plan's changes and the steps already journalled, or why not.
async fn load(
    ctx: &ToolContext,
    id: &str,
    g: &Guild,
) -> Result<(Vec<Action>, Vec<usize>), PlanError> {
    let store = ctx.store.as_ref().ok_or(PlanError::NoStore)?;
    let (_, guild, changes) = store
        .plan(id)
        .await
        .map_err(|e| PlanError::Unread(e.to_string()))?
        .ok_or_else(|| PlanError::NoPlan(id.to_string()))?;
    if guild != g.id {
        return Err(PlanError::OtherServer(id.to_string()));
    }
    let actions: Vec<Action> = serde_json::from_str(&changes).map_err(|e| PlanError::Garbled {
        id: id.to_string(),
        error: e.to_string(),
    })?;
    let done = store
        .plan_steps_done(id)
        .await
        .map_err(|e| PlanError::Journal(e.to_string()))?;
    Ok((actions, done))
}

/// discord_apply_plan.
pub struct ApplyPlan {
    spec: ToolSpec,
    port: PortSlot,
    prepared: batch::Stash,
}

impl ApplyPlan {
    /// The tool, acting through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "plan_id": {"type": "string", "description": "The id discord_plan gave."},
                "confirm_deletes": {"type": "boolean", "description": "Required when the plan deletes more than 12 things: the person agreed to every deletion."},
                "resume": {"type": "boolean", "description": "Go on with a plan whose run stopped; what was applied is skipped."}
            },
            "required": ["plan_id"],
            "additionalProperties": false
        });
        ApplyPlan {
            spec: write_spec(
                NAME,
                "Apply a plan made by discord_plan to this Discord server, behind one approval card. Writes a snapshot first; changes are journalled so a stopped run resumes with resume: true. There is no undo.",
                params,
                APPLY_TIMEOUT,
                ["Let me apply the plan.", "Still applying the plan…", "The plan is applied.", "The plan stopped."],
            ),
            port,
            prepared: batch::Stash::default(),
        }
    }

    /// Read the call: the plan's id, its changes checked against the server, or the
    /// refusal (no such plan, partly applied without `resume`, too many deletions).
    async fn gather(
        &self,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<(String, Vec<batch::Checked>, Vec<String>), PlanError> {
        let id = args
            .get("plan_id")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or(PlanError::NoId)?
            .to_string();
        let flag = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(false);
        let (_, g) = batch::read(&self.port, ctx, NAME).await?;
        let (actions, done) = load(ctx, &id, &g).await?;
        if !done.is_empty() && !flag("resume") {
            return Err(PlanError::PartlyApplied {
                id,
                done: done.len(),
                total: actions.len(),
            });
        }
        if done.len() >= actions.len() {
            return Err(PlanError::Applied(id));
        }
        let (ok, refused) = batch::check(&g, &actions, &done);
        let deletes = batch::deletions(&ok);
        if deletes > DELETE_CONFIRM_OVER && !flag("confirm_deletes") {
            let list: Vec<String> = ok
                .iter()
                .filter(|(_, _, r)| r.mark == super::action::Mark::Delete)
                .map(|(n, _, r)| format!("{n}. {}", r.line))
                .collect();
            return Err(PlanError::Deletes {
                id,
                deletes,
                list: list.join("\n"),
            });
        }
        if ok.is_empty() {
            return Err(PlanError::NothingApplicable {
                id,
                refused: refused.join("\n"),
            });
        }
        Ok((id, ok, refused))
    }
}

#[async_trait]
impl Tool for ApplyPlan {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, ctx: &Availability<'_>) -> bool {
        super::offered_here(&self.port, ctx)
    }

    fn action_line(&self, args: &Value) -> String {
        let id = args.get("plan_id").and_then(Value::as_str).unwrap_or("");
        format!("{NAME} {id}").trim_end().to_string()
    }

    async fn prepare(&self, args: &Value, ctx: &ToolContext) -> Prepared {
        let (id, ok, refused) = match self.gather(args, ctx).await {
            Ok(x) => x,
            Err(why) => return Prepared::Done(ToolOutput::refused(why.to_string())),
        };
        let mut lines = vec![format!(
            "Plan {id}: {} changes, {} deletions.",
            ok.len(),
            batch::deletions(&ok)
        )];
        lines.extend(batch::card_lines(&ok, &refused));
        lines.push(String::new());
        lines.push(NO_UNDO.into());
        let may_answer = batch::may_answer(ctx, &ok);
        self.prepared.keep(ctx, batch::Kept::of(ok, refused));
        Prepared::Ask {
            action: lines.join("\n"),
            may_answer,
        }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let kept = match self.prepared.take(ctx) {
            Some(k) => k,
            None => match self.gather(&args, ctx).await {
                Ok((_, ok, refused)) => batch::Kept::of(ok, refused),
                Err(why) => return ToolOutput::refused(why.to_string()),
            },
        };
        let id = args
            .get("plan_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string();
        let (port, mut g) = match batch::read(&self.port, ctx, NAME).await {
            Ok(x) => x,
            Err(why) => return ToolOutput::refused(why.to_string()),
        };
        let Some(store) = ctx.store.clone() else {
            return ToolOutput::refused(
                "There is no store for the plan's journal, so nothing changed.",
            );
        };
        // What a run before this one (or a repeat of this call) already did is skipped.
        let done = store.plan_steps_done(&id).await.unwrap_or_default();
        let folder = ctx.paths.home.join("discord").join("snapshots");
        let file = folder.join(format!("{}-{id}-{}.json", g.id, kotoba_store::now_ms()));
        let written = std::fs::create_dir_all(&folder).and_then(|()| {
            std::fs::write(
                &file,
                serde_json::to_vec_pretty(&snapshot(&g)).unwrap_or_default(),
            )
        });
        if let Err(e) = written {
            return ToolOutput::not_started(format!(
                "The snapshot of the server could not be written ({e}), so nothing changed."
            ));
        }
        let shot = file.display().to_string();
        batch::audit(
            ctx,
            NAME,
            &format!("apply {id}"),
            true,
            &format!("snapshot {shot}"),
        )
        .await;
        let mut report = Vec::new();
        let mut applied = 0;
        let todo: Vec<&(usize, Action)> = kept
            .actions
            .iter()
            .filter(|(n, _)| !done.contains(n))
            .collect();
        for (i, (n, a)) in todo.iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(PACE).await;
            }
            match batch::apply_one(&port, ctx, &mut g, a).await {
                Ok(line) => {
                    applied += 1;
                    if let Err(e) = store.plan_step_done(&id, *n, &line).await {
                        tracing::error!("journalling a plan step: {e}");
                    }
                    batch::audit(ctx, NAME, &line, true, "done").await;
                    report.push(format!("{n}. ✓ {line}"));
                }
                Err((line, why)) => {
                    batch::audit(ctx, NAME, &line, false, &why).await;
                    report.push(format!("{n}. ✗ {line}: {why}"));
                    return ToolOutput::failed(format!(
                        "Plan {id} STOPPED at change {n}: {why} {applied} of {} changes were applied this run and journalled; \
                         the rest were not tried. Call discord_apply_plan with plan_id {id} and resume: true to go on: \
                         nothing already done is applied twice. Snapshot: {shot}. {NO_UNDO}\n{}",
                        todo.len(),
                        report.join("\n")
                    ));
                }
            }
        }
        let mut text = format!(
            "Plan {id} applied: {applied} changes{}. Snapshot of the server before it: {shot}. {NO_UNDO}\n{}",
            if done.is_empty() { String::new() } else { format!(" (resumed; {} were done before)", done.len()) },
            report.join("\n")
        );
        if !kept.refused.is_empty() {
            text.push_str("\nRefused before the card (not done):\n");
            text.push_str(&kept.refused.join("\n"));
        }
        ToolOutput::ok(text)
    }
}
