//! /v1's bearer check: `Authorization: Bearer <KOTOBA_API_KEY>`, compared in constant
//! time. With no key configured every call is refused (401), saying what to set.

use axum::http::HeaderMap;

use super::errors::V1Error;
use crate::surfaces::web::auth::{bearer, secret_eq};

/// Ok when the request carries the configured key.
pub fn check(headers: &HeaderMap, key: Option<&str>) -> Result<(), V1Error> {
    let Some(key) = key else {
        return Err(V1Error::unauthorized(
            "this server has no API key configured: set KOTOBA_API_KEY and send it as a bearer token",
        ));
    };
    match bearer(headers) {
        Some(given) if secret_eq(given, key) => Ok(()),
        Some(_) => Err(V1Error::unauthorized("Incorrect API key provided.")),
        None => Err(V1Error::unauthorized(
            "You didn't provide an API key: send it as 'Authorization: Bearer <key>'.",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_configured_key_passes() {
        let mut h = HeaderMap::new();
        assert_eq!(check(&h, Some("k")).unwrap_err().status, 401);
        h.insert("authorization", "Bearer k".parse().unwrap());
        assert!(check(&h, Some("k")).is_ok());
        assert!(check(&h, Some("kk")).is_err());
        assert!(check(&h, None)
            .unwrap_err()
            .message
            .contains("KOTOBA_API_KEY"));
        h.insert("authorization", "Basic k".parse().unwrap());
        assert!(check(&h, Some("k")).is_err());
    }
}
