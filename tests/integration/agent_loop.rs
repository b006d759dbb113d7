//! The agent loop against a loopback mock of the model APIs speaking the
//! real wire formats: what the *next* request carries, retries, stream
//! errors, truncation, the OpenAI format, the turn limit, cancellation, and
//! the scheduling of tool calls (overlap, early start) shown by event order.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::{Arc, Mutex};

use common::mock_model::{MockModel, MockResponse, Part};
use common::test_tools::{GetStockPrice, GetWeather, Log, Mutate, Rendezvous, Signal, WaitForCancel};
use common::turns::{event, message_end, message_start, tool_block_in_pieces};
use common::{fixture, messages_json, render_events, request, run_agent, turns, workspace};
use serde_json::{json, Value};
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::openai::OpenAiProvider;
use tandem::agent::scripted::ScriptedProvider;
use tandem::agent::{RunEvent, RunOutcome, RunRequest, RunStatus};
use tandem::tools::{Executor, ToolKind, ToolRegistry};
use tokio::sync::Notify;

fn anthropic(mock: &MockModel) -> AnthropicProvider {
    AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap()
}

fn executor(registry: ToolRegistry) -> Executor {
    Executor::new(registry).with_results_dir(None)
}

/// Run `prompt` in a throwaway workspace with these tools, against the
/// Anthropic provider on `mock`.
async fn run_on(mock: &MockModel, registry: ToolRegistry, prompt: &str) -> (RunOutcome, Vec<RunEvent>) {
    let (_dir, ctx) = workspace();
    run_agent(&anthropic(mock), &executor(registry), ctx, request(prompt)).await
}

fn new_log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

#[tokio::test]
async fn next_request_carries_tool_results_with_matching_ids() {
    // Text then two tool calls (whose input misses the required field), then
    // a plain answer. The Anthropic SDK recording has no final blank line.
    let mock = MockModel::start(vec![
        MockResponse::sse(&fixture("anthropic/SYNTHESIZED_text_then_two_tool_use.sse")),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let (outcome, events) = run_on(&mock, ToolRegistry::builtin(), "read both").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.text, "Hello there!");
    assert_eq!((outcome.turns, outcome.usage.input_tokens, outcome.usage.output_tokens), (2, 423, 93));

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!((first.method.as_str(), first.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(first.header("x-api-key"), Some("test-key"));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.body["stream"], json!(true));
    assert_eq!(first.body["model"], json!("claude-test"));
    assert!(first.body["system"][0]["text"].as_str().unwrap().contains("You are Tandem"));
    let tool_names: Vec<&str> = first.body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(tool_names.contains(&"read_file") && tool_names.contains(&"edit_file"), "{tool_names:?}");

    expect_test::expect![[r#"
        [
          {
            "role": "user",
            "content": [
              {
                "type": "text",
                "text": "read both"
              }
            ]
          },
          {
            "role": "assistant",
            "content": [
              {
                "type": "text",
                "text": "I'll read both files first."
              },
              {
                "type": "tool_use",
                "id": "toolu_synth_A",
                "name": "read_file",
                "input": {
                  "path": "src/main.rs"
                }
              },
              {
                "type": "tool_use",
                "id": "toolu_synth_B",
                "name": "read_file",
                "input": {
                  "path": "Cargo.toml"
                }
              }
            ]
          },
          {
            "role": "user",
            "content": [
              {
                "type": "tool_result",
                "tool_use_id": "toolu_synth_A",
                "content": "Invalid input for read_file: missing field \"file_path\"",
                "is_error": true
              },
              {
                "type": "tool_result",
                "tool_use_id": "toolu_synth_B",
                "content": "Invalid input for read_file: missing field \"file_path\"",
                "is_error": true,
                "cache_control": {
                  "type": "ephemeral"
                }
              }
            ]
          }
        ]"#]]
    .assert_eq(&messages_json(&requests[1].body));

    expect_test::expect![[r#"
        {"type":"text","text":"I'll read "}
        {"type":"text","text":"both files first."}
        {"type":"tool_call","id":"toolu_synth_A","name":"read_file","input":{"path":"src/main.rs"},"kind":{"type":"other"},"summary":""}
        {"type":"tool_call","id":"toolu_synth_B","name":"read_file","input":{"path":"Cargo.toml"},"kind":{"type":"other"},"summary":""}
        {"type":"status","turn":1,"usage":{"input_tokens":412,"output_tokens":87}}
        {"type":"tool_result","id":"toolu_synth_A","is_error":true,"content":"Invalid input for read_file: missing field \"file_path\""}
        {"type":"tool_result","id":"toolu_synth_B","is_error":true,"content":"Invalid input for read_file: missing field \"file_path\""}
        {"type":"text","text":"Hello"}
        {"type":"text","text":" there"}
        {"type":"text","text":"!"}
        {"type":"status","turn":2,"usage":{"input_tokens":423,"output_tokens":93}}
        {"type":"end","status":"completed","text":"Hello there!","usage":{"input_tokens":423,"output_tokens":93}}"#]]
    .assert_eq(&render_events(&events));
}

#[tokio::test]
async fn successful_results_go_back_without_is_error() {
    let mock = MockModel::start(vec![
        MockResponse::sse(&fixture("anthropic/verbatim_text_then_one_tool_use.sse")),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let mut registry = ToolRegistry::default();
    registry.register(common::test_tools::GetWeatherLower);
    let (outcome, _) = run_on(&mock, registry, "weather?").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let body = &mock.requests()[1].body;
    assert_eq!(
        body["messages"][2]["content"],
        json!([{"type": "tool_result", "tool_use_id": "toolu_01NRLabsLyVHZPKxbKvkfSMn", "content": "get_weather got {\"location\":\"Paris\"}", "is_error": false, "cache_control": {"type": "ephemeral"}}])
    );
}

#[tokio::test]
async fn split_json_deltas_ping_anywhere_and_tiny_reads() {
    let input = json!({"name": "caf\u{e9} \u{1F600}", "partner": null});
    let mut body = String::new();
    for piece in [message_start(), tool_block_in_pieces(0, "toolu_1", "rendezvous", &input, 1), message_end("tool_use")] {
        // A ping between every event.
        for one in piece.split_inclusive("\n\n") {
            body += one;
            body += &event("ping", json!({"type": "ping"}));
        }
    }
    let mock = MockModel::start(vec![MockResponse::sse(&body).in_pieces(3), turns::text("ok")]).await;
    let log = new_log();
    let mut registry = ToolRegistry::default();
    registry.register(Rendezvous::new(log.clone()));
    let (outcome, events) = run_on(&mock, registry, "go").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert!(events.contains(&RunEvent::ToolCall { id: "toolu_1".into(), name: "rendezvous".into(), input: input.clone(), kind: ToolKind::Other, summary: "caf\u{e9} \u{1F600}".into() }), "{events:?}");
    assert_eq!(mock.requests()[1].body["messages"][2]["content"][0]["content"], json!("caf\u{e9} \u{1F600} ran"));
}

const OVERLOADED: &str = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test]
async fn overloaded_529_is_retried_then_succeeds() {
    let mock = MockModel::start(vec![
        MockResponse::error(529, OVERLOADED).header("retry-after", "0"),
        MockResponse::error(503, "upstream unavailable"),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let (outcome, events) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(mock.requests().len(), 3);
    expect_test::expect![[r#"
        retry attempt=2 reason=Anthropic is overloaded (529). The server said: Overloaded
        retry attempt=3 reason=Anthropic had a server error (503). The server said: upstream unavailable
        {"type":"text","text":"Hello"}
        {"type":"text","text":" there"}
        {"type":"text","text":"!"}
        {"type":"status","turn":1,"usage":{"input_tokens":11,"output_tokens":6}}
        {"type":"end","status":"completed","text":"Hello there!","usage":{"input_tokens":11,"output_tokens":6}}"#]]
    .assert_eq(&render_events(&events));
}

#[tokio::test]
async fn a_connection_reset_is_retried() {
    let mock = MockModel::start(vec![MockResponse::connection_reset(), MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let (outcome, events) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Hello there!"));
    assert_eq!(mock.requests().len(), 2);
    assert!(matches!(&events[0], RunEvent::Retry { attempt: 2, reason, .. } if reason.starts_with("cannot reach the model API")), "{events:?}");
}

#[tokio::test]
async fn unauthorized_401_is_not_retried_and_names_the_key() {
    let mock = MockModel::start(vec![
        MockResponse::error(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let (outcome, _) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    expect_test::expect!["Anthropic rejected the API key (401 Unauthorized). Check ANTHROPIC_API_KEY. The server said: invalid x-api-key"]
        .assert_eq(&outcome.text);
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn unknown_model_404_is_not_retried() {
    let mock = MockModel::start(vec![MockResponse::error(
        404,
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-test"}}"#,
    )])
    .await;
    let (outcome, _) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.text.contains("unknown model \"claude-test\"") && outcome.text.contains("TANDEM_MODEL"), "{}", outcome.text);
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn mid_stream_error_event_voids_the_attempt_and_retries() {
    let mock = MockModel::start(vec![
        MockResponse::sse(&fixture("anthropic/SYNTHESIZED_mid_stream_overloaded.sse")),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let (outcome, events) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Hello there!"));
    expect_test::expect![[r#"
        {"type":"text","text":"Let me"}
        retry attempt=2 reason=the model API reported an error (overloaded_error): Overloaded
        {"type":"text","text":"Hello"}
        {"type":"text","text":" there"}
        {"type":"text","text":"!"}
        {"type":"status","turn":1,"usage":{"input_tokens":11,"output_tokens":6}}
        {"type":"end","status":"completed","text":"Hello there!","usage":{"input_tokens":11,"output_tokens":6}}"#]]
    .assert_eq(&render_events(&events));
}

#[tokio::test]
async fn a_mid_stream_error_that_is_not_retryable_fails_the_run() {
    let body = message_start() + &event("error", json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages: roles must alternate"}}));
    let mock = MockModel::start(vec![MockResponse::sse(&body)]).await;
    let (outcome, _) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(outcome.text, "the model API reported an error (invalid_request_error): messages: roles must alternate");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn truncated_stream_is_retried_and_finally_fails() {
    // Everything but message_stop: a cut connection, five times (1 + 4 retries).
    let full = fixture("anthropic/verbatim_basic_text.sse");
    let cut = &full[..full.find("event: message_stop").unwrap()];
    let mock = MockModel::start((0..6).map(|_| MockResponse::sse(cut)).collect()).await;
    let (outcome, events) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(outcome.text, "the model's response was cut off: the stream ended without message_stop (gave up after 5 attempts)");
    assert_eq!(mock.requests().len(), 5);
    assert_eq!(events.iter().filter(|e| matches!(e, RunEvent::Retry { .. })).count(), 4);
}

#[tokio::test]
async fn truncated_stream_then_success() {
    let full = fixture("anthropic/verbatim_basic_text.sse");
    let cut = &full[..full.find("\"text\":\" there\"").unwrap()];
    let mock = MockModel::start(vec![MockResponse::sse(cut), MockResponse::sse(&full)]).await;
    let (outcome, _) = run_on(&mock, ToolRegistry::default(), "hi").await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Hello there!"));
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn tool_input_cut_off_by_max_tokens_goes_back_as_an_error_result() {
    let mock = MockModel::start(vec![
        MockResponse::sse(&fixture("anthropic/verbatim_incomplete_partial_json.sse")),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let (outcome, _) = run_on(&mock, ToolRegistry::builtin(), "taxes").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let body = &mock.requests()[1].body;
    assert_eq!(body["messages"][1]["content"][1], json!({"type": "tool_use", "id": "toolu_01EKqbqmZrGRXy18eN7m9kvY", "name": "make_file", "input": {}}));
    expect_test::expect![[r#"
        [
          {
            "type": "tool_result",
            "tool_use_id": "toolu_01EKqbqmZrGRXy18eN7m9kvY",
            "content": "Tool call not executed: your response hit the max_tokens limit while writing the input for make_file (149 bytes received, incomplete JSON). Send the call again with a smaller input: for a large file, write a first part with write_file and add the rest with edit_file.",
            "is_error": true,
            "cache_control": {
              "type": "ephemeral"
            }
          }
        ]"#]]
    .assert_eq(&serde_json::to_string_pretty(&body["messages"][2]["content"]).unwrap());
}

/// A request naming a model (a custom sub-agent's) asks the
/// OpenAI-compatible server for it; one naming none asks for the
/// provider's own.
#[tokio::test]
async fn openai_asks_for_the_requests_model_else_its_own() {
    use tandem::agent::provider::{ModelRequest, Provider};
    let answer = || MockResponse::sse(&fixture("openai/verbatim_text_with_logprobs.sse"));
    let mock = MockModel::start(vec![answer(), answer()]).await;
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(format!("{}/v1", mock.url), "gpt-test")).unwrap();
    let (events, _ignored) = tokio::sync::mpsc::unbounded_channel();
    let messages = [tandem::agent::provider::Message::user_text("hi")];
    let sub_agent = ModelRequest { model: Some("qwen3:0.6b"), system: "s", messages: &messages, tools: &[] };
    provider.stream(&sub_agent, &events).await.unwrap();
    provider.stream(&ModelRequest { model: None, ..sub_agent }, &events).await.unwrap();
    let models: Vec<Value> = mock.requests().iter().map(|r| r.body["model"].clone()).collect();
    assert_eq!(models, [json!("qwen3:0.6b"), json!("gpt-test")]);
}

#[tokio::test]
async fn openai_two_parallel_tool_calls_and_tool_messages() {
    let mock = MockModel::start(vec![
        MockResponse::sse(&fixture("openai/verbatim_two_parallel_tool_calls.sse")),
        MockResponse::sse(&fixture("openai/verbatim_text_with_logprobs.sse")),
    ])
    .await;
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(format!("{}/v1", mock.url), "gpt-test")).unwrap();
    let mut registry = ToolRegistry::default();
    registry.register(GetWeather);
    registry.register(GetStockPrice);
    let (_dir, ctx) = workspace();
    let (outcome, _) = run_agent(&provider, &executor(registry), ctx, request("weather and stocks")).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Foo!"));
    assert_eq!((outcome.usage.input_tokens, outcome.usage.output_tokens), (158, 62));
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    assert_eq!(requests[0].body["stream_options"], json!({"include_usage": true}));
    assert_eq!(requests[0].body["tools"][0]["type"], json!("function"));
    assert_eq!(requests[0].body["tools"][0]["function"]["name"], json!("GetWeatherArgs"));
    let messages = &requests[1].body["messages"];
    expect_test::expect![[r#"
        [
          {
            "role": "user",
            "content": "weather and stocks"
          },
          {
            "role": "assistant",
            "content": null,
            "tool_calls": [
              {
                "id": "call_JMW1whyEaYG438VE1OIflxA2",
                "type": "function",
                "function": {
                  "name": "GetWeatherArgs",
                  "arguments": "{\"city\":\"Edinburgh\",\"country\":\"GB\",\"units\":\"c\"}"
                }
              },
              {
                "id": "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "type": "function",
                "function": {
                  "name": "get_stock_price",
                  "arguments": "{\"ticker\":\"AAPL\",\"exchange\":\"NASDAQ\"}"
                }
              }
            ]
          },
          {
            "role": "tool",
            "tool_call_id": "call_JMW1whyEaYG438VE1OIflxA2",
            "content": "GetWeatherArgs got {\"city\":\"Edinburgh\",\"country\":\"GB\",\"units\":\"c\"}"
          },
          {
            "role": "tool",
            "tool_call_id": "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            "content": "get_stock_price got {\"ticker\":\"AAPL\",\"exchange\":\"NASDAQ\"}"
          }
        ]"#]]
    .assert_eq(&serde_json::to_string_pretty(&json!(messages.as_array().unwrap()[1..])).unwrap());
}

#[tokio::test]
async fn openai_error_object_in_the_stream_is_retried() {
    let error = "data: {\"error\": {\"message\": \"The server had an error\", \"type\": \"server_error\"}}\n\n";
    let mock = MockModel::start(vec![MockResponse::sse(error), MockResponse::sse(&fixture("openai/verbatim_text_with_logprobs.sse"))]).await;
    let mut config = HttpProviderConfig::for_tests(&mock.url, "gpt-test");
    config.api_key = None;
    let provider = OpenAiProvider::new(config).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(ToolRegistry::default()), ctx, request("hi")).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Foo!"));
    assert!(matches!(&events[0], RunEvent::Retry { reason, .. } if reason.contains("server_error")), "{events:?}");
    // A local server needs no key: no Authorization header is sent.
    assert_eq!(mock.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn openai_stream_without_done_is_truncated() {
    let full = fixture("openai/verbatim_text_with_logprobs.sse");
    let cut = full.replace("data: [DONE]", "");
    let mock = MockModel::start(vec![MockResponse::sse(&cut), MockResponse::sse(&full)]).await;
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(&mock.url, "gpt-test")).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(ToolRegistry::default()), ctx, request("hi")).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Foo!"));
    assert!(events.iter().any(|e| matches!(e, RunEvent::Retry { reason, .. } if reason.contains("[DONE]"))), "{events:?}");
}

fn scripted(json: Value) -> ScriptedProvider {
    ScriptedProvider::from_json(&json.to_string(), "test script").unwrap()
}

#[tokio::test]
async fn max_turns_answers_calls_past_the_limit_without_running_them() {
    let provider = scripted(json!({"turns": [
        {"text": "one", "tool_calls": [{"name": "mutate", "input": {"name": "first"}}]},
        {"text": "two", "tool_calls": [{"name": "mutate", "input": {"name": "second"}}]},
        {"text": "three"}
    ]}));
    let log = new_log();
    let mut registry = ToolRegistry::default();
    registry.register(Mutate { log: log.clone() });
    let (_dir, ctx) = workspace();
    let request = RunRequest { max_turns: Some(2), ..request("go") };
    let (outcome, events) = run_agent(&provider, &executor(registry), ctx, request).await;
    assert_eq!((outcome.status, outcome.turns), (RunStatus::TurnLimit, 2));
    assert_eq!(*log.lock().unwrap(), vec!["start first", "end first"]);
    let last_result = events.iter().rev().find(|e| matches!(e, RunEvent::ToolResult { .. })).unwrap();
    assert_eq!(
        *last_result,
        RunEvent::ToolResult { id: "toolu_script_2_1".into(), is_error: true, content: "Tool call not executed: turn limit reached".into(), effects: Vec::new(), edit: None }
    );
    assert!(matches!(events.last(), Some(RunEvent::End { status: RunStatus::TurnLimit, .. })));
}

#[tokio::test]
async fn safe_calls_overlap_unsafe_calls_run_alone_results_in_call_order() {
    let provider = scripted(json!({"turns": [
        {"tool_calls": [
            {"name": "rendezvous", "input": {"name": "A", "partner": "B"}},
            {"name": "rendezvous", "input": {"name": "B", "partner": "A"}},
            {"name": "mutate", "input": {"name": "W"}},
            {"name": "rendezvous", "input": {"name": "C"}}
        ]},
        {"text": "done"}
    ]}));
    let log = new_log();
    let mut registry = ToolRegistry::default();
    registry.register(Rendezvous::new(log.clone()));
    registry.register(Mutate { log: log.clone() });
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(registry), ctx, request("go")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let log = log.lock().unwrap().clone();
    // A and B each waited for the other to start: they overlapped. W ran
    // alone after both ended; C only after W.
    let mut head = log[..4].to_vec();
    head.sort();
    assert_eq!(head, vec!["end A", "end B", "start A", "start B"], "{log:?}");
    assert_eq!(log[4..], ["start W", "end W", "start C", "end C"], "{log:?}");
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult { id, content, .. } => Some(format!("{id}: {content}")),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["toolu_script_1_1: A met B", "toolu_script_1_2: B met A", "toolu_script_1_3: W done", "toolu_script_1_4: C ran"]);
}

#[tokio::test]
async fn at_most_ten_safe_calls_run_at_once() {
    // Eleven safe calls, each waiting until the next one has started: with
    // no limit all eleven start at once; with the limit, the eleventh starts
    // only after the first has ended, and every call still meets its partner.
    let calls: Vec<Value> = (0..11)
        .map(|i| json!({"name": "rendezvous", "input": {"name": format!("R{i}"), "partner": if i < 10 { Some(format!("R{}", i + 1)) } else { None }}}))
        .collect();
    let provider = scripted(json!({"turns": [{"tool_calls": calls}, {"text": "done"}]}));
    let log = new_log();
    let mut registry = ToolRegistry::default();
    registry.register(Rendezvous::new(log.clone()));
    let (_dir, ctx) = workspace();
    let (_, events) = run_agent(&provider, &executor(registry), ctx, request("go")).await;
    let log = log.lock().unwrap().clone();
    let mut running = 0usize;
    let mut most = 0usize;
    for entry in &log {
        if entry.starts_with("start") {
            running += 1;
        } else {
            running -= 1;
        }
        most = most.max(running);
    }
    assert_eq!(most, 10, "{log:?}");
    let position = |needle: &str| log.iter().position(|e| e == needle).unwrap();
    assert!(position("start R10") > position("end R0"), "{log:?}");
    let met = events.iter().filter(|e| matches!(e, RunEvent::ToolResult { content, .. } if content.contains(" met "))).count();
    assert_eq!(met, 10, "{events:?}");
}

#[tokio::test]
async fn a_safe_call_starts_before_message_stop() {
    // The mock holds the stream open after the first tool block until the
    // tool has run; only then does it send the rest and message_stop.
    let log = new_log();
    let notify = Arc::new(Notify::new());
    let first = message_start() + &tool_block_in_pieces(0, "toolu_early", "signal", &json!({"name": "early"}), 4);
    let rest = tool_block_in_pieces(1, "toolu_late", "signal", &json!({"name": "late"}), 4) + &message_end("tool_use");
    let mock = MockModel::start_with_log(
        vec![
            MockResponse::sse_parts(vec![Part::Bytes(first.into_bytes()), Part::WaitFor(notify.clone(), "message_stop held"), Part::Bytes(rest.into_bytes())]),
            turns::text("done"),
        ],
        log.clone(),
    )
    .await;
    let mut registry = ToolRegistry::default();
    registry.register(Signal { log: log.clone(), notify });
    let (outcome, _) = run_on(&mock, registry, "go").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(
        mock.log(),
        ["mock: request 1", "tool: signal early", "mock: message_stop held released", "tool: signal late", "mock: request 2"]
    );
}

#[tokio::test]
async fn cancel_during_the_stream_closes_the_connection() {
    let head = message_start()
        + &event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Thinking"}}));
    let mock = MockModel::start(vec![MockResponse::sse_parts(vec![Part::Bytes(head.into_bytes()), Part::Hang])]).await;
    let provider = anthropic(&mock);
    let executor = executor(ToolRegistry::default());
    let (_dir, ctx) = workspace();
    let cancel = ctx.cancel.clone();
    let (tx, mut rx) = tandem::agent::event_channel();
    let run = tandem::agent::run(&provider, &executor, ctx, request("hi"), tx);
    let watch = async {
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            if matches!(event, RunEvent::Text { .. }) {
                cancel.cancel();
            }
            seen.push(event);
        }
        seen
    };
    let (outcome, events) = tokio::join!(run, watch);
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert!(matches!(events.last(), Some(RunEvent::End { status: RunStatus::Cancelled, .. })));
    // The mock sees the connection close once the run dropped the stream.
    let closed = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            if mock.log().iter().any(|l| l == "mock: client closed") {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(closed.is_ok(), "{:?}", mock.log());
}

#[tokio::test]
async fn cancel_during_a_tool_reaches_the_tool() {
    let provider = scripted(json!({"turns": [{"tool_calls": [{"name": "wait_for_cancel"}]}, {"text": "never"}]}));
    let log = new_log();
    let mut registry = ToolRegistry::default();
    registry.register(WaitForCancel { log: log.clone() });
    let executor = executor(registry);
    let (_dir, ctx) = workspace();
    let cancel = ctx.cancel.clone();
    let (tx, mut rx) = tandem::agent::event_channel();
    let run = tandem::agent::run(&provider, &executor, ctx, request("go"), tx);
    let watch = async {
        while let Some(event) = rx.recv().await {
            if matches!(event, RunEvent::ToolCall { .. }) {
                cancel.cancel();
            }
        }
    };
    let (outcome, ()) = tokio::join!(run, watch);
    assert_eq!(outcome.status, RunStatus::Cancelled);
    // The run waited for the tool to stop before returning.
    assert_eq!(*log.lock().unwrap(), ["tool: waiting", "tool: cancelled=true"]);
    assert_eq!(provider.turns_used(), 1);
}

#[cfg(unix)]
#[tokio::test]
async fn cancel_during_a_long_shell_command_leaves_no_process_behind() {
    let provider = scripted(json!({"turns": [
        {"tool_calls": [{"name": "run_shell", "input": {"command": "sleep 300 & echo $! > sleeper.pid; wait"}}]},
        {"text": "never"}
    ]}));
    let executor = executor(ToolRegistry::builtin());
    let (dir, ctx) = workspace();
    let cancel = ctx.cancel.clone();
    let pid_file = dir.path().join("sleeper.pid");
    let (tx, mut rx) = tandem::agent::event_channel();
    let run = tandem::agent::run(&provider, &executor, ctx, request("sleep"), tx);
    let watch = async {
        let mut sleeper = None;
        let mut results = Vec::new();
        while let Some(event) = rx.recv().await {
            match event {
                RunEvent::ToolCall { .. } => {
                    sleeper = Some(common::wait_for_pid(&pid_file).await);
                    cancel.cancel();
                }
                RunEvent::ToolResult { content, .. } => results.push(content),
                _ => {}
            }
        }
        (sleeper, results)
    };
    let (outcome, (sleeper, results)) = tokio::join!(run, watch);
    assert_eq!(outcome.status, RunStatus::Cancelled);
    let sleeper = sleeper.expect("the shell started");
    assert!(common::wait_until_dead(sleeper).await, "the shell's child {sleeper} is still running");
    // The call's own account of what happened still reaches the front end.
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].starts_with("Command cancelled"), "{results:?}");
    assert_eq!(provider.turns_used(), 1);
}

#[tokio::test]
async fn a_fatal_tool_error_ends_the_run_but_a_model_error_does_not() {
    let provider = scripted(json!({"turns": [
        {"tool_calls": [{"name": "nope"}]},
        {"tool_calls": [{"name": "broken"}]},
        {"text": "never"}
    ]}));
    let mut registry = ToolRegistry::default();
    registry.register(common::test_tools::Broken);
    let (_dir, ctx) = workspace();
    let (outcome, _) = run_agent(&provider, &executor(registry), ctx, request("go")).await;
    assert_eq!((outcome.status, outcome.turns), (RunStatus::Failed, 2));
    assert_eq!(outcome.text, "A tool failed fatally: the ledger is corrupt");
}

#[tokio::test]
async fn scripted_model_past_its_end_is_a_provider_error() {
    let provider = scripted(json!({"turns": [{"tool_calls": [{"name": "nope"}]}]}));
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(ToolRegistry::default()), ctx, request("go")).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.text.contains("no turn left"), "{}", outcome.text);
    assert!(events.contains(&RunEvent::ToolResult { id: "toolu_script_1_1".into(), is_error: true, content: "Unknown tool: nope. Available tools: ".into(), effects: Vec::new(), edit: None }));
}
