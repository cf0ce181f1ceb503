//! The soul: soul/default.md parsed into a typed Soul (personality and per-tool lines),
//! and build_system_prompt(register, mode, tools). STUB: replaced by the soul helper.

use crate::protocol::{Mode, Register, SayKind};
use crate::tools::ToolSpec;

/// Her personality and per-tool voice lines.
#[derive(Debug, Clone, Default)]
pub struct Soul {
    /// The personality prose.
    pub personality: String,
}

impl Soul {
    /// The soul shipped in the binary.
    pub fn shipped() -> Soul {
        Soul { personality: String::new() }
    }

    /// The soul's line of `kind` for `tool`, if it has one (wins over the tool's).
    pub fn line(&self, _tool: &str, _kind: SayKind) -> Option<&str> {
        None
    }

    /// The soul's heartbeat lines for `tool`, if it has any.
    pub fn heartbeats(&self, _tool: &str) -> Option<&[String]> {
        None
    }
}

/// The system prompt for a register and mode, describing only the tools offered.
pub fn build_system_prompt(soul: &Soul, register: Register, _mode: Mode, _tools: &[&ToolSpec]) -> String {
    let _ = register;
    soul.personality.clone()
}
