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

/// A stop that found nothing to stop: no background job ran and no approval waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("No background job is running here and no approval is waiting, so nothing was stopped.")]
pub struct NothingStopped;

/// Why the engine did not do what a tool asked. Each variant's text is the sentence
/// the model is handed (never a secret's value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The process is shutting down: nothing new starts.
    #[error("The engine is shutting down, so no job was started.")]
    ShuttingDown,
    /// A job already runs in this conversation (one per conversation).
    #[error(
        "A background job is already running here ('{goal}', {secs} s in). Only one job runs per \
         conversation: tell them it is busy, or stop it first. Nothing new was started."
    )]
    JobRunning {
        /// The running job's goal.
        goal: String,
        /// How long it has run, in seconds.
        secs: u64,
    },
    /// Nothing ran or waited here, so a stop stopped nothing.
    #[error(transparent)]
    NothingToStop(#[from] NothingStopped),
    /// No secret is saved under that name.
    #[error(
        "There is no saved secret called '{0}'. Nothing was unlocked; ask for it with ask_secret or \
         request_credential."
    )]
    NoSuchSecret(String),
    /// The keystore failed (its master key, or the store): the sentence, never a value.
    #[error("{0}")]
    Keystore(String),
    /// An erase (forget a person) did not finish: the sentence.
    #[error("The erase did not finish ({0}); what was already erased stays erased.")]
    Erase(String),
}

/// Who asked for a person to be forgotten, as the audit trail records it (never who
/// was forgotten).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErasedBy {
    /// The person themselves (`/forget-me`, or asking her).
    Themselves,
    /// An owner (the page, or an owner's turn).
    Owner,
}

/// What tools may ask of the engine. Every call acts for the person the caller's turn
/// speaks for (`ctx.turn.person`): a job it starts, a helper, a question card.
#[async_trait]
pub trait EnginePort: Send + Sync {
    /// Start a background job in the caller's session, acting for the caller's person
    /// for its whole life.
    async fn start_work(&self, ctx: &ToolContext, goal: &str) -> Result<String, EngineError>;

    /// Stop the caller's session's job (a requested stop); `Err` when none runs.
    fn cancel_work(&self, ctx: &ToolContext) -> Result<String, EngineError>;

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
    async fn save_secret(&self, name: &str, value: &str) -> Result<(), EngineError>;

    /// Unlock a saved secret for this session's shell and code runs; returns the
    /// environment variable it is exposed as (the value itself is never returned).
    async fn unlock_secret(&self, ctx: &ToolContext, name: &str) -> Result<String, EngineError>;

    /// Erase everything kept about Discord user `user` (docs/discord.md, "Forget me");
    /// what was erased, counted, in words.
    async fn forget_person(&self, user: u64, by: ErasedBy) -> Result<String, EngineError>;
}
