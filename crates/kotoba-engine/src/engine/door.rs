//! The door of a turn: everything it will read, resolved once when it starts — one
//! settings snapshot, whom it speaks for and their access, who may answer its cards,
//! the tools offered to them, what the tool families note, its caps and paths. Nothing
//! later in the turn re-reads the settings file or re-derives the person (docs/engine.md,
//! "The turn as a state machine").

use std::sync::Arc;

use crate::llm::{FunctionSpec, Item, ModelRequest};
use crate::soul::build_system_prompt;
use crate::tools::{Availability, Scope, Tool, ToolPaths, ToolSpec};
use kotoba_core::config::Settings;
use kotoba_core::protocol::{Answerers, Mode, Person};
use kotoba_core::turn::{Access, TurnContext};

use super::budget::Caps;
use super::Engine;

/// A turn resolved at its door.
pub(crate) struct Door {
    /// Whom it speaks for and its axes (the person and their access among them).
    pub ctx: Arc<TurnContext>,
    /// The settings as they were when it started, shared by every call and request.
    pub settings: Arc<Settings>,
    /// Who may answer its host cards.
    pub answerers: Answerers,
    /// The tools offered to its person (a guest's: the allow-list and their roles'
    /// families; a helper's: the ones helpers may use).
    pub offered: Vec<Arc<dyn Tool>>,
    /// What the tool families note for this turn (the people in it).
    pub notes: Vec<String>,
    /// Its caps (companion or work).
    pub caps: Caps,
    /// Data folder and workspace, shared by every call.
    pub paths: Arc<ToolPaths>,
}

impl Door {
    /// Resolve the turn `ctx` over `items` (its history and the new line).
    pub(crate) async fn resolve(engine: &Engine, ctx: Arc<TurnContext>, items: &[Item]) -> Door {
        let settings = Arc::new(engine.config.settings());
        let caps = match ctx.mode {
            Mode::Companion => Caps::companion(&engine.config.caps),
            Mode::Work => Caps::work(&settings, &engine.config.caps),
        };
        let paths = Arc::new(ToolPaths {
            home: engine.config.paths.home.clone(),
            workspace: engine.config.workspace(&settings),
        });
        let recent = recent_lines(items);
        let mut offered = offered_tools(engine, &settings, &ctx, &recent);
        if ctx.depth >= 1 {
            offered.retain(|t| t.spec().behaviour.for_helpers); // a helper starts no helper
        }
        if ctx.access() == Access::Guest {
            offered.retain(|t| offered_to_guest(&ctx.person, t.spec()));
        }
        let notes = engine.tools.notes(&ctx, &engine.store).await;
        let answerers = engine.answerers_in(&settings, &ctx.person);
        Door {
            ctx,
            settings,
            answerers,
            offered,
            notes,
            caps,
            paths,
        }
    }

    /// The model request over `items` offering `tools`.
    pub(crate) fn request(
        &self,
        engine: &Engine,
        tools: &[Arc<dyn Tool>],
        items: Arc<Vec<Item>>,
    ) -> ModelRequest {
        let specs: Vec<&ToolSpec> = tools.iter().map(|t| t.spec()).collect();
        let mut system =
            build_system_prompt(&engine.soul, self.ctx.register, self.ctx.mode, &specs);
        for note in &self.notes {
            system.push_str("\n\n");
            system.push_str(note);
        }
        let tools = specs
            .iter()
            .map(|s| FunctionSpec {
                name: s.name.clone(),
                description: s.description.clone(),
                parameters: s.parameters.clone(),
            })
            .collect();
        ModelRequest {
            system,
            items,
            tools,
            settings: Some(self.settings.clone()),
        }
    }

    /// The first request a companion turn makes (what [`super::Engine::speculate`]
    /// asks ahead of the turn).
    pub(crate) fn first_request(&self, engine: &Engine, items: Arc<Vec<Item>>) -> ModelRequest {
        self.request(engine, &self.offered, items)
    }
}

/// The person's latest lines in `items`, newest first (at most 3).
fn recent_lines(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .rev()
        .filter_map(|i| match i {
            Item::User { text } => Some(text.clone()),
            _ => None,
        })
        .take(3)
        .collect()
}

/// The guest allow-list: the tools that declare a guest may be offered them (web,
/// skills, Discord reads, clarify). Host tools (shell, code, files, credentials, the
/// owner's memory, MCP) never declare it.
pub fn guest_may_use(spec: &ToolSpec) -> bool {
    spec.behaviour.guest
}

/// What a guest's turn is offered: the guest allow-list, and the families their roles
/// grant (`discord.role_toolsets`, [`Person::granted`]), whose every call asks an owner
/// or approver ([`asks_every_call`]).
pub(crate) fn offered_to_guest(person: &Person, spec: &ToolSpec) -> bool {
    guest_may_use(spec) || person.granted.contains(&spec.family)
}

/// Whether each call of this tool in this turn asks on a card, whatever its risk and
/// whatever grants, allowlist or auto-safe rules say, with no "always": a guest's call
/// of a tool beyond the guest list (offered to them only by a role's tool set).
pub(crate) fn asks_every_call(ctx: &TurnContext, spec: &ToolSpec) -> bool {
    ctx.access() == Access::Guest && !guest_may_use(spec)
}

/// The tools offered this turn: registered, in scope for the mode, not switched off,
/// and passing their own availability check. No keyword router.
fn offered_tools(
    engine: &Engine,
    settings: &Settings,
    ctx: &TurnContext,
    recent: &[String],
) -> Vec<Arc<dyn Tool>> {
    let mode = ctx.mode;
    let avail = Availability {
        mode,
        recent_user_messages: recent,
        settings,
        origin: ctx.origin(),
    };
    engine
        .tools
        .all()
        .iter()
        .filter(|t| {
            let spec = t.spec();
            let in_scope = matches!(
                (spec.scope, mode),
                (Scope::Both, _)
                    | (Scope::CompanionOnly, Mode::Companion)
                    | (Scope::WorkOnly, Mode::Work)
            );
            in_scope && !settings.disabled_toolsets.contains(&spec.family) && t.available(&avail)
        })
        .cloned()
        .collect()
}
