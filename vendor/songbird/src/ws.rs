use crate::{
    error::JsonError,
    model::{deserialize_binary_event, Event},
};

use bytes::Bytes;
use futures::{SinkExt, StreamExt, TryStreamExt};
use serenity_voice_model::{serialize_binary_event, BinaryError};
use tokio::{
    net::TcpStream,
    time::{timeout, Duration},
};
#[cfg(feature = "tungstenite")]
use tokio_tungstenite::{
    tungstenite::{
        error::Error as TungsteniteError,
        protocol::{CloseFrame, WebSocketConfig as Config},
        Message,
    },
    MaybeTlsStream,
    WebSocketStream,
};
#[cfg(feature = "tws")]
use tokio_websockets::{
    CloseCode,
    Error as TwsError,
    Limits,
    MaybeTlsStream,
    Message,
    WebSocketStream,
};
use std::sync::{
    atomic::{AtomicI64, Ordering},
    Arc,
};
use tracing::{debug, instrument};
use url::Url;

/// A voice gateway socket spoken at version 8: every message the server sends carries a
/// sequence number (a JSON payload's `seq`, the first two bytes of a binary one), the
/// last of which is acknowledged in heartbeats and named when resuming, so that the
/// server re-delivers what a dropped socket missed (kotoba patch).
pub struct WsStream {
    inner: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The last sequence number received on this connection and the ones it resumes
    /// (-1: none yet); shared by every socket of one voice connection.
    seq: Arc<AtomicI64>,
}

impl WsStream {
    /// The last sequence number received, to acknowledge (None before any).
    pub(crate) fn seq_ack(&self) -> Option<i64> {
        let seq = self.seq.load(Ordering::Relaxed);
        (seq >= 0).then_some(seq)
    }

    /// Send a JSON payload built by hand (version 8's heartbeat and resume carry
    /// `seq_ack`, which the voice model's payloads lack).
    pub(crate) async fn send_value(&mut self, value: &serde_json::Value) -> Result<()> {
        Ok(self.inner.send(Message::text(value.to_string())).await?)
    }

    #[instrument]
    pub(crate) async fn connect(url: Url, seq: Arc<AtomicI64>) -> Result<Self> {
        #[cfg(feature = "tungstenite")]
        let (stream, _) = tokio_tungstenite::connect_async_with_config::<Url>(
            url,
            Some(
                Config::default()
                    .max_message_size(None)
                    .max_frame_size(None),
            ),
            true,
        )
        .await?;
        #[cfg(feature = "tws")]
        let (stream, _) = tokio_websockets::ClientBuilder::new()
            .limits(Limits::unlimited())
            .uri(url.as_str())
            .unwrap() // Any valid URL is a valid URI.
            .connect()
            .await?;

        Ok(Self { inner: stream, seq })
    }

    pub(crate) async fn recv_event(&mut self) -> Result<Option<Event>> {
        const TIMEOUT: Duration = Duration::from_millis(500);

        let ws_message = match timeout(TIMEOUT, self.inner.next()).await {
            Ok(Some(Ok(v))) => Some(v),
            Ok(Some(Err(e))) => return Err(e.into()),
            Ok(None) | Err(_) => None,
        };

        convert_ws_message(ws_message, &self.seq)
    }

    pub(crate) async fn recv_event_no_timeout(&mut self) -> Result<Option<Event>> {
        convert_ws_message(self.inner.try_next().await?, &self.seq)
    }

    pub(crate) async fn send_json(&mut self, value: &Event) -> Result<()> {
        let res = crate::json::to_string(value);
        let res = res.map(Message::text);
        Ok(res.map_err(Error::from).map(|m| self.inner.send(m))?.await?)
    }

    pub(crate) async fn send_binary(&mut self, value: &Event) -> Result<()> {
        let res = serialize_binary_event(value);
        let res = res.map(Message::binary);

        Ok(res.map_err(Error::from).map(|m| self.inner.send(m))?.await?)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug)]
pub enum Error {
    Json(JsonError),

    /// The discord voice gateway does not support or offer zlib compression.
    /// As a result, only text messages are expected.
    UnexpectedBinaryMessage(Bytes),

    #[cfg(feature = "tungstenite")]
    Ws(Box<TungsteniteError>),
    #[cfg(feature = "tws")]
    Ws(TwsError),

    #[cfg(feature = "tungstenite")]
    WsClosed(Option<CloseFrame>),
    #[cfg(feature = "tws")]
    WsClosed(Option<CloseCode>),

    Binary(BinaryError),
}

impl From<JsonError> for Error {
    fn from(e: JsonError) -> Error {
        Error::Json(e)
    }
}

#[cfg(feature = "tungstenite")]
impl From<TungsteniteError> for Error {
    fn from(e: TungsteniteError) -> Error {
        Error::Ws(Box::new(e))
    }
}

#[cfg(feature = "tws")]
impl From<TwsError> for Error {
    fn from(e: TwsError) -> Self {
        Error::Ws(e)
    }
}

impl From<BinaryError> for Error {
    fn from(value: BinaryError) -> Self {
        Error::Binary(value)
    }
}

#[inline]
pub(crate) fn convert_ws_message(
    message: Option<Message>,
    seq: &AtomicI64,
) -> Result<Option<Event>> {
    #[cfg(feature = "tungstenite")]
    match message {
        Some(Message::Text(ref payload)) => return Ok(text_event(payload, seq)),
        Some(Message::Binary(bytes)) => return Ok(binary_event(&bytes, seq)),
        Some(Message::Close(Some(frame))) => {
            return Err(Error::WsClosed(Some(frame)));
        },
        // Ping/Pong message behaviour is internally handled by tungstenite.
        _ => return Ok(None),
    };

    #[cfg(feature = "tws")]
    match message {
        Some(ref message) if message.is_text() => {
            return Ok(message.as_text().and_then(|text| text_event(text, seq)));
        },
        Some(message) if message.is_binary() => {
            return Ok(binary_event(&message.into_payload(), seq));
        },
        Some(message) if message.is_close() => {
            return Err(Error::WsClosed(message.as_close().map(|(c, _)| c)));
        },
        // ping/pong; will also be internally handled by tokio-websockets.
        _ => return Ok(None),
    };
}

/// A JSON payload as an event, keeping its sequence number; version 8's Heartbeat ACK
/// (`{"t": nonce}`) is read as the nonce the voice model expects (kotoba patch).
fn text_event(text: &str, seq: &AtomicI64) -> Option<Event> {
    let mut value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| debug!("Unexpected JSON: {e}. Payload: {text}"))
        .ok()?;
    // The voice model reads only `op` and `d` and refuses any key after them, so the
    // sequence number is taken out here.
    if let Some(n) = value
        .as_object_mut()
        .and_then(|o| o.remove("seq"))
        .and_then(|n| n.as_i64())
    {
        seq.store(n, Ordering::Relaxed);
    }
    if value["op"] == 6 {
        if let Some(nonce) = value["d"].get("t").cloned() {
            value["d"] = nonce;
        }
    }
    // The voice model reads `d` as raw JSON text, so it parses from a string.
    serde_json::from_str(&value.to_string())
        .map_err(|e| debug!("Unexpected JSON: {e}. Payload: {text}"))
        .ok()
}

/// A binary (DAVE) message as an event: `[seq: u16 big-endian][opcode: u8][payload]`,
/// keeping its sequence number (kotoba patch).
fn binary_event(bytes: &[u8], seq: &AtomicI64) -> Option<Event> {
    let (head, body) = (bytes.get(..2)?, bytes.get(2..)?);
    seq.store(i64::from(u16::from_be_bytes([head[0], head[1]])), Ordering::Relaxed);
    deserialize_binary_event(body)
        .map_err(|e| debug!("Unexpected binary: {e}"))
        .ok()
}
