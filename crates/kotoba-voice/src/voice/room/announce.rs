//! A run that ended in the room's session (a background job, a card's deferred run) is
//! announced aloud in the call (docs/voice.md "Realtime voice"): the room marks its
//! session as in a call, so the text surfaces leave the announce to it, listens for
//! `work_done` frames, asks the engine for the run's one announce turn (register
//! voice) and says its words: through the realtime session of the person who asked
//! when there is one, else in her own voice, captioned.

use super::{Caption, Room, RoomEvent};
use kotoba_core::protocol::Frame;

impl Room {
    /// Forward the session's `work_done` frames to the room while it lives.
    pub(super) async fn listen_for_runs(&mut self) {
        let mut bus = self
            .parts
            .engine
            .session(self.parts.session.as_str())
            .await
            .subscribe();
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            loop {
                match bus.recv().await {
                    Ok(ev) => {
                        if let (Frame::WorkDone { summary, .. }, Some(run_id)) =
                            (&ev.frame, ev.run_id.clone())
                        {
                            let done = RoomEvent::RunDone {
                                run_id,
                                summary: summary.clone(),
                            };
                            if tx.send(done).is_err() {
                                break;
                            }
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
    }

    /// A run ended: its announce turn, then its words said.
    pub(super) fn on_run_done(&mut self, run_id: String, summary: String) {
        let (engine, session) = (self.parts.engine.clone(), self.parts.session.clone());
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            if let Some(said) = engine
                .announce_aloud(session.as_str(), &run_id, &summary)
                .await
            {
                let _ = tx.send(RoomEvent::Announce(said.text));
            }
        });
    }

    /// Say an announce's words.
    pub(super) fn on_announce(&mut self, words: String) {
        let words = words.trim().to_string();
        if words.is_empty() || self.leaving.is_some() {
            return;
        }
        if self.realtime_say(&words) {
            return;
        }
        self.post(Caption::Said(words.clone()));
        self.speaker.say(&words);
    }
}
