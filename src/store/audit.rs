//! The audit trail: one row per gate decision, one `executed` / `executed:failed` row
//! per run that reached the machine — written when it starts and completed with its
//! outcome (store/inflight.rs). Rows are written before the caller goes on, so they
//! survive a crash (WAL).

use rusqlite::params;

use super::{now_ms, Store, StoreError};

/// Who (or what) decided, as the audit trail records it (engine.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approver {
    /// A configured allowlist line.
    Allowlist,
    /// A saved family grant.
    Saved,
    /// A saved exact-line grant.
    SavedExact,
    /// The auto-safe rules.
    AutoSafe,
    /// A person answered the card.
    User,
    /// The card expired unanswered.
    Expired,
    /// Nobody could be asked (no listener, surface error).
    Error,
    /// The card went away when the person spoke over it.
    Dismissed,
    /// Denied by default: no route allowed it and no card could be drawn.
    Default,
    /// The action ran (exit 0).
    Executed,
    /// The action ran and failed.
    ExecutedFailed,
}

impl Approver {
    /// The word stored in the `approver` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Approver::Allowlist => "allowlist",
            Approver::Saved => "saved",
            Approver::SavedExact => "saved-exact",
            Approver::AutoSafe => "auto-safe",
            Approver::User => "user",
            Approver::Expired => "expired",
            Approver::Error => "error",
            Approver::Dismissed => "dismissed",
            Approver::Default => "default",
            Approver::Executed => "executed",
            Approver::ExecutedFailed => "executed:failed",
        }
    }
}

/// One row of the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuditRow {
    /// Row id (0 before it is stored).
    pub id: i64,
    /// Unix milliseconds.
    pub at_ms: i64,
    /// The session.
    pub session: String,
    /// The tool.
    pub tool: String,
    /// What would run / ran.
    pub action: String,
    /// read, write, exec, network.
    pub risk: String,
    /// Whether it was allowed (executed rows: true).
    pub approved: bool,
    /// allowlist, saved, saved-exact, auto-safe, user, expired, error, dismissed,
    /// default, executed, executed:failed.
    pub approver: String,
    /// Free text: who answered, the exit code, the reason.
    pub detail: String,
}

impl Store {
    /// Append one audit row.
    #[allow(clippy::too_many_arguments)]
    pub fn audit(
        &self,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
        approved: bool,
        approver: Approver,
        detail: &str,
    ) -> Result<(), StoreError> {
        self.conn()
            .prepare_cached(
                "INSERT INTO audit_log(at_ms, session, tool, action, risk, approved, approver, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![now_ms(), session, tool, action, risk, approved as i64, approver.as_str(), detail])?;
        Ok(())
    }

    /// The newest `limit` rows, newest first; only one session's when `session` is set.
    pub fn audit_rows(
        &self,
        session: Option<&str>,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, at_ms, session, tool, action, risk, approved, approver, detail FROM audit_log
             WHERE (?1 IS NULL OR session = ?1) ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = stmt
            .query_map(params![session, limit as i64], |r| {
                Ok(AuditRow {
                    id: r.get(0)?,
                    at_ms: r.get(1)?,
                    session: r.get(2)?,
                    tool: r.get(3)?,
                    action: r.get(4)?,
                    risk: r.get(5)?,
                    approved: r.get::<_, i64>(6)? != 0,
                    approver: r.get(7)?,
                    detail: r.get(8)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_rows_survive_reopening_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        {
            let s = Store::open(&path).unwrap();
            s.audit("s1", "shell", "ls", "exec", true, Approver::User, "ann")
                .unwrap();
            s.audit(
                "s1",
                "shell",
                "ls",
                "exec",
                true,
                Approver::Executed,
                "exit 0",
            )
            .unwrap();
        }
        let s = Store::open(&path).unwrap();
        let rows = s.audit_rows(Some("s1"), 10).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.approver.as_str()).collect::<Vec<_>>(),
            ["executed", "user"]
        );
        assert!(s.audit_rows(Some("other"), 10).unwrap().is_empty());
        assert_eq!(s.audit_rows(None, 1).unwrap().len(), 1);
    }
}
