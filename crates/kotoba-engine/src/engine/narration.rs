//! Narration: which announce / heartbeat / after / fail lines a turn speaks, by
//! register × voice_mode × reasoning (engine.md §3), and the heartbeat clock.

use std::collections::HashSet;
use std::time::Duration;

use crate::soul::Soul;
use crate::tools::ToolSpec;
use kotoba_core::config::VoiceMode;
use kotoba_core::protocol::{Register, SayKind, StepKind};

/// The poll interval of a running tool.
pub const HEARTBEAT_TICK: Duration = Duration::from_secs(3);
/// When the first heartbeat is said.
pub const HEARTBEAT_FIRST: Duration = Duration::from_secs(9);
/// The interval between later heartbeats.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(21);

/// The wordless hums of a reasoning model on local voice.
pub const HUMS: [&str; 4] = ["Mmm...", "Hmm...", "Mm...", "Hmmm..."];

/// What a running tool's heartbeat says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeartbeatPlan {
    /// Nothing: text register, or an agent fills the gap.
    Silent,
    /// Wordless hums, cycled: voice + reasoning model + local voice.
    Hums,
    /// The tool's own lines in order, the last repeated: voice + non-reasoning model.
    Lines(Vec<String>),
}

impl HeartbeatPlan {
    /// The `n`th beat (0-based), if any.
    pub fn beat(&self, n: usize) -> Option<String> {
        match self {
            HeartbeatPlan::Silent => None,
            HeartbeatPlan::Hums => Some(HUMS[n % HUMS.len()].to_string()),
            HeartbeatPlan::Lines(lines) => lines.get(n).or(lines.last()).cloned(),
        }
    }
}

/// The heartbeat plan for one tool in one turn.
pub fn heartbeat_plan(
    register: Register,
    voice_mode: VoiceMode,
    reasoning: bool,
    lines: &[String],
) -> HeartbeatPlan {
    match (register, voice_mode, reasoning) {
        (Register::Text, _, _) => HeartbeatPlan::Silent,
        (Register::Voice, VoiceMode::Agent | VoiceMode::Realtime, _) => HeartbeatPlan::Silent,
        (Register::Voice, VoiceMode::Local, true) => HeartbeatPlan::Hums,
        (Register::Voice, VoiceMode::Local, false) if lines.is_empty() => HeartbeatPlan::Silent,
        (Register::Voice, VoiceMode::Local, false) => HeartbeatPlan::Lines(lines.to_vec()),
    }
}

/// When beats fall: the clock counts only time not blocked on a person.
#[derive(Debug, Clone)]
pub struct HeartbeatClock {
    counted: Duration,
    next: Duration,
    beats: usize,
}

impl Default for HeartbeatClock {
    fn default() -> Self {
        HeartbeatClock {
            counted: Duration::ZERO,
            next: HEARTBEAT_FIRST,
            beats: 0,
        }
    }
}

impl HeartbeatClock {
    /// One poll tick passed; `blocked` says the turn held a card a person must resolve.
    /// Returns the index of the beat due now, if one is.
    pub fn tick(&mut self, blocked: bool) -> Option<usize> {
        if blocked {
            return None;
        }
        self.counted += HEARTBEAT_TICK;
        if self.counted >= self.next {
            self.next += HEARTBEAT_EVERY;
            self.beats += 1;
            return Some(self.beats - 1);
        }
        None
    }
}

/// The narration state of one turn.
pub struct Narrator<'a> {
    soul: &'a Soul,
    register: Register,
    voice_mode: VoiceMode,
    reasoning: bool,
    announced: HashSet<String>,
}

impl<'a> Narrator<'a> {
    /// Narration for a turn.
    pub fn new(soul: &'a Soul, register: Register, voice_mode: VoiceMode, reasoning: bool) -> Self {
        Narrator {
            soul,
            register,
            voice_mode,
            reasoning,
            announced: HashSet::new(),
        }
    }

    fn speaks_canned_lines(&self, spec: &ToolSpec) -> bool {
        self.register == Register::Voice && !self.reasoning && spec.step_kind != StepKind::Mcp
    }

    fn line(&self, spec: &ToolSpec, kind: SayKind) -> Option<String> {
        self.soul.line_or_default(spec, kind).map(str::to_string)
    }

    /// The announce line, once per tool name per turn; `None` when nothing is said.
    pub fn announce(&mut self, spec: &ToolSpec) -> Option<String> {
        if !self.speaks_canned_lines(spec) || !self.announced.insert(spec.name.clone()) {
            return None;
        }
        self.line(spec, SayKind::Announce)
    }

    /// The after (ok) or fail line.
    pub fn confirm(&self, spec: &ToolSpec, kind: SayKind) -> Option<String> {
        if !self.speaks_canned_lines(spec) {
            return None;
        }
        self.line(spec, kind)
    }

    /// The heartbeat plan for this tool.
    pub fn heartbeat(&self, spec: &ToolSpec) -> HeartbeatPlan {
        if spec.step_kind == StepKind::Mcp && !self.reasoning {
            return HeartbeatPlan::Silent;
        }
        let lines = self.soul.heartbeats_or_default(spec);
        heartbeat_plan(self.register, self.voice_mode, self.reasoning, lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_lines_by_register_voice_mode_and_reasoning() {
        let lines = vec!["one".to_string(), "two".to_string()];
        let table = [
            (
                Register::Text,
                VoiceMode::Local,
                true,
                HeartbeatPlan::Silent,
            ),
            (
                Register::Text,
                VoiceMode::Local,
                false,
                HeartbeatPlan::Silent,
            ),
            (
                Register::Text,
                VoiceMode::Agent,
                true,
                HeartbeatPlan::Silent,
            ),
            (
                Register::Text,
                VoiceMode::Agent,
                false,
                HeartbeatPlan::Silent,
            ),
            (Register::Voice, VoiceMode::Local, true, HeartbeatPlan::Hums),
            (
                Register::Voice,
                VoiceMode::Agent,
                true,
                HeartbeatPlan::Silent,
            ),
            (
                Register::Voice,
                VoiceMode::Agent,
                false,
                HeartbeatPlan::Silent,
            ),
            (
                Register::Voice,
                VoiceMode::Local,
                false,
                HeartbeatPlan::Lines(lines.clone()),
            ),
            (
                Register::Voice,
                VoiceMode::Realtime,
                true,
                HeartbeatPlan::Silent,
            ),
            (
                Register::Voice,
                VoiceMode::Realtime,
                false,
                HeartbeatPlan::Silent,
            ),
        ];
        for (register, mode, reasoning, want) in table {
            assert_eq!(
                heartbeat_plan(register, mode, reasoning, &lines),
                want,
                "{register:?} {mode:?} reasoning={reasoning}"
            );
        }
    }

    #[test]
    fn a_tools_own_heartbeat_lines_run_in_order_and_the_last_repeats() {
        let plan = HeartbeatPlan::Lines(vec!["a".into(), "b".into()]);
        let said: Vec<_> = (0..4).filter_map(|n| plan.beat(n)).collect();
        assert_eq!(said, ["a", "b", "b", "b"]);
        let hums: Vec<_> = (0..5).filter_map(|n| HeartbeatPlan::Hums.beat(n)).collect();
        assert_eq!(hums, ["Mmm...", "Hmm...", "Mm...", "Hmmm...", "Mmm..."]);
    }

    #[test]
    fn the_first_beat_falls_at_nine_seconds_then_every_twenty_one() {
        let mut clock = HeartbeatClock::default();
        let mut at = Vec::new();
        for tick in 1..=20u64 {
            if clock.tick(false).is_some() {
                at.push(tick * 3);
            }
        }
        assert_eq!(at, [9, 30, 51]);
    }

    #[test]
    fn a_beat_is_postponed_while_a_person_must_answer_a_card() {
        let mut clock = HeartbeatClock::default();
        assert_eq!(clock.tick(false), None); // 3 s
        for _ in 0..20 {
            assert_eq!(clock.tick(true), None, "no beat while the card is up");
        }
        assert_eq!(clock.tick(false), None); // 6 s of unblocked time
        assert_eq!(clock.tick(false), Some(0)); // 9 s
    }

    #[test]
    fn an_mcp_tool_is_never_announced_confirmed_or_hummed_even_in_voice() {
        let soul = Soul::shipped();
        let spec = |step_kind| crate::tools::ToolSpec {
            name: "demo__echo".into(),
            description: String::new(),
            family: "mcp:demo".into(),
            risk: kotoba_core::protocol::Risk::Read,
            step_kind,
            timeout: None,
            takes_timeout_arg: false,
            scope: crate::tools::Scope::WorkOnly,
            lines: crate::tools::ToolLines::of(
                "Using demo.",
                &["Still in demo."],
                "demo answered.",
                "demo stumbled.",
            ),
            parameters: serde_json::json!({}),
            behaviour: crate::tools::Behaviour::default(),
        };
        let mcp = spec(StepKind::Mcp);
        let mut n = Narrator::new(&soul, Register::Voice, VoiceMode::Local, false);
        assert_eq!(n.announce(&mcp), None);
        assert_eq!(n.confirm(&mcp, SayKind::After), None);
        assert_eq!(n.confirm(&mcp, SayKind::Fail), None);
        assert_eq!(n.heartbeat(&mcp), HeartbeatPlan::Silent);
        // The same lines on a tool of another kind are said: only the kind silences it.
        let other = spec(StepKind::Tool);
        assert_eq!(n.announce(&other).as_deref(), Some("Using demo."));
        assert_eq!(
            n.confirm(&other, SayKind::After).as_deref(),
            Some("demo answered.")
        );
    }
}
