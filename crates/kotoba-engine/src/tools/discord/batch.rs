//! What discord_act, discord_plan and discord_apply_plan share: parsing a list of
//! declarative changes, checking them in order against the server (refusals by name),
//! the card's listing and who may answer it, applying one change, and its audit row.

use std::sync::Arc;

use dashmap::DashMap;
use serde_json::Value;

use super::action::{Action, Mark, Resolved};
use super::change::remember;
use super::guild::{permission_names, Guild};
use super::resolve::resolve;
use super::{DiscordPort, PortError, PortSlot};
use crate::tools::{MayAnswer, ToolContext};
use kotoba_core::protocol::Origin;
use kotoba_store::Approver;

/// Why a batch of changes was not taken up (the sentence the model reads; nothing
/// changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum BatchError {
    /// The list of changes is missing or not a list.
    #[error("{tool} needs `{key}`: a list of changes, each with an `op`.")]
    NoList {
        /// The tool.
        tool: &'static str,
        /// Its argument holding the list.
        key: &'static str,
    },
    /// The list is empty.
    #[error("{tool} got an empty `{key}` list, so nothing changed.")]
    Empty {
        /// The tool.
        tool: &'static str,
        /// Its argument holding the list.
        key: &'static str,
    },
    /// More changes than one call takes.
    #[error("{tool} takes at most {max} changes in one call, not {got}; split them.")]
    TooMany {
        /// The tool.
        tool: &'static str,
        /// The most one call takes.
        max: usize,
        /// How many were given.
        got: usize,
    },
    /// A change (numbered from 1) that does not read as one.
    #[error("change {n} of {tool} is malformed: {error}.")]
    Malformed {
        /// Its place, from 1.
        n: usize,
        /// The tool.
        tool: &'static str,
        /// What the reader said.
        error: String,
    },
    /// The conversation is not on Discord.
    #[error("{0} works only in a conversation on Discord, so nothing changed.")]
    NotOnDiscord(&'static str),
    /// Discord is not connected.
    #[error("Discord is not connected, so nothing changed.")]
    NotConnected,
    /// The server could not be read.
    #[error(transparent)]
    Port(#[from] PortError),
}

/// One change that passed the checks: its place in the list (from 1), the action and
/// what it resolved to.
pub(super) type Checked = (usize, Action, Resolved);

/// The changes under `key` of `args` for `tool`, at most `max`.
pub(super) fn parse(
    args: &Value,
    key: &'static str,
    max: usize,
    tool: &'static str,
) -> Result<Vec<Action>, BatchError> {
    let list = args
        .get(key)
        .and_then(Value::as_array)
        .ok_or(BatchError::NoList { tool, key })?;
    if list.is_empty() {
        return Err(BatchError::Empty { tool, key });
    }
    if list.len() > max {
        return Err(BatchError::TooMany {
            tool,
            max,
            got: list.len(),
        });
    }
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value::<Action>(v.clone()).map_err(|e| BatchError::Malformed {
                n: i + 1,
                tool,
                error: e.to_string(),
            })
        })
        .collect()
}

/// Resolve every action against `g` in order, as if the earlier ones were done; the
/// ones numbered in `skip` (already applied) are left out. Refusals name the change.
pub(super) fn check(g: &Guild, actions: &[Action], skip: &[usize]) -> (Vec<Checked>, Vec<String>) {
    let mut sim = g.clone();
    let mut ok = Vec::new();
    let mut refused = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let n = i + 1;
        if skip.contains(&n) {
            continue;
        }
        match resolve(&sim, a, g.here) {
            Ok(r) => {
                remember(&mut sim, &r.change, Some(0));
                ok.push((n, a.clone(), r));
            }
            Err(why) => refused.push(format!(
                "Refused change {n} ({}{}): {why}.",
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

/// The port and the server, fresh; `Err` says why nothing changed.
pub(super) async fn read(
    slot: &PortSlot,
    ctx: &ToolContext,
    tool: &'static str,
) -> Result<(Arc<dyn DiscordPort>, Guild), BatchError> {
    if !matches!(ctx.origin(), Origin::Discord { .. }) {
        return Err(BatchError::NotOnDiscord(tool));
    }
    let port = slot.get().ok_or(BatchError::NotConnected)?;
    let g = port.guild(&ctx.turn).await?;
    Ok((port, g))
}

/// The card's listing: every change in order, marked, then what was refused.
pub(super) fn card_lines(ok: &[Checked], refused: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = ok
        .iter()
        .map(|(n, _, r)| format!("{n}. {}", r.marked()))
        .collect();
    if !refused.is_empty() {
        lines.push(String::new());
        lines.push("Not on this card (refused):".into());
        lines.extend(refused.iter().cloned());
    }
    lines
}

/// How many of `ok` delete something.
pub(super) fn deletions(ok: &[Checked]) -> usize {
    ok.iter().filter(|(_, _, r)| r.mark == Mark::Delete).count()
}

/// Who may answer the card besides the owners: the asker holding every permission the
/// changes need, or an Administrator.
pub(super) fn may_answer(ctx: &ToolContext, ok: &[Checked]) -> Option<MayAnswer> {
    let needs = ok.iter().fold(0, |acc, (_, _, r)| acc | r.needs);
    match ctx.origin() {
        Origin::Discord { user, .. } => Some(MayAnswer {
            asker: user.to_string(),
            asker_needs: permission_names(needs),
            anyone_with: vec!["administrator".into()],
        }),
        _ => None,
    }
}

/// Re-check action `a` against `g` as it is now and apply it; `g` learns what it made.
/// `Ok` is the change's words, `Err` the sentence why it was not done.
pub(super) async fn apply_one(
    port: &Arc<dyn DiscordPort>,
    ctx: &ToolContext,
    g: &mut Guild,
    a: &Action,
) -> Result<String, (String, String)> {
    let r = resolve(g, a, g.here).map_err(|why| (a.op.clone(), format!("not done: {why}.")))?;
    match port.apply(&ctx.turn, &r.change).await {
        Ok(id) => {
            remember(g, &r.change, id);
            Ok(r.line)
        }
        Err(e) => Err((r.line, e.sentence())),
    }
}

/// One audit row for an applied (or failed) change: who asked, who approved, the
/// change, the result.
pub(super) async fn audit(ctx: &ToolContext, tool: &str, line: &str, ok: bool, result: &str) {
    let Some(store) = &ctx.store else { return };
    let asker = match ctx.origin() {
        Origin::Discord { user, .. } => format!("<@{user}>"),
        Origin::Owner => ctx.turn.person.author.clone(),
    };
    let by = ctx.approved_by.as_deref().unwrap_or("nobody (no card)");
    let detail = format!("asked by {asker}; approved by {by}; {result}");
    let approver = if ok {
        Approver::Executed
    } else {
        Approver::ExecutedFailed
    };
    if let Err(e) = store
        .audit(ctx.session(), tool, line, "write", ok, approver, &detail)
        .await
    {
        tracing::error!("writing the audit trail: {e}");
    }
}

/// A batch checked for its card, kept for the run of the same call.
#[derive(Debug, Clone)]
pub(super) struct Kept {
    /// The actions to apply, in order, with their place in the list (refused ones out).
    pub actions: Vec<(usize, Action)>,
    /// One sentence per refused action.
    pub refused: Vec<String>,
}

impl Kept {
    /// What `check` found.
    pub(super) fn of(ok: Vec<Checked>, refused: Vec<String>) -> Kept {
        Kept {
            actions: ok.into_iter().map(|(n, a, _)| (n, a)).collect(),
            refused,
        }
    }
}

/// Batches checked for their card, by session and call id, until their run takes them.
#[derive(Default)]
pub(super) struct Stash(DashMap<(String, String), Kept>);

impl Stash {
    /// Keep what the card of this call shows.
    pub(super) fn keep(&self, ctx: &ToolContext, kept: Kept) {
        self.0
            .insert((ctx.session().to_string(), ctx.call_id.clone()), kept);
    }

    /// Take what this call's card showed.
    pub(super) fn take(&self, ctx: &ToolContext) -> Option<Kept> {
        self.0
            .remove(&(ctx.session().to_string(), ctx.call_id.clone()))
            .map(|(_, k)| k)
    }
}
