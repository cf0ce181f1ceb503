//! The file family: `read_file` (paged), `search_files` (time-boxed) and `write_file`,
//! all confined to the workspace folder by [`resolve_in_workspace`], which other tools
//! may reuse. Paths leaving the workspace (`..`, absolute, symlinks) are refused.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use regex::{Regex, RegexBuilder};
use serde_json::{json, Value};

pub use kotoba_core::confine::resolve_in_workspace;

use super::args::{opt_str, opt_u64, req_str};
use super::{Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{ArtifactChange, Frame, Mode, Risk};

/// Most lines one `read_file` page shows.
pub const PAGE_LINES: usize = 400;
/// Most characters one `read_file` page shows.
pub const PAGE_CHARS: usize = 8000;
/// Most matches `search_files` returns.
pub const MAX_MATCHES: usize = 80;
/// Largest content `write_file` accepts, in bytes (5 MB).
pub const MAX_WRITE_BYTES: usize = 5 * 1024 * 1024;
/// Folders `search_files` never walks into.
pub const SKIP_DIRS: [&str; 3] = [".git", "target", "node_modules"];
/// Files larger than this are not searched.
const MAX_SEARCH_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// `real` shown relative to the workspace (`.` for the workspace itself).
pub(crate) fn display_rel(workspace: &Path, real: &Path) -> String {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    match real.strip_prefix(&root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => real.display().to_string(),
    }
}

// ---------------------------------------------------------------- read_file

/// Reads a text file from the workspace, a page at a time with numbered lines.
#[derive(Debug, Clone)]
pub struct ReadFile {
    spec: ToolSpec,
}

impl Default for ReadFile {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadFile {
    /// The tool with its spec.
    pub fn new() -> Self {
        let description = format!(
            "Read a text file in the workspace. Lines come numbered, at most {PAGE_LINES} lines \
             or {PAGE_CHARS} characters a page; when more follows you are told the offset to \
             ask for next. 'offset' is the first line to show (1-based)."
        );
        ReadFile {
            spec: ToolSpec::plain(
                "read_file",
                &description,
                "file",
                Risk::Read,
                ToolLines::of(
                    "Let me have a look at that file.",
                    &["Still reading.", "Almost through it."],
                    "Got it.",
                    "I couldn't read that file.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File path inside the workspace."},
                        "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based, default 1)."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": PAGE_LINES, "description": "Most lines to show (default and max 400)."}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

/// One page of a file.
struct Page {
    text: String,
    first: usize,
    last: usize,
    total: usize,
}

fn read_page(path: &Path, offset: usize, limit: usize) -> std::io::Result<Page> {
    let mut reader = BufReader::new(std::fs::File::open(path)?);
    let mut text = String::new();
    let mut buf = Vec::new();
    let (mut total, mut last, mut full) = (0usize, 0usize, false);
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        total += 1;
        if total < offset || full {
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        let mut entry = format!("{total:>6}\t{line}\n");
        let used = text.chars().count();
        if used + entry.chars().count() > PAGE_CHARS {
            if last == 0 {
                // A single line longer than a page: show its start.
                entry = super::clip_chars(&entry, PAGE_CHARS.saturating_sub(20));
                entry.push_str(" [line clipped]\n");
            } else {
                full = true;
                continue;
            }
        }
        text.push_str(&entry);
        last = total;
        if last + 1 - offset >= limit {
            full = true;
        }
    }
    Ok(Page {
        text,
        first: offset,
        last,
        total,
    })
}

#[async_trait]
impl Tool for ReadFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let path = match req_str(&args, "path", "read_file") {
            Ok(p) => p,
            Err(r) => return r,
        };
        let (offset, limit) = match (
            opt_u64(&args, "offset", "read_file"),
            opt_u64(&args, "limit", "read_file"),
        ) {
            (Ok(o), Ok(l)) => (o.unwrap_or(1).max(1), l.unwrap_or(PAGE_LINES as u64)),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(limit)
            .unwrap_or(PAGE_LINES)
            .clamp(1, PAGE_LINES);
        let ws = &ctx.paths.workspace;
        let real = match resolve_in_workspace(ws, path) {
            Ok(r) => r,
            Err(why) => return ToolOutput::refused(format!("read_file: {why}; nothing was read.")),
        };
        if real.is_dir() {
            return ToolOutput::failed(format!(
                "read_file: '{path}' is a folder, not a file. Use search_files or shell ls."
            ));
        }
        let job = real.clone();
        let page = match tokio::task::spawn_blocking(move || read_page(&job, offset, limit)).await {
            Ok(Ok(page)) => page,
            Ok(Err(e)) => {
                return ToolOutput::failed(format!("read_file: cannot read '{path}': {e}."))
            }
            Err(e) => return ToolOutput::failed(format!("read_file: the read was cut off: {e}.")),
        };
        let shown = display_rel(ws, &real);
        if page.total == 0 {
            return ToolOutput::ok(format!("{shown} is empty."));
        }
        if page.last == 0 {
            return ToolOutput::ok(format!(
                "{shown} has {} lines; offset {} is past the end.",
                page.total, page.first
            ));
        }
        let mut text = page.text;
        if page.last < page.total {
            text.push_str(&format!(
                "[lines {}-{} of {} shown; more follows: call read_file with offset {}]",
                page.first,
                page.last,
                page.total,
                page.last + 1
            ));
        } else {
            text.push_str(&format!("[end of file, {} lines]", page.total));
        }
        ToolOutput::ok(text)
    }
}

// ---------------------------------------------------------------- search_files

/// Searches file contents in the workspace for a pattern, time-boxed by mode.
#[derive(Debug, Clone)]
pub struct SearchFiles {
    spec: ToolSpec,
}

impl Default for SearchFiles {
    fn default() -> Self {
        Self::new()
    }
}

impl SearchFiles {
    /// The tool with its spec.
    pub fn new() -> Self {
        let description = format!(
            "Search the text of files in the workspace. 'pattern' is a regular expression (an \
             invalid one is searched as plain text; all-lowercase ignores case). 'path' limits \
             it to a folder or file, 'glob' to file names like '*.rs'. Returns up to \
             {MAX_MATCHES} matches as 'path:line: text'. Skips .git, target and node_modules."
        );
        SearchFiles {
            spec: ToolSpec::plain(
                "search_files",
                &description,
                "file",
                Risk::Read,
                ToolLines::of(
                    "Let me dig through the files.",
                    &["Still searching.", "Lots of files, still looking."],
                    "Found what there was to find.",
                    "The search didn't work.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "description": "Regex or plain text to find."},
                        "path": {"type": "string", "description": "Folder or file inside the workspace (default: all of it)."},
                        "glob": {"type": "string", "description": "File name filter with * and ?, e.g. '*.py'."}
                    },
                    "required": ["pattern"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

/// Match `name` against a glob with `*` (any run of characters) and `?` (one character).
pub fn glob_match(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    let (mut gi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == n[ni]) {
            gi += 1;
            ni += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ni;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|c| *c == '*')
}

fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    let ignore_case = !pattern.chars().any(char::is_uppercase);
    RegexBuilder::new(pattern)
        .case_insensitive(ignore_case)
        .build()
        .or_else(|_| {
            RegexBuilder::new(&regex::escape(pattern))
                .case_insensitive(ignore_case)
                .build()
        })
}

/// What a walk found.
struct Found {
    hits: Vec<String>,
    truncated: bool,
    out_of_time: bool,
}

struct Walk<'a> {
    root: &'a Path,
    re: &'a Regex,
    glob: Option<&'a str>,
    deadline: Instant,
    found: Found,
}

impl Walk<'_> {
    fn stop(&mut self) -> bool {
        if self.found.truncated || self.found.out_of_time {
            return true;
        }
        if Instant::now() >= self.deadline {
            self.found.out_of_time = true;
        }
        self.found.out_of_time
    }

    fn dir(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if self.stop() {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                let name = entry.file_name();
                if !SKIP_DIRS.iter().any(|s| name.as_os_str() == *s) {
                    self.dir(&path);
                }
            } else if kind.is_file() {
                self.file(&path);
            } // Symlinks are not followed: they could lead out of the workspace.
        }
    }

    fn file(&mut self, path: &Path) {
        if let Some(glob) = self.glob {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            let rel = path
                .strip_prefix(self.root)
                .unwrap_or(path)
                .to_string_lossy();
            if !glob_match(glob, &name) && !glob_match(glob, &rel) {
                return;
            }
        }
        let Ok(file) = std::fs::File::open(path) else {
            return;
        };
        if file
            .metadata()
            .map(|m| m.len() > MAX_SEARCH_FILE_BYTES)
            .unwrap_or(true)
        {
            return;
        }
        let mut bytes = Vec::new();
        if BufReader::new(file).read_to_end(&mut bytes).is_err()
            || bytes[..bytes.len().min(8192)].contains(&0)
        {
            return; // Unreadable or binary.
        }
        let text = String::from_utf8_lossy(&bytes);
        let rel = path
            .strip_prefix(self.root)
            .unwrap_or(path)
            .display()
            .to_string();
        for (i, line) in text.lines().enumerate() {
            if self.re.is_match(line) {
                if self.found.hits.len() >= MAX_MATCHES {
                    self.found.truncated = true;
                    return;
                }
                let line = super::clip_chars(line.trim(), 200);
                self.found.hits.push(format!("{rel}:{}: {line}", i + 1));
            }
        }
    }
}

/// How long one search may walk: 5 s in a conversation, 20 s in a background job.
pub fn search_budget(mode: Mode) -> Duration {
    match mode {
        Mode::Work => Duration::from_secs(20),
        Mode::Companion => Duration::from_secs(5),
    }
}

#[async_trait]
impl Tool for SearchFiles {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (pattern, path, glob) = match (
            req_str(&args, "pattern", "search_files"),
            opt_str(&args, "path", "search_files"),
            opt_str(&args, "glob", "search_files"),
        ) {
            (Ok(p), Ok(d), Ok(g)) => (p.to_string(), d.unwrap_or("."), g.map(str::to_string)),
            (Err(r), _, _) | (_, Err(r), _) | (_, _, Err(r)) => return r,
        };
        if pattern.is_empty() {
            return ToolOutput::refused("search_files: argument 'pattern' is empty. Nothing ran.");
        }
        let re = match build_regex(&pattern) {
            Ok(re) => re,
            Err(e) => {
                return ToolOutput::refused(format!("search_files: bad pattern: {e}. Nothing ran."))
            }
        };
        let ws = ctx.paths.workspace.clone();
        let start = match resolve_in_workspace(&ws, path) {
            Ok(r) => r,
            Err(why) => {
                return ToolOutput::refused(format!("search_files: {why}; nothing was read."))
            }
        };
        if !start.exists() {
            return ToolOutput::failed(format!("search_files: '{path}' does not exist."));
        }
        let budget = search_budget(ctx.turn.mode);
        let root = ws.canonicalize().unwrap_or_else(|_| ws.clone());
        let job = tokio::task::spawn_blocking(move || {
            let mut walk = Walk {
                root: &root,
                re: &re,
                glob: glob.as_deref(),
                deadline: Instant::now() + budget,
                found: Found {
                    hits: Vec::new(),
                    truncated: false,
                    out_of_time: false,
                },
            };
            if start.is_dir() {
                walk.dir(&start);
            } else {
                walk.file(&start);
            }
            walk.found
        });
        // The walk checks its own deadline; this is the backstop if one read hangs.
        let found = match tokio::time::timeout(budget + Duration::from_secs(2), job).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                return ToolOutput::failed(format!("search_files: the search failed: {e}."))
            }
            Err(_) => {
                return ToolOutput::failed(format!(
                    "search_files: the search took longer than {} s and was stopped.",
                    budget.as_secs()
                ))
            }
        };
        let mut text = if found.hits.is_empty() {
            format!("No matches for '{pattern}' in {path}.")
        } else {
            found.hits.join("\n")
        };
        if found.truncated {
            text.push_str(&format!(
                "\n[stopped at {MAX_MATCHES} matches; there are more — narrow the pattern, path or glob]"
            ));
        }
        if found.out_of_time {
            text.push_str(&format!(
                "\n[the search stopped after {} s; results are partial — narrow the path]",
                budget.as_secs()
            ));
        }
        ToolOutput::ok(text)
    }
}

// ---------------------------------------------------------------- write_file

/// Creates or replaces a file in the workspace.
#[derive(Debug, Clone)]
pub struct WriteFile {
    spec: ToolSpec,
}

impl Default for WriteFile {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteFile {
    /// The tool with its spec.
    pub fn new() -> Self {
        WriteFile {
            spec: ToolSpec::plain(
                "write_file",
                "Write a whole file in the workspace (created or replaced; parent folders are \
                 made). At most 5 MB of content.",
                "file",
                Risk::Write,
                ToolLines::of(
                    "Let me write that down in a file.",
                    &["Still writing.", "Nearly saved."],
                    "Saved.",
                    "I couldn't save that file.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File path inside the workspace."},
                        "content": {"type": "string", "description": "The file's entire new content."}
                    },
                    "required": ["path", "content"],
                    "additionalProperties": false
                }),
            ),
        }
    }
}

#[async_trait]
impl Tool for WriteFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (path, content) = match (
            req_str(&args, "path", "write_file"),
            req_str(&args, "content", "write_file"),
        ) {
            (Ok(p), Ok(c)) => (p, c),
            (Err(r), _) | (_, Err(r)) => return r,
        };
        if content.len() > MAX_WRITE_BYTES {
            return ToolOutput::refused(format!(
                "write_file: the content is {} bytes, above the limit of {MAX_WRITE_BYTES} bytes \
                 (5 MB); nothing was written. Split it into smaller files.",
                content.len()
            ));
        }
        let ws = &ctx.paths.workspace;
        if let Err(e) = tokio::fs::create_dir_all(ws).await {
            return ToolOutput::failed(format!(
                "write_file: cannot create the workspace {}: {e}; nothing was written.",
                ws.display()
            ));
        }
        let real = match resolve_in_workspace(ws, path) {
            Ok(r) => r,
            Err(why) => {
                return ToolOutput::refused(format!("write_file: {why}; nothing was written."))
            }
        };
        if real.is_dir() {
            return ToolOutput::failed(format!(
                "write_file: '{path}' is a folder; nothing was written."
            ));
        }
        let existed = real.exists();
        if let Some(parent) = real.parent() {
            if let Err(e) = tokio::fs::create_dir_all(parent).await {
                return ToolOutput::failed(format!(
                    "write_file: cannot create the folder for '{path}': {e}; nothing was written."
                ));
            }
        }
        if let Err(e) = tokio::fs::write(&real, content).await {
            return ToolOutput::failed(format!("write_file: cannot write '{path}': {e}."));
        }
        let (verb, change) = if existed {
            ("edited", ArtifactChange::Edited)
        } else {
            ("created", ArtifactChange::Created)
        };
        let shown = display_rel(ws, &real);
        ctx.emit(Frame::Artifact {
            path: shown.clone(),
            change,
        });
        ToolOutput::ok(format!("{verb} {shown} ({} bytes)", content.len()))
    }
}

#[cfg(test)]
mod tests;
