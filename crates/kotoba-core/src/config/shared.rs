//! Settings saved for every process of one bot: with the shared store, a key saved from
//! any process (its page, Discord's `/settings`) is kept in the store too, and every
//! process reads the store's keys again when the store says they changed (app/
//! shared_settings.rs).
//! They win over each process's settings.yaml; the environment still wins over both
//! (docs/deploy.md).

/// Why the settings kept for every process could not be saved or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SharedError {
    /// The shared store refused or could not be reached: what it said.
    #[error("{0}")]
    Store(String),
    /// The wait for the store's answer ended before it came.
    #[error("saving the setting stopped")]
    Stopped,
}

/// Where settings saved in one process reach the others.
pub trait SharedSettings: Send + Sync + std::fmt::Debug {
    /// Keep `key` at `value` (YAML text, already checked) for every process.
    fn save(&self, key: &str, value: &str) -> Result<(), SharedError>;
    /// Every key kept for every process, with its value (YAML text).
    fn load(&self) -> Result<Vec<(String, String)>, SharedError>;
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::{SharedError, SharedSettings};
    use crate::config::Config;

    /// The store's part, in memory (the store's own table is tested on both backends).
    #[derive(Debug, Default)]
    struct Kept(Mutex<Vec<(String, String)>>);

    impl SharedSettings for Kept {
        fn save(&self, key: &str, value: &str) -> Result<(), SharedError> {
            let mut kept = self.0.lock().unwrap();
            kept.retain(|(k, _)| k != key);
            kept.push((key.into(), value.into()));
            Ok(())
        }
        fn load(&self) -> Result<Vec<(String, String)>, SharedError> {
            Ok(self.0.lock().unwrap().clone())
        }
    }

    #[test]
    fn a_key_saved_in_one_process_applies_in_another_at_its_next_refresh_over_its_file_not_its_env()
    {
        let kept = Arc::new(Kept::default());
        let (home_a, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a = Config::for_home(home_a.path(), &[]);
        let b = Config::for_home(home_b.path(), &[("KOTOBA_MODEL", "from-env")]);
        std::fs::write(&b.paths.settings, "work_max_iter: 12\n").unwrap();
        a.share_settings(kept.clone());
        b.share_settings(kept.clone());
        assert_eq!(b.settings().work_max_iter, 12);

        a.set("work_max_iter", "25").unwrap();
        a.set("model", "from-a").unwrap();
        assert_eq!(a.settings().work_max_iter, 25, "at once where it was saved");
        assert_eq!(
            b.settings().work_max_iter,
            12,
            "the other process: at its refresh"
        );
        b.refresh_shared();
        assert_eq!(
            b.settings().work_max_iter,
            25,
            "the shared key wins over the file"
        );
        assert_eq!(
            b.settings().model,
            "from-env",
            "the environment wins over both"
        );

        // A bad value in the store names its key and keeps the last good one.
        kept.save("work_max_iter", "lots").unwrap();
        b.refresh_shared();
        assert_eq!(b.settings().work_max_iter, 25);
        assert!(b
            .settings_warnings()
            .iter()
            .any(|w| w.contains("work_max_iter")));
    }

    #[test]
    fn without_a_shared_store_a_key_is_saved_in_the_file_alone() {
        let home = tempfile::tempdir().unwrap();
        let c = Config::for_home(home.path(), &[]);
        c.set("work_max_iter", "21").unwrap();
        c.refresh_shared();
        assert_eq!(c.settings().work_max_iter, 21);
        let text = std::fs::read_to_string(&c.paths.settings).unwrap();
        assert!(text.contains("work_max_iter: 21"), "{text}");
    }
}
