//! Slash commands: defined as data in `commands/` (one JSON file per command, embedded
//! at build time), validated against Discord's limits, registered at start-up (global,
//! or per guild for the configured guilds), gated (anyone / owner / owner or Manage
//! Server) and answered privately unless meant for the channel. One file per command.

pub mod audit;
pub mod forget_me;
pub mod grants;
pub mod join;
pub mod leave;
pub mod new;
pub mod settings;
pub mod status;
pub mod stop;

use serde::Deserialize;
use serde_json::{json, Value};
use serenity::all::{
    CommandDataOption, CommandDataOptionValue, CommandInteraction, Context,
    CreateInteractionResponse, CreateInteractionResponseMessage, EditInteractionResponse, GuildId,
    Http,
};

use std::sync::Arc;

use super::Bot;

/// The command files, embedded.
pub const FILES: &[(&str, &str)] = &[
    (
        "settings",
        include_str!("../../../../commands/settings.json"),
    ),
    ("stop", include_str!("../../../../commands/stop.json")),
    ("status", include_str!("../../../../commands/status.json")),
    ("grants", include_str!("../../../../commands/grants.json")),
    ("audit", include_str!("../../../../commands/audit.json")),
    ("new", include_str!("../../../../commands/new.json")),
    ("join", include_str!("../../../../commands/join.json")),
    ("leave", include_str!("../../../../commands/leave.json")),
    (
        "forget-me",
        include_str!("../../../../commands/forget-me.json"),
    ),
];

/// Who may use a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Everyone who can see the bot.
    Anyone,
    /// Owners only.
    Owner,
    /// Owners, or members holding Manage Server.
    OwnerOrManageServer,
}

/// One command file.
#[derive(Debug, Clone, Deserialize)]
pub struct CommandDef {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Who may use it.
    pub access: Access,
    /// Whether the answer is ephemeral.
    pub private: bool,
    /// Discord option objects.
    #[serde(default)]
    pub options: Vec<Value>,
}

/// A command file that does not read as a command definition.
#[derive(Debug, thiserror::Error)]
#[error("commands/{file}.json: {error}")]
pub struct BrokenCommand {
    /// The file's name, without `.json`.
    pub file: &'static str,
    /// What the JSON reader said.
    pub error: serde_json::Error,
}

/// Every command definition, parsed (a broken file is named in the error).
pub fn all() -> Result<Vec<CommandDef>, BrokenCommand> {
    FILES
        .iter()
        .map(|(file, text)| {
            serde_json::from_str::<CommandDef>(text).map_err(|error| BrokenCommand { file, error })
        })
        .collect()
}

fn name_ok(s: &str) -> bool {
    (1..=32).contains(&s.chars().count())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn check_options(path: &str, options: &[Value], problems: &mut Vec<String>) {
    if options.len() > 25 {
        problems.push(format!("{path}: {} options (at most 25)", options.len()));
    }
    for o in options {
        let name = o["name"].as_str().unwrap_or("");
        let here = format!("{path} {name}");
        if !name_ok(name) {
            problems.push(format!("{here}: bad option name"));
        }
        let d = o["description"].as_str().unwrap_or("");
        if !(1..=100).contains(&d.chars().count()) {
            problems.push(format!("{here}: description must be 1–100 characters"));
        }
        if !(1..=11).contains(&o["type"].as_u64().unwrap_or(0)) {
            problems.push(format!("{here}: bad option type"));
        }
        if let Some(sub) = o["options"].as_array() {
            check_options(&here, sub, problems);
        }
    }
}

/// Every way `defs` break Discord's limits (empty when they fit).
pub fn validate(defs: &[CommandDef]) -> Vec<String> {
    let mut problems = Vec::new();
    if defs.len() > 100 {
        problems.push(format!("{} commands (at most 100)", defs.len()));
    }
    let mut seen = std::collections::HashSet::new();
    for d in defs {
        if !name_ok(&d.name) {
            problems.push(format!("/{}: name must match ^[-_a-z0-9]{{1,32}}$", d.name));
        }
        if !seen.insert(d.name.clone()) {
            problems.push(format!("/{}: defined twice", d.name));
        }
        if !(1..=100).contains(&d.description.chars().count()) {
            problems.push(format!("/{}: description must be 1–100 characters", d.name));
        }
        check_options(&format!("/{}", d.name), &d.options, &mut problems);
    }
    problems
}

/// The registration body Discord takes (our own keys left out).
pub fn registration_body(defs: &[CommandDef]) -> Value {
    Value::Array(
        defs.iter()
            .map(|d| json!({"name": d.name, "description": d.description, "type": 1, "options": d.options}))
            .collect(),
    )
}

/// Register every command: per configured guild, or globally when no guild is listed.
pub(crate) async fn register(bot: &Bot, http: &Http) {
    let defs = match all() {
        Ok(d) => d,
        Err(e) => return tracing::error!("Discord: slash commands not registered: {e}"),
    };
    let body = registration_body(&defs);
    let result = if bot.settings.guilds.is_empty() {
        http.create_global_commands(&body).await.map(|_| ())
    } else {
        let mut r = Ok(());
        for g in bot.settings.guilds.iter().filter(|g| **g > 0) {
            if let Err(e) = http.create_guild_commands(GuildId::new(*g), &body).await {
                r = Err(e);
            }
        }
        r
    };
    if let Err(e) = result {
        tracing::warn!("Discord: registering slash commands failed: {e}");
    }
}

/// A command's answer: text and any buttons.
pub(crate) struct Answer {
    /// The message.
    pub message: CreateInteractionResponseMessage,
}

impl Answer {
    /// Plain text.
    pub(crate) fn text(s: impl Into<String>) -> Answer {
        Answer {
            message: CreateInteractionResponseMessage::new().content(s),
        }
    }
}

/// The value of option `name` (looking inside a subcommand too).
pub(crate) fn option<'a>(
    options: &'a [CommandDataOption],
    name: &str,
) -> Option<&'a CommandDataOptionValue> {
    for o in options {
        if o.name == name {
            return Some(&o.value);
        }
        if let CommandDataOptionValue::SubCommand(sub) = &o.value {
            if let Some(v) = option(sub, name) {
                return Some(v);
            }
        }
    }
    None
}

/// Whether the person may use a command of `access`.
fn permitted(bot: &Bot, c: &CommandInteraction, access: Access) -> bool {
    let owner = bot.is_owner(c.user.id.get());
    let manage = c
        .member
        .as_ref()
        .and_then(|m| m.permissions)
        .is_some_and(|p| p.manage_guild() || p.administrator());
    match access {
        Access::Anyone => true,
        Access::Owner => owner,
        Access::OwnerOrManageServer => owner || manage,
    }
}

/// Answer a voice command: deferred at once (a join may take up to 30 s), then the
/// sentence replaces the "thinking" reply.
async fn voice_command(bot: &Arc<Bot>, ctx: &Context, c: &CommandInteraction, private: bool) {
    let defer = CreateInteractionResponse::Defer(
        CreateInteractionResponseMessage::new().ephemeral(private),
    );
    if let Err(e) = c.create_response(&ctx.http, defer).await {
        tracing::warn!("Discord: deferring /{}: {e}", c.data.name);
    }
    let text = match c.data.name.as_str() {
        "join" => join::run(bot, c).await,
        _ => leave::run(bot, c).await,
    };
    if let Err(e) = c
        .edit_response(&ctx.http, EditInteractionResponse::new().content(text))
        .await
    {
        tracing::warn!("Discord: answering /{}: {e}", c.data.name);
    }
}

/// Handle one slash command.
pub(crate) async fn on_command(bot: &Arc<Bot>, ctx: &Context, c: CommandInteraction) {
    let def = all()
        .ok()
        .and_then(|defs| defs.into_iter().find(|d| d.name == c.data.name));
    let Some(def) = def else {
        let r = super::send::private("That command is not known here.");
        let _ = c.create_response(&ctx.http, r).await;
        return;
    };
    if permitted(bot, &c, def.access) && matches!(def.name.as_str(), "join" | "leave") {
        return voice_command(bot, ctx, &c, def.private).await;
    }
    let answer = if !permitted(bot, &c, def.access) {
        Answer::text(match def.access {
            Access::Owner => "Only an owner can use this command.",
            _ => "Only an owner or someone with Manage Server can use this command.",
        })
    } else {
        match def.name.as_str() {
            // A save writes the file (and hashes a password): its own thread.
            "settings" => {
                let (bot, c) = (bot.clone(), c.clone());
                tokio::task::spawn_blocking(move || settings::run(&bot, &c))
                    .await
                    .unwrap_or_else(|e| Answer::text(format!("Not changed: {e}.")))
            }
            "stop" => stop::run(bot, &c),
            "status" => status::run(bot, &c).await,
            "grants" => grants::run(bot, &c).await,
            "audit" => audit::run(bot, &c).await,
            "new" => new::run(bot, &c).await,
            "forget-me" => forget_me::run(bot, &c),
            _ => Answer::text("That command has no handler yet."),
        }
    };
    let refused = !permitted(bot, &c, def.access);
    let msg = answer.message.ephemeral(def.private || refused);
    if let Err(e) = c
        .create_response(&ctx.http, CreateInteractionResponse::Message(msg))
        .await
    {
        tracing::warn!("Discord: answering /{}: {e}", def.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_file_fits_discords_limits() {
        let defs = all().unwrap();
        assert_eq!(defs.len(), FILES.len());
        assert!(validate(&defs).is_empty(), "{:?}", validate(&defs));
        for (file, _) in FILES {
            assert!(
                defs.iter().any(|d| &d.name == file),
                "commands/{file}.json names itself"
            );
        }
    }

    #[test]
    fn the_validator_catches_a_bad_name_a_long_description_and_too_many_options() {
        let bad = CommandDef {
            name: "Bad Name".into(),
            description: "x".repeat(101),
            access: Access::Anyone,
            private: true,
            options: (0..26)
                .map(|i| json!({"type": 3, "name": format!("o{i}"), "description": "d"}))
                .collect(),
        };
        let p = validate(&[bad]);
        assert_eq!(p.len(), 3, "{p:?}");
    }
}
