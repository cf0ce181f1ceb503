//! Start early, speak late: at a short pause (`voice.early_pause`) what was said so far
//! is recognised; when those words are a complete request (a finished sentence or
//! question, not a trailing "and", "to", "um", nor cut off) the utterance commits at
//! `voice.early_commit` of silence instead of the full wait, with its words already in
//! hand. If they go on, the early words are moot: the longer utterance is recognised as
//! one, and the full waits apply again. With `voice.speculate` on, complete words that
//! are for her ask the model at once ([`kotoba_engine::engine::Engine::speculate`]), and
//! the first sentence of its answer is synthesised as soon as it streams in, held
//! unplayed ([`super::super::speaker::Speaker::prepare`]): the turn at the commit takes
//! that answer and its first sentence plays at once; a person going on cancels both
//! without a trace — nothing heard, stored or run.

use std::time::Duration;

use tokio::time::Instant;

use super::{Room, RoomEvent};
use crate::speech::endpoint::{is_complete, Utterance};
use crate::speech::wake::{wake, Wake};
use crate::speech::SpeechError;
use kotoba_engine::engine::Speculation;

/// What a person said up to a pause, found a complete request.
#[derive(Debug, Clone)]
pub(super) struct Early {
    /// The words.
    pub text: String,
    /// The utterance's last voiced frame when it paused.
    pub last_voiced: u64,
    /// How long recognition took (provider time).
    pub stt: Duration,
}

/// The model asked ahead of a turn: for whom, with which words.
#[derive(Debug)]
pub(super) struct Ahead {
    user: u64,
    words: String,
    speculation: Speculation,
}

impl Room {
    /// `user`'s utterance paused: recognise it so far.
    pub(super) fn on_paused(&mut self, user: u64, so_far: Utterance) {
        let last_voiced = so_far.last_voiced();
        self.recognise(user, false, so_far.pcm, move |text, stt| RoomEvent::Early {
            user,
            text,
            last_voiced,
            stt,
        });
    }

    /// The words up to a pause came back. While nothing has been said since and they
    /// are a complete request, the utterance may commit at the early wait. (A failure
    /// says nothing here: the commit's own recognition reports it.)
    pub(super) async fn on_early(
        &mut self,
        user: u64,
        text: Result<String, SpeechError>,
        last_voiced: u64,
        stt: Duration,
    ) {
        let Ok(text) = text else { return };
        let text = text.trim().to_string();
        let Some(ear) = self.ears.get_mut(&user) else {
            return;
        };
        if ear.endpointer.last_voiced() != Some(last_voiced) || !is_complete(&text) {
            return;
        }
        ear.endpointer.complete_at(last_voiced);
        ear.early = Some(Early {
            text: text.clone(),
            last_voiced,
            stt,
        });
        if self.parts.speculate {
            self.speculate(user, &text).await;
        }
    }

    /// Ask the model now for the turn `text` would start, if it is for her (nothing is
    /// said, stored or run before the commit).
    async fn speculate(&mut self, user: u64, text: &str) {
        if self.leaving.is_some() {
            return;
        }
        let window_open = self.window_until.is_some_and(|t| Instant::now() < t);
        let Wake::ForHer(words) = wake(text, &self.names, self.humans, window_open) else {
            return;
        };
        let req = self.turn_request(user, words.clone());
        let speculation = self.parts.engine.speculate(&req).await;
        if !self.parts.out.muted() {
            self.speaker.prepare(speculation.words());
        }
        self.speculation = Some(Ahead {
            user,
            words,
            speculation,
        });
    }

    /// What was asked ahead for `user`'s `words`, if that is what they asked.
    pub(super) fn take_speculation(&mut self, user: u64, words: &str) -> Option<Speculation> {
        let ahead = self.speculation.take()?;
        if ahead.user == user && ahead.words == words {
            return Some(ahead.speculation);
        }
        self.speaker.unprepare();
        None
    }

    /// `user` went on talking: cancel what was asked ahead for them, and its voice.
    pub(super) fn drop_speculation(&mut self, user: u64) {
        if self.speculation.as_ref().is_some_and(|a| a.user == user) {
            self.speculation = None;
            self.speaker.unprepare();
        }
    }

    /// The early words of `utterance`, when they cover all of it (nothing was said
    /// after the pause they were recognised at).
    pub(super) fn take_early(&mut self, user: u64, utterance: &Utterance) -> Option<Early> {
        let early = self.ears.get_mut(&user)?.early.take()?;
        (early.last_voiced == utterance.last_voiced()).then_some(early)
    }
}
