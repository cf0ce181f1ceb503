//! Background jobs under way, and the notices a restart leaves for surfaces: a job is
//! marked when it starts and unmarked when it ends however it ends; a job a crash cut is
//! announced once at the next start-up in its session's transcript (its goal, the steps
//! it finished, that it did not finish), and a notice is kept for a surface that shows
//! the session elsewhere (a Discord channel) until that surface takes it
//! (docs/engine.md §6).

use super::db::args;
use super::{now_ms, Store, StoreError};

/// The line a job cut by a restart leaves in its session's transcript.
pub fn cut_job_line(goal: &str, steps: u64) -> String {
    let steps = match steps {
        1 => "1 step".to_string(),
        n => format!("{n} steps"),
    };
    format!(
        "(The background job '{goal}' was cut by a restart after {steps}: Kotoba stopped \
         before it finished, so it is NOT done, and what it was running was ended.)"
    )
}

impl Store {
    /// Mark job `run_id` in `session` as running; the id unmarks it.
    pub async fn open_job(
        &self,
        run_id: &str,
        session: &str,
        goal: &str,
    ) -> Result<i64, StoreError> {
        self.run(async |c| {
            c.insert(
                "INSERT INTO jobs_underway(run_id, session, goal, owner, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                args![run_id, session, goal, self.owner(), now_ms()],
            )
            .await
        })
        .await
    }

    /// The job another process still running (`is_live(owner)`) runs in `session`: its
    /// goal and when it started (epoch ms).
    pub async fn job_elsewhere(
        &self,
        session: &str,
        is_live: impl Fn(i64) -> bool,
    ) -> Result<Option<(String, i64)>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT goal, owner, at_ms FROM jobs_underway
                 WHERE session = ?1 AND owner != ?2 ORDER BY at_ms",
                    args![session, self.owner()],
                )
                .await
            })
            .await?;
        for r in rows {
            if is_live(r.int(1)?) {
                return Ok(Some((r.text(0)?, r.int(2)?)));
            }
        }
        Ok(None)
    }

    /// The job ended (however it ended).
    pub async fn close_job(&self, id: i64) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute("DELETE FROM jobs_underway WHERE id = ?1", args![id])
                .await
        })
        .await?;
        Ok(())
    }

    /// At start-up: every job a Kotoba that is no longer alive left running is
    /// announced once in its session's transcript and unmarked. Returns (session, line).
    pub async fn recover_jobs(
        &self,
        is_live: impl Fn(i64) -> bool,
    ) -> Result<Vec<(String, String)>, StoreError> {
        self.tx(async |c| {
            let open = c
                .query(
                    "SELECT id, session, goal, owner, at_ms FROM jobs_underway ORDER BY id",
                    &[],
                )
                .await?;
            let mut out = Vec::new();
            let at = now_ms();
            for r in open {
                if is_live(r.int(3)?) {
                    continue;
                }
                let (session, goal, since) = (r.text(1)?, r.text(2)?, r.int(4)?);
                let steps = match c
                    .query_opt(
                        "SELECT COUNT(*) FROM messages
                     WHERE session = ?1 AND role = 'step' AND at_ms >= ?2",
                        args![&session, since],
                    )
                    .await?
                {
                    Some(row) => row.int(0)?,
                    None => 0,
                };
                let line = cut_job_line(&goal, u64::try_from(steps).unwrap_or(0));
                c.execute(
                    "INSERT INTO messages(session, role, author, text, hidden, at_ms)
                     VALUES (?1, 'assistant', 'kotoba', ?2, 0, ?3)",
                    args![&session, &line, at],
                )
                .await?;
                c.execute("DELETE FROM jobs_underway WHERE id = ?1", args![r.int(0)?])
                    .await?;
                out.push((session, line));
            }
            Ok(out)
        })
        .await
    }

    /// Keep `text` for the surface that shows `session` elsewhere.
    pub async fn add_restart_notice(&self, session: &str, text: &str) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO restart_notices(session, text, at_ms) VALUES (?1, ?2, ?3)",
                args![session, text, now_ms()],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Take (and forget) the notices of sessions starting with `prefix`, oldest first.
    pub async fn take_restart_notices(
        &self,
        prefix: &str,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let like = format!("{}%", prefix.replace('%', "\\%").replace('_', "\\_"));
        self.tx(async |c| {
            let rows = c
                .query(
                    "SELECT session, text FROM restart_notices WHERE session LIKE ?1 ESCAPE '\\'
                 ORDER BY id",
                    args![&like],
                )
                .await?;
            c.execute(
                "DELETE FROM restart_notices WHERE session LIKE ?1 ESCAPE '\\'",
                args![&like],
            )
            .await?;
            rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::super::db::args;

    #[tokio::test]
    async fn a_job_of_another_running_process_is_found_by_its_session_and_a_dead_ones_is_not() {
        for db in crate::testing::each() {
            let s = db.open().await;
            let mine = s
                .open_job("run-me", "web:garden", "my own job")
                .await
                .unwrap();
            assert_eq!(
                s.job_elsewhere("web:garden", |_| true).await.unwrap(),
                None,
                "this process's own job is not another's ({})",
                db.name
            );
            s.close_job(mine).await.unwrap();
            let theirs = s
                .open_job("run-7", "web:garden", "tidy the garden")
                .await
                .unwrap();
            // As if another process (owner 7) had written it.
            s.run(async |c| {
                c.execute(
                    "UPDATE jobs_underway SET owner = 7 WHERE id = ?1",
                    args![theirs],
                )
                .await
            })
            .await
            .unwrap();
            let found = s.job_elsewhere("web:garden", |o| o == 7).await.unwrap();
            assert_eq!(
                found.map(|(goal, _)| goal).as_deref(),
                Some("tidy the garden")
            );
            assert_eq!(s.job_elsewhere("web:other", |_| true).await.unwrap(), None);
            assert_eq!(
                s.job_elsewhere("web:garden", |_| false).await.unwrap(),
                None,
                "a dead process's job does not count"
            );
        }
    }

    #[tokio::test]
    async fn a_job_a_crash_cut_is_announced_once_with_its_goal_and_steps() {
        for db in crate::testing::each() {
            let s = db.open().await;
            let id = s
                .open_job("abcd0123", "web:main", "tidy the notes")
                .await
                .unwrap();
            s.append_message("web:main", "step", "shell", "ls → ok", true)
                .await
                .unwrap();
            s.append_message("web:main", "step", "shell", "mv → ok", true)
                .await
                .unwrap();
            assert!(
                s.recover_jobs(|_| true).await.unwrap().is_empty(),
                "a live run is left alone"
            );
            let cut = s.recover_jobs(|_| false).await.unwrap();
            assert_eq!(cut.len(), 1);
            assert!(cut[0].1.contains("'tidy the notes'") && cut[0].1.contains("2 steps"));
            assert!(cut[0].1.contains("NOT done"));
            let history = s.history("web:main", 50).await.unwrap();
            assert!(history.iter().any(|m| m.text == cut[0].1), "{history:?}");
            assert!(
                s.recover_jobs(|_| false).await.unwrap().is_empty(),
                "announced once"
            );
            let _ = id;
        }
    }

    #[tokio::test]
    async fn a_job_that_ended_leaves_nothing_to_announce() {
        for db in crate::testing::each() {
            let s = db.open().await;
            let id = s.open_job("abcd0123", "web:main", "x").await.unwrap();
            s.close_job(id).await.unwrap();
            assert!(s.recover_jobs(|_| false).await.unwrap().is_empty());
        }
    }

    #[tokio::test]
    async fn restart_notices_are_taken_once_by_prefix() {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.add_restart_notice("discord:5", "one").await.unwrap();
            s.add_restart_notice("web:main", "two").await.unwrap();
            let got = s.take_restart_notices("discord:").await.unwrap();
            assert_eq!(got, vec![("discord:5".to_string(), "one".to_string())]);
            assert!(s.take_restart_notices("discord:").await.unwrap().is_empty());
            assert_eq!(s.take_restart_notices("web:").await.unwrap().len(), 1);
        }
    }
}
