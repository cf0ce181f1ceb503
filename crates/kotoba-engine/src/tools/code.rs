//! The `execute_code` tool (family `code`, risk exec): writes Python to a file under the
//! workspace's `.kotoba-run/` folder and runs it with `python3` through the shared
//! process runner. The approval gate and the loop's budget are applied by the engine.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use rand::Rng;
use serde_json::{json, Value};

use super::args::req_str;
use super::process::{find_in_path, run_process, timeout_arg, to_output};
use super::{Behaviour, Gating};
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Risk, StepKind};

/// The folder inside the workspace where code files are written before they run.
pub const RUN_DIR: &str = ".kotoba-run";

/// Runs a Python snippet on the host.
#[derive(Debug, Clone)]
pub struct ExecuteCode {
    spec: ToolSpec,
    /// A fixed interpreter; `None` looks `python3` up on `PATH` at each run.
    interpreter: Option<PathBuf>,
}

impl Default for ExecuteCode {
    fn default() -> Self {
        Self::new()
    }
}

impl ExecuteCode {
    /// The tool, finding `python3` on `PATH` when it runs.
    pub fn new() -> Self {
        ExecuteCode {
            spec: spec(),
            interpreter: None,
        }
    }

    /// The tool with a fixed interpreter path (tests, or a configured Python).
    pub fn with_interpreter(interpreter: PathBuf) -> Self {
        ExecuteCode {
            spec: spec(),
            interpreter: Some(interpreter),
        }
    }

    fn python(&self) -> Option<PathBuf> {
        match &self.interpreter {
            Some(p) => p.is_file().then(|| p.clone()),
            None => find_in_path("python3"),
        }
    }
}

fn spec() -> ToolSpec {
    ToolSpec {
        name: "execute_code".to_string(),
        description: "Run a Python 3 program in the workspace folder and get what it prints \
            (stdout and stderr together) plus the exit code. Print what you want to see. Use \
            'timeout' (seconds, default 60, max 600) for long work; on timeout it is killed \
            (exit 124). It cannot read input."
            .to_string(),
        family: "code".to_string(),
        risk: Risk::Exec,
        step_kind: StepKind::for_tool("execute_code"),
        timeout: None,
        takes_timeout_arg: true,
        scope: Scope::Both,
        lines: ToolLines {
            announce: Some("Let me work that out in a bit of code.".to_string()),
            heartbeat: vec![
                "The code's still running.".to_string(),
                "Still crunching, nearly there I hope.".to_string(),
            ],
            after: Some("Okay, the code ran.".to_string()),
            fail: Some("Ugh, the code tripped over something.".to_string()),
        },
        parameters: json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The whole Python 3 program to run."
                },
                "timeout": {
                    "type": "integer",
                    "description": "Seconds before it is killed (default 60, max 600).",
                    "minimum": 1,
                    "maximum": 600
                }
            },
            "required": ["code"],
            "additionalProperties": false
        }),
        behaviour: Behaviour {
            gating: Gating::Code("code"),
            deferrable: true,
            ..Behaviour::default()
        },
    }
}

#[async_trait]
impl Tool for ExecuteCode {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let code = match req_str(&args, "code", "execute_code") {
            Ok(c) => c,
            Err(refusal) => return refusal,
        };
        if code.trim().is_empty() {
            return ToolOutput::refused(
                "execute_code: argument 'code' is empty. Nothing ran; call again with a program.",
            );
        }
        let (secs, note) = match timeout_arg(&args, "execute_code") {
            Ok(t) => t,
            Err(refusal) => return refusal,
        };
        let Some(python) = self.python() else {
            return ToolOutput::not_started(
                "execute_code: python3 was not found on this machine, so the code could not \
                 run. Nothing ran; use the shell tool or answer without running code.",
            );
        };
        let dir = ctx.paths.workspace.join(RUN_DIR);
        if let Err(e) = tokio::fs::create_dir_all(&dir).await {
            return ToolOutput::not_started(format!(
                "execute_code: could not create {}: {e}. Nothing ran.",
                dir.display()
            ));
        }
        let file = dir.join(format!("run-{:016x}.py", rand::thread_rng().gen::<u64>()));
        if let Err(e) = tokio::fs::write(&file, code).await {
            return ToolOutput::not_started(format!(
                "execute_code: could not write the code to {}: {e}. Nothing ran.",
                file.display()
            ));
        }
        // Remove the file however the run ends, including a dropped future.
        let _cleanup = RemoveOnDrop(file.clone());
        let run = run_process(
            &python,
            &[file.to_string_lossy().into_owned()],
            &ctx.paths.workspace,
            &std::iter::once(("PYTHONUNBUFFERED", "1"))
                .chain(ctx.secret_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .collect::<Vec<_>>(),
            Duration::from_secs(secs),
        )
        .await;
        to_output("execute_code", run, secs, note.as_deref())
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.0) {
            tracing::debug!(path = %self.0.display(), error = %e, "could not remove a code file");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::shell::tests::ctx_in;

    #[tokio::test]
    async fn code_prints_and_its_exit_status_is_returned() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), &dir.path().join("ws"));
        let out = ExecuteCode::new()
            .run(json!({"code": "import sys\nprint(6*7)\nsys.exit(3)"}), &ctx)
            .await;
        assert_eq!(out.exit_code(), Some(3));
        assert!(!out.is_ok());
        assert_eq!(out.text, "42\n[exit code 3]");
        let ok = ExecuteCode::new()
            .run(json!({"code": "print('hi')"}), &ctx)
            .await;
        assert!(ok.is_ok());
        assert_eq!((ok.exit_code(), ok.text.as_str()), (Some(0), "hi"));
    }

    #[tokio::test]
    async fn the_code_file_is_written_under_kotoba_run_and_removed_after() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let ctx = ctx_in(dir.path(), &ws);
        let out = ExecuteCode::new()
            .run(json!({"code": "print(__file__)"}), &ctx)
            .await;
        let ran = PathBuf::from(out.text.trim());
        assert!(ran.starts_with(ws.join(RUN_DIR)), "{}", ran.display());
        assert!(!ran.exists());
    }

    #[tokio::test]
    async fn a_traceback_on_stderr_reaches_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), &dir.path().join("ws"));
        let out = ExecuteCode::new().run(json!({"code": "1/0"}), &ctx).await;
        assert_eq!(out.exit_code(), Some(1));
        assert!(out.text.contains("ZeroDivisionError"), "{}", out.text);
    }

    #[tokio::test]
    async fn a_missing_python_is_a_failed_sentence_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), &dir.path().join("ws"));
        let tool = ExecuteCode::with_interpreter(dir.path().join("no-python-here"));
        let out = tool.run(json!({"code": "print(1)"}), &ctx).await;
        assert!(!out.is_ok());
        assert!(out.refusal().is_none() && out.exit_code().is_none());
        assert!(out.text.contains("python3 was not found"), "{}", out.text);
    }

    #[tokio::test]
    async fn missing_code_or_a_string_timeout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), &dir.path().join("ws"));
        let out = ExecuteCode::new().run(json!({"timeout": 5}), &ctx).await;
        assert!(out.refusal().is_some());
        let out = ExecuteCode::new()
            .run(json!({"code": "print(1)", "timeout": "5"}), &ctx)
            .await;
        assert!(out.refusal().is_some());
    }

    #[test]
    fn the_spec_declares_code_exec_and_a_timeout_argument() {
        let t = ExecuteCode::new();
        assert_eq!(
            (t.spec().family.as_str(), t.spec().risk),
            ("code", Risk::Exec)
        );
        assert_eq!(t.spec().step_kind, StepKind::Code);
        assert!(t.spec().takes_timeout_arg);
    }
}
