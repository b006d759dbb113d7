//! The real `tandem` binary: `tandem ask` against the loopback mock model
//! (JSON Lines and the terminal transcript), the error without a provider,
//! plan mode, the turn limit's exit code, Ctrl-C, and `tandem demo`.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::Stdio;

use common::{fixture, wait_for_pid, wait_until_dead};
use common::mock_model::{MockModel, MockResponse};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn tandem(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    // Saved conversations go to the test's own data folder, not the user's.
    command.env("XDG_DATA_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"));
    command
}

fn against(mut command: Command, mock: &MockModel) -> Command {
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
    command
}

fn scripted(mut command: Command, dir: &std::path::Path, script: Value) -> Command {
    let path = dir.join(".script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    command.env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", path);
    command
}

fn read_then_answer() -> Vec<MockResponse> {
    let tool_use = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_cli\",\"name\":\"read_file\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"file_path\\\": \\\"hello.txt\\\"}\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    vec![MockResponse::sse(tool_use), MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse"))]
}

#[tokio::test]
async fn ask_json_prints_one_event_per_line() {
    let mock = MockModel::start(read_then_answer()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi there\n").unwrap();
    let mut command = against(tandem(dir.path()), &mock);
    command.args(["ask", "--json", "read hello.txt"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let outline: Vec<String> = events
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap();
            match kind {
                "tool_call" => format!("tool_call {} {} {}", e["id"], e["name"], e["input"]),
                "tool_result" => format!("tool_result {} is_error={} {:?}", e["id"], e["is_error"], e["content"].as_str().unwrap().lines().next()),
                "end" => format!("end {} {}", e["status"], e["text"]),
                // The loopback's port changes with each run.
                "provider" => format!("provider {} {} {}", e["provider"], e["model"], e["reason"]),
                _ => e.to_string(),
            }
        })
        .collect();
    expect_test::expect![[r#"
        provider "anthropic" "claude-sonnet-5-5" "provider (TANDEM_PROVIDER) is anthropic"
        tool_call "toolu_cli" "read_file" {"file_path":"hello.txt"}
        {"type":"status","turn":1,"usage":{"input_tokens":20,"output_tokens":9}}
        tool_result "toolu_cli" is_error=false Some("   1 | hi there")
        {"type":"text","text":"Hello"}
        {"type":"text","text":" there"}
        {"type":"text","text":"!"}
        {"type":"status","turn":2,"usage":{"input_tokens":31,"output_tokens":15}}
        end "completed" "Hello there!""#]]
    .assert_eq(&outline.join("\n"));
    let second = &mock.requests()[1].body["messages"][2]["content"][0];
    assert_eq!((second["tool_use_id"].as_str(), second["is_error"].as_bool()), (Some("toolu_cli"), Some(false)));
}

#[tokio::test]
async fn ask_prints_a_plain_transcript_when_not_on_a_terminal() {
    let mock = MockModel::start(read_then_answer()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi there\n").unwrap();
    let mut command = against(tandem(dir.path()), &mock);
    command.args(["ask", "read hello.txt"]);
    let output = command.output().await.unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    // No colour and no spinner when the output is a pipe.
    assert!(!stdout.contains('\x1b') && !stderr.contains('\x1b'), "{stdout:?} {stderr:?}");
    expect_test::expect![[r#"
        → read_file hello.txt
          ✓    1 | hi there
        Hello there!

        ── completed · 2 turns · 31 tokens in, 15 out · $0.0002 · no edits · thread ID
    "#]]
    .assert_eq(&hide_thread_id(&stdout));
}

/// The summary line ends with the new thread's id, which changes per run.
fn hide_thread_id(text: &str) -> String {
    text.lines()
        .map(|line| match line.rfind(" · thread ") {
            Some(at) => format!("{} · thread ID", &line[..at]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" }
}

#[tokio::test]
async fn ask_without_a_provider_says_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    let output = tandem(dir.path()).args(["ask", "hi"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    for needle in ["no model provider is configured", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "TANDEM_PROVIDER=scripted", "tandem demo"] {
        assert!(stderr.contains(needle), "{needle} missing from {stderr}");
    }
}

#[tokio::test]
async fn ask_with_a_rejected_key_fails_with_exit_1() {
    let mock = MockModel::start(vec![MockResponse::error(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#)]).await;
    let dir = tempfile::tempdir().unwrap();
    let output = against(tandem(dir.path()), &mock).args(["ask", "hi"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("rejected the API key") && stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
}

#[tokio::test]
async fn permission_mode_plan_starts_in_plan_mode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let script = json!({"turns": [
        {"tool_calls": [
            {"name": "read_file", "input": {"file_path": "a.txt"}},
            {"name": "write_file", "input": {"file_path": "b.txt", "content": "beta\n"}},
            {"name": "run_shell", "input": {"command": "touch c.txt"}}
        ]},
        {"tool_calls": [{"name": "exit_plan_mode", "input": {}}]},
        {"text": "Here is my plan."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--json", "--permission-mode", "plan", "make b.txt"]);
    let output = command.output().await.unwrap();
    assert!(output.status.success());
    let results: Vec<Value> =
        String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|e| e["type"] == "tool_result").collect();
    let shown: Vec<(bool, &str)> = results.iter().map(|r| (r["is_error"].as_bool().unwrap(), r["content"].as_str().unwrap())).collect();
    assert!(!shown[0].0);
    assert_eq!(shown[1..], [
        (true, "Blocked in plan mode: write_file"),
        (true, "Shell commands blocked in plan mode"),
        // --json: nobody to ask, so the plan comes back and plan mode ends.
        (false, "Exited plan mode. Permission mode restored to: default\n\n## Your Plan:\n(No plan file found)"),
    ]);
    assert!(!dir.path().join("b.txt").exists() && !dir.path().join("c.txt").exists());
}

/// The terminal's end line counts the run's edits by status and lists
/// every changed range.
#[tokio::test]
async fn the_summary_counts_edits_by_status_with_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"name": "read_file", "input": {"file_path": "a.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "four\nfive", "new_string": "FOUR\nFIVE"}}]},
        {"tool_calls": [{"name": "write_file", "input": {"file_path": "b.txt", "content": "beta\n"}}]},
        {"text": "Done."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--permission-mode", "acceptEdits", "shout"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    let last = stdout.lines().rev().find(|l| !l.is_empty()).unwrap();
    assert!(
        last.contains(" · 3 edits: 3 applied. Changed: a.txt line 2; a.txt lines 4-5; b.txt line 1. · thread "),
        "{stdout}"
    );
}

/// `--json`: an edit call's `tool_result` carries its `edit` status, as the
/// editors' events do: `written` with its lines, `superseded` when the file
/// changed on disk after the read, `rejected` when the user said no (here
/// nobody can answer: the default mode refuses with nobody to ask).
#[tokio::test]
async fn json_tool_results_carry_each_edit_s_status() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let changed_on_disk = format!("printf 'ONE\\ntwo\\n' > {}", dir.path().join("a.txt").display());
    let script = json!({"turns": [
        {"tool_calls": [{"name": "read_file", "input": {"file_path": "a.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}}]},
        {"tool_calls": [{"name": "run_shell", "input": {"command": changed_on_disk}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "TWO", "new_string": "2"}}]},
        {"text": "Done."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--json", "--permission-mode", "bypassPermissions", "edit"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    let edits: Vec<Value> = stdout.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|e| e["type"] == "tool_result" && !e["edit"].is_null()).map(|e| e["edit"].clone()).collect();
    assert_eq!(
        edits,
        [json!({"path": "a.txt", "status": "written", "ranges": [{"startLine": 2, "endLine": 2}]}), json!({"path": "a.txt", "status": "superseded", "ranges": []})],
        "{stdout}"
    );
}

/// A redirect or `tee` into the workspace is an edit: allowed in
/// acceptEdits, and what it wrote is counted in the end line among the
/// run's changed files, marked as a command's; so is what a command the
/// user let run in bypassPermissions deleted. A command that only reads
/// adds nothing.
#[tokio::test]
async fn files_shell_commands_write_or_delete_are_counted_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.log"), "stale\n").unwrap();
    let shell = |command: &str| json!({"tool_calls": [{"name": "run_shell", "input": {"command": command}}]});
    let script = json!({"turns": [
        shell("echo one > out.txt"),
        shell("echo two | tee teed.txt"),
        shell("cat out.txt"),
        {"text": "Done."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--permission-mode", "acceptEdits", "write"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("teed.txt")).unwrap(), "two\n");
    let last = stdout.lines().rev().find(|l| !l.is_empty()).unwrap();
    assert!(last.contains(" · 2 edits: 2 changed by commands. Changed: out.txt; teed.txt. · thread "), "{stdout}");

    let script = json!({"turns": [shell("rm old.log && echo three >> out.txt"), {"text": "Done."}]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--permission-mode", "bypassPermissions", "clean up"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    assert!(!dir.path().join("old.log").exists());
    let last = stdout.lines().rev().find(|l| !l.is_empty()).unwrap();
    assert!(last.contains(" · 2 edits: 2 changed by commands. Changed: old.log (deleted); out.txt. · thread "), "{stdout}");
}

#[tokio::test]
async fn turn_limit_exits_1_with_status_turn_limit() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"name": "list_files", "input": {"pattern": "*"}}]},
        {"tool_calls": [{"name": "list_files", "input": {"pattern": "*"}}]},
        {"text": "done"}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--json", "--max-turns", "2", "look"]);
    let output = command.output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["status"], json!("turn_limit"));
    assert!(stdout.contains("Tool call not executed: turn limit reached"));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn ctrl_c_cancels_the_run_and_its_shell_command() {
    let dir = tempfile::tempdir().unwrap();
    // The command runs in the sandbox's pid namespace: its pids are not
    // ours, so the sleeper is found by its unique argument.
    let marker = format!("300.{}", std::process::id());
    let script = json!({"turns": [
        {"tool_calls": [{"name": "run_shell", "input": {"command": format!("sleep {marker} & echo $! > sleeper.pid; wait")}}]},
        {"text": "never reached"}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    // Not a read-only command: with no terminal it would be refused.
    command.args(["ask", "--json", "--permission-mode", "bypassPermissions", "sleep"]);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid_file = dir.path().join("sleeper.pid");
    let mut seen = Vec::new();
    // Wait for the tool call, then for the shell to have started its child.
    while let Some(line) = lines.next_line().await.unwrap() {
        let is_call = line.contains("\"tool_call\"");
        seen.push(line);
        if is_call {
            break;
        }
    }
    wait_for_pid(&pid_file).await;
    // `$!` is written as soon as the shell forks: the child may not have
    // become `sleep` yet (seen in CI under load: none found).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let sleepers = loop {
        let found = common::processes_running(&format!("sleep {marker}"));
        if !found.is_empty() || std::time::Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(sleepers.len(), 1, "{sleepers:?}");
    let sleeper = sleepers[0];
    let tandem_pid = child.id().unwrap() as i32;
    // SAFETY: sending SIGINT to the child we spawned.
    unsafe { libc::kill(tandem_pid, libc::SIGINT) };
    while let Some(line) = lines.next_line().await.unwrap() {
        seen.push(line);
    }
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(130), "{seen:?}");
    let last: Value = serde_json::from_str(seen.last().unwrap()).unwrap();
    assert_eq!(last["status"], json!("cancelled"), "{seen:?}");
    assert!(wait_until_dead(sleeper).await, "the shell's child {sleeper} is still running");
}

#[tokio::test]
async fn demo_runs_offline_and_every_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let output = tandem(dir.path()).arg("demo").output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    // Twelve checks for the headless act (plan mode and a sub-agent among them), six for the editor act.
    assert_eq!(stdout.matches("✓ verified:").count(), 18, "{stdout}");
    assert!(!stdout.contains("✗ FAILED") && stdout.contains("All 18 checks passed."), "{stdout}");
    assert!(stdout.contains("Blocked in plan mode: edit_file"), "{stdout}");
    // The sub-agent's call, indented under the agent call.
    assert!(stdout.contains("\n→ agent explore: find the greeting\n    → grep_search fn greet\n"), "{stdout}");
    assert!(stdout.contains("(matched via quote normalization)"), "{stdout}");
    assert!(stdout.contains("Act 2: in the editor"), "{stdout}");
    assert!(stdout.contains("the buffer holds the edit and both typed lines"), "{stdout}");
}

#[tokio::test]
async fn json_lines_carry_a_sub_agent_events_parent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"id": "toolu_parent", "name": "agent", "input": {"description": "look", "prompt": "What is in a.txt?", "type": "explore"}}]},
        {"tool_calls": [{"id": "toolu_child", "name": "read_file", "input": {"file_path": "a.txt"}}]},
        {"text": "It says alpha."},
        {"text": "a.txt says alpha."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.env("HOME", dir.path()).args(["ask", "--json", "what is in a.txt?"]);
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let events: Vec<Value> = String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let nested: Vec<String> = events.iter().filter(|e| e.get("parent").is_some()).map(|e| format!("{} {} {}", e["parent"], e["type"], e["id"])).collect();
    assert_eq!(nested, [r#""toolu_parent" "tool_call" "toolu_child""#, r#""toolu_parent" "tool_result" "toolu_child""#, r#""toolu_parent" "text" null"#]);
    let result = events.iter().find(|e| e["type"] == "tool_result" && e["id"] == "toolu_parent" && e.get("parent").is_none()).unwrap();
    assert_eq!(result["content"], "It says alpha.");
}

/// Issue 28: an Anthropic key is stored, no provider is named, and the
/// user's settings set `baseUrl` (VS Code's "Use a local model"). The
/// provider is the one the base URL belongs to, the OpenAI-compatible
/// server: the run's first event says so and why, the request reaches that
/// loopback server (and not the Anthropic one the key would have chosen),
/// and the Anthropic key goes nowhere.
#[tokio::test]
async fn the_base_url_chooses_the_provider_and_the_first_event_says_which() {
    let local = MockModel::start(vec![MockResponse::sse(&fixture("openai/verbatim_text_with_logprobs.sse"))]).await;
    let anthropic = MockModel::start(vec![MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".tandem")).unwrap();
    std::fs::write(home.join(".tandem/settings.json"), json!({"baseUrl": local.url, "model": "qwen3"}).to_string()).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut command = tandem(&work);
    command.env("HOME", &home).env("ANTHROPIC_API_KEY", "sk-ant-stored").env("ANTHROPIC_BASE_URL", &anthropic.url);
    command.args(["ask", "--json", "hello"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let first = &events[0];
    assert_eq!(
        (first["type"].as_str(), first["provider"].as_str(), first["model"].as_str(), first["base_url"].as_str()),
        (Some("provider"), Some("openai"), Some("qwen3"), Some(local.url.as_str())),
        "{first}"
    );
    assert!(first["reason"].as_str().unwrap().contains(&format!("baseUrl is set to {}", local.url)), "{first}");
    assert_eq!(local.requests().len(), 1, "the request went to the base URL's server");
    assert_eq!(anthropic.requests().len(), 0, "not to the provider of the key");
    assert!(!local.requests()[0].raw.contains("sk-ant-stored") && !format!("{:?}", local.requests()[0].headers).contains("sk-ant-stored"), "the Anthropic key stays home");
}

/// `--model` (issue 54): over the settings' `model`, which is over
/// TANDEM_MODEL, as `tandem ask --help` says; the request and the run's
/// first event carry the model chosen.
#[tokio::test]
async fn the_model_flag_wins_over_the_settings_which_win_over_tandem_model() {
    let sse = fixture("openai/verbatim_text_with_logprobs.sse");
    let local = MockModel::start(vec![MockResponse::sse(&sse), MockResponse::sse(&sse)]).await;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".tandem")).unwrap();
    std::fs::write(home.join(".tandem/settings.json"), json!({"baseUrl": local.url, "model": "from-settings"}).to_string()).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut models = Vec::new();
    for flag in [None, Some("from-flag")] {
        let mut command = tandem(&work);
        command.env("HOME", &home).env("TANDEM_MODEL", "from-env").args(["ask", "--json"]);
        if let Some(model) = flag {
            command.args(["--model", model]);
        }
        command.arg("hello");
        let output = command.output().await.unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        let first: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
        models.push(first["model"].as_str().unwrap_or_default().to_string());
    }
    let sent: Vec<Value> = local.requests().iter().map(|r| r.body["model"].clone()).collect();
    assert_eq!(models, ["from-settings", "from-flag"]);
    assert_eq!(sent, [json!("from-settings"), json!("from-flag")]);
}

/// `tandem doctor` (and `--json`, what `:checkhealth tandem` reads) shows
/// the same decision, with the editor's settings over the files; a setting
/// that cannot apply to the chosen provider is an error naming it.
#[tokio::test]
async fn doctor_shows_the_provider_decision_and_a_setting_that_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let doctor = |editor: Value, env: &[(&str, &str)], json_output: bool| {
        let mut command = tandem(dir.path());
        // --offline: the public APIs are not asked (no network in tests).
        command.env("HOME", &home).envs(env.iter().copied()).args(["doctor", "--offline"]).arg("--editor-settings").arg(editor.to_string());
        if json_output {
            command.arg("--json");
        }
        command
    };
    let key = [("ANTHROPIC_API_KEY", "sk-ant-stored")];
    let output = doctor(json!({"baseUrl": "http://127.0.0.1:11434/v1"}), &key, true).output().await.unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    assert_eq!(report["provider"]["provider"], "openai", "{report}");
    assert_eq!(report["provider"]["base_url"], "http://127.0.0.1:11434/v1", "{report}");
    assert!(report["provider"]["reason"].as_str().unwrap().contains("baseUrl is set"), "{report}");
    assert!(!output.stdout.windows(13).any(|w| w == b"sk-ant-stored"), "never a key");

    let output = doctor(json!({}), &key, false).output().await.unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("model: anthropic at https://api.anthropic.com, model claude-sonnet-5-5 (no provider or base URL is set, and ANTHROPIC_API_KEY is)"), "{text}");

    let conflict = [("ANTHROPIC_BASE_URL", "http://127.0.0.1:4000"), ("OPENAI_API_KEY", "sk-o")];
    let output = doctor(json!({"provider": "openai"}), &conflict, true).output().await.unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let error = report["provider"]["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("ANTHROPIC_BASE_URL (http://127.0.0.1:4000) does not apply to the openai provider"), "{report}");
}

/// `--json`: the run's `end` event names the run (`tandem undo RUN_ID`
/// takes it back) and the files it changed, sorted; a run that changed
/// nothing lists none.
#[tokio::test]
async fn json_end_names_the_run_and_its_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let script = json!({"turns": [
        {"tool_calls": [{"name": "write_file", "input": {"file_path": "b.txt", "content": "new\n"}}]},
        {"tool_calls": [{"name": "read_file", "input": {"file_path": "a.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}}]},
        {"text": "Done."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["ask", "--json", "--permission-mode", "bypassPermissions", "edit"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    let end: Value = stdout.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|e| e["type"] == "end").expect("an end event");
    assert_eq!(end["changed_files"], json!(["a.txt", "b.txt"]), "{end}");
    let run_id = end["run_id"].as_str().expect("a run id").to_string();

    let mut undo = tandem(dir.path());
    undo.args(["undo", &run_id]);
    let undone = undo.output().await.unwrap();
    assert!(undone.status.success(), "{}", String::from_utf8_lossy(&undone.stderr));
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one\ntwo\n");
    assert!(!dir.path().join("b.txt").exists());

    let mut command = scripted(tandem(dir.path()), dir.path(), json!({"turns": [{"text": "Nothing to do."}]}));
    command.args(["ask", "--json", "question"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let end: Value = stdout.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|e| e["type"] == "end").expect("an end event");
    assert_eq!(end["changed_files"], json!([]), "{end}");
    assert!(end["run_id"].is_string(), "{end}");
}
