//! The integration suites, one file per area.

mod browser;
mod cli;
mod engine;
mod gate_cli;
mod llm;
mod serve;
mod v1;
mod v1_python;
mod web;
