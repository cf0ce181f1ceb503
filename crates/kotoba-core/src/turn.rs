//! A turn's context: whom it speaks for and the axes it runs under, fixed once when
//! the turn is created and shared as `Arc<TurnContext>` by the loop, every tool call,
//! every card and port call, a deferred run and a job it starts (docs/engine.md §1).

use std::sync::Arc;

use crate::protocol::{Channel, Mode, Origin, Person, Register};
use crate::session::SessionId;

pub mod meter;

/// One turn (or job, or helper): set once, never changed while it runs. A tool reads
/// who is asking from here, never from a session or a map.
#[derive(Debug, Clone)]
pub struct TurnContext {
    /// The session it runs in (where its frames go), as the surface that received the
    /// words said it: where it lives (a Discord channel or DM, the page, …) and its name.
    pub session: SessionId,
    /// Whom it speaks for: the person whose words started it (for a job, a helper, a
    /// deferred run or a hidden announce turn: the person whose turn started that).
    pub person: Person,
    /// What she writes.
    pub register: Register,
    /// The approval clock.
    pub channel: Channel,
    /// `Some(true)` only inside /v1's producer.
    pub el_call_bound: Option<bool>,
    /// Companion or work.
    pub mode: Mode,
    /// The job's id in work mode.
    pub run_id: Option<String>,
    /// The person's own words.
    pub user_request: Option<String>,
    /// A job's meter (person-wait time, step count); `None` for a conversation turn.
    pub meter: Option<Arc<meter::JobMeter>>,
    /// 0 for a turn or job, 1 inside a delegate helper (helpers cannot delegate).
    pub depth: u8,
    /// Step zero: a skill whose `skill_view` must be the job's first call.
    pub step_zero: Option<String>,
    /// The hidden `__work_done__` announce turn.
    pub announce: bool,
}

impl TurnContext {
    /// A conversation turn's context in `session` for `person` (no job, depth 0); a
    /// name given as text is read by [`SessionId::parse`].
    pub fn companion(
        session: impl Into<SessionId>,
        person: Person,
        (register, channel, el_call_bound): (Register, Channel, Option<bool>),
        user_request: Option<String>,
    ) -> Self {
        TurnContext {
            session: session.into(),
            person,
            register,
            channel,
            el_call_bound,
            mode: Mode::Companion,
            run_id: None,
            user_request,
            meter: None,
            depth: 0,
            step_zero: None,
            announce: false,
        }
    }

    /// Where the turn's person spoke from.
    pub fn origin(&self) -> &Origin {
        &self.person.origin
    }

    /// Whom it speaks for, as the tool door sees it.
    pub fn access(&self) -> Access {
        match self.person.origin.is_guest() {
            true => Access::Guest,
            false => Access::Owner,
        }
    }

    /// The hidden announce turn (`__work_done__`): a conversation turn, never a job.
    pub fn is_announce_turn(&self) -> bool {
        self.announce && self.mode == Mode::Companion
    }
}

/// Whom a turn speaks for, at the tool door (discord.md, Permissions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// An owner (configured ids) or a local person: every tool.
    Owner,
    /// Anyone else: the guest allow-list only; host tools are withheld at the door.
    Guest,
}
