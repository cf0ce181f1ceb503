//! JSON builders for the loopback Discord: users, members, guilds, messages and
//! interactions shaped the way the real gateway sends them (every field serenity 0.12
//! requires), so the bot deserialises exactly what it would from Discord.

use serde_json::{json, Value};

/// A fixed timestamp; the bot never reads it.
pub const TS: &str = "2026-01-01T00:00:00.000000+00:00";

/// A user object.
pub fn user(id: u64, name: &str, bot: bool) -> Value {
    json!({
        "id": id.to_string(), "username": name, "discriminator": "0", "global_name": name,
        "avatar": null, "bot": bot, "system": false, "public_flags": 0
    })
}

/// A guild member object (with its user).
pub fn member(id: u64, name: &str, roles: &[u64], permissions: Option<u64>) -> Value {
    let mut m = json!({
        "user": user(id, name, false), "nick": null, "avatar": null,
        "roles": roles.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
        "joined_at": TS, "premium_since": null, "deaf": false, "mute": false, "flags": 0,
        "pending": false
    });
    if let Some(p) = permissions {
        m["permissions"] = json!(p.to_string());
    }
    m
}

/// A role object.
pub fn role(id: u64, name: &str, permissions: u64) -> Value {
    json!({
        "id": id.to_string(), "name": name, "color": 0,
        "colors": {"primary_color": 0, "secondary_color": null, "tertiary_color": null},
        "hoist": false, "icon": null, "unicode_emoji": null, "position": 0,
        "permissions": permissions.to_string(), "managed": false, "mentionable": true, "flags": 0
    })
}

/// A guild text channel object.
pub fn text_channel(id: u64, guild: u64, name: &str) -> Value {
    json!({
        "id": id.to_string(), "type": 0, "guild_id": guild.to_string(), "name": name,
        "position": 0, "permission_overwrites": [], "nsfw": false, "parent_id": null,
        "last_message_id": null, "topic": null, "rate_limit_per_user": 0, "flags": 0
    })
}

/// A guild voice channel object.
pub fn voice_channel(id: u64, guild: u64, name: &str) -> Value {
    json!({
        "id": id.to_string(), "type": 2, "guild_id": guild.to_string(), "name": name,
        "position": 1, "permission_overwrites": [], "nsfw": false, "parent_id": null,
        "bitrate": 64000, "user_limit": 0, "rtc_region": null, "flags": 0
    })
}

/// A GUILD_CREATE payload: the guild, its @everyone role (view + send + read history),
/// its channels and members.
pub fn guild(id: u64, owner: u64, channels: &[Value], members: &[Value], roles: &[Value]) -> Value {
    // VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY
    let everyone = role(id, "@everyone", (1 << 10) | (1 << 11) | (1 << 16));
    let mut all_roles = vec![everyone];
    all_roles.extend(roles.iter().cloned());
    json!({
        "id": id.to_string(), "name": format!("guild {id}"), "icon": null, "icon_hash": null,
        "splash": null, "discovery_splash": null, "owner_id": owner.to_string(),
        "afk_channel_id": null, "afk_timeout": 300, "widget_enabled": false,
        "verification_level": 0, "default_message_notifications": 0,
        "explicit_content_filter": 0, "roles": all_roles, "emojis": [], "features": [],
        "mfa_level": 0, "application_id": null, "system_channel_id": null,
        "system_channel_flags": 0, "rules_channel_id": null, "vanity_url_code": null,
        "description": null, "banner": null, "premium_tier": 0,
        "preferred_locale": "en-US", "public_updates_channel_id": null, "nsfw_level": 0,
        "stickers": [], "premium_progress_bar_enabled": false,
        "joined_at": TS, "large": false, "unavailable": false,
        "member_count": members.len(), "voice_states": [], "members": members,
        "channels": channels, "threads": [], "presences": [], "stage_instances": [],
        "guild_scheduled_events": []
    })
}

/// A message object.
pub struct MessageSpec<'a> {
    /// The message id.
    pub id: u64,
    /// Its channel.
    pub channel: u64,
    /// Its guild (None for a DM).
    pub guild: Option<u64>,
    /// Author id.
    pub author: u64,
    /// Author name.
    pub author_name: &'a str,
    /// Whether the author is a bot.
    pub author_bot: bool,
    /// Raw text.
    pub content: &'a str,
    /// The message it replies to, when any.
    pub referenced: Option<Value>,
    /// Users it mentions.
    pub mentions: Vec<Value>,
    /// Whether it mentions @everyone.
    pub mention_everyone: bool,
    /// Attachments.
    pub attachments: Vec<Value>,
}

/// The time now as Discord writes it (messages carry when they were sent; catch-up
/// after a restart reads their age).
pub fn now() -> String {
    serenity::all::Timestamp::now().to_string()
}

/// A time `secs` seconds ago, as Discord writes it.
pub fn ago(secs: i64) -> String {
    let at = serenity::all::Timestamp::now().unix_timestamp() - secs;
    serenity::all::Timestamp::from_unix_timestamp(at)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| now())
}

/// A DM channel object with `user`.
pub fn dm_channel(id: u64, user_id: u64) -> Value {
    json!({
        "id": id.to_string(), "type": 1, "last_message_id": null,
        "recipients": [user(user_id, "someone", false)]
    })
}

/// The MESSAGE_CREATE payload of `spec`.
pub fn message(spec: &MessageSpec<'_>) -> Value {
    let mut m = json!({
        "id": spec.id.to_string(), "channel_id": spec.channel.to_string(),
        "author": user(spec.author, spec.author_name, spec.author_bot),
        "content": spec.content, "timestamp": now(), "edited_timestamp": null, "tts": false,
        "mention_everyone": spec.mention_everyone, "mentions": spec.mentions,
        "mention_roles": [], "attachments": spec.attachments, "embeds": [], "pinned": false,
        "type": if spec.referenced.is_some() { 19 } else { 0 }, "flags": 0, "components": []
    });
    if let Some(g) = spec.guild {
        m["guild_id"] = json!(g.to_string());
        m["member"] =
            json!({"roles": [], "joined_at": TS, "deaf": false, "mute": false, "flags": 0});
    }
    if let Some(r) = &spec.referenced {
        m["message_reference"] = json!({
            "message_id": r["id"], "channel_id": spec.channel.to_string(), "type": 0
        });
        m["referenced_message"] = r.clone();
    }
    m
}

/// The common part of an INTERACTION_CREATE payload.
pub fn interaction_base(
    kind: u8,
    id: u64,
    app: u64,
    channel: u64,
    guild: Option<u64>,
    presser: &Value,
    token: &str,
) -> Value {
    let mut i = json!({
        "id": id.to_string(), "application_id": app.to_string(), "type": kind,
        "channel_id": channel.to_string(),
        "channel": {"id": channel.to_string(), "type": if guild.is_some() { 0 } else { 1 }},
        "token": token, "version": 1, "app_permissions": "8", "locale": "en-US",
        "guild_locale": "en-US", "entitlements": [], "authorizing_integration_owners": {},
        "context": if guild.is_some() { 0 } else { 1 }, "attachment_size_limit": 8_388_608
    });
    match guild {
        Some(g) => {
            i["guild_id"] = json!(g.to_string());
            i["member"] = presser.clone();
        }
        None => i["user"] = presser["user"].clone(),
    }
    i
}
