//! Saved grants: "always" answers, by exact line or by family, with who granted them,
//! when, and until when (a time box, or until revoked); listed and revoked through the
//! engine (slash command, web page). An expired grant no longer applies and is dropped
//! the next time grants are read.

use super::clock::{grant_clock_ms, rfc3339};
use super::db::args;
use super::{now_ms, rows_into, Store, StoreError};

/// How wide a grant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantScope {
    /// This exact line, byte for byte.
    Exact,
    /// Every line of this family (first token, or `execute_code`).
    Family,
}

impl GrantScope {
    fn as_str(self) -> &'static str {
        match self {
            GrantScope::Exact => "exact",
            GrantScope::Family => "family",
        }
    }
}

/// One saved grant.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Grant {
    /// Its id (what revoke names).
    pub id: i64,
    /// The exact line, or the family name.
    pub pattern: String,
    /// Exact or family.
    pub scope: GrantScope,
    /// Who granted it.
    pub granted_by: String,
    /// When (unix ms).
    pub at_ms: i64,
    /// When it stops applying (RFC 3339, UTC); `None` until revoked.
    pub expires_at: Option<String>,
    /// The same as unix ms on the grant clock.
    #[serde(skip)]
    pub expires_at_ms: Option<i64>,
}

impl Store {
    /// Save a grant until revoked (saving the same one again keeps the first).
    pub async fn add_grant(
        &self,
        pattern: &str,
        scope: GrantScope,
        granted_by: &str,
    ) -> Result<(), StoreError> {
        self.add_grant_for(pattern, scope, granted_by, None).await
    }

    /// Save a grant for `for_s` seconds (none: until revoked). Saving one already
    /// there keeps whichever lasts longer (until revoked beats any time box).
    pub async fn add_grant_for(
        &self,
        pattern: &str,
        scope: GrantScope,
        granted_by: &str,
        for_s: Option<u64>,
    ) -> Result<(), StoreError> {
        let expires =
            for_s.map(|s| grant_clock_ms().saturating_add((s as i64).saturating_mul(1000)));
        self.drop_expired().await?;
        self.run(async |c| {
            c.execute(
                "INSERT INTO grants(pattern, scope, granted_by, at_ms, expires_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(pattern, scope) DO UPDATE SET expires_at_ms =
                   CASE WHEN grants.expires_at_ms IS NULL OR excluded.expires_at_ms IS NULL
                          THEN NULL
                        WHEN grants.expires_at_ms > excluded.expires_at_ms
                          THEN grants.expires_at_ms
                        ELSE excluded.expires_at_ms END",
                args![pattern, scope.as_str(), granted_by, now_ms(), expires],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Remove the grants whose time box has passed.
    async fn drop_expired(&self) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "DELETE FROM grants WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ?1",
                args![grant_clock_ms()],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Every grant that still applies, oldest first (expired ones are dropped first).
    pub async fn grants(&self) -> Result<Vec<Grant>, StoreError> {
        self.drop_expired().await?;
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT id, pattern, scope, granted_by, at_ms, expires_at_ms FROM grants
                 ORDER BY id",
                    &[],
                )
                .await
            })
            .await?;
        rows_into(rows, |r| {
            let expires_at_ms = r.opt_int(5)?;
            Ok(Grant {
                id: r.int(0)?,
                pattern: r.text(1)?,
                scope: if r.text(2)? == "exact" {
                    GrantScope::Exact
                } else {
                    GrantScope::Family
                },
                granted_by: r.text(3)?,
                at_ms: r.int(4)?,
                expires_at: expires_at_ms.map(rfc3339),
                expires_at_ms,
            })
        })
    }

    /// Whether a grant of `scope` for `pattern` is saved and has not expired.
    pub async fn has_grant(&self, pattern: &str, scope: GrantScope) -> Result<bool, StoreError> {
        self.run(async |c| {
            c.query_opt(
                "SELECT 1 FROM grants WHERE pattern = ?1 AND scope = ?2
                   AND (expires_at_ms IS NULL OR expires_at_ms > ?3)",
                args![pattern, scope.as_str(), grant_clock_ms()],
            )
            .await
        })
        .await
        .map(|r| r.is_some())
    }

    /// Revoke a grant by id; false when there was none.
    pub async fn revoke_grant(&self, id: i64) -> Result<bool, StoreError> {
        self.run(async |c| {
            c.execute("DELETE FROM grants WHERE id = ?1", args![id])
                .await
        })
        .await
        .map(|n| n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_grant_is_listed_with_who_granted_it_and_revoke_removes_it() {
        for db in crate::testing::each() {
            let s = db.open().await;
            s.add_grant("npm", GrantScope::Family, "ann").await.unwrap();
            s.add_grant("npm", GrantScope::Family, "bob").await.unwrap();
            s.add_grant("make test", GrantScope::Exact, "ann")
                .await
                .unwrap();
            let g = s.grants().await.unwrap();
            assert_eq!(g.len(), 2);
            assert_eq!(
                (g[0].pattern.as_str(), g[0].scope, g[0].granted_by.as_str()),
                ("npm", GrantScope::Family, "ann")
            );
            assert!(s.has_grant("make test", GrantScope::Exact).await.unwrap());
            assert!(!s.has_grant("make test", GrantScope::Family).await.unwrap());
            assert!(s.revoke_grant(g[0].id).await.unwrap());
            assert!(!s.revoke_grant(g[0].id).await.unwrap());
            assert!(!s.has_grant("npm", GrantScope::Family).await.unwrap());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_time_boxed_grant_applies_until_its_hour_is_up_then_is_dropped_from_the_list() {
        let _still = crate::testing::hold_clock();
        for db in crate::testing::each() {
            let s = db.open().await;
            s.add_grant_for("cargo test", GrantScope::Exact, "ann", Some(3600))
                .await
                .unwrap();
            s.add_grant("ls -la", GrantScope::Exact, "ann")
                .await
                .unwrap();
            let g = s.grants().await.unwrap();
            assert!(g[0].expires_at.as_deref().is_some_and(|e| e.ends_with('Z')));
            assert_eq!(g[1].expires_at, None, "until revoked");
            tokio::time::advance(std::time::Duration::from_secs(3599)).await;
            assert!(s.has_grant("cargo test", GrantScope::Exact).await.unwrap());
            tokio::time::advance(std::time::Duration::from_secs(2)).await;
            assert!(
                !s.has_grant("cargo test", GrantScope::Exact).await.unwrap(),
                "expired"
            );
            let g = s.grants().await.unwrap();
            assert_eq!(
                g.len(),
                1,
                "the expired grant is dropped from the list: {g:?}"
            );
            assert_eq!(g[0].pattern, "ls -la");
            // Until revoked outlasts a time box given to the same line later.
            s.add_grant_for("ls -la", GrantScope::Exact, "bob", Some(60))
                .await
                .unwrap();
            tokio::time::advance(std::time::Duration::from_secs(120)).await;
            assert!(s.has_grant("ls -la", GrantScope::Exact).await.unwrap());
        }
    }
}
