//! `voice_mode: realtime` in the room (docs/voice.md): each person's audio also goes
//! to a realtime speech-to-speech session of their own, which hears, answers aloud and
//! calls `consult` for real work. A consult is a turn of her loop for that person (their
//! origin, register voice, an agent call: a gated tool defers with its card in the
//! text chat); its answer goes back as the function's output and the model says it.
//! Her audio plays through the room's speaker, so barge-in, Stop and leave cut it as
//! they cut her own voice, and a barge-in also cancels the session's response. The
//! person's transcript is captioned and answers a waiting card by a spoken yes. Alone
//! with her, the session answers each utterance itself; in a busy room it only
//! listens, and the room asks it to answer when her name (or the window her name
//! opened) makes an utterance hers. A session that fails says so once in the text
//! chat; the chained pipeline answers what it left unanswered and serves that person
//! until [`RETRY`] has passed, when their next words open a new session.
//! Where the surface has packets (Discord), a session hears its person's audio as each
//! packet arrives ([`Arrived`]), not from the ticks, which come a playout buffer
//! later; when their packets stop, the room counts silence for them in audio time,
//! a silent frame each time a packet would have come ([`Flow`]), so the server's turn
//! detection ends the utterance on time.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::time::Instant;

use super::{Caption, Room, RoomEvent};
use crate::speech::audio::{FRAME, HEAR_FRAME};
use crate::speech::endpoint::Utterance;
use crate::speech::realtime_voice::{RealtimeEvent, RealtimeSession, RATE};
use crate::speech::wake::Wake;
use crate::voice::boundary::{Arrived, QUIET_AFTER};
use kotoba_core::protocol::TurnRequest;

/// How long after a person's session failed the chained pipeline serves them before a
/// new session is tried.
pub(super) const RETRY: Duration = Duration::from_secs(20);

/// One person's realtime session.
pub(super) struct Conversation {
    /// The open session.
    session: RealtimeSession,
    /// Her words of the answer being said, for its caption.
    words: String,
    /// Its answer was cut (a barge-in, Stop): audio still in flight from it is dropped
    /// until that response's end arrives.
    cut: bool,
    /// An answer of its is under way (audio or words came, its end not yet).
    answering: bool,
    /// Whether the server answers each utterance itself (alone with her) or waits
    /// for the room's word (a busy room).
    auto: bool,
}

/// Whom the chained pipeline serves because their session failed.
#[derive(Default)]
pub(super) struct Fallback {
    /// Since when, by person.
    since: HashMap<u64, Instant>,
    /// Those already told it failed (told once until a session of theirs works).
    told: HashSet<u64>,
}

impl Fallback {
    /// `user`'s session failed at `now`: whether to tell them.
    pub(super) fn fail(&mut self, user: u64, now: Instant) -> bool {
        self.since.insert(user, now);
        self.told.insert(user)
    }

    /// Whether the chain serves `user` at `now`.
    pub(super) fn chained(&self, user: u64, now: Instant) -> bool {
        self.since
            .get(&user)
            .is_some_and(|t| now.duration_since(*t) < RETRY)
    }

    /// A session of `user`'s works again.
    pub(super) fn worked(&mut self, user: u64) {
        self.since.remove(&user);
        self.told.remove(&user);
    }
}

/// One person's packets as they arrive: when their audio so far ends, and whether
/// they stopped sending (then a silent frame is due each time a packet would have
/// come).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Flow {
    /// The wall time their audio so far reaches: the last packet's arrival, or the last
    /// silent frame counted for them.
    heard_to: Instant,
    /// No packet for [`QUIET_AFTER`]: silence is counted for them.
    quiet: bool,
}

impl Flow {
    /// A packet of theirs arrived at `now`.
    pub(super) fn new(now: Instant) -> Flow {
        Flow {
            heard_to: now,
            quiet: false,
        }
    }

    /// A packet of theirs arrived at `now`: they are heard up to now.
    pub(super) fn packet(&mut self, now: Instant) {
        *self = Flow::new(now);
    }

    /// When silence may next be due.
    pub(super) fn due(&self) -> Instant {
        if self.quiet {
            self.heard_to + FRAME
        } else {
            self.heard_to + QUIET_AFTER
        }
    }

    /// How many silent 20 ms frames are due at `now`: none while packets come; once
    /// they stopped for [`QUIET_AFTER`], one for each 20 ms since their audio ended.
    pub(super) fn silence(&mut self, now: Instant) -> u32 {
        if !self.quiet && now.duration_since(self.heard_to) < QUIET_AFTER {
            return 0;
        }
        self.quiet = true;
        let frames = (now.duration_since(self.heard_to).as_millis() / FRAME.as_millis()) as u32;
        self.heard_to += FRAME * frames;
        frames
    }
}

/// Wait until `at` (forever when `None`).
pub(super) async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The room's realtime side: sessions by person, and the consult in flight.
#[derive(Default)]
pub(super) struct Realtime {
    /// Each person's open session.
    sessions: HashMap<u64, Conversation>,
    /// The people whose audio arrives packet by packet: their sessions hear it from
    /// there, never from the ticks.
    flows: HashMap<u64, Flow>,
    /// People whose session failed: the chained pipeline serves them for a while.
    failed: Fallback,
    /// The person whose consult ran last: a run it left is announced in their session.
    asker: Option<u64>,
    /// The consult turn running: (its room turn number, the person, the call id).
    consult: Option<(u64, u64, String)>,
    /// Each person's last utterance their session has not answered yet: if the
    /// session fails first, the chained pipeline answers it.
    unanswered: HashMap<u64, Utterance>,
    /// Cards a consult left waiting when it deferred (its turn has ended): a spoken
    /// yes or no answers the oldest still waiting.
    deferred: Vec<String>,
    /// Her words of answers that came whole but still play (a provider sends audio
    /// ahead of time): captioned once played, dropped when she is cut.
    playing: Vec<String>,
}

impl Room {
    /// Whether `user`'s utterances belong to a realtime session (the chained pipeline
    /// leaves them alone).
    pub(super) fn realtime_takes(&self, user: u64) -> bool {
        self.parts.realtime.is_some() && !self.realtime.failed.chained(user, Instant::now())
    }

    /// Whether sessions answer by themselves: only when one person is with her.
    fn alone(&self) -> bool {
        self.humans <= 1
    }

    /// The room's head count changed: sessions answer by themselves or wait for her
    /// name accordingly.
    pub(super) fn realtime_auto(&mut self) {
        let auto = self.alone();
        for c in self.realtime.sessions.values_mut() {
            if c.auto != auto {
                c.auto = auto;
                c.session.auto_answer(auto);
            }
        }
    }

    /// Say an announce's `words` through the asker's session (else anyone's); `false`
    /// when no session is open.
    pub(super) fn realtime_say(&mut self, words: &str) -> bool {
        let user = self
            .realtime
            .asker
            .filter(|u| self.realtime.sessions.contains_key(u))
            .or_else(|| self.realtime.sessions.keys().next().copied());
        match user.and_then(|u| self.realtime.sessions.get(&u)) {
            Some(c) => {
                c.session.say(words);
                true
            }
            None => false,
        }
    }

    /// One tick of audio to every realtime session whose person's packets do not
    /// arrive one by one (the page): each person's frame, silence for those who sent
    /// none (the server's turn detection counts audio time).
    pub(super) fn realtime_tick(&mut self, frames: &[(u64, Vec<i16>)]) {
        if self.parts.realtime.is_none() {
            return;
        }
        for (user, frame) in frames {
            if self.realtime.flows.contains_key(user) {
                continue;
            }
            if self.realtime_takes(*user) && !self.realtime.sessions.contains_key(user) {
                self.open_conversation(*user);
            }
            if let Some(c) = self.realtime.sessions.get(user) {
                c.session.append(frame);
            }
        }
        let silence = vec![0i16; HEAR_FRAME];
        for (user, c) in &self.realtime.sessions {
            if !frames.iter().any(|(u, _)| u == user) && !self.realtime.flows.contains_key(user) {
                c.session.append(&silence);
            }
        }
    }

    /// A person's packet arrived: its audio goes to their session at once (opened at
    /// their first audio), and from now on only what arrives so, never the ticks.
    pub(super) fn realtime_arrived(&mut self, arrived: Arrived) {
        if self.parts.realtime.is_none() {
            return;
        }
        let (user, now) = (arrived.user, Instant::now());
        match self.realtime.flows.get_mut(&user) {
            Some(flow) => flow.packet(now),
            None => {
                self.realtime.flows.insert(user, Flow::new(now));
            }
        }
        if !self.realtime_takes(user) {
            return;
        }
        if !self.realtime.sessions.contains_key(&user) {
            self.open_conversation(user);
        }
        if let Some(c) = self.realtime.sessions.get(&user) {
            c.session.append(&arrived.pcm);
        }
    }

    /// When silence is next due for a person with a session whose packets stopped.
    pub(super) fn realtime_quiet_due(&self) -> Option<Instant> {
        self.realtime
            .flows
            .iter()
            .filter(|(user, _)| self.realtime.sessions.contains_key(user))
            .map(|(_, flow)| flow.due())
            .min()
    }

    /// The silence due now, to the sessions of those whose packets stopped.
    pub(super) fn realtime_quiet(&mut self) {
        let now = Instant::now();
        for (user, flow) in self.realtime.flows.iter_mut() {
            let Some(c) = self.realtime.sessions.get(user) else {
                continue;
            };
            let frames = flow.silence(now) as usize;
            if frames > 0 {
                c.session.append(&vec![0i16; HEAR_FRAME * frames]);
            }
        }
    }

    fn open_conversation(&mut self, user: u64) {
        let Some(config) = &self.parts.realtime else {
            return;
        };
        let instructions = self.parts.engine.realtime_instructions();
        let auto = self.alone();
        let (session, mut events) = RealtimeSession::start(config, &instructions, auto);
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if tx.send(RoomEvent::Realtime { user, event }).is_err() {
                    break;
                }
            }
        });
        self.realtime.sessions.insert(
            user,
            Conversation {
                session,
                words: String::new(),
                cut: false,
                answering: false,
                auto,
            },
        );
    }

    /// Caption the answers whose audio has played out.
    pub(super) fn realtime_played(&mut self) {
        if self.realtime.playing.is_empty() || self.speaker.speaking() {
            return;
        }
        for words in std::mem::take(&mut self.realtime.playing) {
            self.post(Caption::Said(words));
        }
    }

    /// `user`'s ear ended an utterance their session hears itself: kept until the
    /// session answers it.
    pub(super) fn realtime_unanswered(&mut self, user: u64, utterance: Utterance) {
        self.realtime.unanswered.insert(user, utterance);
    }

    /// A consult's card, waiting after its turn ends.
    pub(super) fn realtime_deferred(&mut self, request_id: &str) {
        self.realtime.deferred.push(request_id.to_string());
    }

    /// The oldest card a consult left that still waits (settled ones are forgotten).
    pub(super) async fn deferred_card(&mut self) -> Option<String> {
        let open: std::collections::HashSet<String> = self
            .parts
            .engine
            .all_open_cards()
            .await
            .into_iter()
            .map(|c| c.request_id)
            .collect();
        self.realtime.deferred.retain(|id| open.contains(id));
        self.realtime.deferred.first().cloned()
    }

    /// Cancel every session's answer in progress and forget the consult (a barge-in,
    /// Stop: the consult's turn is cut with the room's turn; nothing answers it).
    pub(super) fn cancel_realtime(&mut self) {
        self.realtime.consult = None;
        self.realtime.playing.clear();
        for c in self.realtime.sessions.values_mut() {
            if c.answering {
                c.session.cancel();
                c.words.clear();
                c.cut = true;
            }
        }
    }

    pub(super) async fn on_realtime(&mut self, user: u64, event: RealtimeEvent) {
        match event {
            RealtimeEvent::Ready => self.realtime.failed.worked(user),
            RealtimeEvent::SpeechStopped { .. } => {}
            RealtimeEvent::SpeechStarted => {
                // Alone with her, the server cancels its own answer; she goes quiet
                // here at once, and what was in flight of it is not played. In a busy
                // room only her name cuts her (below).
                let auto = self.realtime.sessions.get(&user).is_some_and(|c| c.auto);
                if auto && self.speaker.speaking() && self.realtime.consult.is_none() {
                    self.hush();
                }
            }
            RealtimeEvent::Heard(words) => self.realtime_heard(user, words).await,
            RealtimeEvent::Audio(pcm) => {
                let cut = match self.realtime.sessions.get_mut(&user) {
                    Some(c) => {
                        c.answering = true;
                        c.cut
                    }
                    None => false,
                };
                if !cut && !self.parts.out.muted() {
                    self.speaker.play(&pcm, RATE);
                    // Out at once, not at the speaker's note.
                    self.feed();
                }
            }
            RealtimeEvent::Words(w) => {
                if let Some(c) = self.realtime.sessions.get_mut(&user) {
                    c.answering = true;
                    c.words.push_str(&w);
                }
            }
            RealtimeEvent::Done { status } => {
                if let Some(c) = self.realtime.sessions.get_mut(&user) {
                    c.answering = false;
                    if std::mem::take(&mut c.cut) {
                        // The end of the answer that was cut: nothing more of it plays.
                        c.words.clear();
                        return;
                    }
                }
                self.speaker.end_stream();
                self.feed();
                let words = self
                    .realtime
                    .sessions
                    .get_mut(&user)
                    .map(|c| std::mem::take(&mut c.words))
                    .unwrap_or_default();
                if status == "completed" {
                    self.realtime.unanswered.remove(&user);
                }
                if status == "completed" && !words.trim().is_empty() {
                    self.realtime.playing.push(words.trim().to_string());
                    self.realtime_played();
                }
            }
            RealtimeEvent::Consult { call_id, request } => {
                self.realtime.unanswered.remove(&user);
                self.consult(user, call_id, request).await;
            }
            RealtimeEvent::Closed(why) => {
                self.realtime.sessions.remove(&user);
                // What of its answer came still plays out.
                self.speaker.end_stream();
                if let Some(e) = why {
                    tracing::warn!("voice: {e}");
                    if self.realtime.failed.fail(user, Instant::now()) {
                        self.post(Caption::Notice(format!(
                            "{e} I'll answer with my usual voice until it works again."
                        )));
                    }
                    // What they said that it never answered: the chain answers it.
                    if let Some(utterance) = self.realtime.unanswered.remove(&user) {
                        self.answer_utterance(user, utterance).await;
                    }
                }
            }
        }
    }

    /// What `user`'s session heard them say: captioned and a spoken yes when it is
    /// hers. Alone with her the session answers by itself; in a busy room the room
    /// decides by her name and asks the session to answer.
    async fn realtime_heard(&mut self, user: u64, words: String) {
        let words = words.trim().to_string();
        if words.is_empty() || self.leaving.is_some() {
            return;
        }
        let caption = |room: &Room, words: &str| {
            room.post(Caption::Heard {
                user,
                name: room.parts.side.name_of(user),
                words: words.to_string(),
            });
        };
        let auto = self.realtime.sessions.get(&user).is_none_or(|c| c.auto);
        if auto || self.spoken_answer(user, &words).await {
            caption(self, &words);
            if auto {
                self.spoken_answer(user, &words).await;
            }
            return;
        }
        let Some(wake) = self.addressed(user, &words) else {
            return;
        };
        if let Wake::ForHer(words) = &wake {
            caption(self, words);
        }
        if let Some(c) = self.realtime.sessions.get(&user) {
            c.session.respond();
        }
    }

    /// Run a turn of her loop for `user` with `request`; its answer goes back to the
    /// session as `call_id`'s output.
    async fn consult(&mut self, user: u64, call_id: String, request: String) {
        let mut req: TurnRequest = self.turn_request(user, request);
        // The realtime model holds the clock: a gated tool defers (its card in the
        // chat), as for any agent call.
        req.el_call_bound = Some(true);
        self.run_turn(user, req, None, None).await;
        self.realtime.consult = Some((self.turn_no, user, call_id));
        self.realtime.asker = Some(user);
    }

    /// Whether the room's turn `no` is a consult (her words go back to the realtime
    /// model, not to her own voice).
    pub(super) fn is_consult(&self, no: u64) -> bool {
        self.realtime.consult.as_ref().is_some_and(|c| c.0 == no)
    }

    /// The consult turn `no` ended with `text`: the realtime model says it.
    pub(super) fn consult_done(&mut self, no: u64, text: &str) {
        let Some((n, user, call_id)) = self.realtime.consult.take() else {
            return;
        };
        if n != no {
            self.realtime.consult = Some((n, user, call_id));
            return;
        }
        let output = if text.trim().is_empty() {
            "Nothing came of it."
        } else {
            text
        };
        match self.realtime.sessions.get(&user) {
            Some(c) => c.session.answer(&call_id, output),
            // The session is gone: she says it herself.
            None => self.say(output),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn in_realtime_a_person_whose_packets_stop_is_heard_as_silence_from_when_their_packets_would_have_come(
    ) {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut flow = Flow::new(t0);
        // Packets every 20 ms (a late one too): no silence while they come.
        for at in [20, 40, 75, 80] {
            assert_eq!(flow.silence(ms(at) - Duration::from_millis(1)), 0);
            flow.packet(ms(at));
        }
        assert_eq!(flow.due(), ms(80) + QUIET_AFTER, "quiet only after 60 ms");
        assert_eq!(flow.silence(ms(139)), 0, "not yet quiet");
        // Stopped: the three frames their packets would have been, at once …
        assert_eq!(flow.silence(ms(140)), 3);
        // … then one each time a packet would have come, in step with them.
        assert_eq!(flow.due(), ms(160));
        assert_eq!(flow.silence(ms(159)), 0);
        assert_eq!(flow.silence(ms(165)), 1);
        assert_eq!(flow.due(), ms(180), "still in step with their packets");
        assert_eq!(
            flow.silence(ms(221)),
            3,
            "a late wake counts what was missed"
        );
        // They speak again: no silence while their packets come.
        flow.packet(ms(230));
        assert_eq!(flow.silence(ms(250)), 0);
        assert_eq!(flow.due(), ms(290));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_session_is_told_once_and_the_chain_serves_its_person_until_the_retry() {
        let mut f = Fallback::default();
        let t0 = Instant::now();
        assert!(!f.chained(7, t0), "nobody is chained at first");
        assert!(f.fail(7, t0), "the first failure is told");
        assert!(f.chained(7, t0));
        assert!(!f.chained(8, t0), "only the person whose session failed");
        tokio::time::advance(RETRY - Duration::from_millis(1)).await;
        assert!(f.chained(7, Instant::now()));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(
            !f.chained(7, Instant::now()),
            "after the retry a new session is tried"
        );
        assert!(
            !f.fail(7, Instant::now()),
            "failing again is not told again"
        );
        assert!(f.chained(7, Instant::now()));
        f.worked(7);
        assert!(!f.chained(7, Instant::now()));
        assert!(
            f.fail(7, Instant::now()),
            "after it worked, a new failure is told"
        );
    }
}
