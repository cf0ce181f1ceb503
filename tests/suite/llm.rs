//! The model client against the scripted model server: both wire formats, streaming,
//! tool-call round trips, retries and every typed error.

use std::time::Duration;

use kotoba::config::Config;
use kotoba::llm::{
    FunctionSpec, Item, LlmError, ModelClient, ModelReply, ModelRequest, OpenAiClient,
};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::sync::mpsc;

use kotoba_testkit::model_server::{Reply, ScriptedModel};

const APIS: [&str; 2] = ["responses", "chat"];

struct Fixture {
    server: ScriptedModel,
    client: OpenAiClient,
    _home: TempDir,
}

async fn fixture(api: &str) -> Fixture {
    let server = ScriptedModel::start().await;
    let home = TempDir::new().unwrap();
    let config = server.config_for(home.path(), api);
    let client = OpenAiClient::new(config).with_idle_timeout(None);
    Fixture {
        server,
        client,
        _home: home,
    }
}

fn path_of(api: &str) -> &'static str {
    if api == "chat" {
        "/v1/chat/completions"
    } else {
        "/v1/responses"
    }
}

fn shell_tool() -> FunctionSpec {
    FunctionSpec {
        name: "shell".into(),
        description: "Run a command".into(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    }
}

fn request(items: impl Into<std::sync::Arc<Vec<Item>>>, tools: Vec<FunctionSpec>) -> ModelRequest {
    ModelRequest {
        system: "You are Kotoba.".into(),
        items: items.into(),
        tools,
        settings: None,
    }
}

fn user(text: &str) -> Item {
    Item::User { text: text.into() }
}

async fn ask(
    client: &OpenAiClient,
    req: &ModelRequest,
) -> (Result<ModelReply, LlmError>, Vec<String>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = client.stream(req, &tx).await;
    drop(tx);
    let mut deltas = Vec::new();
    while let Some(d) = rx.recv().await {
        deltas.push(d);
    }
    (result, deltas)
}

#[tokio::test]
async fn text_streams_as_several_deltas_and_the_reply_holds_the_whole_text() {
    for api in APIS {
        let f = fixture(api).await;
        let said = "I am here and I am listening to you.";
        f.server.push(Reply::text(said));
        let (reply, deltas) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
        let reply = reply.unwrap();
        assert!(
            deltas.len() > 3,
            "{api}: words arrive in pieces, got {deltas:?}"
        );
        assert_eq!(deltas.concat(), said, "{api}");
        assert_eq!(reply.text(), said, "{api}");
        assert_eq!(
            reply.items,
            vec![Item::Assistant { text: said.into() }],
            "{api}"
        );
        assert_eq!(f.server.request_paths(), vec![path_of(api)], "{api}");
        assert_eq!(
            f.server.authorizations(),
            vec![Some("Bearer test-key".into())],
            "{api}"
        );
    }
}

#[tokio::test]
async fn the_request_names_the_model_streams_and_puts_the_system_prompt_first() {
    for api in APIS {
        let f = fixture(api).await;
        ask(&f.client, &request(vec![user("hi")], vec![]))
            .await
            .0
            .unwrap();
        let body = &f.server.requests()[0];
        assert_eq!(body["model"], "scripted", "{api}");
        assert_eq!(body["stream"], true, "{api}");
        if api == "chat" {
            assert_eq!(
                body["messages"][0],
                json!({"role": "system", "content": "You are Kotoba."})
            );
            assert_eq!(
                body["messages"][1],
                json!({"role": "user", "content": "hi"})
            );
        } else {
            assert_eq!(body["instructions"], "You are Kotoba.");
            assert_eq!(body["input"], json!([{"role": "user", "content": "hi"}]));
            assert_eq!(body["store"], false);
        }
        assert!(body.get("reasoning").is_none() && body.get("reasoning_effort").is_none());
    }
}

#[tokio::test]
async fn a_words_only_request_has_no_tools_key_and_a_tool_request_offers_function_tools() {
    for api in APIS {
        let f = fixture(api).await;
        ask(&f.client, &request(vec![user("hi")], vec![]))
            .await
            .0
            .unwrap();
        ask(&f.client, &request(vec![user("hi")], vec![shell_tool()]))
            .await
            .0
            .unwrap();
        let bodies = f.server.requests();
        assert!(bodies[0].get("tools").is_none(), "{api}: {}", bodies[0]);
        let tool = &bodies[1]["tools"][0];
        assert_eq!(tool["type"], "function", "{api}");
        let spec = if api == "chat" {
            &tool["function"]
        } else {
            tool
        };
        assert_eq!(spec["name"], "shell", "{api}");
        assert_eq!(spec["description"], "Run a command", "{api}");
        assert_eq!(
            spec["parameters"]["properties"]["command"]["type"], "string",
            "{api}"
        );
    }
}

#[tokio::test]
async fn a_tool_call_round_trip_carries_the_call_and_its_result_back_by_call_id() {
    for api in APIS {
        let f = fixture(api).await;
        f.server.push(Reply::text_then_call(
            "Let me look.",
            "shell",
            json!({"command": "ls -la"}),
        ));
        f.server.push(Reply::text("Two files."));
        let first = request(vec![user("what is here?")], vec![shell_tool()]);
        let reply = ask(&f.client, &first).await.0.unwrap();
        assert_eq!(reply.text(), "Let me look.", "{api}");
        let calls = reply.tool_calls();
        assert_eq!(calls.len(), 1, "{api}");
        let call = calls[0].clone();
        assert_eq!(call.name, "shell", "{api}");
        let args: Value = serde_json::from_str(&call.arguments).unwrap();
        assert_eq!(args, json!({"command": "ls -la"}), "{api}");
        assert!(call.call_id.starts_with("call_"), "{api}: {}", call.call_id);

        let mut items = first.items.to_vec();
        items.extend(reply.items.clone());
        items.push(Item::ToolResult {
            call_id: call.call_id.clone(),
            output: "a\nb".into(),
        });
        let second = ask(&f.client, &request(items, vec![shell_tool()]))
            .await
            .0
            .unwrap();
        assert_eq!(second.text(), "Two files.", "{api}");

        let body = &f.server.requests()[1];
        if api == "chat" {
            let msgs = body["messages"].as_array().unwrap();
            let asked = &msgs[2];
            assert_eq!(asked["role"], "assistant");
            assert_eq!(asked["content"], "Let me look.");
            assert_eq!(asked["tool_calls"][0]["id"], call.call_id.as_str());
            assert_eq!(asked["tool_calls"][0]["type"], "function");
            assert_eq!(asked["tool_calls"][0]["function"]["name"], "shell");
            assert_eq!(
                asked["tool_calls"][0]["function"]["arguments"],
                call.arguments.as_str()
            );
            assert_eq!(
                msgs[3],
                json!({"role": "tool", "tool_call_id": call.call_id, "content": "a\nb"})
            );
        } else {
            let input = body["input"].as_array().unwrap();
            assert_eq!(
                input[1],
                json!({"role": "assistant", "content": "Let me look."})
            );
            assert_eq!(
                Some(&input[2]),
                call.raw.as_ref(),
                "the call item goes back unchanged"
            );
            assert_eq!(input[2]["type"], "function_call");
            assert_eq!(input[2]["call_id"], call.call_id.as_str());
            assert_eq!(
                input[3],
                json!({"type": "function_call_output", "call_id": call.call_id, "output": "a\nb"})
            );
        }
    }
}

#[tokio::test]
async fn several_calls_in_one_reply_keep_their_order_and_group_into_one_chat_message() {
    for api in APIS {
        let f = fixture(api).await;
        f.server.push(Reply::calls(vec![
            ("shell", json!({"command": "pwd"})),
            ("read_file", json!({"path": "a.txt"})),
        ]));
        let first = request(vec![user("go")], vec![shell_tool()]);
        let reply = ask(&f.client, &first).await.0.unwrap();
        let names: Vec<&str> = reply.tool_calls().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["shell", "read_file"], "{api}");
        let ids: Vec<String> = reply
            .tool_calls()
            .iter()
            .map(|c| c.call_id.clone())
            .collect();
        assert_ne!(ids[0], ids[1], "{api}: call ids are unique");

        let mut items = first.items.to_vec();
        items.extend(reply.items.clone());
        for id in &ids {
            items.push(Item::ToolResult {
                call_id: id.clone(),
                output: "ok".into(),
            });
        }
        ask(&f.client, &request(items, vec![])).await.0.unwrap();
        if api == "chat" {
            let msgs = f.server.requests()[1]["messages"]
                .as_array()
                .unwrap()
                .clone();
            assert_eq!(
                msgs.len(),
                5,
                "system, user, one assistant message, two tool results"
            );
            assert_eq!(msgs[2]["tool_calls"].as_array().unwrap().len(), 2);
            assert_eq!(msgs[3]["tool_call_id"], ids[0].as_str());
            assert_eq!(msgs[4]["tool_call_id"], ids[1].as_str());
        }
    }
}

#[tokio::test]
async fn a_responses_reasoning_item_is_carried_back_unchanged_in_the_next_request() {
    let f = fixture("responses").await;
    f.server.push(Reply::reasoning_then_call(
        "shell",
        json!({"command": "date"}),
    ));
    let first = request(vec![user("time?")], vec![shell_tool()]);
    let reply = ask(&f.client, &first).await.0.unwrap();
    let Item::Reasoning { raw } = &reply.items[0] else {
        panic!("the reasoning item comes first: {:?}", reply.items);
    };
    assert!(raw["encrypted_content"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    let call = reply.tool_calls()[0].clone();

    let mut items = first.items.to_vec();
    items.extend(reply.items.clone());
    items.push(Item::ToolResult {
        call_id: call.call_id.clone(),
        output: "noon".into(),
    });
    ask(&f.client, &request(items, vec![shell_tool()]))
        .await
        .0
        .unwrap();
    let input = f.server.requests()[1]["input"].as_array().unwrap().clone();
    assert_eq!(&input[1], raw, "byte-for-byte the item that arrived");
    assert_eq!(input[2]["call_id"], call.call_id.as_str());
}

#[tokio::test]
async fn a_reasoning_model_asks_for_its_effort_and_a_plain_model_does_not() {
    for api in APIS {
        let server = ScriptedModel::start().await;
        let home = TempDir::new().unwrap();
        let base = server.base_url();
        let config = Config::for_home(
            home.path(),
            &[
                ("KOTOBA_LLM_BASE_URL", base.as_str()),
                ("KOTOBA_LLM_API", api),
                ("OPENAI_API_KEY", "k"),
                ("KOTOBA_REASONING_EFFORT", "Medium"),
            ],
        );
        let client = OpenAiClient::new(config).with_idle_timeout(None);
        ask(&client, &request(vec![user("hi")], vec![]))
            .await
            .0
            .unwrap();
        let body = &server.requests()[0];
        if api == "chat" {
            assert_eq!(body["reasoning_effort"], "medium");
            assert!(body.get("reasoning").is_none());
        } else {
            assert_eq!(body["reasoning"], json!({"effort": "medium"}));
            assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        }
    }
}

#[tokio::test]
async fn settings_are_read_live_on_every_call() {
    let server = ScriptedModel::start().await;
    let home = TempDir::new().unwrap();
    let base = server.base_url();
    let config = Config::for_home(home.path(), &[("OPENAI_API_KEY", "k")]);
    config.set("base_url", &base).unwrap();
    config.set("reasoning_effort", "off").unwrap();
    config.set("model", "first-model").unwrap();
    let client = OpenAiClient::new(config.clone()).with_idle_timeout(None);
    ask(&client, &request(vec![user("a")], vec![]))
        .await
        .0
        .unwrap();
    config.set("model", "second-model").unwrap();
    config.set("api", "chat").unwrap();
    ask(&client, &request(vec![user("b")], vec![]))
        .await
        .0
        .unwrap();
    assert_eq!(
        server.request_paths(),
        vec!["/v1/responses", "/v1/chat/completions"]
    );
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|b| b["model"].clone())
        .collect();
    assert_eq!(models, vec![json!("first-model"), json!("second-model")]);
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_is_retried_after_its_retry_after_and_then_succeeds() {
    for api in APIS {
        let f = fixture(api).await;
        f.server.push(Reply::rate_limited(5));
        f.server.push(Reply::text("Back again."));
        let started = tokio::time::Instant::now();
        let (reply, _) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
        assert_eq!(reply.unwrap().text(), "Back again.", "{api}");
        assert_eq!(f.server.request_count(), 2, "{api}");
        let waited = started.elapsed();
        assert!(waited >= Duration::from_secs(5), "{api}: waited {waited:?}");
        assert!(
            waited < Duration::from_secs(6),
            "{api}: Retry-After wins over backoff"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn seven_rate_limits_in_a_row_end_in_rate_limited_after_exactly_seven_requests() {
    let f = fixture("responses").await;
    for _ in 0..7 {
        f.server.push(Reply::status(429, "slow down"));
    }
    f.server.set_fallback(Reply::text("too late"));
    let started = tokio::time::Instant::now();
    let (reply, _) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
    assert_eq!(reply, Err(LlmError::RateLimited { retry_after: None }));
    assert_eq!(f.server.request_count(), 7, "one try and six retries");
    let waited = started.elapsed();
    // 1 + 2 + 4 + 8 + 16 + 30 seconds of backoff.
    assert!(waited >= Duration::from_secs(61), "waited {waited:?}");
    assert!(waited < Duration::from_secs(62), "waited {waited:?}");
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_in_the_stream_is_retried_only_while_nothing_has_streamed() {
    let f = fixture("responses").await;
    let limit = r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down"}"#;
    f.server.push(Reply::raw_sse(&format!("data: {limit}\n\n")));
    f.server.push(Reply::text("fine"));
    let (reply, _) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
    assert_eq!(reply.unwrap().text(), "fine");
    assert_eq!(f.server.request_count(), 2, "nothing had streamed: retried");

    let delta = r#"{"type":"response.output_text.delta","item_id":"m","delta":"Half a "}"#;
    f.server.push(Reply::raw_sse(&format!(
        "data: {delta}\n\ndata: {limit}\n\n"
    )));
    let (reply, deltas) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
    assert_eq!(deltas, vec!["Half a "]);
    assert!(
        matches!(reply, Err(LlmError::RateLimited { .. })),
        "{reply:?}"
    );
    assert_eq!(
        f.server.request_count(),
        3,
        "text had streamed: never retried"
    );
}

#[tokio::test]
async fn an_auth_failure_is_returned_at_once_without_a_retry() {
    for api in APIS {
        let f = fixture(api).await;
        f.server.push(Reply::status(
            401,
            r#"{"error":{"message":"Incorrect API key"}}"#,
        ));
        let (reply, _) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
        assert!(matches!(reply, Err(LlmError::Auth(_))), "{api}: {reply:?}");
        assert_eq!(f.server.request_count(), 1, "{api}");
    }
}

#[tokio::test]
async fn error_statuses_map_to_context_too_long_and_http_with_the_body() {
    let f = fixture("chat").await;
    let long = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
    f.server.push(Reply::status(400, long));
    f.server.push(Reply::status(503, "overloaded"));
    let req = request(vec![user("hi")], vec![]);
    assert_eq!(ask(&f.client, &req).await.0, Err(LlmError::ContextTooLong));
    assert_eq!(
        ask(&f.client, &req).await.0,
        Err(LlmError::Http {
            status: 503,
            body: "overloaded".into()
        })
    );
    assert_eq!(f.server.request_count(), 2, "a 5xx is not retried");
}

#[tokio::test]
async fn a_stream_that_ends_before_completion_is_a_stream_error() {
    for api in APIS {
        let f = fixture(api).await;
        f.server.push(Reply::truncated("I was saying something"));
        let (reply, deltas) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
        assert_eq!(
            deltas.concat(),
            "I was saying something",
            "{api}: the words did stream"
        );
        assert!(
            matches!(reply, Err(LlmError::Stream(_))),
            "{api}: {reply:?}"
        );
        assert_eq!(f.server.request_count(), 1, "{api}: never retried");
    }
}

#[tokio::test]
async fn invalid_json_in_an_sse_data_line_is_malformed() {
    for api in APIS {
        let f = fixture(api).await;
        f.server
            .push(Reply::raw_sse("data: {\"type\": not json\n\n"));
        let (reply, _) = ask(&f.client, &request(vec![user("hi")], vec![])).await;
        assert!(
            matches!(reply, Err(LlmError::Malformed(_))),
            "{api}: {reply:?}"
        );
    }
}

#[tokio::test]
async fn tool_call_arguments_streamed_in_many_small_pieces_reassemble_exactly() {
    for api in APIS {
        let f = fixture(api).await;
        let script = "for f in *.txt; do echo \"ファイル: $f\"; done | sort -r | head -n 40";
        f.server.push(Reply::call(
            "shell",
            json!({"command": script, "timeout": 30}),
        ));
        let reply = ask(&f.client, &request(vec![user("go")], vec![shell_tool()]))
            .await
            .0
            .unwrap();
        let args: Value = serde_json::from_str(&reply.tool_calls()[0].arguments).unwrap();
        assert_eq!(args, json!({"command": script, "timeout": 30}), "{api}");
    }
}

#[tokio::test]
async fn chat_tool_call_deltas_are_accumulated_by_index_when_interleaved() {
    let f = fixture("chat").await;
    let chunk = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    };
    let mut body = String::new();
    body += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_a", "function": {"name": "shell", "arguments": ""}}]}),
    );
    body += &chunk(
        json!({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "read_file", "arguments": "{\"pa"}}]}),
    );
    body +=
        &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"command\":"}}]}));
    body += &chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": "th\":\"x\"}"}}]}));
    body += &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"ls\"}"}}]}));
    body += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n";
    body += "data: [DONE]\n\n";
    f.server.push(Reply::raw_sse(&body));
    let reply = ask(&f.client, &request(vec![user("go")], vec![shell_tool()]))
        .await
        .0
        .unwrap();
    let calls: Vec<(String, String, String)> = reply
        .tool_calls()
        .iter()
        .map(|c| (c.call_id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "call_a".into(),
                "shell".into(),
                r#"{"command":"ls"}"#.into()
            ),
            (
                "call_b".into(),
                "read_file".into(),
                r#"{"path":"x"}"#.into()
            ),
        ]
    );
}

#[tokio::test]
async fn invalid_argument_text_is_passed_through_verbatim_for_the_engine_to_judge() {
    for api in APIS {
        let f = fixture(api).await;
        f.server.push(Reply::raw_args("shell", "not json {"));
        let reply = ask(&f.client, &request(vec![user("go")], vec![shell_tool()]))
            .await
            .0
            .unwrap();
        assert_eq!(reply.tool_calls()[0].arguments, "not json {", "{api}");
    }
}

#[tokio::test]
async fn no_key_against_api_openai_com_is_no_key_before_anything_is_sent() {
    let home = TempDir::new().unwrap();
    let config = Config::for_home(home.path(), &[]);
    // An env name nobody sets, so the process environment cannot supply a key.
    config
        .set("api_key_env", "KOTOBA_TEST_KEY_THAT_IS_NEVER_SET")
        .unwrap();
    assert_eq!(config.settings().base_url, "https://api.openai.com/v1");
    let client = OpenAiClient::new(config);
    let (reply, _) = ask(&client, &request(vec![user("hi")], vec![])).await;
    assert_eq!(
        reply,
        Err(LlmError::NoKey {
            env: "KOTOBA_TEST_KEY_THAT_IS_NEVER_SET".into()
        })
    );
}

#[tokio::test]
async fn a_keyless_local_server_is_asked_without_an_authorization_header() {
    let server = ScriptedModel::start().await;
    let home = TempDir::new().unwrap();
    let base = server.base_url();
    let config = Config::for_home(home.path(), &[("KOTOBA_LLM_BASE_URL", base.as_str())]);
    config
        .set("api_key_env", "KOTOBA_TEST_KEY_THAT_IS_NEVER_SET")
        .unwrap();
    let client = OpenAiClient::new(config).with_idle_timeout(None);
    ask(&client, &request(vec![user("hi")], vec![]))
        .await
        .0
        .unwrap();
    assert_eq!(server.authorizations(), vec![None]);
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let home = TempDir::new().unwrap();
    let base = format!("http://{addr}/v1");
    let config = Config::for_home(home.path(), &[("KOTOBA_LLM_BASE_URL", base.as_str())]);
    let client = OpenAiClient::new(config).with_idle_timeout(None);
    let (reply, _) = ask(&client, &request(vec![user("hi")], vec![])).await;
    assert!(matches!(reply, Err(LlmError::Connect(_))), "{reply:?}");
}

#[tokio::test(start_paused = true)]
async fn a_server_that_goes_silent_ends_in_a_stream_error_after_the_idle_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        std::future::pending::<()>().await;
        drop(socket);
    });
    let home = TempDir::new().unwrap();
    let base = format!("http://{addr}/v1");
    let config = Config::for_home(
        home.path(),
        &[
            ("KOTOBA_LLM_BASE_URL", base.as_str()),
            ("OPENAI_API_KEY", "k"),
        ],
    );
    let client = OpenAiClient::new(config).with_idle_timeout(Some(Duration::from_secs(20)));
    let (reply, _) = ask(&client, &request(vec![user("hi")], vec![])).await;
    assert_eq!(reply, Err(LlmError::Stream("no data for 20 s".into())));
    held.abort();
}

#[tokio::test]
async fn the_fallback_answers_once_the_script_is_empty() {
    let f = fixture("chat").await;
    let reply = ask(&f.client, &request(vec![user("hi")], vec![]))
        .await
        .0
        .unwrap();
    assert_eq!(reply.text(), "(the script is empty)");
    f.server.set_fallback(Reply::text("something else"));
    let reply = ask(&f.client, &request(vec![user("hi")], vec![]))
        .await
        .0
        .unwrap();
    assert_eq!(reply.text(), "something else");
}

#[tokio::test]
async fn a_model_address_that_is_not_a_url_calls_no_model_and_names_the_fix() {
    let home = tempfile::tempdir().unwrap();
    let config = kotoba::config::Config::for_home(
        home.path(),
        &[
            ("KOTOBA_LLM_BASE_URL", "localhost:11434/v1"),
            ("OPENAI_API_KEY", "sk-test"),
        ],
    );
    assert!(kotoba::app::missing_setup(&config).is_some_and(|m| m.contains("KOTOBA_LLM_BASE_URL")));
    let client = OpenAiClient::new(config);
    let req = ModelRequest {
        system: "s".into(),
        items: vec![user("hello")].into(),
        tools: Vec::new(),
        settings: None,
    };
    let (result, deltas) = ask(&client, &req).await;
    match result {
        Err(LlmError::Connect(why)) => assert!(why.contains("KOTOBA_LLM_BASE_URL"), "{why}"),
        other => panic!("expected a refusal before any call: {other:?}"),
    }
    assert!(deltas.is_empty());
}
