use super::message::*;
use crate::{
    driver::tasks::error::DaveReinitError,
    events::CoreContext,
    model::{
        payload::Speaking,
        CloseCode as VoiceCloseCode,
        Event as GatewayEvent,
        FromPrimitive,
        SpeakingState,
    },
    ws::{Error as WsError, WsStream},
    ConnectionInfo,
};
use flume::Receiver;
use rand::{distr::Uniform, Rng};
use serenity_voice_model::{
    id::UserId,
    payload::{
        DaveMlsCommitWelcome,
        DaveMlsInvalidCommitWelcome,
        DaveMlsKeyPackage,
        DaveMlsProposalsOperationType,
        DaveTransitionReady,
    },
};
use std::{
    collections::{HashMap, HashSet},
    num::NonZeroU16,
    sync::{
        atomic::{AtomicU16, Ordering},
        Arc,
        RwLock,
    },
    time::Duration,
};
use tokio::{
    select,
    time::{sleep_until, Instant},
};
#[cfg(feature = "tungstenite")]
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tracing::{debug, info, instrument, trace, warn};

pub(crate) struct AuxNetwork {
    rx: Receiver<WsMessage>,
    ws_client: WsStream,
    dont_send: bool,

    ssrc: u32,
    heartbeat_interval: Duration,

    speaking: SpeakingState,
    last_heartbeat_nonce: Option<u64>,

    attempt_idx: usize,
    info: ConnectionInfo,

    dave_session: Arc<RwLock<Option<davey::DaveSession>>>,
    dave_protocol_version: Arc<AtomicU16>,
    dave_pending_transitions: HashMap<u16, u16>,
    /// The protocol version the next group is for (kotoba patch: media's version,
    /// `dave_protocol_version`, changes only when a transition executes).
    dave_next_version: u16,
    recognized_user_ids: HashSet<UserId>,

    #[cfg(feature = "receive")]
    ssrc_signalling: Arc<SsrcTracker>,
}

impl AuxNetwork {
    pub(crate) fn new(
        evt_rx: Receiver<WsMessage>,
        ws_client: WsStream,
        ssrc: u32,
        heartbeat_interval: f64,
        attempt_idx: usize,
        info: ConnectionInfo,
        dave_session: Arc<RwLock<Option<davey::DaveSession>>>,
        dave_protocol_version: Arc<AtomicU16>,
        #[cfg(feature = "receive")] ssrc_signalling: Arc<SsrcTracker>,
    ) -> Self {
        let dave_next_version = dave_protocol_version.load(Ordering::Relaxed);
        let mut recognized_user_ids = HashSet::new();

        recognized_user_ids.insert(info.user_id.into());

        Self {
            rx: evt_rx,
            ws_client,
            dont_send: false,

            ssrc,
            heartbeat_interval: Duration::from_secs_f64(heartbeat_interval / 1000.0),

            speaking: SpeakingState::empty(),
            last_heartbeat_nonce: None,

            attempt_idx,
            info,

            dave_session,
            dave_protocol_version,
            dave_pending_transitions: HashMap::new(),
            dave_next_version,
            recognized_user_ids,

            #[cfg(feature = "receive")]
            ssrc_signalling,
        }
    }

    #[instrument(skip(self))]
    async fn run(&mut self, interconnect: &mut Interconnect) {
        let mut next_heartbeat = Instant::now() + self.heartbeat_interval;

        loop {
            let mut ws_error = false;
            let mut should_reconnect = false;
            let mut ws_reason = None;

            let hb = sleep_until(next_heartbeat);

            select! {
                // Biased polling (polling from top to bottom) is needed to process WebSocket events
                // queued in the initial handshake (messages before SessionDescription). One of the
                // events queued is ClientsConnect, which is needed to correctly keep track of
                // recognized_user_ids and to correctly process DaveMlsProposals.
                biased;

                () = hb => {
                    ws_error = match self.send_heartbeat().await {
                        Err(e) => {
                            should_reconnect = ws_error_is_not_final(&e);
                            ws_reason = Some((&e).into());
                            true
                        },
                        _ => false,
                    };
                    next_heartbeat = self.next_heartbeat();
                }
                inner_msg = self.rx.recv_async() => {
                    match inner_msg {
                        Ok(WsMessage::Ws(data)) => {
                            self.ws_client = *data;
                            next_heartbeat = self.next_heartbeat();
                            self.dont_send = false;
                        },
                        Ok(WsMessage::ReplaceInterconnect(i)) => {
                            *interconnect = i;
                        },
                        Ok(WsMessage::SetKeepalive(keepalive)) => {
                            self.heartbeat_interval = Duration::from_secs_f64(keepalive / 1000.0);
                            next_heartbeat = self.next_heartbeat();
                        },
                        Ok(WsMessage::Speaking(is_speaking)) => {
                            if self.speaking.contains(SpeakingState::MICROPHONE) != is_speaking && !self.dont_send {
                                self.speaking.set(SpeakingState::MICROPHONE, is_speaking);
                                info!("Changing to {:?}", self.speaking);

                                let ssu_status = self.ws_client
                                    .send_json(&GatewayEvent::from(Speaking {
                                        delay: Some(0),
                                        speaking: self.speaking,
                                        ssrc: self.ssrc,
                                        user_id: None,
                                    }))
                                    .await;

                                ws_error |= match ssu_status {
                                    Err(e) => {
                                        should_reconnect = ws_error_is_not_final(&e);
                                        ws_reason = Some((&e).into());
                                        true
                                    },
                                    _ => false,
                                }
                            }
                        },
                        Ok(WsMessage::Deliver(msg)) => {
                            ws_error |= match self.process_ws(interconnect, msg).await {
                                Err(e) => {
                                    should_reconnect = ws_error_is_not_final(&e);
                                    ws_reason = Some((&e).into());
                                    true
                                }
                                _ => false,
                            }
                        },
                        Err(flume::RecvError::Disconnected) => {
                            break;
                        },
                    }
                }
                ws_msg = self.ws_client.recv_event_no_timeout(), if !self.dont_send => {
                    ws_error = match ws_msg {
                        Err(e) => {
                            should_reconnect = ws_error_is_not_final(&e);
                            ws_reason = Some((&e).into());
                            true
                        },
                        Ok(Some(msg)) => {
                            match self.process_ws(interconnect, msg).await {
                                Err(e) => {
                                    should_reconnect = ws_error_is_not_final(&e);
                                    ws_reason = Some((&e).into());
                                    true
                                },
                                _ => false
                            }
                        },
                        _ => false,
                    };
                }
            }

            if ws_error {
                self.dont_send = true;

                if should_reconnect {
                    drop(interconnect.core.send(CoreMessage::Reconnect));
                } else {
                    drop(interconnect.core.send(CoreMessage::SignalWsClosure(
                        self.attempt_idx,
                        self.info.clone(),
                        ws_reason,
                    )));
                    break;
                }
            }
        }
    }

    fn next_heartbeat(&self) -> Instant {
        Instant::now() + self.heartbeat_interval
    }

    async fn send_heartbeat(&mut self) -> Result<(), WsError> {
        // Discord have suddenly, mysteriously, started rejecting
        // ints-as-strings. Keep JS happy here, I suppose...
        const JS_MAX_INT: u64 = (1u64 << 53) - 1;
        let nonce_range =
            Uniform::new(0, JS_MAX_INT).expect("uniform range is finite and nonempty");
        let nonce = rand::rng().sample(nonce_range);
        self.last_heartbeat_nonce = Some(nonce);

        trace!("Sent heartbeat {:?}", self.speaking);

        if !self.dont_send {
            // Version 8 (kotoba patch): acknowledge the last message received.
            let heartbeat = serde_json::json!({
                "op": 3,
                "d": {"t": nonce, "seq_ack": self.ws_client.seq_ack().unwrap_or(-1)},
            });
            self.ws_client.send_value(&heartbeat).await?;
        }

        Ok(())
    }

    async fn process_ws(
        &mut self,
        interconnect: &Interconnect,
        value: GatewayEvent,
    ) -> Result<(), WsError> {
        match value {
            GatewayEvent::Speaking(ev) => {
                #[cfg(feature = "receive")]
                if let Some(user_id) = &ev.user_id {
                    self.ssrc_signalling.user_ssrc_map.insert(*user_id, ev.ssrc);
                    self.ssrc_signalling.ssrc_user_map.insert(ev.ssrc, *user_id);
                }

                drop(interconnect.events.send(EventMessage::FireCoreEvent(
                    CoreContext::SpeakingStateUpdate(ev),
                )));
            },
            GatewayEvent::ClientConnect(ev) => {
                debug!("Received discontinued ClientConnect: {:?}", ev);
            },
            GatewayEvent::ClientDisconnect(ev) => {
                #[cfg(feature = "receive")]
                {
                    self.ssrc_signalling.disconnected_users.insert(ev.user_id);
                }

                self.recognized_user_ids.remove(&ev.user_id);

                drop(interconnect.events.send(EventMessage::FireCoreEvent(
                    CoreContext::ClientDisconnect(ev),
                )));
            },
            GatewayEvent::ClientsConnect(ev) => {
                self.recognized_user_ids.extend(&ev.user_ids);
            },
            GatewayEvent::HeartbeatAck(ev) => {
                if let Some(nonce) = self.last_heartbeat_nonce.take() {
                    if ev.nonce == nonce {
                        trace!("Heartbeat ACK received.");
                    } else {
                        warn!(
                            "Heartbeat nonce mismatch! Expected {}, saw {}.",
                            nonce, ev.nonce
                        );
                    }
                }
            },
            GatewayEvent::DavePrepareTransition(ev) => {
                // A downgrade (to version 0) is prepared: keys for decryption stay
                // usable a while; the sender switches only when it executes.
                self.dave_next_version = ev.protocol_version;
                self.dave_prepare(ev.transition_id, ev.protocol_version);
                if ev.protocol_version == 0 {
                    if let Some(ref mut dave_session) = *self.dave_session.write().unwrap() {
                        dave_session.set_passthrough_mode(true, Some(120));
                    }
                }
                if ev.transition_id == 0 {
                    self.execute_dave_transition(interconnect, 0);
                } else {
                    self.dave_ready(ev.transition_id, ev.protocol_version).await?;
                }
            },
            GatewayEvent::DaveExecuteTransition(ev) => {
                self.execute_dave_transition(interconnect, ev.transition_id);
            },
            GatewayEvent::DavePrepareEpoch(ev) if ev.epoch == 1 => {
                // A new group is coming (an upgrade, or a reset): media keeps its
                // version and keys until that group's transition executes.
                self.dave_next_version = ev.protocol_version;
                match self.reinit_dave_session().await {
                    Err(DaveReinitError::Ws(e)) => return Err(e),
                    Err(e) => {
                        warn!(error = ?e, "failed to reinitialize DAVE session");
                    },
                    _ => {},
                }
            },
            GatewayEvent::DaveMlsExternalSender(ev) => {
                if let Some(ref mut dave_session) = *self.dave_session.write().unwrap() {
                    if let Err(e) = dave_session.set_external_sender(&ev.external_sender) {
                        warn!(error = ?e, "error setting MLS external sender");
                    }
                }
            },
            GatewayEvent::DaveMlsProposals(ev) => {
                let operation_type = match ev.operation_type {
                    DaveMlsProposalsOperationType::Append => davey::ProposalsOperationType::APPEND,
                    DaveMlsProposalsOperationType::Revoke => davey::ProposalsOperationType::REVOKE,
                };
                let result = if let Some(ref mut dave_session) = *self.dave_session.write().unwrap()
                {
                    match dave_session.process_proposals(
                        operation_type,
                        &ev.proposals,
                        Some(
                            &self
                                .recognized_user_ids
                                .iter()
                                .map(|u| u.0)
                                .collect::<Vec<_>>(),
                        ),
                    ) {
                        Ok(result) => result,
                        Err(e) => {
                            warn!(error = ?e, "error processing MLS proposals");
                            None
                        },
                    }
                } else {
                    None
                };

                if let Some(commit_welcome) = result {
                    self.ws_client
                        .send_binary(&GatewayEvent::from(DaveMlsCommitWelcome {
                            commit: commit_welcome.commit,
                            welcome: commit_welcome.welcome,
                        }))
                        .await?;
                }
            },
            GatewayEvent::DaveMlsAnnounceCommitTransition(ev) => {
                let result = self
                    .dave_session
                    .write()
                    .unwrap()
                    .as_mut()
                    .map(|session| session.process_commit(&ev.commit_message));
                match result {
                    Some(Ok(true)) => {
                        let version = self.dave_next_version;
                        self.dave_prepare(ev.transition_id, version);
                        if ev.transition_id == 0 {
                            self.execute_dave_transition(interconnect, 0);
                        } else {
                            self.dave_ready(ev.transition_id, version).await?;
                        }
                    },
                    Some(Err(e)) => {
                        warn!("MLS commit errored: {e:?}");
                        self.dave_invalid(interconnect, ev.transition_id).await?;
                    },
                    Some(Ok(false)) | None => {},
                }
            },
            GatewayEvent::DaveMlsWelcome(ev) => {
                let recognized: Vec<u64> = self.recognized_user_ids.iter().map(|u| u.0).collect();
                let result = self
                    .dave_session
                    .write()
                    .unwrap()
                    .as_mut()
                    .map(|session| session.process_welcome(&ev.welcome, Some(&recognized)));
                match result {
                    Some(Ok(())) => {
                        let version = self.dave_next_version;
                        self.dave_prepare(ev.transition_id, version);
                        if ev.transition_id == 0 {
                            self.execute_dave_transition(interconnect, 0);
                        } else {
                            self.dave_ready(ev.transition_id, version).await?;
                        }
                    },
                    Some(Err(e)) => {
                        warn!("MLS welcome errored: {e:?}");
                        self.dave_invalid(interconnect, ev.transition_id).await?;
                    },
                    None => {},
                }
            },
            other => {
                trace!("Received other websocket data: {:?}", other);
            },
        }

        Ok(())
    }

    /// Prepare transition `transition_id` to `protocol_version`: decryption takes the
    /// new keys now (keeping the old ones a while), encryption waits for the execute
    /// (transition 0 applies at once). Kotoba patch: davey 0.2's prepare/execute.
    fn dave_prepare(&mut self, transition_id: u16, protocol_version: u16) {
        self.dave_pending_transitions
            .insert(transition_id, protocol_version);
        if let Some(ref mut dave_session) = *self.dave_session.write().unwrap() {
            if let Err(e) = dave_session.prepare_transition(transition_id, protocol_version) {
                warn!(error = ?e, "failed to prepare DAVE transition {transition_id}");
            }
        }
    }

    /// Tell the server this client is ready for transition `transition_id`.
    async fn dave_ready(&mut self, transition_id: u16, protocol_version: u16) -> Result<(), WsError> {
        if transition_id == 0 {
            return Ok(());
        }
        self.ws_client
            .send_json(&GatewayEvent::from(DaveTransitionReady {
                transition_id,
                protocol_version,
            }))
            .await
    }

    /// A commit or welcome could not be processed: say so (opcode 31) and start again
    /// with a new key package, as the protocol says.
    async fn dave_invalid(
        &mut self,
        interconnect: &Interconnect,
        transition_id: u16,
    ) -> Result<(), WsError> {
        crate::driver::dave::update(&interconnect.dave, |status| status.invalid += 1);
        self.ws_client
            .send_json(&GatewayEvent::from(DaveMlsInvalidCommitWelcome { transition_id }))
            .await?;
        match self.reinit_dave_session().await {
            Err(DaveReinitError::Ws(e)) => return Err(e),
            Err(e) => {
                warn!(error = ?e, "failed to reinitialize DAVE session");
            },
            _ => {},
        }
        Ok(())
    }

    async fn reinit_dave_session(&mut self) -> Result<(), DaveReinitError> {
        let protocol_version = self.dave_next_version;

        if let Some(dave_protocol_version) = NonZeroU16::new(protocol_version) {
            let user_id = self.info.user_id.0.into();
            let channel_id = self.info.channel_id.0.into();

            let key_package =
                if let Some(ref mut dave_session) = *self.dave_session.write().unwrap() {
                    dave_session.reinit(dave_protocol_version, user_id, channel_id, None)?;
                    dave_session.create_key_package()?
                } else {
                    let mut dave_session =
                        davey::DaveSession::new(dave_protocol_version, user_id, channel_id, None)?;
                    let key_package = dave_session.create_key_package()?;

                    *self.dave_session.write().unwrap() = Some(dave_session);

                    key_package
                };

            self.ws_client
                .send_binary(&GatewayEvent::DaveMlsKeyPackage(DaveMlsKeyPackage {
                    key_package,
                }))
                .await?;
        } else if let Some(ref mut dave_session) = *self.dave_session.write().unwrap() {
            dave_session.reset()?;
            dave_session.set_passthrough_mode(true, Some(10));
        }

        Ok(())
    }

    /// Execute transition `transition_id`: the sender switches to its keys (and media to
    /// its protocol version) now, under the session's lock, so no frame goes out with
    /// one and not the other.
    fn execute_dave_transition(&mut self, interconnect: &Interconnect, transition_id: u16) {
        let Some(new_version) = self.dave_pending_transitions.remove(&transition_id) else {
            warn!("Received DaveExecuteTransition for unknown transition ID {transition_id}");
            return;
        };
        let mut session = self.dave_session.write().unwrap();
        let old_version = self.dave_protocol_version.load(Ordering::Relaxed);

        if let Some(ref mut dave_session) = *session {
            if transition_id != 0 {
                if let Err(e) = dave_session.execute_transition(transition_id) {
                    warn!(error = ?e, "failed to execute DAVE transition {transition_id}");
                }
            }
            // Upgraded from transport-only encryption
            if transition_id > 0 && old_version == 0 && new_version != 0 {
                dave_session.set_passthrough_mode(true, Some(10));
            }
        }
        self.dave_protocol_version
            .store(new_version, Ordering::Relaxed);
        crate::driver::dave::publish(&interconnect.dave, session.as_ref(), new_version);
        crate::driver::dave::update(&interconnect.dave, |status| status.transitions += 1);
    }
}

#[instrument(skip(interconnect, aux))]
pub(crate) async fn runner(mut interconnect: Interconnect, mut aux: AuxNetwork) {
    trace!("WS thread started.");
    aux.run(&mut interconnect).await;
    trace!("WS thread finished.");
}

fn ws_error_is_not_final(err: &WsError) -> bool {
    match err {
        #[cfg(feature = "tungstenite")]
        WsError::WsClosed(Some(frame)) => match frame.code {
            CloseCode::Library(l) =>
                if let Some(code) = VoiceCloseCode::from_u16(l) {
                    code.should_resume()
                } else {
                    true
                },
            _ => true,
        },
        #[cfg(feature = "tws")]
        WsError::WsClosed(Some(code)) => match (*code).into() {
            code @ 4000..=4999_u16 =>
                if let Some(code) = VoiceCloseCode::from_u16(code) {
                    code.should_resume()
                } else {
                    true
                },
            _ => true,
        },
        e => {
            debug!("Error sending/receiving ws {:?}.", e);
            true
        },
    }
}
