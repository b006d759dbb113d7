//! Code intelligence where no editor answers: `tandem ask` starts the
//! language servers of `lspServers` itself (real pyright from npm, as
//! `.ci/run` installs it; `TANDEM_PYRIGHT`), opens the files the agent
//! reads, adds the new diagnostics to an edit's result and answers
//! `code_intel` — the same answers Neovim's pyright gives in
//! tests/editors/nvim.rs. And the faults: a project server nobody approved,
//! a server that cannot start, one that never answers, a file no server
//! handles. And `tandem lsp` for an editor without Tandem's plugin (eglot,
//! Kakoune: no `codeIntel` in its `initializationOptions`): the same
//! servers answer, and with none configured the tool is not offered.

#![allow(clippy::unwrap_used)]

use crate::common::lsp_client;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const LIB_PY: &str = "def greet(name: str) -> str:\n    return \"Hello, \" + name\n";
const APP_PY: &str = "from lib import greet\n\nprint(greet(\"world\"))\nprint(greet(\"again\"))\n";

fn pyright(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("TANDEM_PYRIGHT").map(PathBuf::from).filter(|p| p.is_file());
    if found.is_none() {
        assert!(std::env::var_os("TANDEM_REQUIRE_PYRIGHT").is_none(), "TANDEM_REQUIRE_PYRIGHT is set but TANDEM_PYRIGHT names no file");
        eprintln!("{test}: skipped, no pyright-langserver (set TANDEM_PYRIGHT)");
    }
    found
}

/// A project with lib.py, app.py and `.tandem/settings.json` holding `settings`.
fn project(settings: Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::create_dir(root.join(".tandem")).unwrap();
    std::fs::write(root.join(".tandem/settings.json"), settings.to_string()).unwrap();
    std::fs::write(root.join("lib.py"), LIB_PY).unwrap();
    std::fs::write(root.join("app.py"), APP_PY).unwrap();
    (dir, root)
}

/// `tandem ask --json` with the scripted model; the tool results' texts.
fn ask(root: &Path, turns: Value, args: &[&str]) -> (Vec<String>, String) {
    let script = root.join(".git/script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let data = root.join(".git/data");
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .current_dir(root)
        // The project's settings are the test's own: the folder is trusted.
        .args(["ask", "--json", "--permission-mode", "acceptEdits", "--trust"])
        .args(args)
        .arg("look around")
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script)
        .env("XDG_DATA_HOME", &data)
        .env("HOME", root.join(".git/home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let results = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .collect();
    (results, stderr)
}

/// pyright for .py files. A fresh `tandem ask` starts it cold (it reads
/// typeshed's builtins first, seconds on a loaded machine), so the bound on
/// the diagnostics wait is raised: the wait ends as soon as pyright
/// publishes for the edited version.
fn python(pyright: &Path) -> Value {
    json!({
        "timeouts": {"diagnosticsMs": 30000},
        "lspServers": {"python": {"command": [pyright, "--stdio"], "filetypes": ["py"]}}
    })
}

fn load() -> Value {
    json!({"text": "Loading the tool.", "tool_calls": [{"name": "tool_search", "input": {"query": "select:code_intel"}}]})
}

/// The same run as Neovim's: break app.py, then references and definition.
#[test]
fn tandem_ask_answers_code_intel_from_the_servers_it_starts() {
    let Some(pyright) = pyright("tandem_ask_answers_code_intel_from_the_servers_it_starts") else { return };
    let (_dir, root) = project(python(&pyright));
    let turns = json!([
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "app.py"}}]},
        {"text": "Breaking it.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet(\"again\")", "new_string": "greet(42)"}}]},
        load(),
        {"text": "Who calls greet?", "tool_calls": [{"name": "code_intel", "input": {"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "greet"}}]},
        {"text": "Where is it?", "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "greet"}}]},
        {"text": "What is it?", "tool_calls": [{"name": "code_intel", "input": {"operation": "hover", "file_path": "app.py", "line": 3, "symbol": "greet"}}]},
        {"text": "And the errors?", "tool_calls": [{"name": "code_intel", "input": {"operation": "diagnostics", "file_path": "app.py"}}]},
        {"text": "Not there.", "tool_calls": [{"name": "code_intel", "input": {"operation": "hover", "file_path": "app.py", "line": 3, "symbol": "great"}}]},
        {"text": "Done."}
    ]);
    // The project's server starts only once approved on the command line.
    let (results, _) = ask(&root, turns, &["--lsp-approve", "python"]);
    let edit = &results[1];
    assert!(edit.contains("Diagnostics after the edit: app.py: 1 error, 0 warnings (1 new)"), "{edit}");
    assert!(edit.contains("app.py:4:13: error [Pyright reportArgumentType] (new): Argument of type \"Literal[42]\""), "{edit}");
    let mut references: Vec<&str> = results[3].lines().collect();
    references.sort_by_key(|l| (!l.starts_with("lib.py"), l.split(':').nth(1).and_then(|n| n.parse::<u32>().ok()).unwrap_or(0)));
    expect_test::expect![[r#"
        lib.py:1:5: def greet(name: str) -> str:
        app.py:1:17: from lib import greet
        app.py:3:7: print(greet("world"))
        app.py:4:7: print(greet(42))"#]]
    .assert_eq(&references.join("\n"));
    assert_eq!(results[4], "lib.py:1:5: def greet(name: str) -> str:");
    assert!(results[5].contains("def greet(name: str) -> str"), "{}", results[5]);
    assert!(results[6].starts_with("app.py: 1 error, 0 warnings\napp.py:4:13: error [Pyright reportArgumentType]: Argument"), "{}", results[6]);
    assert!(results[7].starts_with("Error: \"great\" is not on line 3 of app.py. That line has \"print\", \"greet\", \"world\""), "{}", results[7]);
}

/// A project's lspServers entry runs a command the repository chose: not
/// started without the user's approval, and the result says how to give it.
/// The approval given once is remembered for the workspace.
#[test]
fn a_project_language_server_needs_approval() {
    let (_dir, root) = project(json!({"lspServers": {"python": {"command": ["touch", "started"], "filetypes": ["py"]}}}));
    let turns = json!([
        load(),
        {"text": "Where?", "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "greet"}}]},
        {"text": "Done."}
    ]);
    let (results, _) = ask(&root, turns.clone(), &[]);
    assert!(results[1].contains("lspServers.python comes from the project's settings"), "{}", results[1]);
    assert!(results[1].contains("tandem ask --lsp-approve python"), "{}", results[1]);
    assert!(!root.join("started").exists(), "the command did not run");
    let (results, _) = ask(&root, turns.clone(), &["--lsp-approve", "all"]);
    assert!(root.join("started").exists(), "approved, it ran");
    assert!(results[1].contains("failed to start"), "`touch` is no language server: {}", results[1]);
    std::fs::remove_file(root.join("started")).unwrap();
    let (_, _) = ask(&root, turns, &[]);
    assert!(root.join("started").exists(), "the approval was remembered");
}

/// Faults are tool results the model reads, never a failed run: a command
/// that does not exist, a server that never answers (the timeout), a file
/// no server handles (the message names the setting), a position past the
/// end. Settings from the user's own file need no approval.
#[test]
fn language_server_faults_are_results() {
    let (_dir, root) = project(json!({}));
    let home = root.join(".git/home/.tandem");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        json!({
            "timeouts": {"codeIntelMs": 500},
            "lspServers": {
                "python": {"command": ["sleep", "30"], "filetypes": ["py"]},
                "rust": {"command": ["/nonexistent/rust-analyzer"], "filetypes": ["rs"]},
                "broken": {"command": [], "filetypes": ["x"]}
            }
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(root.join("main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    let at = |file: &str, symbol: &str| json!({"name": "code_intel", "input": {"operation": "definition", "file_path": file, "line": 1, "symbol": symbol}});
    let turns = json!([
        load(),
        {"text": "Python.", "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 1, "symbol": "greet"}}]},
        {"text": "Rust.", "tool_calls": [at("main.rs", "main")]},
        {"text": "Rust again.", "tool_calls": [at("main.rs", "main")]},
        {"text": "Text.", "tool_calls": [at("notes.txt", "hello")]},
        {"text": "Past the end.", "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "main.rs", "line": 7, "symbol": "main"}}]},
        {"text": "Done."}
    ]);
    let (results, stderr) = ask(&root, turns, &[]);
    assert!(stderr.contains("lspServers.broken: \"command\" is empty; the server is ignored"), "{stderr}");
    expect_test::expect!["Error: sleep (lspServers.python) failed to start: did not answer initialize within 0.5 s"].assert_eq(&results[1]);
    assert!(results[2].starts_with("Error: rust-analyzer (lspServers.rust) could not be started (/nonexistent/rust-analyzer): "), "{}", results[2]);
    assert!(results[3].starts_with("Error: rust-analyzer (lspServers.rust) could not be started"), "tried again: {}", results[3]);
    expect_test::expect![[r#"Error: no language server is configured for .txt files. Configured in lspServers: python (py), rust (rs). Add one to "lspServers" in .tandem/settings.json, e.g. {"lspServers": {"rust": {"command": ["rust-analyzer"], "filetypes": ["rs"]}}}."#]]
        .assert_eq(&results[4]);
    expect_test::expect!["Error: line 7 is past the end of main.rs, which has 2 lines."].assert_eq(&results[5]);
}

/// A language server that answers `initialize`, counts its starts, and on
/// the first question exits with status 3 (`crash`) or never answers it
/// (`silent`).
const CRASHING_SERVER: &str = r#"
import json, sys
mode = sys.argv[1]
open("starts", "a").write("x")
def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line.strip() == b"":
            break
        name, value = line.decode().split(":", 1)
        headers[name.lower()] = value.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))
while True:
    message = read()
    if message.get("method") == "initialize":
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {}}}).encode()
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()
    elif message.get("method") == "textDocument/definition" and mode == "crash":
        sys.exit(3)
"#;

/// A server that crashes is started again on the next call, at most
/// MAX_RESTARTS (3) times; then the result says it is not started again.
#[test]
fn a_crashing_language_server_is_restarted_a_bounded_number_of_times() {
    let (_dir, root) = project(json!({}));
    std::fs::write(root.join(".git/server.py"), CRASHING_SERVER).unwrap();
    let home = root.join(".git/home/.tandem");
    std::fs::create_dir_all(&home).unwrap();
    let server = root.join(".git/server.py");
    std::fs::write(home.join("settings.json"), json!({"lspServers": {"python": {"command": ["python3", server, "crash"], "filetypes": ["py"]}}}).to_string()).unwrap();
    let ask_definition = |i: usize| json!({"text": format!("Where? (try {i})"), "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "greet"}}]});
    let mut turns = vec![load()];
    turns.extend((1..=5).map(ask_definition));
    turns.push(json!({"text": "Done."}));
    let (results, _) = ask(&root, Value::Array(turns), &[]);
    for crashed in &results[1..5] {
        assert!(crashed.starts_with("Error: python3 (lspServers.python) stopped while answering definition (the language server exited"), "{crashed}");
        assert!(crashed.contains("exit status: 3") && crashed.ends_with("it is started again on the next call"), "{crashed}");
    }
    assert!(results[5].contains("crashed 4 times") && results[5].contains("not started again until Tandem restarts"), "{}", results[5]);
    assert_eq!(std::fs::read_to_string(root.join("starts")).unwrap(), "xxxx", "one start and three restarts");
}

/// A server that started but never answers a question: each call ends at
/// `timeouts.codeIntelMs` with a result saying so, and the server, alive,
/// is not restarted. (The wait is 3 s, not less: it bounds `initialize`
/// too, and Python starting on a loaded 2-core machine took over 0.5 s.)
#[test]
fn a_language_server_that_never_answers_is_a_timeout() {
    let (_dir, root) = project(json!({}));
    std::fs::write(root.join(".git/server.py"), CRASHING_SERVER).unwrap();
    let home = root.join(".git/home/.tandem");
    std::fs::create_dir_all(&home).unwrap();
    let server = root.join(".git/server.py");
    let settings = json!({"timeouts": {"codeIntelMs": 3000}, "lspServers": {"python": {"command": ["python3", server, "silent"], "filetypes": ["py"]}}});
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    let definition = json!({"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "greet"}});
    let references = json!({"name": "code_intel", "input": {"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "greet"}});
    let turns = json!([
        load(),
        {"text": "Where?", "tool_calls": [definition]},
        {"text": "Who?", "tool_calls": [references]},
        {"text": "Done."}
    ]);
    let (results, _) = ask(&root, turns, &[]);
    expect_test::expect!["Error: python3 (lspServers.python) did not answer definition within 3 s (timeouts.codeIntelMs). Try again, or use grep_search."]
        .assert_eq(&results[1]);
    expect_test::expect!["Error: python3 (lspServers.python) did not answer references within 3 s (timeouts.codeIntelMs). Try again, or use grep_search."]
        .assert_eq(&results[2]);
    assert_eq!(std::fs::read_to_string(root.join("starts")).unwrap(), "x", "started once");
}

/// `tandem lsp` for an editor whose plugin does not answer `tandem/codeIntel`
/// (eglot, Kakoune): with pyright in the user's `lspServers`, an edit of the
/// open buffer (applied by the editor) gets pyright's new error, and
/// `references` is pyright's — the answers of the headless run above.
#[test]
fn an_editor_without_code_intel_gets_the_lsp_servers_answers() {
    let Some(pyright) = pyright("an_editor_without_code_intel_gets_the_lsp_servers_answers") else { return };
    let f = lsp_client::Fixture::new(&[("lib.py", LIB_PY), ("app.py", APP_PY)]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".tandem")).unwrap();
    std::fs::write(home.join(".tandem/settings.json"), python(&pyright).to_string()).unwrap();
    let turns = json!([
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "app.py"}}]},
        {"text": "Breaking it.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet(\"again\")", "new_string": "greet(42)"}}]},
        load(),
        {"text": "Who calls greet?", "tool_calls": [{"name": "code_intel", "input": {"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "greet"}}]},
        {"text": "Done."}
    ]);
    let home = home.to_string_lossy().to_string();
    let mut client = f.start_with_env(turns, json!({}), json!({"tandem": {"permissionMode": "acceptEdits"}}), &[("HOME", home.as_str())]);
    let uri = client.open(&f.path("app.py"), APP_PY);
    let ask = client.send_request("workspace/executeCommand", lsp_client::ask_params("Break app.py"));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(client.text(&uri), APP_PY.replace("greet(\"again\")", "greet(42)"), "the edit is in the buffer");
    let results: Vec<String> = client.tool_results().into_iter().map(|(_, text)| text).collect();
    let edit = &results[1];
    assert!(edit.contains("Diagnostics after the edit: app.py: 1 error, 0 warnings (1 new)"), "{edit}");
    assert!(edit.contains("app.py:4:13: error [Pyright reportArgumentType] (new): Argument of type \"Literal[42]\""), "{edit}");
    let mut references: Vec<&str> = results[3].lines().collect();
    references.sort();
    expect_test::expect![[r#"
        app.py:1:17: from lib import greet
        app.py:3:7: print(greet("world"))
        app.py:4:7: print(greet(42))
        lib.py:1:5: def greet(name: str) -> str:"#]]
    .assert_eq(&references.join("\n"));
    client.shutdown();
}

/// An editor whose plugin predates code intelligence, with no `lspServers`:
/// `code_intel` is not offered (tool_search does not find it, a call is an
/// unknown tool) and an edit's result has no diagnostics.
#[test]
fn an_editor_without_code_intel_and_no_lsp_servers_is_not_offered_the_tool() {
    let f = lsp_client::Fixture::new(&[("app.py", APP_PY)]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home = home.to_string_lossy().to_string();
    let turns = json!([
        load(),
        {"text": "Anyway.", "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "greet"}}]},
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "app.py"}}]},
        {"text": "Breaking it.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet(\"again\")", "new_string": "greet(42)"}}]},
        {"text": "Done."}
    ]);
    let mut client = f.start_with_env(turns, json!({}), json!({"tandem": {"permissionMode": "acceptEdits"}}), &[("HOME", home.as_str())]);
    client.open(&f.path("app.py"), APP_PY);
    let ask = client.send_request("workspace/executeCommand", lsp_client::ask_params("Where is greet?"));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    assert_eq!(results[0].1, "No matching deferred tools found.", "{results:?}");
    assert!(results[1].0 && results[1].1.starts_with("Unknown tool: code_intel."), "{results:?}");
    assert!(results[3].1.starts_with("Successfully edited app.py"), "{results:?}");
    assert!(!results[3].1.contains("Diagnostics"), "nobody checks the file: {results:?}");
    client.shutdown();
}
