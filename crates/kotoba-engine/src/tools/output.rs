//! What a tool hands back: the text the model reads and how the call ended, one of the
//! real endings (ran ok, ran and failed, refused, pending, nothing ran), so the loop
//! decides the outcome from the ending and never from the words.

use kotoba_core::protocol::Ending;

/// How one call ended. Each is a state the loop, the row and the audit trail treat
/// differently; no two can be claimed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It ran and worked (`exit_code`: a process ran and exited 0).
    Ok {
        /// The process's exit code, when one ran.
        exit_code: Option<i32>,
    },
    /// It ran and did not work.
    Failed {
        /// The process's exit code, when one ran (124: stopped at its budget).
        exit_code: Option<i32>,
    },
    /// It never ran: a gate, a person, or the tool's own check of its arguments said no.
    Refused(Ending),
    /// Its card is still waiting (a deferred run): the row stays pending.
    Pending,
    /// It was approved but could not start, so nothing reached the machine: a failure,
    /// and no executed row in the audit trail.
    NothingRan,
}

/// What a tool hands back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// What the model reads (capped by the loop).
    pub text: String,
    /// How the call ended.
    pub ended: Ended,
}

impl ToolOutput {
    /// A call that worked.
    pub fn ok(text: impl Into<String>) -> Self {
        Self::ended(Ended::Ok { exit_code: None }, text)
    }

    /// A call that ran and did not work.
    pub fn failed(text: impl Into<String>) -> Self {
        Self::ended(Ended::Failed { exit_code: None }, text)
    }

    /// The tool refused its own arguments or policy: nothing ran.
    pub fn refused(text: impl Into<String>) -> Self {
        Self::refused_with(Ending::Policy, text)
    }

    /// A refusal with a specific ending.
    pub fn refused_with(ending: Ending, text: impl Into<String>) -> Self {
        Self::ended(Ended::Refused(ending), text)
    }

    /// An approved action that could not start: failed, and nothing reached the machine.
    pub fn not_started(text: impl Into<String>) -> Self {
        Self::ended(Ended::NothingRan, text)
    }

    /// A process that exited with `code`; ok only for 0.
    pub fn exited(code: i32, text: impl Into<String>) -> Self {
        let ended = match code {
            0 => Ended::Ok { exit_code: Some(0) },
            _ => Ended::Failed {
                exit_code: Some(code),
            },
        };
        Self::ended(ended, text)
    }

    /// A deferred run whose card still waits: `text` tells the model so.
    pub fn pending(text: impl Into<String>) -> Self {
        Self::ended(Ended::Pending, text)
    }

    /// An output with this ending.
    pub fn ended(ended: Ended, text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            ended,
        }
    }

    /// Whether it ran and worked.
    pub fn is_ok(&self) -> bool {
        matches!(self.ended, Ended::Ok { .. })
    }

    /// The process's exit code, when one ran.
    pub fn exit_code(&self) -> Option<i32> {
        match self.ended {
            Ended::Ok { exit_code } | Ended::Failed { exit_code } => exit_code,
            _ => None,
        }
    }

    /// The refusal's ending, when it never ran because something said no.
    pub fn refusal(&self) -> Option<Ending> {
        match self.ended {
            Ended::Refused(ending) => Some(ending),
            _ => None,
        }
    }

    /// Whether its card still waits.
    pub fn is_pending(&self) -> bool {
        self.ended == Ended::Pending
    }

    /// Whether nothing reached the machine although it was let through.
    pub fn nothing_ran(&self) -> bool {
        self.ended == Ended::NothingRan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_code_decides_ok_or_failed_and_no_output_is_both() {
        assert!(ToolOutput::exited(0, "").is_ok());
        let out = ToolOutput::exited(2, "boom");
        assert!(!out.is_ok());
        assert_eq!(out.exit_code(), Some(2));
        assert_eq!(ToolOutput::refused("no").refusal(), Some(Ending::Policy));
        assert!(ToolOutput::pending("waiting").refusal().is_none());
        assert!(!ToolOutput::not_started("x").is_ok());
    }
}
