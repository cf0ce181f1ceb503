//! `/audit [n]`: the last rows of the audit trail (owners only, private).

use serenity::all::{CommandDataOptionValue, CommandInteraction};

use super::{option, Answer};
use crate::surfaces::discord::render::clip;
use crate::surfaces::discord::Bot;

/// Handle /audit.
pub(crate) async fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let n = match option(&c.data.options, "n") {
        Some(CommandDataOptionValue::Integer(n)) => usize::try_from(*n).unwrap_or(10).clamp(1, 25),
        _ => 10,
    };
    let rows = match bot.engine.audit_trail(None, n).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("Discord: reading the audit trail: {e}");
            return Answer::text("I could not read the audit trail just now.");
        }
    };
    if rows.is_empty() {
        return Answer::text("The audit trail is empty.");
    }
    let lines: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "<t:{}:T> {} `{}` → {} {}",
                r.at_ms / 1000,
                r.tool,
                clip(&r.action.replace('`', "'"), 80),
                r.approver,
                clip(&r.detail, 60)
            )
        })
        .collect();
    Answer::text(clip(&lines.join("\n"), 1990))
}
