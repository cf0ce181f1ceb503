//! `/leave`: voice (a later issue; until then it says so).

use super::Answer;

/// Handle /leave.
pub(crate) fn run() -> Answer {
    Answer::text("Voice is not available yet.")
}
