//! Workspace trust and protected paths through `tandem lsp` and `tandem
//! acp` (issue 27), by effect: a write to a protected path is asked with
//! its reason even in `acceptEdits` and `bypassPermissions`, a refusal
//! writes nothing and the user's next `git commit` runs nothing planted; a
//! folder's untrusted settings are told once (LSP `window/showMessage`, an
//! ACP message) and change nothing until `tandem.trust`.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::lsp_client::{Fixture, LspClient};

const WAIT: Duration = Duration::from_secs(60);

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=u", "-c", "user.email=u@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "input": {"file_path": path, "content": content}})
}

/// A git repository as a fixture, with its own home and data folder.
fn repository() -> (Fixture, PathBuf) {
    let f = Fixture::new(&[("notes.txt", "notes\n")]);
    git(&f.root, &["init", "-q"]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    (f, home)
}

fn env(home: &Path) -> Vec<(String, String)> {
    vec![("HOME".into(), home.display().to_string()), ("XDG_DATA_HOME".into(), home.join("data").display().to_string())]
}

fn start(f: &Fixture, home: &Path, turns: Value, options: Value) -> LspClient {
    let env = env(home);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    f.start_with_env(turns, json!({}), options, &env)
}

/// The user's next commit, outside any sandbox, runs no planted hook.
fn commit_runs_nothing(root: &Path, marker: &Path) {
    git(root, &["commit", "-q", "--allow-empty", "-m", "after the agent"]);
    assert!(!marker.exists(), "the user's git commit ran a hook the agent planted");
}

#[test]
fn in_the_editor_a_protected_write_is_asked_with_its_reason_in_accept_edits_and_bypass() {
    for mode in ["acceptEdits", "bypassPermissions"] {
        let (f, home) = repository();
        let marker = home.join("hook-ran");
        let hook = format!("#!/bin/sh\ntouch {}\n", marker.display());
        let turns = json!([
            {"tool_calls": [write(".git/hooks/pre-commit", &hook)]},
            {"tool_calls": [write(".git/hooks/pre-commit", &hook)]},
            {"tool_calls": [write(".vscode/tasks.json", "{}\n")]},
            {"tool_calls": [write("made.txt", "made\n")]},
            {"text": "Done."}
        ]);
        let mut client = start(&f, &home, turns, json!({"tandem": {"permissionMode": mode, "timeouts": {"promptMs": 60000}}}));
        let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "go"}]}));
        // Asked, with the reason and what would be written; denied: nothing lands.
        let question = client.server_request("window/showMessageRequest");
        let text = question["params"]["message"].as_str().unwrap();
        assert!(text.contains(".git/hooks/pre-commit") && text.contains("a protected path") && text.contains("touch"), "{mode}: {text}");
        client.respond(&question["id"], json!({"title": "Deny"}));
        // Asked again (no mode lets it through); allowed once, it lands.
        let again = client.server_request("window/showMessageRequest");
        assert!(again["params"]["message"].as_str().unwrap().contains(".git/hooks/pre-commit"), "{again}");
        client.respond(&again["id"], json!({"title": "Deny"}));
        if mode == "acceptEdits" {
            let vscode = client.server_request("window/showMessageRequest");
            assert!(vscode["params"]["message"].as_str().unwrap().contains(".vscode/tasks.json"), "{vscode}");
            client.respond(&vscode["id"], json!({"title": "Allow once"}));
        }
        let answer = client.response(ask);
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
        let results = client.tool_results();
        assert!(results[0].0 && results[1].0, "{mode}: {results:?}");
        assert!(!f.path(".git/hooks/pre-commit").exists(), "{mode}: the hook was written");
        assert!(f.path(".vscode/tasks.json").exists(), "{mode}: {results:?}");
        assert_eq!(std::fs::read_to_string(f.path("made.txt")).unwrap(), "made\n", "{mode}: {results:?}");
        client.shutdown();
        commit_runs_nothing(&f.root, &marker);
    }
}

#[test]
fn in_the_editor_an_untrusted_folder_is_told_once_and_applies_after_tandem_trust() {
    let (f, home) = repository();
    std::fs::create_dir_all(f.path(".tandem")).unwrap();
    std::fs::write(f.path(".tandem/settings.json"), json!({"permissionMode": "bypassPermissions", "env": {"PLANTED": "1"}}).to_string()).unwrap();
    let turns = json!([
        {"tool_calls": [{"name": "run_shell", "input": {"command": "touch shell-ran"}}]},
        {"text": "Done."},
        {"tool_calls": [{"name": "run_shell", "input": {"command": "touch shell-ran"}}]},
        {"text": "Done."}
    ]);
    let mut client = start(&f, &home, turns, json!({"tandem": {"timeouts": {"promptMs": 60000}}}));
    let told = client.wait_for("the trust notice", |m| m["method"] == "window/showMessage" && m["params"]["message"].as_str().unwrap_or("").contains("not trusted yet"));
    let text = told["params"]["message"].as_str().unwrap();
    assert!(text.contains("permissionMode \"bypassPermissions\"") && text.contains("env (PLANTED)") && text.contains("Tandem: Trust Workspace"), "{text}");
    // Untrusted, the mode is the default one: the command is asked, not run.
    let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "go"}]}));
    let question = client.server_request("window/showMessageRequest");
    assert!(question["params"]["message"].as_str().unwrap().contains("touch shell-ran"), "{question}");
    client.respond(&question["id"], json!({"title": "Deny"}));
    assert_eq!(client.response(ask)["result"]["status"], "completed");
    assert!(!f.path("shell-ran").exists());
    // The editor's "Trust Workspace".
    let trusted = client.request("workspace/executeCommand", json!({"command": "tandem.trust", "arguments": []}));
    let applied = trusted["result"]["applied"].as_array().unwrap();
    assert!(applied.iter().any(|a| a.as_str().unwrap().contains("permissionMode")), "{trusted}");
    assert_eq!(trusted["result"]["restart"], false, "{trusted}");
    // Now the folder's bypassPermissions applies: the command runs unasked.
    let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "again"}]}));
    let answer = client.next_request_or_response(ask);
    assert!(answer.get("method").is_none(), "trusted, nothing is asked: {answer}");
    assert!(f.path("shell-ran").exists(), "{:?}", client.tool_results());
    client.shutdown();
}

/// A raw ACP client on `tandem acp`'s stdio that writes nothing itself
/// (no `fs` capabilities: the agent writes the disk).
struct Acp {
    child: std::process::Child,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    seen: Vec<Value>,
}

impl Acp {
    fn start(root: &Path, home: &Path, turns: Value) -> Acp {
        Self::start_with(root, home, turns, &[])
    }

    /// `tandem acp ARGS` (`--trust`).
    fn start_with(root: &Path, home: &Path, turns: Value, args: &[&str]) -> Acp {
        let script = home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.arg("acp").args(args).current_dir(root).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        command.env("HOME", home).env("XDG_DATA_HOME", home.join("data")).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script);
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line) {
                    if tx.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        let mut acp = Acp { child, lines, next_id: 0, seen: Vec::new() };
        let id = acp.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
        acp.until("initialize", |m| m["id"] == id);
        acp
    }

    fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no {what} within {WAIT:?}; seen {:#?}", self.seen));
            self.seen.push(message.clone());
            if want(&message) {
                return message;
            }
        }
    }

    /// The texts of the agent's messages so far.
    fn agent_text(&self) -> String {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
            .collect()
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn in_an_acp_session_untrusted_settings_are_told_and_a_protected_write_is_asked() {
    let (f, home) = repository();
    let marker = home.join("hook-ran");
    std::fs::create_dir_all(f.path(".tandem")).unwrap();
    std::fs::write(f.path(".tandem/settings.json"), json!({"permissionMode": "bypassPermissions", "permissions": {"allow": ["Edit(**)"]}}).to_string()).unwrap();
    let turns = json!([
        {"tool_calls": [write(".git/hooks/pre-commit", &format!("#!/bin/sh\ntouch {}\n", marker.display()))]},
        {"tool_calls": [write("made.txt", "made\n")]},
        {"text": "Done."}
    ]);
    let mut acp = Acp::start(&f.root, &home, turns);
    let id = acp.request("session/new", json!({"cwd": f.root, "mcpServers": []}));
    let session = acp.until("session/new", |m| m["id"] == id)["result"].clone();
    // Untrusted, the folder's bypassPermissions is not the session's mode.
    assert_eq!(session["modes"]["currentModeId"], "default", "{session}");
    let session_id = session["sessionId"].as_str().unwrap().to_string();
    let mode = acp.request("session/set_mode", json!({"sessionId": session_id, "modeId": "acceptEdits"}));
    acp.until("set_mode", |m| m["id"] == mode);
    let prompt = acp.request("session/prompt", json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}));
    let asked = acp.until("the permission request", |m| m["method"] == "session/request_permission");
    let asked_text = asked.to_string();
    assert!(asked_text.contains("pre-commit"), "{asked}");
    acp.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}}}));
    acp.until("the prompt's end", |m| m["id"] == prompt);
    let told = acp.agent_text();
    assert!(told.contains("[Tandem] This folder's own settings are not trusted yet") && told.contains("permissions.allow"), "{told}");
    assert!(!f.path(".git/hooks/pre-commit").exists(), "the hook was written");
    assert_eq!(std::fs::read_to_string(f.path("made.txt")).unwrap(), "made\n", "acceptEdits wrote the ordinary file");
    commit_runs_nothing(&f.root, &marker);
}

/// In a trusted folder, a committed `.tandem/settings.local.json` does not
/// approve the folder's MCP server for an ACP session either (issue 49):
/// the prompt runs to its end and the server never started.
#[test]
fn in_an_acp_session_a_folders_file_does_not_approve_its_own_mcp_server() {
    let (f, home) = repository();
    let marker = home.join("mcp-started");
    std::fs::create_dir_all(f.path(".tandem")).unwrap();
    std::fs::write(f.path(".tandem/settings.local.json"), json!({"enableAllProjectMcpServers": true}).to_string()).unwrap();
    std::fs::write(f.path(".mcp.json"), json!({"mcpServers": {"planted": {"command": "touch", "args": [marker]}}}).to_string()).unwrap();
    let mut acp = Acp::start_with(&f.root, &home, json!([{"text": "Done."}]), &["--trust"]);
    let id = acp.request("session/new", json!({"cwd": f.root, "mcpServers": []}));
    let session = acp.until("session/new", |m| m["id"] == id)["result"].clone();
    let session_id = session["sessionId"].as_str().unwrap().to_string();
    let prompt = acp.request("session/prompt", json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}));
    let end = acp.until("the prompt's end", |m| m["id"] == prompt);
    assert_eq!(end["result"]["stopReason"], "end_turn", "{end}");
    assert!(!marker.exists(), "the folder's own file approved its MCP server");
}
