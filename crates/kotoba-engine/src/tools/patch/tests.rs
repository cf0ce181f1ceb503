//! Tests of patch: one unique match (exact, else whitespace-tolerant), the count when
//! not unique, workspace confinement and the artifact frame.

use std::path::PathBuf;

use super::*;
use crate::tools::shell::tests::ctx_in;
use crate::tools::test_support::record_frames;

struct Fx {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    ctx: ToolContext,
}

fn fx(file: &str) -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.py"), file).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "x = 1\n").unwrap();
    let ctx = ctx_in(dir.path(), &ws);
    Fx { _dir: dir, ws, ctx }
}

async fn patch(f: &Fx, path: &str, old: &str, new: &str) -> ToolOutput {
    Patch::new()
        .run(
            json!({"path": path, "old_string": old, "new_string": new}),
            &f.ctx,
        )
        .await
}

#[tokio::test]
async fn a_unique_exact_match_is_replaced_and_an_edited_artifact_is_emitted() {
    let mut f = fx("def f():\n    return 1\n\ndef g():\n    return 2\n");
    let frames = record_frames(&mut f.ctx);
    let out = patch(&f, "a.py", "    return 2", "    return 3").await;
    assert!(out.is_ok(), "{}", out.text);
    assert!(
        out.text.starts_with("edited a.py at line 5"),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(f.ws.join("a.py")).unwrap(),
        "def f():\n    return 1\n\ndef g():\n    return 3\n"
    );
    assert_eq!(
        *frames.lock().unwrap(),
        [Frame::Artifact {
            path: "a.py".into(),
            change: ArtifactChange::Edited
        }]
    );
}

#[tokio::test]
async fn zero_matches_are_refused_with_the_count_and_nothing_changes() {
    let f = fx("x = 1\n");
    let out = patch(&f, "a.py", "y = 2", "y = 3").await;
    assert_eq!(out.refusal(), Some(kotoba_core::protocol::Ending::Policy));
    assert!(out.text.contains("found 0 times"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(f.ws.join("a.py")).unwrap(),
        "x = 1\n"
    );
}

#[tokio::test]
async fn two_matches_are_refused_with_the_count_and_nothing_changes() {
    let body = "return 1\nreturn 1\n";
    let f = fx(body);
    let out = patch(&f, "a.py", "return 1", "return 2").await;
    assert!(out.refusal().is_some());
    assert!(out.text.contains("found 2 times"), "{}", out.text);
    assert_eq!(std::fs::read_to_string(f.ws.join("a.py")).unwrap(), body);
}

#[tokio::test]
async fn a_match_differing_only_in_whitespace_is_found_when_it_is_unique() {
    let f = fx("if x:\n        call( a,  b )\n    done()\n");
    let out = patch(&f, "a.py", "if x:\n  call( a, b )", "if y:\n    call(a)").await;
    assert!(out.is_ok(), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(f.ws.join("a.py")).unwrap(),
        "if y:\n    call(a)\n    done()\n"
    );
}

#[tokio::test]
async fn a_whitespace_tolerant_match_found_twice_is_refused_with_its_count() {
    let f = fx("a  = 1\nb = 2\na = 1\n");
    let out = patch(&f, "a.py", "a = 1 ", "a = 3").await;
    assert!(out.refusal().is_some());
    assert!(out.text.contains("found 2 times"), "{}", out.text);
    assert!(out.text.contains("whitespace ignored"), "{}", out.text);
}

#[tokio::test]
async fn paths_leaving_the_workspace_are_refused() {
    let f = fx("x = 1\n");
    let outside = f.ws.parent().unwrap().join("outside.txt");
    std::os::unix::fs::symlink(&outside, f.ws.join("link.txt")).unwrap();
    for path in [
        "../outside.txt".to_string(),
        outside.display().to_string(),
        "link.txt".to_string(),
    ] {
        let out = patch(&f, &path, "x = 1", "x = 2").await;
        assert!(out.refusal().is_some(), "{path}: {}", out.text);
        assert!(
            out.text.contains("outside the workspace"),
            "{path}: {}",
            out.text
        );
    }
    assert_eq!(std::fs::read_to_string(outside).unwrap(), "x = 1\n");
}

#[tokio::test]
async fn bad_arguments_are_refused_naming_the_problem() {
    let f = fx("x = 1\n");
    let out = Patch::new().run(json!({"path": "a.py"}), &f.ctx).await;
    assert!(out.refusal().is_some());
    assert!(out.text.contains("old_string"), "{}", out.text);
    let out = patch(&f, "a.py", "", "y").await;
    assert!(out.refusal().is_some());
    assert!(out.text.contains("empty"), "{}", out.text);
}

#[test]
fn find_unique_reports_ranges_and_counts() {
    assert_eq!(find_unique("abc", "b"), Found::Once(1..2));
    assert_eq!(
        find_unique("a\nb\n", "c"),
        Found::Not {
            count: 0,
            tolerant: true
        }
    );
    assert_eq!(
        find_unique("bb", "b"),
        Found::Not {
            count: 2,
            tolerant: false
        }
    );
}
