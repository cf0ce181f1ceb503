//! The real PostgreSQL server the test command started (scripts/postgres): a fresh
//! database per test, by URL. Outside CI a missing server skips the test loudly; in CI
//! it fails. The store's test backends, the integration tests and the store benchmarks
//! all make their databases here, so there is one way to make a test database.

/// A fresh, empty database's URL, or `None` (said on stderr) when no server was started
/// outside CI.
#[allow(clippy::print_stderr)]
pub fn fresh_database(test: &str) -> Option<String> {
    let Ok(base) = std::env::var("KOTOBA_TEST_DATABASE_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "KOTOBA_TEST_DATABASE_URL is not set: the test command starts PostgreSQL in CI"
        );
        eprintln!("SKIPPED {test}: no PostgreSQL (KOTOBA_TEST_DATABASE_URL); run scripts/test");
        return None;
    };
    Some(create_database(&base))
}

/// A new, empty database on the server at `base` (a URL without a database name); its
/// URL.
pub fn create_database(base: &str) -> String {
    let base = base.trim_end_matches('/').to_string();
    let name = format!("kotoba_test_{:016x}", rand::random::<u64>());
    let (admin, create) = (
        format!("{base}/postgres"),
        format!("CREATE DATABASE {name}"),
    );
    // The blocking client runs a runtime of its own: off the caller's runtime thread.
    std::thread::spawn(move || {
        postgres::Client::connect(&admin, postgres::NoTls)
            .expect("reach the test PostgreSQL")
            .batch_execute(&create)
            .expect("create a test database");
    })
    .join()
    .expect("create a test database");
    format!("{base}/{name}")
}
