//! When she answers a written message (discord.md): DM, a mention read from the raw
//! text, a reply to her, a home channel, or the 90 s follow-up window — as pure
//! functions over the facts of one message, so every rule is tested without Discord.

use std::time::Duration;

use tokio::time::Instant;

/// The follow-up window: after her answer, the same author may go on without a mention.
pub const FOLLOW_UP_WINDOW: Duration = Duration::from_secs(90);

/// What the handler knows about one incoming message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Her own message.
    pub own: bool,
    /// Another bot's message.
    pub from_bot: bool,
    /// No text and no attachment.
    pub empty: bool,
    /// A direct message.
    pub dm: bool,
    /// The guild is allowed (always true with no allow-list); for a DM: the author is a
    /// member of an allowed guild (always true with no allow-list).
    pub allowed: bool,
    /// The raw text names her (`<@id>`, `<@!id>`, a role she wears).
    pub mentions_me: bool,
    /// It replies to one of her messages.
    pub reply_to_me: bool,
    /// It is in a configured home channel.
    pub home_channel: bool,
    /// It mentions someone or something else (another user, a role, @everyone/@here).
    pub mentions_others: bool,
    /// Who wrote it.
    pub author: u64,
}

/// Why she answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A direct message.
    Dm,
    /// She was mentioned.
    Mention,
    /// A reply to her message.
    Reply,
    /// A home channel.
    Home,
    /// The same author within 90 s of her answer, nobody between.
    FollowUp,
}

/// Her last answer in a channel, for the follow-up window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowUp {
    /// Whom she answered.
    pub author: u64,
    /// When her answer went out.
    pub at: Instant,
}

/// Decide whether she answers `f`, given the channel's follow-up state at `now`.
pub fn decide(f: &Facts, follow: Option<&FollowUp>, now: Instant) -> Option<Why> {
    if f.own || f.from_bot || f.empty || !f.allowed {
        return None;
    }
    if f.dm {
        return Some(Why::Dm);
    }
    if f.mentions_me {
        return Some(Why::Mention);
    }
    if f.reply_to_me {
        return Some(Why::Reply);
    }
    if f.home_channel {
        return Some(Why::Home);
    }
    let fresh = follow.is_some_and(|fu| {
        fu.author == f.author && now.saturating_duration_since(fu.at) <= FOLLOW_UP_WINDOW
    });
    (fresh && !f.mentions_others).then_some(Why::FollowUp)
}

/// The follow-up state after a message by `author` that she does not answer: anyone
/// else speaking closes the window.
pub fn after_unanswered(follow: Option<FollowUp>, author: u64) -> Option<FollowUp> {
    follow.filter(|fu| fu.author == author)
}

/// Whether the raw text names `me` or a role she wears.
pub fn mentions_me(content: &str, me: u64, my_roles: &[u64]) -> bool {
    mention_tokens(content)
        .iter()
        .any(|t| is_mine(t, me, my_roles))
}

/// The text without her own mention tokens (and the spaces they leave).
pub fn strip_my_mentions(content: &str, me: u64, my_roles: &[u64]) -> String {
    let mut out = content.to_string();
    for t in mention_tokens(content) {
        if is_mine(&t, me, my_roles) {
            out = out.replace(&t, "");
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the raw text mentions anyone but her: another user, a role she does not
/// wear, or @everyone/@here.
pub fn mentions_others(content: &str, me: u64, my_roles: &[u64]) -> bool {
    content.contains("@everyone")
        || content.contains("@here")
        || mention_tokens(content)
            .iter()
            .any(|t| !is_mine(t, me, my_roles))
}

fn is_mine(token: &str, me: u64, my_roles: &[u64]) -> bool {
    match crate::protocol::Mention::parse(token) {
        Some(crate::protocol::Mention::Role(r)) => my_roles.contains(&r),
        Some(crate::protocol::Mention::Person(p)) => p == me,
        None => false,
    }
}

/// Every `<@…>` token of the text: `<@id>`, `<@!id>`, `<@&role>`.
fn mention_tokens(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(start) = rest.find("<@") {
        let tail = &rest[start..];
        let Some(end) = tail.find('>') else { break };
        let token = &tail[..=end];
        let body = token[2..token.len() - 1].trim_start_matches(['!', '&']);
        if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) {
            out.push(token.to_string());
        }
        rest = &tail[2..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u64 = 900;

    fn plain(author: u64) -> Facts {
        Facts {
            allowed: true,
            author,
            ..Facts::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_follow_up_window_is_ninety_seconds_for_the_same_author_with_nobody_between() {
        let t0 = Instant::now();
        let follow = FollowUp { author: 1, at: t0 };
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(
            decide(&plain(1), Some(&follow), Instant::now()),
            Some(Why::FollowUp)
        );
        assert_eq!(
            decide(&plain(2), Some(&follow), Instant::now()),
            None,
            "another author"
        );
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(
            decide(&plain(1), Some(&follow), Instant::now()),
            None,
            "91 s is too late"
        );
        // Someone spoke between: the window is closed for the first author too.
        assert_eq!(after_unanswered(Some(follow), 2), None);
        assert_eq!(after_unanswered(Some(follow), 1), Some(follow));
        let mut with_mention = plain(1);
        with_mention.mentions_others = true;
        assert_eq!(
            decide(
                &with_mention,
                Some(&FollowUp {
                    author: 1,
                    at: Instant::now()
                }),
                Instant::now()
            ),
            None
        );
    }

    #[test]
    fn a_mention_is_read_from_the_raw_text_including_nick_and_role_forms() {
        assert!(mentions_me("<@900> hi", ME, &[]));
        assert!(mentions_me("hey <@!900>", ME, &[]));
        assert!(mentions_me("<@&7> hello", ME, &[7]));
        assert!(!mentions_me("<@&8> hello", ME, &[7]));
        assert!(!mentions_me("@everyone hello", ME, &[]));
        assert!(!mentions_me("<@901> hi", ME, &[]));
        assert_eq!(
            strip_my_mentions("<@900> what is  up <@!900>", ME, &[]),
            "what is up"
        );
        assert!(mentions_others("@here look", ME, &[]));
        assert!(mentions_others("<@5> look", ME, &[]));
        assert!(!mentions_others("<@900> look", ME, &[]));
    }

    #[test]
    fn she_never_answers_herself_a_bot_an_empty_message_or_another_guild() {
        let now = Instant::now();
        for f in [
            Facts {
                own: true,
                dm: true,
                ..plain(1)
            },
            Facts {
                from_bot: true,
                mentions_me: true,
                ..plain(1)
            },
            Facts {
                empty: true,
                dm: true,
                ..plain(1)
            },
            Facts {
                allowed: false,
                mentions_me: true,
                ..plain(1)
            },
            plain(1),
        ] {
            assert_eq!(decide(&f, None, now), None, "{f:?}");
        }
        assert_eq!(
            decide(
                &Facts {
                    dm: true,
                    ..plain(1)
                },
                None,
                now
            ),
            Some(Why::Dm)
        );
        assert_eq!(
            decide(
                &Facts {
                    home_channel: true,
                    ..plain(1)
                },
                None,
                now
            ),
            Some(Why::Home)
        );
        assert_eq!(
            decide(
                &Facts {
                    reply_to_me: true,
                    ..plain(1)
                },
                None,
                now
            ),
            Some(Why::Reply)
        );
    }
}
