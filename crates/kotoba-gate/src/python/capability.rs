//! The Python gate's capability rule (gate.md, execute_code): a name that says it starts
//! a process or evaluates code is dangerous by what it does, through whatever module
//! path or private alias reaches it (`tempfile._os.system`, `uuid._get_command_stdout`,
//! `tkinter.Tcl().eval`), not only under the modules the gate lists.
//!
//! Names are matched with their leading underscores stripped (`_execvpe` is `execvpe`).
//! Names that everyday code also uses are judged only where they act: `system` when it
//! is called with an argument (`platform.system()` returns the OS's name), `fork` when
//! called (`repo.fork` is a flag), a name holding `command` when called and not as a
//! decorator (`@click.command()` declares a command; `run_command(…)` runs one).

use super::{Hits, DYNAMIC_EVAL, PROCESS_SPAWN};
use crate::finding::Principle;

/// Where a name stands, as the scanner read it.
pub(super) struct Site<'c> {
    /// The name, as written.
    pub name: &'c str,
    /// After a `.`.
    pub attr: bool,
    /// Followed by `(`.
    pub called: bool,
    /// Called with at least one argument.
    pub with_args: bool,
    /// Followed by `.`: an object something else is taken from, not the final name.
    pub continued: bool,
    /// After `def` or `class`.
    pub defined: bool,
    /// Inside an import statement.
    pub imported: bool,
    /// The head of a decorator (`@app.command()`).
    pub decorator: bool,
    /// The chain ending at the name, as written and as aliases resolve it.
    pub chains: &'c [Vec<String>],
}

/// Segments (underscores stripped, lowercased) that mark an object as a Tcl interpreter:
/// `tkinter.Tcl()`, `root.tk`, `_tkinter.create()`.
const TCL_OBJECTS: [&str; 4] = ["tcl", "tk", "tkinter", "tkapp"];

/// A Tcl interpreter's methods that run Tcl, whose `exec` starts any program.
const TCL_EVALUATORS: [&str; 7] = [
    "eval",
    "evalfile",
    "call",
    "exprstring",
    "exprlong",
    "exprdouble",
    "exprboolean",
];

/// Names that start a process wherever they come from, called or passed around:
/// `popen` in any case (`Popen`, `popen2`), `spawn` and `os.spawn*` (`spawnvpe`),
/// `os.exec*` (`execv`, `execlpe`; not `execute`), `forkpty`, and `subprocess`'s
/// shortcuts.
fn spawns(name: &str) -> bool {
    let lpve = |rest: &str| rest.chars().all(|c| matches!(c, 'l' | 'p' | 'v' | 'e'));
    name.starts_with("popen")
        || name.strip_prefix("spawn").is_some_and(lpve)
        || name
            .strip_prefix("exec")
            .is_some_and(|rest| !rest.is_empty() && lpve(rest))
        || matches!(
            name,
            "fexecve"
                | "forkpty"
                | "fork_exec"
                | "getoutput"
                | "getstatusoutput"
                | "check_output"
                | "check_call"
                | "run_process"
                | "get_command_stdout"
        )
}

/// Records what the name at `site` can do, if it starts a process or evaluates code.
pub(super) fn judge(site: &Site, hits: &mut Hits) {
    if site.defined || site.continued {
        return;
    }
    let plain = site.name.trim_start_matches('_').to_lowercase();
    if plain.is_empty() {
        return;
    }
    let shown = site.chains.first().map(|c| show(c)).unwrap_or_default();
    let spawn = |hits: &mut Hits, what: &str| {
        hits.add_by(
            PROCESS_SPAWN,
            format!("it {what} `{shown}`, which starts a process"),
            Principle::Capability,
        );
    };
    // Passed around: an attribute taken as a value, or a name imported.
    let reached = site.called || site.attr || site.imported;
    if reached && spawns(&plain) {
        spawn(hits, if site.called { "calls" } else { "reaches" });
    }
    if site.called && matches!(plain.as_str(), "fork" | "vfork") {
        spawn(hits, "calls");
    }
    if site.with_args && plain == "system" {
        spawn(hits, "calls");
    }
    if site.called && plain.contains("command") && !site.decorator {
        spawn(hits, "calls");
    }
    // `tempfile._os` passed as a value is `os` passed as a value (an object's own
    // `self._os` is judged where it was assigned).
    let own = site
        .chains
        .first()
        .and_then(|c| c.first())
        .is_some_and(|h| h == "self" || h == "cls");
    let private_os = site.attr && !own && site.name.starts_with('_') && !site.called;
    if private_os && matches!(plain.as_str(), "os" | "posix" | "nt") {
        hits.add_by(
            PROCESS_SPAWN,
            format!("it passes `{shown}`, a private alias of `{plain}`, around"),
            Principle::Capability,
        );
    }
    if site.attr && TCL_EVALUATORS.contains(&plain.as_str()) {
        let tcl = site.chains.iter().any(|c| {
            c.iter().take(c.len().saturating_sub(1)).any(|seg| {
                TCL_OBJECTS.contains(&seg.trim_start_matches('_').to_lowercase().as_str())
            })
        });
        if tcl {
            hits.add_by(
                DYNAMIC_EVAL,
                format!("it runs Tcl with `{shown}`, whose `exec` starts any program"),
                Principle::Capability,
            );
        }
    }
}

/// The text of a chain for a reason: `requests.Session().post`.
pub(super) fn show(segs: &[String]) -> String {
    let mut out = String::new();
    for s in segs {
        if !out.is_empty() && !s.starts_with(['(', '[']) {
            out.push('.');
        }
        out.push_str(s);
    }
    out
}
