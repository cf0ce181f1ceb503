//! Loopback fakes the suite drives the real code against.

pub mod discord;
pub mod model_server;
pub mod page_server;
pub mod postgres;
pub mod proxy;
pub mod speech_server;
pub mod thread;
pub mod voice;
pub mod web;
