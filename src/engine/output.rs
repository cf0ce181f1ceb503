//! What a finished call leaves behind: the outcome from its witnesses, the trimmed row
//! result, the capped full output and the text fed back to the model (engine.md §3).

use crate::protocol::{Ending, Outcome, StepKind};
use crate::tools::{clip_chars, ToolOutput};

/// A row line's width.
const ROW_LINE: usize = 160;

/// The outcome by witnesses, in order: pending → refused → failed → ok.
pub fn outcome_of(out: &ToolOutput) -> Outcome {
    if out.pending {
        Outcome::Pending
    } else if out.refused.is_some() {
        Outcome::Refused
    } else if !out.ok || out.exit_code.is_some_and(|c| c != 0) {
        Outcome::Failed
    } else {
        Outcome::Ok
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
        Outcome::Refused => match out.refused {
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
    fn outcomes_come_from_witnesses_in_order_pending_refused_failed_ok() {
        let mut o = ToolOutput::ok("fine");
        assert_eq!(outcome_of(&o), Outcome::Ok);
        o.exit_code = Some(2);
        assert_eq!(
            outcome_of(&o),
            Outcome::Failed,
            "an exit code ≠ 0 fails even when ok is true"
        );
        o.exit_code = Some(124);
        assert_eq!(outcome_of(&o), Outcome::Failed, "a timeout kill fails");
        o.refused = Some(Ending::Declined);
        assert_eq!(
            outcome_of(&o),
            Outcome::Refused,
            "refusal is checked before failure"
        );
        o.pending = true;
        assert_eq!(outcome_of(&o), Outcome::Pending);
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
