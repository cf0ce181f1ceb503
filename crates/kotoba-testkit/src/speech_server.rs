//! The loopback speech server: OpenAI's `POST /v1/audio/transcriptions` and
//! `POST /v1/audio/speech`, ElevenLabs' `POST /v1/speech-to-text` and
//! `POST /v1/text-to-speech/{voice}/stream`, speaking their real HTTP shapes
//! (multipart uploads, JSON bodies, streamed s16le PCM or WAV, error bodies). It
//! answers scripted transcripts, streams a tone whose length grows with the text in
//! chunks split at odd bytes, can wait fixed latencies, fail with a status, or demand
//! a key, and records every request. OpenAI's realtime transcription WebSocket is in
//! [`realtime`], its speech-to-speech session at the same address in [`converse`].

mod realtime;
pub use realtime::{StreamFault, StreamSession};
mod converse;
pub use converse::Converse;

use kotoba_store::testing::thread;

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::Router;
use serde_json::{json, Value};

/// The transcript answered once the script is empty.
pub const DEFAULT_TRANSCRIPT: &str = "hello there";

/// The rate of OpenAI's `pcm` format (and ElevenLabs' `pcm_24000`).
pub const PCM_RATE: u32 = 24_000;

/// Byte sizes the audio is cut into, in turn: odd sizes first, so samples split
/// across chunks.
pub const CHUNK_PATTERN: [usize; 5] = [1, 4801, 2, 9599, 7];

/// How `/v1/audio/speech` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeechFormat {
    /// Raw s16le mono at 24 kHz (what `response_format: "pcm"` asks for).
    Pcm,
    /// A WAV at `rate` with streamed (unknown) sizes; `labelled` sends
    /// `Content-Type: audio/wav`, otherwise `application/octet-stream`.
    Wav {
        /// The WAV's sample rate.
        rate: u32,
        /// Whether it is sent as `audio/wav`.
        labelled: bool,
    },
}

/// One request as the server saw it.
#[derive(Debug, Clone, Default)]
pub struct SpeechRequest {
    /// The path, such as `/v1/audio/transcriptions`.
    pub path: String,
    /// The query string, if any (`output_format=pcm_24000`).
    pub query: Option<String>,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The `xi-api-key` header.
    pub xi_api_key: Option<String>,
    /// The multipart text fields (`model`, `language` …).
    pub fields: BTreeMap<String, String>,
    /// The uploaded file's name.
    pub file_name: Option<String>,
    /// The uploaded file's content type.
    pub file_type: Option<String>,
    /// The uploaded WAV's rate, when it was a WAV.
    pub audio_rate: Option<u32>,
    /// The uploaded WAV's sample count (0 when it was not one).
    pub audio_samples: usize,
    /// A digest of the uploaded samples (the same audio, the same digest).
    pub audio_digest: u64,
    /// The uploaded samples (empty when it was not a WAV).
    pub audio: Vec<i16>,
    /// The JSON body (speech requests), or Null.
    pub json: Value,
}

impl SpeechRequest {
    /// Whether a key came along (either header).
    pub fn has_auth(&self) -> bool {
        self.authorization.is_some() || self.xi_api_key.is_some()
    }
}

struct Shared {
    transcripts: Mutex<VecDeque<String>>,
    default_transcript: Mutex<String>,
    /// The last recognised audio's digest and its words.
    last_heard: Mutex<Option<(u64, tokio::time::Instant, String)>>,
    recognition_delay: Mutex<Duration>,
    synthesis_delay: Mutex<Duration>,
    failure: Mutex<Option<(u16, String)>>,
    key: Mutex<Option<String>>,
    format: Mutex<SpeechFormat>,
    seen: Mutex<Vec<SpeechRequest>>,
    record: std::sync::atomic::AtomicBool,
    count: AtomicU64,
    /// Realtime sessions: from a commit to its transcript, what goes wrong, and each
    /// session seen.
    stream_delay: Mutex<Duration>,
    stream_fault: Mutex<Option<StreamFault>>,
    streams: Mutex<Vec<StreamSession>>,
    /// Realtime conversations (speech to speech): the script and each session seen.
    converse: Mutex<converse::ConverseState>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The running server. Dropping it stops the server.
pub struct SpeechServer {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SpeechServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SpeechServer {
    /// Bind 127.0.0.1:0 (TCP_NODELAY on every connection) and serve until dropped.
    #[allow(clippy::expect_used)]
    pub async fn start() -> SpeechServer {
        let shared = Arc::new(Shared {
            transcripts: Mutex::new(VecDeque::new()),
            default_transcript: Mutex::new(DEFAULT_TRANSCRIPT.to_string()),
            last_heard: Mutex::new(None),
            recognition_delay: Mutex::new(Duration::ZERO),
            synthesis_delay: Mutex::new(Duration::ZERO),
            failure: Mutex::new(None),
            key: Mutex::new(None),
            format: Mutex::new(SpeechFormat::Pcm),
            seen: Mutex::new(Vec::new()),
            record: std::sync::atomic::AtomicBool::new(true),
            count: AtomicU64::new(0),
            stream_delay: Mutex::new(Duration::ZERO),
            stream_fault: Mutex::new(None),
            streams: Mutex::new(Vec::new()),
            converse: Mutex::new(Default::default()),
        });
        let app = Router::new()
            .route("/v1/audio/transcriptions", post(openai_transcribe))
            .route("/v1/audio/speech", post(openai_speech))
            .route("/v1/models", get(models))
            .route("/v1/speech-to-text", post(elevenlabs_transcribe))
            .route("/v1/realtime", get(realtime::realtime))
            .route("/v1/text-to-speech/{voice}/stream", post(elevenlabs_speech))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the speech server on loopback");
        let addr = listener.local_addr().expect("the bound address");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        SpeechServer { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT/v1`: the base for the OpenAI-compatible providers.
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The environment that points `kotoba serve`'s recognizer and synthesis at this
    /// server's OpenAI-compatible endpoints.
    pub fn openai_env(&self) -> [(&'static str, String); 4] {
        [
            ("KOTOBA_STT_PROVIDER", "openai".to_string()),
            ("KOTOBA_STT_BASE_URL", self.openai_base()),
            ("KOTOBA_TTS_PROVIDER", "openai".to_string()),
            ("KOTOBA_TTS_BASE_URL", self.openai_base()),
        ]
    }

    /// `http://127.0.0.1:PORT`: the base for the ElevenLabs providers.
    pub fn elevenlabs_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queue a transcript; recognition requests take them in order.
    pub fn push_transcript(&self, text: &str) {
        lock(&self.shared.transcripts).push_back(text.to_string());
    }

    /// The transcript answered once the queue is empty.
    pub fn set_default_transcript(&self, text: &str) {
        *lock(&self.shared.default_transcript) = text.to_string();
    }

    /// Wait this long before answering a recognition request.
    pub fn set_recognition_delay(&self, d: Duration) {
        *lock(&self.shared.recognition_delay) = d;
    }

    /// Wait this long before the first byte of a synthesis reply.
    pub fn set_synthesis_delay(&self, d: Duration) {
        *lock(&self.shared.synthesis_delay) = d;
    }

    /// Answer every request with this status and an error body in the provider's
    /// shape (OpenAI `{"error": {...}}`, ElevenLabs `{"detail": {...}}`) until
    /// [`SpeechServer::succeed`].
    pub fn fail(&self, status: u16, message: &str) {
        *lock(&self.shared.failure) = Some((status, message.to_string()));
    }

    /// Stop failing.
    pub fn succeed(&self) {
        *lock(&self.shared.failure) = None;
    }

    /// Demand this key (bearer or `xi-api-key`); a wrong one gets a 401 whose message
    /// repeats the key it was given, as a careless server might.
    pub fn require_key(&self, key: &str) {
        *lock(&self.shared.key) = Some(key.to_string());
    }

    /// How `/v1/audio/speech` answers (PCM by default).
    pub fn set_speech_format(&self, format: SpeechFormat) {
        *lock(&self.shared.format) = format;
    }

    /// Keep (the default) or stop keeping requests; they are counted either way.
    pub fn set_recording(&self, on: bool) {
        self.shared.record.store(on, Ordering::Relaxed);
    }

    /// Every request kept, in order.
    pub fn requests(&self) -> Vec<SpeechRequest> {
        lock(&self.shared.seen).clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        usize::try_from(self.shared.count.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }
}

/// The tone `/v1/audio/speech` and ElevenLabs speak for `text` at `rate`: 100 ms plus
/// 50 ms a character of a 440 Hz sine.
pub fn tone(text: &str, rate: u32) -> Vec<i16> {
    let n = (rate as usize / 10) + text.chars().count() * (rate as usize / 20);
    (0..n)
        .map(|i| {
            let t = i as f64 / f64::from(rate);
            ((t * 440.0 * std::f64::consts::TAU).sin() * 8000.0).round() as i16
        })
        .collect()
}

/// `bytes` cut by [`CHUNK_PATTERN`].
pub fn cut(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    for size in CHUNK_PATTERN.iter().cycle() {
        if at >= bytes.len() {
            break;
        }
        let end = (at + size).min(bytes.len());
        out.push(bytes[at..end].to_vec());
        at = end;
    }
    out
}

/// A streaming WAV header at `rate` (mono 16-bit), its sizes unknown as in a pipe.
pub fn streaming_wav_header(rate: u32) -> Vec<u8> {
    let mut h = kotoba::speech::wav::encode(&[], rate);
    h[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    h[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
    h
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    OpenAi,
    ElevenLabs,
}

impl Shared {
    fn note(&self, req: SpeechRequest) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if self.record.load(Ordering::Relaxed) {
            lock(&self.seen).push(req);
        }
    }

    /// The failure or key refusal to answer instead, if any.
    fn refusal(&self, api: Api, req: &SpeechRequest) -> Option<Response> {
        if let Some((status, message)) = lock(&self.failure).clone() {
            return Some(error(api, status, &message));
        }
        let want = lock(&self.key).clone()?;
        let given = match api {
            Api::OpenAi => req
                .authorization
                .as_deref()
                .and_then(|a| a.strip_prefix("Bearer "))
                .map(str::to_string),
            Api::ElevenLabs => req.xi_api_key.clone(),
        };
        match given {
            Some(g) if g == want => None,
            Some(g) => Some(error(
                api,
                401,
                &format!("Incorrect API key provided: {g}. Check the key and try again."),
            )),
            None => Some(error(api, 401, "You didn't provide an API key.")),
        }
    }

    /// The next scripted transcript for audio with `digest`; the same audio as the
    /// last request's within 3 s (the room asks again at the commit what it asked at a
    /// pause, when nothing was said since) gets the same words, as a real recognizer's
    /// would.
    fn next_transcript(&self, digest: u64) -> String {
        let mut last = lock(&self.last_heard);
        let now = tokio::time::Instant::now();
        if let Some((d, at, text)) = last.as_ref() {
            if *d == digest && now.duration_since(*at) < std::time::Duration::from_secs(3) {
                return text.clone();
            }
        }
        let text = lock(&self.transcripts)
            .pop_front()
            .unwrap_or_else(|| lock(&self.default_transcript).clone());
        *last = Some((digest, now, text.clone()));
        text
    }

    /// The next scripted transcript for a realtime segment (each segment is new
    /// audio).
    fn next_stream_transcript(&self) -> String {
        lock(&self.transcripts)
            .pop_front()
            .unwrap_or_else(|| lock(&self.default_transcript).clone())
    }
}

fn error(api: Api, status: u16, message: &str) -> Response {
    let body = match api {
        Api::OpenAi => json!({ "error": {
            "message": message, "type": "invalid_request_error", "param": null,
            "code": if status == 401 { json!("invalid_api_key") } else { Value::Null },
        }}),
        Api::ElevenLabs => json!({ "detail": { "status": "error", "message": message } }),
    };
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn json_reply(body: Value) -> Response {
    let mut resp = Response::new(Body::from(body.to_string()));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn base_request(path: &str, query: Option<String>, headers: &HeaderMap) -> SpeechRequest {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    SpeechRequest {
        path: path.to_string(),
        query,
        authorization: text("authorization"),
        xi_api_key: text("xi-api-key"),
        ..SpeechRequest::default()
    }
}

/// One part of a multipart body.
struct Part {
    name: String,
    file_name: Option<String>,
    content_type: Option<String>,
    body: Vec<u8>,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn quoted(headers: &str, key: &str) -> Option<String> {
    let at = headers.find(&format!("{key}=\""))? + key.len() + 2;
    let end = headers[at..].find('"')?;
    Some(headers[at..at + end].to_string())
}

/// Parse a `multipart/form-data` body; `None` if it is not one.
fn multipart(headers: &HeaderMap, body: &[u8]) -> Option<Vec<Part>> {
    let ct = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    if !ct.starts_with("multipart/form-data") {
        return None;
    }
    let boundary = ct.split("boundary=").nth(1)?.trim_matches('"');
    let delim = format!("--{boundary}").into_bytes();
    let mut parts = Vec::new();
    let mut rest = &body[find(body, &delim)? + delim.len()..];
    loop {
        if rest.starts_with(b"--") {
            return Some(parts);
        }
        rest = rest.strip_prefix(b"\r\n")?;
        let head_end = find(rest, b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&rest[..head_end]).to_string();
        let after = &rest[head_end + 4..];
        let end = find(after, &delim)?;
        let content = after[..end].strip_suffix(b"\r\n")?;
        let content_type = head
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("content-type:"))
            .map(|l| l["content-type:".len()..].trim().to_string());
        parts.push(Part {
            name: quoted(&head, "name")?,
            file_name: quoted(&head, "filename"),
            content_type,
            body: content.to_vec(),
        });
        rest = &after[end + delim.len()..];
    }
}

/// Read an upload into `req`; the error response when it is not a WAV upload.
fn read_upload(
    api: Api,
    req: &mut SpeechRequest,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response> {
    let Some(parts) = multipart(headers, body) else {
        return Some(error(api, 400, "The request must be multipart/form-data."));
    };
    for p in parts {
        if p.name == "file" {
            req.file_name = p.file_name;
            req.file_type = p.content_type;
            if let Ok(pcm) = kotoba::speech::wav::decode(&p.body) {
                req.audio_rate = Some(pcm.rate);
                req.audio_samples = pcm.samples.len();
                req.audio_digest = {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    pcm.samples.hash(&mut h);
                    h.finish()
                };
                req.audio = pcm.samples;
            }
        } else {
            req.fields
                .insert(p.name, String::from_utf8_lossy(&p.body).to_string());
        }
    }
    if req.audio_rate.is_none() {
        return Some(error(
            api,
            400,
            "Invalid file format. The uploaded file is not a WAV file.",
        ));
    }
    None
}

async fn openai_transcribe(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    transcribe(
        shared,
        Api::OpenAi,
        "/v1/audio/transcriptions",
        headers,
        body,
    )
    .await
}

async fn elevenlabs_transcribe(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    transcribe(shared, Api::ElevenLabs, "/v1/speech-to-text", headers, body).await
}

async fn transcribe(
    shared: Arc<Shared>,
    api: Api,
    path: &str,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut req = base_request(path, None, &headers);
    let bad = read_upload(api, &mut req, &headers, &body);
    let refused = shared.refusal(api, &req);
    let digest = req.audio_digest;
    shared.note(req);
    if let Some(r) = refused.or(bad) {
        return r;
    }
    let delay = *lock(&shared.recognition_delay);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let text = shared.next_transcript(digest);
    match api {
        Api::OpenAi => json_reply(json!({ "text": text })),
        Api::ElevenLabs => json_reply(json!({
            "language_code": "en", "language_probability": 0.98, "text": text, "words": [],
        })),
    }
}

/// `GET /v1/models`: the model list both OpenAI (bearer, `{"data": [...]}`) and
/// ElevenLabs (`xi-api-key`, a bare array) serve, which `kotoba doctor` reads to see
/// that the provider answers and takes the key.
async fn models(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let req = base_request("/v1/models", None, &headers);
    let api = if req.xi_api_key.is_some() {
        Api::ElevenLabs
    } else {
        Api::OpenAi
    };
    let refused = shared.refusal(api, &req);
    shared.note(req);
    if let Some(r) = refused {
        return r;
    }
    match api {
        Api::OpenAi => axum::Json(serde_json::json!({
            "object": "list",
            "data": [{"id": "gpt-4o-mini-transcribe"}, {"id": "gpt-4o-mini-tts"}],
        }))
        .into_response(),
        Api::ElevenLabs => {
            axum::Json(serde_json::json!([{"model_id": "eleven_flash_v2_5"}])).into_response()
        }
    }
}

async fn openai_speech(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut req = base_request("/v1/audio/speech", None, &headers);
    req.json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let input = req.json["input"].as_str().unwrap_or("").to_string();
    let refused = shared.refusal(Api::OpenAi, &req);
    let bad = (input.is_empty() || req.json["voice"].as_str().is_none())
        .then(|| error(Api::OpenAi, 400, "'input' and 'voice' are required."));
    shared.note(req);
    if let Some(r) = refused.or(bad) {
        return r;
    }
    let format = *lock(&shared.format);
    let (rate, head, kind) = match format {
        SpeechFormat::Pcm => (PCM_RATE, Vec::new(), "audio/pcm"),
        SpeechFormat::Wav { rate, labelled } => (
            rate,
            streaming_wav_header(rate),
            if labelled {
                "audio/wav"
            } else {
                "application/octet-stream"
            },
        ),
    };
    let mut bytes = head;
    bytes.extend(tone(&input, rate).iter().flat_map(|s| s.to_le_bytes()));
    stream_audio(&shared, bytes, kind).await
}

async fn elevenlabs_speech(
    State(shared): State<Arc<Shared>>,
    Path(voice): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = format!("/v1/text-to-speech/{voice}/stream");
    let mut req = base_request(&path, query.clone(), &headers);
    req.json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = req.json["text"].as_str().unwrap_or("").to_string();
    let refused = shared.refusal(Api::ElevenLabs, &req);
    let rate = query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("output_format=pcm_"))
        .and_then(|r| r.parse::<u32>().ok());
    let bad = if text.is_empty() {
        Some(error(Api::ElevenLabs, 422, "text is required"))
    } else if rate.is_none() {
        Some(error(
            Api::ElevenLabs,
            422,
            "this server only streams output_format=pcm_*",
        ))
    } else {
        None
    };
    shared.note(req);
    if let Some(r) = refused.or(bad) {
        return r;
    }
    let rate = rate.unwrap_or(PCM_RATE);
    let bytes: Vec<u8> = tone(&text, rate)
        .iter()
        .flat_map(|s| s.to_le_bytes())
        .collect();
    stream_audio(&shared, bytes, "audio/pcm").await
}

/// A 200 streaming `bytes` in [`cut`] pieces after the synthesis delay.
async fn stream_audio(shared: &Shared, bytes: Vec<u8>, content_type: &'static str) -> Response {
    let delay = *lock(&shared.synthesis_delay);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let chunks = cut(&bytes);
    let stream = futures::stream::unfold(
        (chunks.into_iter(), true),
        |(mut chunks, first)| async move {
            let chunk = chunks.next()?;
            if !first {
                // Separate writes, so the client sees the audio arrive in pieces.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Some((Ok::<_, Infallible>(Bytes::from(chunk)), (chunks, false)))
        },
    );
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    resp
}

/// A speech server's thread and runtime of its own: [`SpeechServer::start_apart`].
pub use thread::Apart as SpeechServerThread;

impl SpeechServer {
    /// Start the server on an OS thread and runtime of its own (benchmarks measure the
    /// bot's thread apart from the server's); returns it with the handle that stops it.
    pub fn start_apart() -> (SpeechServer, SpeechServerThread) {
        thread::apart("speech-server", SpeechServer::start)
    }
}

/// `text` spoken by espeak-ng (through our own espeak provider), at 16 kHz.
pub async fn espeak_16k(text: &str) -> Vec<i16> {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("settings.yaml"), "tts.provider: espeak\n").unwrap();
    let config = kotoba::config::Config::for_home(home.path(), &[]);
    let voice = kotoba::speech::tts::synthesizer(&config)
        .expect("espeak-ng is installed (scripts/system-deps)")
        .synthesize(text)
        .await
        .expect("espeak-ng speaks");
    let rate = voice.rate;
    let pcm = voice.collect().await.unwrap();
    let mut r = kotoba::speech::audio::Resampler::new(rate, 16_000);
    let mut out = Vec::new();
    r.push(&kotoba::speech::audio::i16_to_f32(&pcm), &mut out);
    r.finish(&mut out);
    kotoba::speech::audio::f32_to_i16(&out)
}
