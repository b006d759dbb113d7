//! Plan mode and sub-agents in the editor: the real `tandem lsp` with the
//! scripted model and a test client that answers `window/showDocument`, the
//! "Execute" / "Execute and accept edits" / "Keep planning" prompt, and a
//! sub-agent's permission prompts.

#![allow(clippy::unwrap_used)]

use crate::common::lsp_client;

use lsp_client::LspClient;
use serde_json::{json, Value};

struct Fixture {
    _temp: tempfile::TempDir,
    root: std::path::PathBuf,
}

fn start(turns: Value) -> (Fixture, LspClient) {
    start_with(turns, json!({"tandem": {"timeouts": {"promptMs": 30000}}}))
}

fn start_with(turns: Value, init: Value) -> (Fixture, LspClient) {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap().join("work");
    std::fs::create_dir(&root).unwrap();
    let script = temp.path().join("script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let script = script.to_string_lossy().to_string();
    let mut client = LspClient::start(&root, &[("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", &script), ("HOME", &root.to_string_lossy())]);
    let response = client.initialize(json!({"window": {"showDocument": {"support": true}}}), init);
    assert!(response.get("result").is_some(), "{response}");
    (Fixture { _temp: temp, root }, client)
}

fn call(name: &str, input: Value) -> Value {
    json!({"text": "", "tool_calls": [{"name": name, "input": input}]})
}

/// Enter plan mode, exit (the user answers `answer`), then write a new file.
fn run_with_answer(answer: &str) -> (Fixture, LspClient, Vec<(bool, String)>) {
    let (f, mut client) = start(json!([
        // Plan mode's tools are deferred: loaded first.
        call("tool_search", json!({"query": "select:enter_plan_mode"})),
        call("enter_plan_mode", json!({})),
        call("exit_plan_mode", json!({})),
        call("write_file", json!({"file_path": "out.txt", "content": "done\n"})),
        {"text": "Finished."}
    ]));
    let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "plan, then do it"}]}));
    let show = client.server_request("window/showDocument");
    let uri = show["params"]["uri"].as_str().unwrap().to_string();
    assert!(uri.contains("/work/.tandem/plans/plan-") && uri.ends_with(".md"), "{show}");
    client.respond(&show["id"], json!({"success": true}));
    let prompt = client.server_request("window/showMessageRequest");
    let titles: Vec<&str> = prompt["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Execute", "Execute and accept edits", "Keep planning"]);
    client.respond(&prompt["id"], json!({"title": answer}));
    // In the default mode a write is reviewed, unless the plan was accepted with its edits.
    let next = client.next_request_or_response(ask);
    let next = if next["method"] == "window/showMessageRequest" {
        assert!(next["params"]["message"].as_str().unwrap().starts_with("Tandem: apply edit to out.txt?"), "{next}");
        client.respond(&next["id"], json!({"title": "Apply"}));
        client.response(ask)
    } else {
        next
    };
    assert_eq!(next["result"]["status"], "completed", "{next}");
    // Past the tool_search result, as the tests below count.
    let results = client.tool_results().split_off(1);
    (f, client, results)
}

#[test]
fn execute_restores_the_mode_and_the_next_edit_is_reviewed() {
    let (f, client, results) = run_with_answer("Execute");
    assert_eq!(results[1], (false, "User approved the plan. Permission mode restored to: default\n\n## Approved Plan:\n(No plan file found)".to_string()));
    assert!(client.seen.iter().any(|m| m["method"] == "window/showMessageRequest" && m["params"]["message"].as_str().unwrap().starts_with("Tandem: apply edit to out.txt?")));
    assert_eq!(std::fs::read_to_string(f.root.join("out.txt")).unwrap(), "done\n");
    client.shutdown();
}

#[test]
fn execute_and_accept_edits_applies_the_next_edit_without_review() {
    let (f, client, results) = run_with_answer("Execute and accept edits");
    assert_eq!(results[1], (false, "User approved the plan. Permission mode set to: acceptEdits\n\n## Approved Plan:\n(No plan file found)".to_string()));
    let prompts = client.seen.iter().filter(|m| m["method"] == "window/showMessageRequest").count();
    assert_eq!(prompts, 1, "only the plan prompt");
    assert_eq!(std::fs::read_to_string(f.root.join("out.txt")).unwrap(), "done\n");
    client.shutdown();
}

#[test]
fn keep_planning_stays_in_plan_mode_and_says_so() {
    let (f, client, results) = run_with_answer("Keep planning");
    assert_eq!(results[1], (false, "User rejected the plan and wants to keep planning.\n\nUser feedback: (none given)".to_string()));
    assert_eq!(results[2], (true, "Blocked in plan mode: write_file".to_string()));
    assert!(!f.root.join("out.txt").exists());
    assert!(!client.seen.iter().any(|m| m["method"] == "tandem/textInput"), "only clients that set textInput are asked to type");
    client.shutdown();
}

/// A client that answers `tandem/textInput` (`textInput: true`, as the
/// Neovim plugin and the VS Code extension set) is asked what should change
/// after "Keep planning"; the typed text is the feedback the model gets.
/// Dismissed (`null`), the feedback falls back to the plan file's changes.
#[test]
fn keep_planning_collects_typed_feedback_from_a_client_that_answers_text_input() {
    for (typed, feedback) in [(json!("Split step 2 into two steps."), "Split step 2 into two steps."), (Value::Null, "(none given)")] {
        let (f, mut client) = start_with(
            json!([
                call("tool_search", json!({"query": "select:enter_plan_mode"})),
                call("enter_plan_mode", json!({})),
                call("exit_plan_mode", json!({})),
                {"text": "Replanning."}
            ]),
            json!({"tandem": {"textInput": true, "timeouts": {"promptMs": 30000}}}),
        );
        let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "plan it"}]}));
        let show = client.server_request("window/showDocument");
        client.respond(&show["id"], json!({"success": true}));
        let prompt = client.server_request("window/showMessageRequest");
        client.respond(&prompt["id"], json!({"title": "Keep planning"}));
        let input = client.server_request("tandem/textInput");
        assert_eq!(input["params"]["prompt"], "Tandem keeps planning. What should change in the plan?", "{input}");
        client.respond(&input["id"], json!({"text": typed}));
        let answer = client.response(ask);
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
        let results = client.tool_results().split_off(1);
        assert_eq!(results[1], (false, format!("User rejected the plan and wants to keep planning.\n\nUser feedback: {feedback}")));
        client.shutdown();
        drop(f);
    }
}

#[test]
fn a_sub_agent_in_the_editor_asks_the_same_user_and_its_edits_are_the_runs() {
    let (f, mut client) = start(json!([
        call("agent", json!({"description": "write it", "prompt": "Create new.txt", "type": "general"})),
        call("write_file", json!({"file_path": "new.txt", "content": "from the sub-agent\n"})),
        {"text": "Created new.txt."},
        {"text": "The sub-agent created new.txt."}
    ]));
    let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "delegate"}]}));
    // The general sub-agent itself is asked about, then its write is reviewed by the same user.
    let launch = client.server_request("window/showMessageRequest");
    client.respond(&launch["id"], json!({"title": "Allow once"}));
    let review = client.server_request("window/showMessageRequest");
    assert!(review["params"]["message"].as_str().unwrap().starts_with("Tandem: apply edit to new.txt?"), "{review}");
    client.respond(&review["id"], json!({"title": "Apply"}));
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let edits = answer["result"]["edits"].as_array().unwrap();
    assert!(edits.len() == 1 && edits[0]["uri"].as_str().unwrap().ends_with("/work/new.txt") && edits[0]["status"] == "written", "{answer}");
    assert_eq!(std::fs::read_to_string(f.root.join("new.txt")).unwrap(), "from the sub-agent\n");
    let nested: Vec<Value> = client.run_events().into_iter().filter(|e| e.get("parent").is_some()).collect();
    assert!(nested.iter().any(|e| e["type"] == "tool_call" && e["name"] == "write_file"), "{nested:?}");
    client.shutdown();
}
