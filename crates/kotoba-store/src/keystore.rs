//! The keystore: secrets encrypted at rest with AES-256-GCM (a fresh nonce per value).
//! The master key comes from `KOTOBA_MASTER_KEY` (base64 of 32 bytes) or from a key file
//! created on first use with mode 0600. Values never reach a log, a transcript, a frame
//! or a Discord channel: only names are ever listed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::db::args;
use super::{now_ms, Store, StoreError};
use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;

/// Why the keystore could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeystoreError {
    /// `KOTOBA_MASTER_KEY` is set but is not base64 of 32 bytes.
    #[error("KOTOBA_MASTER_KEY must be base64 of exactly 32 bytes")]
    BadMasterKey,
    /// The key file could not be read or created.
    #[error("keystore key file {path}: {reason}")]
    KeyFile {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A value could not be decrypted (wrong master key, or a damaged row).
    #[error("the secret '{0}' could not be decrypted with this master key")]
    Decrypt(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The master key, held only in memory. Its Debug never shows it.
pub struct MasterKey([u8; 32]);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(…)")
    }
}

impl MasterKey {
    /// From `KOTOBA_MASTER_KEY` when given, else the key file (created 0600 on first use).
    pub fn load(env_value: Option<&str>, key_file: &Path) -> Result<MasterKey, KeystoreError> {
        if let Some(v) = env_value.filter(|v| !v.trim().is_empty()) {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(v.trim())
                .map_err(|_| KeystoreError::BadMasterKey)?;
            return <[u8; 32]>::try_from(bytes.as_slice())
                .map(MasterKey)
                .map_err(|_| KeystoreError::BadMasterKey);
        }
        let err = |e: std::io::Error| KeystoreError::KeyFile {
            path: key_file.display().to_string(),
            reason: e.to_string(),
        };
        match std::fs::read(key_file) {
            Ok(bytes) => <[u8; 32]>::try_from(bytes.as_slice())
                .map(MasterKey)
                .map_err(|_| KeystoreError::KeyFile {
                    path: key_file.display().to_string(),
                    reason: "it does not hold exactly 32 bytes".into(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key: [u8; 32] = rand::random();
                if let Some(dir) = key_file.parent() {
                    std::fs::create_dir_all(dir).map_err(err)?;
                }
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(key_file)
                    .map_err(err)?;
                f.write_all(&key).map_err(err)?;
                Ok(MasterKey(key))
            }
            Err(e) => Err(err(e)),
        }
    }
}

impl Store {
    /// Encrypt and save a secret under `name` (replacing an older value).
    pub async fn put_secret(
        &self,
        key: &MasterKey,
        name: &str,
        value: &str,
    ) -> Result<(), KeystoreError> {
        let cipher = Aes256Gcm::new((&key.0).into());
        let nonce_bytes: [u8; 12] = rand::random();
        let sealed = cipher
            .encrypt(Nonce::from_slice(&nonce_bytes), value.as_bytes())
            .map_err(|_| KeystoreError::Decrypt(name.to_string()))?;
        self.run(async |c| {
            c.execute(
                "INSERT INTO secrets(name, nonce, sealed, at_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(name) DO UPDATE SET nonce = excluded.nonce,
                   sealed = excluded.sealed, at_ms = excluded.at_ms",
                args![name, nonce_bytes.to_vec(), sealed, now_ms()],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Decrypt the secret `name`, if one is saved.
    pub async fn get_secret(
        &self,
        key: &MasterKey,
        name: &str,
    ) -> Result<Option<String>, KeystoreError> {
        let row = self
            .run(async |c| {
                c.query_opt(
                    "SELECT nonce, sealed FROM secrets WHERE name = ?1",
                    args![name],
                )
                .await
            })
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (nonce, sealed) = (row.blob(0)?, row.blob(1)?);
        if nonce.len() != 12 {
            return Err(KeystoreError::Decrypt(name.to_string()));
        }
        let cipher = Aes256Gcm::new((&key.0).into());
        let plain = cipher
            .decrypt(Nonce::from_slice(&nonce), sealed.as_slice())
            .map_err(|_| KeystoreError::Decrypt(name.to_string()))?;
        String::from_utf8(plain)
            .map(Some)
            .map_err(|_| KeystoreError::Decrypt(name.to_string()))
    }

    /// The names of every saved secret (never their values).
    pub async fn secret_names(&self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .run(async |c| c.query("SELECT name FROM secrets ORDER BY name", &[]).await)
            .await?;
        rows.iter().map(|r| r.text(0)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn on_every_backend_a_secret_is_stored_sealed_and_read_back_with_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let key = MasterKey::load(None, &dir.path().join("keystore.key")).unwrap();
        for db in crate::testing::each() {
            let store = db.open().await;
            store
                .put_secret(&key, "github", "ghp_TOPSECRET123")
                .await
                .unwrap();
            store
                .put_secret(&key, "github", "ghp_TOPSECRET456")
                .await
                .unwrap();
            let sealed = store
                .run(async |c| c.query("SELECT sealed FROM secrets", &[]).await)
                .await
                .unwrap();
            assert_eq!(sealed.len(), 1, "{}: saved again, kept once", db.name);
            let bytes = sealed[0].blob(0).unwrap();
            assert!(
                !bytes.windows(12).any(|w| w == b"ghp_TOPSECRE"),
                "{}: no plaintext in the store",
                db.name
            );
            let again = db.open().await;
            assert_eq!(
                again.get_secret(&key, "github").await.unwrap().as_deref(),
                Some("ghp_TOPSECRET456"),
                "{}",
                db.name
            );
            assert_eq!(again.secret_names().await.unwrap(), ["github"]);
            assert_eq!(again.get_secret(&key, "none").await.unwrap(), None);
        }
    }

    #[tokio::test]
    async fn a_secret_is_encrypted_at_rest_and_read_back_with_the_same_key() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        let key_file = dir.path().join("keystore.key");
        let key = MasterKey::load(None, &key_file).unwrap();
        let mode = std::fs::metadata(&key_file).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600,
            "the key file is 0600"
        );
        let store = Store::open(&db).unwrap();
        store
            .put_secret(&key, "github", "ghp_TOPSECRET123")
            .await
            .unwrap();
        drop(store);
        let raw = std::fs::read(&db).unwrap();
        assert!(
            !raw.windows(15).any(|w| w == b"ghp_TOPSECRET12"),
            "no plaintext on disk"
        );
        let store = Store::open(&db).unwrap();
        let again = MasterKey::load(None, &key_file).unwrap();
        assert_eq!(
            store.get_secret(&again, "github").await.unwrap().as_deref(),
            Some("ghp_TOPSECRET123")
        );
        assert_eq!(store.secret_names().await.unwrap(), ["github"]);
        let other = MasterKey::load(
            Some(&base64::engine::general_purpose::STANDARD.encode([7u8; 32])),
            &key_file,
        )
        .unwrap();
        assert!(matches!(
            store.get_secret(&other, "github").await,
            Err(KeystoreError::Decrypt(_))
        ));
        assert!(format!("{again:?}").contains('…'), "the key never prints");
        assert!(matches!(
            MasterKey::load(Some("short"), &key_file),
            Err(KeystoreError::BadMasterKey)
        ));
    }
}
