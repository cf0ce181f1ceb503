//! `patch` (file family): replace one passage of a workspace file. The passage must
//! occur exactly once, matched exactly or, failing that, line by line ignoring
//! whitespace; zero or several matches are refused with the count. Confined to the
//! workspace by [`resolve_in_workspace`]; emits an artifact frame "edited".

use std::ops::Range;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::req_str;
use super::files::{display_rel, resolve_in_workspace, MAX_WRITE_BYTES};
use super::Behaviour;
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{ArtifactChange, Frame, Risk, StepKind};

/// Where the passage is, or how many times it was found when that is not once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Exactly once, at this byte range of the file.
    Once(Range<usize>),
    /// Not exactly once: the count (0, or 2 and more), and whether the count is of the
    /// whitespace-tolerant match.
    Not {
        /// How many times.
        count: usize,
        /// True when no exact match existed and the count is the tolerant one.
        tolerant: bool,
    },
}

fn squash(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Find `old` in `content`: exactly, else line by line with whitespace collapsed.
pub fn find_unique(content: &str, old: &str) -> Found {
    let exact: Vec<usize> = content.match_indices(old).map(|(i, _)| i).collect();
    match exact.len() {
        1 => return Found::Once(exact[0]..exact[0] + old.len()),
        0 => {}
        n => {
            return Found::Not {
                count: n,
                tolerant: false,
            }
        }
    }
    let want: Vec<String> = old.trim_matches('\n').lines().map(squash).collect();
    if want.iter().all(String::is_empty) {
        return Found::Not {
            count: 0,
            tolerant: true,
        };
    }
    // Each line of the file with its byte range (without the line break).
    let mut lines: Vec<(Range<usize>, String)> = Vec::new();
    let mut start = 0;
    for piece in content.split_inclusive('\n') {
        let body = piece.trim_end_matches(['\n', '\r']);
        lines.push((start..start + body.len(), squash(body)));
        start += piece.len();
    }
    let starts: Vec<usize> = (0..lines.len().saturating_sub(want.len() - 1))
        .filter(|&i| want.iter().enumerate().all(|(k, w)| lines[i + k].1 == *w))
        .collect();
    match starts.as_slice() {
        [i] => Found::Once(lines[*i].0.start..lines[*i + want.len() - 1].0.end),
        other => Found::Not {
            count: other.len(),
            tolerant: true,
        },
    }
}

/// Replaces one unique passage of a file in the workspace.
#[derive(Debug, Clone)]
pub struct Patch {
    spec: ToolSpec,
}

impl Default for Patch {
    fn default() -> Self {
        Self::new()
    }
}

impl Patch {
    /// The tool with its spec.
    pub fn new() -> Self {
        Patch {
            spec: ToolSpec {
                name: "patch".into(),
                description: "Edit a file in the workspace: replace 'old_string' with \
                    'new_string'. 'old_string' must occur exactly once (an exact match, or \
                    else the same lines ignoring whitespace); include a few surrounding lines \
                    to make it unique. Read the file first."
                    .into(),
                family: "file".into(),
                risk: Risk::Write,
                step_kind: StepKind::for_tool("patch"),
                timeout: None,
                takes_timeout_arg: false,
                scope: Scope::Both,
                lines: ToolLines::of(
                    "Let me fix that in the file.",
                    &["Still editing.", "Nearly done with the edit."],
                    "Edited.",
                    "I couldn't edit that file.",
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File path inside the workspace."},
                        "old_string": {"type": "string", "description": "The passage to replace, as it is in the file."},
                        "new_string": {"type": "string", "description": "What to put in its place."}
                    },
                    "required": ["path", "old_string", "new_string"],
                    "additionalProperties": false
                }),
                behaviour: Behaviour::default(),
            },
        }
    }
}

#[async_trait]
impl Tool for Patch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let (path, old, new) = match (
            req_str(&args, "path", "patch"),
            req_str(&args, "old_string", "patch"),
            req_str(&args, "new_string", "patch"),
        ) {
            (Ok(p), Ok(o), Ok(n)) => (p, o, n),
            (Err(r), _, _) | (_, Err(r), _) | (_, _, Err(r)) => return r,
        };
        if old.is_empty() {
            return ToolOutput::refused(
                "patch: 'old_string' is empty; nothing changed. To write a whole file use write_file.",
            );
        }
        let ws = &ctx.paths.workspace;
        let real = match resolve_in_workspace(ws, path) {
            Ok(r) => r,
            Err(why) => return ToolOutput::refused(format!("patch: {why}; nothing changed.")),
        };
        let content = match tokio::fs::read(&real).await {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => {
                    return ToolOutput::failed(format!(
                        "patch: '{path}' is not UTF-8 text; nothing changed."
                    ))
                }
            },
            Err(e) => return ToolOutput::failed(format!("patch: cannot read '{path}': {e}.")),
        };
        let range = match find_unique(&content, old) {
            Found::Once(range) => range,
            Found::Not { count, tolerant } => {
                let how = if tolerant {
                    " (also comparing lines with whitespace ignored)"
                } else {
                    ""
                };
                let advice = if count == 0 {
                    "Read the file and copy the passage as it is."
                } else {
                    "Add surrounding lines to 'old_string' so it matches only one place."
                };
                return ToolOutput::refused(format!(
                    "patch: 'old_string' was found {count} times in '{path}'{how}; it must match \
                     exactly once, so nothing changed. {advice}"
                ));
            }
        };
        let mut edited = String::with_capacity(content.len() + new.len());
        edited.push_str(&content[..range.start]);
        edited.push_str(new);
        edited.push_str(&content[range.end..]);
        if edited.len() > MAX_WRITE_BYTES {
            return ToolOutput::refused(format!(
                "patch: the edited file would be {} bytes, above the limit of {MAX_WRITE_BYTES}; \
                 nothing changed.",
                edited.len()
            ));
        }
        if let Err(e) = tokio::fs::write(&real, &edited).await {
            return ToolOutput::failed(format!("patch: cannot write '{path}': {e}."));
        }
        let shown = display_rel(ws, &real);
        ctx.emit(Frame::Artifact {
            path: shown.clone(),
            change: ArtifactChange::Edited,
        });
        let line = content[..range.start].matches('\n').count() + 1;
        ToolOutput::ok(format!(
            "edited {shown} at line {line}: {} lines replaced by {}",
            content[range].lines().count().max(1),
            new.lines().count()
        ))
    }
}

#[cfg(test)]
mod tests;
