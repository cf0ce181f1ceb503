//! ask_secret, request_credential, get_credential (work only). The person types a
//! secret into a masked card; it is sealed in the keystore. get_credential never hands
//! the value to the model: it exposes it to this session's shell and code runs as an
//! environment variable, and the engine redacts it from every output.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{opt_str, req_str};
use super::port::Asked;
use super::Behaviour;
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::ASK_USER_WINDOW;
use kotoba_core::protocol::{Ending, Risk, StepKind};

/// A secret's name: letters, digits, `-`, `_`, `.`; 1–64 characters.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// The environment variable a secret is exposed as: `KOTOBA_SECRET_<NAME>`.
pub fn env_name(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("KOTOBA_SECRET_{upper}")
}

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        family: "secrets".into(),
        risk: Risk::Read,
        step_kind: StepKind::Tool,
        timeout: Some(ASK_USER_WINDOW + std::time::Duration::from_secs(5)),
        takes_timeout_arg: false,
        scope: Scope::WorkOnly,
        lines: ToolLines::of(
            "I need a secret from you for this.",
            &[
                "Waiting for you to enter it.",
                "Still waiting on that secret.",
            ],
            "Got it, it's stored safely.",
            "I couldn't get that secret.",
        ),
        parameters,
        behaviour: Behaviour::default(),
    }
}

/// The answer of ask_secret / request_credential in a session born on Discord: a
/// secret is never asked for in a channel (discord.md), so nothing is asked there.
pub fn not_in_a_channel(tool: &str, name: &str) -> String {
    format!(
        "{tool}: secrets are NEVER asked for in a Discord channel, so NOTHING was asked and nothing was \
         stored. Tell them to enter '{name}' on the web page (the address `kotoba serve` prints) or in the \
         terminal (`kotoba chat`), where it is typed into a masked card; once it is saved under that name, \
         get_credential can use it here."
    )
}

/// ask_secret and request_credential: one mechanism, two phrasings.
pub struct SecretPrompt {
    spec: ToolSpec,
}

impl SecretPrompt {
    /// `ask_secret`: ask for any secret by name.
    pub fn ask_secret() -> SecretPrompt {
        SecretPrompt {
            spec: spec(
                "ask_secret",
                "Ask the person to type a secret (an API key, a token) into a masked card. It is stored \
                 encrypted under `name`; you never see it. Use get_credential to use it.",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "What to store it as, e.g. 'github-token'."},
                        "why": {"type": "string", "description": "One sentence: what you need it for."}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }),
            ),
        }
    }

    /// `request_credential`: ask for the credential of a service.
    pub fn request_credential() -> SecretPrompt {
        SecretPrompt {
            spec: spec(
                "request_credential",
                "Ask the person for the credential (password or token) of a service, typed into a masked \
                 card and stored encrypted under the service's name; you never see it.",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The service, e.g. 'pypi'."},
                        "why": {"type": "string", "description": "One sentence: what you need it for."}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

#[async_trait]
impl Tool for SecretPrompt {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let tool = self.spec.name.as_str();
        let (name, why) = match (req_str(&args, "name", tool), opt_str(&args, "why", tool)) {
            (Ok(n), Ok(w)) => (n.trim(), w.unwrap_or("")),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        if !valid_name(name) {
            return ToolOutput::refused(format!(
                "{tool}: '{name}' is not a usable name (letters, digits, - _ . only, at most 64). Nothing was asked."
            ));
        }
        // Asked only where the owner is on their own surface (the page, the terminal):
        // in a Discord channel everyone would see it, and nobody asked in an unknown one.
        if *ctx.origin() != kotoba_core::protocol::Origin::Owner {
            return ToolOutput::refused_with(Ending::Policy, not_in_a_channel(tool, name));
        }
        let Some(engine) = &ctx.engine else {
            return ToolOutput::refused_with(
                Ending::Unreachable,
                format!("{tool}: nobody can be asked here."),
            );
        };
        let question = if why.is_empty() {
            format!("Enter the secret '{name}'")
        } else {
            format!("Enter the secret '{name}': {why}")
        };
        match engine.ask_person(ctx, tool, &question, ASK_USER_WINDOW, true).await {
            Asked::Skipped => ToolOutput::refused_with(Ending::Declined, format!("{tool}: they skipped it, so nothing was stored.")),
            Asked::Answered(value) if value.is_empty() => {
                ToolOutput::refused_with(Ending::Declined, format!("{tool}: they left it empty, so nothing was stored."))
            }
            Asked::Answered(value) => match engine.save_secret(name, &value).await {
                Ok(()) => ToolOutput::ok(format!(
                    "Stored '{name}' encrypted. You never see it; call get_credential with name '{name}' to use it."
                )),
                Err(e) => ToolOutput::failed(format!("{tool}: {e}")),
            },
            Asked::Unreachable => ToolOutput::refused_with(
                Ending::Unreachable,
                format!("{tool}: no one is watching this conversation to type it, so it was NOT asked."),
            ),
            Asked::Expired => ToolOutput::refused_with(Ending::Unanswered, format!("{tool}: the card expired unanswered.")),
            Asked::Dismissed => ToolOutput::refused_with(Ending::Dismissed, format!("{tool}: the card went away unanswered.")),
        }
    }
}

/// `get_credential`: unlock a saved secret for shell and code runs.
pub struct GetCredential {
    spec: ToolSpec,
}

impl Default for GetCredential {
    fn default() -> Self {
        let mut spec = spec(
            "get_credential",
            "Make a saved secret available to your shell and execute_code runs as an environment \
             variable (its value is never shown to you or written anywhere).",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The name it was stored under."}},
                "required": ["name"],
                "additionalProperties": false
            }),
        );
        spec.timeout = None;
        GetCredential { spec }
    }
}

#[async_trait]
impl Tool for GetCredential {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let name = match req_str(&args, "name", "get_credential") {
            Ok(n) => n.trim(),
            Err(r) => return r,
        };
        let Some(engine) = &ctx.engine else {
            return ToolOutput::refused("get_credential: the keystore is not reachable here.");
        };
        match engine.unlock_secret(ctx, name).await {
            Ok(var) => ToolOutput::ok(format!(
                "'{name}' is available to shell and execute_code in this job as ${var} (use the variable; \
                 never print it). Its value is redacted from every output."
            )),
            Err(sentence) => ToolOutput::refused(sentence.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_checked_and_map_to_one_env_variable() {
        assert!(valid_name("github-token") && valid_name("a.b_c"));
        assert!(!valid_name("") && !valid_name("has space") && !valid_name("x;rm"));
        assert_eq!(env_name("github-token"), "KOTOBA_SECRET_GITHUB_TOKEN");
    }
}
