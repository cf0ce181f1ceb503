//! Tests of the cron tools.
