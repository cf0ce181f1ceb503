//! How the terminal draws each frame: pure functions from a frame to text, so the
//! look is testable without a terminal.

use crate::protocol::{
    ArtifactChange, Card, CardSettlement, Ending, Frame, Outcome, Phase, StepRow, TaskStatus,
};

/// The spinner's frames.
pub const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The mark a closed row shows.
pub fn mark(outcome: Option<Outcome>, ending: Option<Ending>) -> String {
    match (outcome, ending) {
        (Some(Outcome::Ok), _) => "✓".into(),
        (Some(Outcome::Failed), _) => "✗".into(),
        (Some(Outcome::Pending), _) => "…".into(),
        (Some(Outcome::Interrupted), _) => "■".into(),
        (Some(Outcome::Refused), Some(e)) => format!("⊘ {}", ending_word(e)),
        (Some(Outcome::Refused), None) => "⊘".into(),
        (None, _) => SPINNER[0].to_string(),
    }
}

fn ending_word(e: Ending) -> &'static str {
    match e {
        Ending::Declined => "declined",
        Ending::Unanswered => "expired",
        Ending::Unreachable => "unreachable",
        Ending::Dismissed => "dismissed",
        Ending::Policy => "refused",
    }
}

/// A finished row: the mark, the action, and the trimmed result indented below.
pub fn finished_row(row: &StepRow) -> String {
    let mut out = format!("{} {}", mark(row.outcome, row.ending), row.action);
    if let Some(result) = row.result.as_deref().filter(|r| !r.is_empty()) {
        for line in result.lines() {
            out.push_str("\n    ");
            out.push_str(line);
        }
    }
    out
}

/// An approval card as the keyboard prompt shows it.
pub fn card(card: &Card) -> String {
    let danger = card
        .danger
        .as_ref()
        .map(|label| format!("│ ⚠ DANGEROUS: {label} — it asks every time\n"))
        .unwrap_or_default();
    format!(
        "\n┌ approval needed ({} s) — {}\n{danger}│ {}\n│ why: {}\n└ {}: ",
        card.window_secs,
        card.tool,
        card.action.replace('\n', "\n│ "),
        if card.why.is_empty() {
            "(no reason given)"
        } else {
            &card.why
        },
        super::answer::choices(card),
    )
}

/// A question card: the question, and how to answer it (a typed line; an empty line
/// skips; a secret is not shown as it is typed).
pub fn question(card: &Card) -> String {
    format!(
        "\n┌ {} asks ({} s)\n│ {}\n└ {}: ",
        card.tool,
        card.window_secs,
        card.action.replace('\n', "\n│ "),
        if card.secret {
            "type it (it is not shown), or an empty line to skip"
        } else {
            "type your answer, or an empty line to skip"
        }
    )
}

/// The question /stop asks before it cancels a job: what would die.
pub fn stop_question(info: &crate::engine::work::JobInfo) -> String {
    let secs = info.elapsed.as_secs();
    format!(
        "stop the long job? {}m {}s in {} steps so far, on: {}. None of it is kept if you stop it now [y/N]: ",
        secs / 60,
        secs % 60,
        info.steps,
        info.goal
    )
}

/// What a frame prints as a whole line, if it prints one (text deltas and spinner
/// updates are handled by the caller).
pub fn line(frame: &Frame) -> Option<String> {
    match frame {
        Frame::Step(row) if row.phase == Phase::Done => Some(finished_row(row)),
        Frame::CardSettled {
            settlement: CardSettlement::Expired,
            ..
        } => Some("(the card expired unanswered; nothing ran)".into()),
        Frame::CardSettled {
            settlement: CardSettlement::Dismissed,
            ..
        } => Some("(the card was dismissed)".into()),
        Frame::Reminder { text, .. } => Some(format!("⏰ Reminder: {text}")),
        Frame::Compacted { lines, .. } => Some(format!(
            "(earlier conversation summarised: {lines} lines, still searchable)"
        )),
        Frame::LinkCard { url, title } => Some(format!("🔗 {title}: {url}")),
        Frame::Artifact { path, change } => Some(match change {
            ArtifactChange::Created => format!("(created {path})"),
            ArtifactChange::Edited => format!("(edited {path})"),
        }),
        Frame::TaskList { items } if !items.is_empty() => Some(
            items
                .iter()
                .map(|i| {
                    let mark = match i.status {
                        TaskStatus::Done => "[x]",
                        TaskStatus::InProgress => "[~]",
                        TaskStatus::Pending => "[ ]",
                    };
                    format!("  {mark} {}", i.text)
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::StepKind;

    fn row(outcome: Outcome, ending: Option<Ending>, result: &str) -> StepRow {
        StepRow {
            id: "c1".into(),
            tool: "shell".into(),
            step_kind: StepKind::Shell,
            action: "$ ls".into(),
            phase: Phase::Done,
            outcome: Some(outcome),
            ending,
            result: Some(result.into()),
            full_output: None,
            clipped: false,
        }
    }

    #[test]
    fn stop_names_the_elapsed_time_the_steps_and_the_goal_before_it_cancels() {
        let info = crate::engine::work::JobInfo {
            run_id: "0a0b0c0d".into(),
            goal: "index the photos".into(),
            elapsed: std::time::Duration::from_secs(252),
            steps: 12,
        };
        assert_eq!(
            stop_question(&info),
            "stop the long job? 4m 12s in 12 steps so far, on: index the photos. None of it is kept if you stop it now [y/N]: "
        );
    }

    #[test]
    fn reminders_links_files_and_plans_print_one_readable_block() {
        use crate::protocol::TaskItem;
        let reminder = Frame::Reminder {
            id: 1,
            text: "stretch".into(),
        };
        assert_eq!(line(&reminder).unwrap(), "⏰ Reminder: stretch");
        let plan = Frame::TaskList {
            items: vec![
                TaskItem {
                    text: "a".into(),
                    status: TaskStatus::Done,
                },
                TaskItem {
                    text: "b".into(),
                    status: TaskStatus::Pending,
                },
            ],
        };
        assert_eq!(line(&plan).unwrap(), "  [x] a\n  [ ] b");
        let file = Frame::Artifact {
            path: "a.txt".into(),
            change: ArtifactChange::Created,
        };
        assert_eq!(line(&file).unwrap(), "(created a.txt)");
    }

    #[test]
    fn a_finished_row_shows_its_mark_action_and_trimmed_result() {
        assert_eq!(
            finished_row(&row(Outcome::Ok, None, "a\nb")),
            "✓ $ ls\n    a\n    b"
        );
        assert_eq!(
            finished_row(&row(Outcome::Failed, None, "! boom")),
            "✗ $ ls\n    ! boom"
        );
        assert!(
            finished_row(&row(Outcome::Refused, Some(Ending::Unanswered), "x"))
                .starts_with("⊘ expired $ ls")
        );
    }

    #[test]
    fn a_dangerous_card_says_so_with_the_gates_label() {
        let mut c = crate::surfaces::terminal::answer::tests::card();
        assert!(!card(&c).contains("DANGEROUS"));
        c.danger = Some("recursive delete".into());
        assert!(card(&c).contains("⚠ DANGEROUS: recursive delete"));
    }
}
