//! A realtime speech-to-speech session (`voice_mode: realtime`, docs/voice.md): OpenAI's
//! Realtime API over a WebSocket (`{base}/realtime?model=…`). The person's audio goes up
//! as it is heard (`input_audio_buffer.append`, pcm16 at 24 kHz); the server's voice
//! activity detection ends each utterance and answers it; her audio comes back as
//! `response.output_audio.delta`. The model has one function, `consult`, which runs a
//! turn of her loop: its call comes out as [`RealtimeEvent::Consult`], its answer goes
//! back as the function's output, and the model says it. A new utterance over her
//! answer is a barge-in: the server cancels the response, and the caller cuts her audio
//! at [`RealtimeEvent::SpeechStarted`]. No Discord or page types: the voice room drives
//! it.

use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_websockets::Message;

use crate::speech::audio::{f32_to_i16, i16_to_f32, Resampler, HEAR_RATE};
use crate::speech::stt::{
    api_key, on_host, open_socket, or_default, redact, RealtimeSocket as Socket,
};
use kotoba_core::config::{Config, Secret, VoiceSettings};

/// The rate the realtime API hears and speaks (`audio/pcm`).
pub const RATE: u32 = 24_000;
/// The model used when `realtime.model` is empty.
pub const DEFAULT_MODEL: &str = "gpt-realtime";
/// The voice used when `realtime.voice` is empty.
pub const DEFAULT_VOICE: &str = "marin";
/// The env variable read when `realtime.api_key_env` is empty.
pub const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";
/// OpenAI's own API base.
const OPENAI_BASE: &str = "https://api.openai.com/v1";
/// The one function the realtime model is given.
pub const CONSULT: &str = "consult";

/// A realtime session that could not start or broke: one sentence naming the provider
/// and the fix, never the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RealtimeError {
    /// OpenAI's own service needs a key and none is set: the variable to set.
    #[error("Realtime voice (openai) needs an API key: set {0} (realtime.api_key_env names the variable), or point realtime.base_url at another server.")]
    NoKey(String),
    /// `realtime.base_url` is not an http(s) or ws(s) address.
    #[error("Realtime voice (openai) cannot use realtime.base_url {0:?}: it must be an http(s) or ws(s) address.")]
    BadBase(String),
    /// The socket could not be opened (refused, unreachable, an HTTP error at the
    /// upgrade): what went wrong.
    #[error("Realtime voice (openai) could not connect: {0}.")]
    Connect(String),
    /// The provider answered with an `error` event: its message.
    #[error("Realtime voice (openai) failed: {0}.")]
    Provider(String),
    /// The socket closed or broke during the session: how.
    #[error("Realtime voice (openai) lost its connection: {0}.")]
    Dropped(String),
}

/// Where and how to open realtime sessions, from the live settings.
#[derive(Debug, Clone)]
pub struct RealtimeConfig {
    /// The WebSocket address, with the model.
    url: String,
    /// The model.
    model: String,
    /// Her voice.
    voice: String,
    /// The key (a server other than OpenAI's own may need none).
    key: Option<Secret>,
}

impl RealtimeConfig {
    /// The `realtime.*` settings; a missing key for OpenAI's own service or a base that
    /// is not a web address is refused here, in one sentence.
    pub fn from_settings(config: &Config, s: &VoiceSettings) -> Result<Self, RealtimeError> {
        let base = or_default(&s.realtime_base_url, OPENAI_BASE);
        let base = base.trim_end_matches('/');
        let key_env = or_default(&s.realtime_api_key_env, DEFAULT_KEY_ENV);
        let key = api_key(config, &key_env);
        if key.is_none() && on_host(base, "api.openai.com") {
            return Err(RealtimeError::NoKey(key_env));
        }
        let ws = if let Some(rest) = base.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = base.strip_prefix("http://") {
            format!("ws://{rest}")
        } else if base.starts_with("ws://") || base.starts_with("wss://") {
            base.to_string()
        } else {
            return Err(RealtimeError::BadBase(base.to_string()));
        };
        let model = or_default(&s.realtime_model, DEFAULT_MODEL);
        Ok(RealtimeConfig {
            url: format!("{ws}/realtime?model={model}"),
            model,
            voice: or_default(&s.realtime_voice, DEFAULT_VOICE),
            key,
        })
    }

    /// The session's WebSocket address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The sentence for a failure, with the key hidden.
    fn hide(&self, s: &str) -> String {
        redact(s, self.key.as_ref())
    }
}

/// What a realtime session reports, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum RealtimeEvent {
    /// The session is set up (`session.updated`): audio may flow.
    Ready,
    /// The server heard speech begin: over her answer, that is a barge-in (cut her
    /// audio now; the server cancels its response).
    SpeechStarted,
    /// The server heard the utterance end, at `at`; its answer comes next.
    SpeechStopped {
        /// When the stop arrived here (the end of speech, in the room's clock).
        at: Instant,
    },
    /// What the person said, as the server transcribed it.
    Heard(String),
    /// Her voice: 24 kHz mono pcm16.
    Audio(Vec<i16>),
    /// Her words as she says them (a piece of the transcript of her audio).
    Words(String),
    /// The model asks her loop: run a turn with `request`, then answer `call_id`
    /// ([`RealtimeSession::answer`]).
    Consult {
        /// The function call's id.
        call_id: String,
        /// What the person wants, in the model's words.
        request: String,
    },
    /// A response ended: `completed`, `cancelled` (a barge-in), `failed` …
    Done {
        /// The response's status.
        status: String,
    },
    /// The session is over: a failure, or `None` when it was closed from here.
    Closed(Option<RealtimeError>),
}

/// What goes up to the server.
enum Up {
    /// Heard audio, 16 kHz mono.
    Audio(Vec<i16>),
    /// A consult's answer.
    Answer { call_id: String, output: String },
    /// Cut the response now (Stop, leave).
    Cancel,
    /// Answer what was heard now (a busy room: after her name was heard).
    Respond,
    /// Say these words of hers, as they are (an announce).
    Say(String),
    /// Whether the server answers each utterance itself and cuts its answer when
    /// speech starts (alone with her), or waits for [`RealtimeSession::respond`].
    Auto(bool),
}

/// One open realtime session. Dropping it closes the socket.
pub struct RealtimeSession {
    up: mpsc::UnboundedSender<Up>,
}

impl RealtimeSession {
    /// Open a session with `instructions` (her soul and the voice register) and the
    /// consult function, answering by itself; events come on the receiver until
    /// [`RealtimeEvent::Closed`].
    pub async fn open(
        config: &RealtimeConfig,
        instructions: &str,
    ) -> Result<(RealtimeSession, mpsc::UnboundedReceiver<RealtimeEvent>), RealtimeError> {
        let ws = set_up(config, &session_update(config, instructions, true)).await?;
        let (up_tx, up_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(run(config.clone(), ws, up_rx, events_tx));
        Ok((RealtimeSession { up: up_tx }, events_rx))
    }

    /// Start a session at once: it connects in its task while the first audio queues,
    /// and a failure to connect comes as [`RealtimeEvent::Closed`]. `auto` as for
    /// [`RealtimeSession::auto_answer`].
    pub fn start(
        config: &RealtimeConfig,
        instructions: &str,
        auto: bool,
    ) -> (RealtimeSession, mpsc::UnboundedReceiver<RealtimeEvent>) {
        let (up_tx, up_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (config, update) = (config.clone(), session_update(config, instructions, auto));
        tokio::spawn(async move {
            match set_up(&config, &update).await {
                Ok(ws) => run(config, ws, up_rx, events_tx).await,
                Err(e) => {
                    let _ = events_tx.send(RealtimeEvent::Closed(Some(e)));
                }
            }
        });
        (RealtimeSession { up: up_tx }, events_rx)
    }

    /// Heard audio (16 kHz mono), as it comes.
    pub fn append(&self, pcm: &[i16]) {
        let _ = self.up.send(Up::Audio(pcm.to_vec()));
    }

    /// The consult `call_id` answered with `output`; the model then says it.
    pub fn answer(&self, call_id: &str, output: &str) {
        let _ = self.up.send(Up::Answer {
            call_id: call_id.to_string(),
            output: output.to_string(),
        });
    }

    /// Cancel the response in progress (Stop).
    pub fn cancel(&self) {
        let _ = self.up.send(Up::Cancel);
    }

    /// Answer the last utterance now (when the server does not answer by itself).
    pub fn respond(&self) {
        let _ = self.up.send(Up::Respond);
    }

    /// Say `words` of hers in the session's voice (a result announced after its turn).
    pub fn say(&self, words: &str) {
        let _ = self.up.send(Up::Say(words.to_string()));
    }

    /// `true`: the server answers each utterance and a new one cuts its answer (one
    /// person with her). `false`: it only listens until [`RealtimeSession::respond`]
    /// (a busy room, where only her name makes an utterance hers).
    pub fn auto_answer(&self, auto: bool) {
        let _ = self.up.send(Up::Auto(auto));
    }
}

/// The instruction that makes the model say `words` as they are.
pub const SAY_AS_IS: &str = "Say this to the person, word for word, and nothing else: ";

/// How long the doctor waits for a session to be set up.
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(8);

/// Whether a session opens and is set up (the doctor): the socket, the key and the
/// `session.update` all taken. Nothing is said or heard; the socket is closed at once.
pub async fn probe(config: &RealtimeConfig) -> Result<(), RealtimeError> {
    let set_up = async {
        let (session, mut events) = RealtimeSession::open(config, "A check: say nothing.").await?;
        let ready = loop {
            match events.recv().await {
                Some(RealtimeEvent::Ready) => break Ok(()),
                Some(RealtimeEvent::Closed(Some(e))) => break Err(e),
                Some(RealtimeEvent::Closed(None)) | None => {
                    break Err(RealtimeError::Dropped(
                        "the server closed the connection".into(),
                    ))
                }
                Some(_) => {}
            }
        };
        drop(session);
        ready
    };
    tokio::time::timeout(PROBE_WAIT, set_up)
        .await
        .unwrap_or_else(|_| {
            Err(RealtimeError::Connect(format!(
                "the session was not set up within {} s",
                PROBE_WAIT.as_secs()
            )))
        })
}

/// The consult function as the session offers it.
pub fn consult_tool() -> Value {
    json!({
        "type": "function",
        "name": CONSULT,
        "description": "Ask Kotoba's own mind for anything beyond small talk: a fact you are \
            not sure of, anything on the owner's machine, files, the web, memory, reminders, \
            the Discord server. Pass the person's request in their words; say the answer \
            you get back, in your own voice, briefly.",
        "parameters": {
            "type": "object",
            "properties": { "request": {
                "type": "string",
                "description": "What the person asked, in their words.",
            }},
            "required": ["request"],
        },
    })
}

/// The server's turn detection: `auto` answers each utterance and lets speech cut it.
fn turn_detection(auto: bool) -> Value {
    json!({
        "type": "server_vad",
        "create_response": auto,
        "interrupt_response": auto,
    })
}

/// The `session.update` that makes this a speech-to-speech session with server turn
/// detection, her voice and the consult function.
fn session_update(config: &RealtimeConfig, instructions: &str, auto: bool) -> Value {
    let format = json!({ "type": "audio/pcm", "rate": RATE });
    json!({
        "type": "session.update",
        "session": {
            "type": "realtime",
            "model": config.model,
            "instructions": instructions,
            "output_modalities": ["audio"],
            "audio": {
                "input": {
                    "format": format,
                    "transcription": { "model": "gpt-4o-mini-transcribe" },
                    "turn_detection": turn_detection(auto),
                },
                "output": { "format": format, "voice": config.voice },
            },
            "tools": [consult_tool()],
            "tool_choice": "auto",
        },
    })
}

/// Open the socket and send the session's `update`.
async fn set_up(config: &RealtimeConfig, update: &Value) -> Result<Socket, RealtimeError> {
    let mut ws = open_socket(&config.url, config.key.as_ref())
        .await
        .map_err(|why| RealtimeError::Connect(config.hide(&why.to_string())))?;
    send(&mut ws, update, config).await?;
    Ok(ws)
}

async fn send(
    ws: &mut Socket,
    event: &Value,
    config: &RealtimeConfig,
) -> Result<(), RealtimeError> {
    ws.send(Message::text(event.to_string()))
        .await
        .map_err(|e| RealtimeError::Dropped(config.hide(&format!("a send failed ({e})"))))
}

/// One response at a time: the server refuses a `response.create` while a response is
/// in progress (`conversation_already_has_active_response`), so a create asked for
/// then — an announce while the session still answers the person, say — waits for the
/// active one's `response.done`, in order.
#[derive(Debug, Default)]
struct Responses {
    /// A response is in progress: created (by the server's turn detection or by us)
    /// and not done.
    active: bool,
    /// The creates waiting for it, oldest first.
    waiting: std::collections::VecDeque<Value>,
    /// The create sent last, to send again when the server refused it as overlapping.
    last: Option<Value>,
}

impl Responses {
    /// A create to send now, or `None` when it must wait (kept in order).
    fn create(&mut self, event: Value) -> Option<Value> {
        if self.active || !self.waiting.is_empty() {
            self.waiting.push_back(event);
            return None;
        }
        self.active = true;
        self.last = Some(event.clone());
        Some(event)
    }

    /// What the server said of responses: the next create to send, if one may go now.
    fn heard(&mut self, kind: &str, error_code: &str) -> Option<Value> {
        match (kind, error_code) {
            ("response.created", _) => self.active = true,
            ("response.done", _) => {
                self.active = false;
                let next = self.waiting.pop_front()?;
                self.active = true;
                self.last = Some(next.clone());
                return Some(next);
            }
            ("error", "conversation_already_has_active_response") => {
                // Ours came while the server's own answer ran: again after it.
                self.active = true;
                if let Some(last) = self.last.take() {
                    self.waiting.push_front(last);
                }
            }
            _ => {}
        }
        None
    }

    /// Stop: nothing waiting is said.
    fn clear(&mut self) {
        self.waiting.clear();
    }
}

/// The session's task: audio and answers up, events down, until either side ends.
async fn run(
    config: RealtimeConfig,
    mut ws: Socket,
    mut up: mpsc::UnboundedReceiver<Up>,
    events: mpsc::UnboundedSender<RealtimeEvent>,
) {
    let mut resampler = Resampler::new(HEAR_RATE, RATE);
    let mut responses = Responses::default();
    let end = loop {
        tokio::select! {
            u = up.recv() => match u {
                None => {
                    let _ = ws.close().await;
                    break None;
                }
                Some(u) => {
                    let event = match u {
                        Up::Audio(pcm) => {
                            let mut out = Vec::new();
                            resampler.push(&i16_to_f32(&pcm), &mut out);
                            if out.is_empty() {
                                continue;
                            }
                            append_event(&f32_to_i16(&out))
                        }
                        Up::Answer { call_id, output } => {
                            let item = json!({
                                "type": "conversation.item.create",
                                "item": { "type": "function_call_output", "call_id": call_id, "output": output },
                            });
                            if let Err(e) = send(&mut ws, &item, &config).await {
                                break Some(e);
                            }
                            match responses.create(json!({ "type": "response.create" })) {
                                Some(create) => create,
                                None => continue,
                            }
                        }
                        Up::Cancel => {
                            responses.clear();
                            json!({ "type": "response.cancel" })
                        }
                        Up::Respond => match responses.create(json!({ "type": "response.create" })) {
                            Some(create) => create,
                            None => continue,
                        },
                        Up::Say(words) => match responses.create(json!({
                            "type": "response.create",
                            "response": { "instructions": format!("{SAY_AS_IS}{words}") },
                        })) {
                            Some(create) => create,
                            None => continue,
                        },
                        Up::Auto(auto) => json!({
                            "type": "session.update",
                            "session": {
                                "type": "realtime",
                                "audio": { "input": { "turn_detection": turn_detection(auto) } },
                            },
                        }),
                    };
                    if let Err(e) = send(&mut ws, &event, &config).await {
                        break Some(e);
                    }
                }
            },
            m = ws.next() => match m {
                None => break Some(RealtimeError::Dropped("the server closed the connection".into())),
                Some(Err(e)) => break Some(RealtimeError::Dropped(config.hide(&e.to_string()))),
                Some(Ok(msg)) => {
                    if msg.is_close() {
                        break Some(RealtimeError::Dropped("the server closed the connection".into()));
                    }
                    let Some(text) = msg.as_text() else { continue };
                    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                    let kind = v["type"].as_str().unwrap_or_default();
                    let code = v["error"]["code"].as_str().unwrap_or_default();
                    if let Some(next) = responses.heard(kind, code) {
                        if let Err(e) = send(&mut ws, &next, &config).await {
                            break Some(e);
                        }
                    }
                    match read_event(&v, &config) {
                        Read::Event(e) => {
                            if events.send(e).is_err() {
                                let _ = ws.close().await;
                                break None;
                            }
                        }
                        Read::Fatal(e) => break Some(e),
                        Read::Nothing => {}
                    }
                }
            },
        }
    };
    let _ = events.send(RealtimeEvent::Closed(end));
}

/// What one server event means here.
enum Read {
    Event(RealtimeEvent),
    Fatal(RealtimeError),
    Nothing,
}

/// A server event as the room needs it. Both the GA names and the beta names
/// (`response.audio.delta` …) are read.
fn read_event(v: &Value, config: &RealtimeConfig) -> Read {
    let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    let event = match v["type"].as_str().unwrap_or_default() {
        "session.updated" => RealtimeEvent::Ready,
        "input_audio_buffer.speech_started" => RealtimeEvent::SpeechStarted,
        "input_audio_buffer.speech_stopped" => RealtimeEvent::SpeechStopped { at: Instant::now() },
        "conversation.item.input_audio_transcription.completed" => {
            RealtimeEvent::Heard(text("transcript"))
        }
        "response.output_audio.delta" | "response.audio.delta" => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(v["delta"].as_str().unwrap_or_default())
                .unwrap_or_default();
            let pcm = bytes
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]))
                .collect();
            RealtimeEvent::Audio(pcm)
        }
        "response.output_audio_transcript.delta" | "response.audio_transcript.delta" => {
            RealtimeEvent::Words(text("delta"))
        }
        "response.function_call_arguments.done" if v["name"] == CONSULT => {
            let args: Value = serde_json::from_str(v["arguments"].as_str().unwrap_or("{}"))
                .unwrap_or(Value::Null);
            RealtimeEvent::Consult {
                call_id: text("call_id"),
                request: args["request"].as_str().unwrap_or_default().to_string(),
            }
        }
        "response.done" => RealtimeEvent::Done {
            status: v["response"]["status"]
                .as_str()
                .unwrap_or("completed")
                .to_string(),
        },
        "error" => {
            let message = v["error"]["message"].as_str().unwrap_or("an error");
            let message = config.hide(message.trim_end_matches('.'));
            // Cancelling a response that already ended is not a failure, nor a create
            // that came while one ran (it is sent again after it: `Responses`).
            if v["error"]["code"] == "response_cancel_not_active"
                || v["error"]["code"] == "conversation_already_has_active_response"
            {
                return Read::Nothing;
            }
            return Read::Fatal(RealtimeError::Provider(message));
        }
        _ => return Read::Nothing,
    };
    Read::Event(event)
}

/// `input_audio_buffer.append` with `pcm` (24 kHz) as base64 little-endian pcm16.
fn append_event(pcm: &[i16]) -> Value {
    let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
    json!({
        "type": "input_audio_buffer.append",
        "audio": base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(n: u32) -> Value {
        json!({ "type": "response.create", "n": n })
    }

    #[test]
    fn one_response_at_a_time_creates_wait_in_order_and_a_refused_one_goes_again() {
        let mut r = Responses::default();
        assert_eq!(
            r.create(create(1)),
            Some(create(1)),
            "nothing runs: it goes"
        );
        assert_eq!(r.create(create(2)), None, "one runs: it waits");
        assert_eq!(r.create(create(3)), None);
        assert_eq!(r.heard("response.created", ""), None);
        assert_eq!(
            r.heard("response.done", ""),
            Some(create(2)),
            "the oldest next"
        );
        assert_eq!(r.heard("response.done", ""), Some(create(3)));
        assert_eq!(r.heard("response.done", ""), None);
        // The server's own answer started just before ours reached it.
        assert_eq!(r.create(create(4)), Some(create(4)));
        assert_eq!(
            r.heard("error", "conversation_already_has_active_response"),
            None
        );
        assert_eq!(
            r.heard("response.done", ""),
            Some(create(4)),
            "sent again after it"
        );
        // Stop: nothing waiting is said.
        assert_eq!(r.create(create(5)), None);
        r.clear();
        assert_eq!(r.heard("response.done", ""), None);
    }
}
