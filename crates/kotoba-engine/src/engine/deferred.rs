//! Deferred execution, only where a turn cannot block (engine.md §5): the card is
//! shown, the turn ends, and a detached runner waits 180 s, runs on approval, completes
//! the pending row in place by its id and announces through a work_done frame.
//! One request → one run: a dedupe key of (user request + action without whitespace).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use tokio_util::sync::CancellationToken;

/// The dedupe key: the user's request with whitespace collapsed, plus the action with
/// all whitespace removed (`print(sum(range(1,101)))` and `print(sum(range(1, 101)))`
/// are one intent). No user request → no key: the guard is off.
pub fn dedupe_key(user_request: Option<&str>, action: &str) -> Option<String> {
    let request = user_request?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if request.is_empty() {
        return None;
    }
    let action: String = action.chars().filter(|c| !c.is_whitespace()).collect();
    Some(format!("{request}\u{0}{action}"))
}

/// Where one deferred request stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// The card is up; nothing ran yet.
    Awaiting,
    /// It ran, was declined, failed or was cancelled; the sentence says which.
    Settled(String),
}

/// The deferred requests of the process, per session.
#[derive(Default)]
pub struct Deferred {
    keys: DashMap<(String, String), KeyState>,
    cancels: DashMap<String, CancellationToken>,
    waiting: DashMap<String, Arc<AtomicUsize>>,
}

/// Counts one runner as waiting on its card until it is dropped.
pub struct WaitingRunner(Arc<AtomicUsize>);

impl Drop for WaitingRunner {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Deferred {
    /// Where `key` stands in `session`, if it was seen.
    pub fn state(&self, session: &str, key: &str) -> Option<KeyState> {
        self.keys
            .get(&(session.to_string(), key.to_string()))
            .map(|s| s.clone())
    }

    /// Record where `key` stands.
    pub fn set(&self, session: &str, key: &str, state: KeyState) {
        self.keys
            .insert((session.to_string(), key.to_string()), state);
    }

    /// The token that cancels this session's waiting runners.
    pub fn cancel_token(&self, session: &str) -> CancellationToken {
        self.cancels.entry(session.to_string()).or_default().clone()
    }

    /// Count one runner of `session` as waiting on its card while the guard lives.
    pub fn enter_waiting(&self, session: &str) -> WaitingRunner {
        let count = self.waiting.entry(session.to_string()).or_default().clone();
        count.fetch_add(1, Ordering::SeqCst);
        WaitingRunner(count)
    }

    /// How many runners of `session` still wait on their cards.
    pub fn waiting(&self, session: &str) -> usize {
        self.waiting
            .get(session)
            .map(|c| c.load(Ordering::SeqCst))
            .unwrap_or(0)
    }

    /// Cancel every deferred approval still waiting in a session (cancel_work, with or
    /// without a job running). Returns how many were waiting.
    pub fn cancel_session(&self, session: &str) -> usize {
        let waiting = self.waiting(session);
        if let Some((_, token)) = self.cancels.remove(session) {
            token.cancel();
        }
        waiting
    }
}

/// The sentence for a re-emission while the card is still up.
pub fn awaiting_sentence(tool: &str) -> String {
    format!(
        "The approval card for this exact '{tool}' request is ALREADY on screen and NOTHING has run yet. \
         Do not call it again: tell them to answer the card, and wait."
    )
}

/// The sentence the model gets when a call was deferred.
pub fn deferred_sentence(tool: &str) -> String {
    format!(
        "I asked for your permission on screen: the '{tool}' card is up and NOTHING has run yet. \
         Tell them, in one short sentence, that the card is waiting for their answer; the result \
         will be announced when it has run."
    )
}

/// What the turn says when it ends on a deferral.
pub const ASKED_ON_SCREEN: &str = "I asked for your permission on screen.";

/// Shared handle type for the engine.
pub type SharedDeferred = Arc<Deferred>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn respellings_of_one_snippet_in_one_request_share_a_key() {
        let a = dedupe_key(Some("add  the numbers\n"), "print(sum(range(1,101)))");
        let b = dedupe_key(Some("add the numbers"), "print(sum(range(1, 101)))");
        let c = dedupe_key(Some("add the numbers"), "print( sum( range(1,101) ) )\n");
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_ne!(
            a,
            dedupe_key(Some("run it again"), "print(sum(range(1,101)))"),
            "a new request is a new key"
        );
        assert_eq!(
            dedupe_key(None, "ls"),
            None,
            "no user request: the guard is off"
        );
    }
}
