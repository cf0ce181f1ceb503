//! What `kotoba doctor` asks Discord: whether the bot token is accepted, whether the
//! privileged intents she needs are switched on for the application, and the invite
//! URL with the permission integer her tools need. Each problem is one line naming
//! its fix.

use reqwest::Method;

use super::rest::Rest;
use super::DiscordSettings;
use crate::tools::discord::guild::invite_permissions;

/// The application flag bits that say Server Members is on (full, or limited to an
/// application in fewer than 100 servers).
const MEMBERS: u64 = (1 << 14) | (1 << 15);
/// The same for Message Content.
const MESSAGE_CONTENT: u64 = (1 << 18) | (1 << 19);

/// One line of the report.
pub struct Line {
    /// What it is about (`discord`, `discord intents`, `invite URL`).
    pub label: &'static str,
    /// What was found, or what to do.
    pub text: String,
    /// Whether it is fine.
    pub ok: bool,
}

fn line(label: &'static str, text: String, ok: bool) -> Line {
    Line { label, text, ok }
}

/// Ask Discord (or `api_base`) about the bot of `settings`.
pub async fn check(settings: &DiscordSettings) -> Vec<Line> {
    let rest = Rest::new(&settings.token, settings.api_base.as_deref());
    let me = match rest.call(Method::GET, "/users/@me", None).await {
        Ok(me) => me,
        Err(e) if e.status == 401 => {
            return vec![line(
                "discord",
                "the bot token is refused: put a valid one in DISCORD_TOKEN (Developer Portal → your application → Bot → Reset Token)".into(),
                false,
            )]
        }
        Err(e) => {
            return vec![line(
                "discord",
                format!("NOT reached — {}", e.message),
                false,
            )]
        }
    };
    let name = me["username"].as_str().unwrap_or("the bot");
    let mut out = vec![line(
        "discord",
        format!("the token is accepted: {name}"),
        true,
    )];
    let app = match rest.call(Method::GET, "/applications/@me", None).await {
        Ok(app) => app,
        Err(e) => {
            out.push(line(
                "discord intents",
                format!("could not read the application — {}", e.message),
                false,
            ));
            return out;
        }
    };
    let flags = app["flags"].as_u64().unwrap_or(0);
    let mut off = Vec::new();
    if flags & MESSAGE_CONTENT == 0 {
        off.push("Message Content Intent");
    }
    if flags & MEMBERS == 0 {
        off.push("Server Members Intent");
    }
    out.push(if off.is_empty() {
        line(
            "discord intents",
            "Message Content and Server Members are on".into(),
            true,
        )
    } else {
        line(
            "discord intents",
            format!(
                "switch on {} (Developer Portal → your application → Bot → Privileged Gateway Intents); Discord refuses her connection without them",
                off.join(" and ")
            ),
            false,
        )
    });
    if let Some(id) = app["id"].as_str() {
        out.push(line("invite URL", invite_url(id), true));
    }
    out
}

/// The URL that invites application `id` with the scopes and permissions she needs.
pub fn invite_url(id: &str) -> String {
    format!(
        "https://discord.com/oauth2/authorize?client_id={id}&scope=bot%20applications.commands&permissions={}",
        invite_permissions()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_invite_asks_for_what_her_tools_use_and_never_administrator() {
        let url = invite_url("901");
        let n = invite_permissions();
        assert!(url.ends_with(&format!("permissions={n}")), "{url}");
        assert!(url.contains("client_id=901") && url.contains("scope=bot%20applications.commands"));
        let bit = |name| crate::tools::discord::guild::permission_bit(name).unwrap();
        for needed in [
            "view_channel",
            "send_messages",
            "connect",
            "speak",
            "manage_channels",
            "manage_roles",
        ] {
            assert_ne!(n & bit(needed), 0, "{needed}");
        }
        assert_eq!(n & crate::tools::discord::guild::ADMINISTRATOR, 0);
    }
}
