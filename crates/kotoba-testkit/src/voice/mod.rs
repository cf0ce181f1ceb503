//! The loopback Discord voice server: the voice gateway (v4, JSON over a TLS websocket:
//! Hello, Identify → Ready, Select Protocol → Session Description, heartbeat ACKs,
//! Speaking) and the UDP side (IP discovery), speaking what songbird 0.6.1's driver
//! speaks, so the bot's real voice connection comes up against it. TLS uses the test
//! CA under `crates/kotoba-testkit/fixtures/voice-tls/` (trusted only by a child process given
//! SSL_CERT_FILE; see docs/voice.md, Testing). A test reads back what the bot sent.
//! With DAVE on ([`FakeVoice::start_with_dave`], [`FakeVoice::start_with_dave_group`])
//! it is also the MLS external sender and delivery service and runs the group's whole
//! life (`dave.rs`); the people it plays are DAVE members (`people.rs`), and a test
//! brings people in and out (or withdraws their proposals), resets the epoch,
//! downgrades and upgrades, or sends a commit the bot cannot process. Each person's
//! media may take a path slower than the gateway ([`FakeVoice::set_media_delay`]), and
//! what they sent is kept, so a test can tell whether she heard every frame of it
//! (`hearing.rs`).

pub mod dave;
mod gateway;
pub mod hearing;
pub mod people;
pub mod rig;
pub mod rtp;
mod udp;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, Notify};

use crate::discord::lock;

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
/// The RMS over which a 20 ms frame counts as audible (voiced).
pub const AUDIBLE: f64 = 100.0;
/// The 32-byte key in Session Description.
pub const SECRET_KEY: [u8; 32] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
    27, 28, 29, 30, 31, 32,
];

/// The test CA a child process is told to trust (SSL_CERT_FILE).
pub fn ca_file() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/voice-tls/ca.pem").to_string()
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
    /// The request path and query of the websocket upgrade (`/?v=8`).
    pub path: String,
    /// The gateway version it asked for (0 when none).
    pub version: u64,
    /// Every JSON payload the bot sent, in order.
    pub received: Vec<Value>,
    /// Why Identify was refused (the socket was then closed with 4004), if it was.
    pub refused: Option<String>,
    /// Whether the socket is closed (by either side).
    pub closed: bool,
}

/// Something the voice server sends the bot on the live gateway connection.
#[derive(Clone, Debug)]
pub enum Out {
    /// A JSON payload.
    Text(Value),
    /// A binary (DAVE) frame.
    Binary(Vec<u8>),
    /// Close the socket with this code.
    Close(u16),
    /// A message numbered and kept for re-delivery but never sent, as if the socket
    /// dropped it (version 8).
    Lost(Box<Out>),
}

/// One audio frame the bot sent, as the voice server opened it.
#[derive(Clone, Debug)]
pub struct BotFrame {
    /// When the datagram arrived.
    pub at: Instant,
    /// Its RTP sequence number.
    pub seq: u16,
    /// The Opus frame (after DAVE decryption when it was end-to-end encrypted).
    pub opus: Vec<u8>,
    /// Whether it was DAVE-encrypted (and opened with a person's session).
    pub e2ee: bool,
    /// Whether it decoded (in arrival order, one decoder) to sound over [`AUDIBLE`].
    pub audible: bool,
    /// Whether DAVE was on for her media when it arrived (version 1, not just after a
    /// transition changed the version).
    pub dave_on: bool,
}

impl BotFrame {
    /// Whether this is Opus's 3-byte silence frame.
    pub fn is_silence(&self) -> bool {
        self.opus == [0xF8, 0xFF, 0xFE]
    }

    /// Whether this is voice sent in the clear while DAVE was on (never allowed).
    pub fn plain_voice(&self) -> bool {
        self.dave_on && !self.e2ee && !self.is_silence()
    }
}

pub(crate) struct Shared {
    pub expect: Expect,
    pub udp_addr: SocketAddr,
    pub socket: Arc<UdpSocket>,
    /// Sends to the bot on the live voice gateway connection.
    pub push: Mutex<Option<mpsc::UnboundedSender<Out>>>,
    /// DAVE's delivery service and the people's sessions, when DAVE is on.
    pub dave: Option<Mutex<dave::Delivery>>,
    /// The bot's audio frames, opened, in arrival order.
    pub bot_frames: Mutex<Vec<BotFrame>>,
    /// Frames from the bot that carried DAVE's marker but no session could open.
    pub undecryptable: AtomicUsize,
    /// When set, new gateway connections get no Hello and no answers at all.
    pub silent: AtomicBool,
    /// The next RTP sequence number of each person's stream.
    pub streams: Mutex<std::collections::HashMap<u32, u32>>,
    /// How much later than sent each person's packets reach the bot.
    pub media_delay: Mutex<std::collections::HashMap<u64, Duration>>,
    /// The transport nonce counter of what people send.
    pub nonce: AtomicUsize,
    /// Every packet a person sent.
    pub person_packets: Mutex<Vec<PersonPacket>>,
    pub conns: Mutex<Vec<Conn>>,
    /// The last sequence number given (version 8), for the whole voice session.
    pub seq: AtomicUsize,
    /// Every numbered message sent, for re-delivery on Resume.
    pub outbox: Mutex<Vec<(u16, tokio_websockets::Message)>>,
    /// Every IP discovery request: (ssrc in it, the address it came from).
    pub discoveries: Mutex<Vec<(u32, SocketAddr)>>,
    /// Every other UDP datagram (RTP/RTCP from the bot).
    pub datagrams: Mutex<Vec<Vec<u8>>>,
    pub notify: Notify,
}

impl Shared {
    pub(crate) fn changed(&self) {
        self.notify.notify_waiters();
    }

    /// The next sequence number (from 1).
    pub(crate) fn next_seq(&self) -> u16 {
        (self.seq.fetch_add(1, Ordering::SeqCst) + 1) as u16
    }

    /// Send `out` on the live connection (false when there is none).
    pub(crate) fn push_out(&self, out: Out) -> bool {
        lock(&self.push)
            .as_ref()
            .is_some_and(|tx| tx.send(out).is_ok())
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
    /// Bind the TLS websocket and the UDP socket on 127.0.0.1 (transport encryption
    /// only: Session Description says DAVE protocol version 0).
    pub async fn start(expect: Expect) -> FakeVoice {
        FakeVoice::start_inner(expect, None).await
    }

    /// Like [`FakeVoice::start`], with DAVE v1 on for voice channel `channel`: the
    /// server is the external sender, and `people` (who will speak) join the bot's MLS
    /// group as soon as it sends its key package.
    pub async fn start_with_dave(expect: Expect, channel: u64, people: &[u64]) -> FakeVoice {
        let delivery = dave::Delivery::new(channel, expect.user_id, people);
        FakeVoice::start_inner(expect, Some(delivery)).await
    }

    /// Like [`FakeVoice::start_with_dave`], with `people` already in a DAVE group of
    /// their own when the bot comes: a person commits her in and she is welcomed (30).
    pub async fn start_with_dave_group(expect: Expect, channel: u64, people: &[u64]) -> FakeVoice {
        let delivery = dave::Delivery::with_group(channel, expect.user_id, people);
        FakeVoice::start_inner(expect, Some(delivery)).await
    }

    async fn start_inner(expect: Expect, dave: Option<dave::Delivery>) -> FakeVoice {
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
            dave: dave.map(Mutex::new),
            bot_frames: Mutex::new(Vec::new()),
            undecryptable: AtomicUsize::new(0),
            silent: AtomicBool::new(false),
            streams: Mutex::new(std::collections::HashMap::new()),
            media_delay: Mutex::new(std::collections::HashMap::new()),
            nonce: AtomicUsize::new(0),
            person_packets: Mutex::new(Vec::new()),
            conns: Mutex::new(Vec::new()),
            seq: AtomicUsize::new(0),
            outbox: Mutex::new(Vec::new()),
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

    /// The opcodes of the binary (DAVE) messages she sent, in order.
    pub fn binary_ops(&self) -> Vec<u64> {
        self.conns()
            .iter()
            .flat_map(|c| c.received.iter())
            .filter(|v| v.get("binary_len").is_some())
            .filter_map(|v| v["op"].as_u64())
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

    /// The bot's audio frames as they arrived (opened, DAVE-decrypted when on).
    pub fn bot_frames(&self) -> Vec<BotFrame> {
        lock(&self.shared.bot_frames).clone()
    }

    /// What the bot sent as audio: its RTP (SSRC [`SSRC`]) opened and decoded, in
    /// sequence order, as 48 kHz stereo interleaved samples.
    pub fn bot_audio(&self) -> Vec<i16> {
        let mut frames = self.bot_frames();
        frames.sort_by_key(|f| f.seq);
        let frames: Vec<Vec<u8>> = frames.into_iter().map(|f| f.opus).collect();
        rtp::decode(&frames)
    }

    /// When each of the bot's audible frames arrived (decoded in arrival order, a
    /// frame is audible when its RMS is over [`AUDIBLE`]), oldest first.
    pub fn bot_audible(&self) -> Vec<Instant> {
        lock(&self.shared.bot_frames)
            .iter()
            .filter(|f| f.audible)
            .map(|f| f.at)
            .collect()
    }

    /// How many of the bot's frames carried DAVE's marker but could not be opened.
    pub fn undecryptable(&self) -> usize {
        self.shared.undecryptable.load(Ordering::SeqCst)
    }

    /// Whether DAVE is up: the present people and the bot are in one group, its
    /// transition executed, and no change is in flight.
    pub fn dave_ready(&self) -> bool {
        self.dave(|d| d.ready())
    }

    /// Read the delivery service (panics without DAVE).
    pub fn dave<T>(&self, read: impl FnOnce(&dave::Delivery) -> T) -> T {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        read(&lock(d))
    }

    /// Put `change` through the group (after any in flight).
    pub fn dave_change(&self, change: dave::Change) {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        let outs = lock(d).change(change);
        for out in outs {
            self.push(out);
        }
        self.shared.changed();
    }

    /// Put `change` through the group with every message it sends her lost on the
    /// wire, then close the socket with 4015: only a resume that names the last message
    /// she received (`seq_ack`) gets them re-delivered.
    pub fn dave_change_lost_then_close(&self, change: dave::Change) {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        let outs = lock(d).change(change);
        for out in outs {
            self.push(Out::Lost(Box::new(out)));
        }
        self.push(Out::Close(4015));
        self.shared.changed();
    }

    /// How long after her Transition Ready each transition executes (default 300 ms).
    pub fn set_execute_delay(&self, delay: Duration) {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        lock(d).execute_delay = delay;
    }

    /// How long after the people execute a transition its op 22 reaches her (default
    /// none): their frames under the new keys reach her before her execute.
    pub fn set_execute_lag(&self, lag: Duration) {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        lock(d).execute_lag = lag;
    }

    /// When the people take a transition's keys: everyone in the call now, and whoever
    /// comes later.
    pub fn set_people_kind(&self, kind: dave::Kind) {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        lock(d).set_kind(kind);
    }

    /// Person `user`'s packets reach her `delay` after they are sent (a slower media
    /// path than the gateway's): frames sent under the old keys just before a
    /// transition executes reach her after her execute.
    pub fn set_media_delay(&self, user: u64, delay: Duration) {
        lock(&self.shared.media_delay).insert(user, delay);
    }

    /// Whether a person commits each change even though she is in the group.
    pub fn set_people_commit(&self, on: bool) {
        let d = self.shared.dave.as_ref().expect("DAVE is on");
        lock(d).people_commit = on;
    }

    /// What went wrong in the group on the server's or a person's side.
    pub fn dave_problems(&self) -> Vec<String> {
        self.dave(|d| {
            let mut all = d.problems.clone();
            for p in d.people() {
                all.extend(p.problems.iter().map(|why| format!("{}: {why}", p.id)));
            }
            all
        })
    }

    /// The sequence numbers her heartbeats acknowledged, in order (version 8).
    pub fn seq_acks(&self) -> Vec<i64> {
        self.heartbeats()
            .iter()
            .filter_map(|h| h["d"]["seq_ack"].as_i64())
            .collect()
    }

    /// The last sequence number the server gave.
    pub fn last_seq(&self) -> u16 {
        self.shared.seq.load(Ordering::SeqCst) as u16
    }

    /// Close the live voice gateway connection with `code` (4015: the server crashed,
    /// resume; 4014: disconnected, do not).
    pub fn close(&self, code: u16) {
        self.push(Out::Close(code));
    }

    /// From now on, new voice gateway connections are accepted but never answered.
    pub fn go_silent(&self) {
        self.shared.silent.store(true, Ordering::SeqCst);
    }

    fn push(&self, out: Out) {
        assert!(
            self.shared.push_out(out),
            "no live voice gateway connection"
        );
    }

    /// The packets people sent so far, in order.
    pub fn person_packets(&self) -> Vec<PersonPacket> {
        lock(&self.shared.person_packets).clone()
    }

    /// A person (`user`, stream `ssrc`) speaks: Speaking on the voice gateway, then
    /// `samples` (48 kHz stereo interleaved) as sealed Opus RTP to the bot's UDP
    /// address, one packet every 20 ms in real time (DAVE-encrypted by the person's
    /// session once DAVE is up), each reaching her after the person's media delay.
    /// Sequence numbers and timestamps go on from the stream's last packet, as a real
    /// client's do between utterances. Returns once the last packet is delivered.
    pub async fn speak(&self, user: u64, ssrc: u32, samples: &[i16]) {
        let speaking = json!({"op": 5, "d": {
            "user_id": user.to_string(), "ssrc": ssrc, "speaking": 1, "delay": 0
        }});
        self.push(Out::Text(speaking));
        let (_, bot) = *self
            .discoveries()
            .last()
            .expect("the bot's UDP address (IP discovery)");
        let delay = lock(&self.shared.media_delay)
            .get(&user)
            .copied()
            .unwrap_or_default();
        let (line, delivery) = delay_line(self.shared.socket.clone(), bot, delay);
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        // A stall here (the people's MLS work at a transition, on busy cores) delays what
        // follows instead of bursting it: a person's client paces its packets.
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let chunks: Vec<&[i16]> = samples.chunks(rtp::FRAME * 2).collect();
        for (opus, chunk) in rtp::encode(samples).iter().zip(chunks) {
            tick.tick().await;
            let n = {
                let mut streams = lock(&self.shared.streams);
                let n = streams.entry(ssrc).or_insert(0);
                *n += 1;
                *n - 1
            };
            let counter = self.shared.nonce.fetch_add(1, Ordering::SeqCst) as u32;
            let (frame, e2ee) = match &self.shared.dave {
                Some(d) => {
                    let sealed = lock(d).seal(user, opus);
                    let e2ee = sealed != *opus;
                    (sealed, e2ee)
                }
                None => (opus.clone(), false),
            };
            let packet = rtp::seal(
                ssrc,
                n as u16,
                n.wrapping_mul(rtp::FRAME as u32),
                counter,
                &frame,
                &SECRET_KEY,
            );
            lock(&self.shared.person_packets).push(PersonPacket {
                at: Instant::now(),
                user,
                ssrc,
                seq: n as u16,
                rms: rtp::rms(chunk),
                e2ee,
                opus: opus.clone(),
            });
            let _ = line.send((Instant::now() + delay, packet));
        }
        drop(line);
        let _ = delivery.await;
    }
}

/// Packets to send to `to` on `socket`, each at its time (in order): the sender, and
/// the task that delivers them (it ends when the sender is dropped and all are sent).
fn delay_line(
    socket: Arc<UdpSocket>,
    to: SocketAddr,
    delay: Duration,
) -> (
    mpsc::UnboundedSender<(Instant, Vec<u8>)>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let task = tokio::spawn(async move {
        while let Some((at, packet)) = rx.recv().await {
            if !delay.is_zero() {
                tokio::time::sleep_until(at.into()).await;
            }
            let _ = socket.send_to(&packet, to).await;
        }
    });
    (tx, task)
}

/// One packet a fake person sent.
#[derive(Clone, Debug)]
pub struct PersonPacket {
    /// When it was sent.
    pub at: Instant,
    /// Who sent it, and on which stream.
    pub user: u64,
    /// See [`PersonPacket::user`].
    pub ssrc: u32,
    /// Its RTP sequence number.
    pub seq: u16,
    /// The loudness of the samples in it (0 for silence).
    pub rms: f64,
    /// Whether it went DAVE-encrypted.
    pub e2ee: bool,
    /// The Opus frame in it (before DAVE).
    pub opus: Vec<u8>,
}
