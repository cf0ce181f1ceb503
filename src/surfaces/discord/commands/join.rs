//! `/join [channel]`: voice (a later issue; until then it says so).

use super::Answer;

/// Handle /join.
pub(crate) fn run() -> Answer {
    Answer::text("Voice is not available yet.")
}
