//! Kotoba: an AI companion that lives in Discord and runs real tools behind an
//! approval gate. The contract each part keeps is in `docs/` (engine.md, gate.md,
//! tools.md, discord.md, voice.md, surfaces.md); the layout map, one entry per module:
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]

pub use kotoba_core::{config, confine, face, metrics, protocol, turn};
/// The gate's pure policy, its own crate: reads a shell line, code or a tool call as it
/// would run and says auto-safe, ask or dangerous, and which "always" a card may offer.
pub use kotoba_gate as gate;
/// The store, its own crate: SQLite in the data folder or PostgreSQL shared by every
/// process of a bot; transcripts, the audit trail, grants, the keystore, reminders.
pub use kotoba_store as store;

/// `App::build`: store, soul, model client, tools (+ MCP, the Discord port) → the engine.
pub mod app;
/// Children die with her: the mark, PR_SET_PDEATHSIG, leftovers ended at start-up.
pub mod children;
/// The data folder's lock and the one-sentence start-up refusals.
pub mod datadir;
/// `kotoba doctor`'s report.
pub mod doctor;
/// The engine: sessions, the loop (`turn.rs`), dispatch, budget and output caps, rows,
/// narration, cards (`approval/`), the gate in the loop (`gating.rs`), deferred runs,
/// work jobs and helpers, the transport numbers (`transport.rs`), what is under way
/// (`inflight.rs`).
pub mod engine;
/// The model client trait, its retrying client and its two wire APIs (Responses, Chat
/// Completions) over SSE.
pub mod llm;
/// MCP servers: the client manager, their settings and catalogue.
pub mod mcp;
/// The soul file (`parse.rs`) and the system prompt (`prompt.rs`).
pub mod soul;
/// Speech, with no Discord types: resampling (`audio.rs`), WAV, voice activity, endpointing,
/// the spoken filter (`filter/`), wake words, recognition (`stt/`), synthesis (`tts/`).
pub mod speech;
/// Surfaces: the terminal, the web page, /v1, and Discord (text, commands, voice rooms).
pub mod surfaces;
/// The Tool trait, the registry, the engine port, and one file per tool family.
pub mod tools;
/// Local trust: what children inherit (her secrets withheld) and her files' modes.
pub mod trust;
/// The voice room, surface-neutral: heard audio per speaker in, her voice out; Discord
/// and the page each drive it through its boundary.
pub mod voice;
