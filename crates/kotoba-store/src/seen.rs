//! What a restart needs from Discord: the newest message she has seen in each channel
//! (written as each message arrives, before she acts on it, read to catch up on what
//! was said while she was down, so nothing is answered twice across restarts), and the
//! approval cards drawn and not yet settled (so the ones a dead run left are settled
//! and no orphaned button remains).

use super::db::args;
use super::{now_ms, rows_into, Store, StoreError};

/// How long seen marks wait to be written together.
const SEEN_BATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Seen marks noted for later ([`Store::mark_discord_seen_later`]).
#[derive(Debug, Default)]
pub(super) struct SeenLater {
    /// The newest message id noted per channel, not yet written.
    marks: std::collections::BTreeMap<i64, i64>,
    /// A write of them is already scheduled.
    flushing: bool,
}

impl Store {
    /// Record that message `id` in `channel` was seen; true when it is newer than any
    /// seen there before (false: a replay, or older than what was already seen).
    pub async fn mark_discord_seen(&self, channel: u64, id: u64) -> Result<bool, StoreError> {
        let (channel, id) = (as_i64(channel), as_i64(id));
        let changed = self
            .run(async |c| {
                c.execute(
                    "INSERT INTO discord_seen(channel, last_id, at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(channel) DO UPDATE SET
                    last_id = excluded.last_id, at_ms = excluded.at_ms
                 WHERE excluded.last_id > discord_seen.last_id",
                    args![channel, id, now_ms()],
                )
                .await
            })
            .await?;
        Ok(changed > 0)
    }

    /// Record, off the answer's path, that message `id` in `channel` was seen: kept in
    /// memory and written shortly after with every other mark noted meanwhile, the
    /// newest per channel, in one statement. A crash may lose the last marks; the
    /// claims (written first) still keep a message from being answered twice.
    pub fn mark_discord_seen_later(self: &std::sync::Arc<Self>, channel: u64, id: u64) {
        let start = {
            let mut later = match self.seen_later.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            let newest = later.marks.entry(as_i64(channel)).or_insert(0);
            *newest = (*newest).max(as_i64(id));
            !std::mem::replace(&mut later.flushing, true)
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if start {
            let store = self.clone();
            rt.spawn(async move {
                tokio::time::sleep(SEEN_BATCH_EVERY).await;
                store.flush_seen_later().await;
            });
        }
    }

    /// Write every seen mark noted for later, in one statement.
    pub async fn flush_seen_later(&self) {
        let marks = {
            let mut later = match self.seen_later.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            later.flushing = false;
            std::mem::take(&mut later.marks)
        };
        if marks.is_empty() {
            return;
        }
        let at = now_ms();
        let mut sql = String::from("INSERT INTO discord_seen(channel, last_id, at_ms) VALUES ");
        let mut values: Vec<super::db::Val> = Vec::with_capacity(marks.len() * 2 + 1);
        values.push(at.into());
        for (i, (channel, id)) in marks.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!(
                "(?{}, ?{}, ?1)",
                values.len() + 1,
                values.len() + 2
            ));
            values.extend([(*channel).into(), (*id).into()]);
        }
        sql.push_str(
            " ON CONFLICT(channel) DO UPDATE SET last_id = excluded.last_id, at_ms = excluded.at_ms
              WHERE excluded.last_id > discord_seen.last_id",
        );
        if let Err(e) = self.run(async |c| c.execute(&sql, &values).await).await {
            tracing::warn!("Discord: recording the messages seen: {e}");
        }
    }

    /// Claim Discord message `id` for an answer: true for the first claim, false when
    /// this or another process already claimed it (one answer per message, whichever
    /// processes hold its shard).
    pub async fn claim_discord_message(&self, id: u64) -> Result<bool, StoreError> {
        let changed = self
            .run(async |c| {
                c.execute(
                    "INSERT INTO discord_claims(message, at_ms) VALUES (?1, ?2)
                 ON CONFLICT(message) DO NOTHING",
                    args![as_i64(id), now_ms()],
                )
                .await
            })
            .await?;
        Ok(changed == 1)
    }

    /// Forget the claims older than `age_ms` (no event is replayed that late).
    pub async fn prune_discord_claims(&self, age_ms: i64) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "DELETE FROM discord_claims WHERE at_ms < ?1",
                args![now_ms().saturating_sub(age_ms)],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The newest message id seen in `channel`, if any.
    pub async fn discord_last_seen(&self, channel: u64) -> Result<Option<u64>, StoreError> {
        let row = self
            .run(async |c| {
                c.query_opt(
                    "SELECT last_id FROM discord_seen WHERE channel = ?1",
                    args![as_i64(channel)],
                )
                .await
            })
            .await?;
        row.map(|r| r.int(0).map(as_u64)).transpose()
    }

    /// Every channel she has seen a message in, with the newest id there, most recently
    /// active first.
    pub async fn discord_seen_channels(&self) -> Result<Vec<(u64, u64)>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT channel, last_id FROM discord_seen ORDER BY at_ms DESC",
                    &[],
                )
                .await
            })
            .await?;
        rows_into(rows, |r| Ok((as_u64(r.int(0)?), as_u64(r.int(1)?))))
    }
}

/// An approval card drawn on Discord and not yet settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawnCard {
    /// The card's request id.
    pub request_id: String,
    /// The channel it is in.
    pub channel: u64,
    /// Its message (0 when she died before Discord said which).
    pub message: u64,
    /// Whether the channel is a DM.
    pub dm: bool,
    /// The card as JSON.
    pub card: String,
    /// The pid of the Kotoba that drew it.
    pub owner: u32,
}

impl Store {
    /// Remember a card drawn on Discord by this process — before it is posted
    /// (`message` 0: not known yet), so a crash in between still leaves its trace.
    pub async fn add_discord_card(
        &self,
        request_id: &str,
        channel: u64,
        message: u64,
        dm: bool,
        card: &str,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO discord_cards(request_id, channel, message, dm, card, owner, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(request_id) DO UPDATE SET channel = excluded.channel,
                   message = excluded.message, dm = excluded.dm, card = excluded.card,
                   owner = excluded.owner, at_ms = excluded.at_ms",
                args![
                    request_id,
                    as_i64(channel),
                    as_i64(message),
                    dm,
                    card,
                    self.owner(),
                    now_ms()
                ],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The card's message, once Discord said which one it is.
    pub async fn set_discord_card_message(
        &self,
        request_id: &str,
        message: u64,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "UPDATE discord_cards SET message = ?2 WHERE request_id = ?1",
                args![request_id, as_i64(message)],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Forget a card once it is settled (drawn as settled).
    pub async fn remove_discord_card(&self, request_id: &str) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "DELETE FROM discord_cards WHERE request_id = ?1",
                args![request_id],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The cards drawn by a Kotoba process that is no longer running (`is_live(owner)`
    /// false) and never settled.
    pub async fn orphaned_discord_cards(
        &self,
        is_live: impl Fn(i64) -> bool,
    ) -> Result<Vec<DrawnCard>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT request_id, channel, message, dm, card, owner FROM discord_cards
                 WHERE owner != ?1 ORDER BY at_ms",
                    args![self.owner()],
                )
                .await
            })
            .await?;
        let rows = rows
            .into_iter()
            .filter(|r| r.int(5).is_ok_and(|o| !is_live(o)))
            .collect();
        rows_into(rows, |r| {
            Ok(DrawnCard {
                request_id: r.text(0)?,
                channel: as_u64(r.int(1)?),
                message: as_u64(r.int(2)?),
                dm: r.flag(3)?,
                card: r.text(4)?,
                owner: u32::try_from(r.int(5)?).unwrap_or(0),
            })
        })
    }
}

/// Discord ids fit in 63 bits; SQLite integers are signed.
pub(super) fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) fn as_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn seen_marks_noted_for_later_are_written_together_the_newest_per_channel_in_one_round_trip(
    ) {
        for db in crate::testing::each() {
            let store = std::sync::Arc::new(db.open().await);
            assert!(store.mark_discord_seen(1, 20).await.unwrap());
            let before = store.round_trips();
            for (channel, id) in [(1, 10), (1, 30), (2, 5), (1, 25), (3, 7)] {
                store.mark_discord_seen_later(channel, id);
            }
            assert_eq!(
                store.round_trips(),
                before,
                "{}: nothing written yet",
                db.name
            );
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while store.round_trips() == before {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{}: never written",
                    db.name
                );
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            assert_eq!(
                store.round_trips(),
                before + 1,
                "{}: one statement",
                db.name
            );
            let mut all = store.discord_seen_channels().await.unwrap();
            all.sort();
            assert_eq!(all, vec![(1, 30), (2, 5), (3, 7)], "{}", db.name);
            // An older mark noted later never moves a channel back.
            store.mark_discord_seen_later(1, 2);
            store.flush_seen_later().await;
            let mut all = store.discord_seen_channels().await.unwrap();
            all.sort();
            assert_eq!(all[0], (1, 30), "{}", db.name);
        }
    }

    #[tokio::test]
    async fn a_message_is_claimed_once_across_stores_sharing_one_database() {
        for db in crate::testing::each() {
            let (one, two) = (db.open().await, db.open().await);
            assert!(one.claim_discord_message(42).await.unwrap(), "{}", db.name);
            assert!(!two.claim_discord_message(42).await.unwrap(), "{}", db.name);
            assert!(!one.claim_discord_message(42).await.unwrap());
            assert!(two.claim_discord_message(43).await.unwrap());
            two.prune_discord_claims(-60_000).await.unwrap();
            assert!(
                one.claim_discord_message(42).await.unwrap(),
                "pruned claims are gone"
            );
        }
    }

    #[tokio::test]
    async fn the_newest_seen_message_is_kept_per_channel() {
        for db in crate::testing::each() {
            let store = db.open().await;
            assert!(store.mark_discord_seen(1, 10).await.unwrap());
            assert!(
                !store.mark_discord_seen(1, 7).await.unwrap(),
                "older than what was seen"
            );
            assert!(!store.mark_discord_seen(1, 10).await.unwrap(), "a replay");
            assert!(store.mark_discord_seen(2, 3).await.unwrap());
            assert_eq!(store.discord_last_seen(1).await.unwrap(), Some(10));
            assert_eq!(store.discord_last_seen(3).await.unwrap(), None);
            let mut all = store.discord_seen_channels().await.unwrap();
            all.sort();
            assert_eq!(all, vec![(1, 10), (2, 3)]);
        }
    }

    #[tokio::test]
    async fn a_card_drawn_by_this_process_is_no_orphan_and_a_settled_one_is_forgotten() {
        for db in crate::testing::each() {
            let store = db.open().await;
            store
                .add_discord_card("r1", 5, 6, false, "{}")
                .await
                .unwrap();
            assert!(store
                .orphaned_discord_cards(|_| false)
                .await
                .unwrap()
                .is_empty());
            store
                .run(async |c| {
                    c.execute(
                        "UPDATE discord_cards SET owner = 1 WHERE request_id = 'r1'",
                        &[],
                    )
                    .await
                })
                .await
                .unwrap();
            let orphans = store.orphaned_discord_cards(|_| false).await.unwrap();
            assert_eq!(orphans.len(), 1);
            assert_eq!((orphans[0].channel, orphans[0].message), (5, 6));
            store.remove_discord_card("r1").await.unwrap();
            assert!(store
                .orphaned_discord_cards(|_| false)
                .await
                .unwrap()
                .is_empty());
        }
    }
}
