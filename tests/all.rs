//! Integration tests as one binary: `suite/` holds the tests, `support/` the loopback fakes.
// Everything in this binary is test code; clippy's allow-*-in-tests only sees #[test]
// functions, not the helpers and fixtures beside them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
mod support;
