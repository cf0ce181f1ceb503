//! The transport mark and the numbers it decides: the three constants, `el_agent_turn`,
//! the approval window (channel × transport) and a tool's budget (engine.md §1, §3).
//! These constants live here or, where the settings and the tools read them too, in
//! `protocol` (re-exported here): one definition each.

use std::time::Duration;

use serde_json::Value;

use crate::tools::{ToolContext, ToolSpec};
use kotoba_core::protocol::{Channel, Risk};

/// ElevenLabs' hard cap on one agent conversation.
pub const EL_MAX_DURATION: Duration = Duration::from_secs(1800);
pub use kotoba_core::protocol::{ASK_USER_WINDOW, CLARIFY_WINDOW, WORK_TIMEOUT};
/// The same budget for a job born inside an ElevenLabs call (under the 1800 s cap).
pub const WORK_TIMEOUT_EL_BOUND: Duration = Duration::from_secs(1500);

/// How long a deferred card waits: nothing times it.
pub const DEFERRED_WINDOW: Duration = Duration::from_secs(180);

/// The default budget of a tool that declares none.
pub const DEFAULT_TOOL_BUDGET: Duration = Duration::from_secs(30);
/// The ceiling of a budget derived from a `timeout` argument.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// The `timeout` a shell/execute_code call gets when it names none.
pub const DEFAULT_EXEC_TIMEOUT_SECS: u64 = 60;

/// Is an agent holding this turn's clock open? `Some(true)` only inside /v1's
/// producer; `None` means nobody said (a bare test double) and falls to the tight side.
pub fn el_agent_turn(ctx: &ToolContext) -> Option<bool> {
    ctx.turn.el_call_bound
}

/// The approval window: text → 180 s; voice known not to be an agent's → 60 s;
/// voice with `None` or `Some(true)` → 25 s.
pub fn approval_window(channel: Channel, el_call_bound: Option<bool>) -> Duration {
    match (channel, el_call_bound) {
        (Channel::Text, _) => Duration::from_secs(180),
        (Channel::Voice, Some(false)) => Duration::from_secs(60),
        (Channel::Voice, None | Some(true)) => Duration::from_secs(25),
    }
}

/// A tool's compute budget. The declared timeout wins over the 30 s default; a tool
/// with a `timeout` argument gets request + window + 5 s (≤ 600 s); any exec tool gets
/// at least window + 5 s, so the loop never cancels a tool while its card is up.
/// Window and transport are passed down, never a precomputed number.
pub fn tool_budget(
    spec: &ToolSpec,
    args: &Value,
    channel: Channel,
    el_call_bound: Option<bool>,
) -> Duration {
    let window = approval_window(channel, el_call_bound);
    let slack = Duration::from_secs(5);
    let mut budget = spec.timeout.unwrap_or(DEFAULT_TOOL_BUDGET);
    if spec.takes_timeout_arg {
        let requested = args
            .get("timeout")
            .and_then(|v| v.as_f64().filter(|f| f.is_finite() && *f > 0.0))
            .map(|s| Duration::from_secs_f64(s.min(MAX_TIMEOUT.as_secs_f64())))
            .unwrap_or(Duration::from_secs(DEFAULT_EXEC_TIMEOUT_SECS));
        budget = (requested + window + slack).min(MAX_TIMEOUT);
    }
    if spec.risk == Risk::Exec {
        budget = budget.max(window + slack);
    }
    budget
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transport_constants_live_in_one_place_and_the_work_timeout_default_is_read_from_it() {
        assert_eq!(
            kotoba_core::config::Settings::default().work_timeout,
            WORK_TIMEOUT.as_secs(),
            "settings.yaml's default work_timeout is WORK_TIMEOUT, not a second 3600"
        );
        assert_eq!(
            (
                EL_MAX_DURATION.as_secs(),
                WORK_TIMEOUT.as_secs(),
                WORK_TIMEOUT_EL_BOUND.as_secs()
            ),
            (1800, 3600, 1500)
        );
        assert!(
            WORK_TIMEOUT_EL_BOUND < EL_MAX_DURATION,
            "a job born in a call ends under the call's cap"
        );
    }
}
