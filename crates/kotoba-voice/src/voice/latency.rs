//! The last spoken replies' latency, broken down (`/status`, `kotoba doctor`): end of
//! speech → commit, recognition, the model to its first sentence, synthesis to its
//! first byte, and the bot's own share (the rest). A room's replies are written to
//! `voice-latency.json` in the data folder (the last [`KEPT`]), so `kotoba doctor`,
//! another process, reads the same figures.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::room::Trace;

/// How many replies are kept.
pub const KEPT: usize = 5;

/// One spoken reply's latency, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// End of speech (last voiced frame) → first audio frame handed out.
    pub total_ms: u64,
    /// End of speech → the commit.
    pub commit_ms: u64,
    /// The recognizer's own time (at the short pause when recognised early).
    pub recognition_ms: u64,
    /// The turn's start → its first sentence (the model, with the engine).
    pub model_ms: u64,
    /// Synthesis to its first bytes.
    pub synthesis_ms: u64,
    /// The rest: the bot's own share.
    pub bot_ms: u64,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Breakdown {
    /// The breakdown of a reply that reached its first frame.
    pub fn of(t: &Trace) -> Option<Breakdown> {
        let (first_sentence, first_frame) = (t.first_sentence?, t.first_frame?);
        let total = first_frame.saturating_duration_since(t.speech_end);
        let commit = t.committed.saturating_duration_since(t.speech_end);
        // Recognition still running after the commit is part of the wait.
        let after_commit = t.recognised.saturating_duration_since(t.committed);
        let model = first_sentence.saturating_duration_since(t.turn_started);
        let synthesis = t.synth.unwrap_or_default();
        let waited = commit + after_commit + model + synthesis;
        Some(Breakdown {
            total_ms: ms(total),
            commit_ms: ms(commit),
            recognition_ms: ms(t.stt),
            model_ms: ms(model),
            synthesis_ms: ms(synthesis),
            bot_ms: ms(total.saturating_sub(waited)),
        })
    }

    /// One line for a person.
    pub fn line(&self) -> String {
        format!(
            "{} ms end of speech → first audio (commit {} ms, recognition {} ms, model first sentence {} ms, synthesis first byte {} ms, bot {} ms)",
            self.total_ms, self.commit_ms, self.recognition_ms, self.model_ms, self.synthesis_ms, self.bot_ms
        )
    }
}

fn file(home: &Path) -> PathBuf {
    home.join("voice-latency.json")
}

/// The last replies' breakdowns written in data folder `home`, oldest first.
pub fn read(home: &Path) -> Vec<Breakdown> {
    std::fs::read(file(home))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Add one reply's breakdown to data folder `home`, keeping the last [`KEPT`].
pub fn record(home: &Path, b: Breakdown) {
    let mut all = read(home);
    all.push(b);
    let excess = all.len().saturating_sub(KEPT);
    all.drain(..excess);
    match serde_json::to_vec(&all) {
        Ok(bytes) => {
            if let Err(e) = std::fs::write(file(home), bytes) {
                tracing::warn!("voice: could not keep the latency figures: {e}");
            }
        }
        Err(e) => tracing::warn!("voice: could not keep the latency figures: {e}"),
    }
}

/// Where a room's reply timings go: each becomes a [`Breakdown`] kept in the data
/// folder `home` (`/status`, `kotoba doctor`).
pub fn keeper(home: PathBuf) -> tokio::sync::mpsc::UnboundedSender<Trace> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Trace>();
    tokio::spawn(async move {
        while let Some(t) = rx.recv().await {
            if let Some(b) = Breakdown::of(&t) {
                let home = home.clone();
                let _ = tokio::task::spawn_blocking(move || record(&home, b)).await;
            }
        }
    });
    tx
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    fn trace(at: Instant) -> Trace {
        let t = |ms: u64| at + Duration::from_millis(ms);
        Trace {
            speech_end: t(0),
            committed: t(600),
            recognised: t(600),
            stt: Duration::from_millis(300),
            turn_started: t(605),
            first_sentence: Some(t(1005)),
            synth: Some(Duration::from_millis(200)),
            first_frame: Some(t(1210)),
        }
    }

    #[test]
    fn a_replys_latency_is_broken_down_into_commit_recognition_model_synthesis_and_the_bots_share()
    {
        let b = Breakdown::of(&trace(Instant::now())).unwrap();
        assert_eq!(
            b,
            Breakdown {
                total_ms: 1210,
                commit_ms: 600,
                recognition_ms: 300,
                model_ms: 400,
                synthesis_ms: 200,
                bot_ms: 10,
            }
        );
        assert!(b.line().starts_with("1210 ms end of speech"));
    }

    #[test]
    fn the_last_five_replies_are_kept_in_the_data_folder() {
        let home = tempfile::tempdir().unwrap();
        assert!(read(home.path()).is_empty());
        let b = Breakdown::of(&trace(Instant::now())).unwrap();
        for i in 0..7 {
            record(
                home.path(),
                Breakdown {
                    total_ms: i,
                    ..b.clone()
                },
            );
        }
        let kept: Vec<u64> = read(home.path()).iter().map(|b| b.total_ms).collect();
        assert_eq!(kept, [2, 3, 4, 5, 6]);
    }
}
