//! The store's clocks: wall time in milliseconds, the grant clock (wall time that a
//! paused test clock also moves, so time boxes are tested under `tokio::time::pause`),
//! and civil dates (`YYYY-MM-DD`, RFC 3339) with no date library.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Wall milliseconds as the grant time boxes read them: the wall time when first asked,
/// plus the tokio clock's progress since (the same in production; a paused test clock
/// moves it by `advance`).
pub fn grant_clock_ms() -> i64 {
    static BASE: OnceLock<(i64, tokio::time::Instant)> = OnceLock::new();
    let (wall, at) = BASE.get_or_init(|| (now_ms(), tokio::time::Instant::now()));
    let passed = tokio::time::Instant::now().saturating_duration_since(*at);
    wall.saturating_add(passed.as_millis() as i64)
}

/// The civil date of a count of days since 1970-01-01 (proleptic Gregorian).
pub fn date_from_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Unix milliseconds as RFC 3339 in UTC, to the second (`2026-12-01T16:00:00Z`).
pub fn rfc3339(at_ms: i64) -> String {
    let secs = at_ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        date_from_days(days),
        rest / 3600,
        (rest % 3600) / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_is_utc_to_the_second() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(1_796_083_200_000 + 3_723_000),
            "2026-12-01T01:02:03Z"
        );
    }
}
