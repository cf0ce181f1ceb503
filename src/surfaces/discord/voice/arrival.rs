//! Hearing a person as their packets arrive, ahead of songbird's playout buffer and
//! its 20 ms tick: each stream's Opus packets are decoded here too (16 kHz mono), in
//! the stream's order, and judged by the room's own voice detector. The first voiced
//! packet after quiet is an onset, only a hint (it may pause her; the room's ticks
//! decide whether it was speech). The audio itself is what a realtime session hears
//! (`voice::boundary::Arrived`): nothing waits for a buffer, so a packet that does not
//! come before its successor is lost — concealed in its place (its successor's
//! forward error correction for the one just before it, the decoder's concealment
//! for older ones) when the successor comes within [`QUIET_AFTER`] of the last packet
//! (later, the room has counted that time as silence), and left out when it comes
//! after all, as is a repeated one.

use std::collections::HashMap;

use tokio::time::Instant;

use crate::speech::audio::{FRAME, HEAR_FRAME, HEAR_RATE};
use crate::speech::vad::{detector, VoiceDetector};
use crate::voice::boundary::QUIET_AFTER;

/// The most samples one packet may decode to (120 ms, Opus's longest frame).
const MAX_PACKET: usize = HEAR_FRAME * 6;

/// One stream's decoder and detector.
struct Stream {
    decoder: opus2::Decoder,
    detector: Box<dyn VoiceDetector>,
    /// The last judged frame was voiced.
    voiced: bool,
    pcm: Vec<i16>,
    /// The sequence number the next packet should have, and when the last came.
    next: Option<(u16, Instant)>,
}

/// What one arriving packet gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arrival {
    /// It starts voice: a voiced 20 ms frame after an unvoiced one (or the stream's
    /// first).
    pub onset: bool,
    /// Its audio (16 kHz mono) in the stream's order: the concealment of packets lost
    /// just before it, then its own (concealed too when it cannot be decoded); empty
    /// for a late or repeated one.
    pub pcm: Vec<i16>,
}

/// Every stream's arrivals, keyed by SSRC.
#[derive(Default)]
pub struct Arrivals {
    streams: HashMap<u32, Stream>,
}

impl std::fmt::Debug for Arrivals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arrivals")
            .field("streams", &self.streams.len())
            .finish()
    }
}

impl Arrivals {
    /// Packet `seq` of stream `ssrc` arrived at `now` with this Opus payload.
    pub fn packet(&mut self, ssrc: u32, seq: u16, opus: &[u8], now: Instant) -> Arrival {
        if opus.is_empty() {
            return Arrival::default();
        }
        let stream = match self.streams.entry(ssrc) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                match opus2::Decoder::new(HEAR_RATE, opus2::Channels::Mono) {
                    Ok(decoder) => e.insert(Stream {
                        decoder,
                        detector: detector(),
                        voiced: false,
                        pcm: vec![0; MAX_PACKET],
                        next: None,
                    }),
                    Err(err) => {
                        tracing::warn!("voice: no Opus decoder for arrivals: {err}");
                        return Arrival::default();
                    }
                }
            }
        };
        // How many packets were skipped (negative: this one is late or repeated).
        let (lost, recent) = match stream.next {
            None => (0, false),
            Some((next, at)) => (
                seq.wrapping_sub(next) as i16,
                now.duration_since(at) < QUIET_AFTER,
            ),
        };
        if lost < 0 {
            return Arrival::default();
        }
        let mut pcm = Vec::with_capacity(HEAR_FRAME * 2);
        if recent {
            // The packets lost since the last one (at most as many as fit in the
            // quiet time), each a 20 ms frame, the last from this packet's own FEC.
            let most = (QUIET_AFTER.as_millis() / FRAME.as_millis()) as usize;
            let lost = usize::try_from(lost).unwrap_or(0).min(most);
            for k in 0..lost {
                let fec = k + 1 == lost;
                let input = if fec { opus } else { &[][..] };
                match stream
                    .decoder
                    .decode(input, &mut stream.pcm[..HEAR_FRAME], fec)
                {
                    Ok(n) => pcm.extend_from_slice(&stream.pcm[..n.min(HEAR_FRAME)]),
                    Err(_) => pcm.resize(pcm.len() + HEAR_FRAME, 0),
                }
            }
        }
        stream.next = Some((seq.wrapping_add(1), now));
        match stream.decoder.decode(opus, &mut stream.pcm, false) {
            Ok(n) => pcm.extend_from_slice(&stream.pcm[..n.min(MAX_PACKET)]),
            // Undecodable: concealed as one 20 ms frame, so the time it stood for stays.
            Err(_) => match stream
                .decoder
                .decode(&[], &mut stream.pcm[..HEAR_FRAME], false)
            {
                Ok(n) => pcm.extend_from_slice(&stream.pcm[..n.min(HEAR_FRAME)]),
                Err(_) => pcm.resize(pcm.len() + HEAR_FRAME, 0),
            },
        }
        let mut onset = false;
        for frame in pcm.chunks_exact(HEAR_FRAME) {
            let voiced = stream.detector.is_speech(frame);
            onset |= voiced && !stream.voiced;
            stream.voiced = voiced;
        }
        Arrival { onset, pcm }
    }

    /// Forget stream `ssrc` (its person left).
    pub fn forget(&mut self, ssrc: u32) {
        self.streams.remove(&ssrc);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::speech::endpoint::{EndpointSettings, Endpointer, Heard};
    use crate::speech::test_audio::{espeak, frames, noise, silence};

    /// `pcm` (16 kHz mono) as 20 ms Opus packets, as a person's client sends them.
    pub(in crate::surfaces::discord::voice) fn encode(pcm: &[i16]) -> Vec<Vec<u8>> {
        let mut enc =
            opus2::Encoder::new(HEAR_RATE, opus2::Channels::Mono, opus2::Application::Voip)
                .unwrap();
        frames(pcm)
            .iter()
            .map(|f| {
                let mut out = vec![0u8; 1500];
                let n = enc.encode(f, &mut out).unwrap();
                out.truncate(n);
                out
            })
            .collect()
    }

    /// Packet `seq` of a stream paced at 20 ms, arriving on time.
    fn at(seq: u16) -> Instant {
        t0() + FRAME * u32::from(seq)
    }

    fn t0() -> Instant {
        static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *T0.get_or_init(Instant::now)
    }

    fn onsets(arrivals: &mut Arrivals, ssrc: u32, packets: &[Vec<u8>]) -> Vec<usize> {
        packets
            .iter()
            .enumerate()
            .filter(|(i, p)| arrivals.packet(ssrc, *i as u16, p, at(*i as u16)).onset)
            .map(|(i, _)| i)
            .collect()
    }

    /// The packets decoded in order by a decoder of their own, as songbird would.
    fn decoded(packets: &[Vec<u8>]) -> Vec<i16> {
        let mut dec = opus2::Decoder::new(HEAR_RATE, opus2::Channels::Mono).unwrap();
        let mut out = Vec::new();
        for p in packets {
            let mut pcm = vec![0i16; MAX_PACKET];
            let n = dec.decode(p, &mut pcm, false).unwrap();
            out.extend_from_slice(&pcm[..n]);
        }
        out
    }

    #[test]
    fn each_packet_gives_its_own_audio_at_once_in_order() {
        let packets = encode(&[silence(0.2), espeak("what time is it")].concat());
        let mut arrivals = Arrivals::default();
        let mut heard = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            let got = arrivals.packet(7, i as u16, p, at(i as u16)).pcm;
            assert_eq!(
                got.len(),
                HEAR_FRAME,
                "packet {i}: its own 20 ms, no more, no less"
            );
            heard.extend(got);
        }
        assert_eq!(
            heard,
            decoded(&packets),
            "exactly the stream, decoded in order"
        );
    }

    #[test]
    fn a_lost_packet_is_concealed_in_its_place_and_a_late_or_repeated_one_is_left_out() {
        let packets = encode(&espeak("what time is it"));
        let mut arrivals = Arrivals::default();
        let mut heard = 0;
        for (i, p) in packets.iter().enumerate() {
            if i == 5 {
                continue; // lost (or late: it comes after 6)
            }
            let got = arrivals.packet(7, i as u16, p, at(i as u16)).pcm;
            let want = if i == 6 { 2 * HEAR_FRAME } else { HEAR_FRAME };
            assert_eq!(got.len(), want, "packet {i}");
            heard += got.len();
            if i == 6 {
                assert!(
                    arrivals.packet(7, 5, &packets[5], at(6)).pcm.is_empty(),
                    "the late packet is left out: its place was concealed"
                );
                assert!(
                    arrivals.packet(7, 6, p, at(6)).pcm.is_empty(),
                    "a repeated packet is left out"
                );
            }
        }
        assert_eq!(
            heard,
            packets.len() * HEAR_FRAME,
            "the stream's time, whole"
        );
    }

    #[test]
    fn packets_lost_before_a_pause_are_not_concealed_after_it() {
        // The last packets before a pause were lost; the next one comes after the
        // room began counting silence: only its own audio.
        let packets = encode(&espeak("hello there"));
        let mut arrivals = Arrivals::default();
        assert_eq!(
            arrivals.packet(7, 0, &packets[0], at(0)).pcm.len(),
            HEAR_FRAME
        );
        let later = at(1) + QUIET_AFTER + FRAME;
        assert_eq!(
            arrivals.packet(7, 3, &packets[3], later).pcm.len(),
            HEAR_FRAME
        );
        // Sequence numbers wrap.
        let mut wrap = Arrivals::default();
        assert_eq!(
            wrap.packet(8, u16::MAX, &packets[0], at(0)).pcm.len(),
            HEAR_FRAME
        );
        assert_eq!(wrap.packet(8, 0, &packets[1], at(1)).pcm.len(), HEAR_FRAME);
        assert!(wrap.packet(8, u16::MAX, &packets[0], at(1)).pcm.is_empty());
    }

    #[test]
    fn a_voiced_packet_after_quiet_is_an_onset_on_arrival_no_later_than_the_ticks_frame_would_start_it(
    ) {
        let pcm = [silence(0.6), espeak("stop, please stop talking")].concat();
        // Where the room's endpointer starts the speech, frame by frame; its frames
        // come songbird's playout buffer (40 ms) and a tick later than the packets.
        let mut ep = Endpointer::new(EndpointSettings::default(), detector());
        let started = frames(&pcm)
            .iter()
            .position(|f| ep.push(f) == Some(Heard::Started))
            .unwrap();
        let mut arrivals = Arrivals::default();
        let got = onsets(&mut arrivals, 7, &encode(&pcm));
        assert!(!got.is_empty(), "an onset");
        assert!(
            got[0] <= started,
            "onset on arrival at packet {}, the ticks start it at frame {started}",
            got[0]
        );
        assert!(got[0] + 3 >= started, "and it is the speech: {}", got[0]);
    }

    #[test]
    fn silence_and_steady_noise_start_nothing() {
        let mut arrivals = Arrivals::default();
        let quiet = [silence(1.0), noise(1.0, 200, 3)].concat();
        assert_eq!(
            onsets(&mut arrivals, 7, &encode(&quiet)),
            Vec::<usize>::new()
        );
        // Garbage and empty payloads start nothing.
        let n = quiet.len() / HEAR_FRAME;
        assert!(!arrivals.packet(7, n as u16, &[], at(n as u16)).onset);
        assert!(!arrivals.packet(7, n as u16, &[0xff; 3], at(n as u16)).onset);
    }

    #[test]
    fn each_stream_is_judged_on_its_own() {
        let voice = encode(&[silence(0.4), espeak("hello there")].concat());
        let quiet = encode(&silence(1.0));
        let mut arrivals = Arrivals::default();
        let mut a = Vec::new();
        for (i, (v, q)) in voice.iter().zip(&quiet).enumerate() {
            let (seq, t) = (i as u16, at(i as u16));
            if arrivals.packet(1, seq, v, t).onset {
                a.push(i);
            }
            assert!(
                !arrivals.packet(2, seq, q, t).onset,
                "the quiet stream at {i}"
            );
        }
        assert!(!a.is_empty());
        arrivals.forget(1);
        assert!(!arrivals.streams.contains_key(&1));
    }
}
