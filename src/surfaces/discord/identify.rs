//! Starting shards when several processes share a bot: Discord lets a bot IDENTIFY once
//! per 5 s in each identify bucket (shard id modulo `max_concurrency`), across all its
//! connections. serenity spaces the starts of one process; across processes each start
//! first takes its bucket's turn in the shared store (docs/deploy.md). Shards start one
//! at a time, lowest id first as they are asked for.

use std::sync::Arc;
use std::time::Duration;

use serenity::all::ShardId;
use serenity::gateway::ShardManager;
use tokio::sync::mpsc;

use crate::store::Store;

/// How long a start holds its bucket's turn before its shard boots: serenity's restart
/// first waits up to 5 s for the shard's (absent) runner to stop.
const WAIT_MS: i64 = 6_500;
/// How long the turn is held after the shard booted (its IDENTIFY goes out then):
/// Discord's 5 s, and half a second for the connection.
const SPACING_MS: i64 = 5_500;
/// How often a start waiting for its turn asks again.
const ASK_EVERY: Duration = Duration::from_millis(250);

/// Whether a shard should still start when its turn comes (`auto/N`: its lease is
/// still this process's).
pub(super) type StillWanted =
    Arc<dyn Fn(u32) -> futures::future::BoxFuture<'static, bool> + Send + Sync>;

/// A queue of shards to start, one at a time, each in its bucket's turn.
pub(super) fn starter(
    manager: Arc<ShardManager>,
    store: Arc<Store>,
    max_concurrency: u32,
    holder: String,
    still_wanted: StillWanted,
) -> mpsc::UnboundedSender<u32> {
    let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
    let buckets = max_concurrency.max(1);
    tokio::spawn(async move {
        while let Some(shard) = rx.recv().await {
            let bucket = shard % buckets;
            take_turn(&store, bucket, &holder).await;
            if !still_wanted(shard).await {
                let _ = store.hold_identify(bucket, &holder, 0).await;
                continue;
            }
            tracing::info!("Discord shards: starting shard {shard}");
            // Returns once the shard is handed to serenity's queue, which identifies.
            manager.restart(ShardId(shard)).await;
            if let Err(e) = store.hold_identify(bucket, &holder, SPACING_MS).await {
                tracing::warn!("Discord shards: holding the identify turn: {e}");
            }
        }
    });
    tx
}

/// Wait for `bucket`'s turn to identify. When the store does not answer, go on: a start
/// refused by Discord is retried by serenity, a shard never started is not.
async fn take_turn(store: &Store, bucket: u32, holder: &str) {
    loop {
        match store.claim_identify(bucket, holder, WAIT_MS).await {
            Ok(true) => return,
            Ok(false) => tokio::time::sleep(ASK_EVERY).await,
            Err(e) => {
                tracing::warn!("Discord shards: the store did not say whose turn it is to identify ({e}); starting anyway");
                return;
            }
        }
    }
}

/// The bot's `max_concurrency` (GET /gateway/bot), 1 when Discord does not say.
pub(super) async fn max_concurrency(http: &serenity::http::Http) -> u32 {
    match http.get_bot_gateway().await {
        Ok(g) => u32::try_from(g.session_start_limit.max_concurrency)
            .unwrap_or(1)
            .max(1),
        Err(e) => {
            tracing::warn!("Discord shards: reading max_concurrency ({e}); taking 1");
            1
        }
    }
}
