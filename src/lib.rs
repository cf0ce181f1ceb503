//! Kotoba: an AI companion that lives in Discord and runs real tools behind an
//! approval gate. The contract each part keeps is in `docs/` (engine.md, gate.md,
//! tools.md, discord.md, voice.md, surfaces.md); the layout map, one entry per module:
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]

pub use kotoba_core::{config, confine, face, metrics, protocol, session, turn};
pub use kotoba_engine::{children, engine, llm, mcp, soul, tools, trust};
/// The gate's pure policy, its own crate: reads a shell line, code or a tool call as it
/// would run and says auto-safe, ask or dangerous, and which "always" a card may offer.
pub use kotoba_gate as gate;
/// The store, its own crate: SQLite in the data folder or PostgreSQL shared by every
/// process of a bot; transcripts, the audit trail, grants, the keystore, reminders.
pub use kotoba_store as store;
pub use kotoba_voice::{speech, voice};

/// `App::build`: store, soul, model client, tools (+ MCP, the Discord port) → the engine.
pub mod app;
/// The data folder's lock and the one-sentence start-up refusals.
pub mod datadir;
/// `kotoba doctor`'s report.
pub mod doctor;
/// Surfaces: the terminal, the web page, /v1, and Discord (text, commands, voice rooms).
pub mod surfaces;
