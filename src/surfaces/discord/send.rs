//! Posting her words into a Discord channel: links tidied, split at Discord's limit,
//! only the users she names pinged; and the private reply to an interaction.

use serenity::all::{
    ChannelId, CreateAllowedMentions, CreateInteractionResponse, CreateInteractionResponseMessage,
    CreateMessage, Http, Message, UserId,
};

use super::reply;

/// Post her words into a channel: links tidied, split for Discord, only the users she
/// names pinged; the first part replies to `to` when given, without pinging its author.
/// Returns the first part as posted (none when Discord refused it).
pub(crate) async fn post(
    http: &Http,
    channel: ChannelId,
    to: Option<&Message>,
    text: &str,
) -> Option<Message> {
    let tidy = reply::tidy_links(text);
    let users: Vec<UserId> = reply::pinged_users(&tidy)
        .into_iter()
        .filter(|u| *u > 0)
        .map(UserId::new)
        .collect();
    let mut first = None;
    for (i, part) in reply::split(&tidy).iter().enumerate() {
        let mentions = CreateAllowedMentions::new()
            .users(users.clone())
            .replied_user(false);
        let mut m = CreateMessage::new()
            .content(part)
            .allowed_mentions(mentions);
        if let (0, Some(msg)) = (i, to) {
            m = m.reference_message(msg);
        }
        match channel.send_message(http, m).await {
            Ok(posted) => {
                first.get_or_insert(posted);
            }
            Err(e) => {
                tracing::warn!("Discord: posting a reply in {channel}: {e}");
                break;
            }
        }
    }
    first
}

/// A private reply to an interaction.
pub(crate) fn private(text: impl Into<String>) -> CreateInteractionResponse {
    CreateInteractionResponse::Message(
        CreateInteractionResponseMessage::new()
            .content(text)
            .ephemeral(true),
    )
}
