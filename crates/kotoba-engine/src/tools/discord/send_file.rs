//! discord_send_file: send a file from the workspace to this conversation's channel,
//! refused with the reason outside the workspace or past Discord's size limit here.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::{spec, PortSlot};
use crate::tools::args::{opt_str, req_str};
use crate::tools::{Availability, Behaviour, Tool, ToolContext, ToolOutput, ToolSpec};
use kotoba_core::confine::resolve_in_workspace;
use kotoba_core::protocol::{Origin, Risk};

/// discord_send_file.
pub struct SendFile {
    spec: ToolSpec,
    port: PortSlot,
}

impl SendFile {
    /// The tool, sending through `port`.
    pub fn new(port: PortSlot) -> Self {
        let params = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the workspace."},
                "message": {"type": "string", "description": "Words to send with it."}
            },
            "required": ["path"],
            "additionalProperties": false
        });
        let mut s = spec(
            "discord_send_file",
            "Send a file from the workspace to this Discord channel.",
            params,
            [
                "Let me send that.",
                "Still uploading…",
                "Sent.",
                "I couldn't send the file.",
            ],
        );
        s.risk = Risk::Write;
        // It reads the owner's workspace: never offered to a guest.
        s.behaviour = Behaviour::default();
        SendFile { spec: s, port }
    }
}

#[async_trait]
impl Tool for SendFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn available(&self, ctx: &Availability<'_>) -> bool {
        super::offered_here(&self.port, ctx)
    }

    fn action_line(&self, args: &Value) -> String {
        let path = args.get("path").and_then(Value::as_str).unwrap_or("");
        format!("discord_send_file {path}").trim_end().to_string()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let name = "discord_send_file";
        let (path, message) = match (
            req_str(&args, "path", name),
            opt_str(&args, "message", name),
        ) {
            (Ok(p), Ok(m)) => (p, m),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        if !matches!(ctx.origin(), Origin::Discord { .. }) {
            return ToolOutput::refused("discord_send_file sends to a Discord channel, and this conversation is not on Discord. Nothing was sent.");
        }
        let Some(port) = self.port.get() else {
            return ToolOutput::refused("Discord is not connected, so nothing was sent.");
        };
        let real = match resolve_in_workspace(&ctx.paths.workspace, path) {
            Ok(p) => p,
            Err(why) => return ToolOutput::refused(format!("{why}, so nothing was sent.")),
        };
        let meta = match std::fs::metadata(&real) {
            Ok(m) if m.is_file() => m,
            Ok(_) => {
                return ToolOutput::refused(format!("'{path}' is not a file, so nothing was sent."))
            }
            Err(e) => {
                return ToolOutput::refused(format!(
                    "'{path}' cannot be read ({e}), so nothing was sent."
                ))
            }
        };
        let limit = port.file_limit(&ctx.turn);
        if meta.len() > limit {
            return ToolOutput::refused(format!(
                "'{path}' is {} bytes, past Discord's limit of {limit} bytes for a file here, so nothing was sent.",
                meta.len()
            ));
        }
        let bytes = match std::fs::read(&real) {
            Ok(b) => b,
            Err(e) => {
                return ToolOutput::refused(format!(
                    "'{path}' cannot be read ({e}), so nothing was sent."
                ))
            }
        };
        let file_name = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into());
        match port.send_file(&ctx.turn, &file_name, bytes, message).await {
            Ok(said) => ToolOutput::ok(said),
            Err(why) => ToolOutput::failed(why.to_string()),
        }
    }
}
