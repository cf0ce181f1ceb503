//! Kotoba's ground floor: what every other crate of the house shares. The wire types
//! between the engine and the surfaces, a turn's context, the configuration (paths, the
//! environment, the table of settings keys), path confinement, her face and the metrics
//! registry. It depends on no other crate of the workspace and on no surface library.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// Configuration: paths and env (`mod.rs`), the table of settings keys (`keys.rs`) and
/// of environment variables (`env.rs`), companion caps (`caps.rs`), the typed settings
/// (`settings.rs`) read live from settings.yaml (`live.rs`), MCP settings (`mcp.rs`).
pub mod config;
/// Path confinement to the workspace, shared by the gate and the file tools.
pub mod confine;
/// Her face: the one map from what she wrote to the face a finished turn shows.
pub mod face;
/// `GET /metrics`'s registry: turns, model errors, gate decisions, cards, voice rooms,
/// shards.
pub mod metrics;
/// The wire types shared by engine and surfaces: frames, rows, outcomes, cards.
pub mod protocol;
/// A session id, typed: where a conversation lives and its stored name; the one parser
/// of session names.
pub mod session;
/// A turn's context: whom it speaks for and its axes, set once and shared by its tools,
/// cards, port calls and jobs (`turn.rs`); a job's meter (`turn/meter.rs`).
pub mod turn;
