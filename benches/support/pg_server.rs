//! The PostgreSQL a benchmark measures against: the server at
//! `KOTOBA_TEST_DATABASE_URL` (a URL without a database name, as the test command sets
//! it) or, when that is unset, a throwaway one started with `scripts/postgres` and
//! stopped when the returned guard drops.

use std::process::Command;

/// A server started for this run, stopped on drop.
pub struct Started(Option<String>);

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(data) = self.0.take() {
            let _ = Command::new("scripts/postgres")
                .args(["stop", &data])
                .status();
        }
    }
}

/// A URL without a database name, and the guard of a server started for this run.
pub fn server() -> (String, Started) {
    if let Ok(url) = std::env::var("KOTOBA_TEST_DATABASE_URL") {
        return (url, Started(None));
    }
    let out = Command::new("scripts/postgres")
        .arg("start")
        .output()
        .expect("run scripts/postgres");
    assert!(
        out.status.success(),
        "scripts/postgres start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("export {name}=")))
            .map(str::to_string)
            .expect("scripts/postgres prints the server's exports")
    };
    (
        value("KOTOBA_TEST_DATABASE_URL"),
        Started(Some(value("KOTOBA_TEST_PGDATA"))),
    )
}
