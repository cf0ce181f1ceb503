//! The voice gateway's wire side: a TLS websocket speaking Discord's voice gateway v4
//! in JSON, as songbird 0.6.1's driver does (`driver/connection/mod.rs`,
//! `driver/tasks/ws.rs`): Hello on connect; Identify (checked) → Ready; Select
//! Protocol → Session Description; Heartbeat → Heartbeat ACK with its
//! nonce; Speaking recorded; Resume → Resumed. With DAVE on, Session Description says
//! protocol version 1 and binary frames go to the delivery service (`dave.rs`);
//! Transition Ready → Execute Transition. Every payload the bot sends is recorded in
//! order (binary ones as `{"op", "binary_len"}`); a test can push payloads to the bot
//! (a person's Speaking) or close the socket with a code; a silent server never
//! answers.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_websockets::{CloseCode, Message, ServerBuilder};

use super::{lock, Conn, Out, Shared, HEARTBEAT_MS, MODE, SECRET_KEY, SESSION, SSRC, TOKEN};

/// A TLS acceptor with the fixture leaf for 127.0.0.1 and localhost.
pub fn acceptor() -> TlsAcceptor {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/voice-tls");
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

pub async fn serve(shared: Arc<Shared>, listener: TcpListener, tls: TlsAcceptor) {
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
            let index = {
                let mut conns = lock(&shared.conns);
                conns.push(Conn {
                    path,
                    ..Conn::default()
                });
                conns.len() - 1
            };
            shared.changed();
            connection(&shared, index, ws).await;
            if let Some(c) = lock(&shared.conns).get_mut(index) {
                c.closed = true;
            }
            shared.changed();
        });
    }
}

async fn connection<S>(shared: &Shared, index: usize, mut ws: tokio_websockets::WebSocketStream<S>)
where
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
                let close = matches!(out, Out::Close(_));
                if send(&mut ws, out).await.is_err() || close {
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
                if send(&mut ws, out).await.is_err() {
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
        let reply = match v["op"].as_u64() {
            Some(0) => match identify_problem(shared, &v["d"]) {
                Some(why) => {
                    if let Some(c) = lock(&shared.conns).get_mut(index) {
                        c.refused = Some(why.clone());
                    }
                    let _ = send(&mut ws, Out::Close(4004)).await;
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
            Some(3) => json!({"op": 6, "d": v["d"].clone()}),
            // Resume (after a close it may resume from, e.g. 4015): Resumed.
            Some(7) => json!({"op": 9, "d": null}),
            // DAVE Transition Ready → Execute Transition.
            Some(23) => json!({"op": 22, "d": {"transition_id": v["d"]["transition_id"]}}),
            _ => continue,
        };
        if ws.send(Message::text(reply.to_string())).await.is_err() {
            return;
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

async fn send<S>(ws: &mut tokio_websockets::WebSocketStream<S>, out: Out) -> Result<(), ()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let msg = match out {
        Out::Text(v) => Message::text(v.to_string()),
        Out::Binary(b) => Message::binary(b),
        Out::Close(code) => {
            let code = CloseCode::try_from(code).ok();
            Message::close(code, "closed by the loopback voice server")
        }
    };
    ws.send(msg).await.map_err(|_| ())
}

/// What the delivery service sends back for the bot's binary frame (none without
/// DAVE): its key package (26) → Clients Connect, external sender, Add proposals; its
/// commit and welcome (28) → the commit announced (29).
fn dave_answer(shared: &Shared, index: usize, frame: &[u8]) -> Vec<Out> {
    let Some(delivery) = &shared.dave else {
        return Vec::new();
    };
    let mut delivery = lock(delivery);
    match frame.first() {
        Some(26) => {
            let people: Vec<String> = delivery.people().iter().map(u64::to_string).collect();
            vec![
                Out::Text(json!({"op": 11, "d": {"user_ids": people}})),
                Out::Binary(delivery.external_sender_frame()),
                Out::Binary(delivery.proposals_frame()),
            ]
        }
        Some(28) => match delivery.commit_welcome(frame) {
            Ok(announce) => vec![Out::Binary(announce)],
            Err(why) => {
                if let Some(c) = lock(&shared.conns).get_mut(index) {
                    c.refused = Some(why);
                }
                Vec::new()
            }
        },
        _ => Vec::new(),
    }
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
