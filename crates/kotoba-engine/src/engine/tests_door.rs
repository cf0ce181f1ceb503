//! The door of a turn (docs/engine.md, "The turn as a state machine"): a turn reads its
//! settings once, when it starts; every request it makes carries that one snapshot, and
//! a change to settings.yaml mid-turn waits for the next turn.

use std::time::Duration;

use serde_json::json;

use super::testing::*;
use super::*;
use kotoba_core::protocol::Risk;

#[tokio::test]
async fn a_turn_reads_its_settings_once_at_the_door_and_a_change_mid_turn_waits_for_the_next_turn()
{
    let slow = fake("probe", Risk::Read).delay(Duration::from_millis(300));
    let r = rig_with(
        vec![call("probe", json!({})), Ok(say("done")), Ok(say("next"))],
        vec![slow],
        &[],
        "model: first-model\n",
    );
    let settings = r._home.path().join("settings.yaml");
    let engine = r.engine.clone();
    let turn = tokio::spawn(async move {
        engine
            .run_turn(text_turn("go"), TurnOptions::default())
            .await
    });
    // While the tool runs (after the first request), the owner changes the model.
    for _ in 0..200 {
        if !r.script.sent().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    std::fs::write(&settings, "model: second-model\n# changed mid-turn\n").unwrap();
    assert_eq!(
        r.engine.config.settings().model,
        "second-model",
        "the file did change"
    );
    turn.await.unwrap();
    r.engine
        .run_turn(text_turn("again"), TurnOptions::default())
        .await;
    let sent = r.script.sent();
    let models: Vec<String> = sent
        .iter()
        .map(|q| {
            q.settings
                .as_ref()
                .map(|s| s.model.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        models,
        vec!["first-model", "first-model", "second-model"],
        "both requests of the first turn carry its snapshot; the next turn reads the change"
    );
    let (Some(a), Some(b)) = (&sent[0].settings, &sent[1].settings) else {
        unreachable!("every turn's request carries its settings")
    };
    assert!(
        std::sync::Arc::ptr_eq(a, b),
        "one snapshot, not a copy per request"
    );
}
