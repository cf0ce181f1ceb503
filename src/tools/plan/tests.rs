//! Tests of the plan tools.
