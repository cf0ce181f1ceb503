//! The built-in tools the engine offers: files, memory and recall, web, plans, links,
//! reminders, shell and code, registered in a stable order. The engine calls [`builtin_registry`] once and adds surface tools after.

use std::sync::Arc;

use super::ask::Ask;
use super::code::ExecuteCode;
use super::cron::CronJob;
use super::delegate::Delegate;
use super::files::{ReadFile, SearchFiles, WriteFile};
use super::forget_me::ForgetMe;
use super::memory::{MemoryRecall, MemoryWrite};
use super::patch::Patch;
use super::plan::{OpenLink, Todo};
use super::recall::SessionSearch;
use super::secrets::{GetCredential, SecretPrompt};
use super::shell::Shell;
use super::skills::{SkillList, SkillView};
use super::web::{WebExtract, WebSearch};
use super::work::{CancelWork, StartWork};
use super::Registry;

/// Every built-in tool: files and patch, memory and session search, the web, plans
/// and links, reminders, shell, code, skills, the work controls, ask_user/clarify,
/// delegate and the secrets tools.
pub fn builtin_registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(Arc::new(ReadFile::new()));
    registry.register(Arc::new(SearchFiles::new()));
    registry.register(Arc::new(WriteFile::new()));
    registry.register(Arc::new(Patch::new()));
    registry.register(Arc::new(MemoryRecall::new()));
    registry.register(Arc::new(MemoryWrite::new()));
    registry.register(Arc::new(ForgetMe::new()));
    registry.register(Arc::new(SessionSearch::new()));
    registry.register(Arc::new(WebSearch::new()));
    registry.register(Arc::new(WebExtract::new()));
    registry.register(Arc::new(Todo::new()));
    registry.register(Arc::new(OpenLink::new()));
    registry.register(Arc::new(CronJob::new()));
    registry.register(Arc::new(Shell::new()));
    registry.register(Arc::new(ExecuteCode::new()));
    registry.register(Arc::new(SkillList::default()));
    registry.register(Arc::new(SkillView::default()));
    registry.register(Arc::new(StartWork::default()));
    registry.register(Arc::new(CancelWork::default()));
    registry.register(Arc::new(Ask::ask_user()));
    registry.register(Arc::new(Ask::clarify()));
    registry.register(Arc::new(Delegate::default()));
    registry.register(Arc::new(SecretPrompt::ask_secret()));
    registry.register(Arc::new(SecretPrompt::request_credential()));
    registry.register(Arc::new(GetCredential::default()));
    registry
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::tools::Scope;
    use kotoba_core::protocol::{Risk, StepKind};

    #[test]
    fn the_registry_holds_every_builtin_tool_once_in_a_stable_order() {
        let names: Vec<String> = builtin_registry()
            .all()
            .iter()
            .map(|t| t.spec().name.clone())
            .collect();
        assert_eq!(
            names,
            [
                "read_file",
                "search_files",
                "write_file",
                "patch",
                "memory_recall",
                "memory_write",
                "forget_me",
                "session_search",
                "web_search",
                "web_extract",
                "todo",
                "open_link",
                "cronjob",
                "shell",
                "execute_code",
                "skill_list",
                "skill_view",
                "start_work",
                "cancel_work",
                "ask_user",
                "clarify",
                "delegate",
                "ask_secret",
                "request_credential",
                "get_credential"
            ]
        );
    }

    #[test]
    fn every_spec_has_a_strict_schema_lines_and_the_kind_its_name_implies() {
        for tool in builtin_registry().all() {
            let s = tool.spec();
            assert_eq!(s.step_kind, StepKind::for_tool(&s.name), "{}", s.name);
            let scope = match s.name.as_str() {
                "start_work" | "cancel_work" | "forget_me" => Scope::CompanionOnly,
                "delegate" | "ask_secret" | "request_credential" | "get_credential" => {
                    Scope::WorkOnly
                }
                _ => Scope::Both,
            };
            assert_eq!(s.scope, scope, "{}", s.name);
            assert_eq!(s.parameters["type"], json!("object"), "{}", s.name);
            assert_eq!(
                s.parameters["additionalProperties"],
                json!(false),
                "{}",
                s.name
            );
            let props = s.parameters["properties"].as_object().unwrap();
            for req in s
                .parameters
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(
                    props.contains_key(req.as_str().unwrap()),
                    "{}: {req}",
                    s.name
                );
            }
            assert!(
                s.lines.announce.is_some() && s.lines.after.is_some() && s.lines.fail.is_some()
            );
            assert!((2..=3).contains(&s.lines.heartbeat.len()), "{}", s.name);
            assert!(!s.description.is_empty());
            assert_eq!(
                s.takes_timeout_arg,
                s.risk == Risk::Exec && s.name != "delegate",
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn action_lines_follow_the_row_rules() {
        let reg = builtin_registry();
        let line = |name: &str, args: Value| reg.get(name).unwrap().action_line(&args);
        assert_eq!(line("shell", json!({"command": "ls -la"})), "$ ls -la");
        assert_eq!(
            line("execute_code", json!({"code": "x = 1\nprint(x)"})),
            "python> x = 1 …"
        );
        assert_eq!(
            line("write_file", json!({"path": "a.txt", "content": ""})),
            "write_file a.txt"
        );
        assert_eq!(line("memory_write", json!({"fact": "x"})), "memory_write");
    }
}
