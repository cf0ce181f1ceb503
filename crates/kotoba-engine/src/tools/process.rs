//! The one process runner behind `shell` and `execute_code`: spawns a program in its own
//! process group inside the workspace, captures stdout and stderr in arrival order,
//! kills the whole group on timeout, after exit, and when the caller's future is dropped.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::Command;

use super::args::opt_u64;
use super::ToolOutput;

/// The timeout a process tool uses when the model names none, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The most a process tool may ask for, in seconds (longer requests are clamped).
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// The exit code reported when a process was killed for running past its timeout.
pub const TIMEOUT_EXIT_CODE: i32 = 124;
/// How much combined output is kept in memory; the rest is drained and dropped so a
/// runaway printer can neither deadlock nor exhaust memory (the loop shows far less).
pub const MAX_CAPTURE_BYTES: usize = 4 * 1024 * 1024;
/// How long the readers may still drain the pipes after the group was killed, in case
/// something outside the group holds them open.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// Exit code: the process's own, 128 + signal for a signal death, 124 on timeout.
    pub exit_code: i32,
    /// Stdout and stderr combined, line by line in the order they arrived.
    pub output: String,
    /// True when the timeout fired and the group was killed.
    pub timed_out: bool,
    /// True when output past [`MAX_CAPTURE_BYTES`] was dropped.
    pub truncated: bool,
}

/// Kills a whole process group with SIGKILL when dropped, so a cut turn (its future
/// dropped) leaves nothing running.
#[derive(Debug)]
pub struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    /// Guard the group led by process `pid`.
    pub fn new(pid: u32) -> Self {
        let pgid = i32::try_from(pid).ok().map(Pid::from_raw);
        GroupGuard { pgid }
    }

    /// Kill every process still in the group now (errors mean it is already gone).
    pub fn kill_now(&self) {
        if let Some(pgid) = self.pgid {
            if let Err(e) = killpg(pgid, Signal::SIGKILL) {
                tracing::trace!(pgid = pgid.as_raw(), error = %e, "process group already gone");
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Find an executable called `name` on `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// Read the `timeout` argument of a process tool: default 60 s, at least 1 s, above 600 s
/// clamped to 600 s with a note for the model. A non-number is a refusal.
pub fn timeout_arg(args: &Value, tool: &str) -> Result<(u64, Option<String>), ToolOutput> {
    match opt_u64(args, "timeout", tool)? {
        None => Ok((DEFAULT_TIMEOUT_SECS, None)),
        Some(0) => Err(ToolOutput::refused(format!(
            "{tool}: argument 'timeout' must be at least 1 second. Nothing ran."
        ))),
        Some(t) if t > MAX_TIMEOUT_SECS => Ok((
            MAX_TIMEOUT_SECS,
            Some(format!(
                "[note: timeout {t} s is above the {MAX_TIMEOUT_SECS} s maximum; \
                 it ran with {MAX_TIMEOUT_SECS} s]"
            )),
        )),
        Some(t) => Ok((t, None)),
    }
}

/// Why a process could not be started: nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The working folder could not be made.
    #[error("could not create the workspace folder {}: {error}", .folder.display())]
    Folder {
        /// The folder.
        folder: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The program could not be started.
    #[error("could not start {}: {error}", .program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The program ended before it could be watched.
    #[error("{} exited before it could be watched", .0.display())]
    Vanished(PathBuf),
    /// Its output could not be captured.
    #[error("the process's output pipes were not available")]
    NoPipes,
}

/// Run `program args…` in `cwd` (created if missing) in its own process group with stdin
/// closed, for at most `timeout`. `Err` says why it could not start (nothing ran).
/// Whatever is left in the group after the main process exits is killed.
pub async fn run_process(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<RunResult, StartError> {
    tokio::fs::create_dir_all(cwd)
        .await
        .map_err(|error| StartError::Folder {
            folder: cwd.to_path_buf(),
            error,
        })?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // It dies with Kotoba, however she dies (docs/tools.md).
    crate::children::die_with_me(&mut cmd);
    let mut child = cmd.spawn().map_err(|error| StartError::Spawn {
        program: program.to_path_buf(),
        error,
    })?;
    let guard = match child.id() {
        Some(pid) => GroupGuard::new(pid),
        None => return Err(StartError::Vanished(program.to_path_buf())),
    };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(StartError::NoPipes);
    };

    let sink = Sink::default();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let waiter = async {
        let outcome = match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => Waited::Exited(status),
            Err(_) => {
                guard.kill_now();
                // Reap the killed leader so it leaves no zombie.
                let _ = child.wait().await;
                Waited::TimedOut
            }
        };
        // No stray children: whatever the main process left behind goes with it.
        guard.kill_now();
        let _ = done_tx.send(());
        outcome
    };
    let readers = async {
        tokio::select! {
            _ = async { tokio::join!(pump(stdout, &sink), pump(stderr, &sink)) } => {}
            _ = async {
                if done_rx.await.is_ok() {
                    tokio::time::sleep(DRAIN_GRACE).await;
                } else {
                    std::future::pending::<()>().await;
                }
            } => {
                tracing::warn!("output pipes stayed open after the process group was killed");
            }
        }
    };
    let (waited, ()) = tokio::join!(waiter, readers);
    drop(guard);

    let (output, truncated) = sink.finish();
    let (exit_code, timed_out) = match waited {
        Waited::TimedOut => (TIMEOUT_EXIT_CODE, true),
        Waited::Exited(Ok(status)) => (exit_code_of(status), false),
        Waited::Exited(Err(e)) => {
            tracing::warn!(error = %e, "waiting on the process failed");
            (-1, false)
        }
    };
    Ok(RunResult {
        exit_code,
        output,
        timed_out,
        truncated,
    })
}

/// The text a process tool hands the model: a note if any, the output (or "(no output)"),
/// then the exit code when it is not 0, ending with the timeout sentence on a kill.
pub fn render(result: &RunResult, timeout_secs: u64, note: Option<&str>) -> String {
    let mut text = String::new();
    if let Some(note) = note {
        text.push_str(note);
        text.push('\n');
    }
    let body = result.output.trim_end_matches('\n');
    if body.trim().is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(body);
    }
    if result.truncated {
        text.push_str(&format!(
            "\n[output past {MAX_CAPTURE_BYTES} bytes was dropped]"
        ));
    }
    if result.timed_out {
        text.push_str(&format!(
            "\n[exit code {TIMEOUT_EXIT_CODE}] timed out after {timeout_secs} s and was killed"
        ));
    } else if result.exit_code != 0 || body.trim().is_empty() {
        text.push_str(&format!("\n[exit code {}]", result.exit_code));
    }
    text
}

/// Turn a run into the tool's output, or a failure sentence when it never started.
pub fn to_output(
    tool: &str,
    run: Result<RunResult, StartError>,
    timeout_secs: u64,
    note: Option<&str>,
) -> ToolOutput {
    match run {
        Ok(result) => ToolOutput::exited(result.exit_code, render(&result, timeout_secs, note)),
        Err(why) => ToolOutput::not_started(format!("{tool}: {why}. Nothing ran.")),
    }
}

enum Waited {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
}

fn exit_code_of(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Where both pipes write, a line at a time, so the two streams interleave in arrival
/// order without splitting a line.
#[derive(Default)]
struct Sink {
    inner: Mutex<(Vec<u8>, bool)>,
}

impl Sink {
    fn push(&self, bytes: &[u8]) {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (buf, truncated) = &mut *guard;
        let room = MAX_CAPTURE_BYTES.saturating_sub(buf.len());
        if bytes.len() > room {
            *truncated = true;
        }
        buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn finish(self) -> (String, bool) {
        let (buf, truncated) = self.inner.into_inner().unwrap_or_else(|p| p.into_inner());
        (String::from_utf8_lossy(&buf).into_owned(), truncated)
    }
}

async fn pump(pipe: impl AsyncRead + Unpin, sink: &Sink) {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bound a single read so a newline-free flood still streams into the sink.
        match (&mut reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => break,
            Ok(_) => sink.push(&line),
            Err(e) => {
                tracing::debug!(error = %e, "reading a process pipe failed");
                break;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Whether the process group is gone, allowing a few seconds for the killed members
    /// to be reaped (a killed but unreaped process still answers a null signal).
    pub(crate) async fn group_gone(pgid: i32) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while killpg(Pid::from_raw(pgid), None).is_ok() {
            if std::time::Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    fn sh() -> PathBuf {
        PathBuf::from("/bin/sh")
    }

    async fn run_sh(script: &str, secs: u64) -> RunResult {
        let dir = tempfile::tempdir().unwrap();
        run_process(
            &sh(),
            &["-c".into(), script.into()],
            dir.path(),
            &[],
            Duration::from_secs(secs),
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn stdout_and_stderr_are_both_captured_in_arrival_order() {
        let r = run_sh(
            "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three",
            10,
        )
        .await;
        assert_eq!(r.output, "one\ntwo\nthree\n");
        assert_eq!(r.exit_code, 0);
    }

    #[tokio::test]
    async fn a_signal_death_reports_128_plus_the_signal() {
        let r = run_sh("kill -9 $$", 10).await;
        assert_eq!(r.exit_code, 128 + 9);
    }

    #[tokio::test]
    async fn large_output_on_both_pipes_does_not_deadlock() {
        let r = run_sh(
            "head -c 300000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2",
            20,
        )
        .await;
        assert_eq!(r.output.len(), 600_000);
        assert_eq!(r.exit_code, 0);
    }

    #[tokio::test]
    async fn background_children_are_killed_when_the_main_process_exits() {
        let r = run_sh("sleep 300 & echo $$", 10).await;
        let pgid: i32 = r.output.trim().parse().unwrap();
        assert!(group_gone(pgid).await, "group {pgid} still alive");
    }

    #[tokio::test]
    async fn the_workspace_is_the_working_directory_and_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let r = run_process(
            &sh(),
            &["-c".into(), "pwd".into()],
            &ws,
            &[],
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        assert_eq!(Path::new(r.output.trim()), ws.canonicalize().unwrap());
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error_sentence_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let err = run_process(
            Path::new("/nonexistent/prog"),
            &[],
            dir.path(),
            &[],
            Duration::from_secs(1),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("could not start"), "{err}");
    }

    #[test]
    fn timeout_above_600_is_clamped_and_noted() {
        let (t, note) = timeout_arg(&serde_json::json!({"timeout": 900}), "shell").unwrap();
        assert_eq!(t, 600);
        assert!(note.unwrap().contains("900"));
        let (t, note) = timeout_arg(&serde_json::json!({}), "shell").unwrap();
        assert_eq!((t, note), (60, None));
    }

    #[test]
    fn timeout_as_a_string_or_zero_is_refused() {
        let out = timeout_arg(&serde_json::json!({"timeout": "30"}), "shell").unwrap_err();
        assert!(out.refusal().is_some());
        let out = timeout_arg(&serde_json::json!({"timeout": 0}), "shell").unwrap_err();
        assert!(out.refusal().is_some());
    }

    #[test]
    fn render_states_a_nonzero_exit_and_marks_empty_output() {
        let r = RunResult {
            exit_code: 3,
            output: "oops\n".into(),
            timed_out: false,
            truncated: false,
        };
        assert_eq!(render(&r, 60, None), "oops\n[exit code 3]");
        let r = RunResult {
            exit_code: 0,
            output: String::new(),
            timed_out: false,
            truncated: false,
        };
        assert_eq!(render(&r, 60, None), "(no output)\n[exit code 0]");
        let r = RunResult {
            exit_code: 0,
            output: "hi\n".into(),
            timed_out: false,
            truncated: false,
        };
        assert_eq!(render(&r, 60, None), "hi");
    }

    #[tokio::test]
    async fn pump_keeps_a_line_whole() {
        let sink = Sink::default();
        let data: &[u8] = b"abc\ndef";
        pump(data, &sink).await;
        assert_eq!(sink.finish().0, "abc\ndef");
    }
}
