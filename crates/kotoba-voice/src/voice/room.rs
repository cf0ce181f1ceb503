//! One voice room above the boundary: per-speaker endpointing, recognition, wake and
//! turn-taking, spoken turns (register voice, channel voice), her voice streamed
//! sentence by sentence, barge-in, captions, the watchdog, leave and auto-leave
//! (voice.md). It never sees songbird: heard ticks come in, frames go out.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::boundary::{Arrived, Heard};
use super::speaker::{Speaker, SpeakerNote};
use crate::speech::audio::FRAME;
use crate::speech::endpoint::{ends_unsure, Endpointer, Heard as Ear};
use crate::speech::filter::Sentences;
use crate::speech::wake::{wake, Names, Wake, ACKNOWLEDGEMENTS, WAKE_WINDOW};
use crate::speech::SpeechError;
use kotoba_core::protocol::Event;
use kotoba_engine::engine::StopScope;

mod announce;
mod early;
mod parts;
mod pause;
mod realtime;
mod streams;
mod turns;

pub use parts::{Caption, Control, RoomEnd, RoomHandle, RoomParts, RoomSide, Trace, CAPTION_MAX};
use pause::{Pause, Verdict};

/// A spoken turn that has said nothing this long (not waiting on a card or a running
/// tool) is cancelled.
pub const SILENT_TURN_LIMIT: Duration = Duration::from_secs(75);
/// Any spoken turn running this long is cancelled.
pub const TURN_LIMIT: Duration = Duration::from_secs(600);
/// How long a leave waits for the turn and playback to finish.
pub const LEAVE_WAIT: Duration = Duration::from_secs(30);
/// Frames handed to the AudioOut ahead of the clock (absorbs scheduling jitter; a
/// stop drops them, so barge-in stays within 100 ms).
const LEAD_FRAMES: usize = 3;
/// How long without a heard tick before the room's clock counts silence itself
/// (songbird ticks every 20 ms in a call, so this covers a stalled source).
const SILENT_SOURCE: Duration = Duration::from_millis(100);
/// What she says when the watchdog gives up on a turn.
pub const GIVE_UP_LINE: &str = "Sorry, that took too long, so I stopped.";

enum RoomEvent {
    Transcript {
        user: u64,
        text: Result<String, SpeechError>,
        commit: Commit,
        stt: Duration,
    },
    /// What was said up to a short pause, recognised early.
    Early {
        user: u64,
        text: Result<String, SpeechError>,
        /// The utterance's last voiced frame at the pause.
        last_voiced: u64,
        stt: Duration,
    },
    Frame {
        turn: u64,
        event: Arc<Event>,
    },
    /// What a person's realtime session reported (`voice_mode: realtime`).
    Realtime {
        user: u64,
        event: crate::speech::realtime_voice::RealtimeEvent,
    },
    /// A job or a deferred run ended in the room's session.
    RunDone {
        run_id: String,
        summary: String,
    },
    /// Its announce turn's words, to say.
    Announce(String),
}

struct Hold {
    text: String,
    until_frame: u64,
    /// They spoke again: the hold waits for that utterance's words.
    resumed: bool,
}

/// When an utterance was committed.
#[derive(Debug, Clone, Copy)]
struct Commit {
    /// The commit.
    at: Instant,
    /// The speaker's frame clock at the commit.
    ended_at: u64,
    /// The end of their speech (the last voiced frame), in the room's time.
    speech_end: Instant,
}

struct EarState {
    endpointer: Endpointer,
    held: Option<Hold>,
    /// What they said up to the current pause, found a complete request.
    early: Option<early::Early>,
    /// The open utterance's recognition stream, when the recognizer streams.
    stream: Option<streams::Streamed>,
}

struct Live {
    /// Its number ([`Room::turn_no`] when it started).
    no: u64,
    /// When it started (the 600 s limit).
    started: Instant,
    /// When it last made a sound or showed work (the 75 s watchdog).
    last_voice: Instant,
    /// Its action rows still open: a running tool is not silence.
    rows: HashSet<String>,
    /// Its cards still waiting: a spoken yes or no answers the first.
    cards: HashSet<String>,
    /// The cards she already asked again about after an unclear spoken answer.
    asked_again: HashSet<String>,
    /// A read tool is running (reads show a peek, not a row).
    peeking: bool,
    /// Her words as they stream, cut into sentences for the speaker.
    sentences: Sentences,
}

/// Start a room; `humans` is how many people are in the channel now.
pub fn spawn(parts: RoomParts, humans: usize) -> RoomHandle {
    let (heard_tx, heard_rx) = mpsc::channel(256);
    let (arrived_tx, arrived_rx) = mpsc::channel(256);
    let (control_tx, control_rx) = mpsc::channel(16);
    let task = tokio::spawn(async move {
        Room::new(parts, humans)
            .await
            .run(heard_rx, arrived_rx, control_rx)
            .await
    });
    RoomHandle {
        heard: heard_tx,
        arrived: arrived_tx,
        control: control_tx,
        task,
    }
}

struct Room {
    /// What the room is built from: the engine and session, the providers, her
    /// names, the surface's side (who each person is, where captions go).
    parts: RoomParts,
    /// Her names, matched fuzzily in what is heard (who an utterance is for).
    names: Names,
    /// Each person's ear: their endpointer and what they are saying now. A turn
    /// started from an utterance speaks for the person whose ear heard it.
    ears: HashMap<u64, EarState>,
    /// How many people are in the channel: alone with her, everything is for her.
    humans: usize,
    /// Her voice: lines in, synthesis one ahead, frames out.
    speaker: Speaker,
    /// What the speaker reports back (a line begun, the queue drained).
    notes: mpsc::UnboundedReceiver<SpeakerNote>,
    /// Where the room's own tasks (recognitions, turns) send their results.
    events_tx: mpsc::UnboundedSender<RoomEvent>,
    /// Those results, read by the actor's loop.
    events: mpsc::UnboundedReceiver<RoomEvent>,
    /// Frames handed to the audio out ahead of the room's clock (at most 3).
    handed_ahead: usize,
    /// Until when her name alone holds the room open: what is said meanwhile is hers.
    window_until: Option<Instant>,
    /// The person whose name alone opened that window (in a busy room, only they).
    served: Option<u64>,
    /// Her turn in flight.
    turn: Option<Live>,
    /// How many turns she started: a late event of an older turn is known by it.
    turn_no: u64,
    /// The recognizer failed and said so once; it is not said again until it works.
    stt_failing: bool,
    /// The synthesizer failed and said so once; likewise.
    tts_failing: bool,
    /// Since when no human is in the channel (she leaves after `idle_leave`).
    alone_since: Option<Instant>,
    /// Who asked to leave, and the latest moment to go.
    leaving: Option<(Vec<oneshot::Sender<()>>, Instant)>,
    /// Someone she serves began to speak over her: playback is paused until their
    /// speech reaches `min_speech` (then it is a barge-in) or ends as a cough.
    pausing: Option<Pause>,
    /// When the last tick was heard: ticks that do not come are counted by the room's
    /// own clock, so silence is measured in audio time.
    last_heard: Instant,
    /// The latency record of the utterance being answered.
    trace: Option<Trace>,
    /// Which acknowledgement of her name comes next (they take turns).
    acks: usize,
    /// The model asked at a short pause, for the turn its words would start.
    speculation: Option<early::Ahead>,
    /// Stops of the session's turn (the page's Stop, /stop, "stop" in the chat): she
    /// goes quiet with each one that is not the room's own.
    stops: tokio::sync::watch::Receiver<u64>,
    /// With `voice_mode: realtime`: each person's speech-to-speech session and the
    /// consult in flight (`room/realtime.rs`).
    realtime: realtime::Realtime,
    /// The room's mark on its session: runs that end there are announced aloud here.
    _call: kotoba_engine::engine::CallMark,
}

impl Room {
    async fn new(parts: RoomParts, humans: usize) -> Room {
        let (notes_tx, notes) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        let session = parts.engine.session(parts.session.as_str()).await;
        let stops = session.stops();
        let call = kotoba_engine::engine::Session::enter_call(&session);
        Room {
            names: Names::new(&parts.names),
            speaker: Speaker::new(parts.synthesizer.clone(), notes_tx),
            parts,
            ears: HashMap::new(),
            humans,
            notes,
            events_tx,
            events,
            handed_ahead: 0,
            window_until: None,
            served: None,
            turn: None,
            turn_no: 0,
            stt_failing: false,
            tts_failing: false,
            alone_since: None,
            leaving: None,
            pausing: None,
            last_heard: Instant::now(),
            trace: None,
            acks: 0,
            speculation: None,
            stops,
            realtime: realtime::Realtime::default(),
            _call: call,
        }
    }

    async fn run(
        mut self,
        mut heard: mpsc::Receiver<Heard>,
        mut arrived: mpsc::Receiver<Arrived>,
        mut control: mpsc::Receiver<Control>,
    ) -> RoomEnd {
        let mut clock = tokio::time::interval(FRAME);
        clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.listen_for_runs().await;
        let mut arriving = true;
        let end = loop {
            let quiet = self.realtime_quiet_due();
            tokio::select! {
                biased;
                c = control.recv() => match c {
                    Some(Control::Humans(n)) => {
                        self.humans = n;
                        self.realtime_auto();
                    }
                    Some(Control::Leave(reply)) => match self.leaving.as_mut() {
                        Some((replies, _)) => replies.push(reply),
                        None => self.leaving = Some((vec![reply], Instant::now() + LEAVE_WAIT)),
                    },
                    Some(Control::Release) => break RoomEnd::Moved,
                    Some(Control::Arriving(user)) => self.on_arriving(user),
                    Some(Control::Speak { user, turn }) => self.speak_typed(user, *turn).await,
                    None => break RoomEnd::Dropped,
                },
                a = arrived.recv(), if arriving => match a {
                    Some(a) => self.realtime_arrived(a),
                    None => arriving = false,
                },
                () = realtime::until(quiet) => self.realtime_quiet(),
                h = heard.recv() => match h {
                    Some(h) => self.on_heard(h).await,
                    None => break RoomEnd::Dropped,
                },
                Some(ev) = self.events.recv() => self.on_event(ev).await,
                Some(note) = self.notes.recv() => self.on_note(note),
                Ok(()) = self.stops.changed() => self.hush(),
                _ = clock.tick() => {
                    if let Some(end) = self.on_clock(heard.is_empty()).await {
                        break end;
                    }
                }
            }
        };
        self.speaker.hush();
        if end != RoomEnd::Left {
            // After a leave the last handed frames may play out; otherwise stop now.
            self.parts.out.stop();
        }
        if end != RoomEnd::Moved && self.turn.take().is_some() {
            self.stop_turn();
        }
        if let Some((replies, _)) = self.leaving.take() {
            for reply in replies {
                let _ = reply.send(());
            }
        }
        end
    }

    // ---- hearing -------------------------------------------------------------

    fn ear(&mut self, user: u64) -> &mut EarState {
        let settings = self.parts.endpoint;
        self.ears.entry(user).or_insert_with(|| EarState {
            endpointer: Endpointer::new(settings, crate::speech::vad::detector()),
            held: None,
            early: None,
            stream: None,
        })
    }

    /// One 20 ms tick of audio: each person who sent a frame, silence for the rest.
    async fn on_heard(&mut self, heard: Heard) {
        self.last_heard = Instant::now();
        self.tick(heard).await;
    }

    /// One frame of audio time for every ear.
    async fn tick(&mut self, heard: Heard) {
        self.realtime_tick(&heard.frames);
        let mut sent: HashSet<u64> = HashSet::new();
        let mut happened = Vec::new();
        for (user, frame) in heard.frames {
            sent.insert(user);
            if let Some(h) = self.ear(user).endpointer.push(&frame) {
                happened.push((user, h));
            }
        }
        for (user, ear) in self.ears.iter_mut() {
            if !sent.contains(user) {
                if let Some(h) = ear.endpointer.silence() {
                    happened.push((*user, h));
                }
            }
        }
        self.feed_streams();
        for (user, h) in happened {
            self.on_ear(user, h).await;
        }
        self.confirm_pause();
        self.release_holds().await;
    }

    async fn on_ear(&mut self, user: u64, heard: Ear) {
        // A person's realtime session hears and answers their utterances itself; their
        // ear still pauses her when they speak over her.
        let realtime = self.realtime_takes(user);
        match heard {
            Ear::Committed(_) | Ear::Paused(_) if realtime => {
                self.paused_speech_goes_on(user);
                if let Ear::Committed(utterance) = heard {
                    // Kept until the session answers it: if the session fails first,
                    // the chained pipeline answers it instead.
                    self.realtime_unanswered(user, utterance);
                }
            }
            Ear::Started => {
                if let Some(h) = self.ears.get_mut(&user).and_then(|e| e.held.as_mut()) {
                    h.resumed = true;
                }
                // They went on: what was asked at their pause is cancelled, silently.
                self.drop_speculation(user);
                if !realtime {
                    self.open_stream(user);
                }
                let serving = self.humans <= 1 || self.served == Some(user);
                match self.pausing.as_mut() {
                    Some(p) if p.user == user => p.speech_started(),
                    Some(_) => {}
                    None if serving && self.speaker.speaking() => {
                        // Quiet at once; whether it is a barge-in or a cough is known
                        // once the speech reaches min_speech.
                        let now = self.ear(user).endpointer.now();
                        self.pause(Pause::on_speech(user, now));
                    }
                    None => {}
                }
            }
            Ear::Committed(utterance) => self.answer_utterance(user, utterance).await,
            Ear::Paused(so_far) => self.on_paused(user, so_far),
            Ear::Dropped => {
                self.close_stream(user);
                // A cough: she goes on where she paused.
                if self.pausing.is_some_and(|p| p.user == user) {
                    self.pausing = None;
                    self.feed();
                }
                if let Some(h) = self.ears.get_mut(&user).and_then(|e| e.held.as_mut()) {
                    h.resumed = false;
                }
            }
        }
    }

    /// `user`'s utterance ended: recognise it (or take its words recognised at the
    /// pause) and answer it.
    pub(super) async fn answer_utterance(
        &mut self,
        user: u64,
        utterance: crate::speech::endpoint::Utterance,
    ) {
        self.paused_speech_goes_on(user);
        let now = Instant::now();
        let quiet = utterance.ended_at.saturating_sub(utterance.last_voiced());
        let commit = Commit {
            at: now,
            ended_at: utterance.ended_at,
            speech_end: now
                .checked_sub(FRAME * u32::try_from(quiet).unwrap_or(0))
                .unwrap_or(now),
        };
        // Recognised at the pause and nothing said since: no second ask.
        if let Some(e) = self.take_early(user, &utterance) {
            self.close_stream(user);
            self.on_transcript(user, Ok(e.text), commit, e.stt).await;
            return;
        }
        self.recognise(user, true, utterance.pcm, move |text, stt| {
            RoomEvent::Transcript {
                user,
                text,
                commit,
                stt,
            }
        });
    }

    /// `user`, whom she paused for, spoke on to the end of an utterance or a pause: it
    /// was a barge-in.
    fn paused_speech_goes_on(&mut self, user: u64) {
        if self.pausing.is_some_and(|p| p.user == user) {
            self.pausing = None;
            self.barge_in();
        }
    }

    /// Go quiet at once for `pause` (the frames handed ahead are dropped).
    fn pause(&mut self, pause: Pause) {
        self.pausing = Some(pause);
        self.parts.out.stop();
        self.handed_ahead = 0;
    }

    /// A voiced packet from `user` arrived ahead of the ticks: if she is talking over
    /// someone she serves, she pauses now.
    fn on_arriving(&mut self, user: u64) {
        let serving = self.humans <= 1 || self.served == Some(user);
        if serving && self.speaker.speaking() && self.pausing.is_none() {
            let now = self.ear(user).endpointer.now();
            self.pause(Pause::on_arrival(user, now));
        }
    }

    /// A pause whose speech reached `min_speech` is a barge-in; one that came to
    /// nothing lets her go on where she paused.
    fn confirm_pause(&mut self) {
        let Some(mut pause) = self.pausing else {
            return;
        };
        let Some(ear) = self.ears.get(&pause.user) else {
            return;
        };
        match pause.judge(&ear.endpointer, self.parts.endpoint.min_speech) {
            Verdict::Wait => self.pausing = Some(pause),
            Verdict::BargeIn => {
                self.pausing = None;
                self.barge_in();
            }
            Verdict::Resume => {
                self.pausing = None;
                self.feed();
            }
        }
    }

    /// Held words ("… and") whose speaker stayed quiet for the unsure time go ahead.
    async fn release_holds(&mut self) {
        let mut go = Vec::new();
        for (user, ear) in self.ears.iter_mut() {
            let due = ear.held.as_ref().is_some_and(|h| {
                !h.resumed && ear.endpointer.now() >= h.until_frame && !ear.endpointer.in_speech()
            });
            if due {
                if let Some(h) = ear.held.take() {
                    go.push((*user, h.text));
                }
            }
        }
        for (user, text) in go {
            self.for_whom(user, text, None).await;
        }
    }

    async fn on_transcript(
        &mut self,
        user: u64,
        text: Result<String, SpeechError>,
        commit: Commit,
        stt: Duration,
    ) {
        let text = match text {
            Ok(t) => {
                self.stt_failing = false;
                t.trim().to_string()
            }
            Err(e) => {
                if !self.stt_failing {
                    self.stt_failing = true;
                    tracing::warn!("voice: {e}");
                    self.post(Caption::Notice(format!(
                        "I can't hear anyone right now: {e}"
                    )));
                }
                // Words held for more go ahead as they are.
                if let Some(h) = self.ears.get_mut(&user).and_then(|e| e.held.take()) {
                    self.for_whom(user, h.text, None).await;
                }
                return;
            }
        };
        let extra = {
            let s = &self.parts.endpoint;
            s.unsure.saturating_sub(s.silence)
        };
        let ear = self.ear(user);
        let text = match ear.held.take() {
            Some(h) if !text.is_empty() => format!("{} {text}", h.text),
            Some(h) => h.text,
            None => text,
        };
        if text.is_empty() {
            return;
        }
        if ends_unsure(&text) && !extra.is_zero() {
            let frames = (extra.as_millis() / FRAME.as_millis()) as u64;
            // Counted from the commit: the unsure time is silence after the speech.
            let until_frame = commit.ended_at + frames;
            let resumed = ear.endpointer.in_speech();
            ear.held = Some(Hold {
                text,
                until_frame,
                resumed,
            });
            return;
        }
        let trace = Trace {
            speech_end: commit.speech_end,
            committed: commit.at,
            recognised: Instant::now(),
            stt,
            turn_started: Instant::now(),
            first_sentence: None,
            synth: None,
            first_frame: None,
        };
        self.for_whom(user, text, Some(trace)).await;
    }

    /// Wake and turn-taking: is this utterance for her, and what happens then.
    async fn for_whom(&mut self, user: u64, text: String, trace: Option<Trace>) {
        if self.leaving.is_some() || self.spoken_answer(user, &text).await {
            return;
        }
        match self.addressed(user, &text) {
            Some(Wake::NameOnly) => {
                let ack = ACKNOWLEDGEMENTS[self.acks % ACKNOWLEDGEMENTS.len().max(1)];
                self.acks += 1;
                self.speaker.say(ack);
            }
            Some(Wake::ForHer(words)) => self.start_turn(user, words, trace).await,
            Some(Wake::Ignore) | None => {}
        }
    }

    /// Whether `text` from `user` is for her (her name, or the window her name alone
    /// opened): if so she stops what she is saying (a barge-in), her name alone opens
    /// the window for them, and a request closes it. `None` when it is not for her.
    fn addressed(&mut self, user: u64, text: &str) -> Option<Wake> {
        let now = Instant::now();
        let window_open = self.window_until.is_some_and(|t| now < t);
        let wake = wake(text, &self.names, self.humans, window_open);
        match &wake {
            Wake::Ignore => return None,
            Wake::NameOnly => {
                self.window_until = Some(now + WAKE_WINDOW);
                self.served = Some(user);
            }
            Wake::ForHer(_) => self.window_until = None,
        }
        if self.speaker.speaking() || self.turn.is_some() {
            self.barge_in();
        }
        Some(wake)
    }

    /// Cut the room's turn in the engine (barge-in, the watchdog, the room ending);
    /// the stop is the room's own, so it does not hush what she says next.
    fn stop_turn(&mut self) {
        self.parts
            .engine
            .stop(self.parts.session.as_str(), StopScope::Turn);
        self.stops.borrow_and_update();
    }

    /// She goes quiet at once and nothing of the room's turn plays on (a stop from
    /// outside the room, a barge-in, a typed turn taking over).
    fn hush(&mut self) {
        self.turn = None;
        self.trace = None;
        self.pausing = None;
        self.speaker.hush();
        self.parts.out.stop();
        self.handed_ahead = 0;
        self.cancel_realtime();
    }

    // ---- the clock -------------------------------------------------------------

    async fn on_clock(&mut self, no_ticks_queued: bool) -> Option<RoomEnd> {
        let now = Instant::now();
        // When no ticks come (everyone silent, or a source that sends nothing then),
        // the clock keeps audio time: one silent frame per 20 ms missed.
        let gap = now.duration_since(self.last_heard);
        if no_ticks_queued && gap >= SILENT_SOURCE {
            let missed = (gap.as_millis() / FRAME.as_millis()).min(500) as u32;
            for _ in 0..missed {
                self.tick(Heard::default()).await;
            }
            self.last_heard += FRAME * missed;
        }
        self.handed_ahead = self.handed_ahead.saturating_sub(1);
        self.feed();
        self.realtime_played();
        if self.speaker.speaking() {
            if let Some(live) = self.turn.as_mut() {
                live.last_voice = now;
            }
        }
        self.watchdog(now);
        if self.humans == 0 {
            let since = *self.alone_since.get_or_insert(now);
            if now.duration_since(since) >= self.parts.idle_leave {
                return Some(RoomEnd::Alone);
            }
        } else {
            self.alone_since = None;
        }
        if let Some((_, deadline)) = &self.leaving {
            let done = self.turn.is_none() && !self.speaker.speaking();
            if done || now >= *deadline {
                return Some(RoomEnd::Left);
            }
        }
        None
    }

    fn watchdog(&mut self, now: Instant) {
        let Some(live) = &self.turn else {
            return;
        };
        let waiting = !live.rows.is_empty() || !live.cards.is_empty() || live.peeking;
        let too_long = now.duration_since(live.started) >= TURN_LIMIT;
        let silent = !waiting && now.duration_since(live.last_voice) >= SILENT_TURN_LIMIT;
        if too_long || silent {
            tracing::info!(
                "voice: gave up on a spoken turn ({})",
                if too_long {
                    "over 600 s"
                } else {
                    "silent 75 s"
                }
            );
            self.turn = None;
            self.trace = None;
            self.stop_turn();
            self.speaker.hush();
            self.speaker.say(GIVE_UP_LINE);
        }
    }

    /// Hand frames to the AudioOut, keeping at most [`LEAD_FRAMES`] ahead of the clock.
    fn feed(&mut self) {
        if self.pausing.is_some() {
            return;
        }
        if let Some(queued) = self.parts.out.queued() {
            // The player says what it has not played yet: pace by that.
            self.handed_ahead = queued;
        }
        while self.handed_ahead < LEAD_FRAMES {
            let Some(frame) = self.speaker.pop_frame() else {
                break;
            };
            self.parts.out.frame(&frame);
            self.handed_ahead += 1;
            if let Some(t) = self.trace.as_mut() {
                if t.first_sentence.is_some() && t.first_frame.is_none() {
                    t.first_frame = Some(Instant::now());
                    if let (Some(tx), Some(done)) = (&self.parts.trace, self.trace.take()) {
                        let _ = tx.send(done);
                    }
                }
            }
        }
    }

    // ---- events ----------------------------------------------------------------

    async fn on_event(&mut self, ev: RoomEvent) {
        match ev {
            RoomEvent::Transcript {
                user,
                text,
                commit,
                stt,
            } => self.on_transcript(user, text, commit, stt).await,
            RoomEvent::Early {
                user,
                text,
                last_voiced,
                stt,
            } => self.on_early(user, text, last_voiced, stt).await,
            RoomEvent::Frame { turn, event } => self.on_frame(turn, &event),
            RoomEvent::Realtime { user, event } => self.on_realtime(user, event).await,
            RoomEvent::RunDone { run_id, summary } => self.on_run_done(run_id, summary),
            RoomEvent::Announce(words) => self.on_announce(words),
        }
    }

    fn on_note(&mut self, note: SpeakerNote) {
        match note {
            SpeakerNote::Audio => self.feed(),
            SpeakerNote::Synthesised(took) => {
                self.tts_failing = false;
                if let Some(t) = self.trace.as_mut() {
                    t.synth.get_or_insert(took);
                }
            }
            SpeakerNote::Failed(e) => {
                if !self.tts_failing {
                    self.tts_failing = true;
                    tracing::warn!("voice: {e}");
                    self.post(Caption::Notice(format!("I can't speak right now: {e}")));
                }
            }
        }
    }

    fn post(&self, caption: Caption) {
        let side = self.parts.side.clone();
        tokio::spawn(async move { side.post(caption).await });
    }
}
