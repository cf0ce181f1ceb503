//! The live "steps" card of a turn (or of a background job): its rows with a status
//! mark, the action line and the trimmed result, the peek as a footer, a Full output
//! button per finished row; and the edit coalescing rule (≤ 1 edit per ~1.5 s).

use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::{Ending, Outcome, Phase, StepRow};

use super::render::{clip, Button, Card, Style, DESCRIPTION_LIMIT};

/// The least time between two edits of one message.
pub const EDIT_GAP: Duration = Duration::from_millis(1500);

/// When the next edit of a message may go out: now for its first write, else no
/// sooner than [`EDIT_GAP`] after the last one.
pub fn edit_due(last_edit: Option<Instant>, now: Instant) -> Instant {
    match last_edit {
        Some(last) => (last + EDIT_GAP).max(now),
        None => now,
    }
}

/// A background job's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    /// What it is for.
    pub goal: String,
    /// When it started.
    pub started: Instant,
    /// Set when it ended: ok or not, and the summary.
    pub done: Option<(bool, String)>,
    /// Its Stop button's id: `kj:stop`, or `kj:stop:<user>` for a person's own
    /// conversation (`sessions.rs`), so a press stops the job of the conversation whose
    /// card it is.
    pub stop: String,
}

/// One steps card's state, rebuilt from frames.
#[derive(Debug, Clone, Default)]
pub struct StepCard {
    /// The rows, in the order they opened.
    pub rows: Vec<StepRow>,
    /// The read tool she is inside.
    pub peek: Option<String>,
    /// Set for a job's card.
    pub job: Option<JobInfo>,
}

/// The mark of a row.
pub fn mark(row: &StepRow) -> String {
    match (row.phase, row.outcome) {
        (Phase::Start, _) | (Phase::Done, None) => "⏳ running".into(),
        (Phase::Done, Some(Outcome::Ok)) => "✅ ok".into(),
        (Phase::Done, Some(Outcome::Failed)) => "❌ failed".into(),
        (Phase::Done, Some(Outcome::Pending)) => "⏸️ pending".into(),
        (Phase::Done, Some(Outcome::Interrupted)) => "✂️ interrupted".into(),
        (Phase::Done, Some(Outcome::Refused)) => format!(
            "🚫 refused ({})",
            match row.ending {
                Some(Ending::Declined) => "declined",
                Some(Ending::Unanswered) => "expired unanswered",
                Some(Ending::Unreachable) => "nobody could be asked",
                Some(Ending::Dismissed) => "dismissed",
                Some(Ending::Policy) | None => "not allowed",
            }
        ),
    }
}

/// Custom id of a row's Full output button.
pub fn full_output_id(key: u64) -> String {
    format!("ko:{key}")
}

impl StepCard {
    /// Open or close a row (a closing frame replaces the row of the same id).
    pub fn apply(&mut self, row: StepRow) {
        match self.rows.iter_mut().find(|r| r.id == row.id) {
            Some(r) => *r = row,
            None => self.rows.push(row),
        }
    }

    /// Whether every row is closed.
    pub fn settled(&self) -> bool {
        self.rows.iter().all(|r| r.phase == Phase::Done)
    }

    /// The card as data at `now`; `outputs` maps a row id to its Full output key.
    pub fn render(&self, now: Instant, outputs: &[(String, u64)]) -> Card {
        let mut lines: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                let mut line = format!("{} `{}`", mark(r), clip(&r.action.replace('`', "'"), 180));
                if let Some(res) = r.result.as_deref().filter(|s| !s.trim().is_empty()) {
                    for l in res.lines().take(4) {
                        line.push_str(&format!("\n> {}", clip(l, 160)));
                    }
                }
                line
            })
            .collect();
        // Keep the newest rows when the card would overflow.
        let mut dropped = 0;
        while lines.iter().map(|l| l.chars().count() + 1).sum::<usize>() > DESCRIPTION_LIMIT - 40 {
            lines.remove(0);
            dropped += 1;
        }
        let mut description = String::new();
        if dropped > 0 {
            description.push_str(&format!("… {dropped} earlier steps\n"));
        }
        description.push_str(&lines.join("\n"));
        let mut card = Card {
            title: "Steps".into(),
            description,
            colour: 0x5865F2,
            footer: self.peek.as_ref().map(|t| format!("{}…", peek_words(t))),
            ..Card::default()
        };
        if let Some(job) = &self.job {
            card.title = format!("Job: {}", clip(&job.goal, 200));
            let secs = now.saturating_duration_since(job.started).as_secs();
            card.fields.push(("Elapsed".into(), elapsed_words(secs)));
            card.fields
                .push(("Steps".into(), self.rows.len().to_string()));
            match &job.done {
                Some((ok, summary)) => {
                    card.colour = if *ok { 0x57F287 } else { 0xED4245 };
                    card.fields.push(("Result".into(), clip(summary, 1000)));
                }
                None => card.buttons.push(Button {
                    id: job.stop.clone(),
                    label: "Stop".into(),
                    style: Style::Danger,
                    disabled: false,
                }),
            }
        }
        for (i, (row_id, key)) in outputs
            .iter()
            .enumerate()
            .rev()
            .take(if card.buttons.is_empty() { 25 } else { 20 })
        {
            if self.rows.iter().any(|r| &r.id == row_id) {
                card.buttons.insert(
                    0,
                    Button {
                        id: full_output_id(*key),
                        label: format!("Full output {}", i + 1),
                        style: Style::Secondary,
                        disabled: false,
                    },
                );
            }
        }
        card
    }
}

/// "reading memory" for a peek tool.
pub fn peek_words(tool: &str) -> String {
    match tool {
        t if t.starts_with("memory") => "reading memory".into(),
        t if t.starts_with("read_file") || t.starts_with("search_files") => "reading files".into(),
        t if t.starts_with("discord_") => "reading the channel".into(),
        t if t.starts_with("web_") => "reading the web".into(),
        t => format!("using {t}"),
    }
}

/// "3 min 2 s".
pub fn elapsed_words(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::StepKind;

    fn row(id: &str, phase: Phase, outcome: Option<Outcome>, ending: Option<Ending>) -> StepRow {
        StepRow {
            id: id.into(),
            tool: "shell".into(),
            step_kind: StepKind::Shell,
            action: "$ make".into(),
            phase,
            outcome,
            ending,
            result: outcome.map(|_| "built ok".into()),
            full_output: outcome.map(|_| "all the output".into()),
            clipped: false,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn edits_are_coalesced_to_one_per_one_and_a_half_seconds() {
        let t0 = Instant::now();
        assert_eq!(edit_due(None, t0), t0, "the first write goes at once");
        assert_eq!(edit_due(Some(t0), t0), t0 + EDIT_GAP);
        tokio::time::advance(Duration::from_secs(2)).await;
        let now = Instant::now();
        assert_eq!(
            edit_due(Some(t0), now),
            now,
            "a gap already passed: at once"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_row_closes_in_place_with_its_mark_and_result_and_a_full_output_button() {
        let mut card = StepCard::default();
        card.apply(row("c1", Phase::Start, None, None));
        let r = card.render(Instant::now(), &[]);
        assert!(
            r.description.contains("⏳ running `$ make`"),
            "{}",
            r.description
        );
        card.apply(row("c1", Phase::Done, Some(Outcome::Ok), None));
        card.apply(row(
            "c2",
            Phase::Done,
            Some(Outcome::Refused),
            Some(Ending::Declined),
        ));
        assert_eq!(card.rows.len(), 2);
        let r = card.render(Instant::now(), &[("c1".into(), 7)]);
        assert!(
            r.description.contains("✅ ok `$ make`\n> built ok"),
            "{}",
            r.description
        );
        assert!(r.description.contains("🚫 refused (declined)"));
        assert_eq!(r.buttons[0].id, "ko:7");
        assert!(card.settled());
    }

    #[tokio::test(start_paused = true)]
    async fn a_job_card_shows_goal_elapsed_steps_and_a_stop_button_until_it_ends() {
        let mut card = StepCard {
            job: Some(JobInfo {
                goal: "tidy the repo".into(),
                started: Instant::now(),
                done: None,
                stop: "kj:stop".into(),
            }),
            ..StepCard::default()
        };
        card.apply(row("c1", Phase::Start, None, None));
        tokio::time::advance(Duration::from_secs(125)).await;
        let r = card.render(Instant::now(), &[]);
        assert_eq!(r.title, "Job: tidy the repo");
        assert!(r.fields.contains(&("Elapsed".into(), "2 min 5 s".into())));
        assert!(r.fields.contains(&("Steps".into(), "1".into())));
        assert!(r.buttons.iter().any(|b| b.id == "kj:stop"));
        card.job.as_mut().unwrap().done = Some((true, "done".into()));
        assert!(card.render(Instant::now(), &[]).buttons.is_empty());
    }
}
