//! The layout rules of ARCHITECTURE.md, checked on the source tree and Cargo.lock: each
//! crate stands only on the floors below it and none but the binary reaches a surface
//! library, the engine names no tool and imports no surface crate, every module opens
//! with a line saying its role, and the modules of each crate form no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kotoba::config::Config;
use kotoba::tools::discord::PortSlot;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The engine's modules, in the engine crate.
fn engine_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/kotoba-engine/src/engine")
}

/// The source folder of every crate of the workspace: the binary crate's `src/` and each
/// `crates/<name>/src/`.
fn roots() -> Vec<PathBuf> {
    let mut out = vec![src()];
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut members: Vec<PathBuf> = std::fs::read_dir(crates)
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    members.sort();
    out.extend(members);
    out
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A test file (`tests.rs`, `tests_*.rs`, anything under a `tests/` folder).
fn is_test_file(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "tests")
        || path
            .file_stem()
            .is_some_and(|s| s.to_string_lossy().starts_with("tests"))
}

/// The file's code without its `#[cfg(test)]` module and without comments.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_engine_names_no_tool_outside_its_tests() {
    let home = tempfile::tempdir().unwrap();
    let config = Config::for_home(home.path(), &[]);
    let registry = kotoba::app::registry(&config, &PortSlot::default());
    let names: Vec<String> = registry
        .all()
        .iter()
        .map(|t| t.spec().name.clone())
        .collect();
    assert!(
        names.iter().any(|n| n == "shell") && names.len() > 20,
        "the registry is the real one: {names:?}"
    );
    let mut found = Vec::new();
    for file in rust_files(&engine_dir()) {
        if is_test_file(&file) {
            continue;
        }
        let code = code_of(&file);
        for name in &names {
            if code.contains(&format!("\"{name}\"")) {
                found.push(format!("{} names \"{name}\"", file.display()));
            }
        }
        // A connected server's tools (`server__tool`) are named by their server only in
        // the MCP module.
        if code.contains("__\")") || code.contains("\"browser") {
            found.push(format!("{} names an MCP server's tools", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "the engine must read what a tool declares in its spec, not its name:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_engine_never_imports_serenity_songbird_or_axum() {
    let mut found = Vec::new();
    for file in rust_files(&engine_dir()) {
        let code = code_of(&file);
        for krate in ["serenity", "songbird", "axum", "poise", "tungstenite"] {
            if code.contains(&format!("{krate}::")) {
                found.push(format!("{} uses {krate}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn every_module_opens_with_a_line_saying_its_role() {
    let mut missing = Vec::new();
    for file in roots().iter().flat_map(|r| rust_files(r)) {
        let text = std::fs::read_to_string(&file).unwrap();
        if !text.trim_start().starts_with("//!") {
            missing.push(file.display().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "these files do not open with a `//!` line:\n{}",
        missing.join("\n")
    );
}

/// The module path of a source file: `src/surfaces/discord/chat.rs` →
/// `["surfaces", "discord", "chat"]`.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Every module path a file's code reaches (`crate::a::b`, `super::x`, grouped
/// `use crate::{a::x, b}`), resolved to absolute paths.
fn references(root: &Path, file: &Path, code: &str) -> Vec<Vec<String>> {
    let me = module_of(root, file);
    // `super` of `a/b.rs` and of `a/b/mod.rs` alike is `a`.
    let here: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let word_at = |i: usize| -> (String, usize) {
        let mut j = i;
        let mut w = String::new();
        while j < bytes.len() && (bytes[j].is_alphanumeric() || bytes[j] == '_' || bytes[j] == ':')
        {
            w.push(bytes[j]);
            j += 1;
        }
        (w, j)
    };
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        if !starts_word {
            i += 1;
            continue;
        }
        let (word, end) = word_at(i);
        let base: Option<(Vec<String>, &str)> = if let Some(rest) = word.strip_prefix("crate::") {
            Some((Vec::new(), rest))
        } else if word.starts_with("super::") {
            let mut base = here.clone();
            let mut rest = word.as_str();
            while let Some(r) = rest.strip_prefix("super::") {
                if rest.as_ptr() != word.as_ptr() {
                    base.pop();
                }
                rest = r;
            }
            Some((base, rest))
        } else {
            None
        };
        if let Some((base, rest)) = base {
            let mut paths = Vec::new();
            if (rest.is_empty() || rest.ends_with("::")) && end < bytes.len() && bytes[end] == '{' {
                // A group: each item under the path before the brace.
                let close = (end..bytes.len()).find(|&k| bytes[k] == '}').unwrap_or(end);
                let inner: String = bytes[end + 1..close].iter().collect();
                for item in inner.split(',') {
                    let item = item.trim().trim_start_matches('{');
                    if !item.is_empty() {
                        paths.push(format!("{rest}{item}"));
                    }
                }
            } else {
                paths.push(rest.to_string());
            }
            for p in paths {
                let mut full = base.clone();
                full.extend(
                    p.split("::")
                        .filter(|s| {
                            !s.is_empty()
                                && s.chars()
                                    .all(|c| c.is_lowercase() || c == '_' || c.is_ascii_digit())
                        })
                        .map(str::to_string),
                );
                out.push(full);
            }
        }
        i = end.max(i + 1);
    }
    out
}

/// Cycles among the children of `parent` (a module path): an edge a → b when a file in
/// a reaches into b. Returns each strongly connected group of more than one child.
fn cycles_under(root: &Path, parent: &[String]) -> Vec<(Vec<String>, Vec<String>)> {
    let depth = parent.len() + 1;
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut why: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(root) {
        if is_test_file(&file) {
            continue;
        }
        let me = module_of(root, &file);
        if me.len() < depth || me[..parent.len()] != *parent {
            continue;
        }
        let from = me[parent.len()].clone();
        for target in references(root, &file, &code_of(&file)) {
            if target.len() < depth || target[..parent.len()] != *parent {
                continue;
            }
            let to = target[parent.len()].clone();
            if to != from {
                edges.entry(from.clone()).or_default().insert(to.clone());
                why.entry((from.clone(), to))
                    .or_default()
                    .insert(file.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    // Reachability closure is enough for a tree of this size.
    let nodes: Vec<String> = edges.keys().cloned().collect();
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(n) = stack.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let mut groups: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut placed = BTreeSet::new();
    for n in &nodes {
        if placed.contains(n) {
            continue;
        }
        let from_n = reach(n);
        let group: Vec<String> = nodes
            .iter()
            .filter(|m| *m == n || (from_n.contains(*m) && reach(m).contains(n)))
            .cloned()
            .collect();
        if group.len() > 1 {
            let mut detail = Vec::new();
            for a in &group {
                for b in &group {
                    if let Some(files) = why.get(&(a.clone(), b.clone())) {
                        detail.push(format!("{a} -> {b}: {files:?}"));
                    }
                }
            }
            placed.extend(group.iter().cloned());
            groups.push((group, detail));
        }
    }
    groups
}

/// Every module of the crate at `root` that has children (a folder), the crate root
/// first.
fn parents(root: &Path) -> Vec<Vec<String>> {
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    out.insert(Vec::new());
    for file in rust_files(root) {
        let m = module_of(root, &file);
        for n in 1..m.len() {
            out.insert(m[..n].to_vec());
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_modules_form_no_cycle_at_any_level() {
    let mut found = Vec::new();
    for root in roots() {
        for parent in parents(&root) {
            for (group, detail) in cycles_under(&root, &parent) {
                found.push(format!(
                    "in {}, under `crate::{}`: {:?}\n  {}",
                    root.display(),
                    parent.join("::"),
                    group,
                    detail.join("\n  ")
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "module cycles (a depends on b and b on a):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cycle_check_sees_a_cycle_through_super_and_grouped_imports() {
    // The reader of references must resolve the spellings the tree uses, or the check
    // above could never fail.
    let file = src().join("surfaces/discord/chat.rs");
    let refs = references(
        &src(),
        &file,
        "use super::view::Card;\nuse crate::{engine::Engine, tools::x};\nsuper::super::web::y();",
    );
    let as_text: Vec<String> = refs.iter().map(|r| r.join("::")).collect();
    assert!(
        as_text.contains(&"surfaces::discord::view".to_string()),
        "{as_text:?}"
    );
    assert!(
        as_text.contains(&"engine::Engine".to_string()) || as_text.contains(&"engine".to_string()),
        "{as_text:?}"
    );
    assert!(
        as_text.iter().any(|t| t.starts_with("tools")),
        "{as_text:?}"
    );
    assert!(
        as_text.iter().any(|t| t.starts_with("surfaces::web")),
        "{as_text:?}"
    );
}

/// The floors of the house (ARCHITECTURE.md): each crate of the workspace and the
/// workspace crates it may stand on. A new crate must say its floor here.
const FLOORS: &[(&str, &[&str])] = &[
    ("kotoba-core", &[]),
    ("kotoba-gate", &["kotoba-core"]),
    ("kotoba-store", &["kotoba-core"]),
    (
        "kotoba-engine",
        &["kotoba-core", "kotoba-gate", "kotoba-store"],
    ),
    (
        "kotoba-voice",
        &[
            "kotoba-core",
            "kotoba-gate",
            "kotoba-store",
            "kotoba-engine",
        ],
    ),
    (
        "kotoba",
        &[
            "kotoba-core",
            "kotoba-gate",
            "kotoba-store",
            "kotoba-engine",
            "kotoba-voice",
            // Only as a dev-dependency (its tests and benchmarks): see
            // `the_test_kit_is_scaffolding_no_floor_stands_on`.
            TEST_KIT,
        ],
    ),
    // The scaffolding beside the house: it stands on every floor, the binary included.
    (
        TEST_KIT,
        &[
            "kotoba-core",
            "kotoba-gate",
            "kotoba-store",
            "kotoba-engine",
            "kotoba-voice",
            "kotoba",
        ],
    ),
];

/// The test kit: loopback servers and rigs for the binary crate's tests and benchmarks.
const TEST_KIT: &str = "kotoba-testkit";

/// The libraries of the surfaces: only the binary crate may reach them, even indirectly.
const SURFACE_LIBRARIES: [&str; 3] = ["serenity", "songbird", "axum"];

/// Cargo.lock's packages: `name version` → the `name version` of each dependency
/// (normal, build and dev alike, which makes the checks below stricter, not looser).
fn locked_packages() -> BTreeMap<String, Vec<String>> {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    let mut raw: Vec<(String, String, Vec<String>)> = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
                .map(|v| v.trim_end_matches('"').to_string())
                .unwrap_or_default()
        };
        let deps = match block.find("dependencies = [") {
            Some(i) => block[i..]
                .lines()
                .skip(1)
                .take_while(|l| l.trim() != "]")
                .map(|l| l.trim().trim_end_matches(',').trim_matches('"').to_string())
                .collect(),
            None => Vec::new(),
        };
        raw.push((field("name"), field("version"), deps));
    }
    let key_of = |dep: &str| -> String {
        let mut parts = dep.split_whitespace();
        let name = parts.next().unwrap_or_default();
        match parts.next() {
            Some(version) => format!("{name} {version}"),
            None => {
                let (_, v, _) = raw.iter().find(|(n, _, _)| n == name).unwrap();
                format!("{name} {v}")
            }
        }
    };
    raw.iter()
        .map(|(n, v, deps)| (format!("{n} {v}"), deps.iter().map(|d| key_of(d)).collect()))
        .collect()
}

/// The crate named `name` in the lock: its key.
fn locked(packages: &BTreeMap<String, Vec<String>>, name: &str) -> String {
    packages
        .keys()
        .find(|k| k.split(' ').next() == Some(name))
        .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"))
        .clone()
}

#[test]
fn each_crate_stands_only_on_the_floors_below_it() {
    let packages = locked_packages();
    let members: Vec<&str> = FLOORS.iter().map(|(n, _)| *n).collect();
    let on_disk: Vec<String> = roots()[1..]
        .iter()
        .map(|r| {
            r.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for krate in &on_disk {
        assert!(
            members.contains(&krate.as_str()),
            "crates/{krate} has no floor in FLOORS"
        );
    }
    let mut wrong = Vec::new();
    for (krate, below) in FLOORS {
        for dep in &packages[&locked(&packages, krate)] {
            let name = dep.split(' ').next().unwrap();
            if members.contains(&name) && !below.contains(&name) {
                wrong.push(format!("{krate} depends on {name}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_crate_below_the_binary_reaches_serenity_songbird_or_axum() {
    let packages = locked_packages();
    let mut wrong = Vec::new();
    for (krate, _) in FLOORS
        .iter()
        .filter(|(n, _)| *n != "kotoba" && *n != TEST_KIT)
    {
        let mut seen = BTreeSet::new();
        let mut stack = vec![locked(&packages, krate)];
        while let Some(p) = stack.pop() {
            for dep in packages.get(&p).into_iter().flatten() {
                if seen.insert(dep.clone()) {
                    stack.push(dep.clone());
                }
            }
        }
        for dep in &seen {
            let name = dep.split(' ').next().unwrap();
            if SURFACE_LIBRARIES.contains(&name) {
                wrong.push(format!("{krate} reaches {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_test_kit_is_scaffolding_no_floor_stands_on() {
    // The binary may use the test kit in its tests and benchmarks only: never in what it
    // ships. (Cargo.lock cannot tell a dev-dependency from a normal one; the manifests can.)
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shipped = |manifest: &Path| -> String {
        let text = std::fs::read_to_string(manifest).unwrap();
        let start = text.find("\n[dependencies]").map_or(text.len(), |i| i + 1);
        let rest = &text[start..];
        let end = rest[1..].find("\n[").map_or(rest.len(), |i| i + 1);
        rest[..end].to_string()
    };
    let mut manifests = vec![root.join("Cargo.toml")];
    for (krate, _) in FLOORS
        .iter()
        .filter(|(n, _)| *n != "kotoba" && *n != TEST_KIT)
    {
        manifests.push(root.join("crates").join(krate).join("Cargo.toml"));
    }
    for manifest in &manifests {
        assert!(
            !shipped(manifest).contains(TEST_KIT),
            "{} ships with the test kit among its [dependencies]",
            manifest.display()
        );
    }
    // And no floor below the binary reaches it at all, dev-dependencies included.
    let packages = locked_packages();
    for (krate, _) in FLOORS
        .iter()
        .filter(|(n, _)| *n != "kotoba" && *n != TEST_KIT)
    {
        let deps = &packages[&locked(&packages, krate)];
        assert!(
            !deps.iter().any(|d| d.starts_with(TEST_KIT)),
            "{krate} depends on the test kit"
        );
    }
}

/// Every `pub` function (not `pub(crate)`) in a crate's code that returns a
/// `Result` whose error is a bare `String`: `file:line`.
fn public_string_errors(files: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        if is_test_file(file) {
            continue;
        }
        let code = code_of(file);
        // A signature may run over several lines: read each from `pub fn` to its `{`.
        for (i, line) in code.lines().enumerate() {
            let t = line.trim_start();
            if !(t.starts_with("pub fn ") || t.starts_with("pub async fn ")) {
                continue;
            }
            let signature: String = code.lines().skip(i).take(12).collect::<Vec<_>>().join(" ");
            let signature = signature.split('{').next().unwrap_or_default();
            let compact: String = signature.split_whitespace().collect();
            if compact.contains(",String>") && compact.contains("Result<") {
                found.push(format!("{}:{}", file.display(), i + 1));
            }
        }
    }
    found
}

#[test]
fn no_public_function_returns_a_bare_string_error() {
    let files: Vec<PathBuf> = roots().iter().flat_map(|r| rust_files(r)).collect();
    let found = public_string_errors(&files);
    assert!(
        found.is_empty(),
        "a public function returns Result<_, String>; give its errors a typed enum:\n{}",
        found.join("\n")
    );
    // The reader sees what it is for: a signature over several lines, async or not.
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe.rs");
    std::fs::write(
        &probe,
        "//! probe\npub async fn f(\n    a: u8,\n) -> Result<u8, String> {\n    Ok(a)\n}\npub(crate) fn g() -> Result<(), String> {\n    Ok(())\n}\n",
    )
    .unwrap();
    assert_eq!(
        public_string_errors(std::slice::from_ref(&probe)).len(),
        1,
        "only the pub one"
    );
}
