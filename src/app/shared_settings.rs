//! Settings kept for every process in the shared store (the store's side of
//! config/shared.rs, on PostgreSQL). They are read once at start and then again only
//! when the store says they changed — a NOTIFY every save sends, or the listening
//! connection coming back after a break — so no turn waits on them. A save is written
//! through to the store before it is acknowledged.

use std::sync::{Arc, Mutex, Weak};

use crate::config::{Config, SharedError};
use crate::store::Store;

/// The shared store's settings rows, with the last copy read.
#[derive(Debug)]
struct SettingsInStore {
    /// Where they are kept.
    store: Arc<Store>,
    /// The runtime a save's write is carried out on (a save is called from a blocking
    /// thread: the settings writer also writes settings.yaml and hashes passwords).
    rt: tokio::runtime::Handle,
    /// The keys as last read (or saved here): what a refresh applies.
    kept: Mutex<Vec<(String, String)>>,
}

impl SettingsInStore {
    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<(String, String)>> {
        match self.kept.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

impl crate::config::SharedSettings for SettingsInStore {
    fn save(&self, key: &str, value: &str) -> Result<(), SharedError> {
        let (store, rt) = (&self.store, &self.rt);
        // A thread of its own waits for the write, so this never blocks inside the
        // runtime's context whatever thread called it.
        let saved = std::thread::scope(|s| {
            s.spawn(|| rt.block_on(store.save_setting(key, value)))
                .join()
        });
        match saved {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(SharedError::Store(e.to_string())),
            Err(_) => return Err(SharedError::Stopped),
        }
        let mut kept = self.kept();
        kept.retain(|(k, _)| k != key);
        kept.push((key.to_string(), value.to_string()));
        Ok(())
    }

    fn load(&self) -> Result<Vec<(String, String)>, SharedError> {
        Ok(self.kept().clone())
    }
}

/// Share `config`'s settings through `store`: read its keys now, then follow its
/// notifications for as long as the configuration lives.
pub(super) async fn share(config: &Arc<Config>, store: &Arc<Store>) {
    let shared = Arc::new(SettingsInStore {
        store: store.clone(),
        rt: tokio::runtime::Handle::current(),
        kept: Mutex::new(Vec::new()),
    });
    match store.saved_settings().await {
        Ok(keys) => *shared.kept() = keys,
        Err(e) => tracing::warn!("reading the settings saved for every process: {e}"),
    }
    config.share_settings(shared.clone());
    if let Some(wake) = store.listen_for_settings() {
        tokio::spawn(follow(Arc::downgrade(config), shared, wake));
    }
}

/// Read the keys again at each notification, and apply them; ends with the
/// configuration.
async fn follow(
    config: Weak<Config>,
    shared: Arc<SettingsInStore>,
    mut wake: tokio::sync::mpsc::UnboundedReceiver<()>,
) {
    while wake.recv().await.is_some() {
        // Several notifications at once are one read.
        while wake.try_recv().is_ok() {}
        let Some(config) = config.upgrade() else {
            return;
        };
        match shared.store.saved_settings().await {
            Ok(keys) => {
                *shared.kept() = keys;
                config.refresh_shared();
            }
            Err(e) => tracing::debug!("reading the settings saved for every process: {e}"),
        }
    }
}
