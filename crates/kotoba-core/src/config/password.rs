//! The page's password at rest: a password saved from the page (or `/settings`) is kept
//! in settings.yaml as an scrypt hash, `scrypt$<log_n>$<r>$<p>$<salt>$<hash>` (base64),
//! never as its text. A password written by hand (or in `KOTOBA_WEB_PASSWORD`) as
//! plain text still works; both are checked in constant time.

use base64::engine::general_purpose::STANDARD_NO_PAD as B64;
use base64::Engine as _;
use subtle::ConstantTimeEq;

/// What a hashed password starts with.
const PREFIX: &str = "scrypt$";
/// scrypt's cost: 2^14 × 8 × 128 bytes = 16 MiB, about 50 ms a check.
const LOG_N: u8 = 14;
const R: u32 = 8;
const P: u32 = 1;
/// Bytes of salt and of hash.
const SALT_LEN: usize = 16;
const HASH_LEN: usize = 32;

/// A new random secret: 32 random bytes as hex (the page's token, a lock no one knows).
pub fn random_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a stored password is already a hash.
pub fn is_hash(stored: &str) -> bool {
    stored.starts_with(PREFIX)
}

/// Why scrypt refused to hash (its own words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// The cost parameters are out of scrypt's range.
    #[error("{0}")]
    Params(scrypt::errors::InvalidParams),
    /// The hash length is out of scrypt's range.
    #[error("{0}")]
    Output(scrypt::errors::InvalidOutputLen),
}

impl From<scrypt::errors::InvalidParams> for PasswordError {
    fn from(e: scrypt::errors::InvalidParams) -> Self {
        PasswordError::Params(e)
    }
}

impl From<scrypt::errors::InvalidOutputLen> for PasswordError {
    fn from(e: scrypt::errors::InvalidOutputLen) -> Self {
        PasswordError::Output(e)
    }
}

/// The hash to keep for `password` (a fresh random salt each time).
pub fn hash(password: &str) -> Result<String, PasswordError> {
    let salt: [u8; SALT_LEN] = rand::random();
    let out = derive(password, &salt, LOG_N, R, P)?;
    Ok(format!(
        "{PREFIX}{LOG_N}${R}${P}${}${}",
        B64.encode(salt),
        B64.encode(out)
    ))
}

fn derive(
    password: &str,
    salt: &[u8],
    log_n: u8,
    r: u32,
    p: u32,
) -> Result<Vec<u8>, PasswordError> {
    let params = scrypt::Params::new(log_n, r, p, HASH_LEN)?;
    let mut out = vec![0u8; HASH_LEN];
    scrypt::scrypt(password.as_bytes(), salt, &params, &mut out)?;
    Ok(out)
}

/// Whether `given` is the password `stored` keeps (a hash, or the text itself). A hash
/// that cannot be read matches nothing: the page stays locked, never open.
pub fn matches(given: &str, stored: &str) -> bool {
    let Some(rest) = stored.strip_prefix(PREFIX) else {
        return bool::from(given.as_bytes().ct_eq(stored.as_bytes()));
    };
    let parts: Vec<&str> = rest.split('$').collect();
    let [log_n, r, p, salt, want] = parts[..] else {
        return false;
    };
    let (Ok(log_n), Ok(r), Ok(p), Ok(salt), Ok(want)) = (
        log_n.parse::<u8>(),
        r.parse::<u32>(),
        p.parse::<u32>(),
        B64.decode(salt),
        B64.decode(want),
    ) else {
        return false;
    };
    // A hash from a hand-edited file must not cost more than a moment to check.
    if log_n > 20 || r > 16 || p > 4 {
        return false;
    }
    derive(given, &salt, log_n, r, p).is_ok_and(|got| bool::from(got.ct_eq(&want)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hashed_password_matches_only_itself_and_never_holds_its_text() {
        let h = hash("correct horse").unwrap();
        assert!(is_hash(&h) && !h.contains("correct horse"), "{h}");
        assert!(matches("correct horse", &h));
        assert!(!matches("correct hors", &h));
        assert_ne!(h, hash("correct horse").unwrap(), "a fresh salt each time");
    }

    #[test]
    fn a_plain_password_still_matches_and_a_broken_hash_matches_nothing() {
        assert!(matches("hunter2", "hunter2") && !matches("hunter", "hunter2"));
        assert!(!matches("", "scrypt$14$8$1$zz"));
        assert!(
            !matches("x", "scrypt$30$8$1$AAAA$AAAA"),
            "too costly: refused"
        );
    }
}
