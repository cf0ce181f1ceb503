//! The page's Settings panel through the HTTP API: `GET /api/settings` lists the live
//! settings.yaml keys with the work caps under "Advanced (work)" and no companion cap;
//! `POST /api/settings` saves, refuses a bad value naming its key and keeps the last
//! good one; a save from another site's page is refused; the page ships the panel
//! (docs/surfaces.md).

use serde_json::{json, Value};

use kotoba_testkit::web::{start, WebRig};

async fn listing(r: &WebRig) -> Vec<Value> {
    let resp = r.http.get(r.url("/api/settings")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    body["settings"].as_array().unwrap().clone()
}

fn entry<'a>(list: &'a [Value], key: &str) -> &'a Value {
    list.iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {list:?}"))
}

#[tokio::test]
async fn the_settings_panel_lists_the_live_keys_with_the_four_work_caps_under_advanced_and_no_companion_cap(
) {
    let r = start().await;
    let list = listing(&r).await;
    let work: Vec<&str> = list
        .iter()
        .filter(|s| s["group"] == "work")
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        work,
        [
            "work_max_iter",
            "work_max_tool_calls",
            "work_fail_limit",
            "work_timeout"
        ]
    );
    assert_eq!(entry(&list, "work_max_iter")["value"], "40");
    assert_eq!(entry(&list, "work_timeout")["value"], "3600");
    assert_eq!(entry(&list, "model")["group"], "general");
    assert_eq!(entry(&list, "model")["value"], "scripted");
    assert!(
        !list
            .iter()
            .any(|s| s["key"].as_str().unwrap().starts_with("KOTOBA_")),
        "an environment-only cap is listed: {list:?}"
    );
    for cap in [
        "max_tool_calls",
        "fail_limit",
        "per_tool_limit",
        "delegate_limit",
        "web_search_limit",
    ] {
        assert!(
            !list.iter().any(|s| s["key"] == cap),
            "a companion cap is listed: {cap}"
        );
    }
}

#[tokio::test]
async fn a_bad_setting_is_refused_with_400_naming_its_key_and_the_last_good_values_stay() {
    let r = start().await;
    let ok = r.post("/api/settings", json!({"work_max_iter": 12})).await;
    assert_eq!(ok.status(), 200);
    let body: Value = ok.json().await.unwrap();
    assert_eq!(body["saved"], json!(["work_max_iter"]));
    assert_eq!(entry(&listing(&r).await, "work_max_iter")["value"], "12");
    assert_eq!(
        r.engine.config().settings().work_max_iter,
        12,
        "the engine reads it"
    );

    let bad = r
        .post(
            "/api/settings",
            json!({"work_fail_limit": "3", "work_timeout": 5}),
        )
        .await;
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["key"], "work_timeout", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("work_timeout"),
        "{body}"
    );
    let list = listing(&r).await;
    assert_eq!(
        entry(&list, "work_timeout")["value"],
        "3600",
        "last good kept"
    );
    assert_eq!(
        entry(&list, "work_fail_limit")["value"],
        "6",
        "nothing of a refused save is written"
    );
    assert_eq!(entry(&list, "work_max_iter")["value"], "12");

    let unknown = r.post("/api/settings", json!({"max_tool_calls": 3})).await;
    assert_eq!(unknown.status(), 400);
    let body: Value = unknown.json().await.unwrap();
    assert_eq!(body["key"], "max_tool_calls", "{body}");
}

#[tokio::test]
async fn a_settings_save_from_another_sites_page_is_refused_and_changes_nothing() {
    let r = start().await;
    let resp = r
        .http
        .post(r.url("/api/settings"))
        .header("Origin", "https://evil.example")
        .json(&json!({"work_max_iter": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    assert_eq!(entry(&listing(&r).await, "work_max_iter")["value"], "40");
}

#[tokio::test]
async fn the_page_ships_a_settings_panel_with_advanced_work_and_draws_a_reminder_as_a_note() {
    let r = start().await;
    let html = r
        .http
        .get(r.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("id=\"settings-panel\""), "{html}");
    assert!(html.contains("Advanced (work)"), "{html}");
    let js = r
        .http
        .get(r.url("/assets/page.js"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(js.contains("\"/api/settings\""));
    assert!(js.contains("case \"reminder\":"));
}

#[tokio::test]
async fn a_save_from_the_page_edits_only_its_keys_and_keeps_every_comment_in_settings_yaml() {
    let r = start().await;
    let path = r.engine.config().paths.settings.clone();
    let mine = "# My settings: keep these notes.\n\
                work_max_iter: 8   # small jobs only\n\
                \n\
                voice:\n  # how she hears\n  speculate: true\n";
    std::fs::write(&path, mine).unwrap();
    let ok = r
        .post(
            "/api/settings",
            json!({"work_max_iter": 20, "voice.speculate": false}),
        )
        .await;
    assert_eq!(ok.status(), 200);
    let now = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        now,
        "# My settings: keep these notes.\n\
         work_max_iter: 20 # small jobs only\n\
         \n\
         voice:\n  # how she hears\n  speculate: false\n",
        "only the two values changed"
    );
    assert_eq!(
        r.engine.config().settings().work_max_iter,
        20,
        "and they apply"
    );
}

#[tokio::test]
async fn each_setting_comes_with_its_input_default_doc_and_the_variable_that_overrides_it() {
    let r = start().await;
    let list = listing(&r).await;
    let force_ask = entry(&list, "force_ask");
    assert_eq!(force_ask["kind"], "toggle");
    assert_eq!(force_ask["default"], "false");
    assert!(force_ask["doc"].as_str().unwrap().contains("asks"));
    let api = entry(&list, "api");
    assert_eq!(api["kind"], "choice");
    assert_eq!(api["choices"], json!(["responses", "chat"]));
    let timeout = entry(&list, "work_timeout");
    assert_eq!(
        (&timeout["kind"], &timeout["min"], &timeout["whole"]),
        (&json!("number"), &json!(30.0), &json!(true))
    );
    assert_eq!(entry(&list, "voice.min_speech")["max"], json!(5.0));
    // The rig sets KOTOBA_MODEL: it wins over the file, and the listing says so.
    assert_eq!(entry(&list, "model")["overridden_by"], "KOTOBA_MODEL");
    assert_eq!(entry(&list, "work_timeout")["overridden_by"], Value::Null);

    // Saving an overridden key: kept in the file, and the answer says it does not apply.
    let saved = r
        .post(
            "/api/settings",
            json!({"model": "from-the-page", "work_max_iter": 9}),
        )
        .await;
    assert_eq!(saved.status(), 200);
    let body: Value = saved.json().await.unwrap();
    assert_eq!(
        body["overridden"],
        json!([{"key": "model", "by": "KOTOBA_MODEL"}]),
        "{body}"
    );
    assert_eq!(
        entry(body["settings"].as_array().unwrap(), "model")["value"],
        "scripted"
    );
    let file = std::fs::read_to_string(&r.engine.config().paths.settings).unwrap();
    assert!(file.contains("from-the-page"), "{file}");
}

#[tokio::test]
async fn a_bad_value_in_settings_yaml_is_shown_beside_its_key() {
    let r = start().await;
    let path = r.engine.config().paths.settings.clone();
    std::fs::write(&path, "force_ask: perhaps\nwork_max_iter: lots\n").unwrap();
    let list = listing(&r).await;
    let force_ask = entry(&list, "force_ask");
    assert!(
        force_ask["warning"]
            .as_str()
            .is_some_and(|w| w.contains("force_ask") && w.contains("on until it is fixed")),
        "{force_ask}"
    );
    assert_eq!(force_ask["value"], "true", "fell to the safe side");
    assert!(
        entry(&list, "work_max_iter")["warning"]
            .as_str()
            .is_some_and(|w| w.contains("keeping work_max_iter as it was")),
        "{list:?}"
    );
    assert_eq!(entry(&list, "model")["warning"], Value::Null);
}
