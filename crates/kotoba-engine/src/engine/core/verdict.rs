//! What the gate decided about one call, as the core reads it ([`GateEnd`], an approved
//! [`Edit`]), and the exact line an action would run ([`gate_action`]) — the one
//! derivation of it the row, the gate, the audit and the card all read.

use serde_json::Value;

use crate::tools::{Gating, Tool, ToolOutput};
use kotoba_gate::Action;

/// What the gate lets happen to one call.
pub(crate) enum GateEnd {
    /// Run the tool now (`approved_by`: who approved its card, when one was answered).
    Proceed {
        /// The name of whoever approved the card.
        approved_by: Option<String>,
    },
    /// Run the tool now with the line the person edited before approving it.
    Edited(Edit),
    /// Do not run it; this is the output (a refusal, or the pending output of a request
    /// an earlier turn deferred).
    Stop(ToolOutput),
    /// Its card is up and a detached runner waits for it: do not run it here, and end
    /// the turn after this batch; this is its pending output.
    Deferred(ToolOutput),
}

/// The exact line an exec action would run, and its gate action.
pub(crate) fn gate_action(tool: &dyn Tool, args: &Value) -> (String, Action) {
    let spec = tool.spec();
    let field = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match spec.behaviour.gating {
        Gating::Command(arg) => {
            let command = field(arg);
            (command.clone(), Action::Shell { command })
        }
        Gating::Code(arg) => {
            let code = field(arg);
            (
                code.clone(),
                Action::Code {
                    code,
                    family: spec.name.clone(),
                },
            )
        }
        Gating::ByRisk | Gating::Card => (
            tool.action_line(args),
            Action::Tool {
                name: spec.name.clone(),
                risk: spec.risk,
                may_always: spec.behaviour.may_always,
            },
        ),
    }
}

/// An approved edit: the arguments that run, the line they hold, and the sentence the
/// model is told beside the tool's output.
pub(crate) struct Edit {
    /// The call's arguments with the edited line in place.
    pub args: Value,
    /// The edited line (what runs, what the row shows).
    pub line: String,
    /// "They edited it; this ran instead".
    pub note: String,
    /// Who edited and approved it.
    pub by: String,
}
