//! The decision order for one exec action (gate.md): allowlist → saved exact → saved
//! family → auto-safe → ask. Dangerous lines and `force_ask` never take routes 1–3.
//! The classification itself is the pure `gate::classify`.

use kotoba_core::config::Settings;
use kotoba_store::{Approver, GrantScope, Store};

use kotoba_gate::{Decision, Verdict};

/// Where one action goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// It runs without a card; the approver names the route for the audit row.
    Run(Approver),
    /// A person must be asked.
    Ask,
}

/// Route an action whose exact line is `line` and whose classification is `decision`.
/// A store failure is never a yes: the action asks.
pub async fn route(line: &str, decision: &Decision, settings: &Settings, store: &Store) -> Route {
    let dangerous = matches!(decision.verdict, Verdict::Dangerous { .. });
    if dangerous || settings.force_ask {
        return Route::Ask;
    }
    if settings.allowlist.iter().any(|l| l == line) {
        return Route::Run(Approver::Allowlist);
    }
    let saved = async |pattern: &str, scope| {
        store.has_grant(pattern, scope).await.unwrap_or_else(|e| {
            tracing::warn!("reading grants: {e}");
            false
        })
    };
    if decision.can_always_exact && saved(line, GrantScope::Exact).await {
        return Route::Run(Approver::SavedExact);
    }
    if let Some(family) = decision.family.as_deref() {
        if decision.can_always && saved(family, GrantScope::Family).await {
            return Route::Run(Approver::Saved);
        }
    }
    if decision.verdict == Verdict::AutoSafe {
        return Route::Run(Approver::AutoSafe);
    }
    Route::Ask
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use kotoba_gate::{classify, Action, PROCESS_SPAWN};

    fn shell(command: &str) -> Decision {
        let ws = tempfile::tempdir().unwrap();
        classify(
            &Action::Shell {
                command: command.to_string(),
            },
            ws.path(),
            true,
        )
    }

    #[tokio::test]
    async fn a_dangerous_line_is_refused_every_saved_grant() {
        let store = Store::in_memory().unwrap();
        for family in ["dd", "sed", "find", "execute_code", "systemctl", "gpg"] {
            store
                .add_grant(family, GrantScope::Family, "owner")
                .await
                .unwrap();
        }
        let settings = Settings::default();
        for line in [
            "dd if=x of=//dev/sda",
            "sed -i d ~/.bash_history",
            "find . -exec env rm {} +",
            "systemctl start poweroff.target",
            "gpg --delete-secret-keys me",
        ] {
            store
                .add_grant(line, GrantScope::Exact, "owner")
                .await
                .unwrap();
            let d = shell(line);
            assert_eq!(
                route(line, &d, &settings, &store).await,
                Route::Ask,
                "{line:?}"
            );
        }
        let code = "import sys; sys.modules['os'].system('id')";
        let d = classify(
            &Action::Code {
                code: code.into(),
                family: "execute_code".into(),
            },
            Path::new("."),
            true,
        );
        assert_eq!(d.dangerous_label(), Some(PROCESS_SPAWN));
        assert_eq!(route(code, &d, &settings, &store).await, Route::Ask);
    }
}
