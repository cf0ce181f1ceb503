//! The store on a turn's path (docs/engine.md §6, docs/deploy.md): its round trips,
//! counted by the store itself on both backends; a turn never blocks the runtime while
//! it waits on a distant database; a full disk refuses the turn whole.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::mpsc;

use super::testing::say;
use super::{Engine, TurnOptions};
use crate::llm::{LlmError, ModelClient, ModelReply, ModelRequest};
use crate::soul::Soul;
use crate::tools::Registry;
use kotoba_core::config::Config;
use kotoba_core::protocol::{Origin, TurnRequest};
use kotoba_store::Store;

/// A model that notes how many round trips the store had made when it was asked.
struct Counting {
    store: Arc<Store>,
    at_request: Mutex<Vec<u64>>,
}

#[async_trait]
impl ModelClient for Counting {
    async fn stream(
        &self,
        _req: &ModelRequest,
        _deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<ModelReply, LlmError> {
        self.at_request
            .lock()
            .unwrap()
            .push(self.store.round_trips());
        Ok(say("Hello there."))
    }
}

/// An engine on `store` whose model answers "Hello there." and counts round trips; its
/// data folder lives as long as the returned guard.
fn counting_engine(store: &Arc<Store>) -> (Arc<Engine>, Arc<Counting>, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let config = Config::for_home(home.path(), &[("KOTOBA_REASONING_EFFORT", "off")]);
    let model = Arc::new(Counting {
        store: store.clone(),
        at_request: Mutex::default(),
    });
    let engine = Engine::new(
        config,
        model.clone(),
        Registry::new(),
        Soul::shipped(),
        store.clone(),
    );
    (engine, model, home)
}

/// Wait until the engine's own start-up work (the reminder scheduler's first look) has
/// left the store, so the count is the turn's alone.
async fn settled(store: &Store) {
    loop {
        let before = store.round_trips();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if store.round_trips() == before {
            return;
        }
    }
}

#[tokio::test]
async fn a_plain_turn_makes_few_round_trips_to_the_store() {
    for db in kotoba_store::testing::each() {
        let store = Arc::new(db.open().await);
        let (engine, model, _home) = counting_engine(&store);
        settled(&store).await;
        for turn in 0..2 {
            let before = store.round_trips();
            let req = TurnRequest::text(Origin::Owner, "web:rt", "owner", "hello");
            let done = engine.run_turn(req, TurnOptions::default()).await;
            assert_eq!(done.text, "Hello there.");
            let first = model.at_request.lock().unwrap()[turn] - before;
            let all = store.round_trips() - before;
            // The first turn also reads the conversation (one round trip); later ones
            // find it loaded.
            let (most_first, most_all) = if turn == 0 { (2, 3) } else { (1, 2) };
            assert!(
                first <= most_first && all <= most_all,
                "{}: turn {turn}: {first} round trips before the model, {all} in all",
                db.name
            );
        }
    }
}

#[tokio::test]
async fn a_full_disk_refuses_the_turn_in_one_sentence_and_writes_nothing_half() {
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&home.path().join("k.db")).unwrap());
    let (engine, model, _data) = counting_engine(&store);
    let req = TurnRequest::text(Origin::Owner, "web:full", "owner", "hello");
    assert_eq!(
        engine.run_turn(req, TurnOptions::default()).await.text,
        "Hello there."
    );
    // The file may not grow past what it holds now: SQLite says the disk is full.
    kotoba_store::testing::raw(&store, async |c| {
        let pages = c.query("PRAGMA page_count", &[]).await?[0].int(0)?;
        c.query(&format!("PRAGMA max_page_count = {pages}"), &[])
            .await
    })
    .await
    .unwrap();
    let long = "a line far too long for the room left ".repeat(400);
    let req = TurnRequest::text(Origin::Owner, "web:full", "owner", &long);
    let done = engine.run_turn(req, TurnOptions::default()).await;
    assert!(done.store_unreachable, "{done:?}");
    assert_eq!(done.text, kotoba_core::protocol::STORE_UNREACHABLE);
    assert_eq!(
        model.at_request.lock().unwrap().len(),
        1,
        "the model was not asked"
    );
    assert!(!store.is_reachable());
    let lines = store.history("web:full", 10).await.unwrap();
    assert_eq!(lines.len(), 2, "nothing of the refused turn: {lines:?}");
    let marks = kotoba_store::testing::raw(&store, async |c| {
        c.query("SELECT COUNT(*) FROM inflight", &[]).await
    })
    .await
    .unwrap()[0]
        .int(0)
        .unwrap();
    assert_eq!(marks, 0, "no running mark left");
}

use kotoba_store::testing::proxy;

#[tokio::test(flavor = "current_thread")]
async fn a_turn_never_blocks_the_runtime_while_it_waits_on_a_distant_store() {
    let Some(url) = kotoba_store::testing::postgres_url() else {
        return;
    };
    let target = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    // The proxy forwards on a runtime of its own: a blocked runtime thread here shows as
    // a stall, never as a hang.
    let proxy = proxy::Proxy::start_apart(target.parse().unwrap(), std::time::Duration::ZERO);
    let through = proxy.url_through(&url);
    let store = Store::connect(&through).await.unwrap();
    let store = Arc::new(store);
    let (engine, _model, _data) = counting_engine(&store);
    // A first turn nearby builds what a process builds once (the tokenizer's tables).
    let req = TurnRequest::text(Origin::Owner, "web:near", "owner", "warm up");
    engine.run_turn(req, TurnOptions::default()).await;
    // The database is now 50 ms away each way: one round trip waits 100 ms.
    proxy.set_delay(std::time::Duration::from_millis(50));
    let worst = Arc::new(Mutex::new(std::time::Duration::ZERO));
    let w = worst.clone();
    let ticker = tokio::spawn(async move {
        let mut last = std::time::Instant::now();
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            let now = std::time::Instant::now();
            let mut g = w.lock().unwrap();
            *g = (*g).max(now - last);
            last = now;
        }
    });
    let started = std::time::Instant::now();
    for text in ["hello", "again"] {
        let req = TurnRequest::text(Origin::Owner, "web:far", "owner", text);
        assert_eq!(
            engine.run_turn(req, TurnOptions::default()).await.text,
            "Hello there."
        );
    }
    ticker.abort();
    let took = started.elapsed();
    let worst = *worst.lock().unwrap();
    // Five round trips of 100 ms were waited on (a conversation read, two turns' lines
    // and answers); the one runtime thread kept ticking.
    assert!(took >= std::time::Duration::from_millis(450), "{took:?}");
    assert!(
        worst < std::time::Duration::from_millis(60),
        "the runtime stalled {worst:?} while the turns waited on the store"
    );
}
