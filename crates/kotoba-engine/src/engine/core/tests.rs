//! The rules of the seeds' loop, pinned at the core: events in, effects out, no
//! model, no tools running, no store, no clock. The scripted-model tests
//! (`engine/tests*.rs`) stay for the driver and the surfaces.

use std::sync::Arc;

use serde_json::{json, Value};

use super::Edit;
use super::*;
use crate::engine::narration::Narrator;
use crate::engine::testing::{calls, fake, say, Fake};
use crate::soul::Soul;
use crate::tools::{Scope, ToolOutput};
use kotoba_core::config::VoiceMode;
use kotoba_core::protocol::{
    Channel, Ending, Frame, Origin, Person, Phase, Register, Risk, SayKind, StepRow,
};

/// The registry the core looks tools up in: registered tools, configured MCP
/// servers' tool names, and the tools a job activated.
#[derive(Default)]
pub(super) struct Tools {
    pub(super) all: Vec<Arc<dyn Tool>>,
    pub(super) servers: Vec<(String, String)>,
    pub(super) active: Vec<Arc<dyn Tool>>,
}

impl Catalog for Tools {
    fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.all.iter().find(|t| t.spec().name == name).cloned()
    }
    fn server_of(&self, name: &str) -> Option<String> {
        self.servers
            .iter()
            .find(|(tool, _)| tool == name)
            .map(|(_, server)| server.clone())
    }
    fn active(&self) -> Vec<Arc<dyn Tool>> {
        self.active.clone()
    }
}

impl Tools {
    pub(super) fn of(fakes: Vec<Fake>) -> Tools {
        Tools {
            all: fakes
                .into_iter()
                .map(|f| Arc::new(f) as Arc<dyn Tool>)
                .collect(),
            ..Tools::default()
        }
    }
}

/// Generous caps, to narrow per test.
pub(super) fn caps() -> Caps {
    Caps {
        max_iter: 8,
        max_tool_calls: 6,
        fail_limit: 3,
        per_tool: 4,
        delegate: 2,
        web_search: 2,
    }
}

/// An owner's text turn.
pub(super) fn owner() -> TurnContext {
    TurnContext::companion(
        "s",
        Person::owner("ann"),
        (Register::Text, Channel::Text, None),
        Some("do it".into()),
    )
}

/// A turn over `tools` (all offered) for `ctx`.
pub(super) fn turn<'a>(
    soul: &'a Soul,
    tools: &'a Tools,
    ctx: TurnContext,
    caps: Caps,
) -> TurnState<'a> {
    let narrator = Narrator::new(soul, ctx.register, VoiceMode::Local, false);
    TurnState::new(
        Arc::new(ctx),
        Arc::new(Settings::default()),
        tools,
        (caps, narrator),
        tools.all.clone(),
        vec![Item::User {
            text: "do it".into(),
        }],
    )
}

/// Her soul, read once for every test here.
static SOUL: std::sync::LazyLock<Soul> = std::sync::LazyLock::new(Soul::shipped);

/// A started turn (the model asked) over `fakes`, all offered, for `ctx`.
fn started(fakes: Vec<Fake>, ctx: TurnContext, caps: Caps) -> TurnState<'static> {
    // A test's tools live as long as the test binary: the turn borrows them.
    let tools: &'static Tools = Box::leak(Box::new(Tools::of(fakes)));
    let mut t = turn(&SOUL, tools, ctx, caps);
    t.step(Event::Start);
    t
}

/// A reply calling `list` with ids `c0`, `c1`, … in order.
fn reply(list: &[(&str, Value)]) -> Event {
    let Ok(mut reply) = calls(list) else {
        unreachable!("calls always replies")
    };
    for (n, item) in reply.items.iter_mut().enumerate() {
        if let Item::ToolCall(c) = item {
            c.call_id = format!("c{n}");
        }
    }
    Event::Replied(reply)
}

fn words(text: &str) -> Event {
    Event::Replied(say(text))
}

fn finished(id: &str, output: ToolOutput) -> Event {
    Event::Finished {
        call_id: id.into(),
        output,
    }
}

fn gated(id: &str, end: GateEnd) -> Event {
    Event::Gated {
        call_id: id.into(),
        end,
    }
}

fn proceed() -> GateEnd {
    GateEnd::Proceed { approved_by: None }
}

fn end_of(out: &[Effect]) -> Option<LoopEnd> {
    out.iter().find_map(|e| match e {
        Effect::End(end) => Some(end.clone()),
        _ => None,
    })
}

fn asked(out: &[Effect]) -> Option<bool> {
    out.iter().find_map(|e| match e {
        Effect::Ask { words_only, .. } => Some(*words_only),
        _ => None,
    })
}

fn ran(out: &[Effect]) -> Vec<(String, Value)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Run(o) => Some((o.call_id.clone(), o.args.clone())),
            _ => None,
        })
        .collect()
}

fn gates(out: &[Effect]) -> Vec<String> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Gate { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect()
}

fn rows(out: &[Effect]) -> Vec<StepRow> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Emit(Frame::Step(row)) => Some(row.clone()),
            _ => None,
        })
        .collect()
}

fn says(out: &[Effect]) -> Vec<(SayKind, String)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Emit(Frame::Say { kind, text }) => Some((*kind, text.clone())),
            _ => None,
        })
        .collect()
}

/// What the model reads back for each call, in order.
fn results(t: &TurnState<'_>) -> Vec<String> {
    t.items()
        .iter()
        .filter_map(|i| match i {
            Item::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_turn_starts_by_asking_the_model_offering_its_tools_and_words_end_it_completed() {
    let (soul, tools) = (
        Soul::shipped(),
        Tools::of(vec![fake("web_search", Risk::Read)]),
    );
    let mut t = turn(&soul, &tools, owner(), caps());
    assert_eq!(asked(&t.step(Event::Start)), Some(false));
    let out = t.step(words("Hello."));
    assert_eq!(
        end_of(&out),
        Some(LoopEnd {
            text: "Hello.".into(),
            status: TurnStatus::Completed
        })
    );
    assert!(ends(&out) && t.ended());
    assert!(
        t.step(Event::Start).is_empty(),
        "an ended turn ignores every event"
    );
}

#[test]
fn a_read_only_call_peeks_and_runs_without_a_row_or_a_gate() {
    let mut t = started(vec![fake("web_search", Risk::Read)], owner(), caps());
    let out = t.step(reply(&[("web_search", json!({"q": "x"}))]));
    assert!(gates(&out).is_empty() && rows(&out).is_empty());
    assert_eq!(ran(&out), vec![("c0".into(), json!({"q": "x"}))]);
    assert!(out.iter().any(|e| matches!(e,
        Effect::Emit(Frame::Peek { tool: Some(t) }) if t == "web_search")));
    let out = t.step(finished("c0", ToolOutput::ok("found it")));
    assert_eq!(
        asked(&out),
        Some(false),
        "the result goes back to the model"
    );
    assert_eq!(results(&t), vec!["found it".to_string()]);
}

#[test]
fn an_action_opens_its_row_goes_to_the_gate_and_runs_only_once_let_through() {
    let mut t = started(vec![fake("shell", Risk::Exec)], owner(), caps());
    let out = t.step(reply(&[("shell", json!({"command": "ls"}))]));
    assert_eq!(gates(&out), vec!["c0".to_string()]);
    assert!(ran(&out).is_empty(), "nothing runs before the gate says so");
    let open = rows(&out);
    assert_eq!((open.len(), open[0].phase), (1, Phase::Start));
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::Emit(Frame::Working { on: true }))));
    let out = t.step(gated("c0", proceed()));
    assert!(
        matches!(&out[0], Effect::Persist(Persist::RunStarted { line, .. }) if line == "ls"),
        "the executed row is written before the run: {out:?}"
    );
    assert_eq!(ran(&out).len(), 1);
    let out = t.step(finished("c0", ToolOutput::exited(0, "a\nb")));
    let closed = rows(&out);
    assert_eq!(closed[0].outcome, Some(Outcome::Ok));
    assert!(out.iter().any(|e| matches!(
        e,
        Effect::Persist(Persist::Step {
            row: Some(_),
            outcome: Outcome::Ok,
            ..
        })
    )));
    let out = t.step(words("Done."));
    assert!(out.iter().any(|e| matches!(e, Effect::WorkingOff)));
}

#[test]
fn a_refusal_at_the_gate_closes_the_row_refused_runs_nothing_and_the_model_reads_why() {
    let mut t = started(vec![fake("shell", Risk::Exec)], owner(), caps());
    t.step(reply(&[("shell", json!({"command": "rm -r x"}))]));
    let no = ToolOutput::refused_with(Ending::Declined, "They said no.");
    let out = t.step(gated("c0", GateEnd::Stop(no)));
    assert!(ran(&out).is_empty());
    assert!(!out
        .iter()
        .any(|e| matches!(e, Effect::Persist(Persist::RunStarted { .. }))));
    let row = &rows(&out)[0];
    assert_eq!(
        (row.outcome, row.ending),
        (Some(Outcome::Refused), Some(Ending::Declined))
    );
    assert_eq!(results(&t), vec!["They said no.".to_string()]);
}

#[test]
fn an_edit_on_the_card_redraws_the_row_runs_the_edited_line_and_tells_the_model() {
    let mut t = started(vec![fake("shell", Risk::Exec)], owner(), caps());
    t.step(reply(&[("shell", json!({"command": "ls /"}))]));
    let edit = Edit {
        args: json!({"command": "ls ."}),
        line: "ls .".into(),
        note: "[EDITED] ".into(),
        by: "ann".into(),
    };
    let out = t.step(gated("c0", GateEnd::Edited(edit)));
    assert_eq!(rows(&out)[0].action, "$ ls .", "the row shows what runs");
    assert_eq!(ran(&out), vec![("c0".into(), json!({"command": "ls ."}))]);
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::Run(o) if o.approved_by.as_deref() == Some("ann"))));
    t.step(finished("c0", ToolOutput::exited(0, "x")));
    assert!(results(&t)[0].starts_with("[EDITED] x"));
}

#[test]
fn the_outcome_comes_from_the_witnesses_not_from_what_the_output_says() {
    let mut t = started(vec![fake("shell", Risk::Exec)], owner(), caps());
    t.step(reply(&[("shell", json!({"command": "make"}))]));
    t.step(gated("c0", proceed()));
    let out = t.step(finished("c0", ToolOutput::exited(2, "Success! all done")));
    assert_eq!(rows(&out)[0].outcome, Some(Outcome::Failed));
    assert!(out.iter().any(|e| matches!(e,
        Effect::Emit(Frame::Face { expression }) if expression == "fail")));
    assert!(results(&t)[0].contains("This call FAILED"));
}

#[test]
fn the_turns_tool_call_cap_refuses_the_call_past_it_and_then_tools_are_withdrawn() {
    let mut t = started(
        vec![fake("web_search", Risk::Read)],
        owner(),
        Caps {
            max_tool_calls: 1,
            ..caps()
        },
    );
    t.step(reply(&[
        ("web_search", json!({"q": "a"})),
        ("web_search", json!({"q": "b"})),
    ]));
    let out = t.step(finished("c0", ToolOutput::ok("a")));
    assert!(ran(&out).is_empty(), "the second call does not run");
    assert_eq!(results(&t)[1], crate::engine::budget::turn_cap_sentence(1));
    assert_eq!(asked(&out), Some(true), "the next request offers no tools");
    let end = end_of(&t.step(words("Here is a."))).map(|e| e.status);
    assert_eq!(
        end,
        Some(TurnStatus::Capped),
        "a chain a cap cut is never done"
    );
}

#[test]
fn a_tools_own_cap_refuses_the_call_past_it() {
    let mut t = started(
        vec![fake("web_search", Risk::Read)],
        owner(),
        Caps {
            web_search: 1,
            per_tool: 1,
            ..caps()
        },
    );
    t.step(reply(&[
        ("web_search", json!({"q": "a"})),
        ("web_search", json!({"q": "b"})),
    ]));
    t.step(finished("c0", ToolOutput::ok("a")));
    let said = results(&t);
    assert!(said[0].contains("That was the last web search"), "{said:?}");
    assert_eq!(
        said[1],
        crate::engine::budget::per_tool_cap_sentence("web_search", 1)
    );
}

#[test]
fn an_exact_repeat_runs_nothing_and_is_answered_by_the_earlier_outcome() {
    let mut t = started(vec![fake("shell", Risk::Exec)], owner(), caps());
    let same = json!({"command": "make"});
    t.step(reply(&[("shell", same.clone()), ("shell", same.clone())]));
    t.step(gated("c0", proceed()));
    let out = t.step(finished("c0", ToolOutput::exited(1, "boom")));
    assert!(gates(&out).is_empty() && ran(&out).is_empty(), "{out:?}");
    assert_eq!(
        results(&t)[1],
        crate::engine::budget::repeat_sentence("shell", Outcome::Failed)
    );
}

#[test]
fn the_door_refuses_unknown_switched_off_withheld_and_out_of_scope_names_with_their_sentences() {
    let mut tools = Tools::of(vec![
        fake("shell", Risk::Exec),
        fake("memory_write", Risk::Write).family("memory"),
        fake("delegate_job", Risk::Read).scope(Scope::WorkOnly),
    ]);
    tools.servers = vec![("browse".into(), "browser".into())];
    let soul = Soul::shipped();
    let mut t = turn(&soul, &tools, owner(), caps());
    t.settings = Arc::new(Settings {
        disabled_toolsets: vec!["memory".into()],
        ..Settings::default()
    });
    t.offered.retain(|t| t.spec().name != "shell"); // withheld from this turn
    t.step(Event::Start);
    let out = t.step(reply(&[
        ("nope", json!({})),
        ("memory_write", json!({})),
        ("shell", json!({"command": "ls"})),
        ("delegate_job", json!({})),
        ("browse", json!({})),
    ]));
    assert!(gates(&out).is_empty() && ran(&out).is_empty());
    assert_eq!(
        results(&t),
        vec![
            unknown_sentence("nope"),
            switched_off_sentence("memory_write", "memory"),
            withheld_sentence("shell"),
            work_only_sentence("delegate_job"),
            work_only_sentence("browse"),
        ]
    );
    assert_eq!(
        t.spent.failures, 1,
        "an unknown name is a failure, a refusal is not"
    );
}

#[test]
fn arguments_that_are_not_a_json_object_run_nothing_and_say_why() {
    let mut t = started(vec![fake("web_search", Risk::Read)], owner(), caps());
    let Ok(mut r) = calls(&[("web_search", json!({}))]) else {
        unreachable!()
    };
    if let Item::ToolCall(c) = &mut r.items[0] {
        c.arguments = "[1, 2".into();
    }
    let out = t.step(Event::Replied(r));
    assert!(ran(&out).is_empty());
    assert!(results(&t)[0].contains("was NOT run: the arguments are not valid JSON"));
}

#[test]
fn step_zero_refuses_a_jobs_first_call_unless_it_opens_the_matching_skill() {
    let ctx = TurnContext {
        step_zero: Some("deploy".into()),
        ..owner()
    };
    let mut t = started(
        vec![
            fake("web_search", Risk::Read),
            fake("skill_view", Risk::Read),
        ],
        ctx,
        caps(),
    );
    let out = t.step(reply(&[("web_search", json!({"q": "x"}))]));
    assert!(ran(&out).is_empty());
    assert_eq!(results(&t)[0], call::step_zero_sentence("deploy"));
    let out = t.step(reply(&[("skill_view", json!({"name": "deploy"}))]));
    assert_eq!(ran(&out).len(), 1, "the matching skill_view passes");
}

#[test]
fn a_deferred_call_ends_the_turn_after_its_batch_with_the_on_screen_sentence() {
    let mut t = started(
        vec![fake("shell", Risk::Exec), fake("web_search", Risk::Read)],
        owner(),
        caps(),
    );
    t.step(reply(&[
        ("shell", json!({"command": "ls"})),
        ("web_search", json!({"q": "x"})),
    ]));
    let out = t.step(gated(
        "c0",
        GateEnd::Deferred(ToolOutput::pending("waiting")),
    ));
    assert_eq!(rows(&out)[0].outcome, Some(Outcome::Pending));
    assert!(out.iter().any(|e| matches!(e, Effect::Release)));
    assert_eq!(ran(&out).len(), 1, "the rest of the batch still runs");
    let out = t.step(finished("c1", ToolOutput::ok("x")));
    let end = end_of(&out).map(|e| (e.status, e.text));
    assert_eq!(
        end,
        Some((
            TurnStatus::Completed,
            crate::engine::deferred::ASKED_ON_SCREEN.to_string()
        ))
    );
    assert_eq!(asked(&out), None, "the model is not asked again");
}

#[test]
fn a_cut_turn_closes_its_open_row_as_interrupted_kept_for_a_turn_not_for_a_job() {
    for job in [false, true] {
        let ctx = TurnContext {
            run_id: job.then(|| "job-1".to_string()),
            ..owner()
        };
        let mut t = started(vec![fake("shell", Risk::Exec)], ctx, caps());
        t.step(reply(&[("shell", json!({"command": "sleep 9"}))]));
        t.step(gated("c0", proceed()));
        let out = t.step(Event::Cancelled);
        assert_eq!(rows(&out)[0].outcome, Some(Outcome::Interrupted));
        let kept = out
            .iter()
            .any(|e| matches!(e, Effect::Persist(Persist::Interrupted(_))));
        assert_eq!(
            kept, !job,
            "a turn keeps its cut row; a job's panel is its record"
        );
        assert_eq!(
            end_of(&out).map(|e| e.status),
            Some(TurnStatus::Interrupted)
        );
        assert!(!t.rows.any_open());
        assert!(t.step(finished("c0", ToolOutput::ok("late"))).is_empty());
    }
}

#[test]
fn the_heartbeat_beats_at_nine_seconds_then_every_twenty_one_never_while_blocked() {
    let ctx = TurnContext {
        register: Register::Voice,
        ..owner()
    };
    let mut t = started(vec![fake("probe", Risk::Read)], ctx, caps());
    t.step(reply(&[("probe", json!({"q": "x"}))]));
    let tick = |t: &mut TurnState<'_>, blocked| {
        says(&t.step(Event::Tick {
            call_id: "c0".into(),
            blocked,
        }))
    };
    // Each tick is 3 s: beats at 9 s and 30 s of time not blocked on a person.
    let mut beats = Vec::new();
    for n in 1..=10 {
        let blocked = n == 2; // a card held for one tick does not count
        for (kind, text) in tick(&mut t, blocked) {
            assert_eq!(kind, SayKind::Heartbeat);
            beats.push((n, text));
        }
    }
    assert_eq!(
        beats,
        vec![(4, "beat one".to_string())],
        "9 s counted at the 4th tick"
    );
    for n in 11..=11 {
        assert_eq!(tick(&mut t, false).len(), 1, "30 s counted at tick {n}");
    }
}

#[test]
fn a_voice_turn_announces_a_tool_once_and_says_its_after_or_fail_line() {
    let ctx = TurnContext {
        register: Register::Voice,
        ..owner()
    };
    let mut t = started(vec![fake("probe", Risk::Read)], ctx, caps());
    let out = t.step(reply(&[
        ("probe", json!({"q": "a"})),
        ("probe", json!({"q": "b"})),
    ]));
    assert_eq!(
        says(&out),
        vec![(SayKind::Announce, "announcing probe".into())]
    );
    let out = t.step(finished("c0", ToolOutput::ok("a")));
    assert_eq!(says(&out)[0], (SayKind::After, "probe done".into()));
    assert_eq!(says(&out).len(), 1, "announced once per tool per turn");
    let out = t.step(finished("c1", ToolOutput::failed("b")));
    assert_eq!(says(&out), vec![(SayKind::Fail, "probe failed".into())]);
}

#[test]
fn a_call_past_its_budget_ends_failed_with_the_budget_sentence() {
    let mut t = started(vec![fake("web_search", Risk::Read)], owner(), caps());
    t.step(reply(&[("web_search", json!({"q": "x"}))]));
    t.step(Event::BudgetSpent {
        call_id: "c0".into(),
    });
    let said = results(&t);
    assert!(said[0].contains("ran past its budget of 30 s"), "{said:?}");
    assert_eq!(t.spent.failures, 1);
}

#[test]
fn calls_made_when_tools_were_withdrawn_run_nothing_and_end_the_turn_out_of_steps() {
    let mut t = started(
        vec![fake("web_search", Risk::Read)],
        owner(),
        Caps {
            max_iter: 2,
            ..caps()
        },
    );
    t.step(reply(&[("web_search", json!({"q": "a"}))]));
    let out = t.step(finished("c0", ToolOutput::ok("a")));
    assert_eq!(asked(&out), Some(true), "the last iteration is words-only");
    let out = t.step(reply(&[("web_search", json!({"q": "b"}))]));
    assert!(ran(&out).is_empty());
    let end = end_of(&out).map(|e| (e.status, e.text));
    assert_eq!(end, Some((TurnStatus::Capped, OUT_OF_STEPS.to_string())));
}

#[test]
fn a_model_failure_ends_the_turn_as_an_error_with_its_sentence() {
    let (soul, tools) = (Soul::shipped(), Tools::default());
    let mut t = turn(&soul, &tools, owner(), caps());
    t.step(Event::Start);
    let out = t.step(Event::ModelFailed("The model is down.".into()));
    assert!(
        matches!(&out[0], Effect::Emit(Frame::TextDelta { text }) if text == "The model is down.")
    );
    assert_eq!(end_of(&out).map(|e| e.status), Some(TurnStatus::Error));
}

#[test]
fn events_that_answer_nothing_the_turn_asked_are_ignored() {
    let tools = Tools::of(vec![fake("shell", Risk::Exec)]);
    let mut t = turn(&SOUL, &tools, owner(), caps());
    assert!(
        t.step(words("early")).is_empty(),
        "no reply before the turn starts"
    );
    t.step(Event::Start);
    assert!(t.step(finished("c0", ToolOutput::ok("?"))).is_empty());
    t.step(reply(&[("shell", json!({"command": "ls"}))]));
    assert!(
        t.step(finished("c0", ToolOutput::ok("?"))).is_empty(),
        "not run yet"
    );
    assert!(
        t.step(gated("c9", proceed())).is_empty(),
        "another call's gate"
    );
    assert!(t.step(words("again")).is_empty(), "no request is out");
    assert_eq!(ran(&t.step(gated("c0", proceed()))).len(), 1);
    assert!(t.step(gated("c0", proceed())).is_empty(), "gated once");
}

#[test]
fn a_guests_role_granted_tool_is_a_row_that_asks_even_to_read() {
    let ctx = TurnContext {
        person: Person {
            origin: Origin::Discord {
                user: 7,
                owner: false,
            },
            author: "bo".into(),
            granted: vec!["files".into()],
        },
        ..owner()
    };
    let mut t = started(
        vec![fake("files_read", Risk::Read).family("files")],
        ctx,
        caps(),
    );
    let out = t.step(reply(&[("files_read", json!({"path": "a"}))]));
    assert_eq!(gates(&out), vec!["c0".to_string()]);
    assert_eq!(rows(&out).len(), 1);
}
