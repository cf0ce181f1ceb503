//! `/settings show` and `/settings set <key> <value>`: the live settings.yaml keys,
//! validated by the configuration (a bad value is refused naming the key). Someone with
//! Manage Server who is not an owner may set only the keys of how she behaves in the
//! server (`keys::server_managers_may_set`); every key that guards the owner's machine
//! (`owners`, `allowlist`, `discord.approvers`, …) is an owner's alone.

use serenity::all::{CommandDataOptionValue, CommandInteraction};

use super::{option, Answer};
use crate::surfaces::discord::Bot;

/// Handle /settings.
pub(crate) fn run(bot: &Bot, c: &CommandInteraction) -> Answer {
    let sub = c
        .data
        .options
        .first()
        .map(|o| o.name.as_str())
        .unwrap_or("show");
    if sub == "set" {
        let text = |name| match option(&c.data.options, name) {
            Some(CommandDataOptionValue::String(s)) => s.clone(),
            _ => String::new(),
        };
        let (key, value) = (text("key"), text("value"));
        if !bot.is_owner(c.user.id.get())
            && !crate::config::keys::server_managers_may_set(key.trim())
        {
            return Answer::text(format!(
                "Only an owner can change `{}`: it guards what runs on the owner's machine. \
                 Nothing changed.",
                key.trim()
            ));
        }
        return match bot.engine.config().set(key.trim(), &value) {
            Ok(()) => Answer::text(format!(
                "`{}` is now `{}`. It applies from the next turn.",
                key.trim(),
                value
            )),
            Err(e) => Answer::text(format!("Not changed: {e}.")),
        };
    }
    let s = bot.engine.config().settings();
    let lines = [
        format!("model: {}", s.model),
        format!("base_url: {}", s.base_url),
        format!("api: {:?}", s.api),
        format!("api_key_env: {}", s.api_key_env),
        format!("reasoning_effort: {}", s.reasoning_effort),
        format!("voice_mode: {:?}", s.voice_mode),
        format!("work_max_iter: {}", s.work_max_iter),
        format!("work_max_tool_calls: {}", s.work_max_tool_calls),
        format!("work_fail_limit: {}", s.work_fail_limit),
        format!("work_timeout: {}", s.work_timeout),
        format!("disabled_toolsets: [{}]", s.disabled_toolsets.join(", ")),
        format!("force_ask: {}", s.force_ask),
        format!("allowlist: {} lines", s.allowlist.len()),
        format!("owners: [{}]", owners_shown(&bot.engine.config().owners())),
        format!("discord.approvers: [{}]", s.discord_approvers.join(", ")),
    ];
    Answer::text(format!("```yaml\n{}\n```", lines.join("\n")))
}

/// The owners as `/settings show` lists them: `1, 2`.
fn owners_shown(ids: &[u64]) -> String {
    let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
    ids.join(", ")
}
