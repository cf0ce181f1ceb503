//! espeak-ng synthesis, the floor that needs no network: `espeak-ng --stdout -v VOICE`
//! with the text on stdin (never an argument), its streamed WAV (22050 Hz, sizes
//! unknown in a pipe) read as chunks once the header is in.

use std::process::Stdio;

use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::{nothing_to_say, voice_from, AudioReader, Synthesizer, Voice};
use crate::speech::stt::{failed, or_default, Task};
use crate::speech::SpeechError;
use kotoba_core::config::VoiceSettings;

/// The voice used when `tts.voice` is empty.
pub(super) const DEFAULT_VOICE: &str = "en";

/// The sentence when the binary is missing.
pub(super) const MISSING: &str =
    "espeak-ng is not installed: apt-get install espeak-ng (scripts/serve installs it).";

const NAME: &str = "espeak";

/// Synthesis by espeak-ng on this machine.
#[derive(Debug)]
pub struct EspeakSynthesizer {
    program: String,
    voice: String,
}

impl EspeakSynthesizer {
    /// Set up from the voice settings; the voice must be an espeak-ng voice name
    /// (such as `en`, `en-us` or `en-us+f3`).
    pub fn new(s: &VoiceSettings) -> Result<EspeakSynthesizer, SpeechError> {
        let voice = or_default(&s.tts_voice, DEFAULT_VOICE);
        let ok = !voice.starts_with('-')
            && voice
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_+/.".contains(c));
        if !ok {
            return Err(SpeechError::new(format!(
                "tts.voice {voice:?} is not an espeak-ng voice name (such as en, en-us or en-us+f3)."
            )));
        }
        Ok(EspeakSynthesizer {
            program: "espeak-ng".into(),
            voice,
        })
    }

    #[cfg(test)]
    fn with_program(mut self, program: &str) -> Self {
        self.program = program.into();
        self
    }
}

/// The running espeak-ng while its audio is read (dropping it kills the process).
struct Running {
    child: Child,
    stdout: ChildStdout,
    stderr: Option<JoinHandle<String>>,
}

impl Running {
    /// The next bytes; at the end, an error if espeak-ng failed.
    async fn next(mut self) -> Option<(Result<Vec<u8>, SpeechError>, Option<Running>)> {
        let mut buf = vec![0u8; 8192];
        match self.stdout.read(&mut buf).await {
            Ok(0) => {
                let status = self.child.wait().await.ok()?;
                if status.success() {
                    return None;
                }
                let said = match self.stderr.take() {
                    Some(h) => h.await.unwrap_or_default(),
                    None => String::new(),
                };
                let said = said.trim().trim_start_matches("Error:").trim();
                let why = if said.is_empty() {
                    format!("espeak-ng {status}")
                } else {
                    said.to_string()
                };
                Some((Err(failed(Task::Synthesis, NAME, &why, None)), None))
            }
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(buf), Some(self)))
            }
            Err(e) => {
                let why = format!("reading espeak-ng's audio failed ({e})");
                Some((Err(failed(Task::Synthesis, NAME, &why, None)), None))
            }
        }
    }
}

#[async_trait::async_trait]
impl Synthesizer for EspeakSynthesizer {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn synthesize(&self, text: &str) -> Result<Voice, SpeechError> {
        if text.trim().is_empty() {
            return Err(nothing_to_say(NAME));
        }
        let mut cmd = Command::new(&self.program);
        cmd.args(["--stdout", "-v", &self.voice])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        kotoba_engine::children::die_with_me(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                SpeechError::new(MISSING)
            } else {
                failed(
                    Task::Synthesis,
                    NAME,
                    &format!("could not start espeak-ng ({e})"),
                    None,
                )
            }
        })?;
        let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(failed(
                Task::Synthesis,
                NAME,
                "espeak-ng's pipes were not opened",
                None,
            ));
        };
        let text = format!("{}\n", text.trim());
        // Written apart from the reading, so a long text cannot stall on a full pipe.
        tokio::spawn(async move {
            if let Err(e) = stdin.write_all(text.as_bytes()).await {
                tracing::debug!(error = %e, "espeak-ng closed its input early");
            }
            // Dropping stdin closes it: espeak-ng speaks to the end and exits.
        });
        let stderr = tokio::spawn(async move {
            let mut said = String::new();
            let _ = stderr.read_to_string(&mut said).await;
            said
        });
        let running = Running {
            child,
            stdout,
            stderr: Some(stderr),
        };
        let bytes =
            futures::stream::unfold(Some(running), |state| async move { state?.next().await })
                .boxed();
        voice_from(NAME, bytes, AudioReader::wav()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_espeak_ng_says_how_to_install_it() {
        let e = EspeakSynthesizer::new(&VoiceSettings::default())
            .unwrap()
            .with_program("/nonexistent/espeak-ng-missing")
            .synthesize("hello")
            .await
            .unwrap_err();
        assert_eq!(e.0, MISSING);
    }

    #[test]
    fn a_voice_that_looks_like_an_option_is_refused() {
        let s = VoiceSettings {
            tts_voice: "--stdin".into(),
            ..VoiceSettings::default()
        };
        let e = EspeakSynthesizer::new(&s).unwrap_err();
        assert!(e.0.contains("not an espeak-ng voice name"), "{e}");
    }
}
