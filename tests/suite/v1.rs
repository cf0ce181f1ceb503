//! /v1 over real HTTP: a streamed and a whole turn, the chunk shapes, keep-alive chunks
//! in silence, a table of bad inputs (each a 4xx with an OpenAI error body, never a 5xx
//! or a hang), replacing a running turn, the tap not counting as a listener, and
//! deferral end to end with the page's event stream open on the same session.

use std::sync::Arc;
use std::time::Duration;

use kotoba::surfaces::web::WebOptions;
use serde_json::{json, Value};

use kotoba_testkit::model_server::Reply;
use kotoba_testkit::web::{of_type, options, start, start_with, FakeShell, SlowRead, Sse, KEY};

fn user(text: &str) -> Value {
    json!([{"role": "system", "content": "the agent's own prompt"}, {"role": "user", "content": text}])
}

/// The chunks of a /v1 stream, parsed, and whether it ended with `[DONE]`.
async fn read_chunks(resp: reqwest::Response) -> (Vec<Value>, bool) {
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut sse = Sse::new(resp);
    let mut out = Vec::new();
    while let Some(ev) = sse.next_within().await {
        if ev.data == "[DONE]" {
            return (out, sse.next_within().await.is_none());
        }
        out.push(ev.json());
    }
    (out, false)
}

fn content(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect()
}

#[tokio::test]
async fn a_streamed_turn_is_role_chunk_content_chunks_finish_and_done() {
    let r = start().await;
    r.model.push(Reply::text("Sure, I can help with that."));
    let resp = r
        .v1(json!({"model": "kotoba", "stream": true, "user": "s-stream", "messages": user("hi")}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-session-id"], "s-stream");
    let (chunks, done) = read_chunks(resp).await;
    assert!(done, "ends with data: [DONE] and nothing after");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["model"], "kotoba");
        assert_eq!(c["id"], chunks[0]["id"]);
    }
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["choices"][0]["delta"], json!({}));
    assert!(
        chunks.len() > 3,
        "the words arrive as several content chunks"
    );
    assert_eq!(content(&chunks), "Sure, I can help with that.");
    // Only the last user message was the turn; the agent's system prompt is not hers.
    let sent = r.model.requests()[0].to_string();
    assert!(!sent.contains("the agent's own prompt"));
    assert!(sent.contains("turned into speech"), "register voice");
    let stored = r.engine.store().history("web:s-stream", 10).await.unwrap();
    assert_eq!(stored.len(), 2);
}

#[tokio::test]
async fn a_whole_turn_is_one_chat_completion_and_the_session_header_names_it() {
    let r = start().await;
    r.model.push(Reply::text("Here you go."));
    let resp = r
        .v1(json!({"model": "kotoba", "messages": user("hi")}))
        .header("x-session-id", "from-header")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-session-id"], "from-header");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(body["choices"][0]["message"]["content"], "Here you go.");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        r.engine
            .store()
            .history("web:from-header", 10)
            .await
            .unwrap()
            .len(),
        2
    );
    // No user and no header: a new session each time.
    r.model.push(Reply::text("again"));
    let resp = r.v1(json!({"messages": user("hi")})).send().await.unwrap();
    let id = resp.headers()["x-session-id"].to_str().unwrap().to_string();
    assert!(id.starts_with("v1-"), "{id}");
    assert_eq!(resp.json::<Value>().await.unwrap()["model"], "kotoba");
}

#[tokio::test]
async fn models_lists_the_one_model() {
    let r = start().await;
    let body: Value = r
        .http
        .get(r.url("/v1/models"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["object"], "list");
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    assert_eq!(body["data"][0]["id"], "kotoba");
}

#[tokio::test]
async fn bad_inputs_are_each_a_4xx_with_an_openai_error_body() {
    let r = start_with(
        WebOptions {
            v1_body_limit: 64 * 1024,
            ..options()
        },
        Vec::new(),
    )
    .await;
    let url = r.url("/v1/chat/completions");
    let ok_body = json!({"messages": user("hi")}).to_string();
    let huge = json!({"messages": user(&"x".repeat(100 * 1024))}).to_string();
    // (name, method, path, auth, body, expected status)
    type Case<'a> = (&'a str, &'a str, String, Option<&'a str>, String, u16);
    let cases: Vec<Case> = vec![
        ("no key", "POST", url.clone(), None, ok_body.clone(), 401),
        (
            "wrong key",
            "POST",
            url.clone(),
            Some("nope"),
            ok_body.clone(),
            401,
        ),
        (
            "malformed JSON",
            "POST",
            url.clone(),
            Some(KEY),
            "{\"messages\": [".into(),
            400,
        ),
        (
            "empty body",
            "POST",
            url.clone(),
            Some(KEY),
            String::new(),
            400,
        ),
        (
            "not an object",
            "POST",
            url.clone(),
            Some(KEY),
            "[]".into(),
            400,
        ),
        (
            "no messages",
            "POST",
            url.clone(),
            Some(KEY),
            "{}".into(),
            400,
        ),
        (
            "messages not a list",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"messages":{}}"#.into(),
            400,
        ),
        (
            "message not an object",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"messages":["hi"]}"#.into(),
            400,
        ),
        (
            "content a number",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"messages":[{"role":"user","content":1}]}"#.into(),
            400,
        ),
        (
            "no user message",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"messages":[{"role":"assistant","content":"hi"}]}"#.into(),
            400,
        ),
        (
            "stream a string",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"stream":"true","messages":[{"role":"user","content":"hi"}]}"#.into(),
            400,
        ),
        (
            "user a number",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"user":7,"messages":[{"role":"user","content":"hi"}]}"#.into(),
            400,
        ),
        (
            "bad session id",
            "POST",
            url.clone(),
            Some(KEY),
            r#"{"user":"a b/c","messages":[{"role":"user","content":"hi"}]}"#.into(),
            400,
        ),
        (
            "body over the cap",
            "POST",
            url.clone(),
            Some(KEY),
            huge,
            413,
        ),
        (
            "GET on completions",
            "GET",
            url.clone(),
            Some(KEY),
            String::new(),
            405,
        ),
        (
            "unknown endpoint",
            "POST",
            r.url("/v1/embeddings"),
            Some(KEY),
            ok_body.clone(),
            404,
        ),
        (
            "models without key",
            "GET",
            r.url("/v1/models"),
            None,
            String::new(),
            401,
        ),
    ];
    for (name, method, path, auth, body, want) in cases {
        let mut req = match method {
            "GET" => r.http.get(&path),
            _ => r
                .http
                .post(&path)
                .header("content-type", "application/json")
                .body(body),
        };
        if let Some(k) = auth {
            req = req.bearer_auth(k);
        }
        let resp = tokio::time::timeout(Duration::from_secs(5), req.send())
            .await
            .unwrap_or_else(|_| panic!("{name}: hung"))
            .unwrap();
        assert_eq!(resp.status().as_u16(), want, "{name}");
        let body: Value = resp.json().await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let err = &body["error"];
        assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{name}: {body}"
        );
        assert!(err["type"].is_string(), "{name}: {body}");
        assert!(
            err.get("param").is_some() && err.get("code").is_some(),
            "{name}: {body}"
        );
        if want == 401 {
            assert_eq!(err["code"], "invalid_api_key", "{name}");
        }
    }
    // A body that never finishes arriving is cut, not waited on forever.
    let slow = start_with(
        WebOptions {
            v1_body_timeout: Duration::from_millis(300),
            ..options()
        },
        Vec::new(),
    )
    .await;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
    tx.send(Ok(b"{\"messages\": [".to_vec())).await.unwrap();
    let stream =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let resp = tokio::time::timeout(
        Duration::from_secs(5),
        slow.http
            .post(slow.url("/v1/chat/completions"))
            .bearer_auth(KEY)
            .body(reqwest::Body::wrap_stream(stream))
            .send(),
    )
    .await
    .expect("a stalled body is answered")
    .unwrap();
    assert_eq!(resp.status(), 408);
    drop(tx);
    assert_eq!(
        r.model.request_count(),
        0,
        "no bad request reached the model"
    );
}

#[tokio::test]
async fn silence_gets_a_keep_alive_chunk_and_a_new_turn_replaces_the_running_one() {
    let r = start_with(
        WebOptions {
            v1_keepalive: Duration::from_millis(150),
            ..options()
        },
        vec![Arc::new(SlowRead::new(Duration::from_millis(800)))],
    )
    .await;
    r.model.push(Reply::call("slow_lookup", json!({})));
    r.model.push(Reply::text("Found it."));
    let resp = r
        .v1(json!({"stream": true, "user": "quiet", "messages": user("look it up")}))
        .send()
        .await
        .unwrap();
    let (chunks, done) = read_chunks(resp).await;
    assert!(done);
    let empties = chunks[1..chunks.len() - 1]
        .iter()
        .filter(|c| c["choices"][0]["delta"] == json!({"content": ""}))
        .count();
    assert!(
        empties >= 2,
        "keep-alive chunks while the tool ran: {chunks:?}"
    );
    assert_eq!(content(&chunks), "Found it.");

    // Replace: a second turn on the same session cuts the first, which still ends well.
    r.model.push(Reply::call("slow_lookup", json!({})));
    r.model.push(Reply::text("second answer"));
    let first = r
        .v1(json!({"stream": true, "user": "quiet", "messages": user("one")}))
        .send()
        .await
        .unwrap();
    let first = tokio::spawn(read_chunks(first));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second: Value = r
        .v1(json!({"user": "quiet", "messages": user("two")}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(second["choices"][0]["message"]["content"], "second answer");
    let (first, done) = first.await.unwrap();
    assert!(done, "the cut stream still finishes and says [DONE]");
    assert_eq!(first.last().unwrap()["choices"][0]["finish_reason"], "stop");
    assert_eq!(content(&first), "", "the cut turn said nothing");
}

#[tokio::test]
async fn with_no_page_open_a_gated_command_is_unreachable_not_deferred() {
    let shell = FakeShell::new("installed");
    let runs = shell.runs.clone();
    let r = start_with(options(), vec![Arc::new(shell)]).await;
    r.model.push(Reply::call(
        "shell",
        json!({"command": "pip install requests"}),
    ));
    r.model
        .push(Reply::text("I couldn't ask you, so nothing ran."));
    let (chunks, _) = read_chunks(
        r.v1(json!({"stream": true, "user": "alone", "messages": user("install requests")}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(content(&chunks), "I couldn't ask you, so nothing ran.");
    let fed = r.model.requests()[1].to_string();
    assert!(
        fed.contains("nobody could be asked"),
        "the /v1 stream is not a listener"
    );
    assert_eq!(FakeShell::run_count(&runs), 0);
}

#[tokio::test]
async fn deferral_end_to_end_with_the_page_open_and_no_second_card_in_the_announce_turn() {
    let shell = FakeShell::new("Successfully installed requests-2.32.3");
    let runs = shell.runs.clone();
    let r = start_with(options(), vec![Arc::new(shell)]).await;
    let mut page = r.events("call").await;
    r.model.push(Reply::call(
        "shell",
        json!({"command": "pip install requests"}),
    ));
    let (chunks, done) = read_chunks(
        r.v1(json!({"stream": true, "user": "call", "messages": user("please install requests")}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(done);
    assert!(
        content(&chunks).ends_with("I asked for your permission on screen."),
        "{}",
        content(&chunks)
    );
    assert_eq!(FakeShell::run_count(&runs), 0, "nothing ran yet");
    let frames = page.until(|v| v["type"] == "turn_done").await;
    let cards = of_type(&frames, "card");
    assert_eq!(cards.len(), 1);
    assert_eq!(cards[0]["action"], "pip install requests");
    assert_eq!(cards[0]["window_secs"], 180, "a deferred card waits 180 s");
    let pending = of_type(&frames, "step")
        .into_iter()
        .find(|s| s["phase"] == "done")
        .unwrap()
        .clone();
    assert_eq!(pending["outcome"], "pending");

    // The announce turn the page's work_done fires: the model re-emits the same call.
    r.model.push(Reply::call(
        "shell",
        json!({"command": "pip  install requests"}),
    ));
    r.model.push(Reply::text("Requests is installed now."));
    let id = cards[0]["request_id"].as_str().unwrap();
    let answer = r
        .post(&format!("/api/cards/{id}"), json!({"decision": "approve"}))
        .await;
    assert_eq!(answer.status(), 200);
    let frames = page.until(|v| v["type"] == "work_done").await;
    let work_done = frames.last().unwrap();
    assert_eq!(work_done["ok"], true);
    assert_eq!(work_done["run_id"].as_str().unwrap().len(), 8);
    assert!(work_done["summary"]
        .as_str()
        .unwrap()
        .contains("Successfully installed requests"));
    let row = of_type(&frames, "step")
        .into_iter()
        .find(|s| s["id"] == pending["id"])
        .expect("the pending row completed in place")
        .clone();
    assert_eq!(row["outcome"], "ok");
    assert_eq!(FakeShell::run_count(&runs), 1);

    let announce = page.until(|v| v["type"] == "turn_done").await;
    assert_eq!(
        announce.last().unwrap()["text"],
        "Requests is installed now."
    );
    assert!(of_type(&announce, "card").is_empty(), "no second card");
    assert_eq!(FakeShell::run_count(&runs), 1, "one request, one run");
    let sent = r.model.requests();
    let fed = sent.last().unwrap().to_string();
    assert!(
        fed.contains("ALREADY ran"),
        "the re-emission was told it ran"
    );
    let approvers: Vec<String> = r
        .engine
        .audit_trail(Some("web:call"), 10)
        .await
        .unwrap()
        .into_iter()
        .rev()
        .map(|a| a.approver)
        .collect();
    assert_eq!(approvers, ["user", "executed"]);
    let stored = r.engine.store().history("web:call", 10).await.unwrap();
    assert!(stored.iter().all(|m| !m.text.contains("__work_done__")));
}

#[tokio::test]
async fn cancel_work_with_no_job_still_cancels_waiting_deferred_approvals() {
    let shell = FakeShell::new("deployed");
    let runs = shell.runs.clone();
    let r = start_with(options(), vec![Arc::new(shell)]).await;
    let mut page = r.events("halt").await;
    r.model
        .push(Reply::call("shell", json!({"command": "make deploy"})));
    let (chunks, _) = read_chunks(
        r.v1(json!({"stream": true, "user": "halt", "messages": user("deploy it")}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(content(&chunks).ends_with("I asked for your permission on screen."));
    let frames = page.until(|v| v["type"] == "turn_done").await;
    let card = of_type(&frames, "card")[0].clone();
    let id = card["request_id"].as_str().unwrap().to_string();
    assert!(r.engine.job("web:halt").is_none(), "no job runs");

    // "stop that", typed on the page: the model calls cancel_work.
    r.model.push(Reply::call("cancel_work", json!({})));
    r.model.push(Reply::text("Stopped; nothing will run."));
    r.say("halt", "stop that").await;
    let frames = page.until(|v| v["type"] == "turn_done").await;
    assert!(
        frames
            .iter()
            .any(|f| f["type"] == "card_settled" && f["request_id"] == id.as_str()),
        "the waiting card went away: {frames:?}"
    );
    let fed = r.model.requests().last().unwrap().to_string();
    assert!(
        fed.contains("cancelled the one approval card"),
        "cancel_work said what it cancelled: {fed}"
    );

    // Approving the card afterwards on the page changes nothing and runs nothing.
    let late = r
        .post(&format!("/api/cards/{id}"), json!({"decision": "approve"}))
        .await;
    assert_eq!(late.status(), 409);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        FakeShell::run_count(&runs),
        0,
        "the deferred command never ran"
    );
    let shell_rows: Vec<String> = r
        .engine
        .audit_trail(Some("web:halt"), 10)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.tool == "shell")
        .map(|a| a.approver)
        .collect();
    assert_eq!(shell_rows, ["dismissed"]);
}
