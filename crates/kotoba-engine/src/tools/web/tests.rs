//! Unit tests of the web family's pure parts: link detection, URL checks, the search
//! endpoint and result formatting. Fetching is tested against a loopback site in
//! tests/suite/web.rs.

use super::*;
use kotoba_core::config::Settings;

#[test]
fn a_link_is_seen_only_when_a_message_holds_an_http_or_https_url() {
    assert!(has_url("read https://example.org/a please"));
    assert!(has_url("(http://x.y)"));
    assert!(!has_url("https:// nothing"));
    assert!(!has_url("ftp://example.org and www.example.org"));
}

#[test]
fn web_extract_is_offered_after_a_link_and_always_in_a_job() {
    let tool = WebExtract::new();
    let settings = Settings::default();
    let with = ["hi".to_string(), "see https://example.org".to_string()];
    let without = ["hi".to_string()];
    let avail = |mode, msgs: &[String]| {
        tool.available(&Availability {
            mode,
            recent_user_messages: msgs,
            settings: &settings,
            origin: &kotoba_core::protocol::Origin::Owner,
        })
    };
    assert!(avail(Mode::Companion, &with));
    assert!(!avail(Mode::Companion, &without));
    assert!(avail(Mode::Work, &without));
}

#[test]
fn web_search_is_hidden_until_an_endpoint_is_configured() {
    let tool = WebSearch::new();
    let mut settings = Settings::default();
    let avail = |s: &Settings| {
        tool.available(&Availability {
            mode: Mode::Companion,
            recent_user_messages: &[],
            settings: s,
            origin: &kotoba_core::protocol::Origin::Owner,
        })
    };
    assert!(!avail(&settings));
    settings.web_search_url = Some("http://127.0.0.1:8888".into());
    assert!(avail(&settings));
}

#[test]
fn the_search_endpoint_gets_search_added_only_when_it_has_no_path() {
    assert_eq!(
        search_endpoint("http://127.0.0.1:8888").unwrap().as_str(),
        "http://127.0.0.1:8888/search"
    );
    assert_eq!(
        search_endpoint("https://s.example/api/find")
            .unwrap()
            .as_str(),
        "https://s.example/api/find"
    );
    assert!(search_endpoint("file:///x").is_err());
}

#[test]
fn results_become_title_link_and_snippet_at_most_six() {
    let many: Vec<Value> = (0..9)
        .map(|i| json!({"title": format!("t{i}"), "url": format!("https://e.org/{i}"), "content": "s"}))
        .collect();
    let lines = format_results(&json!({ "results": many }));
    assert_eq!(lines.len(), MAX_SEARCH_RESULTS);
    assert_eq!(lines[0], "t0 — https://e.org/0\n  s");
    assert!(format_results(&json!({"results": [{"title": "no url"}]})).is_empty());
}
