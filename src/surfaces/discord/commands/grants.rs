//! `/grants`: the saved approvals with who granted them and when, each with a Revoke
//! button (owners only; a revoke is re-checked at press time).

use serenity::all::{
    ButtonStyle, CommandInteraction, ComponentInteraction, Context, CreateActionRow, CreateButton,
};

use super::Answer;
use crate::store::GrantScope;
use crate::surfaces::discord::send::private;
use crate::surfaces::discord::Bot;

/// Handle /grants.
pub(crate) async fn run(bot: &Bot, _c: &CommandInteraction) -> Answer {
    let grants = match bot.engine.grants().await {
        Ok(g) => g,
        Err(e) => {
            tracing::warn!("Discord: listing grants: {e}");
            return Answer::text("I could not read the saved approvals just now.");
        }
    };
    if grants.is_empty() {
        return Answer::text("No saved approvals: everything that is not provably safe asks.");
    }
    let mut lines = Vec::new();
    let mut buttons = Vec::new();
    for g in grants.iter().take(25) {
        let scope = match g.scope {
            GrantScope::Exact => "exact line",
            GrantScope::Family => "family",
        };
        lines.push(format!(
            "#{} `{}` ({scope}), by {} <t:{}:R>",
            g.id,
            g.pattern.replace('`', "'"),
            g.granted_by,
            g.at_ms / 1000
        ));
        buttons.push(
            CreateButton::new(format!("kg:revoke:{}", g.id))
                .label(format!("Revoke #{}", g.id))
                .style(ButtonStyle::Danger),
        );
    }
    let rows: Vec<CreateActionRow> = buttons
        .chunks(5)
        .map(|c| CreateActionRow::Buttons(c.to_vec()))
        .collect();
    let mut a = Answer::text(lines.join("\n"));
    a.message = a.message.components(rows);
    a
}

/// A Revoke press.
pub(crate) async fn on_revoke(bot: &Bot, ctx: &Context, c: &ComponentInteraction, id: &str) {
    let r = if !bot.is_owner(c.user.id.get()) {
        private("Only an owner can revoke a saved approval. Nothing changed.")
    } else {
        match id.trim_start_matches("kg:revoke:").parse::<i64>() {
            Ok(n) => match bot.engine.revoke_grant(n).await {
                Ok(true) => private(format!("Revoked #{n}: it asks again from now on.")),
                Ok(false) => private(format!("#{n} was already gone; nothing changed.")),
                Err(e) => {
                    tracing::warn!("Discord: revoking grant {n}: {e}");
                    private("I could not revoke it just now.")
                }
            },
            Err(_) => private("That button is no longer active."),
        }
    };
    if let Err(e) = c.create_response(&ctx.http, r).await {
        tracing::warn!("Discord: answering a revoke: {e}");
    }
}
