//! Kotoba: an AI companion that lives in Discord and runs real tools behind an
//! approval gate. The layout map, one line per module:
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]

/// App::build: the engine and its parts, started once per process.
pub mod app;
/// Children die with her: the mark, PR_SET_PDEATHSIG, leftovers ended at start-up.
pub mod children;
/// Configuration: paths, env caps, live settings.yaml.
pub mod config;
/// The data folder's lock and the one-sentence start-up refusals.
pub mod datadir;
/// The engine: sessions, the loop, dispatch, narration, cards.
pub mod engine;
/// The model client trait and its two wire APIs.
pub mod llm;
/// MCP servers: the client manager, their settings and catalogue.
pub mod mcp;
/// The wire types shared by engine and surfaces: frames, rows, outcomes, cards.
pub mod protocol;
/// The soul file and the system prompt.
pub mod soul;
/// Speech: recognition, synthesis, voice activity, endpointing and resampling.
pub mod speech;
/// SQLite: transcripts (+FTS5); audit, grants, keystore, cron later.
pub mod store;
/// Surfaces: terminal, the web page and /v1; Discord next.
pub mod surfaces;
/// The Tool trait, registry, and one file per tool family.
pub mod tools;
