//! The web family against a loopback site: readable text from a real-shaped article,
//! failures that name their reason, web_extract offered only after a link and withdrawn
//! after one failure, web_search through a configured endpoint with its cap note.

use std::path::Path;
use std::sync::Arc;

use kotoba::app::App;
use kotoba::config::Settings;
use kotoba::protocol::{Mode, TurnRequest};
use kotoba::tools::web::{WebExtract, WebSearch, MAX_PAGE_CHARS};
use kotoba::tools::{Tool, ToolContext, ToolOutput};
use serde_json::{json, Value};

use kotoba_testkit::model_server::{Reply, ScriptedModel};
use kotoba_testkit::page_server::{PageServer, ARTICLE_MARK, CHROME_MARKS};

fn ctx(home: &Path, settings: Settings) -> ToolContext {
    let mut ctx = ToolContext {
        settings: Arc::new(settings),
        ..ToolContext::bare("s", Mode::Companion, home, &home.join("workspace"))
    };
    Arc::make_mut(&mut ctx.turn).user_request = Some("read this".into());
    ctx
}

async fn extract(url: &str) -> ToolOutput {
    let home = tempfile::tempdir().unwrap();
    WebExtract::new()
        .run(
            json!({ "url": url }),
            &ctx(home.path(), Settings::default()),
        )
        .await
}

#[tokio::test]
async fn web_extract_keeps_the_article_and_drops_navigation_ads_and_footer() {
    let site = PageServer::start().await;
    let out = extract(&site.url("/article")).await;
    assert!(out.is_ok(), "{}", out.text);
    assert!(out.text.starts_with("Title: The Keeper"), "{}", out.text);
    assert!(out.text.contains(ARTICLE_MARK), "{}", out.text);
    assert!(out.text.contains("paragraph 8"), "{}", out.text);
    for chrome in CHROME_MARKS {
        assert!(!out.text.contains(chrome), "kept {chrome:?}: {}", out.text);
    }
    assert!(!out.text.contains("tracking"), "{}", out.text);
    assert!(out.text.chars().count() <= MAX_PAGE_CHARS + 200);
}

#[tokio::test]
async fn a_long_article_reaches_the_model_cut_at_six_thousand_characters_with_a_note() {
    let site = PageServer::start().await;
    let out = extract(&site.url("/long")).await;
    assert!(out.is_ok(), "{}", out.text);
    let (head, body) = out.text.split_once("\n\n").unwrap();
    assert!(head.contains("URL: "), "{head}");
    let (text, note) = body.rsplit_once('\n').unwrap();
    assert_eq!(text.chars().count(), MAX_PAGE_CHARS);
    assert!(note.starts_with("[page text cut at 6000 of "), "{note}");
}

#[tokio::test]
async fn web_extract_failures_name_their_reason() {
    let site = PageServer::start().await;
    let cases = [
        ("/missing", "404"),
        ("/paper.pdf", "not HTML but application/pdf"),
        ("/huge", "too large"),
        ("/huge-stream", "too large"),
        ("/loop", "redirected more than 5 times"),
    ];
    for (path, reason) in cases {
        let out = extract(&site.url(path)).await;
        assert!(
            !out.is_ok() && out.refusal().is_none(),
            "{path}: {}",
            out.text
        );
        assert!(out.text.contains(reason), "{path}: {}", out.text);
    }
    let out = extract(&site.url("/notes.txt")).await;
    assert!(
        out.is_ok() && out.text.contains("just plain notes"),
        "{}",
        out.text
    );
}

#[tokio::test(start_paused = true)]
async fn a_page_that_never_answers_times_out_after_twenty_seconds() {
    let site = PageServer::start().await;
    let started = tokio::time::Instant::now();
    let out = extract(&site.url("/slow")).await;
    assert!(!out.is_ok(), "{}", out.text);
    assert!(out.text.contains("timed out after 20 s"), "{}", out.text);
    assert!(started.elapsed() <= std::time::Duration::from_secs(21));
}

#[tokio::test]
async fn a_link_that_is_not_http_is_refused_and_nothing_is_fetched() {
    for bad in ["file:///etc/passwd", "ftp://example.org/x", "nonsense"] {
        let out = extract(bad).await;
        assert!(out.refusal().is_some(), "{bad}: {}", out.text);
    }
}

#[tokio::test]
async fn web_search_asks_the_configured_endpoint_for_json_results() {
    let site = PageServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let settings = Settings {
        web_search_url: Some(site.url("")),
        ..Settings::default()
    };
    let out = WebSearch::new()
        .run(json!({"query": "lighthouses"}), &ctx(home.path(), settings))
        .await;
    assert!(out.is_ok(), "{}", out.text);
    assert!(
        out.text
            .starts_with("About lighthouses — https://example.org/a\n  First snippet."),
        "{}",
        out.text
    );
    assert_eq!(site.searches(), 1);
}

/// The names of the tools a request offered, in either wire format.
fn offered(body: &Value) -> Vec<String> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").or_else(|| t.pointer("/function/name")))
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

async fn app_with(model: &ScriptedModel, home: &Path, extra: &[(&str, &str)]) -> App {
    App::build(model.config_with(home, "responses", extra))
        .await
        .unwrap()
}

#[tokio::test]
async fn web_extract_is_offered_only_after_a_link_and_withdrawn_after_one_failure() {
    let site = PageServer::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let app = app_with(&model, home.path(), &[]).await;
    model.push(Reply::text("hello"));
    app.engine
        .run_turn(
            TurnRequest::text(kotoba::protocol::Origin::Owner, "s", "ann", "hi there"),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let missing = site.url("/missing");
    model.push(Reply::call("web_extract", json!({ "url": missing })));
    model.push(Reply::call(
        "web_extract",
        json!({ "url": site.url("/article") }),
    ));
    model.push(Reply::text("that page is gone"));
    app.engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s",
                "ann",
                format!("read {missing}"),
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let sent = model.requests();
    assert!(!offered(&sent[0]).contains(&"web_extract".to_string()));
    assert!(!offered(&sent[0]).contains(&"web_search".to_string()));
    assert!(offered(&sent[1]).contains(&"web_extract".to_string()));
    assert!(
        !offered(&sent[2]).contains(&"web_extract".to_string()),
        "still offered after it failed"
    );
    let fed = sent[3]["input"].as_array().unwrap().last().unwrap()["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fed.contains("do not have 'web_extract'"), "{fed}");
}

#[tokio::test]
async fn web_search_is_offered_only_when_configured_and_notes_its_last_call() {
    let site = PageServer::start().await;
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    let endpoint = site.url("/search");
    let app = app_with(
        &model,
        home.path(),
        &[
            ("KOTOBA_WEB_SEARCH_URL", &endpoint),
            ("KOTOBA_WEB_SEARCH_LIMIT", "2"),
        ],
    )
    .await;
    for q in ["one", "two", "three"] {
        model.push(Reply::call("web_search", json!({ "query": q })));
    }
    model.push(Reply::text("here is what I found"));
    app.engine
        .run_turn(
            TurnRequest::text(
                kotoba::protocol::Origin::Owner,
                "s",
                "ann",
                "look up lighthouses",
            ),
            kotoba::engine::TurnOptions::default(),
        )
        .await;
    let sent = model.requests();
    assert!(offered(&sent[0]).contains(&"web_search".to_string()));
    let last_output = |i: usize| {
        sent[i]["input"].as_array().unwrap().last().unwrap()["output"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        !last_output(1).contains("last web search"),
        "{}",
        last_output(1)
    );
    assert!(
        last_output(2).contains("That was the last web search this turn (2 of 2)"),
        "{}",
        last_output(2)
    );
    assert!(
        last_output(3).contains("THIS CALL DID NOT RUN"),
        "{}",
        last_output(3)
    );
    assert_eq!(site.searches(), 2);
}
