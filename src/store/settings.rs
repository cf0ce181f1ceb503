//! Settings saved for every process of one bot (config/shared.rs): one row per key, the
//! last save winning.

use super::db::args;
use super::{now_ms, Store, StoreError};

impl Store {
    /// Keep `key` at `value` (YAML text) for every process.
    pub fn save_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.run(|c| {
            c.execute(
                "INSERT INTO settings_shared(key, value, at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, at_ms = excluded.at_ms",
                args![key, value, now_ms()],
            )
        })?;
        Ok(())
    }

    /// Every key kept for every process, with its value, by key.
    pub fn saved_settings(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows =
            self.run(|c| c.query("SELECT key, value FROM settings_shared ORDER BY key", &[]))?;
        rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_setting_saved_by_one_process_is_read_by_another_and_the_last_save_wins() {
        for db in crate::store::testing::each() {
            let (a, b) = (db.open(), db.open());
            a.save_setting("work_max_iter", "20").unwrap();
            b.save_setting("model", "gpt-5").unwrap();
            a.save_setting("work_max_iter", "30").unwrap();
            assert_eq!(
                b.saved_settings().unwrap(),
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
