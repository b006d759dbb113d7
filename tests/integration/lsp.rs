//! `tandem lsp` end to end: the real binary over stdio with a test client
//! (tests/common/lsp_client.rs) and the scripted model, one scenario per
//! test, each the "Shown by" list of issue 4.
//!
//! The scripted model cannot wait for the editor, so where the user must
//! act at a precise moment the test uses a permission prompt the run has to
//! wait for (a `run_shell` call in the default mode): the user types while
//! the prompt is up, then answers it.

#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::lsp_client;
use crate::common::script;

use std::path::Path;

use common::{process_alive, wait_until};
use lsp_client::{ask_params, uri, Fixture, LspClient};
use script::{done, edit, read, shell, turn};
use serde_json::{json, Value};

/// The answer's edits without the `toolCallId` each carries (checked to
/// name a call of the run).
fn listed(answer: &Value) -> Value {
    let mut edits = answer["result"]["edits"].clone();
    for edit in edits.as_array_mut().into_iter().flatten() {
        if let Some(call) = edit.as_object_mut().and_then(|e| e.remove("toolCallId")) {
            assert!(call.as_str().is_some_and(|c| c.starts_with("toolu_")), "{call}");
        }
    }
    edits
}

/// Replace the temp root in JSON text for snapshots.
fn scrub(text: &str, root: &Path) -> String {
    text.replace(&root.to_string_lossy().to_string(), "ROOT")
}

#[test]
fn the_agent_reads_the_unsaved_buffer_not_the_disk() {
    let f = Fixture::new(&[("notes.txt", "on disk\n")]);
    let mut client = f.start(json!([turn(vec![read("notes.txt")]), done()]), json!({}), json!({}));
    client.open(&f.path("notes.txt"), "typed in the editor, not saved\n");
    let answer = client.request("workspace/executeCommand", ask_params("What do my notes say?"));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].1.contains("typed in the editor, not saved"), "{results:?}");
    assert!(!results[0].1.contains("on disk"), "{results:?}");
    client.shutdown();
}

#[test]
fn an_edit_arrives_as_a_versioned_minimal_text_document_edit() {
    let f = Fixture::new(&[("src.txt", "alpha\nbeta\ngamma\n")]);
    let mut client = f.start(
        json!([turn(vec![read("src.txt")]), turn(vec![edit("src.txt", "beta", "BETA")]), done()]),
        json!({"window": {"workDoneProgress": true}}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let uri = client.open(&f.path("src.txt"), "alpha\nbeta\ngamma\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("Shout beta"));
    let create = client.server_request("window/workDoneProgress/create");
    client.respond(&create["id"], Value::Null);
    let apply = client.server_request("workspace/applyEdit");
    expect_test::expect![[r#"{"label":"Tandem: edit_file src.txt","edit":{"documentChanges":[{"textDocument":{"uri":"file://ROOT/src.txt","version":1},"edits":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":4}},"newText":"BETA"}]}]}}"#]]
        .assert_eq(&scrub(&apply["params"].to_string(), &f.root));
    client.apply_edit_request(&apply);
    let mut answer = client.response(ask);
    // The answer always names the thread (a new one here), to continue it.
    let thread_id = answer["result"].as_object_mut().unwrap().remove("threadId").unwrap();
    assert!(thread_id.as_str().is_some_and(|id| !id.is_empty()), "{answer}");
    // The scripted model's usage is an estimate from the request's size.
    let usage = answer["result"].as_object_mut().unwrap().remove("usage").unwrap();
    assert!(usage["input_tokens"].as_u64().unwrap() > 0, "{usage}");
    let result = scrub(&answer["result"].to_string(), &f.root);
    expect_test::expect![[r#"{"runId":"run-1","status":"completed","text":"Done.","edits":[{"uri":"file://ROOT/src.txt","status":"applied","ranges":[{"startLine":2,"endLine":2}],"toolCallId":"toolu_script_2_1"}],"summary":"1 edit: 1 applied. Changed: src.txt line 2."}"#]]
        .assert_eq(&result);
    assert_eq!(client.text(&uri), "alpha\nBETA\ngamma\n");
    // Invariant 1: an open document is never written to disk by Tandem.
    assert_eq!(std::fs::read_to_string(f.path("src.txt")).unwrap(), "alpha\nbeta\ngamma\n");
    let results = client.tool_results();
    assert!(results[1].1.starts_with("Successfully edited src.txt\nNote: the file is open in the editor; the change is in the editor, unsaved."), "{results:?}");
    // Work-done progress went begin … end, and run events are numbered.
    let progress: Vec<String> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "$/progress")
        .map(|m| m["params"]["value"]["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(progress.first().map(String::as_str), Some("begin"));
    assert_eq!(progress.last().map(String::as_str), Some("end"));
    let seqs: Vec<u64> = client.seen.iter().filter(|m| m["method"] == "tandem/runEvent").map(|m| m["params"]["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    client.shutdown();
}

/// Issue 53: the model's old_string covers lines 1-21 of app.py and
/// changes lines 1 and 21. The editor gets two TextEdits, one per hunk of
/// the change, each within its line (not one over the whole old_string),
/// and the answer names the two changed lines, not the call's range. A
/// review that declines the second keeps every line whole.
#[test]
fn a_large_old_string_reaches_the_editor_as_the_change_s_hunks() {
    let text: String = (1..=21).map(|i| format!("line_{i} = {i}\n")).collect();
    let changed = text.replace("line_1 = 1\n", "line_1 = 100\n").replace("line_21 = 21\n", "line_21 = 2100\n");
    let f = Fixture::new(&[("app.py", &text)]);
    let mut client = f.start(
        json!([turn(vec![read("app.py")]), turn(vec![edit("app.py", text.trim_end(), changed.trim_end())]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let uri = client.open(&f.path("app.py"), &text);
    let ask = client.send_request("workspace/executeCommand", ask_params("Change the first and last values"));
    let apply = client.server_request("workspace/applyEdit");
    let edits = &apply["params"]["edit"]["documentChanges"][0]["edits"];
    expect_test::expect![[r#"[{"range":{"start":{"line":0,"character":10},"end":{"line":0,"character":10}},"newText":"00"},{"range":{"start":{"line":20,"character":12},"end":{"line":20,"character":12}},"newText":"00"}]"#]]
        .assert_eq(&edits.to_string());
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(client.text(&uri), changed);
    assert_eq!(answer["result"]["edits"][0]["ranges"], json!([{"startLine": 1, "endLine": 1}, {"startLine": 21, "endLine": 21}]), "{answer}");
    assert_eq!(answer["result"]["summary"], "1 edit: 1 applied. Changed: app.py lines 1, 21.", "{answer}");
    client.shutdown();
}

/// Issue 53, reviewed in the editor: each hunk of the edit carries its
/// own change annotation, whose label says where it is and what it does
/// (VS Code's Refactor Preview lists it with the hunk's entry), all of
/// them needing confirmation.
#[test]
fn each_hunk_of_a_reviewed_edit_has_its_own_label() {
    let text: String = (1..=21).map(|i| format!("line_{i} = {i}\n")).collect();
    let changed = text.replace("line_1 = 1\n", "line_1 = 100\n").replace("line_20 = 20\nline_21 = 21\n", "");
    let f = Fixture::new(&[("app.py", &text)]);
    let mut client = f.start(
        json!([turn(vec![read("app.py")]), turn(vec![edit("app.py", text.trim_end(), changed.trim_end())]), done()]),
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}}),
        json!({}),
    );
    let uri = client.open(&f.path("app.py"), &text);
    let ask = client.send_request("workspace/executeCommand", ask_params("Change the first value, drop the last two"));
    let apply = client.server_request("workspace/applyEdit");
    let edit = &apply["params"]["edit"];
    let ids: Vec<&str> = edit["documentChanges"][0]["edits"].as_array().unwrap().iter().map(|e| e["annotationId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["tandem.review/1", "tandem.review/2"], "{apply}");
    expect_test::expect![[r#"
        {
          "tandem.review/1": {
            "label": "Tandem: app.py line 1: \"line_1 = 1\" → \"line_1 = 100\"",
            "needsConfirmation": true,
            "description": "change 1 of 2 of edit_file app.py, proposed by the Tandem agent"
          },
          "tandem.review/2": {
            "label": "Tandem: app.py lines 20-21 deleted (\"line_20 = 20\")",
            "needsConfirmation": true,
            "description": "change 2 of 2 of edit_file app.py, proposed by the Tandem agent"
          }
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&edit["changeAnnotations"]).unwrap());
    assert_eq!(apply["params"]["label"], "Tandem: edit_file app.py");
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(client.text(&uri), changed);
    assert_eq!(answer["result"]["summary"], "1 edit: 1 applied. Changed: app.py lines 1, 20.", "{answer}");
    client.shutdown();
}

/// The version an applyEdit request's first document edit is for.
fn edits_version(apply: &Value) -> i64 {
    apply["params"]["edit"]["documentChanges"][0]["textDocument"]["version"].as_i64().unwrap()
}

/// An old_string whose new text drops a line and adds another further
/// down: whole-line hunks, so declining either alone never joins lines.
#[test]
fn hunks_that_add_or_remove_lines_are_whole_lines() {
    let text = "def f():\n    a = 1\n    b = 2\n    return a\n";
    let changed = "def f():\n    b = 2\n    return a\n    # done\n";
    let f = Fixture::new(&[("app.py", text)]);
    let mut client = f.start(
        json!([turn(vec![read("app.py")]), turn(vec![edit("app.py", text, changed)]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let uri = client.open(&f.path("app.py"), text);
    let ask = client.send_request("workspace/executeCommand", ask_params("Tidy f"));
    let apply = client.server_request("workspace/applyEdit");
    let edits = &apply["params"]["edit"]["documentChanges"][0]["edits"];
    expect_test::expect![[r#"[{"range":{"start":{"line":1,"character":0},"end":{"line":2,"character":0}},"newText":""},{"range":{"start":{"line":4,"character":0},"end":{"line":4,"character":0}},"newText":"    # done\n"}]"#]]
        .assert_eq(&edits.to_string());
    // Each hunk alone leaves whole lines.
    for (i, alone) in [(0, "def f():\n    b = 2\n    return a\n"), (1, "def f():\n    a = 1\n    b = 2\n    return a\n    # done\n")] {
        let mut one = apply.clone();
        one["params"]["edit"]["documentChanges"][0]["edits"] = json!([edits[i].clone()]);
        let version = i32::try_from(edits_version(&apply)).unwrap();
        let applied = tandem::lsp::edits::apply_as_editor(&one["params"], text, version, tandem::lsp::position::PositionEncoding::Utf16).unwrap();
        assert_eq!(applied.text, alone);
    }
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(client.text(&uri), changed);
    assert_eq!(answer["result"]["summary"], "1 edit: 1 applied. Changed: app.py lines 2, 4.", "{answer}");
    client.shutdown();
}

/// One edit_file through `tandem lsp` (edits applied directly): the
/// applyEdit's TextEdits as JSON, and the answer's summary; the buffer
/// ends as the edit's text.
fn sent_hunks(name: &str, text: &str, old: &str, new: &str) -> (Value, String) {
    let f = Fixture::new(&[(name, text)]);
    let mut client = f.start(
        json!([turn(vec![read(name)]), turn(vec![edit(name, old, new)]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let uri = client.open(&f.path(name), text);
    let ask = client.send_request("workspace/executeCommand", ask_params("Edit it"));
    let apply = client.server_request("workspace/applyEdit");
    let edits = apply["params"]["edit"]["documentChanges"][0]["edits"].clone();
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(client.text(&uri), text.replacen(old, new, 1), "{answer}");
    client.shutdown();
    (edits, answer["result"]["summary"].as_str().unwrap_or_default().to_string())
}

/// Issue 53, bad input: an edit whose new text only adds lines (its
/// old_string kept at the start and end) is one insertion of whole lines
/// at a line start; one that only deletes lines removes whole lines. The
/// summary names the changed lines.
#[test]
fn an_edit_that_only_adds_or_only_deletes_lines_is_whole_lines() {
    let text = "def f():\n    a = 1\n    return a\n";
    let (added, summary) = sent_hunks("app.py", text, "    a = 1\n    return a", "    a = 1\n    b = 2\n    c = 3\n    return a");
    expect_test::expect![[r#"[{"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":0}},"newText":"    b = 2\n    c = 3\n"}]"#]].assert_eq(&added.to_string());
    assert_eq!(summary, "1 edit: 1 applied. Changed: app.py lines 3-4.");
    let text = "one\ntwo\nthree\nfour\nfive\n";
    let (deleted, summary) = sent_hunks("list.txt", text, "one\ntwo\nthree\nfour\nfive", "one\nfive");
    expect_test::expect![[r#"[{"range":{"start":{"line":1,"character":0},"end":{"line":4,"character":0}},"newText":""}]"#]].assert_eq(&deleted.to_string());
    assert_eq!(summary, "1 edit: 1 applied. Changed: list.txt line 2.");
}

/// Issue 53, bad input: a change inside one long line (minified, 4000
/// characters) is one TextEdit of the changed characters within that
/// line, not the line or the old_string's range.
#[test]
fn a_change_inside_one_long_line_is_one_edit_within_it() {
    let long: String = (0..500).map(|i| format!("v{i:03}=1;")).collect();
    let text = format!("// head\n{long}\n// tail\n");
    let changed = long.replace("v250=1;", "v250=2;");
    let (edits, summary) = sent_hunks("app.min.js", &text, &long, &changed);
    let at = long.find("v250=1;").unwrap() + "v250=".len();
    assert_eq!(edits, json!([{"range": {"start": {"line": 1, "character": at}, "end": {"line": 1, "character": at + 1}}, "newText": "2"}]));
    assert_eq!(summary, "1 edit: 1 applied. Changed: app.min.js line 2.");
}

/// Issue 53, bad input: a CRLF file edited with an old_string written with
/// plain line breaks (as models write them): the hunks keep the file's
/// CRLF, each within its line, and no line ending changes.
#[test]
fn a_crlf_file_keeps_its_line_endings_in_each_hunk() {
    let text = "a = 1\r\nb = 2\r\nc = 3\r\nd = 4\r\n";
    let f = Fixture::new(&[("v.py", text)]);
    let mut client = f.start(
        json!([turn(vec![read("v.py")]), turn(vec![edit("v.py", "a = 1\nb = 2\nc = 3\nd = 4", "a = 10\nb = 2\nc = 3\nd = 40")]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let uri = client.open(&f.path("v.py"), text);
    let ask = client.send_request("workspace/executeCommand", ask_params("Multiply a and d"));
    let apply = client.server_request("workspace/applyEdit");
    let edits = &apply["params"]["edit"]["documentChanges"][0]["edits"];
    expect_test::expect![[r#"[{"range":{"start":{"line":0,"character":5},"end":{"line":0,"character":5}},"newText":"0"},{"range":{"start":{"line":3,"character":5},"end":{"line":3,"character":5}},"newText":"0"}]"#]]
        .assert_eq(&edits.to_string());
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(client.text(&uri), "a = 10\r\nb = 2\r\nc = 3\r\nd = 40\r\n", "{answer}");
    client.shutdown();
}

#[test]
fn the_user_types_between_read_and_edit_refused_reread_applied_typed_text_intact() {
    let f = Fixture::new(&[("app.txt", "fn main() {\n    run();\n}\n")]);
    let mut client = f.start(
        json!([
            turn(vec![read("app.txt")]),
            turn(vec![shell("mkdir -p checked")]),
            turn(vec![edit("app.txt", "run();", "run_fast();")]),
            turn(vec![read("app.txt")]),
            turn(vec![edit("app.txt", "run();", "run_fast();")]),
            done()
        ]),
        json!({}),
        json!({"tandem": {"timeouts": {"promptMs": 30000}}}),
    );
    let uri = client.open(&f.path("app.txt"), "fn main() {\n    run();\n}\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("Make it fast"));
    // The shell prompt: the user types meanwhile, then allows the command.
    let prompt = client.server_request("window/showMessageRequest");
    let message = prompt["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("Tandem wants to run a shell command:\nmkdir -p checked\n\nAsked because:\n- `mkdir -p checked` is not known to be read-only"), "{prompt}");
    // The transcript shows the call before the user is asked about it.
    let call_at = client.seen.iter().position(|m| m["params"]["event"]["name"] == "run_shell");
    let prompt_at = client.seen.iter().position(|m| m["method"] == "window/showMessageRequest");
    assert!(call_at.is_some() && call_at < prompt_at, "{:#?}", client.seen);
    client.type_at_line(&uri, 0, "// the user's comment\n");
    client.barrier(&uri);
    client.respond(&prompt["id"], json!({"title": "Allow once"}));
    // After the re-read, the edit is reviewed with its diff.
    let review = client.server_request("window/showMessageRequest");
    let review_text = review["params"]["message"].as_str().unwrap();
    assert!(review_text.starts_with("Tandem: apply edit to app.txt?\n\n"), "{review_text}");
    assert!(review_text.contains("-     run();") && review_text.contains("+     run_fast();"), "{review_text}");
    client.respond(&review["id"], json!({"title": "Apply"}));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(apply["params"]["edit"]["documentChanges"][0]["textDocument"]["version"], 2);
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    let refused = &results[2];
    assert!(refused.0, "{results:?}");
    expect_test::expect!["Error: app.txt was modified externally since your last read (1 line added after line 0). Read it again with read_file before editing it."]
        .assert_eq(&refused.1);
    assert!(!results[4].0 && results[4].1.starts_with("Successfully edited app.txt"), "{results:?}");
    assert_eq!(client.text(&uri), "// the user's comment\nfn main() {\n    run_fast();\n}\n");
    client.shutdown();
}

#[test]
fn applied_true_without_did_change_is_reported_as_unknown() {
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let mut client = f.start(
        json!([turn(vec![read("a.txt")]), turn(vec![edit("a.txt", "one", "two")]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits", "timeouts": {"verifyMs": 300}}}),
    );
    let uri = client.open(&f.path("a.txt"), "one\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("edit"));
    // Neovim-style: "applied" without touching the buffer.
    let apply = client.server_request("workspace/applyEdit");
    client.respond(&apply["id"], json!({"applied": true}));
    let answer = client.response(ask);
    let results = client.tool_results();
    expect_test::expect![[r#"(true, "Error: whether the edit to a.txt was applied is unknown: the editor answered applied: true but the buffer did not change. Read a.txt again with read_file before editing it.")"#]]
        .assert_eq(&format!("{:?}", results[1]));
    assert_eq!(listed(&answer), json!([{"uri": uri, "status": "unknown", "ranges": []}]));
    client.shutdown();
}

#[test]
fn the_user_rejects_the_edit_or_denies_the_command_and_the_model_is_told() {
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let mut client = f.start(
        json!([turn(vec![read("a.txt")]), turn(vec![edit("a.txt", "one", "two")]), turn(vec![shell("rm -rf build")]), done()]),
        // A client with change annotations: the review is its refactor preview.
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}}),
        json!({}),
    );
    let uri = client.open(&f.path("a.txt"), "one\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("edit"));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(apply["params"]["edit"]["changeAnnotations"]["tandem.review/1"]["needsConfirmation"], true);
    client.respond(&apply["id"], json!({"applied": false}));
    let prompt = client.server_request("window/showMessageRequest");
    client.respond(&prompt["id"], json!({"title": "Deny"}));
    let answer = client.response(ask);
    let results = client.tool_results();
    expect_test::expect![[r#"
        (true, "Error: the user rejected the edit to a.txt: declined in the editor's review. The file is unchanged.")
        (true, "Permission denied for run_shell: the user denied it. Do not retry the same call; ask the user or take another approach.")"#]]
    .assert_eq(&format!("{:?}\n{:?}", results[1], results[2]));
    assert_eq!(listed(&answer), json!([{"uri": uri, "status": "rejected", "ranges": []}]));
    assert_eq!(client.text(&uri), "one\n");
    client.shutdown();
}

/// A command from the repository with escape sequences, a carriage return
/// and a bidi override: the question `tandem lsp` sends
/// (`window/showMessageRequest`, which VS Code's notifications, Emacs and
/// Kakoune show raw) and the `$/progress` reports carry them written
/// visibly, so the `rm` the user is asked about is the one on screen; the
/// actions are the server's words, as sent.
#[test]
fn a_question_an_editor_shows_raw_carries_no_terminal_escapes() {
    let command = "rm victim.txt '\x1b[2K\rls -la' \u{202e}txt.exe";
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let mut client = f.start(json!([turn(vec![shell(command)]), done()]), json!({"window": {"workDoneProgress": true}}), json!({}));
    let ask = client.send_request("workspace/executeCommand", ask_params("clean up"));
    let create = client.server_request("window/workDoneProgress/create");
    client.respond(&create["id"], Value::Null);
    let prompt = client.server_request("window/showMessageRequest");
    let message = prompt["params"]["message"].as_str().unwrap();
    assert!(message.contains(r"rm victim.txt '\x1b[2K\rls -la' \u{202e}txt.exe"), "{message}");
    let raw = |text: &str| text.chars().any(|c| c == '\x1b' || c == '\r' || c == '\u{202e}');
    assert!(!raw(message), "{message:?}");
    assert!(prompt["params"]["actions"].as_array().unwrap().iter().any(|a| a["title"] == "Deny"), "{prompt}");
    client.respond(&prompt["id"], json!({"title": "Deny"}));
    client.response(ask);
    // Nothing else the editor shows as it is carries them either.
    for seen in client.seen.iter().filter(|m| matches!(m["method"].as_str(), Some("window/showMessage" | "window/logMessage" | "$/progress"))) {
        assert!(!raw(&seen["params"].to_string()) && !raw(seen["params"]["value"]["message"].as_str().unwrap_or_default()), "{seen}");
    }
    client.shutdown();
}

/// A client that answers `tandem/textInput` is also offered "Tell Tandem
/// what to do instead", on an edit's review prompt and on a command's ask:
/// the refusal the model reads carries the line the user typed (none
/// typed, it is the plain refusal). Other clients are not offered it.
#[test]
fn the_user_refuses_and_tells_tandem_what_to_do_instead() {
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let turns = json!([turn(vec![read("a.txt")]), turn(vec![edit("a.txt", "one", "two")]), turn(vec![shell("rm -rf build")]), turn(vec![shell("rm -rf dist")]), done()]);
    let mut client = f.start(turns.clone(), json!({}), json!({"textInput": true}));
    let ask = client.send_request("workspace/executeCommand", ask_params("edit"));
    let review = client.server_request("window/showMessageRequest");
    // "Allow commands like this for this session" is offered where a
    // sandbox can start (asks::); what this test looks at is the last one.
    let titles = |m: &Value| {
        m["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap().to_string()).filter(|t| t != "Allow commands like this for this session").collect::<Vec<_>>()
    };
    assert_eq!(titles(&review), ["Apply", "Reject", "Tell Tandem what to do instead"], "{review}");
    client.respond(&review["id"], json!({"title": "Tell Tandem what to do instead"}));
    let input = client.server_request("tandem/textInput");
    assert_eq!(input["params"]["prompt"], "What should Tandem do instead?", "{input}");
    client.respond(&input["id"], json!({"text": "  append a line instead of replacing one  "}));
    let prompt = client.server_request("window/showMessageRequest");
    assert_eq!(titles(&prompt), ["Allow once", "Always allow", "Always allow in this project", "Deny", "Tell Tandem what to do instead"], "{prompt}");
    client.respond(&prompt["id"], json!({"title": "Tell Tandem what to do instead"}));
    let input = client.server_request("tandem/textInput");
    client.respond(&input["id"], json!({"text": "clean with cargo clean"}));
    // Dismissed: the refusal says only that.
    let prompt = client.server_request("window/showMessageRequest");
    client.respond(&prompt["id"], json!({"title": "Tell Tandem what to do instead"}));
    let input = client.server_request("tandem/textInput");
    client.respond(&input["id"], json!({"text": null}));
    assert_eq!(client.response(ask)["result"]["status"], "completed");
    let results = client.tool_results();
    expect_test::expect![[r#"
        (true, "Permission denied for edit_file: the user chose Reject; instead, the user says: append a line instead of replacing one. Do not retry the same call; ask the user or take another approach.")
        (true, "Permission denied for run_shell: the user denied it; instead, the user says: clean with cargo clean. Do not retry the same call; ask the user or take another approach.")
        (true, "Permission denied for run_shell: the user denied it. Do not retry the same call; ask the user or take another approach.")"#]]
    .assert_eq(&format!("{:?}\n{:?}\n{:?}", results[1], results[2], results[3]));
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "one\n");
    client.shutdown();

    let mut client = f.start(turns, json!({}), json!({}));
    let ask = client.send_request("workspace/executeCommand", ask_params("edit"));
    let review = client.server_request("window/showMessageRequest");
    assert_eq!(titles(&review), ["Apply", "Reject"], "{review}");
    client.respond(&review["id"], json!({"title": "Reject"}));
    for _ in 0..2 {
        let prompt = client.server_request("window/showMessageRequest");
        assert_eq!(titles(&prompt), ["Allow once", "Always allow", "Always allow in this project", "Deny"], "{prompt}");
        client.respond(&prompt["id"], json!({"title": "Deny"}));
    }
    assert_eq!(client.response(ask)["result"]["status"], "completed");
    client.shutdown();
}

/// A client that asks for them (`experimental.tandemRequestIds`, as the
/// Neovim plugin does: its handlers see no ids) finds each request's id in
/// its params, the id a `$/cancelRequest` would name; other clients' params
/// are as the protocol has them.
#[test]
fn request_ids_are_in_the_params_only_for_a_client_that_asks() {
    let f = Fixture::new(&[]);
    for (capabilities, tagged) in [(json!({"experimental": {"tandemRequestIds": true}}), true), (json!({}), false)] {
        let mut client = f.start(json!([turn(vec![shell("rm -rf build")]), done()]), capabilities, json!({}));
        let ask = client.send_request("workspace/executeCommand", ask_params("clean"));
        let prompt = client.server_request("window/showMessageRequest");
        match tagged {
            true => assert_eq!(prompt["params"]["tandemRequestId"], prompt["id"], "{prompt}"),
            false => assert!(prompt["params"].get("tandemRequestId").is_none(), "{prompt}"),
        }
        client.respond(&prompt["id"], json!({"title": "Deny"}));
        assert_eq!(client.response(ask)["result"]["status"], "completed");
        client.shutdown();
    }
}

/// A rename in two places, reviewed in the editor, of which the user
/// ticks only the first hunk: the model's next request says which hunk
/// landed and which was declined, the run event of the edit and the
/// answer say `partial`, and nothing waits `verifyMs` (a minute here).
#[test]
fn a_partly_accepted_review_is_reported_as_partial_with_both_hunks() {
    let text = "def greet(name):\n    return 'hi ' + name\n\n\nprint(greet('you'))\n";
    let f = Fixture::new(&[("app.py", text)]);
    let rename = json!({"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet", "new_string": "welcome", "replace_all": true}});
    let mut client = f.start(
        json!([turn(vec![read("app.py")]), turn(vec![rename]), done()]),
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}}),
        json!({"timeouts": {"verifyMs": 60000}}),
    );
    let uri = client.open(&f.path("app.py"), text);
    let ask = client.send_request("workspace/executeCommand", ask_params("rename greet"));
    let mut apply = client.server_request("workspace/applyEdit");
    assert_eq!(apply["params"]["edit"]["documentChanges"][0]["edits"].as_array().unwrap().len(), 2, "{apply}");
    // The user unticks the second hunk: the editor applies the first only.
    let first = apply["params"]["edit"]["documentChanges"][0]["edits"][0].clone();
    apply["params"]["edit"]["documentChanges"][0]["edits"] = json!([first]);
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(client.text(&uri), text.replacen("greet", "welcome", 1));
    let results = client.tool_results();
    let (is_error, content) = &results[1];
    assert!(is_error, "{content}");
    assert!(content.contains("Partly applied: the user accepted 1 of the 2 hunks of the edit to app.py"), "{content}");
    assert!(content.contains("Applied 1: now at line 1 of app.py."), "{content}");
    assert!(content.contains("Declined 1 (at line 5 of app.py): kept\n    greet\n  instead of\n    welcome"), "{content}");
    assert!(content.contains("may now be inconsistent"), "{content}");
    let partial = json!({"uri": uri, "status": "partial", "ranges": [{"startLine": 1, "endLine": 1}], "declined": [{"startLine": 5, "endLine": 5}]});
    let event = client.run_events().into_iter().filter(|e| e["type"] == "tool_result").nth(1).unwrap();
    assert_eq!(event["edit"], partial, "{event}");
    // The answer names the call that made each edit, and words them as
    // every front end shows them.
    let mut listed = partial.clone();
    listed["toolCallId"] = event["id"].clone();
    assert_eq!(answer["result"]["edits"], json!([listed]), "{answer}");
    assert_eq!(answer["result"]["summary"], "1 edit: 1 partly applied. Changed: app.py line 1 (partly applied; declined: 5).", "{answer}");
    // A transcript of the thread (a window reloaded) shows the edit's
    // status on its result, and the run's edits after its end.
    let thread = answer["result"]["threadId"].clone();
    let transcript = client.request("workspace/executeCommand", json!({"command": "tandem.transcript", "arguments": [{"threadId": thread}]}));
    let events = transcript["result"]["events"].as_array().unwrap();
    let result = events.iter().find(|e| e["type"] == "tool_result" && e["id"] == event["id"]).unwrap();
    assert_eq!(result["edit"]["status"], "partial", "{transcript}");
    let last = events.last().unwrap();
    assert_eq!((&last["type"], &last["edits"], &last["summary"]), (&json!("edits"), &json!([listed]), &answer["result"]["summary"]), "{transcript}");
    client.shutdown();
}

/// An editor that applies both hunks of an edit as two `didChange`s and
/// answers at once (Neovim sends the first change of an edit at once, the
/// rest after its debounce, and its plugin flushes them before answering),
/// all three read in one go: the server judges the buffer after both
/// changes — `applied` — not the one between them, which holds only the
/// first hunk and once made a fully accepted edit `partial`. Run a number
/// of times, as the answer overtaking a queued change is a race.
#[test]
fn an_answer_read_right_after_the_edit_s_changes_is_judged_after_all_of_them() {
    let text = "def greet(name):\n    return 'hi ' + name\n\n\nprint(greet('you'))\n";
    let f = Fixture::new(&[("app.py", text)]);
    let rename = json!({"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet", "new_string": "welcome", "replace_all": true}});
    for trial in 0..20 {
        let mut client = f.start(
            json!([turn(vec![read("app.py")]), turn(vec![rename.clone()]), done()]),
            json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}}),
            json!({"timeouts": {"verifyMs": 60000}}),
        );
        let uri = client.open(&f.path("app.py"), text);
        let ask = client.send_request("workspace/executeCommand", ask_params("rename greet"));
        let apply = client.server_request("workspace/applyEdit");
        let document = &apply["params"]["edit"]["documentChanges"][0];
        let version = document["textDocument"]["version"].as_i64().unwrap();
        let edits = document["edits"].as_array().unwrap().clone();
        assert_eq!(edits.len(), 2, "{apply}");
        // The hunks are on different lines: each applies as it is after the other.
        let change = |n: usize| {
            let body = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version + 1 + n as i64},
                "contentChanges": [{"range": edits[n]["range"], "text": edits[n]["newText"]}]}});
            body.to_string()
        };
        let answer = json!({"jsonrpc": "2.0", "id": apply["id"], "result": {"applied": true}}).to_string();
        let mut bytes = Vec::new();
        for body in [change(0), change(1), answer] {
            bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        }
        client.send_bytes(&bytes);
        let answer = client.response(ask);
        assert_eq!(answer["result"]["edits"][0]["status"], "applied", "trial {trial}: {answer}");
        let results = client.tool_results();
        assert!(!results[1].0, "trial {trial}: {}", results[1].1);
        client.shutdown();
    }
}

/// Before a shell command, the buffers the run changed are saved when
/// they held no unsaved user changes before the run (here one left
/// unsaved by a partly applied edit); a buffer that held the user's
/// unsaved text is not saved, and the command's result names it.
#[test]
fn a_command_sees_the_agent_s_edits_or_is_told_which_buffers_it_did_not_see() {
    let app = "def greet(name):\n    return 'hi ' + name\n\n\nprint(greet('you'))\n";
    let f = Fixture::new(&[("app.py", app), ("notes.txt", "user\n")]);
    let rename = json!({"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet", "new_string": "welcome", "replace_all": true}});
    let mut client = f.start(
        json!([
            turn(vec![read("app.py"), read("notes.txt")]),
            turn(vec![rename]),
            turn(vec![edit("notes.txt", "typed", "typed, and the agent's")]),
            turn(vec![shell("cat app.py notes.txt")]),
            done()
        ]),
        json!({}),
        json!({"permissionMode": "bypassPermissions", "saveDocuments": true, "timeouts": {"verifyMs": 60000}}),
    );
    let app_uri = client.open(&f.path("app.py"), app);
    // Unsaved typing of the user's: the buffer differs from the disk.
    let notes_uri = client.open(&f.path("notes.txt"), "user typed\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("rename and run"));
    let mut apply = client.server_request("workspace/applyEdit");
    let first = apply["params"]["edit"]["documentChanges"][0]["edits"][0].clone();
    apply["params"]["edit"]["documentChanges"][0]["edits"] = json!([first]);
    client.apply_edit_request(&apply);
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    // Before the command: app.py was clean before the run, so it is saved.
    let save = client.server_request("tandem/saveDocuments");
    assert_eq!(save["params"]["uris"], json!([app_uri]), "{save}");
    std::fs::write(f.path("app.py"), client.text(&app_uri)).unwrap();
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": app_uri}}));
    client.respond(&save["id"], Value::Null);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    let (is_error, output) = &results[4];
    assert!(!is_error, "{output}");
    assert!(output.contains("def welcome(name):") && output.contains("print(greet('you'))"), "the command saw the buffer: {output}");
    assert!(
        output.contains("these files hold unsaved text in the editor that it did not see: notes.txt (it held unsaved changes of the user's before the run, so Tandem did not save it)"),
        "{output}"
    );
    assert_eq!(std::fs::read_to_string(f.path("notes.txt")).unwrap(), "user\n", "the user's unsaved text is not written");
    assert_eq!(client.text(&notes_uri), "user typed, and the agent's\n");
    // The save before the command is no second edit of app.py, and no
    // change of the command's: one entry per edit.
    let statuses: Vec<(&str, &str)> = answer["result"]["edits"].as_array().unwrap().iter().map(|e| (e["uri"].as_str().unwrap(), e["status"].as_str().unwrap())).collect();
    assert_eq!(statuses, [(app_uri.as_str(), "partial"), (notes_uri.as_str(), "applied")], "{answer}");
    client.shutdown();
}

/// An edit to a file that is not open, in a client with change
/// annotations: the server asks the editor to open it (without the focus)
/// and sends the same versioned, annotated applyEdit as for an open file,
/// so it is reviewed per hunk and undone with the editor's undo. The disk
/// is not written behind the editor's back.
#[test]
fn an_edit_to_a_closed_file_is_opened_and_reviewed_like_an_open_one() {
    let f = Fixture::new(&[("closed.txt", "one\ntwo\n")]);
    let mut client = f.start(
        json!([turn(vec![read("closed.txt")]), turn(vec![edit("closed.txt", "two", "TWO")]), done()]),
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}, "window": {"showDocument": {"support": true}}}),
        json!({}),
    );
    let ask = client.send_request("workspace/executeCommand", ask_params("capitalise"));
    let show = client.server_request("window/showDocument");
    let uri = uri(&f.path("closed.txt"));
    assert_eq!(show["params"], json!({"uri": uri, "takeFocus": false}), "{show}");
    client.open(&f.path("closed.txt"), "one\ntwo\n");
    client.respond(&show["id"], json!({"success": true}));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(apply["params"]["edit"]["documentChanges"][0]["textDocument"], json!({"uri": uri, "version": 1}), "{apply}");
    assert_eq!(apply["params"]["edit"]["changeAnnotations"]["tandem.review/1"]["needsConfirmation"], true, "{apply}");
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(listed(&answer), json!([{"uri": uri, "status": "applied", "ranges": [{"startLine": 2, "endLine": 2}]}]), "{answer}");
    assert_eq!(client.text(&uri), "one\nTWO\n");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), "one\ntwo\n", "the editor holds the edit, unsaved");
    client.shutdown();
}

#[test]
fn a_closed_file_is_written_on_disk_and_a_change_after_the_read_is_caught() {
    let f = Fixture::new(&[("closed.txt", "version 1\n")]);
    let mut client = f.start(
        json!([
            turn(vec![read("closed.txt")]),
            turn(vec![shell("printf 'version 2\\n' > closed.txt")]),
            turn(vec![edit("closed.txt", "version", "release")]),
            turn(vec![read("closed.txt")]),
            turn(vec![edit("closed.txt", "version", "release")]),
            // Tandem's own write is not a foreign change: no re-read needed.
            turn(vec![edit("closed.txt", "release 2", "release 3")]),
            done()
        ]),
        json!({}),
        json!({"tandem": {"permissionMode": "bypassPermissions"}}),
    );
    let answer = client.request("workspace/executeCommand", ask_params("rename"));
    let results = client.tool_results();
    assert!(results[2].0 && results[2].1.contains("modified externally since your last read"), "{results:?}");
    assert!(!results[4].0 && results[4].1.starts_with("Successfully edited closed.txt"), "{results:?}");
    assert!(!results[5].0, "{results:?}");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), "release 3\n");
    // One entry per edit, each with the lines it changed; the command's
    // write first, marked with the command.
    let written = json!({"uri": uri(&f.path("closed.txt")), "status": "written", "ranges": [{"startLine": 1, "endLine": 1}]});
    let by_command = json!({"uri": uri(&f.path("closed.txt")), "status": "written", "ranges": [], "command": "printf 'version 2\\n' > closed.txt"});
    assert_eq!(listed(&answer), json!([by_command, written, written]));
    // Atomic writes leave no temp files behind.
    let names: Vec<String> = std::fs::read_dir(&f.root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    assert_eq!(names, vec!["closed.txt".to_string()]);
    client.shutdown();
}

fn start_long_shell_run(f: &Fixture, options: Value) -> (LspClient, i64, i32, String) {
    // The command runs in the sandbox's pid namespace, where its pid is
    // not ours: it is found by its unique command line.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let sleeper = format!("sleep 60.{}{}", std::process::id(), RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let mut client = f.start(
        json!([turn(vec![shell(&format!("echo started > shell.pid; exec {sleeper}"))]), done()]),
        json!({"window": {"workDoneProgress": true}}),
        options,
    );
    let ask = client.send_request("workspace/executeCommand", ask_params("wait a minute"));
    let create = client.server_request("window/workDoneProgress/create");
    client.respond(&create["id"], Value::Null);
    let call = client.wait_for("the run_shell call", |m| m["method"] == "tandem/runEvent" && m["params"]["event"]["type"] == "tool_call");
    let run_id = call["params"]["runId"].as_str().unwrap().to_string();
    let pid_file = f.path("shell.pid");
    wait_until("the shell started", || std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')));
    wait_until("the sleeper runs", || common::processes_running(&sleeper).len() == 1);
    let pid = common::processes_running(&sleeper)[0];
    assert!(process_alive(pid));
    (client, ask, pid, run_id)
}

#[test]
fn tandem_cancel_mid_run_kills_the_running_shell_command_and_one_run_at_a_time() {
    let f = Fixture::new(&[]);
    let (mut client, ask, pid, run_id) = start_long_shell_run(&f, json!({"tandem": {"permissionMode": "bypassPermissions"}}));
    // A second ask on the same thread while the first runs is refused with a clear message.
    let thread_id = client.seen.iter().find_map(|m| m["params"]["threadId"].as_str().map(String::from)).unwrap();
    let second = client.request(
        "workspace/executeCommand",
        json!({"command": "tandem.ask", "arguments": [{"prompt": "another", "threadId": thread_id}]}),
    );
    let message = second["error"]["message"].as_str().unwrap();
    assert!(message.contains("already running") && message.contains(&run_id), "{second}");
    let cancel = client.request("workspace/executeCommand", json!({"command": "tandem.cancel", "arguments": [{"runId": run_id}]}));
    assert_eq!(cancel["result"]["cancelled"], true, "{cancel}");
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    wait_until("the shell command is gone", || !process_alive(pid));
    // The thread is free again (with a script that ends at once).
    std::fs::write(f.root.parent().unwrap().join("script.json"), json!({"turns": [done()]}).to_string()).unwrap();
    let next = client.send_request(
        "workspace/executeCommand",
        json!({"command": "tandem.ask", "arguments": [{"prompt": "again", "threadId": thread_id}]}),
    );
    let create = client.server_request("window/workDoneProgress/create");
    client.respond(&create["id"], Value::Null);
    let next = client.response(next);
    assert_eq!(next["result"]["status"], "completed", "{next}");
    assert_eq!(next["result"]["threadId"], json!(thread_id), "{next}");
    client.shutdown();
}

#[test]
fn cancel_request_on_the_ask_and_progress_cancel_stop_the_run() {
    let f = Fixture::new(&[]);
    let (mut client, ask, pid, _) = start_long_shell_run(&f, json!({"tandem": {"permissionMode": "bypassPermissions"}}));
    client.notify("$/cancelRequest", json!({"id": ask}));
    let answer = client.response(ask);
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    wait_until("the shell command is gone", || !process_alive(pid));
    // The run's progress still ends, though no one awaits the ask any more.
    let end = client.wait_for("the progress end", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    assert_eq!(end["params"]["value"]["message"], "cancelled");
    client.shutdown();

    let f = Fixture::new(&[]);
    let (mut client, ask, pid, run_id) = start_long_shell_run(&f, json!({"tandem": {"permissionMode": "bypassPermissions"}}));
    client.notify("window/workDoneProgress/cancel", json!({"token": format!("tandem/{run_id}")}));
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    wait_until("the shell command is gone", || !process_alive(pid));
    client.shutdown();
}

#[test]
fn garbage_in_gets_an_error_or_a_log_line_and_the_server_keeps_serving() {
    let f = Fixture::new(&[("a.txt", "abc\n")]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    let uri = client.open(&f.path("a.txt"), "abc\n");
    // Invalid JSON: a parse error response with a null id.
    client.send_raw("{this is not json");
    let error = client.wait_for("the parse error", |m| m["id"].is_null() && m.get("error").is_some());
    assert_eq!(error["error"]["code"], -32700, "{error}");
    // Unknown method: method not found.
    let unknown = client.request("tandem/noSuchMethod", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // didChange for a document that is not open, and out-of-range positions.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": lsp_client::uri(&f.path("nope.txt")), "version": 2}, "contentChanges": [{"text": "x"}]}),
    );
    let far = json!({"start": {"line": 99, "character": 0}, "end": {"line": 120, "character": 5}});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": far, "text": "tail"}]}),
    );
    // Bad command arguments: invalid params.
    let bad = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"nope": 1}]}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let unknown_command = client.request("workspace/executeCommand", json!({"command": "tandem.fly", "arguments": []}));
    assert_eq!(unknown_command["error"]["code"], -32602, "{unknown_command}");
    // Still serving, and the document took the clamped change.
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "tandem.ask", "arguments": [{"prompt": "hi", "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}}]}),
    );
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}, "context": {"diagnostics": []}}),
    );
    assert_eq!(actions["result"][0]["title"], "Tandem: explain this code", "{actions}");
    client.shutdown();
}

#[test]
fn settings_come_from_workspace_configuration_over_initialization_options() {
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let mut client = f.start(
        json!([turn(vec![read("a.txt")]), turn(vec![edit("a.txt", "one", "two")]), done()]),
        json!({"workspace": {"configuration": true}}),
        json!({"tandem": {"permissionMode": "default"}}),
    );
    // Pulled at `initialized`, section "tandem".
    let pull = client.server_request("workspace/configuration");
    assert_eq!(pull["params"], json!({"items": [{"section": "tandem"}]}));
    client.respond(&pull["id"], json!([null]));
    // Pushed: edits now apply without review.
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"permissionMode": "acceptEdits"}}}));
    let uri = client.open(&f.path("a.txt"), "one\n");
    client.barrier(&uri);
    let ask = client.send_request("workspace/executeCommand", ask_params("edit"));
    let next = client.wait_for("applyEdit or a prompt", |m| {
        m["method"] == "workspace/applyEdit" || m["method"] == "window/showMessageRequest"
    });
    assert_eq!(next["method"], "workspace/applyEdit", "{next}");
    client.apply_edit_request(&next);
    let answer = client.response(ask);
    assert_eq!(listed(&answer), json!([{"uri": uri, "status": "applied", "ranges": [{"startLine": 1, "endLine": 1}]}]));
    client.shutdown();
}

#[test]
fn document_changes_apply_in_arrival_order() {
    // Invariant 5: 300 keystrokes sent back to back, each positioned on the
    // text the previous one made; applied out of order they would garble.
    let f = Fixture::new(&[("typing.txt", "start\n")]);
    let mut client = f.start(json!([turn(vec![read("typing.txt")]), done()]), json!({}), json!({}));
    let uri = client.open(&f.path("typing.txt"), "start\n");
    let mut expected = String::from("start");
    for i in 0..300u32 {
        let c = char::from(b'a' + (i % 26) as u8);
        let at = json!({"line": 0, "character": 5 + i});
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2 + i}, "contentChanges": [{"range": {"start": at, "end": at}, "text": c.to_string()}]}),
        );
        expected.push(c);
    }
    let answer = client.request("workspace/executeCommand", ask_params("read it"));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    assert!(results[0].1.contains(&format!("1\t{expected}")) || results[0].1.contains(&format!("| {expected}")), "{}", results[0].1);
    client.shutdown();
}

/// VS Code sends its settings' empty defaults (`"provider": ""`); they mean
/// "not set", so `TANDEM_PROVIDER`/`TANDEM_SCRIPT` from the environment
/// still choose the model and the run completes.
#[test]
fn empty_settings_let_the_environment_choose_the_provider() {
    let f = Fixture::new(&[]);
    let mut client = f.start(
        json!([json!({"text": "Answered by the environment's provider."})]),
        json!({}),
        json!({"tandem": {"provider": "", "model": "", "script": "", "permissionMode": ""}}),
    );
    let answer = client.request("workspace/executeCommand", ask_params("Hello"));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(answer["result"]["text"], "Answered by the environment's provider.", "{answer}");
    client.shutdown();
}

/// Drive one run to its answer: answer every prompt with its first action
/// (Apply / Allow once), apply every edit. Returns (the answer, the prompt
/// messages, the applyEdit requests).
fn run_answering(client: &mut LspClient, ask: i64) -> (Value, Vec<String>, Vec<Value>) {
    let mut prompts = Vec::new();
    let mut edits = Vec::new();
    loop {
        let message = client.next_request_or_response(ask);
        match message["method"].as_str() {
            None => return (message, prompts, edits),
            Some("window/showMessageRequest") => {
                prompts.push(message["params"]["message"].as_str().unwrap_or_default().to_string());
                let first = message["params"]["actions"][0].clone();
                client.respond(&message["id"], first);
            }
            Some("workspace/applyEdit") => {
                client.apply_edit_request(&message);
                edits.push(message);
            }
            Some(_) => client.respond(&message["id"], Value::Null),
        }
    }
}

/// The review path comes from what the editor does, not only from what it
/// advertises: kak-lsp advertises change annotations but applies annotated
/// edits without asking, so Kakoune gets Tandem's own prompt and a plain
/// edit; VS Code, advertising the same, gets the annotated edit (its
/// refactor preview asks).
#[test]
fn kakoune_is_prompted_though_it_advertises_change_annotations() {
    let capabilities = json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {}}}});
    for (client_name, prompted) in [("kak-lsp", true), ("kakoune-lsp", true), ("Visual Studio Code", false)] {
        let f = Fixture::new(&[("notes.txt", "alpha\n")]);
        let script = f.root.parent().unwrap().join("script.json");
        let turns = json!([turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "alpha", "ALPHA")]), done()]);
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let script = script.to_string_lossy().to_string();
        let mut client = LspClient::start(&f.root, &[("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", &script)]);
        let response = client.initialize_as(json!({"name": client_name, "version": "15.0.0"}), capabilities.clone(), json!({}));
        assert!(response.get("result").is_some(), "{response}");
        let uri = client.open(&f.path("notes.txt"), "alpha\n");
        let ask = client.send_request("workspace/executeCommand", ask_params("Shout"));
        let (answer, prompts, edits) = run_answering(&mut client, ask);
        assert_eq!(answer["result"]["status"], "completed", "{client_name}: {answer}");
        assert_eq!(client.text(&uri), "ALPHA\n", "{client_name}");
        assert_eq!(edits.len(), 1, "{client_name}");
        let annotated = edits[0]["params"]["edit"].get("changeAnnotations").is_some();
        let edit_prompts: Vec<&String> = prompts.iter().filter(|p| p.contains("notes.txt")).collect();
        if prompted {
            assert!(!annotated, "{client_name}: a plain edit after the prompt: {}", edits[0]);
            assert_eq!(edit_prompts.len(), 1, "{client_name}: Tandem asked about the edit: {prompts:?}");
        } else {
            assert!(annotated, "{client_name}: the editor reviews the annotated edit: {}", edits[0]);
            assert!(edit_prompts.is_empty(), "{client_name}: no second prompt: {prompts:?}");
        }
        client.shutdown();
    }
}

/// Cancel means no edit lands: a run cancelled while its edit waits in the
/// editor's review withdraws the applyEdit with `$/cancelRequest` (VS Code
/// closes its refactor preview), and the answer does not claim the edit.
#[test]
fn cancelling_a_run_withdraws_its_pending_apply_edit() {
    let f = Fixture::new(&[("notes.txt", "alpha\n")]);
    let mut client = f.start(
        json!([turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "alpha", "ALPHA")]), done()]),
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {}}}}),
        json!({}),
    );
    let uri = client.open(&f.path("notes.txt"), "alpha\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("Shout"));
    // The edit waits for the user's review; the user cancels the run.
    let apply = client.server_request("workspace/applyEdit");
    let cancel = client.request("workspace/executeCommand", json!({"command": "tandem.cancel", "arguments": [{"runId": "run-1"}]}));
    assert_eq!(cancel["result"]["cancelled"], true, "{cancel}");
    let withdrawn = client.wait_for("$/cancelRequest", |m| m["method"] == "$/cancelRequest");
    assert_eq!(withdrawn["params"]["id"], apply["id"], "the pending applyEdit is the one withdrawn");
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    // The client may still apply a withdrawn edit: unknown, until it shows.
    assert_eq!(listed(&answer), json!([{"uri": uri, "status": "unknown", "ranges": []}]), "{answer}");
    assert_eq!(client.text(&uri), "alpha\n");
    client.shutdown();
}

/// A follow-up on a thread continues its read ledger: a file read in the
/// first run is edited in the second without a re-read; `tandem.threads`
/// lists the thread and `tandem.forget` drops it.
#[test]
fn a_follow_up_on_a_thread_edits_a_file_read_before_and_threads_are_listed_and_forgotten() {
    let f = Fixture::new(&[("notes.txt", "one\n")]);
    let mut client = f.start(json!([turn(vec![read("notes.txt")]), done()]), json!({}), json!({"tandem": {"permissionMode": "acceptEdits"}}));
    let first = client.request("workspace/executeCommand", ask_params("read notes.txt"));
    let thread_id = first["result"]["threadId"].as_str().unwrap().to_string();
    std::fs::write(f.root.parent().unwrap().join("script.json"), json!({"turns": [turn(vec![edit("notes.txt", "one", "two")]), done()]}).to_string())
        .unwrap();
    let second = client.request(
        "workspace/executeCommand",
        json!({"command": "tandem.ask", "arguments": [{"prompt": "make it two", "threadId": thread_id}]}),
    );
    assert_eq!(second["result"]["threadId"], json!(thread_id), "{second}");
    let (is_error, content) = client.tool_results().last().unwrap().clone();
    assert!(!is_error && content.starts_with("Successfully edited notes.txt"), "{content}");
    assert_eq!(std::fs::read_to_string(f.path("notes.txt")).unwrap(), "two\n");

    // A new thread has not read the file: its edit is refused.
    let third = client.request("workspace/executeCommand", ask_params("make it two again"));
    assert_ne!(third["result"]["threadId"], json!(thread_id));
    let (is_error, content) = client.tool_results().last().unwrap().clone();
    assert!(is_error && content.contains("You must read this file before editing"), "{content}");

    let threads = client.request("workspace/executeCommand", json!({"command": "tandem.threads", "arguments": []}));
    let listed = threads["result"]["threads"].as_array().unwrap();
    let ours = listed.iter().find(|t| t["threadId"] == json!(thread_id)).unwrap();
    assert_eq!((ours["title"].as_str(), ours["runs"].as_u64(), ours["turns"].as_u64()), (Some("read notes.txt"), Some(2), Some(4)), "{ours}");
    assert!(ours["tokens"]["input"].as_u64().unwrap() > 0);
    let forget = client.request("workspace/executeCommand", json!({"command": "tandem.forget", "arguments": [{"threadId": thread_id}]}));
    assert_eq!(forget["result"]["forgotten"], true, "{forget}");
    let gone = client.request(
        "workspace/executeCommand",
        json!({"command": "tandem.ask", "arguments": [{"prompt": "hello?", "threadId": thread_id}]}),
    );
    assert!(gone["error"]["message"].as_str().unwrap().contains("no saved thread"), "{gone}");
    client.shutdown();
}

/// `"wait": false` answers at once with the run id; the run goes on and its
/// end comes as the `end` run event. The server's code actions ask that
/// way, since editors run their commands synchronously (eglot gives up
/// after 10 s and sends no `didChange` meanwhile).
#[test]
fn ask_without_waiting_answers_at_once_and_ends_with_the_end_event() {
    let f = Fixture::new(&[("notes.txt", "alpha\nbeta\n")]);
    let mut client = f.start(
        json!([turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "beta", "BETA")]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let uri = client.open(&f.path("notes.txt"), "alpha\nbeta\n");
    // The code action for a selection carries "wait": false.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "context": {"diagnostics": []}}),
    );
    let command = actions["result"][0]["command"].clone();
    assert_eq!(command["arguments"][0]["wait"], false, "{actions}");
    let ask = client.send_request("workspace/executeCommand", command);
    // The answer comes before the edit is even sent.
    let first = client.next_request_or_response(ask);
    assert_eq!(first["id"], json!(ask), "the ask is answered first: {first}");
    // DESIGN.md: `wait: false` answers at once with `{runId, threadId}`.
    assert_eq!(first["result"]["runId"], json!("run-1"));
    assert!(first["result"]["threadId"].as_str().is_some_and(|id| !id.is_empty()), "{first}");
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let end = client.wait_for("the end event", |m| m["method"] == "tandem/runEvent" && m["params"]["event"]["type"] == "end");
    assert_eq!(end["params"]["runId"], "run-1");
    assert_eq!(end["params"]["event"]["status"], "completed", "{end}");
    assert_eq!(client.text(&uri), "alpha\nBETA\n");
    client.shutdown();
}

/// `"wait": false` to eglot 1.9 (no `clientInfo`, `workspace/configuration`
/// taken), which reads nothing past the answer to its synchronous request
/// in the same read: after the answer comes a `workspace/configuration`,
/// and while it is unanswered only log messages (the cue to read on); the
/// run starts once it is answered. Then nothing unasked comes while the
/// applyEdit waits for the user: eglot asks "Proceed?" inside its process
/// filter, and Emacs 28's jsonrpc lost its place in the stream when output
/// came meanwhile (a log message that went on while the run lasted), so
/// the run's `end` was never read.
#[test]
fn ask_without_waiting_to_eglot_starts_once_the_answer_is_read_and_sends_nothing_while_the_edit_is_asked() {
    let f = Fixture::new(&[("notes.txt", "alpha\nbeta\n")]);
    let mut client = f.start(
        json!([turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "beta", "BETA")]), done()]),
        json!({"workspace": {"configuration": true}}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let pulled = client.server_request("workspace/configuration");
    client.respond(&pulled["id"], json!([null]));
    let uri = client.open(&f.path("notes.txt"), "alpha\nbeta\n");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "context": {"diagnostics": []}}),
    );
    let ask = client.send_request("workspace/executeCommand", actions["result"][0]["command"].clone());
    assert_eq!(client.response(ask)["result"]["runId"], "run-1");
    // An editor that has not read past the answer yet.
    let probe = client.server_request("workspace/configuration");
    let meanwhile = client.arriving_within(std::time::Duration::from_millis(2500));
    assert!(!meanwhile.is_empty() && meanwhile.iter().all(|m| m["method"] == "window/logMessage"), "only log messages: {meanwhile:#?}");
    assert!(client.run_events().is_empty(), "the run waited: {:#?}", client.run_events());
    client.respond(&probe["id"], json!([null]));
    let apply = client.server_request("workspace/applyEdit");
    // The user reads eglot's "Proceed?" for a while.
    let during = client.arriving_within(std::time::Duration::from_millis(2500));
    assert!(during.is_empty(), "nothing while the edit is asked: {during:#?}");
    client.apply_edit_request(&apply);
    let end = client.wait_for("the end event", |m| m["method"] == "tandem/runEvent" && m["params"]["event"]["type"] == "end");
    assert_eq!(end["params"]["event"]["status"], "completed", "{end}");
    assert_eq!(client.text(&uri), "alpha\nBETA\n");
    client.shutdown();
}

/// Issue 28, through the editor: an Anthropic key in the environment, no
/// provider named, and the editor's `baseUrl` setting (what VS Code's
/// walkthrough sets). `tandem.provider` says the OpenAI-compatible server
/// at that URL, the run's first event says the same, and the request goes
/// to that loopback server, not to the Anthropic one.
#[tokio::test(flavor = "multi_thread")]
async fn the_editors_base_url_chooses_the_provider_and_tandem_provider_says_so() {
    let local = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("openai/verbatim_text_with_logprobs.sse"))]).await;
    let anthropic = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let (local_url, anthropic_url) = (local.url.clone(), anthropic.url.clone());
    let run = tokio::task::spawn_blocking(move || {
        let f = Fixture::new(&[]);
        let home = f.root.parent().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let home = home.display().to_string();
        let env = [("HOME", home.as_str()), ("ANTHROPIC_API_KEY", "sk-ant-stored"), ("ANTHROPIC_BASE_URL", anthropic_url.as_str())];
        let mut client = LspClient::start(&f.root, &env);
        let init = client.initialize(json!({}), json!({"tandem": {"baseUrl": local_url}}));
        assert!(init.get("result").is_some(), "{init}");
        let provider = client.request("workspace/executeCommand", json!({"command": "tandem.provider", "arguments": []}));
        let answer = client.request("workspace/executeCommand", ask_params("hello"));
        let first = client.run_events().into_iter().next();
        client.shutdown();
        (provider, answer, first)
    });
    let (provider, answer, first) = run.await.unwrap();
    assert_eq!((provider["result"]["provider"].as_str(), provider["result"]["base_url"].as_str()), (Some("openai"), Some(local.url.as_str())), "{provider}");
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let first = first.unwrap();
    assert_eq!((first["type"].as_str(), first["provider"].as_str(), first["base_url"].as_str()), (Some("provider"), Some("openai"), Some(local.url.as_str())), "{first}");
    assert_eq!((local.requests().len(), anthropic.requests().len()), (1, 0), "the request went to the base URL's server");
}

/// The VS Code panel's pickers: `tandem.provider` answers the models to
/// offer and the mode runs start in, and a model and mode the editor's
/// settings change to (`workspace/didChangeConfiguration`, no restart) are
/// what it answers next and what the next run uses.
#[tokio::test(flavor = "multi_thread")]
async fn tandem_provider_names_the_models_and_the_mode_and_follows_a_settings_change() {
    let local = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("openai/verbatim_text_with_logprobs.sse"))]).await;
    let local_url = local.url.clone();
    let run = tokio::task::spawn_blocking(move || {
        let f = Fixture::new(&[]);
        let home = f.root.parent().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let home = home.display().to_string();
        let mut client = LspClient::start(&f.root, &[("HOME", home.as_str())]);
        let init = client.initialize(json!({}), json!({"tandem": {"provider": "openai", "baseUrl": local_url, "model": "qwen3"}}));
        assert!(init.get("result").is_some(), "{init}");
        let before = client.request("workspace/executeCommand", json!({"command": "tandem.provider", "arguments": []}));
        client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"provider": "openai", "baseUrl": local_url, "model": "qwen3-coder", "permissionMode": "plan"}}}));
        let after = client.request("workspace/executeCommand", json!({"command": "tandem.provider", "arguments": []}));
        let answer = client.request("workspace/executeCommand", ask_params("hello"));
        client.shutdown();
        (before, after, answer)
    });
    let (before, after, answer) = run.await.unwrap();
    assert_eq!((&before["result"]["model"], &before["result"]["models"], &before["result"]["permissionMode"]), (&json!("qwen3"), &json!(["qwen3"]), &json!("default")), "{before}");
    assert_eq!((&after["result"]["model"], &after["result"]["models"], &after["result"]["permissionMode"]), (&json!("qwen3-coder"), &json!(["qwen3-coder"]), &json!("plan")), "{after}");
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let requests = local.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(body["model"], "qwen3-coder", "the run used the new model");
    assert!(body.to_string().contains("Plan Mode Active"), "the run was in plan mode: {body}");
}
