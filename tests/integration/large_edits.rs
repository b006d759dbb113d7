//! Cost follows the edit, not the document: a rewrite of every line of a
//! large file is planned off the async runtime, with a bounded diff, so
//! `tandem lsp` keeps answering the editor meanwhile. By events only:
//! which message comes first, never how long anything took (the figures
//! are in `bench/`).

#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use crate::common::lsp_client::{ask_params, Fixture};
use crate::common::script::{done, read, turn};

/// Lines of the file rewritten: every one changes, the diff's worst case
/// (about 1 MB; Myers without a deadline would take minutes on it).
const LINES: usize = 40_000;

/// The server's runtime gets one worker thread (`TOKIO_WORKER_THREADS=1`),
/// so CPU work on it would stop every other task: requests sent once the
/// write_file call is announced must be answered before the plan ends
/// (the plan's end is the permission prompt, which carries its diff; the
/// diff of this rewrite runs until its deadline).
#[test]
fn the_server_answers_while_a_rewrite_of_every_line_of_a_large_file_is_planned() {
    let old: String = (0..LINES).map(|i| format!("line {i} of the text as it was\n")).collect();
    let new: String = (0..LINES).map(|i| format!("LINE {i} OF THE TEXT AS IT IS NOW\n")).collect();
    let f = Fixture::new(&[("big.txt", &old)]);
    let write = json!({"name": "write_file", "input": {"file_path": "big.txt", "content": new}});
    let mut client = f.start_with_env(
        // The rewrite fills the scripted context: a compaction takes a turn.
        json!([turn(vec![read("big.txt")]), turn(vec![write]), done(), done()]),
        json!({}),
        json!({}),
        &[("TOKIO_WORKER_THREADS", "1")],
    );
    let ask = client.send_request("workspace/executeCommand", ask_params("rewrite big.txt"));
    client.wait_for("the write_file call", |m| {
        m["method"] == "tandem/runEvent" && m["params"]["event"]["type"] == "tool_call" && m["params"]["event"]["name"] == "write_file"
    });
    // Requests one at a time, each sent once the last is answered, until
    // the prompt comes. Were the plan on the runtime, the one worker would
    // be busy from the call's start to the prompt, and none would be (seen:
    // 0 with the plan on the worker, 5 to 19 with it off).
    let is_prompt = |m: &Value| m.get("id").is_some() && (m["method"] == "window/showMessageRequest" || m["method"] == "workspace/applyEdit");
    let mut answered = 0;
    let prompt = loop {
        let provider = client.send_request("workspace/executeCommand", json!({"command": "tandem.provider"}));
        let next = client.wait_for("the answer or the edit's prompt", |m| (m.get("method").is_none() && m["id"] == json!(provider)) || is_prompt(m));
        if is_prompt(&next) {
            break next;
        }
        assert!(next.get("result").is_some(), "{next}");
        answered += 1;
    };
    assert!(answered >= 1, "the server answered {answered} request(s) while the rewrite was planned");
    // The plan then ends with the prompt; the edit is applied and lands.
    assert_eq!(prompt["method"], "window/showMessageRequest", "{prompt}");
    let allow = prompt["params"]["actions"]
        .as_array()
        .and_then(|actions| actions.iter().find(|a| a["title"].as_str().is_some_and(|t| t == "Apply")))
        .cloned()
        .unwrap_or_else(|| panic!("no Apply action in {prompt}"));
    client.respond(&prompt["id"], allow);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let written = std::fs::read_to_string(f.path("big.txt")).unwrap();
    assert!(written == new, "big.txt does not hold the new text");
    // Every line changed: the run reports them all, as one range.
    assert_eq!(answer["result"]["edits"][0]["ranges"], json!([{"startLine": 1, "endLine": LINES}]), "{}", answer["result"]["edits"]);
    client.shutdown();
}
