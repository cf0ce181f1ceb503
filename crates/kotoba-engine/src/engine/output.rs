//! What a finished call leaves behind: the outcome from its witnesses, the trimmed row
//! result, the capped full output and the text fed back to the model (engine.md §3).

use crate::tools::{clip_chars, Ended, ToolOutput};
use kotoba_core::protocol::{Ending, Outcome, StepKind};

/// A row line's width.
const ROW_LINE: usize = 160;

/// The outcome of how a call ended: a card still waiting is pending, a refusal is
/// refused, a run that failed or never started is failed, a run that worked is ok.
pub fn outcome_of(out: &ToolOutput) -> Outcome {
    match out.ended {
        Ended::Pending => Outcome::Pending,
        Ended::Refused(_) => Outcome::Refused,
        Ended::Failed { .. } | Ended::NothingRan => Outcome::Failed,
        Ended::Ok { .. } => Outcome::Ok,
    }
}

/// Cut `text` at `cap` characters; returns the kept text and how many were cut.
pub fn cap_text(text: &str, cap: usize) -> (String, usize) {
    let total = text.chars().count();
    if total <= cap {
        return (text.to_string(), 0);
    }
    (text.chars().take(cap).collect(), total - cap)
}

/// The text the model reads for a call: capped with a note, and for a failure a
/// reminder not to retry the same call. `cap` is the tool's declared output cap.
pub fn model_text(cap: usize, out: &ToolOutput, outcome: Outcome) -> String {
    let (mut text, cut) = cap_text(&out.text, cap);
    if cut > 0 {
        let total = cap + cut;
        text.push_str(&format!(
            "\n[output cut: {cut} of {total} characters were not shown; only the first {cap} are above]"
        ));
    }
    if outcome == Outcome::Failed {
        text.push_str("\n(This call FAILED. Do not retry the same call unchanged: change the approach or say what failed.)");
    }
    text
}

/// The trimmed result a row shows.
pub fn row_result(kind: StepKind, out: &ToolOutput, outcome: Outcome) -> String {
    let non_blank = || {
        out.text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
    };
    match outcome {
        Outcome::Pending => "waiting for approval".into(),
        Outcome::Interrupted => "(interrupted)".into(),
        Outcome::Refused => match out.refusal() {
            Some(Ending::Declined) => "declined — nothing ran".into(),
            Some(Ending::Unanswered) => "expired unanswered — nothing ran".into(),
            Some(Ending::Unreachable) => "nobody could be asked — nothing ran".into(),
            Some(Ending::Dismissed) => "dismissed — nothing ran".into(),
            Some(Ending::Policy) | None => clip_chars(
                non_blank().next().unwrap_or("refused — nothing ran"),
                ROW_LINE,
            ),
        },
        Outcome::Failed => format!(
            "! {}",
            clip_chars(non_blank().next().unwrap_or("failed"), ROW_LINE)
        ),
        Outcome::Ok => match kind {
            StepKind::Shell | StepKind::Code => {
                let lines: Vec<String> = non_blank()
                    .take(4)
                    .map(|l| clip_chars(l, ROW_LINE))
                    .collect();
                if lines.is_empty() {
                    "done".into()
                } else {
                    lines.join("\n")
                }
            }
            _ => non_blank()
                .next()
                .map(|l| clip_chars(l, ROW_LINE))
                .unwrap_or_else(|| "done".into()),
        },
    }
}

/// The whole output a row carries behind its expander: capped like the model's copy,
/// saying so when clipped. `cap` is the tool's declared output cap.
pub fn row_full_output(cap: usize, out: &ToolOutput) -> (String, bool) {
    let (mut text, cut) = cap_text(&out.text, cap);
    if cut > 0 {
        text.push_str(&format!("\n[clipped: {cut} more characters not shown]"));
    }
    (text, cut > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ending_has_its_outcome() {
        assert_eq!(outcome_of(&ToolOutput::ok("fine")), Outcome::Ok);
        assert_eq!(outcome_of(&ToolOutput::exited(0, "")), Outcome::Ok);
        assert_eq!(
            outcome_of(&ToolOutput::exited(2, "")),
            Outcome::Failed,
            "an exit code ≠ 0 fails"
        );
        assert_eq!(
            outcome_of(&ToolOutput::exited(124, "")),
            Outcome::Failed,
            "a timeout kill fails"
        );
        assert_eq!(
            outcome_of(&ToolOutput::not_started("")),
            Outcome::Failed,
            "an approved run that could not start failed"
        );
        assert_eq!(
            outcome_of(&ToolOutput::refused_with(Ending::Declined, "")),
            Outcome::Refused
        );
        assert_eq!(outcome_of(&ToolOutput::pending("")), Outcome::Pending);
    }

    #[test]
    fn a_shell_row_shows_four_non_blank_lines_and_a_failure_its_first_line() {
        let out = ToolOutput::exited(0, "a\n\nb\nc\n  \nd\ne\n");
        assert_eq!(row_result(StepKind::Shell, &out, Outcome::Ok), "a\nb\nc\nd");
        let out = ToolOutput::exited(1, "\nboom\nmore");
        assert_eq!(row_result(StepKind::Shell, &out, Outcome::Failed), "! boom");
        let out = ToolOutput::ok("");
        assert_eq!(row_result(StepKind::Memory, &out, Outcome::Ok), "done");
        let long = "x".repeat(400);
        assert_eq!(
            row_result(StepKind::File, &ToolOutput::ok(long), Outcome::Ok)
                .chars()
                .count(),
            162
        );
    }

    #[test]
    fn model_text_is_cut_at_sixteen_thousand_characters_with_a_note() {
        let out = ToolOutput::ok("y".repeat(20_000));
        let t = model_text(crate::tools::OUTPUT_CAP, &out, Outcome::Ok);
        assert!(t.starts_with(&"y".repeat(16_000)));
        assert!(t.contains("4000 of 20000 characters were not shown"));
        let b = model_text(24_000, &out, Outcome::Ok);
        assert!(
            b.starts_with(&"y".repeat(20_000)),
            "a tool that declares 24,000 gets 24,000"
        );
        let (full, clipped) = row_full_output(crate::tools::OUTPUT_CAP, &out);
        assert!(clipped && full.contains("clipped"));
    }
}
