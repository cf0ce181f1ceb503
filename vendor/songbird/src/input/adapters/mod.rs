mod async_adapter;
pub mod cached;
mod child;
mod raw_adapter;

pub use self::{async_adapter::*, child::*, raw_adapter::*};
