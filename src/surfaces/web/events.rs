//! `GET /api/events?session=ID[&text_only=1]`: the page's one event stream (SSE). Every
//! `data:` is one engine frame serialised as JSON, unchanged (`Event`: `type`, the
//! frame's fields, `run_id` for a background job's frames). It opens with the running
//! turn as it stands (its start, the chip, her words so far, its rows) and the cards
//! still waiting in the session, keeps alive with a comment every 15 s, reports a
//! slow reader's skipped frames as an `event: lagged`, and ends when the server stops.
//! While it is open the session has a listener: gated /v1 calls defer to its cards.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;
use tokio_util::sync::CancellationToken;

use super::relay::WorkDoneRelay;
use super::{engine_session, json_error, parse_session_id, Shared};
use crate::protocol::{Event, Frame, Register};

/// The stream's query.
#[derive(Deserialize)]
pub(super) struct EventsQuery {
    #[serde(default = "super::default_session")]
    session: String,
    #[serde(default)]
    text_only: Option<String>,
}

struct Feed {
    first: VecDeque<Arc<Event>>,
    rx: Receiver<Arc<Event>>,
    shutdown: CancellationToken,
    relay: Arc<WorkDoneRelay>,
    session: String,
    register: Register,
}

fn data(ev: &Event) -> SseEvent {
    SseEvent::default().data(serde_json::to_string(ev).unwrap_or_else(|_| "{}".into()))
}

impl Feed {
    async fn next(&mut self) -> Option<SseEvent> {
        if let Some(ev) = self.first.pop_front() {
            return Some(data(&ev));
        }
        let got = tokio::select! {
            _ = self.shutdown.cancelled() => return None,
            got = self.rx.recv() => got,
        };
        match got {
            Ok(ev) => {
                if let (Frame::WorkDone { summary, .. }, Some(run_id)) = (&ev.frame, &ev.run_id) {
                    self.relay
                        .fire(&self.session, run_id, summary, self.register);
                }
                Some(data(&ev))
            }
            Err(RecvError::Lagged(n)) => Some(
                SseEvent::default()
                    .event("lagged")
                    .data(format!("{{\"skipped\":{n}}}")),
            ),
            Err(RecvError::Closed) => None,
        }
    }
}

fn feed_stream(feed: Feed) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures::stream::unfold(feed, |mut feed| async move {
        feed.next().await.map(|ev| (Ok(ev), feed))
    })
}

/// Open the session's stream.
pub(super) async fn events(State(st): State<Shared>, Query(q): Query<EventsQuery>) -> Response {
    let id = match parse_session_id(&q.session) {
        Ok(id) => id,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "bad_session", &e.to_string()),
    };
    let session_id = engine_session(&id);
    let session = st.engine.session(&session_id).await;
    // A page (re)opened mid-turn draws the running turn first: its rows, chip and
    // words so far; then every card still waiting.
    let (mut first, rx) = session.watch();
    first.extend(
        st.engine
            .open_cards(&session_id)
            .await
            .into_iter()
            .map(|card| {
                Arc::new(Event {
                    run_id: None,
                    frame: Frame::Card(Box::new(card)),
                })
            }),
    );
    let text_only = q
        .text_only
        .as_deref()
        .is_some_and(|v| matches!(v, "1" | "true" | "yes"));
    let feed = Feed {
        first: first.into(),
        rx,
        shutdown: st.shutdown.clone(),
        relay: st.relay.clone(),
        session: session_id,
        register: if text_only {
            Register::Text
        } else {
            Register::Voice
        },
    };
    let mut resp = Sse::new(feed_stream(feed))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    // Proxies must not buffer the stream.
    resp.headers_mut().insert(
        "x-accel-buffering",
        axum::http::HeaderValue::from_static("no"),
    );
    resp
}
