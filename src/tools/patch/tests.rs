//! Tests of the patch tools.
