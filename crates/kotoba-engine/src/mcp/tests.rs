//! The MCP manager against a real MCP server: the hand-written stdio fixture in
//! tests/fixtures/mcp_server.py, started with python3. Real time (child processes).

use std::sync::Arc;

use serde_json::json;
use serde_yaml_ng::Value;

use super::*;
use crate::tools::{Scope, ToolContext};
use kotoba_core::config::mcp::{parse_catalogue, parse_servers, McpTransport};
use kotoba_core::protocol::{Mode, Risk, StepKind};

pub(crate) fn fixture() -> String {
    format!(
        "{}/../../tests/fixtures/mcp_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A settings.yaml with the fixture configured as `name`.
pub(crate) fn fixture_settings(name: &str) -> String {
    format!(
        "mcp_servers:\n  {name}:\n    command: python3\n    args: ['{}', '{name}']\n",
        fixture()
    )
}

fn manager(settings: &str) -> (Arc<McpManager>, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("settings.yaml"), settings).unwrap();
    let config = Config::for_home(home.path(), &[]);
    (McpManager::new(config), home)
}

fn ctx(home: &std::path::Path) -> ToolContext {
    let mut ctx = ToolContext::bare("s1", Mode::Work, home, &home.join("workspace"));
    std::sync::Arc::make_mut(&mut ctx.turn).run_id = Some("0000beef".into());
    ctx
}

fn yaml(text: &str) -> Value {
    serde_yaml_ng::from_str(text).unwrap()
}

#[test]
fn a_bad_mcp_server_entry_names_its_key_and_is_skipped_while_the_good_ones_load() {
    let v = yaml(
        "good: {command: python3, args: [a.py], env: {TOKEN: x}}\n\
         web: {url: 'http://127.0.0.1:9/mcp'}\n\
         nothing: {args: [x]}\n\
         bad__name: {command: x}\n\
         both: {command: x, url: 'http://a'}\n",
    );
    let (servers, warnings) = parse_servers(&v).unwrap();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "web"]);
    assert_eq!(
        servers[0].transport,
        McpTransport::Stdio {
            command: "python3".into(),
            args: vec!["a.py".into()],
            env: vec![("TOKEN".into(), "x".into())]
        }
    );
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for (w, key) in warnings.iter().zip(["nothing", "bad__name", "both"]) {
        assert!(w.contains(&format!("mcp_servers.{key}")), "{w}");
    }
    assert!(
        parse_servers(&yaml("[a, b]")).is_err(),
        "a list is not a map of servers"
    );
}

#[test]
fn a_bad_catalogue_entry_names_its_place_and_is_skipped() {
    let v = yaml(
        "- {name: git, description: Git repositories, command: uvx, args: [mcp-server-git]}\n\
         - {name: broken, description: no way to run it}\n\
         - just words\n",
    );
    let (entries, warnings) = parse_catalogue(&v).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].server.name, "git");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("mcp_catalogue[1] (broken)"),
        "{}",
        warnings[0]
    );
    assert!(warnings[1].contains("mcp_catalogue[2]"), "{}", warnings[1]);
}

#[test]
fn the_live_settings_skip_a_bad_server_entry_and_keep_the_others() {
    let (m, home) = manager("mcp_servers:\n  ok: {command: x}\n  '': {command: y}\n");
    let names: Vec<String> = m.servers().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["ok"]);
    drop(home);
}

#[test]
fn a_name_matches_exactly_then_ignoring_case_then_by_a_unique_prefix() {
    let names = ["git", "github", "Browser"];
    assert_eq!(match_name("git", &names, "server"), Ok("git"));
    assert_eq!(match_name("browser", &names, "server"), Ok("Browser"));
    assert_eq!(match_name("GITH", &names, "server"), Ok("github"));
    let ambiguous = match_name("gi", &names, "server").unwrap_err().to_string();
    assert!(ambiguous.contains("git, github"), "{ambiguous}");
    let none = match_name("slack", &names, "server")
        .unwrap_err()
        .to_string();
    assert!(none.contains("No server is called 'slack'"), "{none}");
    assert!(match_name("", &names, "server").is_err());
}

#[test]
fn the_card_line_of_a_stdio_server_is_the_command_quoted() {
    let t = McpTransport::Stdio {
        command: "npx".into(),
        args: vec!["-y".into(), "@scope/server files".into()],
        env: vec![("API_TOKEN".into(), "secret-value".into())],
    };
    assert_eq!(t.describe(), "API_TOKEN=… npx -y '@scope/server files'");
}

#[test]
fn mcp_find_searches_the_catalogue_by_words_best_first() {
    let (m, _home) = manager(
        "mcp_catalogue:\n\
         - {name: git, description: Read and search git repositories, command: uvx}\n\
         - {name: browser, description: Drive a web browser and read pages, command: npx}\n\
         - {name: sqlite, description: Query a database, command: uvx}\n",
    );
    let found: Vec<String> = m
        .find("browse web pages")
        .into_iter()
        .map(|e| e.server.name)
        .collect();
    assert_eq!(found, ["browser"]);
    let found: Vec<String> = m
        .find("search a git database")
        .into_iter()
        .map(|e| e.server.name)
        .collect();
    assert_eq!(found, ["git", "sqlite"]);
    assert!(m.find("spreadsheets").is_empty());
}

#[tokio::test]
async fn a_tool_call_round_trip_returns_the_servers_text_and_is_error_fails() {
    let (m, home) = manager(&fixture_settings("demo"));
    let (server, tools) = m.activate("0000beef", "demo").await.unwrap();
    assert_eq!(server, "demo");
    assert_eq!(tools, ["demo__echo", "demo__fail", "demo__wipe"]);
    let echo = m.tool("demo__echo").unwrap();
    let spec = echo.spec();
    assert_eq!(spec.family, "mcp:demo");
    assert_eq!(spec.step_kind, StepKind::Mcp);
    assert_eq!(spec.scope, Scope::WorkOnly);
    assert_eq!(spec.risk, Risk::Network);
    assert_eq!(spec.parameters["required"], json!(["text"]));
    let out = echo.run(json!({"text": "hello"}), &ctx(home.path())).await;
    assert!(out.is_ok(), "{out:?}");
    assert_eq!(out.text, "echo: hello");
    let fail = m.tool("demo__fail").unwrap();
    let out = fail.run(json!({}), &ctx(home.path())).await;
    assert!(!out.is_ok() && out.refusal().is_none(), "{out:?}");
    assert_eq!(out.text, "it broke on purpose");
}

#[tokio::test]
async fn a_tool_the_server_declares_destructive_is_exec_so_a_card_asks() {
    let (m, _home) = manager(&fixture_settings("demo"));
    m.activate("job", "demo").await.unwrap();
    assert_eq!(m.tool("demo__wipe").unwrap().spec().risk, Risk::Exec);
}

#[tokio::test]
async fn a_server_connects_once_and_only_the_jobs_that_activated_it_see_its_tools() {
    let (m, _home) = manager(&fixture_settings("demo"));
    assert!(
        m.active_tools("job-a").is_empty(),
        "deferred until activated"
    );
    m.activate("job-a", "DEMO").await.unwrap();
    let first = m.tool("demo__echo").unwrap();
    m.activate("job-a", "demo").await.unwrap();
    assert!(
        Arc::ptr_eq(&first, &m.tool("demo__echo").unwrap()),
        "one connection"
    );
    assert_eq!(m.active_tools("job-a").len(), 3);
    assert!(m.active_tools("job-b").is_empty());
    m.forget_job("job-a");
    assert!(m.active_tools("job-a").is_empty());
}

#[tokio::test]
async fn a_dead_or_misconfigured_server_is_one_sentence_naming_it() {
    let settings = format!(
        "{}  missing:\n    command: /nonexistent/mcp-server\n  quitter:\n    command: python3\n    args: ['-c', 'import sys; print(\"no config\", file=sys.stderr); sys.exit(3)']\n",
        fixture_settings("demo")
    );
    let (m, _home) = manager(&settings);
    let why = m.activate("job", "missing").await.unwrap_err().to_string();
    assert!(
        why.starts_with("The MCP server 'missing' could not be connected"),
        "{why}"
    );
    assert!(why.contains("/nonexistent/mcp-server"), "{why}");
    let why = m.activate("job", "quitter").await.unwrap_err().to_string();
    assert!(
        why.starts_with("The MCP server 'quitter' could not be connected"),
        "{why}"
    );
    assert!(why.contains("no config"), "the server's last words: {why}");
    assert!(
        m.activate("job", "demo").await.is_ok(),
        "the others still work"
    );
}

#[tokio::test]
async fn a_streamable_http_server_lists_and_answers_over_loopback() {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new("python3")
        .args([fixture().as_str(), "--http", "web"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let port = lines.next_line().await.unwrap().unwrap();
    let (m, home) = manager(&format!(
        "mcp_servers:\n  web:\n    url: 'http://127.0.0.1:{port}/mcp'\n"
    ));
    let (_, tools) = m.activate("job", "web").await.unwrap();
    assert_eq!(tools, ["web__echo", "web__fail", "web__wipe"]);
    let out = m
        .tool("web__echo")
        .unwrap()
        .run(json!({"text": "over http"}), &ctx(home.path()))
        .await;
    assert_eq!(out.text, "echo: over http");
    assert!(out.is_ok());
}
