//! MCP (Model Context Protocol) client side: the manager that connects the servers of
//! settings.yaml lazily, wraps their tools as `server__tool`, remembers which servers
//! each job activated (deferred loading, engine.md §4), and searches the catalogue.

pub mod client;
pub mod controls;
mod error;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::tools::{Tool, ToolSource};
use kotoba_core::config::mcp::{CatalogueEntry, McpServer};
use kotoba_core::config::Config;

use self::client::Connection;
pub use self::controls::register;
pub use self::error::{ConnectError, McpError};

/// The server that is always active in work mode, when configured.
pub const ALWAYS_ACTIVE: &str = "browser";

/// How a name given to activate_tools or mcp_install picks one of `names`: the exact
/// name; else the one name equal to it ignoring case; else the one name it is a
/// case-insensitive prefix of. `Err` says there were none or several.
pub fn match_name<'a>(
    query: &str,
    names: &[&'a str],
    what: &'static str,
) -> Result<&'a str, McpError> {
    let q = query.trim();
    if let Some(n) = names.iter().find(|n| **n == q) {
        return Ok(n);
    }
    let lower = q.to_lowercase();
    let same: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.to_lowercase() == lower)
        .collect();
    if same.len() == 1 {
        return Ok(same[0]);
    }
    let prefixed: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !lower.is_empty() && n.to_lowercase().starts_with(&lower))
        .collect();
    match prefixed.as_slice() {
        [one] => Ok(one),
        [] if names.is_empty() => Err(McpError::NoneAtAll {
            what,
            query: q.to_string(),
        }),
        [] => Err(McpError::NoMatch {
            what,
            query: q.to_string(),
            names: names.iter().map(|n| n.to_string()).collect(),
        }),
        many => Err(McpError::Ambiguous {
            what,
            query: q.to_string(),
            names: many.iter().map(|n| n.to_string()).collect(),
        }),
    }
}

/// The key a job's active servers are kept under: its run_id, else the session.
pub fn job_key(session: &str, run_id: Option<&str>) -> String {
    run_id.unwrap_or(session).to_string()
}

/// The MCP manager: one per engine, shared by the three MCP tools and the loop.
pub struct McpManager {
    config: Arc<Config>,
    /// Live connections by server name.
    connections: Mutex<HashMap<String, Arc<Connection>>>,
    /// One connection attempt at a time, so a server is never started twice.
    connecting: tokio::sync::Mutex<()>,
    /// Catalogue entries mcp_install connected during this process.
    installed: Mutex<Vec<McpServer>>,
    /// The servers each job activated.
    active: Mutex<HashMap<String, HashSet<String>>>,
}

impl McpManager {
    /// A manager reading its servers from `config`'s live settings.
    pub fn new(config: Arc<Config>) -> Arc<McpManager> {
        Arc::new(McpManager {
            config,
            connections: Mutex::default(),
            connecting: tokio::sync::Mutex::new(()),
            installed: Mutex::default(),
            active: Mutex::default(),
        })
    }

    /// Every server that can be connected: the configured ones (`mcp_servers`, read
    /// live), then those installed from the catalogue (a configured name wins).
    pub fn servers(&self) -> Vec<McpServer> {
        let mut servers = self.config.settings().mcp_servers;
        if let Ok(installed) = self.installed.lock() {
            for s in installed.iter() {
                if !servers.iter().any(|c| c.name == s.name) {
                    servers.push(s.clone());
                }
            }
        }
        servers
    }

    /// The catalogue (`mcp_catalogue`, read live).
    pub fn catalogue(&self) -> Vec<CatalogueEntry> {
        self.config.settings().mcp_catalogue
    }

    /// The configured or installed server `query` names (see [`match_name`]).
    pub fn resolve(&self, query: &str) -> Result<McpServer, McpError> {
        let servers = self.servers();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        let name = match_name(query, &names, "MCP server")?.to_string();
        servers
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| McpError::Gone {
                what: "MCP server",
                query: query.to_string(),
            })
    }

    /// The live connection to `name`, pruning one whose server went away.
    fn live(&self, name: &str) -> Option<Arc<Connection>> {
        let mut conns = self.connections.lock().ok()?;
        match conns.get(name) {
            Some(c) if c.is_closed() => {
                conns.remove(name);
                None
            }
            Some(c) => Some(c.clone()),
            None => None,
        }
    }

    /// Connect `server` unless it is connected already.
    pub async fn connect(&self, server: &McpServer) -> Result<Arc<Connection>, McpError> {
        if let Some(c) = self.live(&server.name) {
            return Ok(c);
        }
        let _one = self.connecting.lock().await;
        if let Some(c) = self.live(&server.name) {
            return Ok(c);
        }
        let conn = Arc::new(client::connect(server).await?);
        if let Ok(mut conns) = self.connections.lock() {
            conns.insert(server.name.clone(), conn.clone());
        }
        Ok(conn)
    }

    /// Load the server `query` names into job `job`: connect it if needed and mark it
    /// active. Returns the server's name and its tools' names.
    pub async fn activate(
        &self,
        job: &str,
        query: &str,
    ) -> Result<(String, Vec<String>), McpError> {
        let server = self.resolve(query)?;
        let conn = self.connect(&server).await?;
        if let Ok(mut active) = self.active.lock() {
            active
                .entry(job.to_string())
                .or_default()
                .insert(server.name.clone());
        }
        let names = conn.tools.iter().map(|t| t.spec().name.clone()).collect();
        Ok((server.name, names))
    }

    /// Connect the always-active server (`browser`) when it is configured and not yet
    /// connected. `Some` is the sentence when it could not be.
    pub async fn ensure_always_active(&self) -> Option<String> {
        let server = self
            .servers()
            .into_iter()
            .find(|s| s.name == ALWAYS_ACTIVE)?;
        self.connect(&server).await.err().map(|e| e.to_string())
    }

    /// The MCP tools job `job` is offered: those of the connected servers it activated,
    /// and always the browser's.
    pub fn active_tools(&self, job: &str) -> Vec<Arc<dyn Tool>> {
        let mut names: Vec<String> = self
            .active
            .lock()
            .ok()
            .and_then(|a| a.get(job).cloned())
            .unwrap_or_default()
            .into_iter()
            .collect();
        names.sort();
        names.insert(0, ALWAYS_ACTIVE.to_string());
        names.dedup();
        names
            .iter()
            .filter_map(|n| self.live(n))
            .flat_map(|c| c.tools.clone())
            .collect()
    }

    /// A connected server's tool by its exposed name (`server__tool`).
    pub fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let (server, _) = name.split_once("__")?;
        self.live(server)?
            .tools
            .iter()
            .find(|t| t.spec().name == name)
            .cloned()
    }

    /// The configured or installed server a `server__tool` name belongs to, connected
    /// or not.
    pub fn server_of(&self, name: &str) -> Option<String> {
        let (server, _) = name.split_once("__")?;
        self.servers()
            .into_iter()
            .find(|s| s.name == server)
            .map(|s| s.name)
    }

    /// The catalogue entries matching `query`'s words (in name or description), best
    /// first; every entry for an empty query.
    pub fn find(&self, query: &str) -> Vec<CatalogueEntry> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 2)
            .map(str::to_lowercase)
            .collect();
        let catalogue = self.catalogue();
        if words.is_empty() {
            return catalogue;
        }
        let mut scored: Vec<(usize, CatalogueEntry)> = catalogue
            .into_iter()
            .map(|e| {
                let hay = format!("{} {}", e.server.name, e.description).to_lowercase();
                let score = words.iter().filter(|w| hay.contains(w.as_str())).count();
                (score, e)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        scored.into_iter().map(|(_, e)| e).collect()
    }

    /// The catalogue entry `query` names (see [`match_name`]).
    pub fn catalogue_entry(&self, query: &str) -> Result<CatalogueEntry, McpError> {
        let catalogue = self.catalogue();
        let names: Vec<&str> = catalogue.iter().map(|e| e.server.name.as_str()).collect();
        let name = match_name(query, &names, "catalogue entry")?.to_string();
        catalogue
            .into_iter()
            .find(|e| e.server.name == name)
            .ok_or_else(|| McpError::Gone {
                what: "catalogue entry",
                query: query.to_string(),
            })
    }

    /// Connect a catalogue entry and keep it for this process. Returns its name and its
    /// tools' names.
    pub async fn install(&self, entry: &CatalogueEntry) -> Result<(String, Vec<String>), McpError> {
        let conn = self.connect(&entry.server).await?;
        if let Ok(mut installed) = self.installed.lock() {
            installed.retain(|s| s.name != entry.server.name);
            installed.push(entry.server.clone());
        }
        let names = conn.tools.iter().map(|t| t.spec().name.clone()).collect();
        Ok((entry.server.name.clone(), names))
    }

    /// Forget what a finished job activated.
    pub fn forget_job(&self, job: &str) {
        if let Ok(mut active) = self.active.lock() {
            active.remove(job);
        }
    }
}

/// The engine sees MCP only as a source of tools that come and go.
#[async_trait]
impl ToolSource for McpManager {
    fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        McpManager::tool(self, name)
    }

    fn server_of(&self, name: &str) -> Option<String> {
        McpManager::server_of(self, name)
    }

    fn active_tools(&self, session: &str, run_id: Option<&str>) -> Vec<Arc<dyn Tool>> {
        McpManager::active_tools(self, &job_key(session, run_id))
    }

    async fn ensure_always_active(&self) -> Option<String> {
        McpManager::ensure_always_active(self).await
    }

    fn forget_job(&self, run_id: &str) {
        McpManager::forget_job(self, run_id)
    }
}

#[cfg(test)]
pub(crate) mod tests;
