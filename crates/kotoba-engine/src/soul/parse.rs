//! The soul file's parser: Markdown-shaped text (soul/README.md) into personality prose
//! and per-tool lines. Strict about what it does not understand, reporting the line.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::tools::ToolLines;

/// Why a soul file was not accepted. Every variant but `Unreadable` names the 1-based
/// line it found the problem on; the caller falls back to the shipped soul.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SoulError {
    /// A `<!--` that is never closed by `-->`.
    #[error("line {line}: a comment opened here is never closed with -->")]
    UnclosedComment {
        /// Where the comment opens.
        line: usize,
    },
    /// A `## ` heading other than `## Personality` or `## Lines`.
    #[error("line {line}: unknown section \"{name}\" (expected Personality or Lines)")]
    UnknownSection {
        /// Where the heading is.
        line: usize,
        /// The heading's text.
        name: String,
    },
    /// A section heading that appears twice.
    #[error("line {line}: section \"{name}\" appears twice")]
    DuplicateSection {
        /// Where the second heading is.
        line: usize,
        /// The heading's text.
        name: String,
    },
    /// Text before the first section (only the `# title` line may stand there).
    #[error("line {line}: text outside any section (start with ## Personality)")]
    OutsideSection {
        /// Where the stray text is.
        line: usize,
    },
    /// A `### tool` heading outside `## Lines`.
    #[error("line {line}: a ### tool heading belongs under ## Lines")]
    ToolOutsideLines {
        /// Where the heading is.
        line: usize,
    },
    /// A `key: value` line under `## Lines` before any `### tool` heading.
    #[error("line {line}: a line outside a tool section (add a ### tool heading above it)")]
    LineOutsideTool {
        /// Where the line is.
        line: usize,
    },
    /// A `### ` heading whose name is not a tool name (letters, digits, `_`, `-`, `:`).
    #[error("line {line}: \"{name}\" is not a tool name")]
    BadToolName {
        /// Where the heading is.
        line: usize,
        /// The heading's text.
        name: String,
    },
    /// The same tool given two sections.
    #[error("line {line}: tool \"{tool}\" already has a section")]
    DuplicateTool {
        /// Where the second heading is.
        line: usize,
        /// The tool.
        tool: String,
    },
    /// A line under a tool that is not `key: value`.
    #[error("line {line}: expected \"key: value\"")]
    NotKeyValue {
        /// Where the line is.
        line: usize,
    },
    /// A key other than announce, heartbeat, after, fail.
    #[error("line {line}: unknown key \"{key}\" (expected announce, heartbeat, after or fail)")]
    UnknownKey {
        /// Where the line is.
        line: usize,
        /// The key as written.
        key: String,
    },
    /// A key with nothing after the colon.
    #[error("line {line}: \"{key}\" has no text")]
    EmptyValue {
        /// Where the line is.
        line: usize,
        /// The key.
        key: String,
    },
    /// announce, after or fail given twice for one tool (heartbeat may repeat).
    #[error("line {line}: \"{key}\" is already set for this tool")]
    DuplicateKey {
        /// Where the second one is.
        line: usize,
        /// The key.
        key: String,
    },
    /// A line holding markup or an emoji, which a voice would read out or stumble on.
    #[error("line {line}: lines are spoken aloud, so {found:?} cannot be in one")]
    Unspeakable {
        /// Where the line is.
        line: usize,
        /// The offending character.
        found: char,
    },
    /// No `## Personality` section, or an empty one.
    #[error("line {line}: the soul has no personality text")]
    NoPersonality {
        /// The section's heading line, or the last line when there is none.
        line: usize,
    },
    /// The file exists but could not be read (reported by `Soul::load`, never by parse).
    #[error("the soul file could not be read: {0}")]
    Unreadable(String),
}

impl SoulError {
    /// The 1-based line the problem is on (`None` for an unreadable file).
    pub fn line(&self) -> Option<usize> {
        use SoulError::*;
        match self {
            UnclosedComment { line }
            | UnknownSection { line, .. }
            | DuplicateSection { line, .. }
            | OutsideSection { line }
            | ToolOutsideLines { line }
            | LineOutsideTool { line }
            | BadToolName { line, .. }
            | DuplicateTool { line, .. }
            | NotKeyValue { line }
            | UnknownKey { line, .. }
            | EmptyValue { line, .. }
            | DuplicateKey { line, .. }
            | Unspeakable { line, .. }
            | NoPersonality { line } => Some(*line),
            Unreadable(_) => None,
        }
    }
}

/// What the parser hands back: personality prose and lines per tool.
pub(super) struct Parsed {
    pub personality: String,
    pub lines: BTreeMap<String, ToolLines>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Preamble,
    Personality,
    Lines,
}

/// Parse a soul file (format: soul/README.md).
pub(super) fn parse(text: &str) -> Result<Parsed, SoulError> {
    let lines = strip_comments(text)?;
    let mut section = Section::Preamble;
    let mut seen_personality: Option<usize> = None;
    let mut seen_lines = false;
    let mut prose: Vec<&str> = Vec::new();
    let mut tools: BTreeMap<String, ToolLines> = BTreeMap::new();
    let mut current: Option<String> = None;

    for (index, raw) in lines.iter().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if let Some(name) = trimmed.strip_prefix("## ") {
            let name = name.trim();
            section = match name {
                "Personality" if seen_personality.is_none() => {
                    seen_personality = Some(line);
                    Section::Personality
                }
                "Lines" if !seen_lines => {
                    seen_lines = true;
                    current = None;
                    Section::Lines
                }
                "Personality" | "Lines" => {
                    return Err(SoulError::DuplicateSection {
                        line,
                        name: name.to_string(),
                    })
                }
                _ => {
                    return Err(SoulError::UnknownSection {
                        line,
                        name: name.to_string(),
                    })
                }
            };
            continue;
        }
        match section {
            Section::Preamble => {
                let is_title = trimmed.starts_with("# ");
                if !(trimmed.is_empty() || (is_title && line_is_first_text(&lines, index))) {
                    return Err(SoulError::OutsideSection { line });
                }
            }
            Section::Personality => {
                if trimmed.starts_with("### ") {
                    return Err(SoulError::ToolOutsideLines { line });
                }
                prose.push(raw.trim_end());
            }
            Section::Lines => {
                if trimmed.is_empty() {
                    continue;
                }
                if let Some(name) = trimmed.strip_prefix("### ") {
                    let name = name.trim();
                    if !is_tool_name(name) {
                        return Err(SoulError::BadToolName {
                            line,
                            name: name.to_string(),
                        });
                    }
                    if tools.contains_key(name) {
                        return Err(SoulError::DuplicateTool {
                            line,
                            tool: name.to_string(),
                        });
                    }
                    tools.insert(name.to_string(), ToolLines::default());
                    current = Some(name.to_string());
                    continue;
                }
                let Some(tool) = current.as_ref().and_then(|t| tools.get_mut(t)) else {
                    return Err(SoulError::LineOutsideTool { line });
                };
                key_value(tool, trimmed, line)?;
            }
        }
    }

    let personality = join_prose(&prose);
    match seen_personality {
        Some(_) if !personality.is_empty() => Ok(Parsed {
            personality,
            lines: tools,
        }),
        Some(line) => Err(SoulError::NoPersonality { line }),
        None => Err(SoulError::NoPersonality {
            line: lines.len().max(1),
        }),
    }
}

/// Apply one `key: value` line to a tool's lines.
fn key_value(tool: &mut ToolLines, text: &str, line: usize) -> Result<(), SoulError> {
    let Some((key, value)) = text.split_once(':') else {
        return Err(SoulError::NotKeyValue { line });
    };
    let key = key.trim();
    let value = value.trim();
    if !matches!(key, "announce" | "heartbeat" | "after" | "fail") {
        return Err(SoulError::UnknownKey {
            line,
            key: key.to_string(),
        });
    }
    if value.is_empty() {
        return Err(SoulError::EmptyValue {
            line,
            key: key.to_string(),
        });
    }
    if let Some(found) = value.chars().find(|c| !speakable(*c)) {
        return Err(SoulError::Unspeakable { line, found });
    }
    let slot = match key {
        "announce" => &mut tool.announce,
        "after" => &mut tool.after,
        "fail" => &mut tool.fail,
        _ => {
            tool.heartbeat.push(value.to_string());
            return Ok(());
        }
    };
    if slot.is_some() {
        return Err(SoulError::DuplicateKey {
            line,
            key: key.to_string(),
        });
    }
    *slot = Some(value.to_string());
    Ok(())
}

/// Replace every `<!-- … -->` with nothing, keeping the line count so errors name the
/// line as the author sees it in an editor.
fn strip_comments(text: &str) -> Result<Vec<String>, SoulError> {
    let mut out = Vec::new();
    let mut open_at: Option<usize> = None;
    for (index, raw) in text.lines().enumerate() {
        let mut kept = String::new();
        let mut rest = raw;
        loop {
            if open_at.is_some() {
                match rest.find("-->") {
                    Some(end) => {
                        open_at = None;
                        rest = &rest[end + 3..];
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(start) => {
                        kept.push_str(&rest[..start]);
                        open_at = Some(index + 1);
                        rest = &rest[start + 4..];
                    }
                    None => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push(kept);
    }
    match open_at {
        Some(line) => Err(SoulError::UnclosedComment { line }),
        None => Ok(out),
    }
}

/// True when no non-blank line comes before `index` (so a `# title` is the first text).
fn line_is_first_text(lines: &[String], index: usize) -> bool {
    lines[..index].iter().all(|l| l.trim().is_empty())
}

/// Tool names as the registry spells them, MCP names (`browser__navigate`) included.
fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':'))
}

/// Characters a voice can say: no markup a reader would see as symbols, no emoji.
fn speakable(c: char) -> bool {
    let markup = matches!(c, '*' | '`' | '#' | '[' | ']' | '<' | '>' | '|' | '_' | '~');
    let emoji = matches!(u32::from(c),
        0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0xFE00..=0xFE0F | 0x200D);
    !(markup || emoji || c.is_control())
}

/// The personality prose with outer blank lines dropped and inner runs of blank lines
/// folded to one, so comment removal leaves no holes.
fn join_prose(prose: &[&str]) -> String {
    let mut out = String::new();
    let mut blank_pending = false;
    for line in prose {
        if line.trim().is_empty() {
            blank_pending = !out.is_empty();
            continue;
        }
        if blank_pending {
            out.push_str("\n\n");
            blank_pending = false;
        } else if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}
