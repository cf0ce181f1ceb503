//! Surfaces: each turns its input into turn requests and the engine's frames into its
//! own pixels or sounds. Only surfaces may print or import a UI/protocol crate.

pub mod discord;
pub mod http;
pub mod terminal;
pub mod v1;
pub mod web;
