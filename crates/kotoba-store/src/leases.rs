//! What several processes of one bot agree on through the shared store: which process
//! holds each Discord shard (a lease, renewed every few seconds; a lapsed one is free to
//! claim), and which processes are alive (a heartbeat each), so `auto/N` spreads the
//! shards evenly (docs/deploy.md).

use std::collections::HashSet;

use super::db::args;
use super::{now_ms, Store, StoreError};

/// How long a process counts as alive after its last heartbeat (every 3 s), and how
/// long a shard lease lasts unrenewed.
pub const ALIVE_TTL_MS: i64 = 12_000;

/// Whether the process that wrote an `owner` is still running. This process always is.
#[derive(Debug)]
pub enum Liveness {
    /// SQLite: one machine; the other owners are checked there (a pid).
    Local {
        /// This process.
        me: i64,
        /// The check for any other owner.
        check: fn(i64) -> bool,
    },
    /// PostgreSQL: the owners whose heartbeat is recent.
    Shared {
        /// This process.
        me: i64,
        /// The owners seen alive within [`ALIVE_TTL_MS`].
        live: HashSet<i64>,
    },
}

impl Liveness {
    /// Whether `owner` is still running.
    pub fn is_live(&self, owner: i64) -> bool {
        match self {
            Liveness::Local { me, check } => owner == *me || check(owner),
            Liveness::Shared { me, live } => owner == *me || live.contains(&owner),
        }
    }
}

impl Store {
    /// Claim or renew shard `shard` for `holder` until `ttl_ms` from now: true when
    /// `holder` holds it now (it was free, lapsed, or already `holder`'s).
    pub async fn claim_shard(
        &self,
        shard: u32,
        holder: &str,
        ttl_ms: i64,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let changed = self
            .run(async |c| {
                c.execute(
                "INSERT INTO discord_shard_leases(shard, holder, expires_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(shard) DO UPDATE SET holder = excluded.holder,
                   expires_ms = excluded.expires_ms
                 WHERE discord_shard_leases.holder = excluded.holder
                    OR discord_shard_leases.expires_ms < ?4",
                args![i64::from(shard), holder, now.saturating_add(ttl_ms), now],
            ).await
            })
            .await?;
        Ok(changed == 1)
    }

    /// Give shard `shard` up, if `holder` holds it.
    pub async fn release_shard(&self, shard: u32, holder: &str) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "DELETE FROM discord_shard_leases WHERE shard = ?1 AND holder = ?2",
                args![i64::from(shard), holder],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The shards whose lease has not lapsed, with their holders.
    pub async fn shard_holders(&self) -> Result<Vec<(u32, String)>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT shard, holder FROM discord_shard_leases WHERE expires_ms >= ?1
                 ORDER BY shard",
                    args![now_ms()],
                )
                .await
            })
            .await?;
        rows.iter()
            .map(|r| Ok((u32::try_from(r.int(0)?).unwrap_or(u32::MAX), r.text(1)?)))
            .collect()
    }

    /// Take the turn to IDENTIFY in Discord's identify bucket `bucket` (shard id modulo
    /// `max_concurrency`) for the next `hold_ms`: true when it was free or its last turn
    /// is over. Whoever holds it, no other process identifies in that bucket meanwhile.
    pub async fn claim_identify(
        &self,
        bucket: u32,
        holder: &str,
        hold_ms: i64,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let changed = self
            .run(async |c| {
                c.execute(
                    "INSERT INTO discord_identify(bucket, holder, until_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(bucket) DO UPDATE SET holder = excluded.holder,
                   until_ms = excluded.until_ms
                 WHERE discord_identify.until_ms <= ?4",
                    args![i64::from(bucket), holder, now.saturating_add(hold_ms), now],
                )
                .await
            })
            .await?;
        Ok(changed == 1)
    }

    /// Hold `bucket`'s turn, already `holder`'s, until `hold_ms` from now (its IDENTIFY
    /// just went out: the next one in the bucket waits for this one's 5 s).
    pub async fn hold_identify(
        &self,
        bucket: u32,
        holder: &str,
        hold_ms: i64,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "UPDATE discord_identify SET until_ms = ?3 WHERE bucket = ?1 AND holder = ?2",
                args![i64::from(bucket), holder, now_ms().saturating_add(hold_ms)],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Say that process `id` is alive; how many processes said so within `ttl_ms`.
    pub async fn heartbeat(&self, id: &str, ttl_ms: i64) -> Result<usize, StoreError> {
        let now = now_ms();
        self.tx(async |c| {
            c.execute(
                "INSERT INTO instances(id, seen_ms) VALUES (?1, ?2)
                 ON CONFLICT(id) DO UPDATE SET seen_ms = excluded.seen_ms",
                args![id, now],
            )
            .await?;
            c.execute(
                "DELETE FROM instances WHERE seen_ms < ?1",
                args![now.saturating_sub(ttl_ms.saturating_mul(10))],
            )
            .await?;
            let live = c
                .query_opt(
                    "SELECT COUNT(*) FROM instances WHERE seen_ms >= ?1",
                    args![now.saturating_sub(ttl_ms)],
                )
                .await?;
            Ok(match live {
                Some(r) => usize::try_from(r.int(0)?).unwrap_or(1),
                None => 1,
            })
        })
        .await
    }

    /// Who is alive: on SQLite `local` decides for the other owners; on PostgreSQL the
    /// recent heartbeats do. When the store cannot say, every owner counts as alive (the
    /// safe side: nothing of a running process is closed).
    pub async fn liveness(&self, local: fn(i64) -> bool) -> Liveness {
        let me = self.owner();
        if !self.is_shared() {
            return Liveness::Local { me, check: local };
        }
        let since = now_ms().saturating_sub(ALIVE_TTL_MS);
        let rows = self
            .run(async |c| {
                c.query("SELECT id FROM instances WHERE seen_ms >= ?1", args![since])
                    .await
            })
            .await;
        match rows {
            Ok(rows) => Liveness::Shared {
                me,
                live: rows
                    .iter()
                    .filter_map(|r| r.text(0).ok()?.parse().ok())
                    .collect(),
            },
            Err(e) => {
                tracing::warn!("reading which processes are alive: {e}");
                Liveness::Local {
                    me,
                    check: |_| true,
                }
            }
        }
    }

    /// Process `id` stops: it is no longer counted alive.
    pub async fn farewell(&self, id: &str) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute("DELETE FROM instances WHERE id = ?1", args![id])
                .await
        })
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn an_identify_bucket_is_one_processs_turn_until_its_hold_is_over() {
        for db in crate::testing::each() {
            let (a, b) = (db.open().await, db.open().await);
            assert!(
                a.claim_identify(0, "a", 60_000).await.unwrap(),
                "{}",
                db.name
            );
            assert!(!b.claim_identify(0, "b", 60_000).await.unwrap(), "a's turn");
            assert!(
                !a.claim_identify(0, "a", 60_000).await.unwrap(),
                "a's next waits too"
            );
            assert!(
                b.claim_identify(1, "b", 60_000).await.unwrap(),
                "another bucket is free"
            );
            // Held on from when the IDENTIFY went out; another's hold changes nothing.
            a.hold_identify(1, "a", -1).await.unwrap();
            assert!(
                !a.claim_identify(1, "a", 60_000).await.unwrap(),
                "still b's"
            );
            b.hold_identify(1, "b", -1).await.unwrap();
            assert!(
                a.claim_identify(1, "a", 60_000).await.unwrap(),
                "b's turn is over"
            );
            // A turn that is over (held into the past here) is free to take.
            assert!(b.claim_identify(2, "b", -1).await.unwrap());
            assert!(a.claim_identify(2, "a", 60_000).await.unwrap());
        }
    }

    #[tokio::test]
    async fn a_shard_is_held_by_one_process_until_its_lease_lapses_or_it_lets_go() {
        for db in crate::testing::each() {
            let (a, b) = (db.open().await, db.open().await);
            assert!(a.claim_shard(0, "a", 60_000).await.unwrap(), "{}", db.name);
            assert!(!b.claim_shard(0, "b", 60_000).await.unwrap(), "held by a");
            assert!(a.claim_shard(0, "a", 60_000).await.unwrap(), "a renews");
            assert_eq!(b.shard_holders().await.unwrap(), [(0, "a".to_string())]);
            // A lease that lapsed (renewed into the past here) is free to claim.
            assert!(a.claim_shard(0, "a", -1).await.unwrap());
            assert!(
                b.claim_shard(0, "b", 60_000).await.unwrap(),
                "{}: taken over",
                db.name
            );
            assert!(!a.claim_shard(0, "a", 60_000).await.unwrap(), "a lost it");
            b.release_shard(0, "a").await.unwrap();
            assert_eq!(
                b.shard_holders().await.unwrap(),
                [(0, "b".to_string())],
                "only its holder lets go"
            );
            b.release_shard(0, "b").await.unwrap();
            assert!(a.claim_shard(0, "a", 60_000).await.unwrap());
        }
    }

    #[tokio::test]
    async fn processes_alive_are_counted_by_their_heartbeats() {
        for db in crate::testing::each() {
            let s = db.open().await;
            assert_eq!(s.heartbeat("a", 10_000).await.unwrap(), 1, "{}", db.name);
            assert_eq!(s.heartbeat("b", 10_000).await.unwrap(), 2);
            s.farewell("a").await.unwrap();
            assert_eq!(s.heartbeat("b", 10_000).await.unwrap(), 1);
        }
    }
}
