//! The voice gateway's wire side: a TLS websocket speaking Discord's voice gateway v4
//! in JSON, as songbird 0.6.1's driver does (`driver/connection/mod.rs`,
//! `driver/tasks/ws.rs`): Hello on connect; Identify (checked) → Ready; Select
//! Protocol → Session Description without DAVE; Heartbeat → Heartbeat ACK with its
//! nonce; Speaking recorded. Every payload the bot sends is recorded in order; a test
//! can push payloads to the bot (a person's Speaking).

use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_websockets::{CloseCode, Message, ServerBuilder};

use super::{lock, Conn, Shared, HEARTBEAT_MS, MODE, SECRET_KEY, SESSION, SSRC, TOKEN};

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
    let hello = json!({"op": 8, "d": {"v": 4, "heartbeat_interval": HEARTBEAT_MS}});
    if ws.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    *lock(&shared.push) = Some(tx);
    loop {
        let msg = tokio::select! {
            pushed = rx.recv() => {
                let Some(v) = pushed else { return };
                if ws.send(Message::text(v.to_string())).await.is_err() {
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
        let Some(text) = msg.as_text() else { continue };
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        if let Some(c) = lock(&shared.conns).get_mut(index) {
            c.received.push(v.clone());
        }
        shared.changed();
        let reply = match v["op"].as_u64() {
            Some(0) => match identify_problem(shared, &v["d"]) {
                Some(why) => {
                    if let Some(c) = lock(&shared.conns).get_mut(index) {
                        c.refused = Some(why.clone());
                    }
                    let code = CloseCode::try_from(4004u16).ok();
                    let _ = ws
                        .send(Message::close(code, "Authentication failed."))
                        .await;
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
                json!({"op": 4, "d": {
                    "mode": mode, "secret_key": SECRET_KEY.to_vec(),
                    "dave_protocol_version": 0, "media_session_id": "fake-media-session"
                }})
            }
            Some(3) => json!({"op": 6, "d": v["d"].clone()}),
            _ => continue,
        };
        if ws.send(Message::text(reply.to_string())).await.is_err() {
            return;
        }
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
