//! The voice server's UDP side: IP discovery as songbird 0.6.1 does it
//! (`driver/connection/mod.rs`, discortp's `IpDiscoveryPacket`): a 74-byte request
//! (type 1, length 70, ssrc, 64 address bytes, port) is answered with type 2 carrying
//! the address and port it came from. Every other datagram (RTP, RTCP) is kept, and
//! the bot's RTP is opened on arrival (transport, then DAVE when it is on: its
//! decryptors are stateful, so each frame is opened once, by every person) into [`BotFrame`]s, each
//! decoded in arrival order to say whether it is audible.

use std::net::SocketAddr;
use std::sync::Arc;

use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio::net::UdpSocket;

use super::{dave, lock, rtp, BotFrame, Shared, AUDIBLE, SECRET_KEY, SSRC};

/// The size of an IP discovery packet.
pub(super) const DISCOVERY_LEN: usize = 74;

pub(super) async fn serve(shared: Arc<Shared>, socket: Arc<UdpSocket>) {
    let mut buf = vec![0u8; 2048];
    let mut decoder =
        opus2::Decoder::new(48_000, opus2::Channels::Stereo).expect("an Opus decoder");
    let mut pcm = vec![0i16; rtp::FRAME * 2 * 6];
    while let Ok((len, from)) = socket.recv_from(&mut buf).await {
        let packet = &buf[..len];
        if len == DISCOVERY_LEN && packet[0..2] == [0, 1] {
            let ssrc = u32::from_be_bytes([packet[4], packet[5], packet[6], packet[7]]);
            lock(&shared.discoveries).push((ssrc, from));
            let _ = socket.send_to(&response(ssrc, from), from).await;
        } else {
            lock(&shared.datagrams).push(packet.to_vec());
            if let Some(opened) = rtp::open(packet, &SECRET_KEY).filter(|o| o.ssrc == SSRC) {
                let at = Instant::now();
                let rtp_seq = opened.seq;
                let (opened, dave_on) = match &shared.dave {
                    Some(d) => {
                        let mut d = lock(d);
                        (d.open(&opened.payload), d.dave_on(at))
                    }
                    None => (
                        dave::Opened {
                            opus: Some(opened.payload.clone()),
                            e2ee: false,
                            failed: false,
                        },
                        false,
                    ),
                };
                if opened.failed {
                    shared.undecryptable.fetch_add(1, Ordering::SeqCst);
                }
                if let Some(opus) = opened.opus {
                    let audible = decoder
                        .decode(&opus, &mut pcm, false)
                        .is_ok_and(|n| rtp::rms(&pcm[..n * 2]) > AUDIBLE);
                    lock(&shared.bot_frames).push(BotFrame {
                        at,
                        seq: rtp_seq,
                        opus,
                        e2ee: opened.e2ee,
                        audible,
                        dave_on,
                    });
                }
            }
        }
        shared.changed();
    }
}

/// The discovery response: type 2, length 70, ssrc, `from`'s address (NUL-padded
/// ASCII) and port (big-endian).
pub(super) fn response(ssrc: u32, from: SocketAddr) -> [u8; DISCOVERY_LEN] {
    let mut out = [0u8; DISCOVERY_LEN];
    out[0..2].copy_from_slice(&2u16.to_be_bytes());
    out[2..4].copy_from_slice(&70u16.to_be_bytes());
    out[4..8].copy_from_slice(&ssrc.to_be_bytes());
    let ip = from.ip().to_string();
    out[8..8 + ip.len()].copy_from_slice(ip.as_bytes());
    out[72..74].copy_from_slice(&from.port().to_be_bytes());
    out
}
