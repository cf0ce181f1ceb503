//! The integration suites, one file per area.

mod cli;
mod engine;
mod gate_cli;
mod llm;
mod v1;
mod web;
