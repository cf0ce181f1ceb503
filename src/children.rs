//! Children die with her: every process a tool starts is marked with this process and
//! its data folder, asks the kernel for SIGKILL when Kotoba dies (PR_SET_PDEATHSIG), and
//! whatever a killed Kotoba left behind is found by its mark and ended on the next
//! start-up (docs/tools.md: "never left running after the process exits").

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The environment variable every child carries: `<kotoba pid>:<data folder>`.
pub const MARK_ENV: &str = "KOTOBA_CHILD_OF";

/// The data folder this process marks its children with (set once by `serve`/`chat`).
static HOME: OnceLock<PathBuf> = OnceLock::new();

/// Mark this process's children with `home` from now on (the first call wins).
pub fn set_home(home: &Path) {
    let _ = HOME.set(home.to_path_buf());
}

/// The mark of this process's children.
fn mark() -> String {
    let home = HOME
        .get()
        .map(|h| h.display().to_string())
        .unwrap_or_default();
    format!("{}:{home}", std::process::id())
}

/// Prepare a command so its process dies with Kotoba: it carries the mark, and on Linux
/// the kernel sends it SIGKILL the moment Kotoba dies, however she dies.
pub fn die_with_me(cmd: &mut tokio::process::Command) {
    cmd.env(MARK_ENV, mark());
    pdeathsig(cmd.as_std_mut());
}

/// Set PR_SET_PDEATHSIG in the child between fork and exec. The signal fires when the
/// spawning *thread* exits: every spawn runs on a tokio worker, which lives as long as
/// the runtime. A parent that died before the call is caught by the parent-pid check.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pdeathsig(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec and only makes two
    // async-signal-safe system calls (prctl, getppid); it allocates nothing and takes
    // no lock.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::other("Kotoba exited while it started"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn pdeathsig(_cmd: &mut std::process::Command) {}

/// Whether `pid` is a running Kotoba (this binary), not a zombie or a reused pid.
pub fn is_live_kotoba(pid: i64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid as u32 == std::process::id() {
        return true;
    }
    if !is_running(pid) {
        return false;
    }
    let exe = |p: &str| std::fs::read_link(format!("/proc/{p}/exe")).ok();
    match (exe(&pid.to_string()), exe("self")) {
        (Some(theirs), Some(mine)) => theirs == mine,
        _ => false,
    }
}

/// Whether a process exists and is not a zombie.
pub fn is_running(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised name, which may itself hold parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
            .unwrap_or(true),
        Err(_) => false,
    }
}

/// One process a previous run left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// Its process id.
    pub pid: i32,
    /// Its command line, for the log.
    pub command: String,
}

/// Find every process marked as a child of a Kotoba on `home` that is no longer running
/// and end it with SIGKILL. Returns what was ended, each named in the log.
pub fn end_leftovers(home: &Path) -> Vec<Leftover> {
    let mut ended = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return ended;
    };
    let me = std::process::id() as i32;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let Some(owner) = owner_on(&environ, home) else {
            continue;
        };
        if is_live_kotoba(owner) || !is_running(pid) {
            continue;
        }
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .split('\0')
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        match kill(Pid::from_raw(pid), Signal::SIGKILL) {
            Ok(()) => {
                tracing::warn!(
                    "ended pid {pid} ({command}): a process left running by an earlier Kotoba \
                     (pid {owner}) that stopped without ending it"
                );
                ended.push(Leftover { pid, command });
            }
            Err(e) => tracing::warn!(
                "could not end pid {pid} ({command}), left by an earlier Kotoba: {e}"
            ),
        }
    }
    ended
}

/// The Kotoba pid in a process's mark, when the mark names `home`.
fn owner_on(environ: &[u8], home: &Path) -> Option<i64> {
    let prefix = format!("{MARK_ENV}=");
    let want = home.display().to_string();
    environ.split(|b| *b == 0).find_map(|var| {
        let var = std::str::from_utf8(var).ok()?;
        let (pid, folder) = var.strip_prefix(&prefix)?.split_once(':')?;
        (folder == want).then(|| pid.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_names_its_owner_only_for_the_same_data_folder() {
        let env = b"PATH=/bin\0KOTOBA_CHILD_OF=4242:/data/k\0HOME=/root\0";
        assert_eq!(owner_on(env, Path::new("/data/k")), Some(4242));
        assert_eq!(owner_on(env, Path::new("/data/other")), None);
        assert_eq!(owner_on(b"PATH=/bin\0", Path::new("/data/k")), None);
    }

    #[test]
    fn this_process_is_a_live_kotoba_and_a_dead_pid_is_not() {
        assert!(is_live_kotoba(i64::from(std::process::id())));
        assert!(!is_live_kotoba(i64::from(i32::MAX)));
        assert!(!is_live_kotoba(-1));
    }

    #[tokio::test]
    async fn a_marked_child_of_a_dead_kotoba_is_ended_and_others_are_left_alone() {
        let home = tempfile::tempdir().unwrap();
        let spawn = |owner: &str, folder: &Path| {
            std::process::Command::new("sleep")
                .arg("30")
                .env(MARK_ENV, format!("{owner}:{}", folder.display()))
                .spawn()
                .unwrap()
        };
        // A pid that cannot be a running Kotoba: beyond pid_max.
        let mut orphan = spawn("2147483000", home.path());
        let other_home = tempfile::tempdir().unwrap();
        let mut elsewhere = spawn("2147483000", other_home.path());
        let mut mine = spawn(&std::process::id().to_string(), home.path());
        // A child just forked shows its parent's environment until it has exec'd: wait
        // until each runs `sleep` (under load this takes a moment).
        for child in [&orphan, &elsewhere, &mine] {
            let cmdline = format!("/proc/{}/cmdline", child.id());
            for _ in 0..200 {
                if std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sleep")) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        let ended = end_leftovers(home.path());
        assert_eq!(
            ended.iter().map(|l| l.pid).collect::<Vec<_>>(),
            [orphan.id() as i32]
        );
        assert!(ended[0].command.contains("sleep 30"), "{ended:?}");
        let status = orphan.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert!(elsewhere.try_wait().unwrap().is_none());
        assert!(mine.try_wait().unwrap().is_none());
        elsewhere.kill().unwrap();
        mine.kill().unwrap();
        let _ = (elsewhere.wait(), mine.wait());
    }

    #[test]
    fn a_child_is_killed_when_the_kotoba_thread_that_started_it_dies() {
        let pid = std::thread::spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut cmd = tokio::process::Command::new("sleep");
                cmd.arg("30");
                die_with_me(&mut cmd);
                let child = cmd.spawn().unwrap();
                let pid = child.id().unwrap() as i32;
                std::mem::forget(child);
                pid
            })
        })
        .join()
        .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while is_running(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "pid {pid} outlived its parent"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
