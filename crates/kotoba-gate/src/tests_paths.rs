//! Workspace confinement of auto-safe lines: every path argument (slashes, `~`, `.`/`..`,
//! bare words naming files, values glued to options, globs) must stay inside, links
//! resolved.

use std::path::Path;

use super::*;

struct Ws {
    _outside: tempfile::TempDir,
    dir: tempfile::TempDir,
}

/// A workspace with `a.txt`, `sub/`, `link` → a file outside, `sub/out` → the outside
/// folder, and `inlink` → `a.txt`.
fn ws() -> Ws {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("a.txt"), "a").unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    std::fs::write(p.join("sub/b.txt"), "b").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), p.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path(), p.join("sub/out")).unwrap();
    std::os::unix::fs::symlink(p.join("a.txt"), p.join("inlink")).unwrap();
    Ws {
        _outside: outside,
        dir,
    }
}

fn verdict(ws: &Path, line: &str) -> Verdict {
    classify(
        &Action::Shell {
            command: line.into(),
        },
        ws,
        true,
    )
    .verdict
}

#[test]
fn paths_that_leave_the_workspace_ask() {
    let w = ws();
    let table = [
        "cat ../x",
        "cat /etc/passwd",
        "ls ~",
        "ls ~/",
        "cat ~root/x",
        "cat link",
        "cat sub/out/secret",
        "ls sub/out",
        "ls ..",
        "ls sub/../..",
        "grep --file=/etc/passwd a.txt",
        "grep -f/etc/passwd a.txt",
        "wc -l ../list",
        "sort -T/tmp a.txt",
        "head -- ../x",
        "cat .*",
        "ls sub/.?",
        "cat */secret",
        "cat sub/*",
        "mkdir /tmp/x",
        "find / -name x",
    ];
    for line in table {
        let d = classify(
            &Action::Shell {
                command: line.into(),
            },
            w.dir.path(),
            true,
        );
        assert_eq!(d.verdict, Verdict::Ask, "{line:?}: {d:?}");
        assert!(
            d.reasons[0].contains("so it asks"),
            "{line:?}: {:?}",
            d.reasons
        );
    }
}

#[test]
fn paths_inside_the_workspace_are_auto_safe() {
    let w = ws();
    let table = [
        "cat ./a.txt",
        "ls sub/",
        "cat a.txt",
        "cat inlink",
        "ls .",
        "ls sub/..",
        "cat sub/b.txt",
        "cat not-there.txt",
        "grep -r foo sub",
        "cat *.txt",
        "ls sub/*.txt",
        "mkdir -p sub/new/deeper",
        "find . -name '*.txt'",
        "wc -l a.txt sub/b.txt",
    ];
    for line in table {
        assert_eq!(verdict(w.dir.path(), line), Verdict::AutoSafe, "{line:?}");
    }
}

#[test]
fn an_absolute_path_inside_the_workspace_is_auto_safe() {
    let w = ws();
    let real = w.dir.path().canonicalize().unwrap();
    let line = format!("cat {}/a.txt", real.display());
    assert_eq!(verdict(w.dir.path(), &line), Verdict::AutoSafe);
}

#[test]
fn a_bare_word_is_a_path_only_when_it_names_a_file() {
    let w = ws();
    // `link` names a link leading out; `linky` names nothing and is just a word.
    assert_eq!(verdict(w.dir.path(), "echo link"), Verdict::Ask);
    assert_eq!(verdict(w.dir.path(), "echo linky"), Verdict::AutoSafe);
    assert_eq!(verdict(w.dir.path(), "grep link a.txt"), Verdict::Ask);
}

#[test]
fn a_missing_workspace_makes_paths_ask_but_plain_words_do_not() {
    let missing = Path::new("/nonexistent/kotoba-workspace");
    assert_eq!(verdict(missing, "ls ."), Verdict::Ask);
    assert_eq!(verdict(missing, "echo hi"), Verdict::AutoSafe);
}

#[test]
fn a_read_only_command_reaching_outside_the_workspace_offers_no_family_grant() {
    let ws = tempfile::tempdir().unwrap();
    for line in [
        "cat /etc/passwd",
        "grep -r key ~/.ssh",
        "head ../secrets.txt",
    ] {
        let d = super::classify(
            &super::Action::Shell {
                command: line.into(),
            },
            ws.path(),
            true,
        );
        assert_eq!(d.verdict, super::Verdict::Ask, "{line}");
        assert!(
            !d.can_always,
            "{line}: a family rule would read the whole machine"
        );
        assert!(
            d.can_always_exact,
            "{line}: the exact line may still be saved"
        );
        assert!(d.no_always_reason.is_some());
    }
}

#[test]
fn installing_an_mcp_server_can_never_be_saved() {
    let ws = tempfile::tempdir().unwrap();
    let action = super::Action::Tool {
        name: "mcp_install".into(),
        risk: kotoba_core::protocol::Risk::Exec,
        may_always: false, // as McpInstall declares
    };
    let d = super::classify(&action, ws.path(), true);
    assert_eq!(d.verdict, super::Verdict::Ask);
    assert!(!d.can_always && !d.can_always_exact);
    assert!(d.no_always_reason.unwrap().contains("third-party"));
}
