//! The `shell` tool (family `terminal`, risk exec): runs one command with `bash -c` (or
//! `sh -c` where bash is absent) in the workspace through the shared process runner.
//! The approval gate and the loop's budget are applied by the engine before `run`.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::req_str;
use super::process::{find_in_path, run_process, timeout_arg, to_output};
use super::{Behaviour, Gating};
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Risk, StepKind};

/// Runs a shell command on the host.
#[derive(Debug, Clone)]
pub struct Shell {
    spec: ToolSpec,
}

impl Default for Shell {
    fn default() -> Self {
        Self::new()
    }
}

impl Shell {
    /// The tool with its spec.
    pub fn new() -> Self {
        Shell {
            spec: ToolSpec {
                name: "shell".to_string(),
                description: "Run one shell command (bash -c) in the workspace folder and get \
                    its combined stdout and stderr plus the exit code. Use 'timeout' (seconds, \
                    default 60, max 600) for long commands; on timeout the command and \
                    everything it started are killed (exit 124). No input can be typed into it."
                    .to_string(),
                family: "terminal".to_string(),
                risk: Risk::Exec,
                step_kind: StepKind::for_tool("shell"),
                timeout: None,
                takes_timeout_arg: true,
                scope: Scope::Both,
                lines: ToolLines {
                    announce: Some("Let me run that real quick.".to_string()),
                    heartbeat: vec![
                        "Still running, hang on.".to_string(),
                        "It's taking its time, but it's going.".to_string(),
                        "Still waiting on that command.".to_string(),
                    ],
                    after: Some("Okay, that ran.".to_string()),
                    fail: Some("Hm, that command didn't go through.".to_string()),
                },
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {
                            "type": "string",
                            "description": "The command line to run with bash -c."
                        },
                        "timeout": {
                            "type": "integer",
                            "description": "Seconds before it is killed (default 60, max 600).",
                            "minimum": 1,
                            "maximum": 600
                        }
                    },
                    "required": ["command"],
                    "additionalProperties": false
                }),
                behaviour: Behaviour {
                    gating: Gating::Command("command"),
                    deferrable: true,
                    ..Behaviour::default()
                },
            },
        }
    }
}

fn shell_program() -> PathBuf {
    find_in_path("bash").unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

#[async_trait]
impl Tool for Shell {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let command = match req_str(&args, "command", "shell") {
            Ok(c) => c,
            Err(refusal) => return refusal,
        };
        if command.trim().is_empty() {
            return ToolOutput::refused(
                "shell: argument 'command' is empty. Nothing ran; call again with a command.",
            );
        }
        let (secs, note) = match timeout_arg(&args, "shell") {
            Ok(t) => t,
            Err(refusal) => return refusal,
        };
        let run = run_process(
            &shell_program(),
            &["-c".to_string(), command.to_string()],
            &ctx.paths.workspace,
            &ctx.secret_env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
            Duration::from_secs(secs),
        )
        .await;
        to_output("shell", run, secs, note.as_deref())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;
    use std::time::Instant;

    use super::*;
    use crate::tools::process::tests::group_gone;
    use kotoba_core::protocol::Mode;

    /// A context whose home and workspace are the given folders.
    pub(crate) fn ctx_in(home: &Path, workspace: &Path) -> ToolContext {
        ToolContext::bare("s", Mode::Companion, home, workspace)
    }

    async fn shell(args: Value) -> (ToolOutput, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), &dir.path().join("ws"));
        (Shell::new().run(args, &ctx).await, dir)
    }

    #[tokio::test]
    async fn a_nonzero_exit_is_not_ok_and_carries_the_code() {
        let (out, _d) = shell(json!({"command": "echo bad >&2; exit 7"})).await;
        assert!(!out.is_ok());
        assert_eq!(out.exit_code(), Some(7));
        assert!(out.refusal().is_none());
        assert_eq!(out.text, "bad\n[exit code 7]");
    }

    #[tokio::test]
    async fn stdout_and_stderr_both_reach_the_model() {
        let (out, _d) = shell(json!({"command": "echo to-out; echo to-err >&2"})).await;
        assert!(out.is_ok());
        assert_eq!(out.exit_code(), Some(0));
        assert!(
            out.text.contains("to-out") && out.text.contains("to-err"),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn empty_output_says_so_with_the_exit_code() {
        let (out, _d) = shell(json!({"command": "true"})).await;
        assert_eq!(out.text, "(no output)\n[exit code 0]");
    }

    #[tokio::test]
    async fn a_command_past_its_timeout_is_killed_with_exit_124() {
        let started = Instant::now();
        let (out, _d) = shell(json!({"command": "sleep 30", "timeout": 1})).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
        assert_eq!(out.exit_code(), Some(124));
        assert!(!out.is_ok());
        assert!(
            out.text.ends_with("timed out after 1 s and was killed"),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn dropping_a_running_shell_kills_its_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let ctx = ctx_in(dir.path(), &ws);
        let tool = Shell::new();
        let args = json!({"command": "echo $$ > pgid.txt; sleep 300 & sleep 300", "timeout": 600});
        let fut = tool.run(args, &ctx);
        // Let it start and record its group, then drop the future as a cut turn does.
        let cut = tokio::time::timeout(Duration::from_millis(700), fut).await;
        assert!(cut.is_err(), "the command should still have been running");
        let pgid: i32 = std::fs::read_to_string(ws.join("pgid.txt"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(group_gone(pgid).await, "group {pgid} is still alive");
    }

    #[tokio::test]
    async fn a_missing_command_is_refused_and_nothing_runs() {
        let (out, _d) = shell(json!({})).await;
        assert!(out.refusal().is_some());
        assert!(out.text.contains("'command'"), "{}", out.text);
    }

    #[tokio::test]
    async fn a_timeout_given_as_a_string_is_refused() {
        let (out, _d) = shell(json!({"command": "echo hi", "timeout": "5"})).await;
        assert!(out.refusal().is_some());
        assert!(out.text.contains("'timeout'"), "{}", out.text);
    }

    #[tokio::test]
    async fn a_timeout_above_600_is_clamped_and_the_model_is_told() {
        let (out, _d) = shell(json!({"command": "echo hi", "timeout": 5000})).await;
        assert!(out.is_ok());
        assert!(
            out.text.starts_with("[note: timeout 5000 s"),
            "{}",
            out.text
        );
    }

    #[test]
    fn the_spec_declares_terminal_exec_and_a_timeout_argument() {
        let s = Shell::new();
        let spec = s.spec();
        assert_eq!((spec.family.as_str(), spec.risk), ("terminal", Risk::Exec));
        assert!(spec.takes_timeout_arg);
        assert_eq!(spec.step_kind, StepKind::Shell);
        assert_eq!(spec.parameters["required"], json!(["command"]));
        assert_eq!(spec.parameters["additionalProperties"], json!(false));
    }
}
