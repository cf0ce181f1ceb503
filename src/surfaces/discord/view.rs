//! One follower per Discord session: it listens to the session's frames (so the
//! engine sees a listener and can put up cards) and keeps the live cards — the steps
//! card of each turn, the card of each background job (frames with a run_id), and the
//! approval cards — edited in place, at most one edit per message per ~1.5 s, the
//! final state always landing.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dashmap::mapref::entry::Entry;
use dashmap::DashMap;
use serenity::all::{ChannelId, CreateMessage, EditMessage, MessageId};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::protocol::{Card as GateCard, Event, Frame, Phase, Register};

use super::cards;
use super::render::Card;
use super::steps::{edit_due, JobInfo, StepCard};
use super::Bot;

/// How many rows' whole outputs are kept for the Full output button.
const OUTPUTS_CAP: usize = 2000;

/// One whole output behind a Full output button.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    /// The session whose card shows it.
    pub session: String,
    /// The whole output.
    pub text: String,
    /// It came from a host tool (shell, code, files, the owner's memory, MCP…): only an
    /// owner may see it (discord.md, Step cards: "if they may see it").
    pub owners_only: bool,
}

/// Whole outputs behind Full output buttons, by key.
#[derive(Default)]
pub(crate) struct Outputs {
    next: AtomicU64,
    map: DashMap<u64, Kept>,
    order: Mutex<VecDeque<u64>>,
}

impl Outputs {
    /// Keep one output; the key goes in the button's id.
    pub(crate) fn keep(&self, kept: Kept) -> u64 {
        let key = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.map.insert(key, kept);
        let mut order = match self.order.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        order.push_back(key);
        if order.len() > OUTPUTS_CAP {
            if let Some(old) = order.pop_front() {
                self.map.remove(&old);
            }
        }
        key
    }

    /// The output behind `key`.
    pub(crate) fn get(&self, key: u64) -> Option<Kept> {
        self.map.get(&key).map(|v| v.clone())
    }
}

/// Start following `session` unless already followed. Subscribes before returning, so
/// the engine sees a listener from the first turn on.
pub(crate) async fn ensure(bot: &Arc<Bot>, session: &str, channel: u64, dm: bool) {
    let rx = match bot.views.entry(session.to_string()) {
        Entry::Occupied(_) => return,
        Entry::Vacant(v) => {
            v.insert(());
            bot.engine.session(session).await.subscribe()
        }
    };
    let view = View {
        bot: bot.clone(),
        session: session.to_string(),
        channel: ChannelId::new(channel.max(1)),
        dm,
        lives: Vec::new(),
        turn: None,
        cards: HashMap::new(),
        next_turn: 0,
    };
    tokio::spawn(view.run(rx));
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Turn(u64),
    Job(String),
}

struct Live {
    key: Key,
    card: StepCard,
    message: Option<MessageId>,
    last_edit: Option<Instant>,
    dirty: bool,
    closed: bool,
    outputs: Vec<(String, u64)>,
}

impl Live {
    fn new(key: Key) -> Live {
        Live {
            key,
            card: StepCard::default(),
            message: None,
            last_edit: None,
            dirty: false,
            closed: false,
            outputs: Vec::new(),
        }
    }
}

struct View {
    bot: Arc<Bot>,
    session: String,
    channel: ChannelId,
    dm: bool,
    lives: Vec<Live>,
    turn: Option<u64>,
    cards: HashMap<String, (MessageId, GateCard)>,
    next_turn: u64,
}

impl View {
    async fn run(mut self, mut rx: broadcast::Receiver<Arc<Event>>) {
        loop {
            let due = self
                .lives
                .iter()
                .filter(|l| l.dirty)
                .map(|l| edit_due(l.last_edit, Instant::now()))
                .min();
            tokio::select! {
                ev = rx.recv() => match ev {
                    Ok(ev) => self.handle(&ev).await,
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!("Discord: {} fell {n} frames behind", self.session);
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = sleep_until(due), if due.is_some() => self.flush_due().await,
                _ = self.bot.shutdown.cancelled() => break,
            }
        }
        self.bot.views.remove(&self.session);
    }

    fn live(&mut self, key: &Key) -> &mut Live {
        let idx = match self.lives.iter().position(|l| &l.key == key) {
            Some(i) => i,
            None => {
                self.lives.push(Live::new(key.clone()));
                self.lives.len() - 1
            }
        };
        &mut self.lives[idx]
    }

    fn turn_key(&mut self) -> Key {
        let n = match self.turn {
            Some(n) => n,
            None => {
                self.next_turn += 1;
                self.turn = Some(self.next_turn);
                self.next_turn
            }
        };
        Key::Turn(n)
    }

    async fn handle(&mut self, ev: &Event) {
        let job = ev.run_id.clone().map(Key::Job);
        match &ev.frame {
            Frame::TurnStarted { .. } => {
                self.turn = None;
                let _ = self.turn_key();
            }
            Frame::Step(row) => {
                let key = match job {
                    Some(k) => k,
                    None => self.turn_key(),
                };
                let session = self.session.clone();
                let bot = self.bot.clone();
                let live = self.live(&key);
                if row.phase == Phase::Done {
                    if let Some(out) = row.full_output.as_ref().filter(|o| !o.trim().is_empty()) {
                        let k = bot.outputs.keep(Kept {
                            session: session.clone(),
                            text: out.clone(),
                            owners_only: from_host_tool(&bot, &row.tool),
                        });
                        live.outputs.retain(|(id, _)| id != &row.id);
                        live.outputs.push((row.id.clone(), k));
                    }
                }
                live.card.apply(row.clone());
                live.dirty = true;
                if live.message.is_none() {
                    self.flush(&key).await;
                }
            }
            Frame::Peek { tool } => {
                let key = match job {
                    Some(k) => k,
                    None => self.turn_key(),
                };
                let live = self.live(&key);
                live.card.peek = tool.clone();
                live.dirty = live.message.is_some();
            }
            Frame::WorkStarted { goal } => {
                if let Some(key) = job {
                    let stop = super::sessions::stop_id(&self.session);
                    let live = self.live(&key);
                    live.card.job = Some(JobInfo {
                        goal: goal.clone(),
                        started: Instant::now(),
                        done: None,
                        stop,
                    });
                    live.dirty = true;
                    self.flush(&key).await;
                }
            }
            Frame::WorkDone { ok, summary } => {
                if let Some(key) = job {
                    let live = self.live(&key);
                    if let Some(j) = live.card.job.as_mut() {
                        j.done = Some((*ok, summary.clone()));
                    }
                    live.closed = true;
                    live.dirty = live.message.is_some();
                }
                if let Some(run_id) = ev.run_id.clone() {
                    self.announce(run_id, summary.clone());
                }
            }
            Frame::TurnDone { .. } => {
                if let Some(n) = self.turn.take() {
                    if let Some(l) = self.lives.iter_mut().find(|l| l.key == Key::Turn(n)) {
                        l.closed = true;
                    }
                }
                self.lives.retain(|l| !l.closed || l.dirty);
            }
            Frame::Card(card) => self.post_card(card).await,
            Frame::CardSettled {
                request_id,
                settlement,
            } => {
                if let Some((mid, card)) = self.cards.remove(request_id) {
                    let drawn = cards::settled(&card, self.dm, settlement);
                    self.edit(mid, &drawn).await;
                    if let Err(e) = self
                        .bot
                        .engine
                        .store()
                        .remove_discord_card(request_id)
                        .await
                    {
                        tracing::warn!("Discord: forgetting a settled card: {e}");
                    }
                }
            }
            _ => {}
        }
    }

    /// A job or deferred run ended: she announces it in her own words, once (the
    /// engine runs the hidden `__work_done__` turn and refuses a second one).
    fn announce(&self, run_id: String, summary: String) {
        let (bot, session, channel) = (self.bot.clone(), self.session.clone(), self.channel);
        tokio::spawn(async move {
            let Some(said) = bot
                .engine
                .announce_work(&session, &run_id, &summary, Register::Text)
                .await
            else {
                return;
            };
            if let Some(http) = bot.http() {
                super::send::post(http, channel, None, &said.text).await;
            }
        });
    }

    async fn post_card(&mut self, card: &GateCard) {
        let Some(http) = self.bot.http() else { return };
        let drawn = cards::pending(card, self.dm);
        let m = CreateMessage::new()
            .embed(drawn.embed())
            .components(drawn.components());
        // Remembered in the store before it is posted, so a restart after a crash (even
        // one right after posting) can find and settle it.
        let json = serde_json::to_string(card).unwrap_or_default();
        let store = &self.bot.engine.store();
        let rid = &card.request_id;
        if let Err(e) = store
            .add_discord_card(rid, self.channel.get(), 0, self.dm, &json)
            .await
        {
            tracing::warn!("Discord: remembering an approval card: {e}");
        }
        match self.channel.send_message(http, m).await {
            Ok(msg) => {
                if let Err(e) = store.set_discord_card_message(rid, msg.id.get()).await {
                    tracing::warn!("Discord: remembering an approval card: {e}");
                }
                self.cards
                    .insert(card.request_id.clone(), (msg.id, card.clone()));
            }
            Err(e) => {
                tracing::warn!("Discord: posting an approval card in {}: {e}", self.channel);
                if let Err(e) = store.remove_discord_card(rid).await {
                    tracing::warn!("Discord: forgetting a card never posted: {e}");
                }
            }
        }
    }

    async fn edit(&self, mid: MessageId, drawn: &Card) {
        let Some(http) = self.bot.http() else { return };
        let e = EditMessage::new()
            .embed(drawn.embed())
            .components(drawn.components());
        if let Err(err) = self.channel.edit_message(http, mid, e).await {
            tracing::warn!("Discord: editing a card in {}: {err}", self.channel);
        }
    }

    async fn flush_due(&mut self) {
        let now = Instant::now();
        let keys: Vec<Key> = self
            .lives
            .iter()
            .filter(|l| l.dirty && edit_due(l.last_edit, now) <= now)
            .map(|l| l.key.clone())
            .collect();
        for k in keys {
            self.flush(&k).await;
        }
        self.lives.retain(|l| !l.closed || l.dirty);
    }

    async fn flush(&mut self, key: &Key) {
        let Some(http) = self.bot.http().cloned() else {
            return;
        };
        let channel = self.channel;
        let Some(live) = self.lives.iter_mut().find(|l| &l.key == key) else {
            return;
        };
        let drawn = live.card.render(Instant::now(), &live.outputs);
        live.dirty = false;
        live.last_edit = Some(Instant::now());
        match live.message {
            None => {
                let m = CreateMessage::new()
                    .embed(drawn.embed())
                    .components(drawn.components());
                match channel.send_message(&http, m).await {
                    Ok(msg) => live.message = Some(msg.id),
                    Err(e) => tracing::warn!("Discord: posting a steps card in {channel}: {e}"),
                }
            }
            Some(mid) => {
                let e = EditMessage::new()
                    .embed(drawn.embed())
                    .components(drawn.components());
                if let Err(err) = channel.edit_message(&http, mid, e).await {
                    tracing::warn!("Discord: editing a steps card in {channel}: {err}");
                }
            }
        }
    }
}

/// Whether a row's tool is a host tool: anything a guest's turn would not be offered
/// (an unknown name, such as a disconnected MCP server's tool, counts as one).
fn from_host_tool(bot: &Bot, tool: &str) -> bool {
    !bot.engine
        .tools()
        .find(tool)
        .is_some_and(|t| crate::engine::guest_may_use(t.spec()))
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
