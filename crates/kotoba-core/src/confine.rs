//! Path confinement, below the gate and the file tools alike: a path is resolved
//! inside the workspace, following every link that exists, or refused with the reason.

use std::path::{Component, Path, PathBuf};

/// Resolve `path` (relative to the workspace, or absolute) to a real path inside
/// `workspace`, following every symlink that exists. `Err` is a sentence naming why it
/// is not allowed (the caller adds what was not done). Creates nothing.
pub fn resolve_in_workspace(workspace: &Path, path: &str) -> Result<PathBuf, String> {
    if path.trim().is_empty() {
        return Err("the path is empty".to_string());
    }
    let root = workspace.canonicalize().map_err(|e| {
        format!(
            "the workspace folder {} cannot be opened ({e})",
            workspace.display()
        )
    })?;
    let given = Path::new(path);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    let outside = || format!("'{path}' is outside the workspace ({})", root.display());
    // Lexical clean-up first, so `..` cannot climb out before the check.
    let mut clean = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::ParentDir => {
                if !clean.pop() {
                    return Err(outside());
                }
            }
            Component::CurDir => {}
            other => clean.push(other.as_os_str()),
        }
    }
    // The deepest part that exists (a dangling link counts) is resolved for real; the
    // rest does not exist yet and holds no `..`, so it cannot leave.
    let mut existing = clean.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return Err(outside()),
        }
    }
    let mut real = existing
        .canonicalize()
        .map_err(|_| format!("'{path}' goes through a link that leads nowhere"))?;
    for name in rest.iter().rev() {
        real.push(name);
    }
    if real.starts_with(&root) {
        Ok(real)
    } else {
        Err(outside())
    }
}
