//! `tandem.review` over LSP with the scripted model: findings published as
//! `textDocument/publishDiagnostics` (`source: "tandem review"`, a `code`
//! per kind, `relatedInformation`), moved by `didChange`, dropped when
//! their lines are rewritten, and the three code actions: "Fix with
//! Tandem" (a `tandem.ask` of the finding), "Apply suggested change" (a
//! versioned WorkspaceEdit), "Dismiss" (remembered for the next review);
//! a new server on the workspace publishes the saved findings again.

#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use crate::common::lsp_client::{uri, Fixture, LspClient};

const BEFORE: &str = "fn a() {}\nfn div(a: i32, b: i32) -> i32 {\n    a + b\n}\nfn c() {}\n";
const AFTER: &str = "fn a() {}\nfn div(a: i32, b: i32) -> i32 {\n    a / b\n}\nfn c() {}\n";

fn git(dir: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A repository whose `lib.rs` changed since its commit, and the model's
/// review: two findings, the second pointing at the first function too.
fn reviewed() -> (Fixture, LspClient) {
    let fixture = Fixture::new(&[("lib.rs", BEFORE)]);
    git(&fixture.root, &["init", "-q"]);
    git(&fixture.root, &["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "zero"]);
    git(&fixture.root, &["add", "lib.rs"]);
    git(&fixture.root, &["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one"]);
    std::fs::write(fixture.path("lib.rs"), AFTER).unwrap();
    let turns = json!([
        {"tool_calls": [
            {"name": "report_finding", "input": {"file_path": "lib.rs", "start_line": 3, "end_line": 3, "severity": "error", "kind": "bug",
                "title": "division by zero panics", "body": "b may be 0.", "suggestion": "    a.checked_div(b).unwrap_or(0)"}},
            {"name": "report_finding", "input": {"file_path": "lib.rs", "start_line": 5, "end_line": 5, "severity": "info", "kind": "style",
                "title": "c is never called", "body": "Remove it.", "related": [{"file_path": "lib.rs", "line": 1, "message": "a is never called either"}]}}
        ]},
        {"text": "2 findings."}
    ]);
    let client = fixture.start(turns, json!({}), json!({}));
    (fixture, client)
}

/// The next diagnostics published for `uri`.
fn published(client: &mut LspClient, uri: &str) -> Vec<Value> {
    let message = client.wait_for("publishDiagnostics", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri);
    message["params"]["diagnostics"].as_array().unwrap().clone()
}

/// Each diagnostic as `code lines (first line of the message)`.
fn outline(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| {
            let message = d["message"].as_str().unwrap().lines().next().unwrap().to_string();
            format!("{} {}-{} {message}", d["code"].as_str().unwrap(), d["range"]["start"]["line"], d["range"]["end"]["line"])
        })
        .collect()
}

/// The diagnostics of `uri` once the review's publications settle: the
/// last one published (those before it taken too).
fn settled(client: &mut LspClient, uri: &str) -> Vec<Value> {
    published(client, uri);
    client.arriving_within(std::time::Duration::from_millis(500));
    let is_ours = |m: &Value| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
    let last = client.seen.iter().rev().find(|m| is_ours(m)).cloned().unwrap();
    client.take_all(is_ours);
    last["params"]["diagnostics"].as_array().unwrap().clone()
}

fn review(client: &mut LspClient) -> Value {
    let response = client.request("workspace/executeCommand", json!({"command": "tandem.review", "arguments": [{"level": "quick"}]}));
    response["result"].clone()
}

#[test]
fn findings_are_published_and_move_with_the_users_edits() {
    let (fixture, mut client) = reviewed();
    let uri = client.open(&fixture.path("lib.rs"), AFTER);
    let answer = review(&mut client);
    assert_eq!(answer["status"], "completed", "{answer}");
    let ids: Vec<&str> = answer["findings"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["F1", "F2"]);
    // Published as the findings came: the last publication holds both.
    let diagnostics = settled(&mut client, &uri);
    assert_eq!(outline(&diagnostics), ["bug 2-2 division by zero panics", "style 4-4 c is never called"]);
    let first = &diagnostics[0];
    assert_eq!((first["source"].as_str(), first["severity"].as_i64()), (Some("tandem review"), Some(1)));
    assert_eq!(first["range"], json!({"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 9}}));
    assert_eq!(diagnostics[1]["relatedInformation"][0]["location"]["range"]["start"]["line"], 0);
    assert_eq!(diagnostics[1]["relatedInformation"][0]["message"], "a is never called either");

    // Two lines typed above: both move down.
    client.type_at_line(&uri, 0, "// one\n// two\n");
    assert_eq!(outline(&published(&mut client, &uri)), ["bug 4-4 division by zero panics", "style 6-6 c is never called"]);
    // The user rewrites the line of the second: it is dropped, the first stays.
    client.type_at_line(&uri, 6, "pub ");
    assert_eq!(outline(&published(&mut client, &uri)), ["bug 4-4 division by zero panics"]);
    client.shutdown();
}

#[test]
fn the_code_actions_fix_apply_and_dismiss_a_finding() {
    let (fixture, mut client) = reviewed();
    let uri = client.open(&fixture.path("lib.rs"), AFTER);
    review(&mut client);
    let diagnostics = settled(&mut client, &uri);
    let actions_for = |client: &mut LspClient, diagnostic: &Value| -> Vec<Value> {
        let response = client.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}}),
        );
        response["result"].as_array().unwrap().clone()
    };
    let actions = actions_for(&mut client, &diagnostics[0]);
    let titles: Vec<&str> = actions.iter().map(|a| a["title"].as_str().unwrap()).collect();
    // The finding's three, then the selection's own (its range is not empty).
    assert_eq!(titles, ["Tandem: fix with Tandem (division by zero panics)", "Tandem: apply suggested change", "Tandem: dismiss this finding", "Tandem: explain this code"]);

    // "Fix with Tandem" is a run of the finding as its prompt.
    let fix = &actions[0]["command"];
    assert_eq!(fix["command"], "tandem.ask");
    let prompt = fix["arguments"][0]["prompt"].as_str().unwrap();
    assert!(prompt.starts_with("Fix this review finding in lib.rs (lines 3-3): division by zero panics\n\nb may be 0."), "{prompt}");
    assert!(prompt.contains("a.checked_div(b).unwrap_or(0)"), "{prompt}");
    let response = client.request("workspace/executeCommand", fix.clone());
    let run_id = response["result"]["runId"].as_str().unwrap().to_string();
    client.wait_for("the fix run's end", |m| m["method"] == "tandem/runEvent" && m["params"]["runId"] == run_id.as_str() && m["params"]["event"]["type"] == "end");
    // A fix run is a run like any other: report_finding is not among its tools.
    assert!(client.tool_results().iter().any(|(error, content)| *error && content.starts_with("Unknown tool: report_finding")), "{:?}", client.tool_results());

    // "Apply suggested change": a plain edit for the document's version.
    let edit = actions[1]["edit"].clone();
    assert_eq!(edit["documentChanges"][0]["textDocument"]["version"], 1);
    let (text, version) = client.documents[&uri].clone();
    let applied = tandem::lsp::edits::apply_as_editor(&json!({"edit": edit}), &text, version, tandem::lsp::position::PositionEncoding::Utf16).unwrap();
    assert_eq!(applied.text, "fn a() {}\nfn div(a: i32, b: i32) -> i32 {\n    a.checked_div(b).unwrap_or(0)\n}\nfn c() {}\n");
    client.documents.insert(uri.clone(), (applied.text.clone(), applied.version));
    client.notify("textDocument/didChange", applied.did_change());
    // Its lines rewritten, the finding is gone.
    assert_eq!(outline(&published(&mut client, &uri)), ["style 4-4 c is never called"]);
    // The same edit again is for a version the document left.
    assert!(tandem::lsp::edits::apply_as_editor(&json!({"edit": edit}), &applied.text, applied.version, tandem::lsp::position::PositionEncoding::Utf16).is_err());

    // "Dismiss": gone, and not shown again by the next review.
    let dismiss = actions_for(&mut client, &diagnostics[1]).into_iter().find(|a| a["title"] == "Tandem: dismiss this finding").unwrap();
    let response = client.request("workspace/executeCommand", dismiss["command"].clone());
    assert_eq!(response["result"], json!({"dismissed": true}), "{response}");
    assert_eq!(outline(&published(&mut client, &uri)), Vec::<String>::new());
    // The next review reports both again (the script's model does): the
    // dismissed one is not shown.
    let answer = review(&mut client);
    let ids: Vec<&str> = answer["findings"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["F1"], "{answer}");
    assert_eq!(outline(&settled(&mut client, &uri)), ["bug 2-2 division by zero panics"]);
    client.shutdown();
}

#[test]
fn a_new_server_publishes_the_saved_findings_that_still_hold() {
    let (fixture, mut client) = reviewed();
    let path = fixture.path("lib.rs");
    let uri = uri(&path);
    review(&mut client);
    assert_eq!(outline(&settled(&mut client, &uri)), ["bug 2-2 division by zero panics", "style 4-4 c is never called"]);
    client.shutdown();

    // Meanwhile, on disk: a line added above both, and the second's line rewritten.
    std::fs::write(&path, format!("// new\n{}", AFTER.replace("fn c() {}", "pub fn c() {}"))).unwrap();
    // A new server on the workspace, no review asked: the first finding,
    // where its line is now; the second, whose line changed, not at all.
    let mut client = fixture.start(json!([]), json!({}), json!({}));
    assert_eq!(outline(&settled(&mut client, &uri)), ["bug 3-3 division by zero panics"]);
    assert!(client.run_events().is_empty());
    client.shutdown();
}

#[test]
fn nothing_to_review_starts_no_run_and_bad_arguments_are_errors() {
    let fixture = Fixture::new(&[("lib.rs", BEFORE)]);
    git(&fixture.root, &["init", "-q"]);
    git(&fixture.root, &["add", "lib.rs"]);
    git(&fixture.root, &["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one"]);
    let mut client = fixture.start(json!([]), json!({}), json!({}));
    let answer = review(&mut client);
    assert_eq!(answer, json!({"nothingToReview": "Nothing to review: the uncommitted changes hold no changes."}));
    let response = client.request("workspace/executeCommand", json!({"command": "tandem.review", "arguments": [{"scope": "branch"}]}));
    assert_eq!(response["error"]["message"], "tandem.review: scope \"branch\" needs \"base\"", "{response}");
    let response = client.request("workspace/executeCommand", json!({"command": "tandem.review", "arguments": [{"level": "deep"}]}));
    assert!(response["error"]["message"].as_str().unwrap().contains("level \"deep\""), "{response}");
    assert!(client.run_events().is_empty());
    client.shutdown();
}
