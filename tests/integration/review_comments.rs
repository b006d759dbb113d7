//! The user's comments on the hunks of an agent's edit, sent with the
//! editor's review answer, reach the model in the edit's tool result in
//! the same run: a rejected hunk with its reason, an accepted one with a
//! remark (the model's next request, as the mock model recorded it).

use crate::common;
use common::lsp_client::{ask_params, LspClient};
use common::mock_model::MockModel;
use common::turns::{last_results, text, tools};
use serde_json::json;

/// A client whose review is its own (change annotations): the first edit
/// is rejected with a comment on its hunk, the second applied with one;
/// the model's next requests carry each comment with the hunk's decision.
#[tokio::test(flavor = "multi_thread")]
async fn a_hunk_comment_in_the_review_answer_reaches_the_models_next_request() {
    let mock = MockModel::start(vec![
        tools("", &[("toolu_r", "read_file", json!({"file_path": "a.txt"}))]),
        tools("", &[("toolu_e1", "edit_file", json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}))]),
        tools("", &[("toolu_e2", "edit_file", json!({"file_path": "a.txt", "old_string": "one", "new_string": "ONE"}))]),
        text("Done."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let url = mock.url.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let home = root.join(".home").display().to_string();
        let data = root.join(".data").display().to_string();
        let env = [("HOME", home.as_str()), ("XDG_DATA_HOME", data.as_str()), ("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "k"), ("TANDEM_MODEL", "claude-sonnet-4-5")];
        let mut client = LspClient::start(&root, &env);
        let capabilities = json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}});
        let init = client.initialize(capabilities, json!({}));
        assert!(init.get("result").is_some(), "{init}");
        let uri = client.open(&root.join("a.txt"), "one\n");
        let ask = client.send_request("workspace/executeCommand", ask_params("edit a.txt"));
        let apply = client.server_request("workspace/applyEdit");
        let rejected = json!([{"hunk": 1, "lines": {"startLine": 1, "endLine": 1}, "decision": "rejected", "comment": "not two: make it upper case"}]);
        client.respond(&apply["id"], json!({"applied": false, "failureReason": "the user chose Reject in the Tandem review", "comments": rejected}));
        let apply = client.server_request("workspace/applyEdit");
        let accepted = json!([{"hunk": 1, "decision": "accepted", "comment": "good; add a second line saying two"}]);
        client.apply_edit_answering(&apply, json!({"comments": accepted}));
        let answer = client.response(ask);
        assert_eq!(client.text(&uri), "ONE\n");
        // Kept in the thread: a transcript opened later shows them.
        let thread = answer["result"]["threadId"].clone();
        let transcript = client.request("workspace/executeCommand", json!({"command": "tandem.transcript", "arguments": [{"threadId": thread}]}));
        let results: Vec<String> = transcript["result"]["events"].as_array().unwrap().iter().filter(|e| e["type"] == "tool_result").map(|e| e["content"].as_str().unwrap().to_string()).collect();
        assert!(results.iter().any(|r| r.contains("- hunk 1 (line 1) rejected by the user: not two: make it upper case")), "{results:#?}");
        assert!(results.iter().any(|r| r.contains("- hunk 1 accepted by the user, with a comment: good; add a second line saying two")), "{results:#?}");
        client.shutdown();
        answer
    })
    .await
    .unwrap();
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "{:?}", mock.log());
    let (id, is_error, rejected) = &last_results(&requests[2].body)[0];
    assert_eq!((id.as_str(), *is_error), ("toolu_e1", true), "{rejected}");
    assert!(rejected.starts_with("Error: the user rejected the edit to a.txt"), "{rejected}");
    assert!(rejected.contains("\n- hunk 1 (line 1) rejected by the user: not two: make it upper case"), "{rejected}");
    let (id, is_error, accepted) = &last_results(&requests[3].body)[0];
    assert_eq!((id.as_str(), *is_error), ("toolu_e2", false), "{accepted}");
    assert!(accepted.starts_with("Successfully edited a.txt"), "{accepted}");
    assert!(accepted.contains("\n- hunk 1 accepted by the user, with a comment: good; add a second line saying two"), "{accepted}");
}

/// "Send review to agent" after a run: `tandem.sendReview` with the
/// user's comments on the run's changes continues the thread, its prompt
/// the comments with their files and lines (the model's request, as the
/// mock model recorded it); no comments is an InvalidParams error and
/// nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn send_review_starts_the_next_turn_with_the_comments() {
    let mock = MockModel::start(vec![text("First."), text("Addressed.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let url = mock.url.clone();
    let (first, refused, second) = tokio::task::spawn_blocking(move || {
        let home = root.join(".home").display().to_string();
        let data = root.join(".data").display().to_string();
        let env = [("HOME", home.as_str()), ("XDG_DATA_HOME", data.as_str()), ("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "k"), ("TANDEM_MODEL", "claude-sonnet-4-5")];
        let mut client = LspClient::start(&root, &env);
        let init = client.initialize(json!({}), json!({}));
        let commands = init["result"]["capabilities"]["executeCommandProvider"]["commands"].clone();
        assert!(commands.as_array().unwrap().iter().any(|c| c == "tandem.sendReview"), "{commands}");
        let first = client.request("workspace/executeCommand", ask_params("tidy a.txt"));
        let thread = first["result"]["threadId"].clone();
        let refused = client.request("workspace/executeCommand", json!({"command": "tandem.sendReview", "arguments": [{"threadId": thread, "comments": []}]}));
        let a = common::lsp_client::uri(&root.join("a.txt"));
        let comments = json!([{"uri": a, "startLine": 2, "endLine": 3, "comment": "two and three belong together"}, {"uri": a, "comment": "add a heading"}]);
        let second = client.request("workspace/executeCommand", json!({"command": "tandem.sendReview", "arguments": [{"threadId": thread, "comments": comments}]}));
        client.shutdown();
        (first, refused, second)
    })
    .await
    .unwrap();
    assert_eq!(first["result"]["status"], "completed", "{first}");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("no comments to send"), "{refused}");
    assert_eq!(second["result"]["status"], "completed", "{second}");
    assert_eq!(second["result"]["threadId"], first["result"]["threadId"], "the review continues the thread");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the refused review ran nothing: {:?}", mock.log());
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert!(messages.len() >= 3, "the thread's first turn is in the request: {messages:?}");
    let last = messages.last().unwrap().to_string();
    assert!(last.contains("- a.txt lines 2-3: two and three belong together") && last.contains("- a.txt: add a heading"), "{last}");
}
