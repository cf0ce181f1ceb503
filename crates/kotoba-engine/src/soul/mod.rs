//! The soul: soul/default.md (or the owner's `<home>/soul.md`) parsed into a typed
//! [`Soul`] — her personality and her per-tool spoken lines — and
//! [`build_system_prompt`], which turns it into the system prompt for a register, a
//! mode and the tools actually offered. Read at start-up; the engine asks it for lines.

use std::collections::BTreeMap;
use std::path::Path;

use crate::tools::{ToolLines, ToolSpec};
use kotoba_core::protocol::SayKind;

mod parse;
mod prompt;
#[cfg(test)]
mod tests;

pub use parse::SoulError;
pub use prompt::{build_system_prompt, realtime_instructions};

/// The soul file compiled into the binary.
pub const SHIPPED_SOUL: &str = include_str!("../../../../soul/default.md");

/// The file name of an owner's override inside the data folder.
pub const OVERRIDE_FILE: &str = "soul.md";

/// Her personality and per-tool voice lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Soul {
    /// The personality prose (the `## Personality` section, comments removed).
    pub personality: String,
    /// Per-tool lines from the `## Lines` section, by tool name.
    lines: BTreeMap<String, ToolLines>,
}

impl Soul {
    /// The soul shipped in the binary. Its parse is pinned by a test; should it ever
    /// fail anyway, she keeps a one-sentence personality and no lines rather than stop.
    pub fn shipped() -> Soul {
        match Soul::parse(SHIPPED_SOUL) {
            Ok(soul) => soul,
            Err(err) => {
                tracing::error!(%err, "the shipped soul file does not parse");
                Soul {
                    personality: "You are Kotoba, a warm, quick and candid companion.".into(),
                    lines: BTreeMap::new(),
                }
            }
        }
    }

    /// `<home>/soul.md` if present and valid, else the shipped soul. A file that does
    /// not parse logs a warning naming the line and falls back.
    pub fn load(home: &Path) -> Soul {
        Soul::load_reporting(home).0
    }

    /// Like [`Soul::load`], also handing back the problem that made it fall back
    /// (`None` when the override was used or there was none).
    pub fn load_reporting(home: &Path) -> (Soul, Option<SoulError>) {
        let path = home.join(OVERRIDE_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                tracing::debug!(path = %path.display(), "no soul override; using the shipped soul");
                return (Soul::shipped(), None);
            }
            Err(err) => {
                let err = SoulError::Unreadable(err.to_string());
                tracing::warn!(path = %path.display(), %err, "using the shipped soul instead");
                return (Soul::shipped(), Some(err));
            }
        };
        match Soul::parse(&text) {
            Ok(soul) => {
                tracing::info!(path = %path.display(), "using the soul override");
                (soul, None)
            }
            Err(err) => {
                tracing::warn!(
                    path = %path.display(),
                    line = err.line(),
                    %err,
                    "the soul override does not parse; using the shipped soul instead"
                );
                (Soul::shipped(), Some(err))
            }
        }
    }

    /// Parse a soul file (format: soul/README.md).
    pub fn parse(text: &str) -> Result<Soul, SoulError> {
        let parsed = parse::parse(text)?;
        Ok(Soul {
            personality: parsed.personality,
            lines: parsed.lines,
        })
    }

    /// The soul's line of `kind` for `tool`, if it has one (for `Heartbeat`: the first).
    pub fn line(&self, tool: &str, kind: SayKind) -> Option<&str> {
        let lines = self.lines.get(tool)?;
        match kind {
            SayKind::Announce => lines.announce.as_deref(),
            SayKind::Heartbeat => lines.heartbeat.first().map(String::as_str),
            SayKind::After => lines.after.as_deref(),
            SayKind::Fail => lines.fail.as_deref(),
        }
    }

    /// The soul's heartbeat lines for `tool`, in order, if it has any.
    pub fn heartbeats(&self, tool: &str) -> Option<&[String]> {
        let beats = &self.lines.get(tool)?.heartbeat;
        (!beats.is_empty()).then_some(beats.as_slice())
    }

    /// The line she says: the soul's when it has one, else the tool's own default
    /// (the soul line wins over the tool line).
    pub fn line_or_default<'a>(&'a self, spec: &'a ToolSpec, kind: SayKind) -> Option<&'a str> {
        self.line(&spec.name, kind).or_else(|| match kind {
            SayKind::Announce => spec.lines.announce.as_deref(),
            SayKind::Heartbeat => spec.lines.heartbeat.first().map(String::as_str),
            SayKind::After => spec.lines.after.as_deref(),
            SayKind::Fail => spec.lines.fail.as_deref(),
        })
    }

    /// The heartbeat lines she says: the soul's when it has any, else the tool's own.
    pub fn heartbeats_or_default<'a>(&'a self, spec: &'a ToolSpec) -> &'a [String] {
        self.heartbeats(&spec.name)
            .unwrap_or(spec.lines.heartbeat.as_slice())
    }

    /// The tools the soul has lines for, in name order.
    pub fn tools_with_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.keys().map(String::as_str)
    }
}
