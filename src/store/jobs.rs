//! Background jobs under way, and the notices a restart leaves for surfaces: a job is
//! marked when it starts and unmarked when it ends however it ends; a job a crash cut is
//! announced once at the next start-up in its session's transcript (its goal, the steps
//! it finished, that it did not finish), and a notice is kept for a surface that shows
//! the session elsewhere (a Discord channel) until that surface takes it
//! (docs/engine.md §6).

use rusqlite::params;

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
    pub fn open_job(&self, run_id: &str, session: &str, goal: &str) -> Result<i64, StoreError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO jobs_underway(run_id, session, goal, owner, at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run_id, session, goal, std::process::id(), now_ms()],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// The job ended (however it ended).
    pub fn close_job(&self, id: i64) -> Result<(), StoreError> {
        self.conn()
            .execute("DELETE FROM jobs_underway WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// At start-up: every job a Kotoba that is no longer alive left running is
    /// announced once in its session's transcript and unmarked. Returns (session, line).
    pub fn recover_jobs(
        &self,
        is_live: impl Fn(i64) -> bool,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        type Open = (i64, String, String, i64, i64);
        let open: Vec<Open> = tx
            .prepare("SELECT id, session, goal, owner, at_ms FROM jobs_underway ORDER BY id")?
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        let at = now_ms();
        for (id, session, goal, owner, since) in open {
            if is_live(owner) {
                continue;
            }
            let steps: i64 = tx.query_row(
                "SELECT COUNT(*) FROM messages WHERE session = ?1 AND role = 'step' AND at_ms >= ?2",
                params![session, since],
                |r| r.get(0),
            )?;
            let line = cut_job_line(&goal, u64::try_from(steps).unwrap_or(0));
            tx.execute(
                "INSERT INTO messages(session, role, author, text, hidden, at_ms)
                 VALUES (?1, 'assistant', 'kotoba', ?2, 0, ?3)",
                params![session, line, at],
            )?;
            tx.execute("DELETE FROM jobs_underway WHERE id = ?1", params![id])?;
            out.push((session, line));
        }
        tx.commit()?;
        Ok(out)
    }

    /// Keep `text` for the surface that shows `session` elsewhere.
    pub fn add_restart_notice(&self, session: &str, text: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO restart_notices(session, text, at_ms) VALUES (?1, ?2, ?3)",
            params![session, text, now_ms()],
        )?;
        Ok(())
    }

    /// Take (and forget) the notices of sessions starting with `prefix`, oldest first.
    pub fn take_restart_notices(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let like = format!("{}%", prefix.replace('%', "\\%").replace('_', "\\_"));
        let rows: Vec<(String, String)> = tx
            .prepare(
                "SELECT session, text FROM restart_notices WHERE session LIKE ?1 ESCAPE '\\'
                 ORDER BY id",
            )?
            .query_map(params![like], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        tx.execute(
            "DELETE FROM restart_notices WHERE session LIKE ?1 ESCAPE '\\'",
            params![like],
        )?;
        tx.commit()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_a_crash_cut_is_announced_once_with_its_goal_and_steps() {
        let s = Store::in_memory().unwrap();
        let id = s
            .open_job("abcd0123", "web:main", "tidy the notes")
            .unwrap();
        s.append_message("web:main", "step", "shell", "ls → ok", true)
            .unwrap();
        s.append_message("web:main", "step", "shell", "mv → ok", true)
            .unwrap();
        assert!(
            s.recover_jobs(|_| true).unwrap().is_empty(),
            "a live run is left alone"
        );
        let cut = s.recover_jobs(|_| false).unwrap();
        assert_eq!(cut.len(), 1);
        assert!(cut[0].1.contains("'tidy the notes'") && cut[0].1.contains("2 steps"));
        assert!(cut[0].1.contains("NOT done"));
        let history = s.history("web:main", 50).unwrap();
        assert!(history.iter().any(|m| m.text == cut[0].1), "{history:?}");
        assert!(
            s.recover_jobs(|_| false).unwrap().is_empty(),
            "announced once"
        );
        let _ = id;
    }

    #[test]
    fn a_job_that_ended_leaves_nothing_to_announce() {
        let s = Store::in_memory().unwrap();
        let id = s.open_job("abcd0123", "web:main", "x").unwrap();
        s.close_job(id).unwrap();
        assert!(s.recover_jobs(|_| false).unwrap().is_empty());
    }

    #[test]
    fn restart_notices_are_taken_once_by_prefix() {
        let s = Store::in_memory().unwrap();
        s.add_restart_notice("discord:5", "one").unwrap();
        s.add_restart_notice("web:main", "two").unwrap();
        let got = s.take_restart_notices("discord:").unwrap();
        assert_eq!(got, vec![("discord:5".to_string(), "one".to_string())]);
        assert!(s.take_restart_notices("discord:").unwrap().is_empty());
        assert_eq!(s.take_restart_notices("web:").unwrap().len(), 1);
    }
}
