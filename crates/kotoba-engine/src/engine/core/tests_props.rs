//! Random event orders through the core: replies with random calls (repeats,
//! unknown names, actions and reads), gates that let through, refuse, defer or edit,
//! tools that work, fail or run past their budget, heartbeat ticks, stray events
//! answering nothing, and cuts at any point. Whatever the order, no row is left open,
//! no call runs twice and the turn always ends.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use serde_json::json;

use super::tests::{caps, owner, turn, Tools};
use super::Edit;
use super::*;
use crate::engine::testing::fake;
use crate::llm::ToolCall;
use crate::soul::Soul;
use kotoba_core::protocol::{Ending, Phase};

/// How the world answers the turn's next wait.
#[derive(Debug, Clone)]
enum Choice {
    /// The model replies with these calls (tool index, argument index); none: words.
    Reply(Vec<(usize, usize)>),
    /// The model request fails.
    ModelFails,
    /// The gate: 0 let through, 1 refused, 2 deferred, 3 edited.
    Gate(u8),
    /// The run: 0 ok, 1 failed, 2 past its budget, 3 a tick first.
    Run(u8),
    /// An event that answers nothing the turn asked.
    Stray(u8),
    /// The turn is cut.
    Cancel,
}

const NAMES: [&str; 4] = ["shell", "web_search", "probe", "nope"];

fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![
        4 => prop::collection::vec((0..NAMES.len(), 0..3usize), 0..4).prop_map(Choice::Reply),
        1 => Just(Choice::ModelFails),
        4 => (0..4u8).prop_map(Choice::Gate),
        4 => (0..4u8).prop_map(Choice::Run),
        2 => (0..5u8).prop_map(Choice::Stray),
        1 => Just(Choice::Cancel),
    ]
}

/// What the core waits for.
#[derive(Debug, Clone, PartialEq)]
enum Wait {
    Model,
    Gate(String),
    Run(String),
    Nothing,
}

/// Everything one turn did, checked as it goes.
#[derive(Default)]
struct Watch {
    /// Calls by id: (name, arguments) as the model wrote them.
    calls: HashMap<String, (String, String)>,
    /// Calls whose run was ordered.
    ran: HashSet<String>,
    /// Calls the gate let through.
    let_through: HashSet<String>,
    /// (name, arguments) of calls that reached the gate or ran.
    reached: HashSet<(String, String)>,
    /// Rows open now.
    open: HashSet<String>,
    /// Rows closed.
    closed: HashSet<String>,
    asks: u32,
    ended: bool,
}

impl Watch {
    /// Check one step's effects; what the turn waits for next.
    fn see(&mut self, out: &[Effect]) -> Result<Wait, TestCaseError> {
        let mut wait = Wait::Nothing;
        // What the driver must wait on comes last: nothing is left undone meanwhile.
        if let Some(at) = out
            .iter()
            .position(|e| matches!(e, Effect::Ask { .. } | Effect::Gate { .. } | Effect::Run(_)))
        {
            prop_assert_eq!(
                at,
                out.len() - 1,
                "an answered effect before others: {:?}",
                out
            );
        }
        for e in out {
            prop_assert!(!self.ended, "an effect after the end: {e:?}");
            match e {
                Effect::Ask { .. } => {
                    self.asks += 1;
                    wait = Wait::Model;
                }
                Effect::Gate { call_id, .. } => {
                    self.reach(call_id)?;
                    wait = Wait::Gate(call_id.clone());
                }
                Effect::Run(o) => {
                    prop_assert!(
                        self.ran.insert(o.call_id.clone()),
                        "{} ran twice",
                        o.call_id
                    );
                    let name = &self.calls[&o.call_id].0;
                    if name == "shell" {
                        prop_assert!(
                            self.let_through.contains(&o.call_id),
                            "an action ran ungated"
                        );
                    } else {
                        self.reach(&o.call_id)?;
                    }
                    wait = Wait::Run(o.call_id.clone());
                }
                Effect::Emit(Frame::Step(row)) => match row.phase {
                    Phase::Start => {
                        // Drawn again while open (an edit on its card) is a redraw.
                        prop_assert!(!self.closed.contains(&row.id), "a closed row reopened");
                        self.open.insert(row.id.clone());
                    }
                    Phase::Done => {
                        prop_assert!(
                            self.open.remove(&row.id),
                            "{} closed twice or never opened",
                            row.id
                        );
                        self.closed.insert(row.id.clone());
                    }
                },
                Effect::End(_) => {
                    prop_assert!(self.open.is_empty(), "rows left open: {:?}", self.open);
                    self.ended = true;
                    wait = Wait::Nothing;
                }
                _ => {}
            }
        }
        Ok(wait)
    }

    /// A call reached the gate or ran: the same call (name and arguments) never twice.
    fn reach(&mut self, id: &str) -> Result<(), TestCaseError> {
        let call = self.calls[id].clone();
        prop_assert!(
            self.reached.insert(call.clone()),
            "an exact repeat reached the gate or ran: {call:?}"
        );
        Ok(())
    }
}

/// The reply a choice makes, its calls numbered from `next`.
fn reply(list: &[(usize, usize)], next: &mut usize, watch: &mut Watch) -> Event {
    let items = match list.is_empty() {
        true => vec![Item::Assistant {
            text: "words".into(),
        }],
        false => list
            .iter()
            .map(|&(tool, arg)| {
                let id = format!("c{next}");
                *next += 1;
                let (name, arguments) = (NAMES[tool], format!("{{\"command\":\"{arg}\"}}"));
                watch
                    .calls
                    .insert(id.clone(), (name.into(), arguments.clone()));
                Item::ToolCall(ToolCall {
                    call_id: id,
                    name: name.into(),
                    arguments,
                    raw: None,
                })
            })
            .collect(),
    };
    Event::Replied(ModelReply {
        items,
        ..Default::default()
    })
}

fn gate(id: &str, n: u8, watch: &mut Watch) -> Event {
    let end = match n {
        0 => GateEnd::Proceed { approved_by: None },
        1 => GateEnd::Stop(ToolOutput::refused_with(Ending::Declined, "no")),
        2 => GateEnd::Deferred(ToolOutput::pending("waiting")),
        _ => GateEnd::Edited(Edit {
            args: json!({"command": "edited"}),
            line: "edited".into(),
            note: "[edited]".into(),
            by: "ann".into(),
        }),
    };
    if matches!(end, GateEnd::Proceed { .. } | GateEnd::Edited(_)) {
        watch.let_through.insert(id.to_string());
    }
    Event::Gated {
        call_id: id.into(),
        end,
    }
}

fn run(id: &str, n: u8) -> Event {
    let call_id = id.to_string();
    match n {
        0 => Event::Finished {
            call_id,
            output: ToolOutput::exited(0, "ok"),
        },
        1 => Event::Finished {
            call_id,
            output: ToolOutput::exited(1, "failed"),
        },
        2 => Event::BudgetSpent { call_id },
        _ => Event::Tick {
            call_id,
            blocked: false,
        },
    }
}

fn stray(n: u8) -> Event {
    let call_id = "stray".to_string();
    match n {
        0 => Event::Start,
        1 => Event::Finished {
            call_id,
            output: ToolOutput::ok("?"),
        },
        2 => Event::Gated {
            call_id,
            end: GateEnd::Proceed { approved_by: None },
        },
        3 => Event::BudgetSpent { call_id },
        _ => Event::Tick {
            call_id,
            blocked: true,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn random_event_orders_never_leave_a_row_open_never_run_a_call_twice_and_always_end(
        choices in prop::collection::vec(choice(), 0..60),
        max_iter in 1..6u32,
        max_tool_calls in 1..6u32,
    ) {
        let tools = Tools::of(vec![
            fake("shell", Risk::Exec),
            fake("web_search", Risk::Read),
            fake("probe", Risk::Read),
        ]);
        let soul = Soul::shipped();
        let caps = Caps { max_iter, max_tool_calls, ..caps() };
        let mut t = turn(&soul, &tools, owner(), caps);
        let mut watch = Watch::default();
        let mut next = 0;
        let mut wait = watch.see(&t.step(Event::Start))?;
        let mut forced = 0;
        let mut choices = choices.into_iter();
        while !watch.ended {
            let event = match (choices.next(), &wait) {
                (Some(Choice::Cancel), _) => Event::Cancelled,
                (Some(Choice::Stray(n)), _) => stray(n),
                (Some(Choice::ModelFails), Wait::Model) => Event::ModelFailed("down".into()),
                (Some(Choice::Reply(list)), Wait::Model) => reply(&list, &mut next, &mut watch),
                (Some(Choice::Gate(n) | Choice::Run(n)), Wait::Gate(id)) => gate(&id.clone(), n, &mut watch),
                (Some(Choice::Gate(n) | Choice::Run(n)), Wait::Run(id)) => run(id, n),
                (Some(_), Wait::Model) => reply(&[(0, 0), (1, 1)], &mut next, &mut watch),
                (Some(_), Wait::Gate(id)) => gate(&id.clone(), 0, &mut watch),
                (Some(_), Wait::Run(id)) => run(id, 0),
                // Past the random part: the plainest answers, until it ends.
                (None, Wait::Model) => reply(&[], &mut next, &mut watch),
                (None, Wait::Gate(id)) => gate(&id.clone(), 0, &mut watch),
                (None, Wait::Run(id)) => run(id, 0),
                (_, Wait::Nothing) => {
                    return Err(TestCaseError::fail("the core waits for nothing and has not ended"));
                }
            };
            let out = t.step(event);
            // A tick or a stray event leaves the wait as it was.
            let seen = watch.see(&out)?;
            if seen != Wait::Nothing || watch.ended {
                wait = seen;
            }
            forced += 1;
            prop_assert!(forced < 1_000, "the turn did not end");
        }
        prop_assert!(t.ended() && !t.rows.any_open());
        prop_assert!(watch.asks <= max_iter, "{} requests over a cap of {max_iter}", watch.asks);
        prop_assert!(watch.ran.len() as u32 <= max_tool_calls);
    }
}
