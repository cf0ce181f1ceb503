//! A speculative turn: the model asked what a turn would first ask it, before the
//! surface commits to that turn. Nothing is emitted, stored, recorded or run: the
//! reply (its text deltas and tool calls) is only held. A turn run with it
//! ([`super::TurnOptions::prepared`]) takes the held reply as its first model answer
//! when its first request is the same request; otherwise, or when it is dropped (the
//! person went on), the model call is cancelled and leaves no trace. Its words so far
//! can be watched ([`Speculation::words`]), so a voice can make the first sentence
//! ready, unplayed, before the turn is certain.

use tokio::sync::{mpsc, oneshot, watch};

use super::door::Door;
use super::Engine;
use crate::llm::{Item, LlmError, ModelReply, ModelRequest};
use kotoba_core::protocol::TurnRequest;
use kotoba_core::turn::TurnContext;

/// A model call made ahead of its turn (drop it to cancel the call).
pub struct Speculation {
    /// The request asked ahead; `None` when it was not asked (it would have passed the
    /// point where the turn compacts first, so the turn's request will differ).
    request: Option<ModelRequest>,
    deltas: mpsc::UnboundedReceiver<String>,
    /// The reply's text so far (its deltas joined); the sender closes when it ends.
    words: watch::Receiver<String>,
    reply: oneshot::Receiver<Result<ModelReply, LlmError>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Speculation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speculation").finish_non_exhaustive()
    }
}

impl Drop for Speculation {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Speculation {
    /// The held reply's text so far, as it streams; the watch closes when the reply
    /// has ended (or was not asked). Reading it takes nothing from the turn.
    pub fn words(&self) -> watch::Receiver<String> {
        self.words.clone()
    }

    /// Whether this is the answer to `req`.
    pub(super) fn answers(&self, req: &ModelRequest) -> bool {
        self.request.as_ref() == Some(req)
    }

    /// The held reply as a turn's model answer: its deltas so far and the rest as they
    /// come go to `tx`, then the reply.
    pub(super) async fn finish(
        mut self,
        tx: &mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, LlmError> {
        while let Some(delta) = self.deltas.recv().await {
            let _ = tx.send(delta);
        }
        match (&mut self.reply).await {
            Ok(reply) => reply,
            Err(_) => Err(LlmError::Stream(
                "the early model call ended without a reply".into(),
            )),
        }
    }
}

impl Engine {
    /// Ask the model now what turn `req` would first ask it. Nothing is emitted,
    /// stored or run; hand the result to that turn in `TurnOptions::prepared`.
    pub async fn speculate(&self, req: &TurnRequest) -> Speculation {
        let session = self.session(req.session.as_str()).await;
        let ctx = TurnContext::companion(
            &req.session,
            req.person(),
            (req.register, req.channel, req.el_call_bound),
            Some(req.text.clone()),
        );
        let mut items = session.history();
        items.push(Item::User {
            text: req.text.clone(),
        });
        let door = Door::resolve(self, std::sync::Arc::new(ctx), &items).await;
        let request = door.first_request(self, std::sync::Arc::new(items.clone()));
        let (tx, deltas) = mpsc::unbounded_channel();
        let (reply_tx, reply) = oneshot::channel();
        let budget = super::context::Budget::new(&door.settings, self.calibration.ratio());
        let t = budget.tokenizer;
        let conversation = session.with_transcript(|tr| tr.tokens(t));
        let line = items.last().map_or(0, |i| t.item(i));
        let fixed = super::fitting::fixed_of(&self.fixed_sizes, t, &request);
        if fixed + conversation + line > budget.threshold() {
            // The turn compacts before it asks: nothing is asked ahead of it.
            return Speculation {
                request: None,
                deltas,
                words: watch::channel(String::new()).1,
                reply,
                task: tokio::spawn(async {}),
            };
        }
        let model = self.model.clone();
        let asked = request.clone();
        let (words_tx, words) = watch::channel(String::new());
        let task = tokio::spawn(async move {
            // Each delta is kept for the turn and added to the words watched.
            let (relay_tx, mut relay) = mpsc::unbounded_channel::<String>();
            let ask = async move { model.stream(&asked, &relay_tx).await };
            let keep = async move {
                while let Some(delta) = relay.recv().await {
                    words_tx.send_modify(|w| w.push_str(&delta));
                    let _ = tx.send(delta);
                }
            };
            let (r, ()) = tokio::join!(ask, keep);
            let _ = reply_tx.send(r);
        });
        Speculation {
            request: Some(request),
            deltas,
            words,
            reply,
            task,
        }
    }
}
