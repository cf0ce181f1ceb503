//! RTP as the voice server sees it, in `aead_aes256_gcm_rtpsize` (songbird 0.6.1's
//! `driver/crypto.rs`): the 12-byte header (and CSRCs, and the 4-byte extension
//! preamble when X is set) in the clear as associated data, then the AES-256-GCM
//! ciphertext, its 16-byte tag and a 4-byte big-endian counter that is the first 4
//! bytes of the 12-byte nonce. Opus at 48 kHz stereo, 20 ms (960 samples) a frame.

use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};

/// Samples per channel in one 20 ms frame at 48 kHz.
pub const FRAME: usize = 960;
/// Discord's Opus payload type.
pub const OPUS_PT: u8 = 120;

/// One opened RTP packet.
#[derive(Clone, Debug)]
pub struct Opened {
    /// The sender's synchronisation source.
    pub ssrc: u32,
    /// The packet's sequence number.
    pub seq: u16,
    /// The packet's RTP timestamp (48 kHz).
    pub timestamp: u32,
    /// The Opus frame.
    pub payload: Vec<u8>,
}

/// Whether `packet` is RTCP (payload types 200–204 sit where RTP's marker+PT are).
pub fn is_rtcp(packet: &[u8]) -> bool {
    packet.len() >= 2 && (200..=204).contains(&packet[1])
}

/// Decrypt an RTP packet sealed with `key`; None if it is not one or fails to open.
pub fn open(packet: &[u8], key: &[u8; 32]) -> Option<Opened> {
    if packet.len() < 12 + 20 || packet[0] >> 6 != 2 || is_rtcp(packet) {
        return None;
    }
    let csrcs = usize::from(packet[0] & 0x0f);
    let extension = packet[0] & 0x10 != 0;
    let header = 12 + 4 * csrcs;
    let clear = header + if extension { 4 } else { 0 };
    let n = packet.len();
    if n < clear + 20 {
        return None;
    }
    let mut nonce = [0u8; 12];
    nonce[..4].copy_from_slice(&packet[n - 4..]);
    let tag = Tag::clone_from_slice(&packet[n - 20..n - 4]);
    let mut body = packet[clear..n - 20].to_vec();
    let cipher = Aes256Gcm::new_from_slice(key).ok()?;
    cipher
        .decrypt_in_place_detached(Nonce::from_slice(&nonce), &packet[..clear], &mut body, &tag)
        .ok()?;
    let skip = if extension {
        4 * usize::from(u16::from_be_bytes([packet[header + 2], packet[header + 3]]))
    } else {
        0
    };
    Some(Opened {
        ssrc: u32::from_be_bytes([packet[8], packet[9], packet[10], packet[11]]),
        seq: u16::from_be_bytes([packet[2], packet[3]]),
        timestamp: u32::from_be_bytes([packet[4], packet[5], packet[6], packet[7]]),
        payload: body.get(skip..)?.to_vec(),
    })
}

/// Seal an Opus frame as Discord would send it to the bot.
pub fn seal(
    ssrc: u32,
    seq: u16,
    timestamp: u32,
    counter: u32,
    opus: &[u8],
    key: &[u8; 32],
) -> Vec<u8> {
    let mut header = [0u8; 12];
    header[0] = 0x80;
    header[1] = OPUS_PT;
    header[2..4].copy_from_slice(&seq.to_be_bytes());
    header[4..8].copy_from_slice(&timestamp.to_be_bytes());
    header[8..12].copy_from_slice(&ssrc.to_be_bytes());
    let mut nonce = [0u8; 12];
    nonce[..4].copy_from_slice(&counter.to_be_bytes());
    let mut body = opus.to_vec();
    let cipher = Aes256Gcm::new_from_slice(key).expect("a 32-byte key");
    let tag = cipher
        .encrypt_in_place_detached(Nonce::from_slice(&nonce), &header, &mut body)
        .expect("AES-GCM seals");
    let mut out = header.to_vec();
    out.extend_from_slice(&body);
    out.extend_from_slice(&tag);
    out.extend_from_slice(&counter.to_be_bytes());
    out
}

/// Opus-encode 48 kHz stereo interleaved samples in 20 ms frames (the tail padded).
pub fn encode(samples: &[i16]) -> Vec<Vec<u8>> {
    let mut enc = opus2::Encoder::new(48_000, opus2::Channels::Stereo, opus2::Application::Voip)
        .expect("an Opus encoder");
    samples
        .chunks(FRAME * 2)
        .map(|chunk| {
            let mut frame = chunk.to_vec();
            frame.resize(FRAME * 2, 0);
            enc.encode_vec(&frame, 4000).expect("Opus encodes")
        })
        .collect()
}

/// Decode Opus frames (in order) to 48 kHz stereo interleaved samples.
pub fn decode(frames: &[Vec<u8>]) -> Vec<i16> {
    let mut dec = opus2::Decoder::new(48_000, opus2::Channels::Stereo).expect("an Opus decoder");
    let mut out = Vec::new();
    let mut buf = vec![0i16; FRAME * 2 * 6];
    for f in frames {
        if let Ok(n) = dec.decode(f, &mut buf, false) {
            out.extend_from_slice(&buf[..n * 2]);
        }
    }
    out
}

/// Root mean square of `samples` (0 for none).
pub fn rms(samples: &[i16]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let sum: f64 = samples.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / samples.len() as f64).sqrt()
}
