//! Tests of the web tools.
