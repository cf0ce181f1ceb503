//! Saved grants: "always" answers, by exact line or by family, with who granted them
//! and when; listed and revoked through the engine (slash command, web page).

use rusqlite::{params, OptionalExtension};

use super::{now_ms, Store, StoreError};

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
}

impl Store {
    /// Save a grant (saving the same one again keeps the first).
    pub fn add_grant(
        &self,
        pattern: &str,
        scope: GrantScope,
        granted_by: &str,
    ) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT OR IGNORE INTO grants(pattern, scope, granted_by, at_ms) VALUES (?1, ?2, ?3, ?4)",
            params![pattern, scope.as_str(), granted_by, now_ms()],
        )?;
        Ok(())
    }

    /// Every saved grant, oldest first.
    pub fn grants(&self) -> Result<Vec<Grant>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, pattern, scope, granted_by, at_ms FROM grants ORDER BY id",
        )?;
        let rows = stmt
            .query_map([], |r| {
                let scope: String = r.get(2)?;
                Ok(Grant {
                    id: r.get(0)?,
                    pattern: r.get(1)?,
                    scope: if scope == "exact" {
                        GrantScope::Exact
                    } else {
                        GrantScope::Family
                    },
                    granted_by: r.get(3)?,
                    at_ms: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Whether a grant of `scope` for `pattern` is saved.
    pub fn has_grant(&self, pattern: &str, scope: GrantScope) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT 1 FROM grants WHERE pattern = ?1 AND scope = ?2",
                params![pattern, scope.as_str()],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Revoke a grant by id; false when there was none.
    pub fn revoke_grant(&self, id: i64) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .execute("DELETE FROM grants WHERE id = ?1", [id])?
            > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_is_listed_with_who_granted_it_and_revoke_removes_it() {
        let s = Store::in_memory().unwrap();
        s.add_grant("npm", GrantScope::Family, "ann").unwrap();
        s.add_grant("npm", GrantScope::Family, "bob").unwrap();
        s.add_grant("make test", GrantScope::Exact, "ann").unwrap();
        let g = s.grants().unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].pattern.as_str(), g[0].scope, g[0].granted_by.as_str()),
            ("npm", GrantScope::Family, "ann")
        );
        assert!(s.has_grant("make test", GrantScope::Exact).unwrap());
        assert!(!s.has_grant("make test", GrantScope::Family).unwrap());
        assert!(s.revoke_grant(g[0].id).unwrap());
        assert!(!s.revoke_grant(g[0].id).unwrap());
        assert!(!s.has_grant("npm", GrantScope::Family).unwrap());
    }
}
