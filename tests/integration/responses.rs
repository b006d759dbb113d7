//! The `openai-responses` provider through the real `tandem` binary
//! against a loopback Responses API that refuses malformed input as the
//! real one does (`common::mock_responses`): the tool loop with its
//! reasoning replayed statelessly, a stream cut before
//! `response.completed`, and a 400 shown with the API's message and not
//! retried.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::Stdio;

use common::fixture;
use common::mock_responses::{invalid_request, ResponsesMock, Turn};
use serde_json::{json, Value};
use tokio::process::Command;

/// `tandem` in `dir`, with no model variables from the machine running
/// the tests, and a home of its own.
fn tandem(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command.env("XDG_DATA_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"));
    command.env("HOME", dir.join("home"));
    command
}

/// Through the environment, as `TANDEM_PROVIDER` and OpenAI's variables.
fn against(mut command: Command, mock: &ResponsesMock) -> Command {
    command
        .env("TANDEM_PROVIDER", "openai-responses")
        .env("OPENAI_BASE_URL", &mock.url)
        .env("OPENAI_API_KEY", "sk-test-responses")
        .env("TANDEM_MODEL", "gpt-5.5");
    command
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The provider chosen in the user's settings file: a reasoning model
/// reads a file; the summary is shown as thinking; the next request
/// carries, in order, the prompt, the reasoning item with its encrypted
/// content, the call and its output, stateless and under the same cache
/// key. (The mock would refuse the second request without the reasoning
/// item, and leaves `encrypted_content` out unless `include` asks for it.)
#[tokio::test]
async fn a_tool_loop_replays_its_reasoning_statelessly() {
    let mock = ResponsesMock::start(vec![
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_function_call.sse")),
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_text.sse")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi there\n").unwrap();
    let settings = dir.path().join("home/.tandem");
    std::fs::create_dir_all(&settings).unwrap();
    let user_settings = json!({"provider": "openai-responses", "baseUrl": mock.url, "model": "gpt-5.5"});
    std::fs::write(settings.join("settings.json"), user_settings.to_string()).unwrap();
    let mut command = tandem(dir.path());
    command.env("OPENAI_API_KEY", "sk-test-responses").args(["ask", "--json", "what does hello.txt say?"]);
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let outline: Vec<String> = events(&output.stdout)
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            // The reason names the settings file, under the run's directory.
            "provider" => format!("provider {} {} {}", e["provider"], e["model"], e["reason"].as_str().unwrap_or_default().replace(&dir.path().display().to_string(), "DIR")),
            // The read's absolute path changes with each run's directory.
            "tool_call" => format!("tool_call {} {} {}", e["id"], e["name"], e["input"]),
            "tool_result" => format!("tool_result {} is_error={}", e["id"], e["is_error"]),
            "end" => format!("end {} {}", e["status"], e["text"]),
            _ => e.to_string(),
        })
        .collect();
    expect_test::expect![[r#"
        provider "openai-responses" "gpt-5.5" provider is openai-responses ("provider" in DIR/home/.tandem/settings.json)
        {"type":"thinking","text":"**Reading the file**\n\nThe user wants hello.txt; read it first."}
        tool_call "call_synth_read" "read_file" {"file_path":"hello.txt"}
        {"type":"status","turn":1,"usage":{"input_tokens":812,"output_tokens":74,"cache_read_input_tokens":768}}
        tool_result "call_synth_read" is_error=false
        {"type":"text","text":"hello.txt says:"}
        {"type":"text","text":" hi there"}
        {"type":"status","turn":2,"usage":{"input_tokens":1713,"output_tokens":96,"cache_read_input_tokens":1664}}
        end "completed" "hello.txt says: hi there""#]].assert_eq(&outline.join("\n"));

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/responses");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test-responses"));
    let (first, next) = (&requests[0].body, &requests[1].body);
    for body in [first, next] {
        assert_eq!((&body["store"], &body["stream"], &body["include"]), (&json!(false), &json!(true), &json!(["reasoning.encrypted_content"])), "{body}");
        assert_eq!(body["reasoning"], json!({"summary": "auto"}));
    }
    assert!(first["prompt_cache_key"].as_str().unwrap().starts_with("tandem-"));
    assert_eq!(first["prompt_cache_key"], next["prompt_cache_key"], "one thread, one cache key");
    let read_file = first["tools"].as_array().unwrap().iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!((read_file["type"].as_str(), read_file["parameters"]["type"].as_str()), (Some("function"), Some("object")));
    let mut input = next["input"].as_array().unwrap().clone();
    // The tool's output, checked on its own: it numbers the lines.
    let output_text = input[3]["output"].take();
    assert!(output_text.as_str().unwrap().contains("hi there"), "{output_text}");
    expect_test::expect![[r#"
        [
          {
            "type": "message",
            "role": "user",
            "content": [
              {
                "type": "input_text",
                "text": "what does hello.txt say?"
              }
            ]
          },
          {
            "id": "rs_synth_1",
            "type": "reasoning",
            "encrypted_content": "gAAAAABsynth-encrypted-reasoning-1==",
            "summary": [
              {
                "type": "summary_text",
                "text": "**Reading the file**\n\nThe user wants hello.txt; read it first."
              }
            ]
          },
          {
            "type": "function_call",
            "call_id": "call_synth_read",
            "name": "read_file",
            "arguments": "{\"file_path\":\"hello.txt\"}"
          },
          {
            "type": "function_call_output",
            "call_id": "call_synth_read",
            "output": null
          }
        ]"#]].assert_eq(&serde_json::to_string_pretty(&input).unwrap());
}

/// Every attempt's stream stops before `response.completed`: the run fails
/// saying so (after the retries a cut stream gets), never a silent success.
#[tokio::test]
async fn a_stream_cut_before_response_completed_fails_the_run() {
    let whole = fixture("responses/SYNTHESIZED_reasoning_then_text.sse");
    let cut = whole[..whole.find("event: response.completed").unwrap()].to_string();
    let mock = ResponsesMock::start((0..5).map(|_| Turn::Stream(cut.clone())).collect()).await;
    let dir = tempfile::tempdir().unwrap();
    let output = against(tandem(dir.path()), &mock).args(["ask", "--json", "hello"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stdout));
    let events = events(&output.stdout);
    let end = events.last().unwrap();
    assert_eq!(end["status"], "failed", "{end}");
    let text = end["text"].as_str().unwrap();
    assert!(text.contains("cut off") && text.contains("without response.completed"), "{text}");
    assert_eq!(mock.requests().len(), 5, "a cut stream is retried like the other providers', then given up");
}

/// A 400 is the API's own message, once: the same request would fail the
/// same way, so it is not sent again.
#[tokio::test]
async fn a_400_is_shown_with_the_api_message_and_not_retried() {
    let message = "Unsupported parameter: 'max_output_tokens' is not supported with this model.";
    let mock = ResponsesMock::start(vec![
        Turn::Error(400, invalid_request(message, Some("max_output_tokens"))),
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_text.sse")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let output = against(tandem(dir.path()), &mock).args(["ask", "hello"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("400 Bad Request") && stderr.contains(message), "{stderr}");
    assert_eq!(mock.requests().len(), 1, "never retried");
}

/// The mock refuses what the real API refuses, so the tests above could
/// fail: an output with no call, and a call without its reasoning item.
#[tokio::test]
async fn the_mock_refuses_malformed_input_like_the_api() {
    let mock = ResponsesMock::start(vec![Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_function_call.sse"))]).await;
    let client = reqwest::Client::new();
    let post = |body: Value| client.post(format!("{}/responses", mock.url)).json(&body).send();
    let orphan = json!({"model": "m", "input": [{"type": "function_call_output", "call_id": "call_x", "output": "hi"}]});
    let response = post(orphan).await.unwrap();
    assert_eq!(response.status(), 400);
    assert!(response.text().await.unwrap().contains("No tool call found for function call output with call_id call_x."));

    let served = post(json!({"model": "m", "input": [], "include": ["reasoning.encrypted_content"]})).await.unwrap().text().await.unwrap();
    assert!(served.contains("gAAAAABsynth-encrypted-reasoning-1=="));
    let without_reasoning = json!({"model": "m", "input": [
        {"type": "function_call", "call_id": "call_synth_read", "name": "read_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_synth_read", "output": "hi"},
    ]});
    let response = post(without_reasoning).await.unwrap();
    assert_eq!(response.status(), 400);
    let text = response.text().await.unwrap();
    assert!(text.contains("Item 'fc_synth_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_synth_1'."), "{text}");
}

/// A 429 (and a 5xx) is retried, as on the other providers, and the run
/// goes on with the answer.
#[tokio::test]
async fn a_429_and_a_500_are_retried() {
    let rate_limited = json!({"error": {"message": "Rate limit reached for gpt-5.5.", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}});
    let mock = ResponsesMock::start(vec![
        Turn::Error(429, rate_limited.to_string()),
        Turn::Error(500, json!({"error": {"message": "The server had an error.", "type": "server_error"}}).to_string()),
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_text.sse")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let output = against(tandem(dir.path()), &mock).args(["ask", "--json", "hello"]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    let events = events(&output.stdout);
    let retries: Vec<&str> = events.iter().filter(|e| e["type"] == "retry").map(|e| e["reason"].as_str().unwrap()).collect();
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(retries[0].contains("Rate limit reached"), "{retries:?}");
    assert_eq!(events.last().unwrap()["text"], "hello.txt says: hi there");
    assert_eq!(mock.requests().len(), 3);
}

/// The reasoning items live in the saved thread: a follow-up run with
/// `--continue` (a new process, the thread read back from its file) sends
/// them again, in place.
#[tokio::test]
async fn a_continued_thread_sends_its_saved_reasoning_items_again() {
    let mock = ResponsesMock::start(vec![
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_function_call.sse")),
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_text.sse")),
        Turn::Stream(fixture("responses/SYNTHESIZED_reasoning_then_text.sse")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi there\n").unwrap();
    // A data folder of its own, so `--continue` finds this test's thread.
    let data = dir.path().join("data");
    for prompt in [vec!["ask", "what does hello.txt say?"], vec!["ask", "--continue", "and in French?"]] {
        let mut command = against(tandem(dir.path()), &mock);
        command.env("XDG_DATA_HOME", &data).args(prompt);
        let output = command.output().await.unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let input = requests[2].body["input"].as_array().unwrap();
    let outline: Vec<String> = input.iter().map(|i| format!("{} {}", i["type"].as_str().unwrap(), i["id"].as_str().or(i["call_id"].as_str()).unwrap_or("-"))).collect();
    expect_test::expect![[r#"
        message -
        reasoning rs_synth_1
        function_call call_synth_read
        function_call_output call_synth_read
        reasoning rs_synth_2
        message -
        message -"#]].assert_eq(&outline.join("\n"));
    let reasoning = input.iter().find(|i| i["id"] == "rs_synth_2").unwrap();
    assert_eq!(reasoning["encrypted_content"], "gAAAAABsynth-encrypted-reasoning-2==");
    assert_eq!(requests[0].body["prompt_cache_key"], requests[2].body["prompt_cache_key"], "the same thread, the same cache key");
}
