//! Speech synthesis providers (`tts.provider`): an OpenAI-compatible speech endpoint,
//! ElevenLabs streaming PCM, and espeak-ng on this machine. Each streams mono i16
//! chunks as they arrive; [`AudioReader`] turns bytes split anywhere (an odd byte, a
//! WAV header across chunks) into whole samples.

mod elevenlabs;
mod espeak;
mod openai;

use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

pub use elevenlabs::ElevenLabsSynthesizer;
pub use espeak::EspeakSynthesizer;
pub use openai::OpenAiSynthesizer;

use super::stt::{failed, Task, REQUEST_TIMEOUT};
use super::SpeechError;
use kotoba_core::config::{Config, TtsProvider, VoiceSettings};

/// Spoken audio: mono i16 chunks at `rate`, as they arrive.
pub struct Voice {
    /// Samples per second.
    pub rate: u32,
    /// The chunks; an error ends the stream.
    pub audio: BoxStream<'static, Result<Vec<i16>, SpeechError>>,
}

impl std::fmt::Debug for Voice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Voice").field("rate", &self.rate).finish()
    }
}

impl Voice {
    /// Every remaining sample, in order (tests and short phrases).
    pub async fn collect(mut self) -> Result<Vec<i16>, SpeechError> {
        let mut all = Vec::new();
        while let Some(chunk) = self.audio.next().await {
            all.extend(chunk?);
        }
        Ok(all)
    }
}

/// Turns text into speech.
#[async_trait::async_trait]
pub trait Synthesizer: Send + Sync {
    /// The provider's name: "openai", "elevenlabs" or "espeak".
    fn name(&self) -> &'static str;

    /// Where `kotoba doctor` asks whether the provider's server answers; `None`: it
    /// runs on this machine.
    fn probe(&self) -> Option<&crate::speech::stt::Probe> {
        None
    }

    /// Speak `text`. Returns once the first audio arrived (or the request failed); the
    /// rest streams in [`Voice::audio`].
    async fn synthesize(&self, text: &str) -> Result<Voice, SpeechError>;
}

/// The synthesizer `tts.provider` names, set up from the live settings. A missing key
/// for a provider's own cloud service, or a bad voice name, is refused here.
pub fn synthesizer(config: &Config) -> Result<Arc<dyn Synthesizer>, SpeechError> {
    let s = config.settings().voice;
    Ok(match s.tts_provider {
        TtsProvider::OpenAi => Arc::new(OpenAiSynthesizer::new(config, &s)?),
        TtsProvider::ElevenLabs => Arc::new(ElevenLabsSynthesizer::new(config, &s)?),
        TtsProvider::Espeak => Arc::new(EspeakSynthesizer::new(&s)?),
    })
}

/// The synthesizer `tts.provider` names or, when it cannot be set up (a missing key,
/// a bad voice), espeak-ng — the offline floor — with the reason it stood in.
pub fn synthesizer_or_floor(config: &Config) -> (Arc<dyn Synthesizer>, Option<SpeechError>) {
    match synthesizer(config) {
        Ok(s) => (s, None),
        Err(why) => {
            let floor = VoiceSettings::default();
            match EspeakSynthesizer::new(&floor) {
                Ok(e) => (Arc::new(e), Some(why)),
                Err(_) => (Arc::new(Unavailable(why.clone())), Some(why)),
            }
        }
    }
}

/// A synthesizer that could not be set up: every line says why.
struct Unavailable(SpeechError);

#[async_trait::async_trait]
impl Synthesizer for Unavailable {
    fn name(&self) -> &'static str {
        "unavailable"
    }
    async fn synthesize(&self, _text: &str) -> Result<Voice, SpeechError> {
        Err(self.0.clone())
    }
}

/// The sentence for asking to speak nothing.
pub(crate) fn nothing_to_say(provider: &str) -> SpeechError {
    SpeechError::new(format!(
        "Speech synthesis ({provider}) was given no text to say."
    ))
}

/// The first samples of `bytes` (waiting at most [`REQUEST_TIMEOUT`] for each chunk),
/// then a [`Voice`] streaming the rest through `reader`.
pub(crate) async fn voice_from<S>(
    provider: &'static str,
    mut bytes: S,
    mut reader: AudioReader,
) -> Result<Voice, SpeechError>
where
    S: Stream<Item = Result<Vec<u8>, SpeechError>> + Send + Unpin + 'static,
{
    let mut first = Vec::new();
    let mut ended = false;
    while first.is_empty() || reader.rate().is_none() {
        match tokio::time::timeout(REQUEST_TIMEOUT, bytes.next()).await {
            Err(_) => {
                let why = format!("no audio within {} s", REQUEST_TIMEOUT.as_secs());
                return Err(failed(Task::Synthesis, provider, &why, None));
            }
            Ok(None) => {
                ended = true;
                break;
            }
            Ok(Some(chunk)) => first.extend(reader.push(&chunk?, provider)?),
        }
    }
    let Some(rate) = reader.rate() else {
        let why = "the reply ended before its audio began";
        return Err(failed(Task::Synthesis, provider, why, None));
    };
    let head = futures::stream::iter((!first.is_empty()).then_some(Ok(first)));
    if ended {
        return Ok(Voice {
            rate,
            audio: head.boxed(),
        });
    }
    let rest = futures::stream::unfold(Some((bytes, reader)), move |state| async move {
        let (mut bytes, mut reader) = state?;
        loop {
            match tokio::time::timeout(REQUEST_TIMEOUT, bytes.next()).await {
                Err(_) => {
                    let why = format!("the audio stalled for {} s", REQUEST_TIMEOUT.as_secs());
                    return Some((Err(failed(Task::Synthesis, provider, &why, None)), None));
                }
                Ok(None) => return None,
                Ok(Some(Err(e))) => return Some((Err(e), None)),
                Ok(Some(Ok(chunk))) => match reader.push(&chunk, provider) {
                    Ok(s) if s.is_empty() => continue,
                    Ok(s) => return Some((Ok(s), Some((bytes, reader)))),
                    Err(e) => return Some((Err(e), None)),
                },
            }
        }
    });
    Ok(Voice {
        rate,
        audio: head.chain(rest).boxed(),
    })
}

/// Where an [`AudioReader`] is in its input.
#[derive(Debug)]
enum Stage {
    /// Not known yet: a RIFF header makes it WAV, anything else raw PCM at this rate.
    Sniff(u32),
    /// Waiting for a whole WAV header (bytes so far).
    Header,
    /// Samples.
    Data,
}

/// Bytes in, whole mono samples out: raw s16le, or a WAV whose header may arrive in
/// pieces. A sample (or stereo frame) split across chunks is kept until it is whole.
#[derive(Debug)]
pub(crate) struct AudioReader {
    stage: Stage,
    rate: Option<u32>,
    channels: usize,
    buf: Vec<u8>,
    /// WAV data bytes still expected; `None` reads to the end.
    left: Option<u64>,
}

/// The longest WAV header waited for before the reply is refused.
const MAX_HEADER: usize = 64 * 1024;

impl AudioReader {
    /// Raw s16le mono at `rate`.
    pub(crate) fn pcm(rate: u32) -> AudioReader {
        AudioReader {
            stage: Stage::Data,
            rate: Some(rate),
            channels: 1,
            buf: Vec::new(),
            left: None,
        }
    }

    /// A 16-bit PCM WAV (its header gives the rate).
    pub(crate) fn wav() -> AudioReader {
        AudioReader {
            stage: Stage::Header,
            rate: None,
            channels: 1,
            buf: Vec::new(),
            left: None,
        }
    }

    /// A WAV if it starts with a RIFF header, else raw s16le mono at `rate`.
    pub(crate) fn sniff(rate: u32) -> AudioReader {
        AudioReader {
            stage: Stage::Sniff(rate),
            ..AudioReader::wav()
        }
    }

    /// The rate, once known.
    pub(crate) fn rate(&self) -> Option<u32> {
        self.rate
    }

    /// Take the next bytes; returns the whole samples they complete.
    pub(crate) fn push(&mut self, bytes: &[u8], provider: &str) -> Result<Vec<i16>, SpeechError> {
        if let Stage::Data = self.stage {
            self.take_data(bytes);
            return Ok(self.whole_samples());
        }
        self.buf.extend_from_slice(bytes);
        if let Stage::Sniff(rate) = self.stage {
            if self.buf.len() < 4 {
                return Ok(Vec::new());
            }
            if self.buf.starts_with(b"RIFF") {
                self.stage = Stage::Header;
            } else {
                self.stage = Stage::Data;
                self.rate = Some(rate);
                return Ok(self.whole_samples());
            }
        }
        match wav_header(&self.buf) {
            Ok(None) if self.buf.len() > MAX_HEADER => {
                let why = "the WAV reply had no data chunk";
                Err(failed(Task::Synthesis, provider, why, None))
            }
            Ok(None) => Ok(Vec::new()),
            Ok(Some(h)) => {
                self.rate = Some(h.rate);
                self.channels = usize::from(h.channels);
                self.left = h.data_len;
                self.stage = Stage::Data;
                let data = self.buf.split_off(h.data_at);
                self.buf.clear();
                self.take_data(&data);
                Ok(self.whole_samples())
            }
            Err(why) => Err(failed(Task::Synthesis, provider, &why.to_string(), None)),
        }
    }

    /// Keep data bytes, up to the data chunk's size when it is known.
    fn take_data(&mut self, bytes: &[u8]) {
        let n = match self.left {
            Some(left) => {
                let n = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                self.left = Some(left - n as u64);
                n
            }
            None => bytes.len(),
        };
        self.buf.extend_from_slice(&bytes[..n]);
    }

    /// The whole frames in the buffer as mono samples; a split frame stays.
    fn whole_samples(&mut self) -> Vec<i16> {
        let frame = 2 * self.channels;
        let whole = self.buf.len() / frame * frame;
        let samples = self.buf[..whole]
            .chunks_exact(frame)
            .map(|f| {
                let sum: i32 = f
                    .chunks_exact(2)
                    .map(|s| i32::from(i16::from_le_bytes([s[0], s[1]])))
                    .sum();
                // The mean of i16 values is an i16.
                (sum / self.channels as i32) as i16
            })
            .collect();
        self.buf.drain(..whole);
        samples
    }
}

/// What a WAV header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WavHeader {
    rate: u32,
    channels: u16,
    /// Where the samples start.
    data_at: usize,
    /// The data chunk's size; `None` when unknown (0 or streamed sizes), read to the end.
    data_len: Option<u64>,
}

/// Why a reply that should be a WAV file cannot be read as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum WavError {
    /// It does not start as a WAV file.
    #[error("the reply is not a WAV file")]
    NotWav,
    /// Its samples come before it says what they are.
    #[error("the WAV reply has its data before its format")]
    DataFirst,
    /// Its samples are not 16-bit PCM.
    #[error("the WAV reply is not 16-bit PCM")]
    NotPcm16,
    /// Its format chunk is too short to say.
    #[error("the WAV reply has a short format chunk")]
    ShortFormat,
}

/// Parse the header at the start of `b`: `Ok(None)` while more bytes are needed.
fn wav_header(b: &[u8]) -> Result<Option<WavHeader>, WavError> {
    if b.len() < 12 {
        return Ok(None);
    }
    if &b[0..4] != b"RIFF" || &b[8..12] != b"WAVE" {
        return Err(WavError::NotWav);
    }
    let u16_at = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let mut at = 12;
    let mut format = None;
    loop {
        if b.len() < at + 8 {
            return Ok(None);
        }
        let id = &b[at..at + 4];
        let len = u32_at(at + 4);
        let body = at + 8;
        if id == b"data" {
            let Some((tag, channels, rate, bits)) = format else {
                return Err(WavError::DataFirst);
            };
            if !(tag == 1 || tag == 0xFFFE) || bits != 16 || channels == 0 || rate == 0 {
                return Err(WavError::NotPcm16);
            }
            // 0, and the near-4 GiB sizes streaming writers put, mean "to the end".
            let data_len = (len != 0 && len < 0x7FFF_0000).then_some(u64::from(len));
            return Ok(Some(WavHeader {
                rate,
                channels,
                data_at: body,
                data_len,
            }));
        }
        let len = len as usize;
        if b.len() < body + len {
            return Ok(None);
        }
        if id == b"fmt " {
            if len < 16 {
                return Err(WavError::ShortFormat);
            }
            format = Some((
                u16_at(body),
                u16_at(body + 2),
                u32_at(body + 4),
                u16_at(body + 14),
            ));
        }
        at = body + len + (len & 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speech::wav;

    #[test]
    fn a_provider_that_cannot_be_set_up_leaves_espeak_as_the_floor_with_the_reason() {
        let home = tempfile::tempdir().unwrap();
        // OpenAI's own host with no key set anywhere in this config.
        let config = Config::for_home(home.path(), &[("OPENAI_API_KEY", "")]);
        let (voice, why) = synthesizer_or_floor(&config);
        assert_eq!(voice.name(), "espeak");
        let why = why.expect("the reason it stood in");
        assert!(why.0.contains("OPENAI_API_KEY"), "{why}");
        std::fs::write(home.path().join("settings.yaml"), "tts.provider: espeak\n").unwrap();
        let (voice, why) = synthesizer_or_floor(&Config::for_home(home.path(), &[]));
        assert_eq!((voice.name(), why), ("espeak", None));
    }

    fn feed(reader: &mut AudioReader, bytes: &[u8], cuts: &[usize]) -> Vec<i16> {
        let mut out = Vec::new();
        let mut from = 0;
        for &to in cuts.iter().chain(std::iter::once(&bytes.len())) {
            out.extend(reader.push(&bytes[from..to], "test").unwrap());
            from = to;
        }
        out
    }

    fn tone(n: usize) -> Vec<i16> {
        (0..n).map(|i| ((i * 7919) % 60_000) as i16).collect()
    }

    #[test]
    fn raw_pcm_split_at_odd_bytes_keeps_every_sample() {
        let samples = tone(1000);
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let mut r = AudioReader::pcm(24_000);
        assert_eq!(
            feed(&mut r, &bytes, &[1, 2, 3, 501, 1001, 1002, 1999]),
            samples
        );
    }

    #[test]
    fn a_wav_header_split_across_chunks_gives_its_rate_and_every_sample() {
        let samples = tone(500);
        let bytes = wav::encode(&samples, 22_050);
        let mut r = AudioReader::sniff(24_000);
        assert_eq!(feed(&mut r, &bytes, &[3, 10, 43, 45, 46, 777]), samples);
        assert_eq!(r.rate(), Some(22_050));
    }

    #[test]
    fn bytes_after_a_sized_data_chunk_are_not_samples() {
        let mut bytes = wav::encode(&[5, 6, 7], 16_000);
        bytes.extend_from_slice(b"LIST\x04\x00\x00\x00abcd");
        let mut r = AudioReader::wav();
        assert_eq!(feed(&mut r, &bytes, &[20]), [5, 6, 7]);
    }

    #[test]
    fn a_streamed_wav_with_unknown_sizes_is_read_to_the_end() {
        let mut bytes = wav::encode(&[1, 2, 3, 4], 22_050);
        bytes[40..44].copy_from_slice(&0x7FFF_F000u32.to_le_bytes());
        let mut r = AudioReader::wav();
        assert_eq!(feed(&mut r, &bytes, &[44]), [1, 2, 3, 4]);
    }

    #[test]
    fn raw_pcm_that_is_not_riff_is_read_at_the_default_rate() {
        let mut r = AudioReader::sniff(24_000);
        assert_eq!(feed(&mut r, &[1, 0, 2, 0, 3], &[1]), [1, 2]);
        assert_eq!(r.rate(), Some(24_000));
    }

    #[test]
    fn a_stereo_wav_is_averaged_to_mono() {
        let mut bytes = wav::encode(&[100, 300, -50, -150], 48_000);
        bytes[22] = 2; // channels
        let mut r = AudioReader::wav();
        assert_eq!(feed(&mut r, &bytes, &[47]), [200, -100]);
    }

    #[test]
    fn an_8_bit_wav_is_refused_in_one_sentence() {
        let mut bytes = wav::encode(&[1, 2], 8_000);
        bytes[34] = 8; // bits per sample
        let e = AudioReader::wav().push(&bytes, "openai").unwrap_err();
        assert_eq!(
            e.0,
            "Speech synthesis (openai) failed: the WAV reply is not 16-bit PCM."
        );
    }
}
