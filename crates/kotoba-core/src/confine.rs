//! Path confinement, below the gate and the file tools alike: a path is resolved
//! inside the workspace, following every link that exists, or refused with the reason.

use std::path::{Component, Path, PathBuf};

/// Why a path is refused; its `Display` is the sentence the caller shows (adding what
/// was not done).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfineError {
    /// Nothing (or only blanks) was given.
    #[error("the path is empty")]
    Empty,
    /// The workspace folder itself cannot be resolved.
    #[error("the workspace folder {} cannot be opened ({reason})", .workspace.display())]
    Workspace {
        /// The workspace as configured.
        workspace: PathBuf,
        /// What the file system said.
        reason: String,
    },
    /// The path leaves the workspace (by `..`, an absolute path or a link).
    #[error("'{path}' is outside the workspace ({})", .root.display())]
    Outside {
        /// The path as given.
        path: String,
        /// The workspace's real path.
        root: PathBuf,
    },
    /// A link on the way leads nowhere.
    #[error("'{path}' goes through a link that leads nowhere")]
    DanglingLink {
        /// The path as given.
        path: String,
    },
}

/// Resolve `path` (relative to the workspace, or absolute) to a real path inside
/// `workspace`, following every symlink that exists, or say why it is not allowed.
/// Creates nothing.
pub fn resolve_in_workspace(workspace: &Path, path: &str) -> Result<PathBuf, ConfineError> {
    if path.trim().is_empty() {
        return Err(ConfineError::Empty);
    }
    let root = workspace
        .canonicalize()
        .map_err(|e| ConfineError::Workspace {
            workspace: workspace.to_path_buf(),
            reason: e.to_string(),
        })?;
    let given = Path::new(path);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    let outside = || ConfineError::Outside {
        path: path.to_string(),
        root: root.clone(),
    };
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
        .map_err(|_| ConfineError::DanglingLink {
            path: path.to_string(),
        })?;
    for name in rest.iter().rev() {
        real.push(name);
    }
    if real.starts_with(&root) {
        Ok(real)
    } else {
        Err(outside())
    }
}
