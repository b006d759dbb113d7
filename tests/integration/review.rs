//! `tandem review --json`: the agent reviews a scope with the scripted
//! model (and the loopback one, to see what it was asked and offered);
//! findings are `finding` run events, a malformed `report_finding` is an
//! error for the model and no finding, a review run cannot edit, nothing
//! to review says so with its own exit code, and what was skipped is said.

#![allow(clippy::unwrap_used)]

use std::process::Stdio;

use crate::common::fixture;
use crate::common::mock_model::{MockModel, MockResponse};
use serde_json::{json, Value};
use tokio::process::Command;

fn tandem(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command.env("XDG_DATA_HOME", dir.join(".xdg-data"));
    command
}

fn scripted(mut command: Command, dir: &std::path::Path, script: Value) -> Command {
    let path = dir.join(".git").join("script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    command.env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", path);
    command
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A repository with one commit of `src/lib.rs`, changed since.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["config", "user.email", "t@example.com"]);
    git(dir.path(), &["config", "user.name", "t"]);
    std::fs::write(dir.path().join(".gitignore"), ".xdg-data/\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn div(a: i32, b: i32) -> i32 {\n    a / b\n}\n").unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "one"]);
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn div(a: i32, b: i32) -> i32 {\n    let q = a / b;\n    q\n}\n").unwrap();
    dir
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test]
async fn findings_are_run_events_and_a_malformed_one_is_an_error_for_the_model() {
    let dir = repo();
    let script = json!({"turns": [
        {"tool_calls": [
            {"name": "read_file", "input": {"file_path": "src/lib.rs"}},
            {"name": "report_finding", "input": {"file_path": "src/lib.rs", "start_line": 2, "end_line": 2, "severity": "error", "kind": "bug",
                "title": "division by zero panics", "body": "b may be 0.", "suggestion": "    let q = a.checked_div(b).unwrap_or(0);"}},
            {"name": "report_finding", "input": {"file_path": "src/lib.rs", "start_line": 7, "end_line": 9, "severity": "warning", "title": "past the end", "body": "x"}},
            {"name": "report_finding", "input": {"file_path": "src/lib.rs", "start_line": 1, "end_line": 1, "severity": "catastrophic", "title": "bad severity", "body": "x"}},
            {"name": "edit_file", "input": {"file_path": "src/lib.rs", "old_string": "a / b", "new_string": "a"}}
        ]},
        {"text": "1 finding: not ready."}
    ]});
    let mut command = scripted(tandem(dir.path()), dir.path(), script);
    command.args(["review", "--json"]);
    let output = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("tandem review: Reviewing 1 file(s)."), "{stderr}");
    let events = events(&output.stdout);
    let findings: Vec<&Value> = events.iter().filter(|e| e["type"] == "finding").map(|e| &e["finding"]).collect();
    assert_eq!(findings, [&json!({"id": "F1", "file_path": "src/lib.rs", "start_line": 2, "end_line": 2, "severity": "error", "kind": "bug",
        "title": "division by zero panics", "body": "b may be 0.", "suggestion": "    let q = a.checked_div(b).unwrap_or(0);"})]);
    let results: Vec<(bool, String)> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().lines().next().unwrap_or_default().to_string()))
        .collect();
    assert_eq!(results[1], (false, "Finding F1 reported: src/lib.rs:2-2 (error) division by zero panics".to_string()));
    assert!(results[2].0 && results[2].1.contains("has 4 lines now"), "{results:?}");
    assert!(results[3].0 && results[3].1.contains("unknown variant \"catastrophic\""), "{results:?}");
    // A review cannot change the code: edit_file is not among its tools.
    assert!(results[4].0 && results[4].1.contains("edit_file"), "{results:?}");
    assert!(std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap().contains("a / b"));
    assert_eq!(events.last().unwrap()["status"], "completed");
}

#[tokio::test]
async fn the_model_is_asked_with_the_diff_the_rules_and_only_read_only_tools() {
    let dir = repo();
    std::fs::create_dir(dir.path().join(".tandem")).unwrap();
    std::fs::write(dir.path().join(".tandem/REVIEW.md"), "Division must be checked.\n").unwrap();
    std::fs::write(dir.path().join("logo.png"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let mock = MockModel::start(vec![MockResponse::sse(&fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let mut command = tandem(dir.path());
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
    command.args(["review", "--json", "--level", "thorough"]);
    let output = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("skipped logo.png (binary); with the rules of .tandem/REVIEW.md."), "{stderr}");
    let request = &mock.requests()[0].body;
    let mut tools: Vec<&str> = request["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    tools.sort();
    assert!(tools.contains(&"report_finding") && tools.contains(&"read_file") && tools.contains(&"grep_search"), "{tools:?}");
    for writer in ["edit_file", "write_file", "run_shell", "agent", "todo_write"] {
        assert!(!tools.contains(&writer), "{writer} offered in a review: {tools:?}");
    }
    let prompt = request["messages"].to_string();
    assert!(prompt.contains("This is a thorough review"), "{prompt}");
    assert!(prompt.contains("Division must be checked."), "{prompt}");
    assert!(prompt.contains("+    let q = a / b;"), "{prompt}");
    assert!(prompt.contains("logo.png (binary)"), "{prompt}");
}

#[tokio::test]
async fn nothing_to_review_says_so_with_exit_code_3() {
    let dir = repo();
    git(dir.path(), &["commit", "-qam", "two"]);
    let mut command = scripted(tandem(dir.path()), dir.path(), json!({"turns": []}));
    command.args(["review", "--json"]);
    let output = command.output().await.unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(output.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&output.stderr).trim(), "tandem review: Nothing to review: the uncommitted changes hold no changes.");
    // A revision that is no revision is an error, never an option of git's.
    let mut command = scripted(tandem(dir.path()), dir.path(), json!({"turns": []}));
    command.args(["review", "--json", "--branch", "--output=/tmp/x"]);
    let output = command.output().await.unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
}
