//! The integration suites, one file per area.

mod browser;
mod cli;
mod crash;
mod crash_discord;
mod crash_more;
mod discord;
mod discord_catch_up;
mod discord_reminders;
mod discord_rules;
mod discord_voice;
mod discord_voice_dave;
mod discord_voice_faults;
mod discord_voice_server;
mod engine;
mod gate_cli;
mod gate_corpus;
mod llm;
mod serve;
mod speech;
mod tools;
mod v1;
mod v1_python;
mod voice;
mod web;
mod web_settings;
mod web_tools;
