//! Kotoba's engine floor: the turn loop and everything a turn reaches without a surface.
//! The engine (sessions, the loop, dispatch, cards, jobs), the tools and their registry,
//! MCP servers as a tool source, the model client, the soul and its prompt, local trust
//! and the children her tools start. It stands on core, the gate and the store, and never
//! imports serenity, songbird or axum.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// Children die with her: the mark, PR_SET_PDEATHSIG, leftovers ended at start-up.
pub mod children;
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
/// The Tool trait, the registry, the engine port, and one file per tool family.
pub mod tools;
/// Local trust: what children inherit (her secrets withheld) and her files' modes.
pub mod trust;
