//! `forget_me`: a person asks her to erase what she keeps about them (docs/discord.md,
//! "Forget me"). Always a card first, which is theirs to answer (an owner's too), never
//! with an "always"; then the engine erases their notebook, the facts about them, their
//! DM conversations and their lines elsewhere. An owner's turn names the person.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::memory::Notebook;
use super::port::ErasedBy;
use super::{Behaviour, Gating, MayAnswer, Prepared, ASKER_ALONE};
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Origin, Risk, StepKind};

const NAME: &str = "forget_me";

/// `forget_me`.
pub struct ForgetMe {
    spec: ToolSpec,
}

impl Default for ForgetMe {
    fn default() -> Self {
        ForgetMe {
            spec: ToolSpec {
                name: NAME.into(),
                description: "Erase everything you keep about the person you are talking with, when they ask \
                    you to forget them: their notebook, what you know about them, their DMs with you, and \
                    their lines in server conversations. They confirm on a card first; it cannot be undone. \
                    An owner may name someone else with `person`."
                    .into(),
                family: "memory".into(),
                risk: Risk::Write,
                step_kind: StepKind::Tool,
                timeout: None,
                takes_timeout_arg: false,
                scope: Scope::CompanionOnly,
                lines: ToolLines::of(
                    "I'll ask you to confirm first.",
                    &["Erasing it.", "Almost done."],
                    "It's erased.",
                    "I couldn't erase it.",
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "person": {"type": "string", "description": "Owners only: the Discord id or mention of the person to forget."}
                    },
                    "additionalProperties": false
                }),
                behaviour: Behaviour {
                    gating: Gating::Card,
                    may_always: false,
                    ..Behaviour::guest()
                },
            },
        }
    }
}

impl ForgetMe {
    /// A new instance.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The `person` argument, when given.
fn person(args: &Value) -> Option<&str> {
    args.get("person")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|p| !p.is_empty())
}

/// Why a call erases nobody (the model reads the sentence).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Nobody {
    /// The owner named someone who is not a Discord id or mention.
    #[error("'{0}' is not a Discord id or mention. Nothing was erased.")]
    NotAnId(String),
    /// The owner named no one (their own memory is hers).
    #[error(
        "You speak for her owner, whose memory is hers: name the `person` to forget. Nothing \
         was erased."
    )]
    OwnerNamedNoOne,
    /// Someone asked to forget another person.
    #[error(
        "Only the person themselves (or an owner) can ask to forget someone. Nothing was \
         erased."
    )]
    NotThemselves,
    /// The turn does not say who is asking.
    #[error("I do not know who is asking, so nothing was erased.")]
    Unknown,
}

/// Whom a call would erase, or why none.
fn whom(args: &Value, ctx: &ToolContext) -> Result<(u64, ErasedBy), Nobody> {
    let named = person(args);
    match (ctx.origin(), named) {
        (Origin::Owner | Origin::Discord { owner: true, .. }, Some(p)) => {
            match Notebook::named(p) {
                Some(Notebook::Person(id)) => Ok((id, ErasedBy::Owner)),
                _ => Err(Nobody::NotAnId(p.to_string())),
            }
        }
        (Origin::Owner | Origin::Discord { owner: true, .. }, None) => Err(Nobody::OwnerNamedNoOne),
        (Origin::Discord { user, .. }, Some(p))
            if Notebook::named(p) != Some(Notebook::Person(*user)) =>
        {
            Err(Nobody::NotThemselves)
        }
        (Origin::Discord { user: 0, .. }, _) => Err(Nobody::Unknown),
        (Origin::Discord { user, .. }, _) => Ok((*user, ErasedBy::Themselves)),
    }
}

#[async_trait]
impl Tool for ForgetMe {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn action_line(&self, args: &Value) -> String {
        match person(args) {
            Some(p) => format!("{NAME} {p}"),
            None => NAME.into(),
        }
    }

    async fn prepare(&self, args: &Value, ctx: &ToolContext) -> Prepared {
        let (user, by) = match whom(args, ctx) {
            Ok(w) => w,
            Err(why) => return Prepared::Done(ToolOutput::refused(why.to_string())),
        };
        let action = format!(
            "Erase everything Kotoba keeps about <@{user}>: their notebook, the facts about them, their \
             DMs with her, and their lines in server conversations (replaced by \"[removed at their \
             request]\"). This cannot be undone."
        );
        // The person's own card to answer; an owner's naming someone is the owners'.
        let may_answer = (by == ErasedBy::Themselves).then(|| MayAnswer {
            asker: user.to_string(),
            asker_needs: vec![ASKER_ALONE.into()],
            anyone_with: Vec::new(),
        });
        Prepared::Ask { action, may_answer }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (user, by) = match whom(&args, ctx) {
            Ok(w) => w,
            Err(why) => return ToolOutput::refused(why.to_string()),
        };
        let Some(engine) = &ctx.engine else {
            return ToolOutput::refused(
                "The engine cannot be reached here, so nothing was erased.",
            );
        };
        match engine.forget_person(user, by).await {
            Ok(counts) => ToolOutput::ok(format!(
                "Erased: {counts}. Tell them it is done; you no longer know what they told you before."
            )),
            Err(e) => ToolOutput::failed(e.to_string()),
        }
    }
}
