//! The data folder, claimed once per `kotoba serve`: an exclusive lock file (a second
//! Kotoba on the same folder is refused), and a folder that is read-only, full or locked
//! stops start-up with one sentence naming the folder and the cause — never a panic.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::store::StoreError;

/// The lock file's name inside the data folder; it holds the owner's pid.
pub const LOCK_FILE: &str = "kotoba.lock";
/// Less free space than this and the folder counts as full.
const MIN_FREE_BYTES: u64 = 1024 * 1024;
/// How much the start-up probe writes (and removes) to prove the folder takes data.
const PROBE_BYTES: usize = 64 * 1024;

/// Held for the life of the process: the lock is released only when the process ends
/// (a static is never dropped, so the lock is never given up early).
static HELD: OnceLock<Flock<File>> = OnceLock::new();

/// Why the data folder cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// Mounted read-only, or not writable by this user.
    ReadOnly(String),
    /// No space left.
    Full(String),
    /// Another Kotoba process holds it (its pid when known).
    InUse(Option<u32>),
    /// The path is a file, not a folder.
    NotAFolder,
    /// Anything else the system said.
    Other(String),
}

/// The data folder cannot be used; `Display` is the one sentence start-up prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFolderError {
    /// The folder.
    pub folder: PathBuf,
    /// Why.
    pub cause: Cause,
}

impl std::fmt::Display for DataFolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let folder = self.folder.display();
        let cause = match &self.cause {
            Cause::ReadOnly(why) => format!("is read-only or not writable ({why})"),
            Cause::Full(why) => format!("is full ({why})"),
            Cause::InUse(Some(pid)) => {
                format!("is in use by another Kotoba process (pid {pid}); stop that one first")
            }
            Cause::InUse(None) => {
                "is in use by another Kotoba process; stop that one first".to_string()
            }
            Cause::NotAFolder => "is a file, not a folder".to_string(),
            Cause::Other(why) => format!("cannot be used ({why})"),
        };
        write!(
            f,
            "Kotoba cannot start: the data folder {folder} {cause} — fix that or point KOTOBA_HOME at another folder."
        )
    }
}

impl std::error::Error for DataFolderError {}

impl DataFolderError {
    fn new(folder: &Path, cause: Cause) -> Self {
        DataFolderError {
            folder: folder.to_path_buf(),
            cause,
        }
    }

    /// Name what an I/O error says about the folder.
    pub fn from_io(folder: &Path, e: &std::io::Error) -> Self {
        let why = e.to_string();
        let cause = match e.raw_os_error().map(Errno::from_raw) {
            Some(Errno::EROFS | Errno::EACCES | Errno::EPERM) => Cause::ReadOnly(why),
            Some(Errno::ENOSPC | Errno::EDQUOT) => Cause::Full(why),
            Some(Errno::ENOTDIR | Errno::EEXIST) => Cause::NotAFolder,
            _ => Cause::Other(why),
        };
        Self::new(folder, cause)
    }

    /// Name what opening the store says about the folder.
    pub fn from_store(folder: &Path, e: &StoreError) -> Self {
        use rusqlite::ErrorCode;
        match e {
            StoreError::Io(io) => Self::from_io(folder, io),
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, msg)) => {
                let why = msg.clone().unwrap_or_else(|| f.to_string());
                let cause = match f.code {
                    ErrorCode::DiskFull => Cause::Full(why),
                    ErrorCode::ReadOnly | ErrorCode::PermissionDenied => Cause::ReadOnly(why),
                    ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Cause::InUse(None),
                    _ => Cause::Other(format!("its database: {why}")),
                };
                Self::new(folder, cause)
            }
            other => Self::new(folder, Cause::Other(format!("its database: {other}"))),
        }
    }
}

/// Claim `folder` for this process: create it, take the exclusive lock (writing our pid
/// into the lock file), and prove it takes data. Idempotent within one process.
pub fn claim(folder: &Path) -> Result<(), DataFolderError> {
    if HELD.get().is_some() {
        return Ok(());
    }
    let io = |e: std::io::Error| DataFolderError::from_io(folder, &e);
    std::fs::create_dir_all(folder).map_err(io)?;
    if !std::fs::metadata(folder).map_err(io)?.is_dir() {
        return Err(DataFolderError::new(folder, Cause::NotAFolder));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(folder.join(LOCK_FILE))
        .map_err(io)?;
    let mut locked = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err((mut file, Errno::EWOULDBLOCK)) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(DataFolderError::new(
                folder,
                Cause::InUse(text.trim().parse().ok()),
            ));
        }
        Err((_, errno)) => return Err(io(std::io::Error::from_raw_os_error(errno as i32))),
    };
    locked.set_len(0).map_err(io)?;
    locked.rewind().map_err(io)?;
    writeln!(locked, "{}", std::process::id()).map_err(io)?;
    locked.sync_all().map_err(io)?;
    check_space(folder)?;
    probe(folder).map_err(io)?;
    let _ = HELD.set(locked);
    Ok(())
}

/// Refuse a read-only mount or a nearly full one up front.
fn check_space(folder: &Path) -> Result<(), DataFolderError> {
    let Ok(stat) = nix::sys::statvfs::statvfs(folder) else {
        return Ok(()); // the probe write still decides
    };
    if stat.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY) {
        return Err(DataFolderError::new(
            folder,
            Cause::ReadOnly("the file system is mounted read-only".into()),
        ));
    }
    let free = stat.blocks_available().saturating_mul(stat.fragment_size());
    if free < MIN_FREE_BYTES {
        return Err(DataFolderError::new(
            folder,
            Cause::Full(format!("{free} bytes free")),
        ));
    }
    Ok(())
}

/// Write, sync and remove a small file: the folder really takes data.
fn probe(folder: &Path) -> std::io::Result<()> {
    let path = folder.join(".kotoba-write-probe");
    let result = (|| {
        let mut f = File::create(&path)?;
        f.write_all(&[0u8; PROBE_BYTES])?;
        f.sync_all()
    })();
    let _ = std::fs::remove_file(&path);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(code: Errno) -> std::io::Error {
        std::io::Error::from_raw_os_error(code as i32)
    }

    #[test]
    fn a_read_only_or_full_folder_is_one_sentence_naming_the_folder_and_the_cause() {
        let folder = Path::new("/srv/kotoba");
        let ro = DataFolderError::from_io(folder, &os(Errno::EROFS)).to_string();
        assert!(ro.contains("/srv/kotoba is read-only"), "{ro}");
        assert!(ro.contains("Read-only file system"), "{ro}");
        let full = DataFolderError::from_io(folder, &os(Errno::ENOSPC)).to_string();
        assert!(full.contains("/srv/kotoba is full"), "{full}");
        assert!(full.contains("No space left"), "{full}");
        for s in [&ro, &full] {
            assert_eq!(s.lines().count(), 1, "{s}");
            assert!(s.ends_with('.'), "{s}");
        }
    }

    #[test]
    fn a_full_or_busy_database_is_named_as_such() {
        let folder = Path::new("/srv/kotoba");
        let sqlite = |code: i32| {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                None,
            ))
        };
        let full = DataFolderError::from_store(folder, &sqlite(rusqlite::ffi::SQLITE_FULL));
        assert!(matches!(full.cause, Cause::Full(_)), "{full}");
        let ro = DataFolderError::from_store(folder, &sqlite(rusqlite::ffi::SQLITE_READONLY));
        assert!(matches!(ro.cause, Cause::ReadOnly(_)), "{ro}");
        let busy = DataFolderError::from_store(folder, &sqlite(rusqlite::ffi::SQLITE_BUSY));
        assert!(
            busy.to_string().contains("in use by another Kotoba"),
            "{busy}"
        );
    }

    #[test]
    fn a_file_where_the_folder_should_be_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, "x").unwrap();
        let err = claim(&file).unwrap_err();
        assert_eq!(err.cause, Cause::NotAFolder, "{err}");
        assert!(err.to_string().contains("not-a-folder is a file"), "{err}");
    }
}
