//! Her files are hers: the data folder is 0700 and what is in it 0600 (folders 0700).
//! Everything she makes is made so (a umask of 077, set at start; what she runs gets the
//! umask she was started with), and at each `serve` whatever is found looser is
//! tightened, in one log line. The workspace's contents are the person's own work and
//! are left as they are (the folder around them keeps everyone else out).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use nix::sys::stat::{umask, Mode};

/// The umask she was started with (what her children get back); 022 until
/// [`private_umask`] ran.
static ORIGINAL: AtomicU32 = AtomicU32::new(0o022);

/// From now on everything this process makes is private (umask 077).
pub fn private_umask() {
    let old = umask(Mode::from_bits_truncate(0o077));
    ORIGINAL.store(old.bits(), Ordering::SeqCst);
}

/// The umask she was started with, for a child to get back.
pub fn original_umask() -> u32 {
    ORIGINAL.load(Ordering::SeqCst)
}

/// Everything under `home` (not following links, not inside `skip`) that others may
/// reach: group or other bits set.
pub fn looser(home: &Path, skip: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(home, skip, &mut |path, mode| {
        if mode & 0o077 != 0 {
            found.push(path.to_path_buf());
        }
    });
    found
}

/// Take the group and other bits off the data folder and everything in it (but
/// what is inside `skip`); what was changed, named once in the log.
pub fn tighten(home: &Path, skip: &[PathBuf]) -> Vec<PathBuf> {
    let mut changed = Vec::new();
    walk(home, skip, &mut |path, mode| {
        if mode & 0o077 == 0 {
            return;
        }
        let tight = std::fs::Permissions::from_mode(mode & 0o7700);
        match std::fs::set_permissions(path, tight) {
            Ok(()) => changed.push(path.to_path_buf()),
            Err(e) => tracing::warn!("could not make {} private: {e}", path.display()),
        }
    });
    if !changed.is_empty() {
        let names: Vec<String> = changed
            .iter()
            .take(5)
            .map(|p| p.display().to_string())
            .collect();
        let more = changed.len().saturating_sub(names.len());
        tracing::warn!(
            "made {} path(s) in the data folder private (0700 folders, 0600 files): {}{}",
            changed.len(),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    changed
}

/// Visit `dir` and everything below it (links themselves are not followed) with its
/// mode, but not what is inside a `skip` folder.
fn walk(dir: &Path, skip: &[PathBuf], visit: &mut dyn FnMut(&Path, u32)) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if meta.file_type().is_symlink() {
        return;
    }
    visit(dir, meta.permissions().mode());
    if !meta.is_dir() || skip.iter().any(|s| s == dir) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        walk(&entry.path(), skip, visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_loose_data_folder_is_tightened_but_the_workspaces_contents_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        std::fs::create_dir_all(home.join("memory")).unwrap();
        std::fs::create_dir_all(home.join("workspace")).unwrap();
        std::fs::write(home.join("settings.yaml"), "x").unwrap();
        std::fs::write(home.join("memory/MEMORY.md"), "x").unwrap();
        std::fs::write(home.join("workspace/script.sh"), "x").unwrap();
        set(&home, 0o755);
        set(&home.join("memory"), 0o755);
        set(&home.join("settings.yaml"), 0o644);
        set(&home.join("memory/MEMORY.md"), 0o664);
        set(&home.join("workspace/script.sh"), 0o755);
        let skip = [home.join("workspace")];
        assert_eq!(
            looser(&home, &skip).len(),
            5,
            "the workspace folder itself counts"
        );
        let changed = tighten(&home, &skip);
        assert_eq!(changed.len(), 5, "{changed:?}");
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&home.join("memory")), 0o700);
        assert_eq!(mode(&home.join("settings.yaml")), 0o600);
        assert_eq!(mode(&home.join("memory/MEMORY.md")), 0o600);
        assert_eq!(mode(&home.join("workspace")), 0o700);
        assert_eq!(
            mode(&home.join("workspace/script.sh")),
            0o755,
            "the person's own work"
        );
        assert!(looser(&home, &skip).is_empty());
        assert!(
            tighten(&home, &skip).is_empty(),
            "nothing to say the second time"
        );
    }
}
