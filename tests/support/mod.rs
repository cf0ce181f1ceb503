//! Loopback fakes the suite drives the real code against.

pub mod model_server;
pub mod web;
