//! The room's turns: a spoken turn's request (register voice, channel voice, 60 s
//! cards, the surface's origin), a typed turn said aloud, her voice following the
//! turn's frames sentence by sentence, a spoken yes or no to the turn's card, and
//! barge-in cutting the turn.

use std::collections::HashSet;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Caption, Live, Room, RoomEvent, Trace};
use crate::speech::consent::{consent, Consent};
use crate::speech::filter::Sentences;
use kotoba_core::protocol::{
    CardAnswer, Channel, Decision, Event, Frame, Origin, Phase, Register, TurnRequest, TurnStatus,
};
use kotoba_engine::engine::{Answerer, TurnOptions};

impl Room {
    /// A short yes or no while her turn waits on a card: from someone who may answer
    /// it, it answers the card once (approve once or deny, never "always") and she says
    /// what was decided; an unclear one makes her ask again, once; anyone else's changes
    /// nothing. True when the utterance was taken as such an answer.
    pub(super) async fn spoken_answer(&mut self, user: u64, text: &str) -> bool {
        // The live turn's card, else a card a consult left waiting when it deferred.
        let live = self
            .turn
            .as_ref()
            .and_then(|l| l.cards.iter().next().cloned());
        let card = match live {
            Some(card) => Some(card),
            None => self.deferred_card().await,
        };
        let Some(card) = card else {
            return false;
        };
        let Some(said) = consent(text) else {
            return false;
        };
        let who = Answerer {
            id: user.to_string(),
            name: self.parts.side.name_of(user),
            // The owner on their own surface (the page) answers as local.
            local: matches!(self.parts.side.origin(user), Origin::Owner),
            via: "the voice call".into(),
            holds: Vec::new(),
        };
        if self.parts.engine.card_for(&card, &who).await.is_err() {
            return true;
        }
        let decision = match said {
            Consent::Yes => Decision::Approve,
            Consent::No => Decision::Deny,
            Consent::Unclear => {
                let first = self
                    .turn
                    .as_mut()
                    .is_some_and(|l| l.asked_again.insert(card));
                if first {
                    self.say("Should I go ahead? Please say yes or no.");
                }
                return true;
            }
        };
        if self
            .parts
            .engine
            .answer(&card, CardAnswer::of(decision), &who)
            .await
            .is_ok()
        {
            self.say(match decision {
                Decision::Deny => "Okay, I won't.",
                _ => "Okay, going ahead.",
            });
        }
        true
    }

    /// The spoken turn `user` asks with `words`.
    pub(super) fn turn_request(&self, user: u64, words: String) -> TurnRequest {
        TurnRequest {
            session: self.parts.session.clone(),
            text: words,
            author: self.parts.side.author(user),
            // Muted where she is heard (the page), she writes even what is said to her.
            register: if self.parts.out.muted() {
                Register::Text
            } else {
                Register::Voice
            },
            channel: Channel::Voice,
            el_call_bound: Some(false),
            replace_running: true,
            hidden: false,
            media: Vec::new(),
            origin: self.parts.side.origin(user),
            around: Vec::new(),
            granted: self.parts.side.granted(user),
        }
    }

    pub(super) async fn start_turn(&mut self, user: u64, words: String, trace: Option<Trace>) {
        let name = self.parts.side.name_of(user);
        self.post(Caption::Heard {
            user,
            name,
            words: words.clone(),
        });
        let prepared = self.take_speculation(user, &words);
        let req = self.turn_request(user, words);
        self.run_turn(user, req, trace, prepared).await;
    }

    /// A turn typed where she is heard (the page's composer): she answers it aloud as
    /// it streams, as any turn of the room's; its card window is the request's own.
    pub(super) async fn speak_typed(&mut self, user: u64, req: TurnRequest) {
        self.hush();
        self.run_turn(user, req, None, None).await;
    }

    /// Run `req` for `user` as the room's turn: her voice follows its frames.
    pub(super) async fn run_turn(
        &mut self,
        user: u64,
        req: TurnRequest,
        trace: Option<Trace>,
        prepared: Option<kotoba_engine::engine::Speculation>,
    ) {
        self.parts.side.before_turn().await;
        self.turn_no += 1;
        let no = self.turn_no;
        self.served = Some(user);
        let now = Instant::now();
        self.turn = Some(Live {
            no,
            started: now,
            last_voice: now,
            rows: HashSet::new(),
            cards: HashSet::new(),
            asked_again: HashSet::new(),
            peeking: false,
            sentences: Sentences::new(),
        });
        self.trace = trace.map(|t| Trace {
            turn_started: now,
            ..t
        });
        let (tap, mut frames) = mpsc::unbounded_channel();
        let engine = self.parts.engine.clone();
        tokio::spawn(async move {
            let options = TurnOptions {
                tap: Some(tap),
                prepared,
            };
            engine.run_turn(req, options).await;
        });
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            while let Some(event) = frames.recv().await {
                if tx.send(RoomEvent::Frame { turn: no, event }).is_err() {
                    break;
                }
            }
        });
    }

    pub(super) fn on_frame(&mut self, no: u64, event: &Event) {
        if event.run_id.is_some() {
            return;
        }
        let consult = self.is_consult(no);
        let Some(live) = self.turn.as_mut().filter(|l| l.no == no) else {
            return;
        };
        let now = Instant::now();
        let mut lines = Vec::new();
        match &event.frame {
            Frame::TurnStarted { turn_id } if !self.parts.out.muted() => {
                self.parts.side.speaking(turn_id);
            }
            Frame::TextDelta { text } => {
                live.last_voice = now;
                lines = live.sentences.push(text);
            }
            Frame::Say { text, .. } => {
                live.last_voice = now;
                // Her own words before a tool are said before its narration.
                lines.extend(live.sentences.finish());
                lines.push(text.clone());
            }
            Frame::Step(row) => match row.phase {
                Phase::Start => {
                    lines.extend(live.sentences.finish());
                    live.rows.insert(row.id.clone());
                }
                Phase::Done => {
                    live.rows.remove(&row.id);
                    live.last_voice = now;
                }
            },
            Frame::Peek { tool } => {
                if tool.is_some() {
                    lines.extend(live.sentences.finish());
                }
                live.peeking = tool.is_some();
                live.last_voice = now;
            }
            Frame::Card(card) => {
                lines.extend(live.sentences.finish());
                live.cards.insert(card.request_id.clone());
                if consult {
                    // A consult defers: its card outlives its turn.
                    self.realtime_deferred(&card.request_id);
                }
            }
            Frame::CardSettled { request_id, .. } => {
                live.cards.remove(request_id);
                live.last_voice = now;
            }
            Frame::TurnDone { status, .. } if *status == TurnStatus::Interrupted => {
                // Cut from outside the room (Stop on the page, /stop, "stop" in the
                // chat): what she was saying goes with it, at once.
                self.hush();
                return;
            }
            Frame::TurnDone { text, .. } if consult => {
                // A consult's answer is the realtime model's to say.
                self.turn = None;
                let text = text.clone();
                self.consult_done(no, &text);
                return;
            }
            Frame::TurnDone { text, .. } => {
                if let Some(rest) = live.sentences.finish() {
                    lines.push(rest);
                }
                self.turn = None;
                if !text.trim().is_empty() {
                    self.post(Caption::Said(text.clone()));
                }
            }
            _ => {}
        }
        if consult {
            // Her loop's words go back to the realtime model, which says them.
            return;
        }
        for line in lines {
            self.say(&line);
        }
    }

    pub(super) fn say(&mut self, line: &str) {
        if self.parts.out.muted() {
            // Nobody would hear it: nothing is synthesised.
            return;
        }
        if self.speaker.say(line) {
            if let Some(t) = self.trace.as_mut() {
                t.first_sentence.get_or_insert_with(Instant::now);
            }
        }
    }

    /// Stop talking at once and cut the turn in flight (its rows close interrupted,
    /// an open card closes dismissed — the engine does both when the turn is cut).
    pub(super) fn barge_in(&mut self) {
        let cut = self.turn.is_some();
        self.hush();
        if cut {
            self.stop_turn();
        }
    }
}
