//! The engine driven end to end: the real model client over HTTP+SSE against the
//! scripted model server, real tools, and the assertions on what the engine *sent*.

use std::sync::Arc;

use kotoba::engine::{Answerer, Engine};
use kotoba::llm::OpenAiClient;
use kotoba::protocol::{
    Card, Decision, Ending, Event, Frame, Outcome, Phase, StepRow, TurnRequest, TurnStatus,
};
use kotoba::soul::Soul;
use kotoba::store::Store;
use kotoba::tools::builtin::builtin_registry;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use kotoba_testkit::model_server::{Reply, ScriptedModel};

struct Rig {
    server: ScriptedModel,
    engine: Arc<Engine>,
    _home: tempfile::TempDir,
}

async fn rig(api: &str, extra: &[(&str, &str)]) -> Rig {
    let server = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = server.config_with(home.path(), api, extra);
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    let store = Arc::new(Store::open(&config.paths.db).unwrap());
    let model = Arc::new(OpenAiClient::new(config.clone()));
    let engine = Engine::new(config, model, builtin_registry(), Soul::shipped(), store);
    Rig {
        server,
        engine,
        _home: home,
    }
}

/// The function-call outputs a request carried, in either wire format.
fn outputs(body: &Value) -> Vec<String> {
    let list = body
        .get("input")
        .or_else(|| body.get("messages"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.iter()
        .filter(|i| i["type"] == "function_call_output" || i["role"] == "tool")
        .map(|i| {
            i.get("output")
                .or_else(|| i.get("content"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

fn drain(rx: &mut broadcast::Receiver<Arc<Event>>) -> Vec<Frame> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        out.push(ev.frame.clone());
    }
    out
}

fn rows(frames: &[Frame]) -> Vec<StepRow> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Step(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

async fn next_card(rx: &mut broadcast::Receiver<Arc<Event>>) -> Card {
    loop {
        if let Frame::Card(c) = &rx.recv().await.unwrap().frame {
            return (**c).clone();
        }
    }
}

fn local_owner() -> Answerer {
    Answerer {
        id: "local".into(),
        name: "me".into(),
        local: true,
        via: "test".into(),
        holds: Vec::new(),
    }
}

fn every_row_closed(frames: &[Frame]) -> bool {
    let rows = rows(frames);
    rows.iter()
        .filter(|r| r.phase == Phase::Start)
        .all(|s| rows.iter().any(|d| d.id == s.id && d.phase == Phase::Done))
}

#[tokio::test]
async fn a_gated_shell_call_with_nobody_listening_feeds_back_the_unreachable_sentence_in_both_apis()
{
    for api in ["responses", "chat"] {
        let r = rig(api, &[]).await;
        r.server.push(Reply::call(
            "shell",
            json!({"command": "touch /tmp/kotoba-never"}),
        ));
        r.server
            .push(Reply::text("I could not ask you, so nothing ran."));
        let res = r
            .engine
            .run_turn(
                TurnRequest::text(
                    kotoba::protocol::Origin::Owner,
                    "s1",
                    "ann",
                    "touch that file",
                ),
                kotoba::engine::TurnOptions::default(),
            )
            .await;
        assert_eq!(res.status, TurnStatus::Completed, "{api}");
        let sent = r.server.requests();
        assert_eq!(sent.len(), 2, "{api}");
        let fed = outputs(&sent[1]);
        assert_eq!(fed.len(), 1, "{api}: {fed:?}");
        assert!(
            fed[0].contains("nobody could be asked") && fed[0].contains("NOTHING ran"),
            "{api}: {}",
            fed[0]
        );
    }
}

#[tokio::test]
async fn an_approved_shell_call_runs_for_real_and_its_output_is_cut_at_sixteen_thousand_with_a_note(
) {
    let r = rig("responses", &[]).await;
    r.server.push(Reply::call(
        "shell",
        json!({"command": "head -c 20000 /dev/zero | tr '\\0' y; echo", "timeout": 20}),
    ));
    r.server.push(Reply::text("That printed a lot of y."));
    let session = r.engine.session("terminal:t").await;
    let mut rx = session.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                TurnRequest::text(
                    kotoba::protocol::Origin::Owner,
                    "terminal:t",
                    "me",
                    "print many y",
                ),
                kotoba::engine::TurnOptions::default(),
            )
            .await
    });
    let card = next_card(&mut rx).await;
    let me = local_owner();
    r.engine
        .answer(
            &card.request_id,
            kotoba::protocol::CardAnswer::of(Decision::Approve),
            &me,
        )
        .await
        .unwrap();
    let res = turn.await.unwrap();
    assert_eq!(res.text, "That printed a lot of y.");
    let fed = outputs(&r.server.requests()[1]).pop().unwrap();
    assert!(fed.starts_with(&"y".repeat(16_000)));
    assert!(
        fed.contains("characters were not shown; only the first 16000"),
        "{}",
        &fed[16_000..]
    );
    let frames = drain(&mut rx);
    let done = rows(&frames)
        .into_iter()
        .find(|r| r.phase == Phase::Done)
        .unwrap();
    assert_eq!(done.outcome, Some(Outcome::Ok));
    assert!(done.clipped);
    assert_eq!(done.action, "$ head -c 20000 /dev/zero | tr '\\0' y; echo");
}

#[tokio::test]
async fn a_failing_command_closes_its_row_failed_from_the_exit_code() {
    let r = rig("chat", &[]).await;
    r.server.push(Reply::call(
        "shell",
        json!({"command": "echo nope >&2; exit 3"}),
    ));
    r.server.push(Reply::text("It failed with exit 3."));
    let mut rx = r.engine.session("terminal:t").await.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                TurnRequest::text(
                    kotoba::protocol::Origin::Owner,
                    "terminal:t",
                    "me",
                    "try it",
                ),
                kotoba::engine::TurnOptions::default(),
            )
            .await
    });
    let card = next_card(&mut rx).await;
    let me = local_owner();
    r.engine
        .answer(
            &card.request_id,
            kotoba::protocol::CardAnswer::of(Decision::Approve),
            &me,
        )
        .await
        .unwrap();
    turn.await.unwrap();
    let done = rows(&drain(&mut rx))
        .into_iter()
        .find(|r| r.phase == Phase::Done)
        .unwrap();
    assert_eq!(done.outcome, Some(Outcome::Failed));
    assert_eq!(done.result.as_deref(), Some("! nope"));
    let fed = outputs(&r.server.requests()[1]).pop().unwrap();
    assert!(
        fed.contains("FAILED") && fed.contains("Do not retry"),
        "{fed}"
    );
}

#[tokio::test]
async fn a_denied_card_feeds_back_the_declined_sentence() {
    let r = rig("responses", &[]).await;
    r.server
        .push(Reply::call("execute_code", json!({"code": "print(1)"})));
    r.server.push(Reply::text("Okay, I held off."));
    let mut rx = r.engine.session("terminal:t").await.subscribe();
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(
                TurnRequest::text(
                    kotoba::protocol::Origin::Owner,
                    "terminal:t",
                    "me",
                    "run it",
                ),
                kotoba::engine::TurnOptions::default(),
            )
            .await
    });
    let card = next_card(&mut rx).await;
    assert_eq!(card.action, "print(1)");
    let me = local_owner();
    r.engine
        .answer(
            &card.request_id,
            kotoba::protocol::CardAnswer::of(Decision::Deny),
            &me,
        )
        .await
        .unwrap();
    turn.await.unwrap();
    let done = rows(&drain(&mut rx))
        .into_iter()
        .find(|r| r.phase == Phase::Done)
        .unwrap();
    assert_eq!(
        (done.outcome, done.ending),
        (Some(Outcome::Refused), Some(Ending::Declined))
    );
    assert!(outputs(&r.server.requests()[1])[0].contains("DECLINED"));
}

#[tokio::test]
async fn the_words_only_final_request_carries_no_tools() {
    let r = rig("responses", &[("KOTOBA_MAX_TOOL_CALLS", "1")]).await;
    r.server
        .push(Reply::call("memory_recall", json!({"query": "tea"})));
    r.server.push(Reply::text("You like green tea, I think."));
    let res = r
        .engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s1",
                "ann",
                "what tea do I like",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let sent = r.server.requests();
    assert!(sent[0].get("tools").is_some());
    assert!(sent[1].get("tools").is_none(), "{}", sent[1]);
    assert_eq!(res.status, TurnStatus::Capped);
}

#[tokio::test]
async fn bad_model_output_ends_the_turn_with_a_sentence_and_every_row_closed() {
    // A truncated stream, in both APIs.
    for api in ["responses", "chat"] {
        let r = rig(api, &[]).await;
        r.server.push(Reply::truncated("I was about to"));
        let mut rx = r.engine.session("s1").await.subscribe();
        let res = r
            .engine
            .run_turn(
                TurnRequest::text(kotoba::protocol::Origin::Owner, "s1", "ann", "hi"),
                kotoba::engine::TurnOptions::default(),
            )
            .await;
        assert_eq!(res.status, TurnStatus::Error, "{api}");
        assert!(res.text.contains("broke off"), "{api}: {}", res.text);
        assert!(every_row_closed(&drain(&mut rx)));
    }
    // Invalid JSON arguments, then an unknown tool, then words.
    let r = rig("chat", &[]).await;
    r.server.push(Reply::raw_args(
        "write_file",
        "{\"path\": \"a.txt\", \"content\": ",
    ));
    r.server
        .push(Reply::call("teleport", json!({"to": "mars"})));
    r.server.push(Reply::text("Sorry, I fumbled that."));
    let mut rx = r.engine.session("s1").await.subscribe();
    let res = r
        .engine
        .run_turn(
            TurnRequest::text(kotoba::protocol::Origin::Owner, "s1", "ann", "write a.txt"),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(res.text, "Sorry, I fumbled that.");
    let sent = r.server.requests();
    assert!(outputs(&sent[1])[0].contains("not valid JSON"));
    assert!(outputs(&sent[2])[1].contains("There is no tool called 'teleport'"));
    assert!(every_row_closed(&drain(&mut rx)));
}

#[tokio::test]
async fn a_real_write_then_read_turn_leaves_the_file_in_the_workspace() {
    let r = rig("responses", &[]).await;
    r.server.push(Reply::call(
        "write_file",
        json!({"path": "notes/todo.md", "content": "buy tea\n"}),
    ));
    r.server
        .push(Reply::call("read_file", json!({"path": "notes/todo.md"})));
    r.server.push(Reply::text("Saved and checked."));
    let mut rx = r.engine.session("s1").await.subscribe();
    let res = r
        .engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s1",
                "ann",
                "note: buy tea",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    assert_eq!(res.text, "Saved and checked.");
    let on_disk =
        std::fs::read_to_string(r.engine.config().paths.home.join("workspace/notes/todo.md"))
            .unwrap();
    assert_eq!(on_disk, "buy tea\n");
    let frames = drain(&mut rx);
    let rs = rows(&frames);
    assert_eq!(rs.len(), 2, "the write opened a row; the read did not");
    assert!(frames.contains(&Frame::Peek {
        tool: Some("read_file".into())
    }));
    assert!(outputs(&r.server.requests()[2])[1].contains("buy tea"));
}
