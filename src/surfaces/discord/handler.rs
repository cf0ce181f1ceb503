//! The serenity event handler: dispatch only. READY records who she is and registers
//! the slash commands and the read-tool port, starts reminder delivery, then catches up
//! on what was said while she was away ([`super::catch_up`]); messages go to [`super::chat`],
//! interactions to [`super::press`] and [`super::commands`].

use std::sync::Arc;

use serenity::all::{Context, EventHandler, Interaction, Message, Ready, VoiceState};
use serenity::async_trait;

use super::port::Port;
use super::Bot;

/// The handler serenity calls; holds the surface's state.
pub(crate) struct Handler(pub Arc<Bot>);

#[async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, ready: Ready) {
        let bot = &self.0;
        let _ = bot.me.set(ready.user.id.get());
        ctx.http.set_application_id(ready.application.id);
        let _ = bot.http.set(ctx.http.clone());
        let _ = bot.cache.set(ctx.cache.clone());
        bot.port_slot.set(Some(Arc::new(Port::new(bot.clone()))));
        let reminders = match bot.reminders.lock() {
            Ok(mut g) => g.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(rx) = reminders {
            tokio::spawn(super::remind::deliver(bot.clone(), ctx.http.clone(), rx));
        }
        tracing::info!(
            "Discord: connected as {} ({} guilds).",
            ready.user.name,
            ready.guilds.len()
        );
        super::commands::register(bot, &ctx.http).await;
        // READY means a new gateway session (a resume sends RESUMED): catch up on what
        // was said while she was away.
        tokio::spawn(super::catch_up::catch_up(bot.clone(), ctx));
    }

    async fn message(&self, ctx: Context, msg: Message) {
        super::chat::on_message(self.0.clone(), ctx, msg).await;
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        match interaction {
            Interaction::Component(c) => super::press::on_press(&self.0, &ctx, c).await,
            Interaction::Command(c) => super::commands::on_command(&self.0, &ctx, c).await,
            Interaction::Modal(m) => super::answer::on_submit(&self.0, &ctx, m).await,
            _ => {}
        }
    }

    async fn voice_state_update(&self, _ctx: Context, _old: Option<VoiceState>, new: VoiceState) {
        super::voice::rooms::on_voice_state(&self.0, &new).await;
    }
}
