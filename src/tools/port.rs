//! The engine port: what a tool may ask of the engine that runs it (start or cancel a
//! background job, run helpers, ask the person a question). Tools never hold the
//! engine itself; the engine implements this trait and hands it down in ToolContext.

use std::time::Duration;

use async_trait::async_trait;

use super::ToolContext;

/// How a question to the person ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// They answered.
    Answered(String),
    /// They chose to skip it (Skip on Discord, an empty line at the terminal).
    Skipped,
    /// Nobody could draw the card: refused before asking.
    Unreachable,
    /// The card expired unanswered.
    Expired,
    /// The card went away (the turn or job was cut).
    Dismissed,
}

/// One helper's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperResult {
    /// What it was asked.
    pub goal: String,
    /// Whether it finished its task (a failed helper is never reported as a success).
    pub ok: bool,
    /// What it said.
    pub summary: String,
}

/// What tools may ask of the engine.
#[async_trait]
pub trait EnginePort: Send + Sync {
    /// Start a background job in the caller's session; `Err` is the sentence to relay.
    fn start_work(&self, ctx: &ToolContext, goal: &str) -> Result<String, String>;

    /// Stop the caller's session's job (a requested stop); `Err` when none runs.
    fn cancel_work(&self, ctx: &ToolContext) -> Result<String, String>;

    /// Run helpers (depth 1) for these goals, at most two at once, and wait for all.
    async fn delegate(&self, ctx: &ToolContext, goals: Vec<String>) -> Vec<HelperResult>;

    /// Put a question card from `tool` on screen and wait up to `window` for an answer;
    /// a `secret` card's answer is masked on every surface as it is typed.
    async fn ask_person(
        &self,
        ctx: &ToolContext,
        tool: &str,
        question: &str,
        window: Duration,
        secret: bool,
    ) -> Asked;

    /// Save a secret in the encrypted keystore; `Err` is a sentence.
    fn save_secret(&self, name: &str, value: &str) -> Result<(), String>;

    /// Unlock a saved secret for this session's shell and code runs; returns the
    /// environment variable it is exposed as (the value itself is never returned).
    fn unlock_secret(&self, ctx: &ToolContext, name: &str) -> Result<String, String>;
}
