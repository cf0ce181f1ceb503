//! Which Discord shards this process runs (`KOTOBA_DISCORD_SHARDS`, docs/deploy.md):
//! unset, every shard Discord recommends, in this one process; `i-j/N`, shards i..=j of
//! N (the other processes run the rest); `auto/N`, the free shards of N, claimed through
//! the shared store with a lease each (shards/lease.rs). Discord sends a guild's events
//! to shard `(guild_id >> 22) % N` and DMs to shard 0, so a process answers exactly the
//! guilds of the shards it holds.

use std::collections::BTreeMap;

use serenity::gateway::ConnectionStage;

/// The environment variable.
pub const SHARDS_ENV: &str = "KOTOBA_DISCORD_SHARDS";

/// The most shards one bot may be split into here (Discord's own limit is far above any
/// bot this runs; a typo such as `0-1/20000000` is refused rather than obeyed).
pub const MAX_SHARDS: u32 = 4096;

/// How this process takes part in the bot's shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardPlan {
    /// Every shard, in this process (as many as Discord recommends).
    All,
    /// Shards `first..=last` of `total`.
    Range {
        /// The first shard this process runs.
        first: u32,
        /// The last shard this process runs.
        last: u32,
        /// How many shards the bot has in all.
        total: u32,
    },
    /// Whichever of `total` shards are free, claimed through the store.
    Auto {
        /// How many shards the bot has in all.
        total: u32,
    },
}

/// Why a `KOTOBA_DISCORD_SHARDS` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "KOTOBA_DISCORD_SHARDS={value:?} is not a shard setting ({why}): write `i-j/N` (this \
     process runs shards i to j of N) or `auto/N`; Discord stays off until it is fixed"
)]
pub struct ShardsError {
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl ShardPlan {
    /// Read the setting; `None` or blank is [`ShardPlan::All`].
    pub fn parse(value: Option<&str>) -> Result<ShardPlan, ShardsError> {
        let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(ShardPlan::All);
        };
        let bad = |why| ShardsError {
            value: v.to_string(),
            why,
        };
        let (which, total) = v.split_once('/').ok_or(bad("no `/N`"))?;
        let total: u32 = total.trim().parse().map_err(|_| bad("N is not a number"))?;
        if total == 0 || total > MAX_SHARDS {
            return Err(bad("N must be 1 to 4096"));
        }
        let which = which.trim();
        if which.eq_ignore_ascii_case("auto") {
            return Ok(ShardPlan::Auto { total });
        }
        let (first, last) = match which.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (which, which),
        };
        let first: u32 = first.parse().map_err(|_| bad("i is not a number"))?;
        let last: u32 = last.parse().map_err(|_| bad("j is not a number"))?;
        if first > last {
            return Err(bad("i is above j"));
        }
        if last >= total {
            return Err(bad("shards are numbered 0 to N-1"));
        }
        Ok(ShardPlan::Range { first, last, total })
    }

    /// In plain words, for `kotoba doctor` and the log.
    pub fn describe(&self) -> String {
        match *self {
            ShardPlan::All => "every shard, in this process (KOTOBA_DISCORD_SHARDS unset)".into(),
            ShardPlan::Range { first, last, total } if first == last => {
                format!("shard {first} of {total}")
            }
            ShardPlan::Range { first, last, total } => {
                format!("shards {first} to {last} of {total}")
            }
            ShardPlan::Auto { total } => format!(
                "the free shards of {total}, claimed through the shared store (a lease each)"
            ),
        }
    }
}

/// Connect the shards of `plan` and run them until they stop.
pub(super) async fn start(
    client: &mut serenity::Client,
    bot: &std::sync::Arc<super::Bot>,
    plan: ShardPlan,
) -> serenity::Result<()> {
    match plan {
        ShardPlan::All => client.start_autosharded().await,
        // With the shared store other processes run the other shards: each start takes
        // its identify turn (identify.rs).
        ShardPlan::Range { first, last, total } if bot.engine.store().is_shared() => {
            super::lease::run_range(client, bot, (first, last, total)).await
        }
        // serenity's range is first..last with last included.
        ShardPlan::Range { first, last, total } => {
            client.start_shard_range(first..last, total).await
        }
        ShardPlan::Auto { total } => super::lease::run(client, bot, total).await,
    }
}

/// Every second, tell `/metrics` which shards run here with their gateway latency and
/// how many voice rooms are open, and the bot which shards are connected (`/health`).
pub(super) async fn report(
    manager: std::sync::Arc<serenity::gateway::ShardManager>,
    bot: std::sync::Arc<super::Bot>,
) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tick.tick().await;
        let (mut latency, mut links) = (BTreeMap::new(), BTreeMap::new());
        for (id, runner) in manager.runners.lock().await.iter() {
            latency.insert(id.0, runner.latency);
            links.insert(id.0, runner.stage == ConnectionStage::Connected);
        }
        let m = crate::metrics::metrics();
        m.set_shards(latency);
        m.set_voice_rooms(bot.rooms.count());
        match bot.shard_links.lock() {
            Ok(mut g) => *g = links,
            Err(p) => *p.into_inner() = links,
        }
    }
}

/// The shard Discord sends a guild's events to (a DM's: 0).
pub fn shard_of(guild: u64, total: u32) -> u32 {
    ((guild >> 22) % u64::from(total.max(1))) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_setting_is_a_range_of_n_or_auto_and_anything_else_is_refused_by_name() {
        assert_eq!(ShardPlan::parse(None), Ok(ShardPlan::All));
        assert_eq!(ShardPlan::parse(Some("  ")), Ok(ShardPlan::All));
        assert_eq!(
            ShardPlan::parse(Some("0-1/4")),
            Ok(ShardPlan::Range {
                first: 0,
                last: 1,
                total: 4
            })
        );
        assert_eq!(
            ShardPlan::parse(Some("3/4")),
            Ok(ShardPlan::Range {
                first: 3,
                last: 3,
                total: 4
            })
        );
        assert_eq!(
            ShardPlan::parse(Some("auto/8")),
            Ok(ShardPlan::Auto { total: 8 })
        );
        for bad in [
            "2-1/4",
            "0-4/4",
            "0-1",
            "x-1/4",
            "0-1/0",
            "auto/",
            "0-1/99999",
        ] {
            let e = ShardPlan::parse(Some(bad)).unwrap_err();
            assert!(e.to_string().contains("KOTOBA_DISCORD_SHARDS"), "{e}");
        }
    }

    #[test]
    fn a_guilds_shard_is_its_id_shifted_by_22_modulo_the_count() {
        let guild = (5u64 << 22) | 12345;
        assert_eq!(shard_of(guild, 4), 1);
        assert_eq!(shard_of(guild, 1), 0);
        assert_eq!(shard_of(100, 4), 0);
    }
}
