//! One connection to one MCP server over the official SDK (rmcp): a child process on
//! stdio or a streamable-HTTP endpoint. Connecting lists the server's tools and wraps
//! each as a [`Tool`] named `server__tool`; calling one returns the server's text.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::{ConnectError, McpError};
use crate::tools::Behaviour;
use crate::tools::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::config::mcp::{McpServer, McpTransport};
use kotoba_core::protocol::{Risk, StepKind};

/// How long connecting (spawn or reach, handshake, list the tools) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The budget of one call to a server's tool.
pub const MCP_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest function name the model APIs accept.
const MAX_NAME: usize = 64;
/// The variables of Kotoba's own environment a stdio server inherits; nothing else
/// (model keys, master keys) reaches it unless its `env` names it.
const PASSED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TMPDIR",
    "TERM",
    "SHELL",
    "SYSTEMROOT",
];
/// Lines of a child's stderr kept to explain a failed connection.
const STDERR_LINES: usize = 5;

/// A live connection: the running client and the tools it wrapped.
pub struct Connection {
    /// The server's name.
    pub name: String,
    service: RunningService<RoleClient, ()>,
    /// The server's tools, wrapped.
    pub tools: Vec<Arc<dyn Tool>>,
}

impl Connection {
    /// Whether the server went away (the process died or the client was closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// The exposed name of a server's tool: `server__tool`, every character outside
/// `[A-Za-z0-9_-]` replaced by `_`, at most 64 characters.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{server}__{clean}")
        .chars()
        .take(MAX_NAME)
        .collect()
}

/// The risk of a server's tool: exec (a card asks first) when the server declares it
/// destructive (`destructiveHint: true` and not `readOnlyHint: true`), else network.
pub fn risk_of(tool: &rmcp::model::Tool) -> Risk {
    let destructive = tool
        .annotations
        .as_ref()
        .is_some_and(|a| a.destructive_hint == Some(true) && a.read_only_hint != Some(true));
    if destructive {
        Risk::Exec
    } else {
        Risk::Network
    }
}

/// The text of a tool result: its text contents joined by newlines; other contents
/// named in brackets; structured content when there is nothing else.
pub fn result_text(result: &CallToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
            ContentBlock::Audio(a) => format!("[audio {}]", a.mime_type),
            ContentBlock::Resource(r) => match &r.resource {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
                other => format!("[resource {}]", resource_uri(other)),
            },
            ContentBlock::ResourceLink(l) => format!("[link {}]", l.uri),
            _ => "[content]".to_string(),
        })
        .collect();
    let text = parts.join("\n");
    if !text.trim().is_empty() {
        return text;
    }
    match &result.structured_content {
        Some(v) => v.to_string(),
        None => "(the tool returned nothing)".into(),
    }
}

fn resource_uri(r: &rmcp::model::ResourceContents) -> String {
    match r {
        rmcp::model::ResourceContents::TextResourceContents { uri, .. }
        | rmcp::model::ResourceContents::BlobResourceContents { uri, .. } => uri.clone(),
        _ => "(unnamed)".to_string(),
    }
}

/// One tool of a connected server.
pub struct McpTool {
    spec: ToolSpec,
    server: String,
    remote: String,
    peer: Peer<RoleClient>,
}

/// The output cap of a server's tools: the always-active browser's page snapshots are
/// long, so its tools read more than the default before the cut.
fn output_cap_of(server: &str) -> usize {
    const BROWSER_OUTPUT_CAP: usize = 24_000;
    if server == super::ALWAYS_ACTIVE {
        BROWSER_OUTPUT_CAP
    } else {
        crate::tools::OUTPUT_CAP
    }
}

impl McpTool {
    fn new(server: &str, tool: &rmcp::model::Tool, peer: Peer<RoleClient>) -> McpTool {
        let name = exposed_name(server, &tool.name);
        let description = tool
            .description
            .as_deref()
            .map(str::to_string)
            .or_else(|| tool.title.clone())
            .unwrap_or_else(|| format!("The '{}' tool of the MCP server '{server}'.", tool.name));
        let mut parameters = Value::Object((*tool.input_schema).clone());
        if parameters.get("type").is_none() {
            parameters["type"] = Value::String("object".into());
        }
        McpTool {
            spec: ToolSpec {
                step_kind: StepKind::for_tool(&name),
                name,
                description,
                family: format!("mcp:{server}"),
                risk: risk_of(tool),
                timeout: Some(MCP_TOOL_TIMEOUT),
                takes_timeout_arg: false,
                scope: Scope::WorkOnly,
                lines: ToolLines::of(
                    &format!("Using {server}."),
                    &[
                        &format!("Still working in {server}."),
                        &format!("{server} is taking a moment."),
                    ],
                    &format!("{server} answered."),
                    &format!("{server} stumbled."),
                ),
                parameters,
                behaviour: Behaviour {
                    output_cap: output_cap_of(server),
                    ..Behaviour::default()
                },
            },
            server: server.to_string(),
            remote: tool.name.to_string(),
            peer,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> ToolOutput {
        let arguments = match args {
            Value::Object(m) => m,
            _ => Default::default(),
        };
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = Some(arguments);
        match self.peer.call_tool(params).await {
            Ok(result) => {
                let text = result_text(&result);
                if result.is_error == Some(true) {
                    ToolOutput::failed(text)
                } else {
                    ToolOutput::ok(text)
                }
            }
            Err(e) => ToolOutput::failed(format!(
                "The MCP server '{}' did not answer '{}' ({e}). If it stopped, activate_tools('{}') \
                 reconnects it.",
                self.server, self.remote, self.server
            )),
        }
    }
}

/// Connect to `server`, shake hands and list its tools, within [`CONNECT_TIMEOUT`].
/// `Err` says what went wrong, with the server's last words when it wrote any.
pub async fn connect(server: &McpServer) -> Result<Connection, McpError> {
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let mut reader = None;
    let attempt = async {
        let service = start(server, &stderr, &mut reader).await?;
        let listed = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| ConnectError::Tools(e.to_string()))?;
        Ok::<_, ConnectError>((service, listed))
    };
    let result = match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(r) => r,
        Err(_) => Err(ConnectError::Timeout(CONNECT_TIMEOUT.as_secs())),
    };
    let (service, listed) = match result {
        Ok(ok) => ok,
        Err(why) => {
            if let Some(reader) = reader {
                // A process that died leaves its last words behind: read them out.
                let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
            }
            let said = stderr
                .lock()
                .map(|l| l.iter().cloned().collect::<Vec<_>>().join(" / "))
                .unwrap_or_default();
            return Err(McpError::Connect {
                server: server.name.clone(),
                why,
                said,
            });
        }
    };
    let peer = service.peer().clone();
    let mut seen = HashSet::new();
    let tools = listed
        .iter()
        .map(|t| McpTool::new(&server.name, t, peer.clone()))
        .filter(|t| seen.insert(t.spec.name.clone()))
        .map(|t| Arc::new(t) as Arc<dyn Tool>)
        .collect();
    Ok(Connection {
        name: server.name.clone(),
        service,
        tools,
    })
}

/// Start the transport and the client handshake.
async fn start(
    server: &McpServer,
    stderr: &Arc<Mutex<VecDeque<String>>>,
    reader: &mut Option<tokio::task::JoinHandle<()>>,
) -> Result<RunningService<RoleClient, ()>, ConnectError> {
    match &server.transport {
        McpTransport::Stdio { command, args, env } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).env_clear();
            // Only the basics of Kotoba's environment pass: keys and secrets stay home.
            for (k, v) in std::env::vars() {
                if PASSED_ENV.contains(&k.as_str()) || k.starts_with("LC_") {
                    cmd.env(k, v);
                }
            }
            for (k, v) in env {
                cmd.env(k, v);
            }
            crate::children::die_with_me(&mut cmd);
            let (transport, err) = rmcp::transport::TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| ConnectError::Start {
                    command: command.clone(),
                    error: e.to_string(),
                })?;
            if let Some(err) = err {
                let keep = stderr.clone();
                *reader = Some(tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(err).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if let Ok(mut kept) = keep.lock() {
                            kept.push_back(line);
                            while kept.len() > STDERR_LINES {
                                kept.pop_front();
                            }
                        }
                    }
                }));
            }
            ().serve(transport)
                .await
                .map_err(|e| ConnectError::Handshake(e.to_string()))
        }
        McpTransport::Http { url } => {
            // reqwest 0.13 (inside rmcp) needs a process-wide TLS provider: ring, the
            // one Kotoba's own HTTP client already uses. Installing twice is harmless.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
            ().serve(transport)
                .await
                .map_err(|e| ConnectError::HttpHandshake {
                    url: url.clone(),
                    error: e.to_string(),
                })
        }
    }
}
