//! Whether she heard every frame a person sent. songbird decodes each person's Opus
//! stream for her at 16 kHz mono, and the room uploads an utterance's samples to the
//! recogniser unchanged, 20 ms per packet; so each voiced frame a person sent shows up
//! in an upload as what a decoder of that stream makes of it. A frame she could not
//! open (dropped, then concealed by the decoder) or fed to the decoder still encrypted
//! shows up as something else. [`reference`] decodes what the person sent;
//! [`lost_frames`] finds each voiced frame of it in the uploads, in order, allowing for
//! silent frames the room put in while packets were late (late is not lost), and names
//! the ones that are not there.

use std::collections::BTreeSet;

use super::rtp;

/// Samples in 20 ms at 16 kHz mono (one packet, as she hears it).
pub const FRAME: usize = 320;
/// A reference frame louder than this (RMS) is voiced: it must be heard.
pub const VOICED: f64 = 300.0;
/// A frame is heard as sent when it matches its reference this well (signal to
/// difference, in dB). Decoders of one stream agree closely once past its first
/// frames; a concealed frame, or noise from a frame decoded still encrypted, is far
/// below it.
pub const MATCH_DB: f64 = 12.0;
/// How many frames the room may have put in (silence while packets were late: her
/// receive task waits while a commit is processed, a few hundred ms in a debug build)
/// before the next frame that matches.
const MAX_SLIP: usize = 50;

/// `frames` (Opus, in the order sent) decoded by one decoder at 16 kHz mono, as
/// songbird decodes a person's stream for her: one 20 ms frame each.
pub fn reference(frames: &[Vec<u8>]) -> Vec<Vec<i16>> {
    let mut dec = opus2::Decoder::new(16_000, opus2::Channels::Mono).expect("an Opus decoder");
    let mut buf = vec![0i16; FRAME * 6];
    frames
        .iter()
        .map(|f| match dec.decode(f, &mut buf, false) {
            Ok(n) => buf[..n].to_vec(),
            Err(_) => vec![0; FRAME],
        })
        .collect()
}

/// How well `heard` matches `sent` (dB of the sent signal over the difference).
pub fn match_db(sent: &[i16], heard: &[i16]) -> f64 {
    let mut signal = 0.0;
    let mut diff = 0.0;
    for (&s, &h) in sent.iter().zip(heard) {
        let (s, h) = (f64::from(s), f64::from(h));
        signal += s * s;
        diff += (s - h) * (s - h);
    }
    if diff == 0.0 {
        return f64::INFINITY;
    }
    10.0 * (signal / diff).log10()
}

/// The voiced frames of a reference, and which of them no upload held.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lost {
    /// How many voiced frames the reference has.
    pub voiced: usize,
    /// The indexes (in the reference) of the voiced frames not heard.
    pub lost: Vec<usize>,
}

/// Which voiced frames of `reference` none of `uploads` (16 kHz mono) holds in order.
pub fn lost_frames(reference: &[Vec<i16>], uploads: &[Vec<i16>]) -> Lost {
    let voiced: Vec<usize> = (0..reference.len())
        .filter(|&i| rtp::rms(&reference[i]) > VOICED)
        .collect();
    let mut heard = BTreeSet::new();
    for upload in uploads {
        heard.extend(heard_in(reference, &voiced, upload));
    }
    Lost {
        voiced: voiced.len(),
        lost: voiced.into_iter().filter(|i| !heard.contains(i)).collect(),
    }
}

/// The voiced frames of `reference` that `upload` holds: aligned where most voiced
/// frames match (an upload may hold only part of what was said, when a stall split it
/// into two utterances), then followed frame by frame (frames the room put in move the
/// alignment on; the nearest match wins).
fn heard_in(reference: &[Vec<i16>], voiced: &[usize], upload: &[i16]) -> Vec<usize> {
    let frames: Vec<&[i16]> = upload.chunks_exact(FRAME).collect();
    let loud: Vec<f64> = frames.iter().map(|f| rtp::rms(f)).collect();
    let sent: Vec<f64> = reference.iter().map(|f| rtp::rms(f)).collect();
    let matches = |i: usize, j: i64| {
        let Some(j) = usize::try_from(j).ok().filter(|&j| j < frames.len()) else {
            return false;
        };
        // 12 dB apart at most means loudness within a third either way.
        let ratio = loud[j] / sent[i].max(1.0);
        (0.66..1.5).contains(&ratio) && match_db(&reference[i], frames[j]) >= MATCH_DB
    };
    let mut votes = std::collections::BTreeMap::<i64, usize>::new();
    for &i in voiced {
        for j in 0..frames.len() as i64 {
            if matches(i, j) {
                *votes.entry(j - i as i64).or_default() += 1;
            }
        }
    }
    let Some((mut offset, _)) = votes.into_iter().max_by_key(|&(o, n)| (n, -o)) else {
        return Vec::new();
    };
    let slips: Vec<i64> = (0..=MAX_SLIP as i64)
        .flat_map(|s| [s, -s])
        .skip(1)
        .collect();
    let mut found = Vec::new();
    for &i in voiced {
        let at = i as i64 + offset;
        if let Some(slip) = slips.iter().find(|&&s| matches(i, at + s)) {
            offset += slip;
            found.push(i);
        }
    }
    found
}
