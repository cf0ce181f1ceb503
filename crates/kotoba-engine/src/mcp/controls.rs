//! The mcp family (work only): mcp_find (180 s) searches the catalogue, mcp_install
//! (150 s, exec: a card shows the command first) connects a catalogue entry, and
//! activate_tools (150 s: it may connect) loads a server's tools into the job.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{job_key, McpManager};
use crate::tools::args::req_str;
use crate::tools::{
    Behaviour, Registry, Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec,
};
use kotoba_core::protocol::{Risk, StepKind};

/// Register mcp_find, mcp_install and activate_tools, and hand the registry the
/// manager so the engine can find `server__tool` names and offer active servers.
pub fn register(registry: &mut Registry, manager: Arc<McpManager>) {
    registry.register(Arc::new(McpFind::new(manager.clone())));
    registry.register(Arc::new(McpInstall::new(manager.clone())));
    registry.register(Arc::new(ActivateTools::new(manager.clone())));
    registry.set_source(manager);
}

fn spec(
    name: &str,
    description: &str,
    risk: Risk,
    timeout: u64,
    lines: ToolLines,
    parameters: Value,
) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        family: "mcp".into(),
        risk,
        step_kind: StepKind::for_tool(name),
        timeout: Some(Duration::from_secs(timeout)),
        takes_timeout_arg: false,
        scope: Scope::WorkOnly,
        lines,
        parameters,
        behaviour: Behaviour::default(),
    }
}

fn one_string(key: &str, what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {key: {"type": "string", "description": what}},
        "required": [key],
        "additionalProperties": false
    })
}

/// `mcp_find`: search the configured catalogue by words.
pub struct McpFind {
    spec: ToolSpec,
    manager: Arc<McpManager>,
}

impl McpFind {
    /// The tool over `manager`.
    pub fn new(manager: Arc<McpManager>) -> Self {
        McpFind {
            spec: spec(
                "mcp_find",
                "Search the catalogue of MCP servers that can be installed for a capability this \
                 job needs (for example 'browser', 'github', 'database'). Install one with mcp_install.",
                Risk::Read,
                180,
                ToolLines::of(
                    "Let me look for a tool for that.",
                    &["Still looking through the catalogue.", "Still searching."],
                    "Found the catalogue entries.",
                    "The catalogue search didn't work.",
                ),
                one_string("query", "Words describing the capability."),
            ),
            manager,
        }
    }
}

#[async_trait]
impl Tool for McpFind {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> ToolOutput {
        let query = match req_str(&args, "query", "mcp_find") {
            Ok(q) => q,
            Err(refused) => return refused,
        };
        let catalogue = self.manager.catalogue();
        if catalogue.is_empty() {
            return ToolOutput::ok(
                "The MCP catalogue is empty: the mcp_catalogue setting lists no servers, so there is \
                 nothing to install.",
            );
        }
        let found = self.manager.find(query);
        if found.is_empty() {
            let names: Vec<&str> = catalogue.iter().map(|e| e.server.name.as_str()).collect();
            return ToolOutput::ok(format!(
                "Nothing in the MCP catalogue matches '{query}'. It has: {}.",
                names.join(", ")
            ));
        }
        let connectable = self.manager.servers();
        let lines: Vec<String> = found
            .iter()
            .map(|e| {
                let state = if connectable.iter().any(|s| s.name == e.server.name) {
                    " (already set up: use activate_tools)"
                } else {
                    ""
                };
                format!(
                    "- {}: {} [runs: {}]{state}",
                    e.server.name,
                    e.description,
                    e.server.transport.describe()
                )
            })
            .collect();
        ToolOutput::ok(format!(
            "MCP catalogue entries for '{query}':\n{}\nInstall one with mcp_install(name).",
            lines.join("\n")
        ))
    }
}

/// `mcp_install`: connect a catalogue entry, after a person approved the command.
pub struct McpInstall {
    spec: ToolSpec,
    manager: Arc<McpManager>,
}

impl McpInstall {
    /// The tool over `manager`.
    pub fn new(manager: Arc<McpManager>) -> Self {
        let mut tool = McpInstall {
            spec: spec(
                "mcp_install",
                "Install an MCP server from the catalogue by its name (find it with mcp_find). A \
                 person approves the command first. Afterwards load its tools with activate_tools.",
                Risk::Exec,
                150,
                ToolLines::of(
                    "I'll set up that tool.",
                    &["Still setting it up.", "The install is taking a moment."],
                    "It's installed.",
                    "The install didn't work.",
                ),
                one_string("name", "The catalogue entry's name."),
            ),
            manager,
        };
        // Installing third-party code asks every time: a saved "always" would let any
        // later install run unseen.
        tool.spec.behaviour.may_always = false;
        tool
    }
}

#[async_trait]
impl Tool for McpInstall {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The card's line: the entry and exactly what will run (or be reached).
    fn action_line(&self, args: &Value) -> String {
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        match self.manager.catalogue_entry(name) {
            Ok(e) => format!(
                "mcp_install {}: {}",
                e.server.name,
                e.server.transport.describe()
            ),
            Err(_) => format!("mcp_install {name} (not in the catalogue: nothing would run)"),
        }
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> ToolOutput {
        let name = match req_str(&args, "name", "mcp_install") {
            Ok(n) => n,
            Err(refused) => return refused,
        };
        let entry = match self.manager.catalogue_entry(name) {
            Ok(e) => e,
            Err(why) => {
                return ToolOutput::refused(format!("mcp_install: {why} Nothing was installed."))
            }
        };
        match self.manager.install(&entry).await {
            Ok((server, tools)) => ToolOutput::ok(format!(
                "The MCP server '{server}' is installed and connected with {} tools ({}). Call \
                 activate_tools('{server}') to load them into this job.",
                tools.len(),
                tools.join(", ")
            )),
            Err(sentence) => ToolOutput::not_started(format!("{sentence} Nothing was installed.")),
        }
    }
}

/// `activate_tools`: load a server's tools into this job.
pub struct ActivateTools {
    spec: ToolSpec,
    manager: Arc<McpManager>,
}

impl ActivateTools {
    /// The tool over `manager`.
    pub fn new(manager: Arc<McpManager>) -> Self {
        ActivateTools {
            spec: spec(
                "activate_tools",
                "Load the tools of a connected or configured MCP server into this job (its tools \
                 are offered from your next step on, named server__tool). Give the server's name.",
                Risk::Read,
                150,
                ToolLines::of(
                    "Let me load those tools.",
                    &["Still connecting.", "Still loading the tools."],
                    "The tools are loaded.",
                    "Those tools wouldn't load.",
                ),
                one_string("server", "The MCP server's name."),
            ),
            manager,
        }
    }
}

#[async_trait]
impl Tool for ActivateTools {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn action_line(&self, args: &Value) -> String {
        let server = args.get("server").and_then(Value::as_str).unwrap_or("");
        format!("activate_tools {server}").trim_end().to_string()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let server = match req_str(&args, "server", "activate_tools") {
            Ok(s) => s,
            Err(refused) => return refused,
        };
        if let Err(why) = self.manager.resolve(server) {
            return ToolOutput::refused(format!("activate_tools: {why} Nothing was loaded."));
        }
        let job = job_key(ctx.session(), ctx.turn.run_id.as_deref());
        match self.manager.activate(&job, server).await {
            Ok((name, tools)) if tools.is_empty() => ToolOutput::ok(format!(
                "The MCP server '{name}' is active in this job, but it offers no tools."
            )),
            Ok((name, tools)) => ToolOutput::ok(format!(
                "The MCP server '{name}' is active in this job. Its {} tools are yours from the next \
                 step: {}.",
                tools.len(),
                tools.join(", ")
            )),
            Err(sentence) => ToolOutput::failed(format!(
                "{sentence} Its tools were NOT loaded; carry on without them or try another way."
            )),
        }
    }
}
