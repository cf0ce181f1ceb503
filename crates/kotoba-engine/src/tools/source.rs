//! A source of tools that come and go while the process runs (an MCP manager): the
//! registry asks it for names it does not hold, and the loop for what a job activated.

use std::sync::Arc;

use async_trait::async_trait;

use super::Tool;

/// Tools beyond the registered ones, found by name while the process runs.
#[async_trait]
pub trait ToolSource: Send + Sync {
    /// A live tool by its exposed name (`server__tool`).
    fn tool(&self, name: &str) -> Option<Arc<dyn Tool>>;

    /// The configured server a name belongs to, live or not: the door tells the model
    /// to activate it instead of calling the name unknown.
    fn server_of(&self, name: &str) -> Option<String>;

    /// The tools a job is offered now: those it activated and the always-active ones.
    fn active_tools(&self, session: &str, run_id: Option<&str>) -> Vec<Arc<dyn Tool>>;

    /// Connect what must be live before a job's first request; `Some` says why it
    /// could not be.
    async fn ensure_always_active(&self) -> Option<String>;

    /// Forget what a finished job activated, so the next starts clean.
    fn forget_job(&self, run_id: &str);
}
