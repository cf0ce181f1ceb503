//! The spoken filter and sentence streaming.
