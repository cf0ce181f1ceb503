//! Due reminders on Discord: each is posted in the channel or DM where it was set,
//! mentioning the person who set it (docs/discord.md, "Reminders"). The ones that came
//! due before the gateway was ready (missed while the process was down) go out once
//! READY arrives.

use std::sync::Arc;

use serenity::all::{ChannelId, Http};
use tokio::sync::broadcast::{error::RecvError, Receiver};

use super::{channel_of, Bot};
use crate::protocol::Reminder;

/// How a Discord turn names its author (`TurnRequest::author`, stored with a reminder
/// as its asker): the display name and the user id in brackets.
pub(crate) fn author_label(name: &str, user: u64) -> String {
    format!("{name} ({user})")
}

/// The Discord user id in an [`author_label`], if the asker was a Discord user.
pub(super) fn asker_id(asker: &str) -> Option<u64> {
    let inner = asker.trim_end().strip_suffix(')')?;
    let (_, id) = inner.rsplit_once('(')?;
    id.parse().ok().filter(|id| *id > 0)
}

/// The message a due reminder posts: the asker's mention (when known) and its text.
pub(super) fn reminder_message(r: &Reminder) -> String {
    match asker_id(&r.asker) {
        Some(id) => format!("⏰ <@{id}> Reminder: {}", r.text),
        None => format!("⏰ Reminder: {}", r.text),
    }
}

/// Post one due reminder in its channel (a session that is not a Discord channel is
/// not this surface's to deliver).
async fn post(http: &Http, r: &Reminder) {
    let Some(channel) = channel_of(&r.session) else {
        return;
    };
    tracing::info!(channel, id = r.id, "Discord: delivering a reminder");
    super::send::post(
        http,
        ChannelId::new(channel.max(1)),
        None,
        &reminder_message(r),
    )
    .await;
}

/// Deliver reminders until the surface stops: first the ones that came due before
/// anyone listened, then each as it fires. `rx` was subscribed before the gateway
/// connected, so none fired in between is lost.
pub(crate) async fn deliver(bot: Arc<Bot>, http: Arc<Http>, mut rx: Receiver<Reminder>) {
    let missed = bot
        .engine
        .take_missed_reminders(|r| channel_of(&r.session).is_some());
    for r in &missed {
        post(&http, r).await;
    }
    loop {
        let got = tokio::select! {
            _ = bot.shutdown.cancelled() => return,
            got = rx.recv() => got,
        };
        match got {
            Ok(r) => post(&http, &r).await,
            Err(RecvError::Lagged(n)) => {
                tracing::warn!("Discord: {n} reminders came due faster than they could be posted and were skipped");
            }
            Err(RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_asker_id_is_read_back_from_the_author_label_and_nothing_else() {
        assert_eq!(asker_id(&author_label("Ann (the cat)", 42)), Some(42));
        assert_eq!(asker_id("Ann"), None);
        assert_eq!(asker_id(""), None);
        assert_eq!(asker_id("web (x)"), None);
    }
}
