//! The audit trail: one row per gate decision, one `executed` / `executed:failed` row
//! per run that reached the machine — written when it starts and completed with its
//! outcome (store/inflight.rs). Rows are written before the caller goes on, so they
//! survive a crash (WAL).

use super::db::args;
use super::{now_ms, rows_into, Store, StoreError};

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
    pub async fn audit(
        &self,
        session: &str,
        tool: &str,
        action: &str,
        risk: &str,
        approved: bool,
        approver: Approver,
        detail: &str,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO audit_log(at_ms, session, tool, action, risk, approved, approver, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                args![now_ms(), session, tool, action, risk, approved, approver.as_str(), detail],
            ).await
        }).await?;
        Ok(())
    }

    /// The newest `limit` rows, newest first; only one session's when `session` is set.
    pub async fn audit_rows(
        &self,
        session: Option<&str>,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let rows = self.run(async |c| {
            c.query(
                "SELECT id, at_ms, session, tool, action, risk, approved, approver, detail
                 FROM audit_log WHERE (CAST(?1 AS TEXT) IS NULL OR session = ?1) ORDER BY id DESC LIMIT ?2",
                args![session, limit as i64],
            ).await
        }).await?;
        rows_into(rows, |r| {
            Ok(AuditRow {
                id: r.int(0)?,
                at_ms: r.int(1)?,
                session: r.text(2)?,
                tool: r.text(3)?,
                action: r.text(4)?,
                risk: r.text(5)?,
                approved: r.flag(6)?,
                approver: r.text(7)?,
                detail: r.text(8)?,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn audit_rows_survive_reopening_the_store() {
        for db in crate::testing::each() {
            {
                let s = db.open().await;
                s.audit("s1", "shell", "ls", "exec", true, Approver::User, "ann")
                    .await
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
                .await
                .unwrap();
            }
            let s = db.open().await;
            let rows = s.audit_rows(Some("s1"), 10).await.unwrap();
            assert_eq!(
                rows.iter().map(|r| r.approver.as_str()).collect::<Vec<_>>(),
                ["executed", "user"]
            );
            assert!(s.audit_rows(Some("other"), 10).await.unwrap().is_empty());
            assert_eq!(s.audit_rows(None, 1).await.unwrap().len(), 1);
        }
    }
}
