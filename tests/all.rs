//! Integration tests as one binary: `suite/` holds the tests, `support/` the loopback fakes.

mod suite;
mod support;
