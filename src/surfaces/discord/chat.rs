//! A written message, end to end: the answer rules, one turn (typing indicator for the
//! whole turn, guests' host tools withheld at the door, what others said in the channel
//! since her last reply as context), then her reply split for Discord, the first part
//! replying to the message without pinging its author.

use std::sync::Arc;

use serenity::all::{Context, GuildId, Message, ReactionType, UserId};
use tokio::time::Instant;

use crate::engine::TurnOptions;
use crate::protocol::{Origin, Said, TurnRequest, TurnStatus};

use super::rules::{self, Facts, FollowUp};
use super::{sessions, view, Bot};

/// The roles she wears in `guild` (for role mentions), from the cache.
pub(crate) fn my_roles(bot: &Bot, guild: Option<GuildId>, me: u64) -> Vec<u64> {
    let (Some(g), Some(cache)) = (guild, bot.cache.get()) else {
        return Vec::new();
    };
    cache
        .guild(g)
        .and_then(|g| {
            g.members
                .get(&UserId::new(me.max(1)))
                .map(|m| m.roles.iter().map(|r| r.get()).collect())
        })
        .unwrap_or_default()
}

/// Whether the allow-list lets this message through: its guild is listed, or (a DM)
/// its author is a member of a listed guild.
async fn allowed(bot: &Bot, ctx: &Context, msg: &Message) -> bool {
    let list = &bot.settings.guilds;
    if list.is_empty() {
        return true;
    }
    match msg.guild_id {
        Some(g) => list.contains(&g.get()),
        None => {
            for g in list.iter().filter(|g| **g > 0) {
                let gid = GuildId::new(*g);
                let cached = bot
                    .cache
                    .get()
                    .and_then(|c| c.guild(gid).map(|g| g.members.contains_key(&msg.author.id)));
                let member = match cached {
                    Some(true) => true,
                    _ => ctx.http.get_member(gid, msg.author.id).await.is_ok(),
                };
                if member {
                    return true;
                }
            }
            false
        }
    }
}

/// Handle one MESSAGE_CREATE.
pub(crate) async fn on_message(bot: Arc<Bot>, ctx: Context, msg: Message) {
    handle(bot, ctx, msg, false).await;
}

/// Handle one message: live from the gateway, or `caught_up` after a restart. Before
/// she acts on it, the message is recorded as seen in the store, so a restart never
/// answers it again (a live message at or before the newest one an earlier run saw is
/// a replay). Two live messages of this run may be handled in either order: each is
/// answered once, by its id.
pub(crate) async fn handle(bot: Arc<Bot>, ctx: Context, msg: Message, caught_up: bool) {
    // Events are handled side by side: a message may come before READY's handler ran,
    // but the cache knows who she is from READY on.
    let me = *bot.me.get_or_init(|| ctx.cache.current_user().id.get());
    let author = msg.author.id.get();
    if author == me || !bot.first_sight(msg.id.get()) {
        return;
    }
    let channel = msg.channel_id.get();
    if !caught_up && bot.seen_before_start(channel, msg.id.get()) {
        return;
    }
    // One answer per message across processes, even while two briefly hold its shard (a
    // takeover): the message is claimed in the shared store first.
    match bot.engine.store().claim_discord_message(msg.id.get()).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => tracing::warn!("Discord: claiming a message: {e}"),
    }
    // Off the answer's path: the claim above already keeps it answered once.
    bot.engine
        .store()
        .mark_discord_seen_later(channel, msg.id.get());
    let roles = my_roles(&bot, msg.guild_id, me);
    let facts = Facts {
        own: false,
        from_bot: msg.author.bot,
        empty: msg.content.trim().is_empty() && msg.attachments.is_empty(),
        dm: msg.guild_id.is_none(),
        allowed: allowed(&bot, &ctx, &msg).await,
        mentions_me: rules::mentions_me(&msg.content, me, &roles),
        reply_to_me: msg
            .referenced_message
            .as_ref()
            .is_some_and(|r| r.author.id.get() == me),
        home_channel: bot.settings.home_channels.contains(&channel),
        mentions_others: msg.mention_everyone || rules::mentions_others(&msg.content, me, &roles),
        author,
    };
    let follow = bot.follow.get(&channel).map(|f| *f);
    let name = msg
        .author
        .global_name
        .clone()
        .unwrap_or_else(|| msg.author.name.clone());
    let label = super::remind::author_label(&name, author);
    // Each person's own conversation in this channel (`discord.sessions: person`).
    let per_person = !facts.dm && sessions::per_person(&bot, channel);
    let line = Said {
        author: label.clone(),
        text: msg.content.clone(),
    };
    if rules::decide(&facts, follow.as_ref(), Instant::now()).is_none() {
        if !facts.from_bot && rules::after_unanswered(follow, author).is_none() {
            bot.follow.remove(&channel);
        }
        if !facts.dm && !facts.empty {
            if per_person {
                sessions::log(&bot, channel, author, line);
            } else {
                overheard(&bot, channel, line);
            }
        }
        return;
    }
    bot.follow.remove(&channel);
    // Typed here, where the message says whether it is a DM: the turn carries it.
    let typed = sessions::session_id_for(&bot, channel, author, facts.dm);
    let session = typed.as_str().to_string();
    if facts.dm && bot.dms_noted.insert(channel, ()).is_none() {
        // A DM is its person's: forgetting them removes it whole (kept before the turn).
        if let Err(e) = bot.engine.store().note_dm(author, &session).await {
            bot.dms_noted.remove(&channel);
            tracing::warn!("Discord: noting the DM {session}: {e}");
        }
    }
    let around = if facts.dm {
        Vec::new()
    } else if per_person {
        let around = sessions::around(&bot, channel, &session, author, context_lines(&bot));
        // What this person says is what was said around her for the others.
        sessions::log(&bot, channel, author, line);
        around
    } else {
        said_around(&bot, channel)
    };
    view::ensure(&bot, &session, channel, facts.dm).await;
    let typing = msg.channel_id.start_typing(&ctx.http);
    let mut text = rules::strip_my_mentions(&msg.content, me, &roles);
    let (media, note) = super::attachments::collect(&msg.attachments).await;
    text.push_str(&note);
    let origin = Origin::Discord {
        user: author,
        owner: bot.is_owner(author),
    };
    let req = TurnRequest {
        media,
        around,
        granted: bot.granted(
            msg.guild_id.map(|g| g.get()),
            author,
            msg.member
                .as_ref()
                .map(|m| m.roles.iter().map(|r| r.get()).collect()),
        ),
        ..TurnRequest::text(origin, typed, label, text)
    };
    let result = bot.engine.run_turn(req, TurnOptions::default()).await;
    typing.stop();
    if result.status == TurnStatus::Interrupted && result.text.trim().is_empty() {
        return;
    }
    if result.text.trim().is_empty() {
        return;
    }
    let posted = post_reply(&ctx, &msg, &result.text).await;
    wear_face(&ctx, posted.as_ref(), &result.face).await;
    bot.follow.insert(
        channel,
        FollowUp {
            author,
            at: Instant::now(),
        },
    );
}

/// How many overheard lines a channel keeps for her next turn there (the live
/// `discord.channel_context`; 0: none).
fn context_lines(bot: &Bot) -> usize {
    usize::try_from(bot.engine.config().settings().discord_channel_context).unwrap_or(usize::MAX)
}

/// Keep a line of a server channel that was not for her, for her next turn there.
fn overheard(bot: &Bot, channel: u64, said: Said) {
    let keep = context_lines(bot);
    if keep == 0 {
        bot.around.remove(&channel);
        return;
    }
    let mut lines = bot.around.entry(channel).or_default();
    lines.push_back(said);
    while lines.len() > keep {
        lines.pop_front();
    }
}

/// The lines others wrote in `channel` since her last reply there, oldest first; the
/// channel starts over.
fn said_around(bot: &Bot, channel: u64) -> Vec<Said> {
    let keep = context_lines(bot);
    let lines: Vec<Said> = bot
        .around
        .remove(&channel)
        .map(|(_, lines)| lines.into_iter().collect())
        .unwrap_or_default();
    let skip = lines.len().saturating_sub(keep);
    lines.into_iter().skip(skip).collect()
}

/// Post her answer: links tidied, split for Discord, only the users she names pinged,
/// the first part a reply that does not ping the author.
pub(crate) async fn post_reply(ctx: &Context, msg: &Message, text: &str) -> Option<Message> {
    super::send::post(&ctx.http, msg.channel_id, Some(msg), text).await
}

/// Her finished face on Discord: a reaction on her reply with the face's emoji, from
/// the one map (`crate::face`); a calm face adds nothing.
async fn wear_face(ctx: &Context, reply: Option<&Message>, face: &str) {
    let Some(reply) = reply.filter(|_| face != crate::face::CALM) else {
        return;
    };
    let emoji = ReactionType::Unicode(crate::face::emoji(face).to_string());
    if let Err(e) = reply.react(&ctx.http, emoji).await {
        tracing::warn!("Discord: her face as a reaction: {e}");
    }
}
