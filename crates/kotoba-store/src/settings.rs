//! Settings saved for every process of one bot (config/shared.rs): one row per key, the
//! last save winning. On PostgreSQL each save notifies `kotoba_settings`, so the other
//! processes read the rows again only when they changed.

use super::db::{args, Dialect};
use super::{now_ms, Store, StoreError};

/// The notification channel of a saved setting.
const CHANNEL: &str = "kotoba_settings";

impl Store {
    /// Keep `key` at `value` (YAML text) for every process.
    pub async fn save_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        const SAVE: &str = "INSERT INTO settings_shared(key, value, at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value, at_ms = excluded.at_ms";
        self.run(async |c| match c.dialect() {
            Dialect::Sqlite => c.execute(SAVE, args![key, value, now_ms()]).await,
            // The row and its notice in one statement (one round trip).
            Dialect::Postgres => {
                c.execute(
                    &format!("WITH saved AS ({SAVE}) SELECT pg_notify('{CHANNEL}', '')"),
                    args![key, value, now_ms()],
                )
                .await
            }
        })
        .await?;
        Ok(())
    }

    /// A wake-up each time a setting is saved by any process (PostgreSQL), and each time
    /// the listening connection is made again; `None` on SQLite (one process).
    pub fn listen_for_settings(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<()>> {
        self.listen(CHANNEL)
    }

    /// Every key kept for every process, with its value, by key.
    pub async fn saved_settings(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query("SELECT key, value FROM settings_shared ORDER BY key", &[])
                    .await
            })
            .await?;
        rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect()
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_setting_saved_by_one_process_is_read_by_another_and_the_last_save_wins() {
        for db in crate::testing::each() {
            let (a, b) = (db.open().await, db.open().await);
            a.save_setting("work_max_iter", "20").await.unwrap();
            b.save_setting("model", "gpt-5").await.unwrap();
            a.save_setting("work_max_iter", "30").await.unwrap();
            assert_eq!(
                b.saved_settings().await.unwrap(),
                [
                    ("model".to_string(), "gpt-5".to_string()),
                    ("work_max_iter".to_string(), "30".to_string())
                ],
                "{}",
                db.name
            );
        }
    }
}
