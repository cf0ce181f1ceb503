//! The page's token: with no `web_password` (and `web_auth` not `none`), every page
//! route but `/health` and the static assets needs it — `KOTOBA_WEB_TOKEN` when set,
//! else the one kept in `$KOTOBA_HOME/web_token` (0600), made at the first start.
//! `kotoba serve` prints the page's address with it; opening that address once sets the
//! session cookie; scripts send `Authorization: Bearer <token>`.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use kotoba_core::config::Config;

/// The variable that sets the token.
pub const TOKEN_ENV: &str = "KOTOBA_WEB_TOKEN";
/// The token's file inside the data folder.
pub const TOKEN_FILE: &str = "web_token";

/// Where the token is kept.
pub fn token_path(config: &Config) -> PathBuf {
    config.paths.home.join(TOKEN_FILE)
}

/// The token in effect, if one exists yet: `KOTOBA_WEB_TOKEN`, else the file's.
pub fn kept(config: &Config) -> Option<String> {
    from_env(config).or_else(|| read(&token_path(config)))
}

fn from_env(config: &Config) -> Option<String> {
    config
        .env(TOKEN_ENV)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

fn read(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The token in effect, making and keeping a new one (32 random bytes as hex, mode
/// 0600) when there is none yet.
pub fn load_or_create(config: &Config) -> std::io::Result<String> {
    if let Some(t) = kept(config) {
        return Ok(t);
    }
    let path = token_path(config);
    let token = kotoba_core::config::password::random_secret();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path);
    match made {
        Ok(mut f) => {
            f.write_all(format!("{token}\n").as_bytes())?;
            f.sync_all()?;
            Ok(token)
        }
        // Another process made it first: theirs is the token.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read(&path).ok_or_else(|| std::io::Error::other("the token file is empty"))
        }
        Err(e) => Err(e),
    }
}

/// The session cookie's value for a page guarded by `token` (and `password`, as kept):
/// derived from both, so it lasts across restarts and ends when either changes.
pub fn cookie_for(token: &str, password: Option<&str>) -> String {
    let mut h = Sha256::new();
    h.update(b"kotoba page session\0");
    h.update(token.as_bytes());
    h.update(b"\0");
    h.update(password.unwrap_or("").as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_first_start_makes_a_private_token_and_later_starts_keep_it() {
        let home = tempfile::tempdir().unwrap();
        let config = Config::for_home(home.path(), &[]);
        assert_eq!(kept(&config), None);
        let t = load_or_create(&config).unwrap();
        assert_eq!(t.len(), 64);
        let mode = std::fs::metadata(token_path(&config))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create(&config).unwrap(), t, "kept");
        let set = Config::for_home(home.path(), &[(TOKEN_ENV, "from-env")]);
        assert_eq!(
            load_or_create(&set).unwrap(),
            "from-env",
            "the variable wins"
        );
    }

    #[test]
    fn the_cookie_changes_with_the_token_or_the_password() {
        let a = cookie_for("t1", None);
        assert_eq!(a, cookie_for("t1", None));
        assert_ne!(a, cookie_for("t2", None));
        assert_ne!(a, cookie_for("t1", Some("pw")));
        assert!(!a.contains("t1"));
    }
}
