//! Today's models through `tandem ask`, against loopback mocks that answer
//! like the real APIs — their 400s for a body they refuse included:
//! adaptive thinking with an effort on the models that take only that, a
//! thinking budget on the ones that take a budget, an effort a model does
//! not take (refused before any request), a 400 shown with the API's words
//! and the setting that fixes it (never retried), signed thinking sent
//! back, a model the table does not know (its assumptions said), a
//! gateway's bearer token and headers (the user's settings only), and an
//! OpenAI-compatible server's reasoning sent back in its own field.

#![allow(clippy::unwrap_used)]

use std::process::Stdio;

use crate::common;
use common::mock_model::{MockModel, MockResponse, RecordedRequest};
use common::turns::{event, message_end, message_start, text, tool_block};
use serde_json::{json, Value};
use tokio::process::Command;

fn tandem(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command.env("XDG_DATA_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"));
    // No user settings of the machine's: each test's own home.
    command.env("HOME", dir.join(".home"));
    command
}

/// `tandem ask --json` against an Anthropic-shaped mock with `model`.
fn ask_anthropic(dir: &std::path::Path, mock: &MockModel, model: &str, args: &[&str]) -> Command {
    let mut command = tandem(dir);
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key").env("TANDEM_MODEL", model);
    command.args(["ask", "--json"]).args(args);
    command
}

struct Ran {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
}

async fn run(mut command: Command) -> Ran {
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let events = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Ran { code: output.status.code(), events, stderr: String::from_utf8(output.stderr).unwrap() }
}

impl Ran {
    fn of(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }
}

// ---- Anthropic's Messages API, as it answers ----

/// The models the mock's API takes adaptive thinking only on (its own list,
/// not Tandem's table, so a wrong table fails here).
const ADAPTIVE_ONLY: &[&str] = &["claude-opus-4-7", "claude-opus-5-5", "claude-sonnet-5-5", "gateway-opus"];
/// The models it takes no adaptive thinking on.
const BUDGET_ONLY: &[&str] = &["claude-sonnet-4-5", "claude-haiku-4-5"];

fn anthropic_error(message: &str) -> MockResponse {
    MockResponse::error(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).to_string())
}

/// The Messages API's checks on the thinking shape.
fn anthropic_thinking_rules(request: &RecordedRequest) -> Option<MockResponse> {
    let model = request.body["model"].as_str().unwrap_or_default();
    let thinking = request.body["thinking"]["type"].as_str();
    if ADAPTIVE_ONLY.contains(&model) && matches!(thinking, Some("enabled" | "disabled")) {
        let shape = thinking.unwrap_or_default();
        return Some(anthropic_error(&format!(
            "\"thinking.type.{shape}\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."
        )));
    }
    if BUDGET_ONLY.contains(&model) && (thinking == Some("adaptive") || request.body.get("output_config").is_some()) {
        return Some(anthropic_error("adaptive thinking and output_config.effort are not supported on this model"));
    }
    if thinking == Some("enabled") && request.body["thinking"]["budget_tokens"].as_u64().unwrap_or(0) >= request.body["max_tokens"].as_u64().unwrap_or(0) {
        return Some(anthropic_error("max_tokens must be greater than thinking.budget_tokens"));
    }
    None
}

/// A thinking block (summarized text, signed), then a read_file call.
fn think_then_read() -> MockResponse {
    let thinking = event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants hello.txt; "}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "read it first."}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}))
        + &event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    let body = message_start() + &thinking + &tool_block(1, "toolu_1", "read_file", &json!({"file_path": "hello.txt"})) + &message_end("tool_use");
    MockResponse::sse(&body)
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi there\n").unwrap();
    dir
}

/// `--effort` on a model that thinks adaptively only: `thinking` adaptive
/// (asking to see the thinking), `output_config.effort`, no budget; the
/// thinking is shown, and sent back signed, before the call it led to.
#[tokio::test]
async fn effort_on_an_adaptive_model_sends_adaptive_thinking_and_the_signed_block_comes_back() {
    let mock = MockModel::start_with_rules(vec![think_then_read(), text("It says hi there.")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    let ran = run(ask_anthropic(dir.path(), &mock, "claude-opus-4-7", &["--effort", "xhigh", "read hello.txt"])).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.body["thinking"], json!({"type": "adaptive", "display": "summarized"}));
        assert_eq!(request.body["output_config"], json!({"effort": "xhigh"}));
        // The thinking counts against the limit: room for it and the answer.
        assert_eq!(request.body["max_tokens"], 32_000);
    }
    assert_eq!(ran.of("thinking")[0]["text"], "The user wants hello.txt; read it first.");
    // The assistant turn goes back with its thinking block first, exactly as signed.
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "The user wants hello.txt; read it first.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    // A 1M-window model in the table: nothing assumed.
    assert_eq!(ran.of("provider")[0]["reason"], "provider (TANDEM_PROVIDER) is anthropic");
}

/// The `effort` setting and `--effort` over it; `opus` names the current Opus.
#[tokio::test]
async fn the_effort_setting_applies_and_the_command_line_wins() {
    let mock = MockModel::start_with_rules(vec![text("a"), text("b")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".home/.tandem")).unwrap();
    std::fs::write(dir.path().join(".home/.tandem/settings.json"), json!({"effort": "low"}).to_string()).unwrap();
    let ran = run(ask_anthropic(dir.path(), &mock, "opus", &["hi"])).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let ran = run(ask_anthropic(dir.path(), &mock, "opus", &["--effort", "max", "hi"])).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let sent: Vec<(Value, Value)> = mock.requests().iter().map(|r| (r.body["model"].clone(), r.body["output_config"]["effort"].clone())).collect();
    assert_eq!(sent, [(json!("claude-opus-5-5"), json!("low")), (json!("claude-opus-5-5"), json!("max"))]);
}

/// `tandem.ask`'s `effort` (the VS Code panel's effort picker) over LSP:
/// `tandem.provider` lists the efforts each offered model takes, an asked
/// effort wins over the settings' for that run only, and one the model
/// does not take (or on a model that takes none, any) is an InvalidParams
/// error naming what it takes, with nothing sent.
#[tokio::test(flavor = "multi_thread")]
async fn lsp_ask_takes_an_effort_over_the_settings_and_refuses_a_bad_one() {
    use common::lsp_client::LspClient;
    let mock = MockModel::start_with_rules(vec![text("a"), text("b")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".home/.tandem")).unwrap();
    std::fs::write(root.join(".home/.tandem/settings.json"), json!({"effort": "low"}).to_string()).unwrap();
    let url = mock.url.clone();
    let (provider, answers) = tokio::task::spawn_blocking(move || {
        let home = root.join(".home").display().to_string();
        let data = root.join(".data").display().to_string();
        let env = [("HOME", home.as_str()), ("XDG_DATA_HOME", data.as_str()), ("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "k"), ("TANDEM_MODEL", "claude-opus-4-6")];
        let mut client = LspClient::start(&root, &env);
        let init = client.initialize(json!({}), json!({}));
        assert!(init.get("result").is_some(), "{init}");
        let provider = client.request("workspace/executeCommand", json!({"command": "tandem.provider", "arguments": []}));
        let mut answers = Vec::new();
        for effort in [json!("max"), json!("xhigh"), json!("turbo"), Value::Null] {
            let mut ask = json!({"prompt": "hi"});
            if !effort.is_null() {
                ask["effort"] = effort;
            }
            answers.push(client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [ask]})));
        }
        client.shutdown();
        // A model that takes no effort (and no effort in the settings, which
        // would stop every run on it): any effort asked is refused.
        std::fs::write(root.join(".home/.tandem/settings.json"), "{}").unwrap();
        let budget = env.map(|(k, v)| (k, if k == "TANDEM_MODEL" { "claude-sonnet-4-5" } else { v }));
        let mut client = LspClient::start(&root, &budget);
        client.initialize(json!({}), json!({}));
        let none = client.request("workspace/executeCommand", json!({"command": "tandem.provider", "arguments": []}));
        answers.push(none["result"]["efforts"].clone());
        answers.push(client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "hi", "effort": "high"}]})));
        client.shutdown();
        (provider, answers)
    })
    .await
    .unwrap();
    let efforts = &provider["result"]["efforts"];
    assert_eq!(efforts["claude-opus-4-6"], json!(["low", "medium", "high", "max"]), "{provider}");
    assert_eq!(efforts["claude-opus-5-5"], json!(["low", "medium", "high", "xhigh", "max"]), "{provider}");
    assert_eq!(answers[0]["result"]["status"], "completed", "{}", answers[0]);
    for refused in &answers[1..3] {
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    assert_eq!(answers[1]["error"]["message"], "tandem.ask: no effort \"xhigh\" for model claude-opus-4-6: choose one of low, medium, high, max");
    assert_eq!(answers[2]["error"]["message"], "tandem.ask: no effort \"turbo\" for model claude-opus-4-6: choose one of low, medium, high, max");
    assert_eq!(answers[3]["result"]["status"], "completed", "{}", answers[3]);
    assert_eq!(answers[4].get("claude-sonnet-4-5"), None, "a model that takes no effort is left out: {}", answers[4]);
    assert_eq!(answers[5]["error"]["message"], "tandem.ask: no effort \"high\" for model claude-sonnet-4-5: it takes no effort setting", "{}", answers[5]);
    let sent: Vec<Value> = mock.requests().iter().map(|r| r.body["output_config"].clone()).collect();
    assert_eq!(sent, [json!({"effort": "max"}), json!({"effort": "low"})], "the refused asks sent nothing; the last one the settings' effort");
}

/// `smallModel` (issue 50, a model per job): the built-in `explore`
/// sub-agent and a compaction summary run on it, the run itself and the
/// `general` sub-agent on the main model. The small model here takes no
/// effort (the mock refuses one on Haiku 4.5), so its requests leave the
/// session's effort out.
#[tokio::test]
async fn sub_agents_that_name_no_model_and_compaction_run_on_the_small_model() {
    let explore = common::turns::tools("", &[("toolu_explore", "agent", json!({"description": "look", "prompt": "What is in hello.txt?", "type": "explore"}))]);
    let general = common::turns::tools("", &[("toolu_general", "agent", json!({"description": "look", "prompt": "What is in hello.txt?", "type": "general"}))]);
    let mock = MockModel::start_with_rules(
        vec![explore, text("It says hi there."), general, text("Hi there, again."), text("hello.txt says hi there."), text("SUMMARY: read hello.txt."), text("Nothing else.")],
        vec![anthropic_thinking_rules],
    )
    .await;
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".home/.tandem")).unwrap();
    std::fs::write(dir.path().join(".home/.tandem/settings.json"), json!({"smallModel": "claude-haiku-4-5", "effort": "high"}).to_string()).unwrap();
    let ran = run(ask_anthropic(dir.path(), &mock, "claude-opus-4-7", &["--permission-mode", "bypassPermissions", "what is in hello.txt?"])).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    let results: Vec<&Value> = ran.of("tool_result").into_iter().filter(|r| r.get("parent").is_none()).map(|r| &r["content"]).collect();
    assert_eq!(results, [&json!("It says hi there."), &json!("Hi there, again.")]);
    let ran = run(ask_anthropic(dir.path(), &mock, "claude-opus-4-7", &["--continue", "--compact", "anything else?"])).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    assert_eq!(ran.of("compact").len(), 1, "{:?}", ran.events);
    let sent: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| {
            let system = r.body["system"].to_string();
            let job = if system.contains("sub-agent") { "sub-agent" } else if r.body.get("tools").is_none() { "summary" } else { "run" };
            format!("{job} {} {}", r.body["model"].as_str().unwrap(), r.body["output_config"]["effort"])
        })
        .collect();
    assert_eq!(
        sent,
        [
            "run claude-opus-4-7 \"high\"",
            "sub-agent claude-haiku-4-5 null",
            "run claude-opus-4-7 \"high\"",
            "sub-agent claude-opus-4-7 \"high\"",
            "run claude-opus-4-7 \"high\"",
            "summary claude-haiku-4-5 null",
            "run claude-opus-4-7 \"high\"",
        ]
    );
}

/// A budget on a model that takes one: `type: enabled` with `budget_tokens`,
/// no effort; `max_tokens` above the budget.
#[tokio::test]
async fn a_budget_on_an_older_model_sends_budget_thinking() {
    let mock = MockModel::start_with_rules(vec![text("ok")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    let mut command = ask_anthropic(dir.path(), &mock, "claude-sonnet-4-5-20250929", &["hi"]);
    command.env("TANDEM_THINKING", "2048");
    let ran = run(command).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let body = &mock.requests()[0].body;
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    assert!(body.get("output_config").is_none(), "{body}");
    assert!(body["max_tokens"].as_u64().unwrap() > 2048);
}

/// A budget on a model that thinks adaptively only is not sent as a budget
/// (the API would refuse it): the model thinks adaptively, and the run's
/// first event says so.
#[tokio::test]
async fn a_budget_on_an_adaptive_only_model_becomes_adaptive_and_the_run_says_so() {
    let mock = MockModel::start_with_rules(vec![text("ok")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    let mut command = ask_anthropic(dir.path(), &mock, "anthropic/claude-opus-4-7", &["hi"]);
    command.env("TANDEM_THINKING", "4096");
    let ran = run(command).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    assert_eq!(mock.requests()[0].body["thinking"], json!({"type": "adaptive", "display": "summarized"}));
    let reason = ran.of("provider")[0]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("thinkingBudget 4096 does not apply to claude-opus-4-7, which thinks adaptively only"), "{reason}");
}

/// An effort the model does not take: a clear error before any request.
#[tokio::test]
async fn an_effort_the_model_does_not_take_is_refused_before_any_request() {
    let mock = MockModel::start(vec![text("never")]).await;
    let dir = workspace();
    let ran = run(ask_anthropic(dir.path(), &mock, "claude-sonnet-4-5", &["--effort", "high", "hi"])).await;
    assert_ne!(ran.code, Some(0));
    assert!(ran.stderr.contains("effort \"high\" is not one model claude-sonnet-4-5 takes: it takes no effort setting; use thinkingBudget"), "{}", ran.stderr);
    let ran = run(ask_anthropic(dir.path(), &mock, "claude-sonnet-4-6", &["--effort", "xhigh", "hi"])).await;
    assert!(ran.stderr.contains("it takes low, medium, high, max"), "{}", ran.stderr);
    assert_eq!(mock.requests().len(), 0);
}

/// A model the table does not know (a gateway's alias) gets what the
/// settings ask for; when its API refuses the shape, the 400 is shown with
/// the API's own message and the setting that fixes it, and not retried.
/// The run's first event says what was assumed of the model.
#[tokio::test]
async fn a_400_for_the_wrong_shape_is_shown_with_the_fix_and_not_retried() {
    let mock = MockModel::start_with_rules(vec![text("never")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    let mut command = ask_anthropic(dir.path(), &mock, "gateway-opus", &["hi"]);
    command.env("TANDEM_THINKING", "2048");
    let ran = run(command).await;
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert_eq!(mock.requests().len(), 1, "a 400 is not retried");
    assert_eq!(mock.requests()[0].body["thinking"]["type"], "enabled");
    let end = ran.of("end")[0]["text"].as_str().unwrap().to_string();
    assert!(end.contains("\"thinking.type.enabled\" is not supported for this model."), "{end}");
    assert!(end.contains("remove thinkingBudget (TANDEM_THINKING) and set effort"), "{end}");
    let reason = ran.of("provider")[0]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("gateway-opus is not in Tandem's model table, so it assumed a 32768-token context window"), "{reason}");
    assert!(ran.of("retry").is_empty());
}

/// `models` describes the gateway's model: it thinks adaptively, so the
/// same settings with an effort now work.
#[tokio::test]
async fn the_models_setting_describes_a_model_the_table_lacks() {
    let mock = MockModel::start_with_rules(vec![text("ok")], vec![anthropic_thinking_rules]).await;
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".home/.tandem")).unwrap();
    let settings = json!({"models": {"gateway-opus": {"contextWindow": 1000000, "maxOutputTokens": 64000, "thinking": "adaptive", "images": true}}, "effort": "medium"});
    std::fs::write(dir.path().join(".home/.tandem/settings.json"), settings.to_string()).unwrap();
    let ran = run(ask_anthropic(dir.path(), &mock, "gateway-opus", &["hi"])).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let body = &mock.requests()[0].body;
    assert_eq!((body["thinking"]["type"].as_str(), body["output_config"]["effort"].as_str()), (Some("adaptive"), Some("medium")));
    assert_eq!(ran.of("provider")[0]["reason"], "provider (TANDEM_PROVIDER) is anthropic", "nothing assumed");
}

/// A gateway: `ANTHROPIC_AUTH_TOKEN` as a bearer token and the user's
/// `customHeaders` on every request; a project's file may set neither.
#[tokio::test]
async fn a_gateway_gets_the_bearer_token_and_the_users_headers_never_a_projects() {
    let mock = MockModel::start(vec![text("ok")]).await;
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".home/.tandem")).unwrap();
    std::fs::write(dir.path().join(".home/.tandem/settings.json"), json!({"customHeaders": {"x-gateway-key": "gk-1", "x-team": "tools"}}).to_string()).unwrap();
    std::fs::create_dir_all(dir.path().join(".tandem")).unwrap();
    std::fs::write(
        dir.path().join(".tandem/settings.json"),
        json!({"customHeaders": {"x-project": "1"}, "env": {"ANTHROPIC_AUTH_TOKEN": "tok-project"}}).to_string(),
    )
    .unwrap();
    // Even a folder the user trusts: these are the user's to say.
    let trusted = tandem(dir.path()).arg("trust").output().await.unwrap();
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let mut command = tandem(dir.path());
    command
        .env("TANDEM_PROVIDER", "anthropic")
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_AUTH_TOKEN", "tok-user")
        .args(["ask", "--json", "hi"]);
    let ran = run(command).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let request = &mock.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer tok-user"));
    assert_eq!(request.header("x-api-key"), None, "no key was set");
    assert_eq!((request.header("x-gateway-key"), request.header("x-team")), (Some("gk-1"), Some("tools")));
    assert_eq!(request.header("x-project"), None);
    assert!(ran.stderr.contains("field \"customHeaders\": a project's settings cannot set it"), "{}", ran.stderr);
    assert!(ran.stderr.contains("env.ANTHROPIC_AUTH_TOKEN: a project's settings cannot set it"), "{}", ran.stderr);
}

// ---- OpenAI-compatible chat completions with reasoning ----

fn chunk(delta: Value, finish: Option<&str>) -> String {
    format!("data: {}\n\n", json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

fn done() -> String {
    "data: [DONE]\n\n".into()
}

/// DeepSeek's thinking mode: an assistant turn with tool calls must carry
/// its `reasoning_content` in every later request.
fn deepseek_rules(request: &RecordedRequest) -> Option<MockResponse> {
    let messages = request.body["messages"].as_array()?;
    let missing = messages.iter().any(|m| m["role"] == "assistant" && m.get("tool_calls").is_some() && !m["reasoning_content"].is_string());
    missing.then(|| {
        MockResponse::error(
            400,
            r#"{"error":{"message":"The reasoning_content in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        )
    })
}

fn ask_openai(dir: &std::path::Path, mock: &MockModel, model: &str) -> Command {
    let mut command = tandem(dir);
    command.env("OPENAI_BASE_URL", &mock.url).env("TANDEM_MODEL", model).args(["ask", "--json", "read hello.txt"]);
    command
}

#[tokio::test]
async fn deepseek_reasoning_is_shown_and_sent_back_on_the_tool_calls_turn() {
    let first = chunk(json!({"role": "assistant", "content": null, "reasoning_content": ""}), None)
        + &chunk(json!({"reasoning_content": "Need the file. "}), None)
        + &chunk(json!({"reasoning_content": "Call read_file."}), None)
        + &chunk(json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": "{\"file_path\":\"hello.txt\"}"}}]}), None)
        + &chunk(json!({}), Some("tool_calls"))
        + &done();
    let second = chunk(json!({"reasoning_content": "It says hi."}), None) + &chunk(json!({"content": "It says hi there."}), None) + &chunk(json!({}), Some("stop")) + &done();
    let mock = MockModel::start_with_rules(vec![MockResponse::sse(&first), MockResponse::sse(&second)], vec![deepseek_rules]).await;
    let dir = workspace();
    let ran = run(ask_openai(dir.path(), &mock, "deepseek-v4-pro")).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{:?}", mock.log());
    let assistant = &requests[1].body["messages"][2];
    assert_eq!((assistant["role"].as_str(), assistant["reasoning_content"].as_str()), (Some("assistant"), Some("Need the file. Call read_file.")));
    assert!(assistant["tool_calls"].is_array());
    let thinking: Vec<&str> = ran.of("thinking").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(thinking, ["Need the file. Call read_file.", "It says hi."]);
    assert_eq!(ran.of("end")[0]["text"], "It says hi there.");
}

/// vLLM's `reasoning` field, and an answer whose whole text came as
/// reasoning (a reasoning parser that took it all): shown as the answer.
#[tokio::test]
async fn an_answer_that_is_all_reasoning_is_shown_not_lost() {
    let body = chunk(json!({"role": "assistant", "reasoning": "The file "}), None)
        + &chunk(json!({"reasoning": "says hi there."}), None)
        + &chunk(json!({}), Some("stop"))
        + &done();
    let mock = MockModel::start(vec![MockResponse::sse(&body)]).await;
    let dir = workspace();
    let ran = run(ask_openai(dir.path(), &mock, "qwen3-32b")).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(ran.of("end")[0]["text"], "The file says hi there.");
    // An unknown local model: what was assumed is said.
    assert!(ran.of("provider")[0]["reason"].as_str().unwrap().contains("qwen3-32b is not in Tandem's model table"));
}

/// A model named with a provider prefix, as a gateway (LiteLLM,
/// OpenRouter) names it, is the table's model (issue 50's faults): adaptive
/// thinking with the effort, its own output limit, nothing assumed.
#[tokio::test]
async fn a_provider_prefixed_model_name_is_the_tables_model() {
    let mock = MockModel::start(vec![text("ok")]).await;
    let dir = workspace();
    let ran = run(ask_anthropic(dir.path(), &mock, "anthropic/claude-opus-4-7", &["--effort", "high", "hi"])).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    let body = &mock.requests()[0].body;
    assert_eq!((&body["model"], &body["thinking"]["type"], &body["output_config"]), (&json!("anthropic/claude-opus-4-7"), &json!("adaptive"), &json!({"effort": "high"})));
    assert_eq!(ran.of("provider")[0]["reason"], "provider (TANDEM_PROVIDER) is anthropic", "nothing assumed");
}

/// Reasoning that runs to the token limit (issue 50's faults): all the
/// output went to thinking and no answer came. The run fails with what to
/// change, on an OpenAI-compatible server (`finish_reason: length`) and on
/// Anthropic (a thinking block, `stop_reason: max_tokens`), instead of
/// ending "completed" with nothing to show; the thinking is still shown.
#[tokio::test]
async fn reasoning_that_runs_to_the_token_limit_fails_with_what_to_change() {
    let body = chunk(json!({"role": "assistant", "reasoning_content": "Let me think about "}), None) + &chunk(json!({"reasoning_content": "hello.txt at length"}), None) + &chunk(json!({}), Some("length")) + &done();
    let mock = MockModel::start(vec![MockResponse::sse(&body)]).await;
    let dir = workspace();
    let ran = run(ask_openai(dir.path(), &mock, "deepseek-reasoner")).await;
    assert_eq!(ran.code, Some(1), "{}\n{:?}", ran.stderr, ran.events);
    assert_eq!(ran.of("thinking")[0]["text"], "Let me think about hello.txt at length");
    let end = ran.of("end")[0];
    assert_eq!(end["status"], "failed", "{end}");
    assert!(end["text"].as_str().unwrap().contains("maxTokens"), "{end}");

    let thinking = event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Thinking on and on"}}))
        + &event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    let mock = MockModel::start(vec![MockResponse::sse(&(message_start() + &thinking + &message_end("max_tokens")))]).await;
    let ran = run(ask_anthropic(dir.path(), &mock, "claude-opus-4-7", &["--effort", "max", "hi"])).await;
    assert_eq!(ran.code, Some(1), "{}\n{:?}", ran.stderr, ran.events);
    let end = ran.of("end")[0];
    assert_eq!(end["status"], "failed", "{end}");
    assert!(end["text"].as_str().unwrap().contains("maxTokens") && end["text"].as_str().unwrap().contains("effort"), "{end}");
}

// ---- OpenAI's Responses API ----

/// A Responses stream event, in the shape of openai-python's recorded
/// streams (`type`, `sequence_number`, the item or delta).
fn responses_event(n: &mut u64, mut data: Value) -> String {
    data["sequence_number"] = json!(*n);
    *n += 1;
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
}

fn responses_turn(items: &[Value], text: Option<&str>) -> String {
    let mut n = 0;
    let mut body = responses_event(&mut n, json!({"type": "response.created", "response": {"id": "resp_t", "object": "response", "status": "in_progress", "output": []}}));
    for (index, item) in items.iter().enumerate() {
        let mut added = item.clone();
        if added["type"] == "function_call" {
            added["arguments"] = json!("");
            added["status"] = json!("in_progress");
        }
        body += &responses_event(&mut n, json!({"type": "response.output_item.added", "output_index": index, "item": added}));
        if item["type"] == "function_call" {
            let arguments = item["arguments"].as_str().unwrap();
            let (a, b) = arguments.split_at(arguments.len() / 2);
            for delta in [a, b] {
                body += &responses_event(&mut n, json!({"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": index, "delta": delta}));
            }
        }
        body += &responses_event(&mut n, json!({"type": "response.output_item.done", "output_index": index, "item": item}));
    }
    if let Some(text) = text {
        let index = items.len();
        let message = json!({"id": "msg_t", "type": "message", "status": "in_progress", "role": "assistant", "content": []});
        body += &responses_event(&mut n, json!({"type": "response.output_item.added", "output_index": index, "item": message}));
        for word in text.split_inclusive(' ') {
            body += &responses_event(&mut n, json!({"type": "response.output_text.delta", "item_id": "msg_t", "output_index": index, "content_index": 0, "delta": word, "logprobs": []}));
        }
        let done = json!({"id": "msg_t", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}]});
        body += &responses_event(&mut n, json!({"type": "response.output_item.done", "output_index": index, "item": done}));
    }
    body + &responses_event(
        &mut n,
        json!({"type": "response.completed", "response": {"id": "resp_t", "object": "response", "status": "completed", "usage": {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 8}, "total_tokens": 52}}}),
    )
}

fn ask_responses(dir: &std::path::Path, mock: &MockModel) -> Command {
    let mut command = tandem(dir);
    command
        .env("TANDEM_PROVIDER", "openai-responses")
        .env("OPENAI_BASE_URL", &mock.url)
        .env("OPENAI_API_KEY", "sk-test")
        .env("TANDEM_MODEL", "gpt-5.5")
        .args(["ask", "--json", "read hello.txt"]);
    command
}

/// A tool loop on the Responses API: stateless requests to `/responses`,
/// the reasoning item (with its encrypted content) replayed before the
/// call, the call's output as a `function_call_output`.
#[tokio::test]
async fn a_responses_tool_loop_replays_its_reasoning() {
    let reasoning = json!({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Read the file first."}], "encrypted_content": "gAAAAABo-enc"});
    let call = json!({"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "read_file", "arguments": "{\"file_path\":\"hello.txt\"}"});
    let mock = MockModel::start(vec![
        MockResponse::sse(&responses_turn(&[reasoning.clone(), call], None)),
        MockResponse::sse(&responses_turn(&[], Some("It says hi there."))),
    ])
    .await;
    let dir = workspace();
    let ran = run(ask_responses(dir.path(), &mock)).await;
    assert_eq!(ran.code, Some(0), "{}\n{:?}", ran.stderr, ran.events);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/responses"));
        assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
        assert_eq!((request.body["store"].as_bool(), request.body["stream"].as_bool()), (Some(false), Some(true)));
        assert_eq!(request.body["include"], json!(["reasoning.encrypted_content"]));
        assert!(request.body["prompt_cache_key"].as_str().unwrap().starts_with("tandem-"));
    }
    assert_eq!(requests[0].body["prompt_cache_key"], requests[1].body["prompt_cache_key"]);
    // A reasoning model is asked for the summaries that are shown.
    assert_eq!(requests[0].body["reasoning"], json!({"summary": "auto"}));
    assert!(requests[0].body["tools"].as_array().unwrap().iter().any(|t| t["type"] == "function" && t["name"] == "read_file"));
    let input = requests[1].body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "reasoning", "function_call", "function_call_output"]);
    assert_eq!(input[1]["encrypted_content"], "gAAAAABo-enc");
    assert_eq!((input[2]["call_id"].as_str(), input[3]["call_id"].as_str()), (Some("call_1"), Some("call_1")));
    assert!(input[3]["output"].as_str().unwrap().contains("hi there"));
    assert_eq!(ran.of("thinking")[0]["text"], "Read the file first.");
    assert_eq!(ran.of("end")[0]["text"], "It says hi there.");
    assert_eq!(ran.of("end")[0]["usage"]["input_tokens"], 80);
    assert_eq!(ran.of("provider")[0]["provider"], "openai-responses");
}

/// A stream that ends without `response.completed` is cut off: retried,
/// and the run fails saying so.
#[tokio::test]
async fn a_responses_stream_without_completed_is_an_error() {
    let mut n = 0;
    let cut = responses_event(&mut n, json!({"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}}))
        + &responses_event(&mut n, json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "Half an ans"}));
    let mock = MockModel::start((0..5).map(|_| MockResponse::sse(&cut)).collect()).await;
    let dir = workspace();
    let ran = run(ask_responses(dir.path(), &mock)).await;
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let end = ran.of("end")[0]["text"].as_str().unwrap().to_string();
    assert!(end.contains("the stream ended without response.completed"), "{end}");
    assert_eq!(mock.requests().len(), 5, "cut off is worth a retry, four times");
}

// ---- the same settings through the editor (`tandem lsp`) ----

/// The editor's settings carry `effort`, `models` and `customHeaders` (the
/// editor's layer is the user's own); a change without a restart applies to
/// the next run; the folder's own file may not add headers.
#[tokio::test(flavor = "multi_thread")]
async fn the_editors_effort_and_headers_reach_the_request_and_follow_a_change() {
    use common::lsp_client::{ask_params, Fixture, LspClient};
    let mock = MockModel::start_with_rules(vec![text("one"), text("two")], vec![anthropic_thinking_rules]).await;
    let url = mock.url.clone();
    let answers = tokio::task::spawn_blocking(move || {
        let f = Fixture::new(&[]);
        std::fs::create_dir_all(f.root.join(".tandem")).unwrap();
        std::fs::write(f.root.join(".tandem/settings.json"), r#"{"customHeaders": {"x-project": "1"}}"#).unwrap();
        let home = f.root.parent().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let home = home.display().to_string();
        let env = [("HOME", home.as_str()), ("ANTHROPIC_API_KEY", "sk-ant-test")];
        let mut client = LspClient::start_trusted(&f.root, &env);
        let settings = |effort: &str| {
            json!({"tandem": {"provider": "anthropic", "baseUrl": url, "model": "gateway-opus", "effort": effort,
                "models": {"gateway-opus": {"thinking": "adaptive", "contextWindow": 1000000}}, "customHeaders": {"x-gateway-key": "gk-editor"}}})
        };
        let init = client.initialize(json!({}), settings("low"));
        assert!(init.get("result").is_some(), "{init}");
        let first = client.request("workspace/executeCommand", ask_params("one"));
        client.notify("workspace/didChangeConfiguration", json!({"settings": settings("max")}));
        let second = client.request("workspace/executeCommand", ask_params("two"));
        client.shutdown();
        (first, second)
    })
    .await
    .unwrap();
    let (first, second) = answers;
    assert_eq!((first["result"]["status"].as_str(), second["result"]["status"].as_str()), (Some("completed"), Some("completed")), "{first} {second}");
    let requests = mock.requests();
    let sent: Vec<(Value, Value, Option<&str>, Option<&str>)> = requests
        .iter()
        .map(|r| (r.body["thinking"]["type"].clone(), r.body["output_config"]["effort"].clone(), r.header("x-gateway-key"), r.header("x-project")))
        .collect();
    assert_eq!(sent, [(json!("adaptive"), json!("low"), Some("gk-editor"), None), (json!("adaptive"), json!("max"), Some("gk-editor"), None)]);
}
