//! The loopback Discord voice server: the voice gateway (v4, JSON over a TLS websocket:
//! Hello, Identify → Ready, Select Protocol → Session Description, heartbeat ACKs,
//! Speaking) and the UDP side (IP discovery), speaking what songbird 0.6.1's driver
//! speaks, so the bot's real voice connection comes up against it. TLS uses the test
//! CA under `tests/fixtures/voice-tls/` (trusted only by a child process given
//! SSL_CERT_FILE; see docs/voice.md, Testing). A test reads back what the bot sent.
#![allow(dead_code)]

mod gateway;
pub mod rtp;
mod udp;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, Notify};

use crate::support::discord::lock;

/// The SSRC the voice server gives the bot in Ready.
pub const SSRC: u32 = 4242;
/// The voice token, session id and user id the bot must identify with (what the
/// loopback Discord hands out in VOICE_SERVER_UPDATE and the bot's VOICE_STATE_UPDATE).
pub const TOKEN: &str = "fake-voice-token";
/// See [`TOKEN`].
pub const SESSION: &str = "fake-voice-session";
/// The encryption mode the bot must choose (songbird prefers it; Discord offers it).
pub const MODE: &str = "aead_aes256_gcm_rtpsize";
/// The heartbeat interval in Hello, in milliseconds.
pub const HEARTBEAT_MS: f64 = 1_000.0;
/// The 32-byte key in Session Description.
pub const SECRET_KEY: [u8; 32] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
    27, 28, 29, 30, 31, 32,
];

/// The test CA a child process is told to trust (SSL_CERT_FILE).
pub fn ca_file() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/voice-tls/ca.pem"
    )
    .to_string()
}

/// Who the voice server expects in Identify.
#[derive(Clone, Debug)]
pub struct Expect {
    /// The guild id (Identify's server_id).
    pub server_id: u64,
    /// The bot's user id.
    pub user_id: u64,
}

/// What happened on one voice gateway connection.
#[derive(Clone, Debug, Default)]
pub struct Conn {
    /// The request path and query of the websocket upgrade (`/?v=4`).
    pub path: String,
    /// Every JSON payload the bot sent, in order.
    pub received: Vec<Value>,
    /// Why Identify was refused (the socket was then closed with 4004), if it was.
    pub refused: Option<String>,
    /// Whether the socket is closed (by either side).
    pub closed: bool,
}

pub(crate) struct Shared {
    pub expect: Expect,
    pub udp_addr: SocketAddr,
    pub socket: Arc<UdpSocket>,
    /// Sends a payload to the bot on the live voice gateway connection.
    pub push: Mutex<Option<mpsc::UnboundedSender<Value>>>,
    pub conns: Mutex<Vec<Conn>>,
    /// Every IP discovery request: (ssrc in it, the address it came from).
    pub discoveries: Mutex<Vec<(u32, SocketAddr)>>,
    /// Every other UDP datagram (RTP/RTCP from the bot).
    pub datagrams: Mutex<Vec<Vec<u8>>>,
    pub notify: Notify,
}

impl Shared {
    pub fn changed(&self) {
        self.notify.notify_waiters();
    }
}

/// The running voice server (both sockets stop when it is dropped).
pub struct FakeVoice {
    shared: Arc<Shared>,
    endpoint: String,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for FakeVoice {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl FakeVoice {
    /// Bind the TLS websocket and the UDP socket on 127.0.0.1.
    pub async fn start(expect: Expect) -> FakeVoice {
        let tls = gateway::acceptor();
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the voice gateway");
        let socket = Arc::new(
            UdpSocket::bind("127.0.0.1:0")
                .await
                .expect("bind the voice UDP socket"),
        );
        let endpoint = tcp.local_addr().expect("its address").to_string();
        let shared = Arc::new(Shared {
            expect,
            udp_addr: socket.local_addr().expect("its address"),
            socket: socket.clone(),
            push: Mutex::new(None),
            conns: Mutex::new(Vec::new()),
            discoveries: Mutex::new(Vec::new()),
            datagrams: Mutex::new(Vec::new()),
            notify: Notify::new(),
        });
        let tasks = vec![
            tokio::spawn(gateway::serve(shared.clone(), tcp, tls)),
            tokio::spawn(udp::serve(shared.clone(), socket)),
        ];
        FakeVoice {
            shared,
            endpoint,
            tasks,
        }
    }

    /// `127.0.0.1:PORT`, the endpoint of VOICE_SERVER_UPDATE.
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// The UDP address announced in Ready.
    pub fn udp_addr(&self) -> SocketAddr {
        self.shared.udp_addr
    }

    /// Every voice gateway connection so far, oldest first.
    pub fn conns(&self) -> Vec<Conn> {
        lock(&self.shared.conns).clone()
    }

    /// The payloads with opcode `op` the bot sent on any connection, in order.
    pub fn sent(&self, op: u64) -> Vec<Value> {
        self.conns()
            .iter()
            .flat_map(|c| c.received.iter())
            .filter(|v| v["op"].as_u64() == Some(op))
            .cloned()
            .collect()
    }

    /// Identify payloads (op 0).
    pub fn identifies(&self) -> Vec<Value> {
        self.sent(0)
    }

    /// Select Protocol payloads (op 1).
    pub fn select_protocols(&self) -> Vec<Value> {
        self.sent(1)
    }

    /// Speaking payloads (op 5).
    pub fn speaking(&self) -> Vec<Value> {
        self.sent(5)
    }

    /// Heartbeats (op 3).
    pub fn heartbeats(&self) -> Vec<Value> {
        self.sent(3)
    }

    /// IP discovery requests: (ssrc, where they came from).
    pub fn discoveries(&self) -> Vec<(u32, SocketAddr)> {
        lock(&self.shared.discoveries).clone()
    }

    /// UDP datagrams other than IP discovery (the bot's RTP and RTCP).
    pub fn datagrams(&self) -> Vec<Vec<u8>> {
        lock(&self.shared.datagrams).clone()
    }

    /// Wait (≤ `within`) until `pred` holds of the server; panics naming `what`.
    pub async fn wait_until(
        &self,
        what: &str,
        within: Duration,
        pred: impl Fn(&FakeVoice) -> bool,
    ) {
        let deadline = Instant::now() + within;
        loop {
            let notified = self.shared.notify.notified();
            if pred(self) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "voice server: no {what} within {within:?}; connections: {:?}; discoveries: {:?}",
                self.conns(),
                self.discoveries()
            );
            let _ = tokio::time::timeout(left.min(Duration::from_millis(100)), notified).await;
        }
    }

    /// What the bot sent as audio: its RTP (SSRC [`SSRC`]) opened and decoded, in
    /// sequence order, as 48 kHz stereo interleaved samples.
    pub fn bot_audio(&self) -> Vec<i16> {
        let mut opened: Vec<rtp::Opened> = self
            .datagrams()
            .iter()
            .filter_map(|d| rtp::open(d, &SECRET_KEY))
            .filter(|o| o.ssrc == SSRC)
            .collect();
        opened.sort_by_key(|o| o.seq);
        let frames: Vec<Vec<u8>> = opened.into_iter().map(|o| o.payload).collect();
        rtp::decode(&frames)
    }

    /// A person (`user`, stream `ssrc`) speaks: Speaking on the voice gateway, then
    /// `samples` (48 kHz stereo interleaved) as sealed Opus RTP to the bot's UDP
    /// address, one packet every 20 ms in real time.
    pub async fn speak(&self, user: u64, ssrc: u32, samples: &[i16]) {
        let speaking = json!({"op": 5, "d": {
            "user_id": user.to_string(), "ssrc": ssrc, "speaking": 1, "delay": 0
        }});
        let pushed = lock(&self.shared.push)
            .as_ref()
            .is_some_and(|tx| tx.send(speaking).is_ok());
        assert!(pushed, "no live voice gateway connection to speak on");
        let (_, bot) = *self
            .discoveries()
            .last()
            .expect("the bot's UDP address (IP discovery)");
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        for (i, frame) in rtp::encode(samples).iter().enumerate() {
            tick.tick().await;
            let n = i as u32;
            let packet = rtp::seal(ssrc, n as u16, n * rtp::FRAME as u32, n, frame, &SECRET_KEY);
            let _ = self.shared.socket.send_to(&packet, bot).await;
        }
    }
}
