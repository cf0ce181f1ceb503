//! Hearing: songbird's receive events become the room's [`Heard`] ticks. Speaking-state
//! events map each stream (SSRC) to a person; each 20 ms voice tick becomes one `Heard`
//! with one 320-sample frame per person who spoke; bots and unknown streams are dropped.
//! Each arriving RTP packet is also decoded and judged at once ([`super::arrival`]): a
//! person's first voiced packet after quiet tells the room ([`Control::Arriving`])
//! before songbird's playout buffer and tick hand that audio over, so she can pause
//! sooner; in a realtime room ([`Receiver::with_arrivals`]) the packet's audio goes to
//! the room as it arrives ([`Arrived`]), which is what the person's realtime session
//! hears. Nothing here ever blocks songbird: a full room channel drops the tick (or
//! the packet's audio) and counts it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use songbird::events::{CoreEvent, Event, EventContext, EventHandler};
use songbird::packet::Packet;
use songbird::Call;
use tokio::sync::mpsc;

use super::arrival::Arrivals;
use crate::speech::audio::HEAR_FRAME;
use crate::voice::boundary::{Arrived, Heard};
use crate::voice::room::Control;

/// Who is in her voice channel now; the room refreshes it as people come and go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members {
    /// The people (not bots) in the channel.
    pub humans: Vec<u64>,
    /// The bots in the channel (her included).
    pub bots: Vec<u64>,
}

/// [`Members`], shared between the room (writer) and the receiver (reader).
pub type SharedMembers = Arc<RwLock<Members>>;

/// The most audio one person may have waiting to be framed (1 s); older audio beyond
/// it is dropped, so a sender's odd packet sizes can never build up delay.
const MAX_CARRY: usize = 50 * HEAR_FRAME;

/// Which stream (SSRC) is which person.
#[derive(Debug, Clone, Default)]
pub struct SsrcMap {
    users: HashMap<u32, u64>,
}

impl SsrcMap {
    /// A speaking-state event: `ssrc` is `user`'s stream (a user's older streams are
    /// forgotten). Events without a user change nothing.
    pub fn speaking(&mut self, ssrc: u32, user: Option<u64>) {
        let Some(user) = user else { return };
        self.users.retain(|_, u| *u != user);
        self.users.insert(ssrc, user);
    }

    /// `user` left the call: forget their streams.
    pub fn disconnected(&mut self, user: u64) {
        self.users.retain(|_, u| *u != user);
    }

    /// The person whose stream `ssrc` is, when they are a person. A stream no
    /// speaking event named (under DAVE those events may not come) goes to the only
    /// person in the channel who has no stream yet, and is remembered; when that is
    /// not exactly one person, the stream is ignored. Bots' streams are ignored.
    pub fn person(&mut self, ssrc: u32, members: &Members) -> Option<u64> {
        if let Some(user) = self.users.get(&ssrc) {
            return (!members.bots.contains(user)).then_some(*user);
        }
        let mut unmatched = members
            .humans
            .iter()
            .filter(|h| !members.bots.contains(h) && !self.users.values().any(|u| u == *h));
        let only = *unmatched.next()?;
        if unmatched.next().is_some() {
            return None;
        }
        self.users.insert(ssrc, only);
        Some(only)
    }

    /// The user of `ssrc`, if known.
    pub fn user_of(&self, ssrc: u32) -> Option<u64> {
        self.users.get(&ssrc).copied()
    }
}

/// One stream's audio in one tick, as songbird decoded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voice<'a> {
    /// The stream.
    pub ssrc: u32,
    /// 16 kHz mono samples (20 ms is [`HEAR_FRAME`]; other lengths are re-framed).
    pub pcm: &'a [i16],
    /// The packet was lost and this is the decoder's concealment: only one frame of it
    /// is kept (songbird may hand over more than the 20 ms the tick stands for).
    pub concealed: bool,
}

/// Cuts each person's audio into exact 20 ms frames, one per tick, without dropping or
/// repeating samples: longer packets carry over to the next ticks, and the last partial
/// frame is padded with silence when they stop.
#[derive(Debug, Default)]
pub struct Framer {
    carry: BTreeMap<u64, Vec<i16>>,
}

impl Framer {
    /// One tick: `voices` are the people who sent audio (user, samples, concealed).
    /// Returns the frames of this tick, by user id.
    pub fn tick(&mut self, voices: &[(u64, &[i16], bool)]) -> Vec<(u64, Vec<i16>)> {
        for &(user, pcm, concealed) in voices {
            let carry = self.carry.entry(user).or_default();
            if concealed {
                let keep = pcm.len().min(HEAR_FRAME);
                carry.extend_from_slice(&pcm[..keep]);
                carry.resize(carry.len() + (HEAR_FRAME - keep), 0);
            } else {
                carry.extend_from_slice(pcm);
            }
            if carry.len() > MAX_CARRY {
                let excess = carry.len() - MAX_CARRY;
                carry.drain(..excess);
            }
        }
        let mut out = Vec::new();
        self.carry.retain(|&user, carry| {
            let spoke = voices.iter().any(|(u, _, _)| *u == user);
            if carry.len() >= HEAR_FRAME {
                out.push((user, carry.drain(..HEAR_FRAME).collect()));
            } else if !spoke && !carry.is_empty() {
                // They stopped: the tail, padded to a whole frame.
                let mut last = std::mem::take(carry);
                last.resize(HEAR_FRAME, 0);
                out.push((user, last));
            }
            !carry.is_empty()
        });
        out
    }
}

/// What the receiver keeps between events.
#[derive(Debug, Default)]
struct State {
    map: SsrcMap,
    framer: Framer,
    arrivals: Arrivals,
}

/// The receiver: register it on a joined call with [`Receiver::attach`].
#[derive(Clone)]
pub struct Receiver {
    state: Arc<Mutex<State>>,
    members: SharedMembers,
    tx: mpsc::Sender<Heard>,
    control: mpsc::Sender<Control>,
    /// Where each person's audio goes as it arrives (a realtime room), if anywhere.
    arrived: Option<mpsc::Sender<Arrived>>,
    dropped: Arc<AtomicU64>,
}

impl Receiver {
    /// A receiver that sends each tick to `tx` and each person's onset on arrival to
    /// `control`, with the channel's people in `members`.
    pub fn new(
        tx: mpsc::Sender<Heard>,
        control: mpsc::Sender<Control>,
        members: SharedMembers,
    ) -> Receiver {
        Receiver {
            state: Arc::new(Mutex::new(State::default())),
            members,
            tx,
            control,
            arrived: None,
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Also send each person's audio to `arrived` as their packets arrive (a realtime
    /// room: their session hears it from there, not from the ticks).
    pub fn with_arrivals(mut self, arrived: mpsc::Sender<Arrived>) -> Receiver {
        self.arrived = Some(arrived);
        self
    }

    /// Listen on `call`: speaking states, voice ticks and disconnects.
    pub fn attach(&self, call: &mut Call) {
        for event in [
            CoreEvent::SpeakingStateUpdate,
            CoreEvent::VoiceTick,
            CoreEvent::RtpPacket,
            CoreEvent::ClientDisconnect,
        ] {
            call.add_global_event(Event::Core(event), self.clone());
        }
    }

    /// How many ticks (or packets' audio) were dropped because the room's channel was
    /// full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// A speaking-state event.
    pub fn on_speaking(&self, ssrc: u32, user: Option<u64>) {
        self.state().map.speaking(ssrc, user);
    }

    /// Someone left the call.
    pub fn on_disconnect(&self, user: u64) {
        let mut state = self.state();
        let streams: Vec<u32> = state
            .map
            .users
            .iter()
            .filter(|(_, u)| **u == user)
            .map(|(s, _)| *s)
            .collect();
        for ssrc in streams {
            state.arrivals.forget(ssrc);
        }
        state.map.disconnected(user);
    }

    /// RTP packet `seq` of stream `ssrc` arrived with this Opus payload (before the
    /// playout buffer). A person's onset goes to the room at once, without waiting, and
    /// in a realtime room so does the packet's audio; returns whether an onset was sent.
    pub fn on_packet(&self, ssrc: u32, seq: u16, opus: &[u8]) -> bool {
        let members = match self.members.read() {
            Ok(m) => m.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let (user, arrival) = {
            let mut state = self.state();
            let Some(user) = state.map.person(ssrc, &members) else {
                return false;
            };
            let now = tokio::time::Instant::now();
            (user, state.arrivals.packet(ssrc, seq, opus, now))
        };
        if let Some(arrived) = self.arrived.as_ref().filter(|_| !arrival.pcm.is_empty()) {
            let heard = Arrived {
                user,
                pcm: arrival.pcm,
            };
            if let Err(mpsc::error::TrySendError::Full(_)) = arrived.try_send(heard) {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(
                        "voice: the room is behind; {n} heard packets or ticks dropped so far"
                    );
                }
            }
        }
        arrival.onset && self.control.try_send(Control::Arriving(user)).is_ok()
    }

    /// One voice tick: the streams that sent audio. Sends one [`Heard`] (empty when no
    /// person spoke) without waiting; returns false when it was dropped.
    pub fn on_tick(&self, voices: &[Voice<'_>]) -> bool {
        let members = match self.members.read() {
            Ok(m) => m.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let frames = {
            let mut state = self.state();
            let mut people: Vec<(u64, &[i16], bool)> = Vec::with_capacity(voices.len());
            for v in voices {
                if let Some(user) = state.map.person(v.ssrc, &members) {
                    people.push((user, v.pcm, v.concealed));
                }
            }
            state.framer.tick(&people)
        };
        match self.tx.try_send(Heard { frames }) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!("voice: the room is behind; {n} heard ticks dropped so far");
                }
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

#[async_trait]
impl EventHandler for Receiver {
    async fn act(&self, ctx: &EventContext<'_>) -> Option<Event> {
        match ctx {
            EventContext::SpeakingStateUpdate(s) => {
                self.on_speaking(s.ssrc, s.user_id.map(|u| u.0));
            }
            EventContext::ClientDisconnect(d) => self.on_disconnect(d.user_id.0),
            EventContext::RtpPacket(data) => {
                let rtp = data.rtp();
                let payload = rtp.payload();
                let end = payload.len().saturating_sub(data.payload_end_pad);
                if let Some(opus) = payload.get(data.payload_offset..end) {
                    self.on_packet(rtp.get_ssrc(), rtp.get_sequence().into(), opus);
                }
            }
            EventContext::VoiceTick(tick) => {
                let mut voices: Vec<Voice<'_>> = tick
                    .speaking
                    .iter()
                    .filter_map(|(ssrc, data)| {
                        Some(Voice {
                            ssrc: *ssrc,
                            pcm: data.decoded_voice.as_deref()?,
                            concealed: data.packet.is_none(),
                        })
                    })
                    .collect();
                voices.sort_by_key(|v| v.ssrc);
                self.on_tick(&voices);
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(humans: &[u64], bots: &[u64]) -> Members {
        Members {
            humans: humans.to_vec(),
            bots: bots.to_vec(),
        }
    }

    #[test]
    fn speaking_events_map_streams_to_people() {
        // (events: (ssrc, user)), then (ssrc → expected person).
        type Case = (&'static [(u32, Option<u64>)], &'static [(u32, Option<u64>)]);
        let m = members(&[1, 2, 3], &[900]);
        let table: [Case; 4] = [
            (
                &[(11, Some(1)), (12, Some(2))],
                &[(11, Some(1)), (12, Some(2))],
            ),
            // A new stream for the same person replaces the old one.
            (
                &[(11, Some(1)), (21, Some(1))],
                &[(21, Some(1)), (11, None)],
            ),
            // A stream re-used by someone else now belongs to them.
            (&[(11, Some(1)), (11, Some(2))], &[(11, Some(2))]),
            // An event without a user names no one.
            (
                &[(11, None), (12, Some(2)), (13, Some(3))],
                &[(11, Some(1))],
            ),
        ];
        for (events, expect) in table {
            let mut map = SsrcMap::default();
            for &(ssrc, user) in events {
                map.speaking(ssrc, user);
            }
            for &(ssrc, person) in expect {
                // (11 in case 4 is unknown; 1 is the only person without a stream.)
                assert_eq!(map.person(ssrc, &m), person, "{events:?} → ssrc {ssrc}");
            }
        }
    }

    #[test]
    fn bots_streams_are_ignored() {
        let m = members(&[1], &[900, 901]);
        let mut map = SsrcMap::default();
        map.speaking(5, Some(900));
        assert_eq!(map.person(5, &m), None);
        // An unknown stream is never given to a bot, even the only one without a stream.
        let only_bots = members(&[], &[901]);
        assert_eq!(SsrcMap::default().person(6, &only_bots), None);
    }

    #[test]
    fn a_disconnect_forgets_the_person() {
        let m = members(&[1, 2], &[]);
        let mut map = SsrcMap::default();
        map.speaking(11, Some(1));
        map.speaking(12, Some(2));
        map.disconnected(1);
        assert_eq!(map.user_of(11), None);
        assert_eq!(map.person(12, &m), Some(2));
    }

    #[test]
    fn an_unknown_stream_goes_to_the_only_person_without_one() {
        // (humans, bots, known streams (ssrc, user)) → who the unknown stream 99 is.
        type Case = (
            &'static [u64],
            &'static [u64],
            &'static [(u32, u64)],
            Option<u64>,
        );
        let table: [Case; 6] = [
            (&[1], &[900], &[], Some(1)),
            (&[1, 2], &[900], &[(11, 1)], Some(2)),
            (&[1, 2], &[], &[], None), // two candidates: ambiguous
            (&[1, 2], &[], &[(11, 1), (12, 2)], None), // no candidate
            (&[], &[900], &[], None),  // no one
            (&[1, 2, 3], &[], &[(11, 1)], None),
        ];
        for (humans, bots, known, expect) in table {
            let m = members(humans, bots);
            let mut map = SsrcMap::default();
            for &(ssrc, user) in known {
                map.speaking(ssrc, Some(user));
            }
            assert_eq!(map.person(99, &m), expect, "{humans:?} {known:?}");
            // Once given, the stream stays theirs.
            if let Some(user) = expect {
                assert_eq!(map.user_of(99), Some(user));
            } else {
                assert_eq!(map.user_of(99), None);
            }
        }
    }

    #[test]
    fn a_speaking_event_corrects_a_guessed_stream() {
        let mut map = SsrcMap::default();
        assert_eq!(map.person(99, &members(&[1], &[])), Some(1));
        map.speaking(99, Some(2));
        assert_eq!(map.person(99, &members(&[1, 2], &[])), Some(2));
    }

    fn ramp(from: i16, n: usize) -> Vec<i16> {
        (0..n).map(|i| from.wrapping_add(i as i16)).collect()
    }

    #[test]
    fn frames_are_exact_twenty_milliseconds_without_losing_or_repeating_samples() {
        // Packets of 20, 40, 10, 30, 60 and 6.25 ms: the frames, joined, are the packets
        // joined (the final partial frame padded with zeros when they stop).
        let sizes = [320usize, 640, 160, 480, 960, 100];
        let mut framer = Framer::default();
        let mut sent = Vec::new();
        let mut got = Vec::new();
        let mut next = 0i16;
        for &n in &sizes {
            let pcm = ramp(next, n);
            next = next.wrapping_add(n as i16);
            sent.extend_from_slice(&pcm);
            for (user, frame) in framer.tick(&[(7, &pcm, false)]) {
                assert_eq!((user, frame.len()), (7, HEAR_FRAME));
                got.extend(frame);
            }
        }
        // Silent ticks drain what is left.
        for _ in 0..10 {
            for (_, frame) in framer.tick(&[]) {
                assert_eq!(frame.len(), HEAR_FRAME);
                got.extend(frame);
            }
        }
        assert_eq!(got.len() % HEAR_FRAME, 0);
        assert_eq!(&got[..sent.len()], &sent[..]);
        assert!(got[sent.len()..].iter().all(|&s| s == 0));
        assert_eq!(got.len(), sent.len() + (HEAR_FRAME - 100));
    }

    #[test]
    fn a_lost_packet_stands_for_one_frame_only() {
        let mut framer = Framer::default();
        // songbird's concealment may be 120 ms long at 16 kHz mono.
        let plc = vec![5i16; 1920];
        let out = framer.tick(&[(7, &plc, true)]);
        assert_eq!(out, vec![(7, vec![5i16; HEAR_FRAME])]);
        assert!(framer.tick(&[]).is_empty());
    }

    #[test]
    fn each_tick_becomes_one_heard_with_people_only_and_silent_ones_absent() {
        let (tx, mut rx) = mpsc::channel(8);
        let shared = Arc::new(RwLock::new(members(&[1, 2], &[900])));
        let (control, _control) = mpsc::channel(8);
        let r = Receiver::new(tx, control, shared.clone());
        r.on_speaking(11, Some(1));
        r.on_speaking(12, Some(2));
        r.on_speaking(13, Some(900));
        let a = vec![1i16; HEAR_FRAME];
        let b = vec![2i16; HEAR_FRAME];
        let c = vec![3i16; HEAR_FRAME];
        let voice = |ssrc, pcm| Voice {
            ssrc,
            pcm,
            concealed: false,
        };
        assert!(r.on_tick(&[voice(11, &a), voice(13, &c)]));
        assert!(r.on_tick(&[voice(11, &a), voice(12, &b)]));
        assert!(r.on_tick(&[]));
        assert_eq!(rx.try_recv().unwrap().frames, vec![(1, a.clone())]);
        assert_eq!(
            rx.try_recv().unwrap().frames,
            vec![(1, a.clone()), (2, b.clone())]
        );
        assert_eq!(rx.try_recv().unwrap(), Heard::default());
        // The room's refreshed list is used at once: 2 is now a stranger's stream.
        r.on_disconnect(2);
        *shared.write().unwrap() = members(&[1, 3], &[900]);
        let d = vec![4i16; HEAR_FRAME];
        assert!(r.on_tick(&[voice(14, &d)]));
        assert_eq!(rx.try_recv().unwrap().frames, vec![(3, d)]);
    }

    #[test]
    fn in_a_realtime_room_each_packets_audio_goes_to_the_room_as_it_arrives() {
        let speech = super::super::arrival::tests::encode(&crate::speech::test_audio::espeak(
            "what time is it",
        ));
        let shared = Arc::new(RwLock::new(members(&[1], &[900])));
        let (tx, mut ticks) = mpsc::channel(8);
        let (control, _control) = mpsc::channel(64);
        let (arrived, mut rx) = mpsc::channel(256);
        let r = Receiver::new(tx, control, shared.clone()).with_arrivals(arrived);
        r.on_speaking(11, Some(1));
        r.on_speaking(13, Some(900));
        for (seq, p) in speech.iter().enumerate() {
            r.on_packet(11, seq as u16, p);
            // At once, before any tick: this packet's audio, the person's.
            let got = rx.try_recv().expect("the packet's audio, on arrival");
            assert_eq!((got.user, got.pcm.len()), (1, HEAR_FRAME), "packet {seq}");
            // A bot's stream is not heard.
            r.on_packet(13, seq as u16, p);
            assert!(rx.try_recv().is_err(), "nothing of the bot's");
        }
        assert!(ticks.try_recv().is_err(), "no tick was needed");
        // A chained room's receiver sends no audio on arrival (its ticks carry it).
        let (tx, _ticks) = mpsc::channel(8);
        let (control, _control) = mpsc::channel(64);
        let chained = Receiver::new(tx, control, shared);
        chained.on_speaking(11, Some(1));
        for (seq, p) in speech.iter().enumerate() {
            chained.on_packet(11, seq as u16, p);
        }
        assert!(chained.arrived.is_none());
    }

    #[test]
    fn a_full_room_channel_drops_the_tick_and_counts_it() {
        let (tx, mut rx) = mpsc::channel(1);
        let (control, _control) = mpsc::channel(8);
        let r = Receiver::new(tx, control, Arc::new(RwLock::new(members(&[1], &[]))));
        let a = vec![1i16; HEAR_FRAME];
        let v = [Voice {
            ssrc: 11,
            pcm: &a,
            concealed: false,
        }];
        assert!(r.on_tick(&v));
        assert!(!r.on_tick(&v));
        assert!(!r.on_tick(&v));
        assert_eq!(r.dropped(), 2);
        assert_eq!(rx.try_recv().unwrap().frames.len(), 1);
        assert!(rx.try_recv().is_err());
    }
}
