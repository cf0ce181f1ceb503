//! The integration suites, one file per area.

mod llm;
