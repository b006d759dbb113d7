//! The reliability suite: each test injects one fault and checks what the
//! user sees and what is kept. RELIABILITY.md at the repository root lists
//! them as a table. The LSP faults are in `reliability_lsp.rs`.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::mock_model::{MockModel, MockResponse, Part};
use common::turns::{self, event, message_start};
use common::{fixture, request, run_agent, workspace};
use serde_json::{json, Value};
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::http::StreamLimits;
use tandem::agent::openai::OpenAiProvider;
use tandem::agent::{RunEvent, RunStatus};
use tandem::tools::{Executor, ToolRegistry};

fn ping() -> String {
    event("ping", json!({"type": "ping"}))
}

fn text_block_start() -> String {
    event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
}

fn text_delta(text: &str) -> String {
    event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}))
}

fn config(mock: &MockModel, idle: Duration, turn: Duration) -> HttpProviderConfig {
    HttpProviderConfig { limits: StreamLimits { idle, turn }, ..HttpProviderConfig::for_tests(&mock.url, "claude-test") }
}

fn executor() -> Executor {
    Executor::new(ToolRegistry::default()).with_results_dir(None)
}

fn retry_reasons(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Retry { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------- model stream

#[tokio::test]
async fn stalled_stream_times_out_at_the_idle_timeout_and_is_retried() {
    let mock = MockModel::start(vec![
        MockResponse::sse_parts(vec![Part::Bytes(message_start().into_bytes()), Part::Hang]),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let provider = AnthropicProvider::new(config(&mock, Duration::from_millis(300), Duration::from_secs(60))).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Hello there!"), "{events:?}");
    let reasons = retry_reasons(&events);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].starts_with("the model's stream stalled: Anthropic sent no content for 0.3 s"), "{reasons:?}");
}

#[tokio::test]
async fn stream_of_pings_without_content_times_out() {
    let pings = Part::Repeat { every: Duration::from_millis(20), bytes: ping().into_bytes() };
    let mock = MockModel::start(vec![
        MockResponse::sse_parts(vec![Part::Bytes(message_start().into_bytes()), pings]),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let provider = AnthropicProvider::new(config(&mock, Duration::from_millis(400), Duration::from_secs(60))).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{events:?}");
    let reasons = retry_reasons(&events);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("sent no content"), "{reasons:?}");
}

#[tokio::test]
async fn endless_stream_is_stopped_by_the_turn_deadline_and_not_retried() {
    let endless = Part::Repeat { every: Duration::from_millis(20), bytes: text_delta("more ").into_bytes() };
    let mock = MockModel::start(vec![
        MockResponse::sse_parts(vec![Part::Bytes((message_start() + &text_block_start()).into_bytes()), endless]),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let provider = AnthropicProvider::new(config(&mock, Duration::from_secs(5), Duration::from_millis(600))).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Failed, "{events:?}");
    assert_eq!(outcome.text, "Anthropic's answer did not finish within the turn deadline of 0.6 s (TANDEM_TURN_TIMEOUT_MS sets it)");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn html_page_with_status_200_is_reported_not_retried() {
    let page = "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Welcome</body></html>";
    let mock = MockModel::start(vec![
        MockResponse { status: 200, headers: vec![("content-type".into(), "text/html; charset=utf-8".into())], parts: vec![Part::Bytes(page.into())], piece: 0 },
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let provider = AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, _) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let expected = format!(
        "Anthropic answered 200 OK with text/html; charset=utf-8, not an event stream, from {}/v1/messages. It began: \"<!DOCTYPE html>\\n<html><head><title>Sign in</title></head><body>Welcome</body></html>\". Check ANTHROPIC_BASE_URL (the base URL): it must point at the API itself.",
        mock.url
    );
    assert_eq!(outcome.text, expected);
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn plain_json_with_status_200_is_reported_not_retried() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"hi"}}]}"#;
    let mock = MockModel::start(vec![
        MockResponse { status: 200, headers: vec![("content-type".into(), "application/json".into())], parts: vec![Part::Bytes(body.into())], piece: 0 },
        MockResponse::sse(&fixture("openai/SYNTHESIZED_text_then_two_tool_calls.sse")),
    ])
    .await;
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(&mock.url, "gpt-test")).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, _) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.text.starts_with("The OpenAI-compatible server answered 200 OK with application/json, not an event stream"), "{}", outcome.text);
    assert!(outcome.text.contains(r#"It began: "{\"id\":\"chatcmpl-1\""#) && outcome.text.ends_with("Check OPENAI_BASE_URL (the base URL): it must point at the API itself."), "{}", outcome.text);
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn event_stream_without_a_content_type_is_still_read() {
    // Some local servers omit the header on a real stream; the body decides.
    let mock = MockModel::start(vec![MockResponse {
        status: 200,
        headers: Vec::new(),
        parts: vec![Part::Bytes(fixture("anthropic/verbatim_basic_text.sse").into_bytes())],
        piece: 0,
    }])
    .await;
    let provider = AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, _) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Hello there!"));
}

#[tokio::test]
async fn rate_limited_429_waits_for_retry_after() {
    let mock = MockModel::start(vec![
        MockResponse::error(429, r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#).header("retry-after", "0.015"),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let provider = AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, events) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    // The server's wait, not the (sub-millisecond) backoff of the test policy.
    assert!(
        matches!(&events[0], RunEvent::Retry { attempt: 2, delay_ms: 15, reason } if reason == "Anthropic is rate limiting requests (429). The server said: slow down"),
        "{events:?}"
    );
}

#[tokio::test]
async fn error_body_quoting_the_api_key_is_redacted() {
    let mock = MockModel::start(vec![MockResponse::error(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: sk-ant-sentinel-4242"}}"#,
    )])
    .await;
    let config = HttpProviderConfig { api_key: Some("sk-ant-sentinel-4242".into()), ..HttpProviderConfig::for_tests(&mock.url, "claude-test") };
    assert!(!format!("{config:?}").contains("sentinel"), "{config:?}");
    let provider = AnthropicProvider::new(config).unwrap();
    let (_dir, ctx) = workspace();
    let (outcome, _) = run_agent(&provider, &executor(), ctx, request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(
        outcome.text,
        "Anthropic rejected the API key (401 Unauthorized). Check ANTHROPIC_API_KEY. The server said: invalid x-api-key: [redacted]"
    );
}

// ---------------------------------------------------------------- secrets

/// Credentials a user may well have exported; none may reach a command.
const SECRETS: &[(&str, &str)] = &[
    ("GITHUB_TOKEN", "ghp_sentinel_github"),
    ("GH_TOKEN", "sentinel_gh"),
    ("AWS_SECRET_ACCESS_KEY", "sentinel_aws_secret"),
    ("AWS_SESSION_TOKEN", "sentinel_aws_session"),
    ("HF_TOKEN", "sentinel_hf"),
    ("NPM_TOKEN", "sentinel_npm"),
    ("OPENAI_API_KEY", "sentinel_openai"),
    ("PGPASSWORD", "sentinel_pg"),
    ("DATABASE_URL", "postgres://app:sentinel_db_pw@db.internal/app"),
];

#[tokio::test]
async fn secrets_in_the_environment_and_proc_ppid_environ_never_reach_the_shell() {
    // The command prints its own environment, then its parent's (Tandem's)
    // as the kernel shows it.
    let command = "env; echo ===PARENT===; tr '\\0' '\\n' < /proc/$PPID/environ";
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_env", "run_shell", json!({"command": command}))]),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut tandem = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
    tandem
        .current_dir(dir.path())
        .args(["ask", "--json", "--permission-mode", "bypassPermissions", "show the environment"])
        .stdin(Stdio::null())
        .env_remove("TANDEM_SCRIPT")
        .env_remove("OPENAI_BASE_URL")
        .env("TANDEM_PROVIDER", "anthropic")
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-sentinel-anthropic")
        .env("CARGO_HOME", "/opt/cargo-home-marker")
        .kill_on_drop(true);
    for (name, value) in SECRETS {
        tandem.env(name, value);
    }
    let output = tandem.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));

    // Tandem itself still had its key.
    let requests = mock.requests();
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-sentinel-anthropic"));
    let result = requests[1].body["messages"][2]["content"][0]["content"].as_str().unwrap().to_string();
    let (own, parent) = result.split_once("===PARENT===").unwrap_or_else(|| panic!("{result}"));
    // Both halves really are environments (the allow-list kept PATH and a
    // toolchain variable; the parent's block was readable).
    for half in [own, parent] {
        assert!(half.contains("PATH=") && half.contains("CARGO_HOME=/opt/cargo-home-marker"), "{result}");
    }
    for needle in SECRETS.iter().map(|(_, v)| *v).chain(["sk-ant-sentinel-anthropic", "sentinel"]) {
        assert!(!result.contains(needle), "{needle} leaked:\n{result}");
        assert!(!stdout.contains(needle), "{needle} leaked into the transcript:\n{stdout}");
    }
}

/// Without the sandbox's pid namespace a command can read its parent's
/// environment block (`/proc/$PPID/environ`): every variable the shell's
/// allow-list does not pass must be gone from it, whether or not its name
/// looks like a credential, while Tandem itself still reads them.
#[tokio::test]
async fn without_a_sandbox_proc_ppid_environ_holds_only_what_the_allow_list_passes() {
    let command = "echo ===PARENT===; tr '\\0' '\\n' < /proc/$PPID/environ; echo ===END===";
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_env", "run_shell", json!({"command": command}))]),
        MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    // The user's own settings switch the sandbox off (a project's may not).
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".tandem")).unwrap();
    std::fs::write(home.path().join(".tandem/settings.json"), r#"{"sandbox": {"enabled": false}}"#).unwrap();
    let mut tandem = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
    tandem
        .current_dir(dir.path())
        .args(["ask", "--json", "--permission-mode", "bypassPermissions", "show the environment"])
        .stdin(Stdio::null())
        .env_remove("TANDEM_SCRIPT")
        .env_remove("OPENAI_BASE_URL")
        .env("HOME", home.path())
        .env("TANDEM_PROVIDER", "anthropic")
        // Neither on the allow-list nor named like a credential: Tandem
        // reads it (the model's address), commands must not.
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-sentinel-anthropic")
        .env("MYSQL_PWD", "sentinel_mysql")
        .env("SECRET_KEY_BASE", "sentinel_rails")
        .env("COMPANY_INTERNAL_ENDPOINT", "https://sentinel-internal.example")
        .env("CARGO_HOME", "/opt/cargo-home-marker")
        .kill_on_drop(true);
    let output = tandem.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    // The run really was unsandboxed: the first event says so.
    assert!(stdout.contains("without a sandbox"), "{stdout}");

    let requests = mock.requests();
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-sentinel-anthropic"));
    let result = requests[1].body["messages"][2]["content"][0]["content"].as_str().unwrap().to_string();
    let parent = result.split_once("===PARENT===").and_then(|(_, rest)| rest.split_once("===END===")).map(|(p, _)| p).unwrap_or_else(|| panic!("{result}"));
    // It is Tandem's environment block, with what the allow-list passes:
    // readable by root (whose capabilities pass the check Tandem's
    // non-dumpable flag makes), unreadable by any other user.
    // SAFETY: geteuid(2) always succeeds.
    if unsafe { libc::geteuid() } == 0 {
        assert!(parent.contains("PATH=") && parent.contains("CARGO_HOME=/opt/cargo-home-marker"), "{result}");
    } else {
        assert!(!parent.contains("PATH="), "Tandem is dumpable: its environment block is readable:\n{result}");
    }
    for needle in ["sentinel", "ANTHROPIC_BASE_URL", "MYSQL_PWD", "SECRET_KEY_BASE", "COMPANY_INTERNAL_ENDPOINT", "TANDEM_PROVIDER"] {
        assert!(!parent.contains(needle), "{needle} is readable in /proc/$PPID/environ:\n{parent}");
    }
}

#[tokio::test]
async fn a_credential_allowed_by_name_reaches_the_shell() {
    use std::sync::Arc;
    use tandem::environment::ChildEnv;
    use tandem::tools::{ToolCall, ToolContext};
    let dir = tempfile::tempdir().unwrap();
    let workspace = tandem::workspace::Workspace::new(dir.path()).unwrap();
    let ctx = ToolContext {
        child_env: Arc::new(ChildEnv { allow: vec!["RELIABILITY_TEST_TOKEN".into()], set: vec![("FROM_SETTINGS".into(), "yes".into())], per_child: None, shell: None }),
        ..ToolContext::new(Arc::new(workspace))
    };
    // SAFETY: this test binary's other tests do not read this variable.
    unsafe { std::env::set_var("RELIABILITY_TEST_TOKEN", "allowed-value") };
    let call = ToolCall::new("t", "run_shell", json!({"command": "echo \"$RELIABILITY_TEST_TOKEN $FROM_SETTINGS\""}));
    let result = Executor::new(ToolRegistry::builtin()).with_results_dir(None).execute(&call, &ctx).await.unwrap();
    assert_eq!(result.content, "allowed-value yes");
}

// ---------------------------------------------------------------- files

fn temp_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tandem-") && n.ends_with(".tmp"))
        .collect()
}

/// The content `write_file` puts in `out_N.txt`: big enough that writing
/// it takes a moment.
fn big_content(n: usize) -> String {
    format!("file {n}\n") + &format!("line of file {n}\n").repeat(120_000)
}

#[tokio::test]
async fn kill_9_during_writes_never_tears_a_file_and_the_next_start_removes_the_debris() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&work).unwrap();
    let turns: Vec<Value> = (0..12)
        .map(|n| json!({"tool_calls": [{"name": "write_file", "input": {"file_path": format!("out_{n}.txt"), "content": big_content(n)}}]}))
        .chain([json!({"text": "done"})])
        .collect();
    let script = dir.path().join("script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let tandem = |args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
        command
            .args(args)
            .current_dir(&work)
            .env("XDG_CACHE_HOME", &cache)
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };

    // Kill the run while a temp file exists (retrying if the write won the race).
    let mut debris_seen = false;
    for _attempt in 0..5 {
        let mut child = tandem(&["ask", "--permission-mode", "acceptEdits", "write the files"]).spawn().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while temp_files(&work).is_empty() && std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none() {
            std::thread::yield_now();
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if !temp_files(&work).is_empty() {
            debris_seen = true;
            break;
        }
    }
    assert!(debris_seen, "never caught a write in progress");
    // Never torn: every file is absent or whole.
    for n in 0..12 {
        if let Ok(text) = std::fs::read_to_string(work.join(format!("out_{n}.txt"))) {
            assert!(text == big_content(n), "out_{n}.txt is torn ({} bytes)", text.len());
        }
    }
    // The next start cleans up.
    let status = tandem(&["tool", "list_files", r#"{"pattern": "*.tmp"}"#]).status().unwrap();
    assert!(status.success());
    assert_eq!(temp_files(&work), Vec::<String>::new());
}

#[tokio::test]
async fn a_saved_large_result_is_readable_from_its_workspace_only() {
    use std::sync::Arc;
    use tandem::tools::{ToolCall, ToolContext};
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let context = |dir: &tempfile::TempDir| ToolContext::new(Arc::new(tandem::workspace::Workspace::new(dir.path()).unwrap()));
    let (first_ctx, second_ctx) = (context(&first), context(&second));
    let executor = Executor::new(ToolRegistry::builtin());
    let call = |name: &str, input: Value| ToolCall::new("toolu_big", name, input);
    let big = executor.execute(&call("run_shell", json!({"command": "seq 1 20000"})), &first_ctx).await.unwrap();
    let saved = big.content.rsplit_once("was saved to ").unwrap().1.split(". Use read_file").next().unwrap().to_string();
    let read = |ctx: &ToolContext| {
        let call = call("read_file", json!({"file_path": &saved, "offset": 19990, "limit": 3}));
        let executor = executor.clone();
        let ctx = ctx.clone();
        async move { executor.execute(&call, &ctx).await.unwrap() }
    };
    let own = read(&first_ctx).await;
    assert!(!own.is_error && own.content.contains("19991"), "{}", own.content);
    let other = read(&second_ctx).await;
    assert!(other.is_error && other.content.contains("outside the workspace"), "{}", other.content);
    let _ = std::fs::remove_file(&saved);
}

const DELETED_OR_RENAMED: &str = "Error: a.txt was deleted or renamed after you read it, so it was not changed. Check with list_files where it went, or ask the user; if you mean to create it anew, call write_file again.";

async fn read_then_edit_after(change: impl FnOnce(&std::path::Path)) -> (tempfile::TempDir, String) {
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
    let read = executor.execute(&tandem::tools::ToolCall::new("r", "read_file", json!({"file_path": "a.txt"})), &ctx).await.unwrap();
    assert!(!read.is_error, "{}", read.content);
    change(dir.path());
    let edit = tandem::tools::ToolCall::new("e", "edit_file", json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}));
    let result = executor.execute(&edit, &ctx).await.unwrap();
    assert!(result.is_error, "{}", result.content);
    (dir, result.content)
}

#[tokio::test]
async fn file_deleted_between_read_and_edit_is_refused_and_not_recreated() {
    let (dir, message) = read_then_edit_after(|root| std::fs::remove_file(root.join("a.txt")).unwrap()).await;
    assert_eq!(message, DELETED_OR_RENAMED);
    assert!(!dir.path().join("a.txt").exists());
}

#[tokio::test]
async fn file_renamed_between_read_and_edit_is_refused_and_both_names_are_kept() {
    let (dir, message) = read_then_edit_after(|root| std::fs::rename(root.join("a.txt"), root.join("b.txt")).unwrap()).await;
    assert_eq!(message, DELETED_OR_RENAMED);
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), "alpha\n");
}

#[tokio::test]
async fn file_deleted_between_read_and_overwrite_is_refused() {
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
    let read = executor.execute(&tandem::tools::ToolCall::new("r", "read_file", json!({"file_path": "a.txt"})), &ctx).await.unwrap();
    assert!(!read.is_error);
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    let write = tandem::tools::ToolCall::new("w", "write_file", json!({"file_path": "a.txt", "content": "new\n"}));
    let result = executor.execute(&write, &ctx).await.unwrap();
    assert_eq!((result.is_error, result.content.as_str()), (true, DELETED_OR_RENAMED));
    assert!(!dir.path().join("a.txt").exists());
    // Called again on purpose, it creates the file.
    let again = executor.execute(&write, &ctx).await.unwrap();
    assert!(!again.is_error, "{}", again.content);
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "new\n");
}
