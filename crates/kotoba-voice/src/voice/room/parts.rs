//! What a voice room is built from and tells its surroundings: the surface around it
//! ([`RoomSide`]: who people are, where captions go, what a turn's origin is), its parts, the surface's control messages, why it ended, its
//! handle, and the per-reply timings the benchmark reads ([`Trace`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::speech::endpoint::EndpointSettings;
use crate::speech::stt::Recognizer;
use crate::speech::tts::Synthesizer;
use crate::voice::boundary::{Arrived, AudioOut, Heard};
use kotoba_core::protocol::{clip, Origin, TurnRequest};
use kotoba_engine::engine::Engine;

/// The longest caption line.
pub const CAPTION_MAX: usize = 1900;

/// A line the room shows beside her voice: in a Discord voice channel's text chat, on
/// the page under the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caption {
    /// What she heard a person say (the words of the turn it starts).
    Heard {
        /// Their user id on the surface.
        user: u64,
        /// Their name.
        name: String,
        /// The words.
        words: String,
    },
    /// Her finished answer, as spoken.
    Said(String),
    /// One sentence about the room itself (a provider failing, a give-up).
    Notice(String),
}

impl Caption {
    /// The caption as one chat line (Markdown): `🎙️ **name:** words`, `🔊 answer`, or
    /// the notice itself, at most [`CAPTION_MAX`] characters.
    pub fn line(&self) -> String {
        let line = match self {
            Caption::Heard { name, words, .. } => format!("🎙️ **{name}:** {words}"),
            Caption::Said(text) => format!("🔊 {text}"),
            Caption::Notice(text) => text.clone(),
        };
        clip(&line, CAPTION_MAX)
    }
}

/// What the room needs from the surface around it (Discord, the page).
#[async_trait]
pub trait RoomSide: Send + Sync + 'static {
    /// Show a caption beside her voice.
    async fn post(&self, caption: Caption);
    /// A person's name, to caption and to tell her.
    fn name_of(&self, user: u64) -> String;
    /// Who a turn of this person's comes from, for the gate (an owner on their own
    /// surface, a Discord member and whether they are an owner: owners' turns get
    /// every tool).
    fn origin(&self, user: u64) -> Origin;
    /// How a turn names its author (`TurnRequest::author`).
    fn author(&self, user: u64) -> String;
    /// The tool families this person's roles grant beyond the guest list
    /// (`TurnRequest::granted`); none where there are no roles.
    fn granted(&self, _user: u64) -> Vec<String> {
        Vec::new()
    }
    /// A turn is about to start (the surface follows the session's frames so cards
    /// appear where it draws them). Whom it speaks for is in its request, not here.
    async fn before_turn(&self);
    /// The turn `turn_id` is the room's: she says it aloud, its narration included (a
    /// surface that also draws the session's frames leaves that narration unwritten).
    fn speaking(&self, _turn_id: &str) {}
}

/// Everything a room is built from.
pub struct RoomParts {
    /// The engine turns run in.
    pub engine: Arc<Engine>,
    /// The engine session the room's turns run in (a Discord voice channel's
    /// text-chat session, the page's session), as the adapter that opened it says.
    pub session: kotoba_core::session::SessionId,
    /// Her names: display name, username, aliases.
    pub names: Vec<String>,
    /// Speech recognition.
    pub recognizer: Arc<dyn Recognizer>,
    /// Speech synthesis.
    pub synthesizer: Arc<dyn Synthesizer>,
    /// Where her voice goes.
    pub out: Arc<dyn AudioOut>,
    /// The chat around the room.
    pub side: Arc<dyn RoomSide>,
    /// End-of-utterance settings.
    pub endpoint: EndpointSettings,
    /// Whether the model may be asked at the short pause (`voice.speculate`).
    pub speculate: bool,
    /// How long with no human before she leaves.
    pub idle_leave: Duration,
    /// Where per-utterance timings go (the benchmark listens), if anywhere.
    pub trace: Option<mpsc::UnboundedSender<Trace>>,
    /// With `voice_mode: realtime`: where each person's realtime speech-to-speech
    /// session opens (`room/realtime.rs`); `None`: the chained pipeline.
    pub realtime: Option<crate::speech::realtime_voice::RealtimeConfig>,
}

/// What the surface tells a running room.
#[derive(Debug)]
pub enum Control {
    /// How many humans are in the channel now.
    Humans(usize),
    /// Leave once the turn and playback are done (at most 30 s, `room::LEAVE_WAIT`); the
    /// sender hears when the room has ended.
    Leave(oneshot::Sender<()>),
    /// She moved to another channel: end this room without cutting its turn (the
    /// turn that asked for the move finishes in writing).
    Release,
    /// A voiced packet from this person just arrived, ahead of songbird's playout
    /// buffer and tick: if she is talking over someone she serves, she pauses now
    /// (the ticks that follow say whether it was speech).
    Arriving(u64),
    /// A turn typed where she is heard (the page): run it as the room's turn, so she
    /// says her answer aloud and speaking over her cuts it.
    Speak {
        /// Who typed it.
        user: u64,
        /// The typed turn, as the surface builds it (register voice, channel text).
        turn: Box<TurnRequest>,
    },
}

/// Why a room ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoomEnd {
    /// Asked to leave.
    Left,
    /// Nobody human was in the channel for `idle_leave`.
    Alone,
    /// The surface dropped the room (disconnect, shutdown).
    Dropped,
    /// She moved to another channel.
    Moved,
}

/// A running room.
pub struct RoomHandle {
    /// Heard ticks in (one per 20 ms).
    pub heard: mpsc::Sender<Heard>,
    /// Each person's audio as their packets arrive (a surface with packets: Discord).
    pub arrived: mpsc::Sender<Arrived>,
    /// Control messages.
    pub control: mpsc::Sender<Control>,
    /// The room task; its value says why it ended.
    pub task: JoinHandle<RoomEnd>,
}

/// When each stage of one spoken reply happened (the benchmark reads these).
#[derive(Debug, Clone)]
pub struct Trace {
    /// The person's speech ended (their last voiced frame).
    pub speech_end: Instant,
    /// The utterance was committed (end of speech detected).
    pub committed: Instant,
    /// The recognizer's answer was in hand (at the commit when it was recognised
    /// early, at the short pause).
    pub recognised: Instant,
    /// How long the recognizer took (provider time).
    pub stt: Duration,
    /// The turn was asked of the engine.
    pub turn_started: Instant,
    /// The first sentence was handed to the speaker.
    pub first_sentence: Option<Instant>,
    /// How long synthesis took to its first bytes (provider time).
    pub synth: Option<Duration>,
    /// The first frame was handed to the AudioOut.
    pub first_frame: Option<Instant>,
}
