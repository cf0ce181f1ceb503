//! Tests of the file family: workspace confinement, paging, search caps, size limits.

use std::path::PathBuf;

use super::*;
use crate::tools::shell::tests::ctx_in;

struct Fx {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

fn fx() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
    let ctx = ctx_in(dir.path(), &ws);
    Fx {
        _dir: dir,
        ws,
        outside,
        ctx,
    }
}

async fn read(f: &Fx, args: Value) -> ToolOutput {
    ReadFile::new().run(args, &f.ctx).await
}

async fn write(f: &Fx, path: &str, content: &str) -> ToolOutput {
    WriteFile::new()
        .run(json!({"path": path, "content": content}), &f.ctx)
        .await
}

#[tokio::test]
async fn traversal_and_absolute_paths_outside_are_refused_for_read_and_write() {
    let f = fx();
    for bad in ["../outside/secret.txt", "/etc/passwd", "a/../../outside/x"] {
        let out = read(&f, json!({"path": bad})).await;
        assert!(out.refusal().is_some(), "{bad}: {}", out.text);
        assert!(
            out.text.contains("outside the workspace") && out.text.contains("nothing was read")
        );
        let out = write(&f, bad, "x").await;
        assert!(out.refusal().is_some(), "{bad}: {}", out.text);
        assert!(out.text.contains("nothing was written"), "{}", out.text);
    }
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert!(!f.outside.join("x").exists());
}

#[tokio::test]
async fn a_symlink_inside_the_workspace_pointing_out_is_refused() {
    let f = fx();
    std::os::unix::fs::symlink(&f.outside, f.ws.join("link")).unwrap();
    std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.ws.join("s.txt")).unwrap();
    std::os::unix::fs::symlink(f.outside.join("nope.txt"), f.ws.join("dangling")).unwrap();
    for bad in ["link/secret.txt", "s.txt"] {
        let out = read(&f, json!({"path": bad})).await;
        assert!(out.refusal().is_some(), "{bad}: {}", out.text);
    }
    for bad in ["link/new.txt", "s.txt", "dangling"] {
        let out = write(&f, bad, "pwned").await;
        assert!(out.refusal().is_some(), "{bad}: {}", out.text);
    }
    assert!(!f.outside.join("new.txt").exists() && !f.outside.join("nope.txt").exists());
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn an_absolute_path_inside_the_workspace_is_allowed() {
    let f = fx();
    let abs = f.ws.join("sub/in.txt");
    let out = write(&f, abs.to_str().unwrap(), "hello").await;
    assert!(out.is_ok(), "{}", out.text);
    assert_eq!(out.text, "created sub/in.txt (5 bytes)");
    let out = write(&f, "sub/./in.txt", "hello!").await;
    assert_eq!(out.text, "edited sub/in.txt (6 bytes)");
    assert_eq!(std::fs::read_to_string(abs).unwrap(), "hello!");
}

#[tokio::test]
async fn five_mb_is_written_and_one_byte_more_is_refused_with_the_sizes() {
    let f = fx();
    let exact = "a".repeat(MAX_WRITE_BYTES);
    let out = write(&f, "big.txt", &exact).await;
    assert!(out.is_ok(), "{}", out.text);
    assert_eq!(
        std::fs::metadata(f.ws.join("big.txt")).unwrap().len(),
        5 * 1024 * 1024
    );
    let over = "a".repeat(MAX_WRITE_BYTES + 1);
    let out = write(&f, "bigger.txt", &over).await;
    assert!(out.refusal().is_some());
    assert!(
        out.text.contains("5242881") && out.text.contains("5242880"),
        "{}",
        out.text
    );
    assert!(!f.ws.join("bigger.txt").exists());
}

#[tokio::test]
async fn read_file_pages_by_400_lines_and_names_the_next_offset() {
    let f = fx();
    let body: String = (1..=1000).map(|i| format!("l{i}\n")).collect();
    std::fs::write(f.ws.join("long.txt"), body).unwrap();
    let out = read(&f, json!({"path": "long.txt"})).await;
    assert!(out.is_ok());
    assert!(out.text.starts_with("     1\tl1\n"), "{}", &out.text[..40]);
    assert!(out.text.contains("   400\tl400\n") && !out.text.contains("l401"));
    assert!(out
        .text
        .ends_with("[lines 1-400 of 1000 shown; more follows: call read_file with offset 401]"));
    let out = read(&f, json!({"path": "long.txt", "offset": 990, "limit": 5})).await;
    assert!(out.text.starts_with("   990\tl990\n") && out.text.contains("l994\n"));
    assert!(
        !out.text.contains("l995") && out.text.contains("offset 995"),
        "{}",
        out.text
    );
    let out = read(&f, json!({"path": "long.txt", "offset": 998})).await;
    assert!(
        out.text.ends_with("[end of file, 1000 lines]"),
        "{}",
        out.text
    );
    let out = read(&f, json!({"path": "long.txt", "offset": 2000})).await;
    assert!(out.text.contains("past the end"));
}

#[tokio::test]
async fn read_file_stops_a_page_at_8000_characters() {
    let f = fx();
    let body: String = (1..=300).map(|i| format!("{i:0>99}\n")).collect();
    std::fs::write(f.ws.join("wide.txt"), body).unwrap();
    let out = read(&f, json!({"path": "wide.txt"})).await;
    let page = out.text.rsplit_once('\n').unwrap().0;
    assert!(page.chars().count() <= PAGE_CHARS, "{}", page.len());
    // 99 chars + number column + tab + newline = 107 per line → 74 lines fit.
    assert!(
        out.text
            .ends_with("[lines 1-74 of 300 shown; more follows: call read_file with offset 75]"),
        "{}",
        out.text.rsplit_once('\n').unwrap().1
    );
}

#[tokio::test]
async fn read_file_refuses_bad_arguments() {
    let f = fx();
    assert!(read(&f, json!({})).await.refusal().is_some());
    assert!(read(&f, json!({"path": "x", "offset": "3"}))
        .await
        .refusal()
        .is_some());
    let out = read(&f, json!({"path": "missing.txt"})).await;
    assert!(!out.is_ok() && out.refusal().is_none());
}

#[tokio::test]
async fn search_files_caps_at_80_matches_and_says_it_was_truncated() {
    let f = fx();
    let body: String = (1..=100).map(|i| format!("needle {i}\n")).collect();
    std::fs::write(f.ws.join("hay.txt"), body).unwrap();
    let out = SearchFiles::new()
        .run(json!({"pattern": "needle"}), &f.ctx)
        .await;
    assert!(out.is_ok());
    let hits = out
        .text
        .lines()
        .filter(|l| l.starts_with("hay.txt:"))
        .count();
    assert_eq!(hits, 80);
    assert!(out.text.starts_with("hay.txt:1: needle 1\n"));
    assert!(out.text.contains("[stopped at 80 matches"), "{}", out.text);
}

#[tokio::test]
async fn search_files_skips_build_folders_filters_by_glob_and_stays_inside() {
    let f = fx();
    for (p, t) in [
        ("src/a.rs", "fn Alpha()"),
        ("src/b.py", "alpha = 1"),
        ("target/x.rs", "alpha"),
        (".git/c", "alpha"),
    ] {
        std::fs::create_dir_all(f.ws.join(p).parent().unwrap()).unwrap();
        std::fs::write(f.ws.join(p), t).unwrap();
    }
    std::os::unix::fs::symlink(&f.outside, f.ws.join("out")).unwrap();
    let run = |args: Value| async { SearchFiles::new().run(args, &f.ctx).await };
    let out = run(json!({"pattern": "alpha"})).await;
    assert_eq!(out.text, "src/a.rs:1: fn Alpha()\nsrc/b.py:1: alpha = 1");
    let out = run(json!({"pattern": "alpha", "glob": "*.py"})).await;
    assert_eq!(out.text, "src/b.py:1: alpha = 1");
    let out = run(json!({"pattern": "Alpha", "path": "src"})).await;
    assert_eq!(out.text, "src/a.rs:1: fn Alpha()");
    let out = run(json!({"pattern": "secret"})).await;
    assert!(out.text.starts_with("No matches"), "{}", out.text);
    let out = run(json!({"pattern": "secret", "path": "../outside"})).await;
    assert!(out.refusal().is_some());
    let out = run(json!({"pattern": "fn Alpha("})).await;
    assert_eq!(
        out.text, "src/a.rs:1: fn Alpha()",
        "an invalid regex is searched as text"
    );
}

#[test]
fn glob_matches_stars_and_question_marks() {
    assert!(glob_match("*.rs", "main.rs"));
    assert!(!glob_match("*.rs", "main.rsx"));
    assert!(glob_match("te?t*", "test_file"));
    assert!(!glob_match("a*b", "acd"));
}

#[test]
fn the_search_walk_stops_at_its_deadline_and_says_results_are_partial() {
    let f = fx();
    std::fs::write(f.ws.join("a.txt"), "needle").unwrap();
    let re = build_regex("needle").unwrap();
    let mut walk = Walk {
        root: &f.ws,
        re: &re,
        glob: None,
        deadline: Instant::now(),
        found: Found {
            hits: Vec::new(),
            truncated: false,
            out_of_time: false,
        },
    };
    walk.dir(&f.ws);
    assert!(walk.found.out_of_time);
    assert!(walk.found.hits.is_empty());
}

#[test]
fn search_time_box_is_five_seconds_in_companion_and_twenty_in_work() {
    assert_eq!(search_budget(Mode::Companion), Duration::from_secs(5));
    assert_eq!(search_budget(Mode::Work), Duration::from_secs(20));
}

#[tokio::test]
async fn write_file_emits_an_artifact_created_then_edited() {
    let mut f = fx();
    let frames = crate::tools::test_support::record_frames(&mut f.ctx);
    assert!(write(&f, "notes/a.md", "one").await.is_ok());
    assert!(write(&f, "notes/a.md", "two").await.is_ok());
    assert!(write(&f, "../escape.md", "x").await.refusal().is_some());
    assert_eq!(
        *frames.lock().unwrap(),
        [
            Frame::Artifact {
                path: "notes/a.md".into(),
                change: ArtifactChange::Created
            },
            Frame::Artifact {
                path: "notes/a.md".into(),
                change: ArtifactChange::Edited
            }
        ]
    );
}
