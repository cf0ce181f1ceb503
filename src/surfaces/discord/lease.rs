//! `KOTOBA_DISCORD_SHARDS=auto/N`: the processes of one bot share its N shards through
//! the shared store. Every few seconds each process says it is alive, renews the leases
//! of the shards it runs, gives up the ones above its even share (so a newcomer gets
//! some) and claims free or lapsed ones up to it. A process that dies stops renewing:
//! its leases lapse after [`TTL_MS`] and the others take its shards, well within 30 s.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serenity::all::ShardId;
use serenity::Client;

use super::{identify, Bot};

/// How often leases are renewed and free shards looked for.
const TICK: Duration = Duration::from_secs(3);
/// How long a lease lasts unrenewed (four ticks: a slow store call never loses one).
const TTL_MS: i64 = crate::store::ALIVE_TTL_MS;

/// Get the manager ready to start shards of `total` one by one: the token checked, the
/// voice manager told the shard count, no shard booted by the manager itself.
async fn prepare(client: &mut Client, total: u32) -> serenity::Result<()> {
    let me = client.http.get_current_user().await?;
    if let Some(voice) = &client.voice_manager {
        voice.initialise(total, me.id).await;
    }
    client.shard_manager.set_shards(0, 0, total).await;
    Ok(())
}

/// `i-j/N` with the shared store: this process runs shards `first..=last`, each started
/// in its identify bucket's turn across processes; runs until the process stops.
pub(super) async fn run_range(
    client: &mut Client,
    bot: &Arc<Bot>,
    (first, last, total): (u32, u32, u32),
) -> serenity::Result<()> {
    prepare(client, total).await?;
    let start = identify::starter(
        client.shard_manager.clone(),
        bot.engine.store().clone(),
        identify::max_concurrency(&client.http).await,
        bot.engine.store().owner().to_string(),
        Arc::new(|_| Box::pin(async { true })),
    );
    for s in first..=last {
        let _ = start.send(s);
    }
    std::future::pending().await
}

/// Run the shards this process can claim, for as long as it lives. Each claimed shard
/// starts in its identify bucket's turn across processes (identify.rs).
pub(super) async fn run(client: &mut Client, bot: &Arc<Bot>, total: u32) -> serenity::Result<()> {
    prepare(client, total).await?;
    let manager = client.shard_manager.clone();
    // This process in the leases and heartbeats: the store's owner number.
    let id = bot.engine.store().owner().to_string();
    let still_ours: identify::StillWanted = {
        let (store, id) = (bot.engine.store().clone(), id.clone());
        Arc::new(move |s| {
            let (store, id) = (store.clone(), id.clone());
            Box::pin(async move { store.claim_shard(s, &id, TTL_MS).await.unwrap_or(false) })
        })
    };
    let start = identify::starter(
        manager.clone(),
        bot.engine.store().clone(),
        identify::max_concurrency(&client.http).await,
        id.clone(),
        still_ours,
    );
    let id = id.as_str();
    let mut held: BTreeSet<u32> = BTreeSet::new();
    let mut tick = tokio::time::interval(TICK);
    loop {
        tick.tick().await;
        let store = bot.engine.store();
        let live = match store.heartbeat(id, TTL_MS).await {
            Ok(n) => n.max(1) as u32,
            Err(e) => {
                // Without the store no lease can be renewed: they lapse and another
                // process takes the shards; this one stops running them first.
                tracing::warn!("Discord shards: the store did not answer ({e}); letting go");
                for s in std::mem::take(&mut held) {
                    manager.shutdown(ShardId(s), 1000).await;
                }
                continue;
            }
        };
        let share = total.div_ceil(live) as usize;
        for s in held.clone() {
            if !store.claim_shard(s, id, TTL_MS).await.unwrap_or(false) {
                tracing::warn!("Discord shards: lost the lease of shard {s}; stopping it");
                held.remove(&s);
                manager.shutdown(ShardId(s), 1000).await;
            }
        }
        while held.len() > share {
            let Some(s) = held.pop_last() else { break };
            tracing::info!("Discord shards: giving shard {s} up ({live} processes share {total})");
            manager.shutdown(ShardId(s), 1000).await;
            if let Err(e) = store.release_shard(s, id).await {
                tracing::warn!("Discord shards: releasing shard {s}: {e}");
            }
        }
        for s in 0..total {
            if held.len() >= share {
                break;
            }
            if held.contains(&s) || !store.claim_shard(s, id, TTL_MS).await.unwrap_or(false) {
                continue;
            }
            tracing::info!("Discord shards: running shard {s} of {total}");
            held.insert(s);
            // Started off the renewing loop, in its turn.
            let _ = start.send(s);
        }
    }
}

/// Give every lease of this process up and stop counting it alive (a clean stop: the
/// others take its shards at their next tick, not after the lease lapses).
pub(super) async fn release_all(bot: &Bot, total: u32) {
    let store = bot.engine.store();
    let id = store.owner().to_string();
    let id = id.as_str();
    for s in 0..total {
        let _ = store.release_shard(s, id).await;
    }
    let _ = store.farewell(id).await;
}
