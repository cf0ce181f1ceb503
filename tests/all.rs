//! Integration tests as one binary: `suite/` holds the tests, the loopback fakes are the `kotoba-testkit` crate.
// A test or bench binary exports nothing: its helpers are `pub` for its own modules.
#![allow(unreachable_pub)]
// Everything in this binary is test code; clippy's allow-*-in-tests only sees #[test]
// functions, not the helpers and fixtures beside them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
