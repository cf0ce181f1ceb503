//! Who is in which voice channel, read from serenity's cache: the guild's voice states,
//! and whether each person is a bot. The cache calls are thin; the sorting into humans
//! and bots is pure and tested on its own.

use serenity::all::{ChannelId, GuildId, UserId};
use serenity::cache::Cache;

/// One person's voice state: who, in which voice channel, and whether a bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Presence {
    /// The user id.
    pub user: u64,
    /// The voice channel they are in.
    pub channel: u64,
    /// Whether the account is a bot (unknown counts as a person).
    pub bot: bool,
}

/// The voice channel `user` is in, in `guild`.
pub fn voice_channel_of(cache: &Cache, guild: GuildId, user: UserId) -> Option<ChannelId> {
    cache.guild(guild)?.voice_states.get(&user)?.channel_id
}

/// The humans and the bots in `channel` of `guild`, each sorted by id.
pub fn people_in(cache: &Cache, guild: GuildId, channel: ChannelId) -> (Vec<u64>, Vec<u64>) {
    split(&presences(cache, guild), channel.get())
}

/// The guild a (cached) guild channel belongs to.
pub fn guild_of_channel(cache: &Cache, channel: ChannelId) -> Option<GuildId> {
    cache.guilds().into_iter().find(|g| {
        cache
            .guild(*g)
            .is_some_and(|guild| guild.channels.contains_key(&channel))
    })
}

/// Every voice state of `guild` with a channel.
pub fn presences(cache: &Cache, guild: GuildId) -> Vec<Presence> {
    let Some(g) = cache.guild(guild) else {
        return Vec::new();
    };
    g.voice_states
        .values()
        .filter_map(|vs| {
            let channel = vs.channel_id?;
            let bot = vs
                .member
                .as_ref()
                .map(|m| m.user.bot)
                .or_else(|| g.members.get(&vs.user_id).map(|m| m.user.bot))
                .unwrap_or(false);
            Some(Presence {
                user: vs.user_id.get(),
                channel: channel.get(),
                bot,
            })
        })
        .collect()
}

/// The humans and the bots among `presences` who are in `channel`, each sorted by id.
pub fn split(presences: &[Presence], channel: u64) -> (Vec<u64>, Vec<u64>) {
    let (mut humans, mut bots) = (Vec::new(), Vec::new());
    for p in presences.iter().filter(|p| p.channel == channel) {
        if p.bot {
            bots.push(p.user);
        } else {
            humans.push(p.user);
        }
    }
    humans.sort_unstable();
    humans.dedup();
    bots.sort_unstable();
    bots.dedup();
    (humans, bots)
}

/// The channel `user` is in, among `presences`.
pub fn channel_of(presences: &[Presence], user: u64) -> Option<u64> {
    presences.iter().find(|p| p.user == user).map(|p| p.channel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(user: u64, channel: u64, bot: bool) -> Presence {
        Presence { user, channel, bot }
    }

    #[test]
    fn people_in_a_channel_are_split_into_humans_and_bots() {
        let all = [
            p(3, 10, false),
            p(900, 10, true),
            p(1, 10, false),
            p(2, 11, false),
            p(901, 11, true),
        ];
        let table: [(u64, &[u64], &[u64]); 3] =
            [(10, &[1, 3], &[900]), (11, &[2], &[901]), (12, &[], &[])];
        for (channel, humans, bots) in table {
            assert_eq!(
                split(&all, channel),
                (humans.to_vec(), bots.to_vec()),
                "channel {channel}"
            );
        }
    }

    #[test]
    fn a_person_is_found_in_the_channel_they_are_in() {
        let all = [p(1, 10, false), p(2, 11, false)];
        assert_eq!(channel_of(&all, 1), Some(10));
        assert_eq!(channel_of(&all, 2), Some(11));
        assert_eq!(channel_of(&all, 3), None);
    }

    fn guild_create() -> serenity::all::GuildCreateEvent {
        use serde_json::json;
        let user = |id: u64, bot: bool| {
            json!({"id": id.to_string(), "username": format!("u{id}"), "discriminator": "0",
                   "global_name": null, "avatar": null, "bot": bot, "public_flags": 0})
        };
        let member = |id: u64, bot: bool| {
            json!({"user": user(id, bot), "nick": null, "avatar": null, "roles": [],
                   "joined_at": "2026-01-01T00:00:00.000000+00:00", "premium_since": null,
                   "deaf": false, "mute": false, "flags": 0, "pending": false})
        };
        let voice = |user: u64, channel: u64| {
            json!({"guild_id": "1", "channel_id": channel.to_string(), "user_id": user.to_string(),
                   "session_id": "s", "deaf": false, "mute": false, "self_deaf": false,
                   "self_mute": false, "self_video": false, "suppress": false,
                   "request_to_speak_timestamp": null})
        };
        let channel = |id: u64| {
            json!({"id": id.to_string(), "type": 2, "guild_id": "1", "name": format!("v{id}"),
                   "position": 0, "permission_overwrites": [], "nsfw": false, "parent_id": null,
                   "bitrate": 64000, "user_limit": 0, "rtc_region": null, "flags": 0})
        };
        serde_json::from_value(json!({
            "id": "1", "name": "g", "icon": null, "splash": null, "discovery_splash": null,
            "owner_id": "1", "afk_channel_id": null, "afk_timeout": 300,
            "verification_level": 0, "default_message_notifications": 0,
            "explicit_content_filter": 0, "roles": [], "emojis": [], "features": [],
            "mfa_level": 0, "application_id": null, "system_channel_id": null,
            "system_channel_flags": 0, "rules_channel_id": null, "vanity_url_code": null,
            "description": null, "banner": null, "premium_tier": 0, "preferred_locale": "en-US",
            "public_updates_channel_id": null, "nsfw_level": 0, "stickers": [],
            "premium_progress_bar_enabled": false, "joined_at": "2026-01-01T00:00:00.000000+00:00",
            "large": false, "unavailable": false, "member_count": 3,
            "members": [member(1, false), member(2, false), member(900, true)],
            "voice_states": [voice(1, 10), voice(900, 10), voice(2, 11)],
            "channels": [channel(10), channel(11)], "threads": [], "presences": [],
            "stage_instances": [], "guild_scheduled_events": []
        }))
        .unwrap()
    }

    #[test]
    fn the_cache_tells_who_is_in_which_voice_channel_and_who_is_a_bot() {
        let cache = Cache::new();
        cache.update(&mut guild_create());
        let g = GuildId::new(1);
        assert_eq!(
            voice_channel_of(&cache, g, UserId::new(1)),
            Some(ChannelId::new(10))
        );
        assert_eq!(
            voice_channel_of(&cache, g, UserId::new(2)),
            Some(ChannelId::new(11))
        );
        assert_eq!(voice_channel_of(&cache, g, UserId::new(3)), None);
        assert_eq!(
            people_in(&cache, g, ChannelId::new(10)),
            (vec![1], vec![900])
        );
        assert_eq!(people_in(&cache, g, ChannelId::new(11)), (vec![2], vec![]));
        assert_eq!(guild_of_channel(&cache, ChannelId::new(11)), Some(g));
    }

    #[test]
    fn an_empty_cache_knows_no_one() {
        let cache = Cache::new();
        let (g, c, u) = (GuildId::new(1), ChannelId::new(2), UserId::new(3));
        assert_eq!(voice_channel_of(&cache, g, u), None);
        assert_eq!(people_in(&cache, g, c), (vec![], vec![]));
        assert_eq!(guild_of_channel(&cache, c), None);
        assert!(presences(&cache, g).is_empty());
    }
}
