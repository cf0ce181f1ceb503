//! delegate's helpers: each runs the same loop (work mode, depth 1) with its own rows
//! under subagent frames; at most two at once; duplicates in one batch removed before
//! launch; a failed helper is never reported as a success.

use futures::stream::{self, StreamExt};

use crate::llm::Item;
use crate::tools::port::HelperResult;
use crate::tools::ToolContext;
use kotoba_core::protocol::{Channel, Frame, Mode, Register, TurnStatus};

use super::turn::run_loop;
use super::Engine;
use kotoba_core::turn::TurnContext;
use std::sync::Arc;

/// Helpers running at once inside one delegate call.
pub(super) const HELPERS_AT_ONCE: usize = 2;

/// Drop repeated goals (case and spacing ignored), keeping the first of each.
pub(super) fn dedupe_goals(goals: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    goals
        .into_iter()
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty())
        .filter(|g| {
            seen.insert(
                g.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase(),
            )
        })
        .collect()
}

/// Run the helpers and wait for all of them.
pub(super) async fn run_helpers(
    engine: &Engine,
    ctx: &ToolContext,
    goals: Vec<String>,
) -> Vec<HelperResult> {
    let parent = &ctx.turn;
    if parent.depth >= 1 {
        return Vec::new();
    }
    let goals = dedupe_goals(goals);
    // The helpers charge their waits to the job they serve (none in a conversation).
    let meter = parent.meter.clone();
    stream::iter(goals.into_iter().enumerate())
        .map(|(n, goal)| {
            let meter = meter.clone();
            async move {
                let session = engine.session(parent.session.as_str()).await;
                let id = format!("{}-h{}", parent.run_id.as_deref().unwrap_or("turn"), n + 1);
                session.emit(parent.run_id.as_deref(), Frame::SubagentSpawned { id: id.clone(), goal: goal.clone() });
                // A helper speaks for the person its parent speaks for.
                let tctx = Arc::new(TurnContext {
                    session: parent.session.clone(),
                    person: parent.person.clone(),
                    register: Register::Text,
                    channel: Channel::Text,
                    el_call_bound: Some(false),
                    mode: Mode::Work,
                    run_id: parent.run_id.clone(),
                    user_request: Some(goal.clone()),
                    meter,
                    depth: 1,
                    step_zero: None,
                    announce: false,
                });
                let brief = format!(
                    "You are a helper inside a background job. Do exactly this one task, then report what you \
                     found or did in a few sentences (say plainly if it failed):\n{goal}"
                );
                let end = Box::pin(run_loop(engine, session.clone(), tctx, vec![Item::User { text: brief }])).await;
                let ok = end.status == TurnStatus::Completed && !end.text.trim().is_empty();
                let summary = if end.text.trim().is_empty() { "(the helper said nothing)".to_string() } else { end.text };
                session.emit(parent.run_id.as_deref(), Frame::SubagentDone { id, ok, summary: summary.clone() });
                HelperResult { goal, ok, summary }
            }
        })
        .buffered(HELPERS_AT_ONCE)
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_goals_in_one_batch_are_removed_before_launch() {
        let goals = vec![
            "Find the bug".into(),
            " find  the bug ".into(),
            "Write the fix".into(),
            "".into(),
        ];
        assert_eq!(dedupe_goals(goals), ["Find the bug", "Write the fix"]);
    }
}
