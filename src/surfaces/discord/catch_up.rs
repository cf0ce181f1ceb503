//! Catch-up after a restart (docs/discord.md): on a new gateway session (READY, not a
//! resume) the approval cards a dead run left are settled first (buttons disabled,
//! "nothing ran") and the turns and jobs it cut are told in their channels; then each channel she has seen is read after the newest message she saw, and the
//! messages addressed to her by the usual answer rules that are at most
//! `discord.catch_up` seconds old are answered once, oldest first. Every message is
//! recorded as seen before she acts on it, so nothing is answered twice across restarts.

use std::sync::Arc;

use serenity::all::{
    ActionRowComponent, ButtonKind, Channel, ChannelId, Context, EditMessage, GetMessages, Message,
    MessageId, Timestamp,
};

use super::{cards, chat, send, Bot};

/// How many channels are read after one restart (the most recently active first).
const MAX_CHANNELS: usize = 100;
/// How many messages are read in one channel.
const PAGE: u8 = 100;

/// Answer what was said to her while she was down. Each channel is its own
/// conversation, so channels are caught up side by side.
pub(crate) async fn catch_up(bot: Arc<Bot>, ctx: Context) {
    // No gateway replays a message a week old: older claims are forgotten.
    if let Err(e) = bot
        .engine
        .store()
        .prune_discord_claims(7 * 24 * 3600 * 1000)
        .await
    {
        tracing::warn!("Discord: forgetting old message claims: {e}");
    }
    settle_orphaned_cards(&bot, &ctx).await;
    tell_what_the_restart_cut(&bot, &ctx).await;
    let window = bot.engine.config().settings().discord_catch_up;
    if window == 0 {
        return;
    }
    let channels = match bot.engine.store().discord_seen_channels().await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("Discord catch-up: reading the channels she saw: {e}");
            return;
        }
    };
    for (channel, last) in channels.into_iter().take(MAX_CHANNELS) {
        tokio::spawn(one_channel(bot.clone(), ctx.clone(), channel, last, window));
    }
}

async fn one_channel(bot: Arc<Bot>, ctx: Context, channel: u64, last: u64, window: u64) {
    let (Some(id), Some(after)) = (nonzero(channel), nonzero(last)) else {
        return;
    };
    let channel_id = ChannelId::new(id);
    let page = GetMessages::new().after(MessageId::new(after)).limit(PAGE);
    let mut messages = match channel_id.messages(&ctx.http, page).await {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("Discord catch-up: reading channel {channel}: {e}");
            return;
        }
    };
    if messages.is_empty() {
        return;
    }
    // Discord leaves the guild out of messages read over REST: the channel says it.
    let guild = match ctx.http.get_channel(channel_id).await {
        Ok(Channel::Guild(c)) => Some(c.guild_id),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("Discord catch-up: reading channel {channel}: {e}");
            return;
        }
    };
    // Each shard's READY catches up its own guilds' channels (DMs: shard 0's), so every
    // channel is read once, by the process that answers it.
    let shard = super::shards::shard_of(guild.map_or(0, |g| g.get()), ctx.cache.shard_count());
    if shard != ctx.shard_id.0 {
        return;
    }
    messages.sort_by_key(|m| m.id);
    let now = Timestamp::now().unix_timestamp();
    let fresh = |at: Timestamp| now.saturating_sub(at.unix_timestamp()) <= window as i64;
    let mut answered = 0usize;
    for mut msg in messages {
        if !fresh(msg.timestamp) {
            if let Err(e) = bot
                .engine
                .store()
                .mark_discord_seen(channel, msg.id.get())
                .await
            {
                tracing::warn!("Discord catch-up: recording a seen message: {e}");
            }
            continue;
        }
        msg.guild_id = guild;
        chat::handle(bot.clone(), ctx.clone(), msg, true).await;
        answered += 1;
    }
    tracing::info!("Discord catch-up: read {answered} recent message(s) in channel {channel}.");
}

fn nonzero(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

/// Approval cards a dead run left on Discord: each is edited to say the restart
/// settled it and nothing ran, its buttons disabled, so no orphaned button remains.
async fn settle_orphaned_cards(bot: &Bot, ctx: &Context) {
    let store = &bot.engine.store();
    // One process per data folder on SQLite: any other owner is a dead run; on
    // PostgreSQL, one whose heartbeat stopped.
    let live = store.liveness(|_| false).await;
    let orphans = match store.orphaned_discord_cards(|o| live.is_live(o)).await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!("Discord: reading the cards a previous run left: {e}");
            return;
        }
    };
    for orphan in orphans {
        let card = serde_json::from_str::<crate::protocol::Card>(&orphan.card);
        let message = match nonzero(orphan.message) {
            Some(m) => Some(m),
            None => find_card_message(ctx, orphan.channel, &orphan.request_id).await,
        };
        if let (Ok(card), Some(ch), Some(mid)) = (card, nonzero(orphan.channel), message) {
            let drawn = cards::restarted(&card, orphan.dm);
            let edit = EditMessage::new()
                .embed(drawn.embed())
                .components(drawn.components());
            match ChannelId::new(ch)
                .edit_message(&ctx.http, MessageId::new(mid), edit)
                .await
            {
                Ok(_) => tracing::info!(
                    "Discord: settled card {} left by a previous run (pid {}): nothing ran.",
                    orphan.request_id,
                    orphan.owner
                ),
                Err(e) => tracing::warn!("Discord: settling a card a previous run left: {e}"),
            }
        }
        if let Err(e) = store.remove_discord_card(&orphan.request_id).await {
            tracing::warn!("Discord: forgetting a settled card: {e}");
        }
    }
}

/// The turns and jobs a crash cut in Discord sessions: each is told once in its
/// channel (the transcript already holds the same line).
async fn tell_what_the_restart_cut(bot: &Bot, ctx: &Context) {
    let prefix = crate::session::DISCORD_PREFIX;
    let notices = match bot.engine.store().take_restart_notices(prefix).await {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!("Discord: reading what the restart cut: {e}");
            return;
        }
    };
    for (session, text) in notices {
        if let Some(channel) = super::channel_of(&session).and_then(nonzero) {
            send::post(&ctx.http, ChannelId::new(channel), None, &text).await;
        }
    }
}

/// A card whose message id was never stored (she died as it was posted): her recent
/// message in `channel` whose buttons name `request_id`.
async fn find_card_message(ctx: &Context, channel: u64, request_id: &str) -> Option<u64> {
    let id = ChannelId::new(nonzero(channel)?);
    let recent = id
        .messages(&ctx.http, GetMessages::new().limit(PAGE))
        .await
        .map_err(|e| tracing::warn!("Discord: looking for a card a previous run left: {e}"))
        .ok()?;
    let me = ctx.cache.current_user().id;
    let names_card = |m: &Message| {
        m.components
            .iter()
            .flat_map(|row| &row.components)
            .any(|c| {
                matches!(c, ActionRowComponent::Button(b)
                if matches!(&b.data, ButtonKind::NonLink { custom_id, .. }
                    if cards::parse_button(custom_id).is_some_and(|(_, id)| id == request_id)))
            })
    };
    recent
        .iter()
        .filter(|m| m.author.id == me)
        .find(|m| names_card(m))
        .map(|m| m.id.get())
}
