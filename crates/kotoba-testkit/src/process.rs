//! The binary's rig: `kotoba` as a child process, as a user runs it — the command with
//! the environment every test and benchmark process shares (a clean environment, its
//! data folder, its page address and token, killed with its handle), a free loopback
//! port, and waiting for it to be healthy, to refuse, or to stop on SIGTERM.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use crate::web::WEB_TOKEN;

/// The `kotoba` binary cargo built beside the running test or benchmark: they live in
/// `target/<profile>/deps/`, the binary in `target/<profile>/`.
pub fn bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the running test's path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test runs from target/<profile>/deps");
    let bin = profile.join(format!("kotoba{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: cargo builds it for the kotoba crate's tests and benchmarks",
        bin.display()
    );
    bin
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `kotoba <args>` in a clean environment (only `PATH`), on data folder `home`, its page
/// at `addr` with the test token; input, output and errors closed, killed when dropped.
/// Callers add what their test needs (the model's [`crate::model_server::ScriptedModel::env`],
/// Discord's, settings) before they spawn.
pub fn command(args: &[&str], home: &Path, addr: &str) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home)
        .env("KOTOBA_WEB_ADDR", addr)
        .env("KOTOBA_WEB_TOKEN", WEB_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// `kotoba serve` on `home` at `addr` with `extra` in its environment, its standard
/// error kept for [`refused`] and [`stop`].
pub fn serve(home: &Path, addr: &str, extra: &[(&str, &str)]) -> Child {
    let mut cmd = command(&["serve"], home, addr);
    cmd.stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Wait (≤ 20 s) until the process on `port` answers `/health` with 200; how long it
/// took.
pub async fn healthy(port: u16) -> Duration {
    let t = Instant::now();
    loop {
        if let Ok(r) = reqwest::get(format!("http://127.0.0.1:{port}/health")).await {
            if r.status() == 200 {
                return t.elapsed();
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "serve never answered /health"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What a `serve` that refuses to start said, once it has stopped by itself (within
/// 20 s) with a failure status.
pub async fn refused(mut child: Child) -> String {
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the refused serve stops by itself")
        .unwrap();
    assert!(!status.success());
    stderr_of(&mut child).await
}

/// Stop `child` with SIGTERM; it must end within 10 s with success. What it said on
/// standard error.
pub async fn stop(mut child: Child) -> String {
    let pid = child.id().expect("a running child");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).expect("a pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("serve stops within 10 s of SIGTERM")
        .unwrap();
    let err = stderr_of(&mut child).await;
    assert!(status.success(), "{status}: {err}");
    err
}

/// All of `child`'s standard error (empty when it was not kept).
async fn stderr_of(child: &mut Child) -> String {
    let mut err = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut err).await.unwrap();
    }
    err
}
