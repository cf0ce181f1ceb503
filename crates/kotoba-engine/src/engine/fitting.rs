//! Every request fits the model's window (docs/engine.md, "Long conversations"):
//! before each request the loop counts it in tokens and, past `context.compact_at` of
//! `context.window`, folds the conversation's oldest lines into the durable summary,
//! then shortens and summarises the turn's own oldest steps, and last cuts the largest
//! texts of the request itself so it never goes above the window. A provider that
//! still says "too long" gets one retry, squeezed harder.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;

use crate::llm::tokens::Tokenizer;
use crate::llm::{Item, LlmError, ModelReply, ModelRequest};
use kotoba_core::protocol::Frame;
use kotoba_store::Summary;

use super::context::summarise::{summarise, Kind};
use super::context::{clip_largest, lines_to_fold, shorten_outputs, Budget, FixedSizes};
use super::turn::Driver;

/// Why a request was not answered.
#[derive(Debug, thiserror::Error)]
pub(super) enum AskError {
    /// The model request failed (after the one retry an overflow earns).
    #[error(transparent)]
    Model(#[from] LlmError),
    /// Even cut to the bone, the request does not fit the window: nothing was sent.
    #[error("the request does not fit the context window")]
    TooLong,
}

impl AskError {
    /// One plain sentence for the person.
    pub(super) fn sentence(&self) -> String {
        match self {
            AskError::Model(e) => e.user_sentence(),
            AskError::TooLong => "This is too long for the model's context window even after I \
                summarised and shortened what I could, so I couldn't send it; a shorter \
                message or a larger context.window would fit."
                .into(),
        }
    }
}

/// The request's instructions and tools, remembered by the instructions' text and the
/// tools' names and descriptions (what else a definition holds does not change while
/// the process runs).
pub(super) fn fixed_of(fixed: &FixedSizes, t: Tokenizer, req: &ModelRequest) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{t:?}").hash(&mut h);
    req.system.hash(&mut h);
    for tool in &req.tools {
        (&tool.name, &tool.description).hash(&mut h);
    }
    fixed.get_or(h.finish(), || t.fixed(req))
}

/// One item's size, remembered by a hash of its content.
fn size_of(sizes: &mut HashMap<u64, usize>, t: Tokenizer, item: &Item) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::mem::discriminant(item).hash(&mut h);
    match item {
        Item::User { text } | Item::Assistant { text } => text.hash(&mut h),
        Item::ToolCall(c) => (&c.call_id, &c.name, &c.arguments).hash(&mut h),
        Item::ToolResult { call_id, output } => (call_id, output).hash(&mut h),
        Item::Media { media } => media.len().hash(&mut h),
        Item::Reasoning { raw } => raw.to_string().hash(&mut h),
    }
    *sizes.entry(h.finish()).or_insert_with(|| t.item(item))
}

/// The turn's earlier steps that may be summarised: from the first item after its
/// opening lines (the person's words, attachments, context) up to the newest reply
/// and its results, which stay.
fn earlier_steps(items: &[Item], from: usize) -> Option<Range<usize>> {
    let start = (from..items.len())
        .find(|&i| !matches!(items[i], Item::User { .. } | Item::Media { .. }))?;
    let mut end = items.len();
    while end > start && matches!(items[end - 1], Item::ToolResult { .. }) {
        end -= 1;
    }
    while end > start && !matches!(items[end - 1], Item::ToolResult { .. } | Item::User { .. }) {
        end -= 1;
    }
    (end > start).then_some(start..end)
}

/// A step as the summariser reads it.
fn step_text(item: &Item) -> Option<String> {
    match item {
        Item::ToolCall(c) => Some(format!("called {} {}", c.name, c.arguments)),
        Item::ToolResult { output, .. } => Some(format!("result: {output}")),
        Item::Assistant { text } => Some(format!("said: {text}")),
        Item::User { text } => Some(text.clone()),
        Item::Media { .. } | Item::Reasoning { .. } => None,
    }
}

impl Driver<'_> {
    /// The size of `req`, whose leading items are the session's conversation as it
    /// stands: those are counted by the conversation itself (each line once, for as
    /// long as it lives), the rest by content.
    fn measure(&mut self, req: &ModelRequest, t: Tokenizer) -> usize {
        let conversation = match self.conversation {
            0 => 0,
            _ => self.session.with_transcript(|tr| tr.tokens(t)),
        };
        let own: usize = req.items[self.conversation.min(req.items.len())..]
            .iter()
            .map(|i| size_of(&mut self.sizes, t, i))
            .sum();
        fixed_of(&self.engine.fixed_sizes, t, req) + conversation + own
    }

    /// Ask the model `req` (built from `items`), fitted to the window first; an
    /// overflow the provider reports compacts harder and retries once.
    pub(super) async fn ask_fitted(
        &mut self,
        items: &mut Arc<Vec<Item>>,
        req: &mut ModelRequest,
        separate: bool,
    ) -> Result<ModelReply, AskError> {
        let mut squeeze = false;
        loop {
            let counted = self.fit(items, req, squeeze).await?;
            // Asked ahead of the turn: its reply stands for this request when it is the same.
            let prepared = self.prepared.take().filter(|p| p.answers(req));
            match self.ask_model(req, separate, prepared).await {
                Ok(reply) => {
                    if let Some(n) = reply.input_tokens {
                        self.engine.calibration.observe(counted, n);
                    }
                    return Ok(reply);
                }
                Err(LlmError::ContextTooLong) if !squeeze => {
                    tracing::warn!(session = %self.session.id, "the model said too long: compacting and retrying once");
                    self.engine.calibration.overflowed();
                    squeeze = true;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Fit `req` to the window: compact the conversation, shorten then summarise the
    /// turn's oldest steps (both lasting, in `items`), and last cut the request's own
    /// largest texts. Its size in counted tokens. `items` and the request share one
    /// copy of the conversation; only a change makes another.
    async fn fit(
        &mut self,
        items: &mut Arc<Vec<Item>>,
        req: &mut ModelRequest,
        squeeze: bool,
    ) -> Result<usize, AskError> {
        let budget = Budget::new(&self.door.settings, self.engine.calibration.ratio());
        let t = budget.tokenizer;
        let mut total = self.measure(req, t);
        let target = if squeeze {
            budget.threshold().min(total * 3 / 5)
        } else {
            budget.threshold()
        };
        if total > target && self.conversation > 0 {
            self.compact_conversation(items, &budget, total, target)
                .await;
            req.items = items.clone();
            total = self.measure(req, t);
        }
        // The newest reply's results are not shortened: the model has not read them yet.
        if let Some(earlier) = earlier_steps(items, self.conversation).filter(|_| total > target) {
            shorten_outputs(&mut Arc::make_mut(items)[earlier], t, total - target);
            req.items = items.clone();
            total = self.measure(req, t);
        }
        if total > target {
            self.summarise_steps(items, &budget).await;
            req.items = items.clone();
            total = self.measure(req, t);
        }
        while total > budget.limit() {
            let sizes: Vec<usize> = req
                .items
                .iter()
                .map(|i| size_of(&mut self.sizes, t, i))
                .collect();
            if !clip_largest(Arc::make_mut(&mut req.items).as_mut_slice(), &sizes, t) {
                if !req.tools.is_empty() {
                    // A window the tool definitions fill: this request goes words-only.
                    tracing::warn!(session = %self.session.id, limit = budget.limit(), "the tools do not fit the window: asking without them");
                    req.tools.clear();
                } else {
                    tracing::warn!(session = %self.session.id, total, limit = budget.limit(), "a request does not fit its window");
                    return Err(AskError::TooLong);
                }
            }
            // Counted by content: a cut may fall in the conversation's own lines.
            let items: usize = req
                .items
                .iter()
                .map(|i| size_of(&mut self.sizes, t, i))
                .sum();
            total = fixed_of(&self.engine.fixed_sizes, t, req) + items;
        }
        self.session
            .with_transcript(|tr| tr.last_request = Some(budget.provider(total)));
        Ok(total)
    }

    /// Fold the conversation's oldest whole exchanges into its summary (stored with
    /// the lines it covers before the request goes), keeping a recent tail verbatim:
    /// about a quarter of the window, less when the rest of the request leaves less
    /// room, but always the newest exchange.
    async fn compact_conversation(
        &mut self,
        items: &mut Arc<Vec<Item>>,
        budget: &Budget,
        total: usize,
        target: usize,
    ) {
        let t = budget.tokenizer;
        let conversation = self.session.with_transcript(|tr| tr.tokens(t));
        let others = total.saturating_sub(conversation);
        let room = target.saturating_sub(others + budget.summary_tokens());
        let keep = budget.tail().min(room);
        let Some((covered, said, previous, from_id, generation)) =
            self.session.with_transcript(|tr| {
                let n = lines_to_fold(&mut tr.lines, t, keep);
                let folded = &tr.lines[..n];
                let said: Vec<String> = folded.iter().map(|l| l.as_said()).collect();
                let from_id = tr
                    .summary
                    .as_ref()
                    .map(|s| s.from_id)
                    .or_else(|| folded.iter().map(|l| l.id).find(|&id| id > 0))
                    .unwrap_or_default();
                let previous = tr.summary.as_ref().map(|s| s.text.clone());
                (n > 0).then_some((n, said, previous, from_id, tr.generation))
            })
        else {
            return;
        };
        let model = self.engine.model.as_ref();
        let text = match summarise(
            model,
            &self.door.settings,
            budget,
            Kind::Conversation,
            previous.as_deref(),
            &said,
        )
        .await
        {
            Ok(text) => text,
            Err(e) => {
                tracing::warn!(session = %self.session.id, "summarising the conversation failed, cutting instead: {e}");
                return;
            }
        };
        let id = self.session.id.clone();
        // No fresh start between reading the generation and keeping the summary.
        let _order = self.session.store_order.lock().await;
        let summary = self.session.with_transcript(|tr| {
            if tr.generation != generation {
                return None; // a fresh start came meanwhile: this summary is of the old one
            }
            let upto_id = tr.lines[..covered].iter().map(|l| l.id).max().unwrap_or(0);
            let upto_id = upto_id.max(tr.summary.as_ref().map_or(0, |s| s.upto_id));
            Some(Summary {
                from_id,
                upto_id,
                text,
            })
        });
        let Some(summary) = summary else {
            return;
        };
        // Durable before it is used: a restart resumes from this summary.
        if let Err(e) = self.engine.store.save_summary(&id, &summary).await {
            tracing::warn!(session = %id, "saving the summary failed, cutting instead: {e}");
            return;
        }
        let after = self.session.with_transcript(|tr| {
            if tr.generation != generation {
                return None;
            }
            tr.replace_oldest(covered, summary);
            Some((tr.items(), tr.tokens(t)))
        });
        let Some((conversation_items, after)) = after else {
            return;
        };
        Arc::make_mut(items).splice(..self.conversation, conversation_items.iter().cloned());
        self.conversation = conversation_items.len();
        tracing::info!(session = %self.session.id, lines = covered, before = conversation, after, "conversation compacted");
        self.emit(Frame::Compacted {
            lines: covered as u64,
            tokens_before: budget.provider(conversation) as u64,
            tokens_after: budget.provider(after) as u64,
        });
    }

    /// Replace the turn's earlier steps with the model's summary of them (the newest
    /// reply and its results stay), when shortening their outputs was not enough.
    async fn summarise_steps(&mut self, items: &mut Arc<Vec<Item>>, budget: &Budget) {
        let Some(range) = earlier_steps(items, self.conversation) else {
            return;
        };
        let said: Vec<String> = items[range.clone()].iter().filter_map(step_text).collect();
        let model = self.engine.model.as_ref();
        match summarise(model, &self.door.settings, budget, Kind::Steps, None, &said).await {
            Ok(text) => {
                let note = Item::User {
                    text: format!("[Summary of the earlier steps of this task, written when they outgrew the model's window]\n{text}"),
                };
                Arc::make_mut(items).splice(range, [note]);
            }
            Err(e) => {
                tracing::warn!(session = %self.session.id, "summarising the steps failed, cutting instead: {e}");
            }
        }
    }
}

/// How much of the model's window a session uses (`/status`, `kotoba doctor`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextUse {
    /// Tokens in use: what the session's last request cost, else its conversation's.
    pub tokens: usize,
    /// The model's window.
    pub window: u64,
    /// The fraction of the window at which it compacts.
    pub compact_at: f64,
    /// Whether its oldest lines were summarised.
    pub summarised: bool,
}

/// The fixed part of a request and the room it leaves (`kotoba doctor`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Room {
    /// The model's window.
    pub window: u64,
    /// What the instructions and tool definitions of an owner's turn cost.
    pub fixed: usize,
    /// How many tools those are.
    pub tools: usize,
    /// Tokens left for the conversation before it is compacted (0: none).
    pub left: usize,
}

impl super::Engine {
    /// How much of the model's window session `id` uses now.
    pub async fn context_use(&self, id: &str) -> ContextUse {
        let settings = self.config.settings();
        let budget = Budget::new(&settings, self.calibration.ratio());
        let session = self.session(id).await;
        let (tokens, summarised) = session.with_transcript(|tr| {
            let tokens = tr
                .last_request
                .unwrap_or_else(|| budget.provider(tr.tokens(budget.tokenizer)));
            (tokens, tr.summary.is_some())
        });
        ContextUse {
            tokens,
            window: budget.window as u64,
            compact_at: budget.compact_at,
            summarised,
        }
    }

    /// What an owner's companion turn's instructions and tools cost, and the room they
    /// leave for the conversation before it is compacted.
    pub async fn context_room(&self) -> Room {
        let ctx = kotoba_core::turn::TurnContext::companion(
            "doctor",
            kotoba_core::protocol::Person::owner("owner"),
            (
                kotoba_core::protocol::Register::Text,
                kotoba_core::protocol::Channel::Text,
                None,
            ),
            None,
        );
        let door = super::door::Door::resolve(self, std::sync::Arc::new(ctx), &[]).await;
        let budget = Budget::new(&door.settings, self.calibration.ratio());
        let req = door.first_request(self, Default::default());
        let fixed = budget.provider(budget.tokenizer.fixed(&req));
        Room {
            window: budget.window as u64,
            fixed,
            tools: req.tools.len(),
            left: budget.provider(budget.threshold()).saturating_sub(fixed),
        }
    }
}
