//! Forget a person (docs/discord.md, "Forget me"): one call, whoever asked for it (the
//! person through `/forget-me` or by asking her, an owner from the page), erases what
//! the store keeps about them (store/erase.rs) and their notebook's Markdown folder, reads
//! every loaded conversation it changed again, tells each surface to drop the lines of
//! theirs it holds in memory, and records in the audit trail that an erase happened,
//! with counts and never its content.

use super::Engine;
use crate::tools::memory::{MemoryStore, Notebook};
pub(super) use crate::tools::port::ErasedBy;
use kotoba_store::{Approver, Erased, StoreError};

/// What a surface does when a person is forgotten: drop the lines of theirs it holds
/// in memory (overheard lines waiting for her next turn), by Discord user id.
pub(super) type Forgetter = Box<dyn Fn(u64) + Send + Sync>;

/// Why an erase did not finish. What was already erased stays erased.
#[derive(Debug, thiserror::Error)]
pub enum ForgetError {
    /// The store refused: nothing of the store's part was erased (one transaction).
    #[error("{0}")]
    Store(#[from] StoreError),
    /// Their notebook's folder could not be removed.
    #[error("their notebook's folder: {0}")]
    Files(#[from] std::io::Error),
    /// The erase's thread was lost (the process is shutting down).
    #[error("the erase was cut short")]
    Cut,
}

impl Engine {
    /// Register what `surface` does when a person is forgotten (in place of what it
    /// registered before: a surface that connects again registers again).
    pub fn on_forget(&self, surface: &'static str, f: Forgetter) {
        let mut g = match self.forgetters.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.retain(|(s, _)| *s != surface);
        g.push((surface, f));
    }

    /// Erase everything kept about Discord user `user`, on the store's own thread; what
    /// was erased, counted.
    pub async fn forget_person(&self, user: u64, by: ErasedBy) -> Result<Erased, ForgetError> {
        let (store, home) = (&self.store, &self.config.paths.home);
        // Their Markdown facts, so a row quoting one is blanked too.
        let notebook = MemoryStore::notebook(home, None, Notebook::Person(user));
        let quoted: Vec<String> = notebook
            .facts(None)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|f| f.text)
            .collect();
        let erased = store.erase_person(user, &quoted).await?;
        match tokio::fs::remove_dir_all(notebook.dir()).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        for id in &erased.sessions {
            self.sessions.reload(id, &self.store).await;
        }
        {
            let forgetters = match self.forgetters.read() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            for (_, f) in forgetters.iter() {
                f(user);
            }
        }
        let who = match by {
            ErasedBy::Themselves => "asked by the person themselves",
            ErasedBy::Owner => "asked by an owner",
        };
        let detail = format!("{who}; {}", erased.summary());
        let audited = self
            .store
            .audit(
                "people",
                "erase_person",
                "erased everything kept about one person",
                "write",
                true,
                Approver::User,
                &detail,
            )
            .await;
        if let Err(e) = audited {
            tracing::error!("writing the audit trail of an erase: {e}");
        }
        Ok(erased)
    }
}
