//! The voice gateway's wire side: a TLS websocket speaking Discord's voice gateway in
//! the version the client asks for (`?v=N`): Hello on connect; Identify (checked) →
//! Ready; Select Protocol → Session Description; Heartbeat → Heartbeat ACK with its
//! nonce; Speaking recorded; Resume → Resumed. From version 8, as Discord's document
//! describes, every server message but Hello and Heartbeat ACK carries a sequence
//! number — a JSON payload's `seq`, the first two bytes (big-endian) of a binary one,
//! `[seq][opcode][payload]` — heartbeats acknowledge it (`d: {t, seq_ack}`, answered
//! `d: {t}`), and a Resume re-delivers every message after its `seq_ack`. Below 8 there
//! are no sequence numbers and binary messages are `[opcode][payload]`.
//!
//! With DAVE on, Session Description says protocol version 1 and the delivery service
//! (`dave.rs`) runs the group: the bot's key package (26) and commit (28), its
//! Transition Ready (23, executed as 22 after the delivery's delay) and Invalid
//! Commit/Welcome (31). Every payload the bot sends is recorded in order (binary ones
//! as `{"op", "binary_len"}`); a test can push payloads to the bot or close the socket
//! with a code; a silent server never answers.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_websockets::{CloseCode, Message, ServerBuilder};

use super::{lock, Conn, Out, Shared, HEARTBEAT_MS, MODE, SECRET_KEY, SESSION, SSRC, TOKEN};

/// The version a websocket path asks for (`/?v=8`), 0 when it names none.
fn version_of(path: &str) -> u64 {
    path.split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("v="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A TLS acceptor with the fixture leaf for 127.0.0.1 and localhost.
pub(super) fn acceptor() -> TlsAcceptor {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/voice-tls");
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(format!("{dir}/leaf.pem"))
            .expect("the leaf certificate")
            .collect::<Result<_, _>>()
            .expect("a PEM certificate");
    let key = PrivateKeyDer::from_pem_file(format!("{dir}/leaf.key")).expect("the leaf key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("the leaf pair");
    TlsAcceptor::from(Arc::new(config))
}

pub(super) async fn serve(shared: Arc<Shared>, listener: TcpListener, tls: TlsAcceptor) {
    while let Ok((tcp, _)) = listener.accept().await {
        let _ = tcp.set_nodelay(true);
        let shared = shared.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let Ok(stream) = tls.accept(tcp).await else {
                return;
            };
            let Ok((request, ws)) = ServerBuilder::new().accept(stream).await else {
                return;
            };
            let path = request
                .uri()
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default();
            let version = version_of(&path);
            let index = {
                let mut conns = lock(&shared.conns);
                conns.push(Conn {
                    path,
                    version,
                    ..Conn::default()
                });
                conns.len() - 1
            };
            shared.changed();
            connection(&shared, index, version, ws).await;
            if let Some(c) = lock(&shared.conns).get_mut(index) {
                c.closed = true;
            }
            shared.changed();
        });
    }
}

async fn connection<S>(
    shared: &Arc<Shared>,
    index: usize,
    version: u64,
    mut ws: tokio_websockets::WebSocketStream<S>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    if shared.silent.load(Ordering::SeqCst) {
        // Accepted, never answered: hold the socket until the bot gives up.
        while let Some(Ok(_)) = ws.next().await {}
        return;
    }
    let hello = json!({"op": 8, "d": {"v": 4, "heartbeat_interval": HEARTBEAT_MS}});
    if ws.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    *lock(&shared.push) = Some(tx);
    loop {
        let msg = tokio::select! {
            pushed = rx.recv() => {
                let Some(out) = pushed else { return };
                if matches!(out, Out::Lost(_)) {
                    let _ = message(shared, version, out);
                    continue;
                }
                let close = matches!(out, Out::Close(_));
                if send(shared, version, &mut ws, out).await.is_err() || close {
                    return;
                }
                continue;
            }
            msg = ws.next() => msg,
        };
        let Some(Ok(msg)) = msg else { return };
        if msg.is_close() {
            return;
        }
        if msg.is_binary() {
            let frame = msg.into_payload().to_vec();
            record(
                shared,
                index,
                json!({"op": frame.first(), "binary_len": frame.len()}),
            );
            for out in dave_answer(shared, index, &frame) {
                if send(shared, version, &mut ws, out).await.is_err() {
                    return;
                }
            }
            continue;
        }
        let Some(text) = msg.as_text() else { continue };
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        record(shared, index, v.clone());
        let mut after = Vec::new();
        let reply = match v["op"].as_u64() {
            Some(0) => match identify_problem(shared, &v["d"]) {
                Some(why) => {
                    if let Some(c) = lock(&shared.conns).get_mut(index) {
                        c.refused = Some(why.clone());
                    }
                    let _ = send(shared, version, &mut ws, Out::Close(4004)).await;
                    return;
                }
                None => json!({"op": 2, "d": {
                    "ssrc": SSRC, "ip": shared.udp_addr.ip().to_string(),
                    "port": shared.udp_addr.port(),
                    "modes": [MODE, "aead_xchacha20_poly1305_rtpsize"], "experiments": []
                }}),
            },
            Some(1) => {
                let mode = v["d"]["data"]["mode"].as_str().unwrap_or_default();
                let dave = u16::from(shared.dave.is_some());
                json!({"op": 4, "d": {
                    "mode": mode, "secret_key": SECRET_KEY.to_vec(),
                    "dave_protocol_version": dave, "media_session_id": "fake-media-session"
                }})
            }
            Some(3) if version >= 8 => json!({"op": 6, "d": {"t": v["d"]["t"].clone()}}),
            Some(3) => json!({"op": 6, "d": v["d"].clone()}),
            // Resume (after a close it may resume from, e.g. 4015): Resumed, then (from
            // version 8) every message after the one it acknowledges, re-delivered.
            Some(7) => {
                if version >= 8 {
                    let acked = v["d"]["seq_ack"].as_i64().unwrap_or(-1);
                    after = lock(&shared.outbox)
                        .iter()
                        .filter(|(seq, _)| i64::from(*seq) > acked)
                        .map(|(_, raw)| raw.clone())
                        .collect();
                }
                json!({"op": 9, "d": null})
            }
            // DAVE Transition Ready: executed after the delivery's delay.
            Some(23) => {
                let id = v["d"]["transition_id"].as_u64().unwrap_or(0) as u16;
                schedule_execute(shared, id);
                continue;
            }
            // DAVE Invalid Commit/Welcome.
            Some(31) => {
                let id = v["d"]["transition_id"].as_u64().unwrap_or(0) as u16;
                if let Some(d) = &shared.dave {
                    lock(d).bot_invalid(id);
                }
                continue;
            }
            _ => continue,
        };
        if send(shared, version, &mut ws, Out::Text(reply))
            .await
            .is_err()
        {
            return;
        }
        for raw in after {
            if ws.send(raw).await.is_err() {
                return;
            }
        }
    }
}

/// Keep payload `v` the bot sent on connection `index`.
fn record(shared: &Shared, index: usize, v: Value) {
    if let Some(c) = lock(&shared.conns).get_mut(index) {
        c.received.push(v);
    }
    shared.changed();
}

/// Send `out` on a connection of `version` (see [`message`]).
async fn send<S>(
    shared: &Shared,
    version: u64,
    ws: &mut tokio_websockets::WebSocketStream<S>,
    out: Out,
) -> Result<(), ()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let msg = message(shared, version, out);
    ws.send(msg).await.map_err(|_| ())
}

/// `out` as a websocket message on a connection of `version`: from 8, with the next
/// sequence number (kept for re-delivery), except Hello and Heartbeat ACK.
fn message(shared: &Shared, version: u64, out: Out) -> Message {
    let numbered = version >= 8;
    match out {
        Out::Text(mut v) => {
            let unnumbered = matches!(v["op"].as_u64(), Some(8) | Some(6));
            if numbered && !unnumbered {
                let seq = shared.next_seq();
                v["seq"] = seq.into();
                let msg = Message::text(v.to_string());
                lock(&shared.outbox).push((seq, msg.clone()));
                msg
            } else {
                Message::text(v.to_string())
            }
        }
        Out::Binary(b) => {
            if numbered {
                let seq = shared.next_seq();
                let mut framed = seq.to_be_bytes().to_vec();
                framed.extend(b);
                let msg = Message::binary(framed);
                lock(&shared.outbox).push((seq, msg.clone()));
                msg
            } else {
                Message::binary(b)
            }
        }
        // Numbered and kept, never sent: as if the socket dropped it.
        Out::Lost(inner) => message(shared, version, *inner),
        Out::Close(code) => {
            let code = CloseCode::try_from(code).ok();
            Message::close(code, "closed by the loopback voice server")
        }
    }
}

/// Execute DAVE transition `id` after the delivery's delay, on the live connection.
fn schedule_execute(shared: &Arc<Shared>, id: u16) {
    let Some(delivery) = &shared.dave else {
        return;
    };
    let delay = {
        let mut d = lock(delivery);
        if !d.bot_ready(id) {
            return;
        }
        d.execute_delay
    };
    let shared = shared.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let (outs, lag) = match &shared.dave {
            Some(d) => {
                let mut d = lock(d);
                (d.execute(id), d.execute_lag)
            }
            None => (Vec::new(), Duration::ZERO),
        };
        // The people executed; her op 22 (and what follows it) comes `lag` later.
        if !lag.is_zero() {
            tokio::time::sleep(lag).await;
        }
        for out in outs {
            shared.push_out(out);
        }
        shared.changed();
    });
}

/// What the delivery service sends back for the bot's binary frame (none without
/// DAVE): its key package (26) → the group's next step; its commit (28) → announced.
fn dave_answer(shared: &Shared, index: usize, frame: &[u8]) -> Vec<Out> {
    let Some(delivery) = &shared.dave else {
        return Vec::new();
    };
    let mut delivery = lock(delivery);
    let outs = match frame.first() {
        Some(26) => delivery.bot_key_package(frame[1..].to_vec()),
        Some(28) => delivery.bot_commit(frame),
        _ => Vec::new(),
    };
    if let Some(why) = delivery.problems.last() {
        if let Some(c) = lock(&shared.conns).get_mut(index) {
            c.refused = Some(why.clone());
        }
    }
    outs
}

/// What is wrong with Identify `d`, if anything (ids may be strings or numbers).
fn identify_problem(shared: &Shared, d: &Value) -> Option<String> {
    let id = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let e = &shared.expect;
    if id(&d["server_id"]) != e.server_id.to_string() {
        return Some(format!(
            "server_id {} is not {}",
            d["server_id"], e.server_id
        ));
    }
    if id(&d["user_id"]) != e.user_id.to_string() {
        return Some(format!("user_id {} is not {}", d["user_id"], e.user_id));
    }
    if d["session_id"] != SESSION {
        return Some(format!("session_id {} is not {SESSION}", d["session_id"]));
    }
    if d["token"] != TOKEN {
        return Some(format!("token {} is not {TOKEN}", d["token"]));
    }
    None
}
