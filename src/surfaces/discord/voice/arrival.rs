//! Hearing a person start as their packets arrive, ahead of songbird's playout buffer
//! and its 20 ms tick: each stream's Opus packets are decoded here too (16 kHz mono)
//! and judged by the room's own voice detector, and the first voiced packet after
//! quiet is an onset. The onset is only a hint (it may pause her; the room's ticks
//! decide whether it was speech), so a lost or reordered packet costs nothing.

use std::collections::HashMap;

use crate::speech::audio::{HEAR_FRAME, HEAR_RATE};
use crate::speech::vad::{detector, VoiceDetector};

/// The most samples one packet may decode to (120 ms, Opus's longest frame).
const MAX_PACKET: usize = HEAR_FRAME * 6;

/// One stream's decoder and detector.
struct Stream {
    decoder: opus2::Decoder,
    detector: Box<dyn VoiceDetector>,
    /// The last judged frame was voiced.
    voiced: bool,
    pcm: Vec<i16>,
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
    /// One packet of stream `ssrc` arrived with this Opus payload: true when it starts
    /// voice (a voiced 20 ms frame after an unvoiced one, or the stream's first).
    pub fn packet(&mut self, ssrc: u32, opus: &[u8]) -> bool {
        if opus.is_empty() {
            return false;
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
                    }),
                    Err(err) => {
                        tracing::warn!("voice: no Opus decoder for arrivals: {err}");
                        return false;
                    }
                }
            }
        };
        let n = match stream.decoder.decode(opus, &mut stream.pcm, false) {
            Ok(n) => n.min(MAX_PACKET),
            Err(_) => return false,
        };
        let mut started = false;
        for frame in stream.pcm[..n].chunks_exact(HEAR_FRAME) {
            let voiced = stream.detector.is_speech(frame);
            started |= voiced && !stream.voiced;
            stream.voiced = voiced;
        }
        started
    }

    /// Forget stream `ssrc` (its person left).
    pub fn forget(&mut self, ssrc: u32) {
        self.streams.remove(&ssrc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speech::endpoint::{EndpointSettings, Endpointer, Heard};
    use crate::speech::test_audio::{espeak, frames, noise, silence};

    fn encode(pcm: &[i16]) -> Vec<Vec<u8>> {
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

    fn onsets(arrivals: &mut Arrivals, ssrc: u32, packets: &[Vec<u8>]) -> Vec<usize> {
        packets
            .iter()
            .enumerate()
            .filter(|(_, p)| arrivals.packet(ssrc, p))
            .map(|(i, _)| i)
            .collect()
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
        // Garbage and empty payloads are ignored.
        assert!(!arrivals.packet(7, &[]));
        assert!(!arrivals.packet(7, &[0xff; 3]));
    }

    #[test]
    fn each_stream_is_judged_on_its_own() {
        let voice = encode(&[silence(0.4), espeak("hello there")].concat());
        let quiet = encode(&silence(1.0));
        let mut arrivals = Arrivals::default();
        let mut a = Vec::new();
        for (i, (v, q)) in voice.iter().zip(&quiet).enumerate() {
            if arrivals.packet(1, v) {
                a.push(i);
            }
            assert!(!arrivals.packet(2, q), "the quiet stream at {i}");
        }
        assert!(!a.is_empty());
        arrivals.forget(1);
        assert!(!arrivals.streams.contains_key(&1));
    }
}
