//! The integration suites, one file per area.

mod cli;
mod discord;
mod engine;
mod gate_cli;
mod llm;
mod tools;
mod web;
