//! Types containing the main body of an [`EventContext`].
//!
//! [`EventContext`]: super::EventContext
mod connect;
mod disconnect;
#[cfg(feature = "receive")]
mod rtcp;
#[cfg(feature = "receive")]
mod rtp;
#[cfg(feature = "receive")]
mod voice;

#[cfg(feature = "receive")]
use bytes::Bytes;

pub use self::{connect::*, disconnect::*};
#[cfg(feature = "receive")]
pub use self::{rtcp::*, rtp::*, voice::*};
