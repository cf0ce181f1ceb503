//! Children die with her: every process a tool starts is marked with this process and
//! its data folder and runs in its own process group under a guard that ends the whole
//! group the moment Kotoba dies (PR_SET_PDEATHSIG, and the parent pid looked at every
//! second), grandchildren included; whatever a killed Kotoba still left behind is found
//! by its mark and ended on the next start-up (docs/tools.md: "never left running after
//! the process exits"). Children get her environment without her secrets.

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

/// Prepare a command so its process — and everything it starts — dies with Kotoba, and
/// gets her environment without her secrets ([`crate::trust::child_env`]): it carries the
/// mark, runs in its own process group under a guard (below), and gets back the umask
/// she was started with.
pub fn die_with_me(cmd: &mut tokio::process::Command) {
    crate::trust::child_env::ChildEnv::current().apply(cmd.as_std_mut());
    cmd.env(MARK_ENV, mark());
    guard(cmd.as_std_mut());
}

/// Between fork and exec, the child splits in two. The guard (the process Kotoba sees)
/// leads the command's process group, becomes the reaper of every orphan below it
/// (PR_SET_CHILD_SUBREAPER) and waits; the program runs in the other half and dies if
/// the guard does (PR_SET_PDEATHSIG). When the program exits the guard exits the same
/// way; when Kotoba dies — the kernel's parent-death signal, or the parent pid changing,
/// looked at every second — the guard kills the whole group: a grandchild a command left
/// behind (`sleep 60 &`) goes with her, even after `kill -9`.
///
/// A PR_SET_PDEATHSIG fires when the spawning *thread* exits: the guard then checks that
/// Kotoba herself is gone before it kills anything.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn guard(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = nix::unistd::getpid().as_raw();
    let umask = crate::trust::modes::original_umask();
    // SAFETY: the closure runs in the forked child before exec. It makes only raw system
    // calls through libc (umask, setpgid, prctl, sigprocmask, fork, sigtimedwait,
    // waitpid, kill, close, _exit), allocates nothing and takes no lock; the guard half
    // never returns, so nothing of the parent's runtime runs in it.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(umask as libc::mode_t);
            if libc::getpgrp() != libc::getpid() && libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut watched: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut watched);
            libc::sigaddset(&mut watched, libc::SIGCHLD);
            libc::sigaddset(&mut watched, libc::SIGUSR1);
            libc::sigprocmask(libc::SIG_BLOCK, &watched, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR1) != 0
                || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::other("Kotoba exited while it started"));
            }
            let program = libc::fork();
            if program < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if program == 0 {
                // The program: dies with its guard, signals as they were, then exec.
                libc::sigprocmask(libc::SIG_UNBLOCK, &watched, std::ptr::null_mut());
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                return Ok(());
            }
            guard_loop(parent, program, &watched)
        });
    }
}

/// The guard's life (see [`guard`]): never returns.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
unsafe fn guard_loop(parent: i32, program: i32, watched: &libc::sigset_t) -> ! {
    // Its copies of the pipes (and of the spawn's own error pipe) belong to the program.
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
        for fd in 0..4096 {
            libc::close(fd);
        }
    }
    let second = libc::timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    loop {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::sigtimedwait(watched, &mut info, &second);
        if libc::getppid() != parent {
            // Kotoba is gone: the whole group goes, this guard with it.
            libc::kill(0, libc::SIGKILL);
            libc::_exit(137);
        }
        loop {
            let mut status = 0;
            let reaped = libc::waitpid(-1, &mut status, libc::WNOHANG);
            if reaped <= 0 {
                break;
            }
            if reaped != program {
                continue;
            }
            if libc::WIFSIGNALED(status) {
                // End the same way, without a core dump of the guard.
                let sig = libc::WTERMSIG(status);
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                libc::signal(sig, libc::SIG_DFL);
                let mut only: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut only);
                libc::sigaddset(&mut only, sig);
                libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
                libc::kill(libc::getpid(), sig);
                libc::_exit(128 + sig);
            }
            libc::_exit(libc::WEXITSTATUS(status));
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn guard(_cmd: &mut std::process::Command) {}

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
    fn the_thread_that_started_a_child_ending_while_kotoba_lives_ends_nothing() {
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
        // The guard got its parent-death signal from the thread, saw Kotoba alive.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(
            is_running(pid),
            "the guard ended its command though Kotoba lives"
        );
        let _ = nix::sys::signal::killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }

    #[tokio::test]
    async fn a_guarded_command_exits_as_its_program_did() {
        let run = |script: &str| {
            let mut cmd = tokio::process::Command::new("sh");
            cmd.arg("-c").arg(script);
            die_with_me(&mut cmd);
            cmd
        };
        let st = run("exit 7").status().await.unwrap();
        assert_eq!(st.code(), Some(7));
        let st = run("kill -TERM $$").status().await.unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&st), Some(15));
        let out = run("echo $$; cat /proc/$$/status | grep -i ppid")
            .output()
            .await
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(text.contains("PPid"), "the program ran and printed: {text}");
    }
}
