//! Settings files, read by the real binary: `tandem ask` and `tandem lsp`
//! take the provider from `.tandem/settings.json` with nothing in the
//! environment; each file overrides the one below it; a broken file is
//! reported (naming the file and the field), and a file whose permission
//! rules cannot be read stops the run until it is fixed (fail closed).

#![allow(clippy::unwrap_used)]

use crate::common::lsp_client;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lsp_client::LspClient;
use serde_json::{json, Value};

/// A workspace and a home folder of its own (so the user's real
/// `~/.tandem/settings.json` never leaks into a test).
struct Fixture {
    _temp: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let home = base.join("home");
        let root = base.join("work");
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        std::fs::create_dir_all(root.join(".tandem")).unwrap();
        Fixture { _temp: temp, home, root }
    }

    /// A script whose only turn answers `text`.
    fn script(&self, name: &str, text: &str) -> String {
        let path = self.home.join(name);
        std::fs::write(&path, json!({"turns": [{"text": text}]}).to_string()).unwrap();
        path.to_string_lossy().to_string()
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
    }

    fn user(&self) -> PathBuf {
        self.home.join(".tandem/settings.json")
    }
    fn project(&self) -> PathBuf {
        self.root.join(".tandem/settings.json")
    }
    fn local(&self) -> PathBuf {
        self.root.join(".tandem/settings.local.json")
    }

    /// `tandem ask --json PROMPT` with no provider in the environment.
    fn ask(&self) -> (Vec<Value>, String, bool) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).env("HOME", &self.home).env("XDG_DATA_HOME", self.home.join("data"));
        for var in crate::common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        // The test's project files are the user's own: the folder is trusted.
        command.args(["ask", "--json", "--trust", "hello"]).stdin(Stdio::null());
        let output = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let events = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        (events, String::from_utf8_lossy(&output.stderr).to_string(), output.status.success())
    }
}

fn final_text(events: &[Value]) -> String {
    events.iter().find(|e| e["type"] == "end").map(|e| e["text"].as_str().unwrap_or("").to_string()).unwrap_or_default()
}

#[test]
fn settings_file_configures_tandem_ask() {
    let f = Fixture::new();
    let script = f.script("project.json", "configured by .tandem/settings.json");
    f.write(&f.project(), &json!({"provider": "scripted", "script": script}).to_string());
    let (events, stderr, ok) = f.ask();
    assert!(ok, "{stderr}");
    assert_eq!(final_text(&events), "configured by .tandem/settings.json");
}

#[test]
fn each_settings_file_overrides_the_one_below() {
    let f = Fixture::new();
    let user = f.script("user.json", "from the user's settings");
    let project = f.script("project.json", "from the project's settings");
    let local = f.script("local.json", "from the local settings");
    f.write(&f.user(), &json!({"provider": "scripted", "script": user}).to_string());
    assert_eq!(final_text(&f.ask().0), "from the user's settings");
    f.write(&f.project(), &json!({"script": project}).to_string());
    assert_eq!(final_text(&f.ask().0), "from the project's settings");
    f.write(&f.local(), &json!({"script": local}).to_string());
    assert_eq!(final_text(&f.ask().0), "from the local settings");
    // An empty string is "not set": the project's value shows through.
    f.write(&f.local(), &json!({"script": ""}).to_string());
    assert_eq!(final_text(&f.ask().0), "from the project's settings");
}

#[test]
fn a_bad_field_is_reported_and_the_run_goes_on() {
    let f = Fixture::new();
    let script = f.script("s.json", "still running");
    f.write(&f.user(), &json!({"provider": "scripted", "script": script}).to_string());
    f.write(&f.local(), &json!({"permissionMode": "yolo", "maxTurns": "many", "permissions": {"deny": ["WebSearch"]}}).to_string());
    let (events, stderr, ok) = f.ask();
    assert!(ok, "{stderr}");
    assert_eq!(final_text(&events), "still running");
    let local = f.local().display().to_string();
    assert!(stderr.contains(&format!("{local}: field \"permissionMode\": unknown permission mode \"yolo\"")), "{stderr}");
    assert!(stderr.contains(&format!("{local}: field \"maxTurns\"")), "{stderr}");
    assert!(stderr.contains(&format!("{local}: field \"permissions.deny\": \"WebSearch\" names no tool Tandem knows")), "{stderr}");
}

#[test]
fn a_settings_file_that_does_not_parse_stops_the_run_before_anything_runs() {
    let f = Fixture::new();
    // The model would run a command at once: it must not.
    let script = f.home.join("touch.json");
    let turns = json!({"turns": [{"tool_calls": [{"name": "run_shell", "input": {"command": "touch ran.txt"}}]}, {"text": "done"}]});
    f.write(&script, &turns.to_string());
    f.write(&f.user(), &json!({"provider": "scripted", "script": script, "permissionMode": "bypassPermissions"}).to_string());
    f.write(&f.project(), "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\"],}\n}");
    let (events, stderr, ok) = f.ask();
    assert!(!ok, "the run must not start: {stderr}");
    assert!(events.is_empty(), "{events:?}");
    let project = f.project().display().to_string();
    assert!(stderr.contains(&format!("tandem: {project}:2:42: not valid JSON")), "{stderr}");
    assert!(stderr.contains("nothing runs until the file is fixed"), "{stderr}");
    assert!(!f.root.join("ran.txt").exists(), "a command ran");
    // A deny list that is not a list is as unreadable.
    f.write(&f.project(), &json!({"permissions": {"deny": "Bash(rm:*)"}}).to_string());
    let (_, stderr, ok) = f.ask();
    assert!(!ok && stderr.contains("field \"permissions.deny\": expected a list"), "{stderr}");
    assert!(!f.root.join("ran.txt").exists(), "a command ran");
    // Fixed, the run starts.
    f.write(&f.project(), &json!({"permissions": {"deny": ["Bash(rm:*)"]}}).to_string());
    let (_, stderr, ok) = f.ask();
    assert!(ok, "{stderr}");
    assert!(f.root.join("ran.txt").exists(), "{stderr}");
}

fn lsp(f: &Fixture) -> LspClient {
    let home = f.home.to_string_lossy().to_string();
    let data = f.home.join("data").to_string_lossy().to_string();
    LspClient::start_trusted(&f.root, &[("HOME", &home), ("XDG_DATA_HOME", &data), ("TANDEM_SCRIPT", ""), ("TANDEM_MODEL", "")])
}

#[test]
fn settings_file_configures_tandem_lsp() {
    let f = Fixture::new();
    let project = f.script("project.json", "the language server read the project settings");
    let editor = f.script("editor.json", "the editor's settings win");
    f.write(&f.project(), &json!({"provider": "scripted", "script": project}).to_string());
    let mut client = lsp(&f);
    client.initialize(json!({}), json!({}));
    let answer = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "hi"}]}));
    assert_eq!(answer["result"]["text"], "the language server read the project settings", "{answer}");
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"script": editor}}}));
    let answer = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "hi"}]}));
    assert_eq!(answer["result"]["text"], "the editor's settings win", "{answer}");
    client.shutdown();
}

#[test]
fn a_broken_settings_file_refuses_asks_in_the_editor_until_it_is_fixed() {
    let f = Fixture::new();
    f.write(&f.project(), "not json at all");
    let script = f.script("s.json", "serving again");
    let mut client = lsp(&f);
    client.initialize(json!({}), json!({"tandem": {"provider": "scripted", "script": script, "timeouts": {"promptMs": "soon"}}}));
    let error = client.wait_for("an error message", |m| m["method"] == "window/showMessage" && m["params"]["type"] == 1);
    let message = error["params"]["message"].as_str().unwrap().to_string();
    assert!(message.contains(&format!("{}:1:2: not valid JSON", f.project().display())), "{message}");
    // Warnings come in no fixed order (the MCP configuration's about the
    // same broken file can come first): the one about the editor's field.
    let warning = client.wait_for("the editor settings' warning", |m| {
        m["method"] == "window/showMessage"
            && m["params"]["type"] == 2
            && m["params"]["message"].as_str().is_some_and(|t| t.contains("editor settings: field \"timeouts\": timeouts.promptMs"))
    });
    assert_eq!(warning["params"]["type"], 2, "{warning}");
    let answer = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "hi"}]}));
    let refused = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(refused.contains("Tandem does not run") && refused.contains("settings.json:1:2"), "{answer}");
    // Fixed on disk: the next ask reads it again, no restart.
    f.write(&f.project(), "{}");
    let answer = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "hi"}]}));
    assert_eq!(answer["result"]["text"], "serving again", "{answer}");
    client.shutdown();
}

#[test]
fn the_editor_warns_when_permissions_are_bypassed() {
    let f = Fixture::new();
    let mut client = lsp(&f);
    client.initialize(json!({}), json!({"tandem": {"permissionMode": "bypassPermissions"}}));
    let shown = client.wait_for("window/showMessage", |m| m["method"] == "window/showMessage");
    assert_eq!(shown["params"]["type"], 2);
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.contains("bypassPermissions: Tandem edits files and runs every command without asking"), "{message}");
    client.shutdown();
}
