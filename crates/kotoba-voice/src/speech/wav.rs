//! WAV: 16-bit PCM files in and out (recognition uploads, espeak-ng and WAV replies).

use super::SpeechError;

/// Mono or interleaved 16-bit PCM with its rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcm {
    /// Samples per second.
    pub rate: u32,
    /// Channels (interleaved in `samples`).
    pub channels: u16,
    /// The samples.
    pub samples: Vec<i16>,
}

impl Pcm {
    /// The samples as mono (channels averaged).
    pub fn mono(&self) -> Vec<i16> {
        let ch = usize::from(self.channels.max(1));
        if ch == 1 {
            return self.samples.clone();
        }
        self.samples
            .chunks_exact(ch)
            .map(|f| {
                let sum: i32 = f.iter().map(|&s| i32::from(s)).sum();
                // The mean of i16 values is an i16.
                (sum / ch as i32) as i16
            })
            .collect()
    }
}

/// A WAV file of 16-bit mono PCM at `rate`.
pub fn encode(samples: &[i16], rate: u32) -> Vec<u8> {
    let data_len = (samples.len() * 2) as u32;
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Read a 16-bit PCM WAV file. A streamed WAV whose sizes are 0 or 0xFFFFFFFF (as
/// espeak-ng writes to a pipe) is read to the end of the bytes.
pub fn decode(bytes: &[u8]) -> Result<Pcm, SpeechError> {
    let bad =
        |why: &str| SpeechError::new(format!("The audio is not a WAV file I can read ({why})."));
    if bytes.get(0..4) != Some(b"RIFF") || bytes.get(8..12) != Some(b"WAVE") {
        return Err(bad("no RIFF/WAVE header"));
    }
    let mut at = 12;
    let mut format: Option<(u16, u16, u32, u16)> = None;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let len = u32_at(bytes, at + 4).ok_or_else(|| bad("truncated chunk"))? as usize;
        let body = at + 8;
        if id == b"fmt " {
            let tag = u16_at(bytes, body).ok_or_else(|| bad("short fmt"))?;
            let channels = u16_at(bytes, body + 2).ok_or_else(|| bad("short fmt"))?;
            let rate = u32_at(bytes, body + 4).ok_or_else(|| bad("short fmt"))?;
            let bits = u16_at(bytes, body + 14).ok_or_else(|| bad("short fmt"))?;
            format = Some((tag, channels, rate, bits));
        } else if id == b"data" {
            let (tag, channels, rate, bits) = format.ok_or_else(|| bad("data before fmt"))?;
            // 0xFFFE is WAVE_FORMAT_EXTENSIBLE, PCM inside for 16-bit files.
            if !(tag == 1 || tag == 0xFFFE) || bits != 16 || channels == 0 || rate == 0 {
                return Err(bad("only 16-bit PCM is read"));
            }
            let end = if len == 0 || len == u32::MAX as usize || body + len > bytes.len() {
                bytes.len()
            } else {
                body + len
            };
            let samples = bytes[body..end]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            return Ok(Pcm {
                rate,
                channels,
                samples,
            });
        }
        at = body + len + (len & 1);
    }
    Err(bad("no data chunk"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wav_written_is_read_back_sample_for_sample() {
        let samples: Vec<i16> = (0..1000).map(|i| ((i * 37) % 2000 - 1000) as i16).collect();
        let pcm = decode(&encode(&samples, 16_000)).unwrap();
        assert_eq!(pcm.rate, 16_000);
        assert_eq!(pcm.channels, 1);
        assert_eq!(pcm.samples, samples);
    }

    #[test]
    fn a_streamed_wav_with_unknown_sizes_is_read_to_the_end() {
        let mut bytes = encode(&[1, 2, 3, 4], 22_050);
        bytes[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode(&bytes).unwrap().samples, [1, 2, 3, 4]);
    }

    #[test]
    fn what_is_not_a_wav_is_refused_with_a_reason() {
        let e = decode(b"ID3\x04 mp3 bytes").unwrap_err();
        assert!(e.0.contains("not a WAV"), "{e}");
    }

    #[test]
    fn stereo_is_averaged_to_mono() {
        let pcm = Pcm {
            rate: 48_000,
            channels: 2,
            samples: vec![100, 300, -50, -150],
        };
        assert_eq!(pcm.mono(), [200, -100]);
    }
}
