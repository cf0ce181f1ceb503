//! Reminders (cronjob): stored so they survive a restart, claimed atomically when they
//! fire so one due time is delivered once even if two schedulers look at it.

use super::db::{args, Row};
use super::{now_ms, rows_into, Store, StoreError};
use kotoba_core::protocol::{Channel, Register, Reminder};

fn register_str(r: Register) -> &'static str {
    match r {
        Register::Text => "text",
        Register::Voice => "voice",
    }
}

fn channel_str(c: Channel) -> &'static str {
    match c {
        Channel::Text => "text",
        Channel::Voice => "voice",
    }
}

const COLUMNS: &str = "id, session, text, due_ms, every_secs, register, channel, asker";

fn reminder_of(r: &Row) -> Result<Reminder, StoreError> {
    let register = r.text(5)?;
    let channel = r.text(6)?;
    let every = r.opt_int(4)?;
    Ok(Reminder {
        id: r.int(0)?,
        session: r.text(1)?,
        text: r.text(2)?,
        due_ms: r.int(3)?,
        every_secs: every.and_then(|e| u64::try_from(e).ok()),
        register: if register == "voice" {
            Register::Voice
        } else {
            Register::Text
        },
        channel: if channel == "voice" {
            Channel::Voice
        } else {
            Channel::Text
        },
        asker: r.text(7)?,
    })
}

impl Store {
    /// Store a new reminder (its `id` is ignored) and return its id.
    pub async fn add_reminder(&self, r: &Reminder) -> Result<i64, StoreError> {
        self.run(async |c| {
            c.insert(
                "INSERT INTO reminders(session, text, due_ms, every_secs, register, channel,
                                       at_ms, asker)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
                args![
                    &r.session,
                    &r.text,
                    r.due_ms,
                    r.every_secs.map(|e| e.min(i64::MAX as u64) as i64),
                    register_str(r.register),
                    channel_str(r.channel),
                    now_ms(),
                    &r.asker
                ],
            )
            .await
        })
        .await
    }

    /// The live reminders of one session, soonest first.
    pub async fn reminders_of(&self, session: &str) -> Result<Vec<Reminder>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM reminders WHERE session = ?1 AND done = 0 ORDER BY due_ms, id"
        );
        rows_into(
            self.run(async |c| c.query(&sql, args![session]).await)
                .await?,
            reminder_of,
        )
    }

    /// One live reminder of a session by id.
    pub async fn reminder(&self, session: &str, id: i64) -> Result<Option<Reminder>, StoreError> {
        Ok(self
            .reminders_of(session)
            .await?
            .into_iter()
            .find(|r| r.id == id))
    }

    /// Every live reminder due at or before `now_ms`, soonest first.
    pub async fn due_reminders(&self, now_ms: i64) -> Result<Vec<Reminder>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM reminders WHERE done = 0 AND due_ms <= ?1 ORDER BY due_ms, id"
        );
        rows_into(
            self.run(async |c| c.query(&sql, args![now_ms]).await)
                .await?,
            reminder_of,
        )
    }

    /// The soonest due time of any live reminder.
    pub async fn next_reminder_due(&self) -> Result<Option<i64>, StoreError> {
        let row = self
            .run(async |c| {
                c.query_opt("SELECT MIN(due_ms) FROM reminders WHERE done = 0", &[])
                    .await
            })
            .await?;
        Ok(row.map(|r| r.opt_int(0)).transpose()?.flatten())
    }

    /// Move a live reminder from `from_ms` to `to_ms` (a repeat's next time, a skip), or
    /// close it when `to_ms` is `None` (a one-off fired, a removal). True only for the
    /// caller that changed it: a second claim of the same due time gets false.
    pub async fn move_reminder(
        &self,
        id: i64,
        from_ms: i64,
        to_ms: Option<i64>,
    ) -> Result<bool, StoreError> {
        let changed = self
            .run(async |c| {
                match to_ms {
            Some(to) => c.execute(
                "UPDATE reminders SET due_ms = ?3 WHERE id = ?1 AND due_ms = ?2 AND done = 0",
                args![id, from_ms, to],
            ).await,
            None => c.execute(
                "UPDATE reminders SET done = 1 WHERE id = ?1 AND due_ms = ?2 AND done = 0",
                args![id, from_ms],
            ).await,
        }
            })
            .await?;
        Ok(changed == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(session: &str, due_ms: i64) -> Reminder {
        Reminder {
            id: 0,
            session: session.into(),
            text: "stretch".into(),
            due_ms,
            register: Register::Voice,
            channel: Channel::Text,
            every_secs: None,
            asker: "Ann (42)".into(),
        }
    }

    #[tokio::test]
    async fn a_due_time_is_claimed_once_and_a_closed_reminder_is_gone() {
        for db in crate::testing::each() {
            let s = db.open().await;
            let id = s.add_reminder(&one("s1", 1_000)).await.unwrap();
            s.add_reminder(&one("s2", 5_000)).await.unwrap();
            assert_eq!(s.next_reminder_due().await.unwrap(), Some(1_000));
            let due = s.due_reminders(1_000).await.unwrap();
            assert_eq!(due.len(), 1);
            assert_eq!(due[0].register, Register::Voice);
            assert!(s.move_reminder(id, 1_000, None).await.unwrap());
            assert!(!s.move_reminder(id, 1_000, None).await.unwrap());
            assert!(s.reminders_of("s1").await.unwrap().is_empty());
            assert_eq!(s.next_reminder_due().await.unwrap(), Some(5_000));
        }
    }

    #[tokio::test]
    async fn two_processes_sharing_the_store_see_a_due_reminder_and_only_one_claims_it() {
        for db in crate::testing::each() {
            let (a, b) = (db.open().await, db.open().await);
            let id = a.add_reminder(&one("discord:5", 1_000)).await.unwrap();
            let (seen_a, seen_b) = (
                a.due_reminders(2_000).await.unwrap(),
                b.due_reminders(2_000).await.unwrap(),
            );
            assert_eq!((seen_a.len(), seen_b.len()), (1, 1), "{}", db.name);
            let claims = [
                b.move_reminder(id, 1_000, None).await.unwrap(),
                a.move_reminder(id, 1_000, None).await.unwrap(),
            ];
            assert_eq!(claims, [true, false], "{}: one claim wins", db.name);
        }
    }

    #[tokio::test]
    async fn a_reminder_stored_before_the_asker_column_survives_the_migration_with_no_asker() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kotoba.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            for sql in &crate::sqlite::MIGRATIONS[..5] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 5).unwrap();
            conn.execute(
                "INSERT INTO reminders(session, text, due_ms, register, channel, at_ms)
                 VALUES ('discord:200', 'old one', 7000, 'text', 'text', 1)",
                [],
            )
            .unwrap();
        }
        let s = Store::open(&path).unwrap();
        let old = s.reminders_of("discord:200").await.unwrap();
        assert_eq!(old.len(), 1);
        assert_eq!(
            (old[0].text.as_str(), old[0].asker.as_str()),
            ("old one", "")
        );
        s.add_reminder(&one("discord:200", 8_000)).await.unwrap();
        let both = s.reminders_of("discord:200").await.unwrap();
        assert_eq!(both[1].asker, "Ann (42)");
    }
}
