//! Thread threads in `tandem lsp`, end to end: the real binary over
//! stdio with the test client (tests/common/lsp_client.rs) and the scripted
//! model. Two threads running at once in one server, what each run
//! reports, and what each thread is allowed.
//!
//! Each run builds its model from the settings of its ask, so a
//! configuration pushed between two asks gives the second thread its own
//! script.

#![allow(clippy::unwrap_used)]

use crate::common::lsp_client;
use crate::common::script;

use lsp_client::{Fixture, LspClient};
use script::{done, edit, read, shell, turn};
use serde_json::{json, Value};

fn ask(prompt: &str, thread_id: Option<&str>) -> Value {
    let mut argument = json!({"prompt": prompt});
    if let Some(id) = thread_id {
        argument["threadId"] = json!(id);
    }
    json!({"command": "tandem.ask", "arguments": [argument]})
}

/// Use `turns` as the model script of the asks that follow.
fn use_script(client: &mut LspClient, f: &Fixture, name: &str, turns: Value, barrier_uri: &str) {
    let script = f.root.parent().unwrap().join(name);
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"script": script}}}));
    // The pushed settings apply in arrival order: after this round trip,
    // the next ask sees them.
    client.barrier(barrier_uri);
}

/// The run events of one run, in order.
fn events_of(client: &LspClient, run_id: &str) -> Vec<Value> {
    client
        .seen
        .iter()
        .filter(|m| m["method"] == "tandem/runEvent" && m["params"]["runId"] == run_id)
        .map(|m| m["params"]["event"].clone())
        .collect()
}

fn edited_uri(apply: &Value) -> (String, i64) {
    let document = &apply["params"]["edit"]["documentChanges"][0]["textDocument"];
    (document["uri"].as_str().unwrap().to_string(), document["version"].as_i64().unwrap())
}

/// The answer's edits, without the `toolCallId` each carries.
fn edits(answer: &Value) -> Value {
    let mut edits = answer["result"]["edits"].clone();
    for edit in edits.as_array_mut().into_iter().flatten() {
        edit.as_object_mut().map(|e| e.remove("toolCallId"));
    }
    edits
}

#[test]
fn two_threads_edit_one_file_at_once_serialised_nothing_lost_each_reports_its_own_edits() {
    let f = Fixture::new(&[("a.txt", "one\ntwo\n"), ("c.txt", "x\n")]);
    // Thread A changes line 1 of a.txt.
    let script_a = json!([turn(vec![read("a.txt")]), turn(vec![edit("a.txt", "one", "ONE")]), done()]);
    let mut client = f.start(script_a, json!({}), json!({"tandem": {"permissionMode": "acceptEdits"}}));
    let a_uri = client.open(&f.path("a.txt"), "one\ntwo\n");
    let c_uri = client.open(&f.path("c.txt"), "x\n");

    let ask_a = client.send_request("workspace/executeCommand", ask("shout one", None));
    // A's edit reaches the editor, which keeps it waiting: A holds a.txt.
    let apply_a = client.server_request("workspace/applyEdit");
    assert_eq!(edited_uri(&apply_a), (a_uri.clone(), 1));
    let thread_a = client
        .seen
        .iter()
        .find(|m| m["method"] == "tandem/runEvent" && m["params"]["runId"] == "run-1")
        .map(|m| m["params"]["threadId"].as_str().unwrap().to_string())
        .unwrap();

    // Thread B reads a.txt as it is now (A's edit is not in yet), changes
    // c.txt, then changes line 2 of a.txt from what it read.
    let script_b = json!([
        turn(vec![read("a.txt"), read("c.txt")]),
        turn(vec![edit("c.txt", "x", "X")]),
        turn(vec![edit("a.txt", "two", "TWO")]),
        turn(vec![read("a.txt")]),
        turn(vec![edit("a.txt", "two", "TWO")]),
        done()
    ]);
    use_script(&mut client, &f, "script-b.json", script_b, &a_uri);
    let ask_b = client.send_request("workspace/executeCommand", ask("shout two and x", None));
    let apply_c = client.server_request("workspace/applyEdit");
    assert_eq!(edited_uri(&apply_c), (c_uri.clone(), 1));
    client.apply_edit_request(&apply_c);

    // One run per thread: a second ask on busy thread A is refused.
    let refused = client.request("workspace/executeCommand", ask("and more", Some(&thread_a)));
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("thread {thread_a} is busy with run run-1")), "{message}");
    assert!(message.contains("tandem.cancel") && message.contains("omit threadId"), "{message}");

    // B's edit of a.txt has started while A's still waits in the editor.
    client.wait_for("B's edit of a.txt", |m| {
        m["method"] == "tandem/runEvent"
            && m["params"]["runId"] == "run-2"
            && m["params"]["event"]["type"] == "tool_call"
            && m["params"]["event"]["input"]["file_path"] == "a.txt"
            && m["params"]["event"]["name"] == "edit_file"
    });
    client.barrier(&a_uri);
    // Serialised per file: no edit of a.txt computed from version 1 may
    // reach the editor while A's is open; B's comes after A's, from the
    // text A left.
    client.apply_edit_request(&apply_a);
    let apply_b = client.server_request("workspace/applyEdit");
    assert_eq!(edited_uri(&apply_b), (a_uri.clone(), 2), "B's edit must be computed from A's result: {apply_b}");
    client.apply_edit_request(&apply_b);

    let answer_a = client.response(ask_a);
    let answer_b = client.response(ask_b);
    assert_eq!(answer_a["result"]["status"], "completed", "{answer_a}");
    assert_eq!(answer_b["result"]["status"], "completed", "{answer_b}");
    assert_eq!(answer_a["result"]["threadId"], json!(thread_a));
    assert_ne!(answer_b["result"]["threadId"], json!(thread_a));
    // Each run reports its own edits, not the other thread's.
    // One entry per edit, in the order they landed (here: either).
    let statuses = |answer: &Value| -> Value {
        let mut all: Vec<Value> = edits(answer).as_array().unwrap().iter().map(|e| json!([e["uri"], e["status"]])).collect();
        all.sort_by_key(|e| e.to_string());
        json!(all)
    };
    assert_eq!(statuses(&answer_a), json!([[a_uri, "applied"]]), "{answer_a}");
    assert_eq!(statuses(&answer_b), json!([[a_uri, "applied"], [c_uri, "applied"]]), "{answer_b}");

    // Both edits landed; nothing was lost.
    assert_eq!(client.text(&a_uri), "ONE\nTWO\n");
    assert_eq!(client.text(&c_uri), "X\n");
    // B was told its read was stale, read again, and edited the new text.
    let b_results: Vec<String> =
        events_of(&client, "run-2").into_iter().filter(|e| e["type"] == "tool_result").map(|e| e["content"].as_str().unwrap().to_string()).collect();
    assert!(b_results[3].contains("a.txt was modified externally since your last read"), "{b_results:#?}");
    assert!(b_results[4].contains("ONE"), "{b_results:#?}");
    assert!(b_results[5].starts_with("Successfully edited a.txt"), "{b_results:#?}");
    // Invariant 1: open documents are never written to disk.
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "one\ntwo\n");
    client.shutdown();
}

/// Ask on `thread` and answer the permission prompt with `choice` if one
/// comes; returns the answer and whether a prompt came.
fn ask_answering(client: &mut LspClient, thread: Option<&str>, choice: &str) -> (Value, bool) {
    let id = client.send_request("workspace/executeCommand", ask("touch it", thread));
    let first = client.next_request_or_response(id);
    if first["method"] != "window/showMessageRequest" {
        return (first, false);
    }
    let actions: Vec<&str> = first["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert!(actions.contains(&choice), "{actions:?}");
    client.respond(&first["id"], json!({"title": choice}));
    (client.response(id), true)
}

#[test]
fn always_allow_belongs_to_the_thread_its_follow_ups_and_resumes_keep_it_other_threads_are_asked() {
    let f = Fixture::new(&[]);
    let script = json!([turn(vec![shell("touch granted.txt")]), done()]);
    let mut client = f.start(script.clone(), json!({}), json!({}));

    let (first, asked) = ask_answering(&mut client, None, "Always allow");
    assert!(asked, "touch is not read-only: the first run must ask");
    assert_eq!(first["result"]["status"], "completed", "{first}");
    let thread_a = first["result"]["threadId"].as_str().unwrap().to_string();

    // Another thread does not inherit A's grant.
    let (other, asked) = ask_answering(&mut client, None, "Allow once");
    assert!(asked, "a new thread must be asked again: {other}");
    assert_ne!(other["result"]["threadId"], json!(thread_a));

    // A's follow-up keeps it.
    let (follow_up, asked) = ask_answering(&mut client, Some(&thread_a), "Deny");
    assert!(!asked, "thread A was granted the command: {follow_up}");
    assert_eq!(follow_up["result"]["status"], "completed", "{follow_up}");
    client.shutdown();

    // So does A resumed after a restart (the grant is saved with the
    // thread), and nothing was written to the project's settings.
    let mut client = f.start(script, json!({}), json!({}));
    let (resumed, asked) = ask_answering(&mut client, Some(&thread_a), "Deny");
    assert!(!asked, "thread A resumed keeps its grant: {resumed}");
    assert_eq!(resumed["result"]["threadId"], json!(thread_a));
    assert!(!f.root.join(".tandem/settings.local.json").exists());
    client.shutdown();
}

fn transcript(client: &mut LspClient, thread: &str) -> Value {
    let answer = client.request("workspace/executeCommand", json!({"command": "tandem.transcript", "arguments": [{"threadId": thread}]}));
    assert!(answer.get("result").is_some(), "{answer}");
    answer["result"].clone()
}

/// One line per event: its type and the field a view shows first.
fn outline(transcript: &Value) -> Vec<String> {
    transcript["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let detail = match e["type"].as_str().unwrap() {
                "prompt" | "text" => e["text"].as_str().unwrap().to_string(),
                "tool_call" => format!("{} {}", e["name"].as_str().unwrap(), e["input"]["file_path"].as_str().unwrap_or("")),
                "tool_result" => e["content"].as_str().unwrap().lines().next().unwrap_or("").to_string(),
                "end" => e["status"].as_str().unwrap().to_string(),
                _ => String::new(),
            };
            format!("{}: {detail}", e["type"].as_str().unwrap())
        })
        .collect()
}

#[test]
fn a_threads_transcript_replays_every_run_of_it_also_after_a_restart() {
    let f = Fixture::new(&[("a.txt", "alpha\n")]);
    let script = json!([turn(vec![read("a.txt")]), {"text": "It says alpha."}]);
    let mut client = f.start(script.clone(), json!({}), json!({}));
    let a_uri = client.open(&f.path("a.txt"), "alpha\n");
    // The first ask points at the open file: the model gets that context,
    // the transcript shows what the user asked.
    let first = client.request(
        "workspace/executeCommand",
        json!({"command": "tandem.ask", "arguments": [{"prompt": "what is in a.txt?", "textDocument": {"uri": a_uri}}]}),
    );
    let thread = first["result"]["threadId"].as_str().unwrap().to_string();
    let second = client.request("workspace/executeCommand", ask("and now?", Some(&thread)));
    assert_eq!(second["result"]["status"], "completed", "{second}");
    // Another thread's runs are not part of it.
    let other = client.request("workspace/executeCommand", ask("unrelated", None));
    assert_eq!(other["result"]["status"], "completed", "{other}");

    let expected = [
        "prompt: what is in a.txt?",
        "tool_call: read_file a.txt",
        "tool_result:    1 | alpha",
        "text: It says alpha.",
        "end: completed",
        "prompt: and now?",
        "tool_call: read_file a.txt",
        "tool_result:    1 | alpha",
        "text: It says alpha.",
        "end: completed",
    ];
    let live = transcript(&mut client, &thread);
    assert_eq!(live["threadId"], json!(thread));
    assert_eq!(live["omitted"], 0);
    assert_eq!(outline(&live), expected, "{live:#}");
    // The call ids tie each result to its call, as in the live events.
    assert_eq!(live["events"][1]["id"], live["events"][2]["id"]);
    // And a call says what it does as its live event did (its files, its
    // summary), so a view reopened on the thread shows them.
    let call = &live["events"][1];
    let a_path = f.root.join("a.txt").canonicalize().unwrap();
    assert_eq!((&call["kind"], &call["summary"]), (&json!({"type": "read", "paths": [a_path]}), &json!("a.txt")), "{call:#}");
    client.shutdown();

    let mut client = f.start(script, json!({}), json!({}));
    assert_eq!(outline(&transcript(&mut client, &thread)), expected);
    let unknown = client.request("workspace/executeCommand", json!({"command": "tandem.transcript", "arguments": [{"threadId": "no-such-thread"}]}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    client.shutdown();
}

/// A thread's read ledger outlives `tandem lsp`: after a restart, whose
/// editor session numbers the document's versions from 1 again, a
/// follow-up on the thread edits an open file the thread read, unchanged
/// since, without reading it again; when the user changed it in between,
/// the edit is refused.
#[test]
fn a_follow_up_after_a_restart_edits_an_open_file_the_thread_read_and_is_refused_once_it_changed() {
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let options = json!({"tandem": {"permissionMode": "acceptEdits"}});
    let mut client = f.start(json!([turn(vec![read("a.txt")]), done()]), json!({}), options.clone());
    let a_uri = client.open(&f.path("a.txt"), "one\n");
    // Read at version 2, with a line the user has not saved.
    client.type_at_line(&a_uri, 1, "unsaved\n");
    let first = client.request("workspace/executeCommand", ask("what does a.txt say?", None));
    assert_eq!(first["result"]["status"], "completed", "{first}");
    let thread = first["result"]["threadId"].as_str().unwrap().to_string();
    client.shutdown();

    let mut client = f.start(json!([turn(vec![edit("a.txt", "one", "two")]), done()]), json!({}), options.clone());
    let a_uri = client.open(&f.path("a.txt"), "one\nunsaved\n");
    let asked = client.send_request("workspace/executeCommand", ask("now make it two", Some(&thread)));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(edited_uri(&apply), (a_uri.clone(), 1));
    client.apply_edit_request(&apply);
    let answer = client.response(asked);
    assert_eq!(answer["result"]["threadId"], json!(thread));
    assert_eq!(edits(&answer), json!([{"uri": a_uri, "status": "applied", "ranges": [{"startLine": 1, "endLine": 1}]}]), "{answer}");
    assert_eq!(client.text(&a_uri), "two\nunsaved\n");
    client.shutdown();

    // The user adds a line before the next follow-up: the thread's last
    // sight of a.txt (its own edit) is out of date.
    let mut client = f.start(json!([turn(vec![edit("a.txt", "two", "three")]), done()]), json!({}), options);
    let a_uri = client.open(&f.path("a.txt"), "two\nunsaved\nthe user's line\n");
    let answer = client.request("workspace/executeCommand", ask("now make it three", Some(&thread)));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    assert!(results[0].0 && results[0].1.contains("a.txt was modified externally since your last read"), "{results:?}");
    assert_eq!(edits(&answer), json!([]), "{answer}");
    assert_eq!(client.text(&a_uri), "two\nunsaved\nthe user's line\n");
    // Invariant 1: the open document was never written to disk.
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "one\n");
    client.shutdown();
}

// ---- Two editor windows on one workspace --------------------------------
//
// Each VS Code window runs its own extension host and so its own
// `tandem lsp`: two servers share the workspace's saved threads and
// checkpoints. These tests start two real servers on one folder (and one
// data folder, as two windows of one user have).

/// A second server ("window") on the fixture's workspace, with a file open
/// that `use_script` round trips go through.
fn window(f: &Fixture, options: Value) -> (LspClient, String) {
    let mut client = f.start(json!([done()]), json!({}), options);
    let barrier = client.open(&f.path("barrier.txt"), "barrier\n");
    (client, barrier)
}

/// Window A runs thread T; window B continues it (reading b.txt); A, which
/// still holds T from its own run, continues it again: it reads T from its
/// file first, so B's run is part of what A's follow-up knows (the read of
/// b.txt lets it edit b.txt unread), and the thread's file holds every run
/// in order.
#[test]
fn a_thread_continued_in_another_window_is_read_again_before_this_window_continues_it() {
    let f = Fixture::new(&[("b.txt", "bee\n"), ("barrier.txt", "barrier\n")]);
    let options = json!({"tandem": {"permissionMode": "acceptEdits"}});
    let (mut a, a_barrier) = window(&f, options.clone());
    let (mut b, b_barrier) = window(&f, options);

    use_script(&mut a, &f, "a1.json", json!([done()]), &a_barrier);
    let first = a.request("workspace/executeCommand", ask("first, in window A", None));
    assert_eq!(first["result"]["status"], "completed", "{first}");
    let thread = first["result"]["threadId"].as_str().unwrap().to_string();

    use_script(&mut b, &f, "b1.json", json!([turn(vec![read("b.txt")]), done()]), &b_barrier);
    let second = b.request("workspace/executeCommand", ask("second, in window B", Some(&thread)));
    assert_eq!(second["result"]["status"], "completed", "{second}");

    use_script(&mut a, &f, "a2.json", json!([turn(vec![edit("b.txt", "bee", "BEE")]), done()]), &a_barrier);
    let third = a.request("workspace/executeCommand", ask("third, in window A again", Some(&thread)));
    assert_eq!(third["result"]["status"], "completed", "{third}");
    let results = a.tool_results();
    assert!(!results[0].0, "window A's follow-up did not know window B's read of b.txt: {results:?}");
    assert_eq!(std::fs::read_to_string(f.path("b.txt")).unwrap(), "BEE\n");

    // Both windows, and a fresh server, see the three runs in order, and
    // window A's thread list counts them.
    let prompts = |t: &Value| outline(t).into_iter().filter(|l| l.starts_with("prompt: ")).collect::<Vec<_>>();
    let expected = ["prompt: first, in window A", "prompt: second, in window B", "prompt: third, in window A again"];
    assert_eq!(prompts(&transcript(&mut b, &thread)), expected);
    let listed = a.request("workspace/executeCommand", json!({"command": "tandem.threads", "arguments": []}));
    let entry = listed["result"]["threads"].as_array().unwrap().iter().find(|t| t["threadId"] == json!(thread)).cloned().unwrap();
    assert_eq!(entry["runs"], 3, "{listed}");
    a.shutdown();
    b.shutdown();
    let (mut fresh, _) = window(&f, json!({}));
    assert_eq!(prompts(&transcript(&mut fresh, &thread)), expected);
    fresh.shutdown();
}

/// While window A's run of thread T waits for the user, window B is
/// refused T (a clear error, nothing written) and cannot forget it; a new
/// thread in B runs. When A's server dies mid-run (the window closed),
/// its hold on T dies with it and B continues T.
#[test]
fn a_thread_running_in_another_window_is_refused_until_that_run_ends_or_its_server_dies() {
    let f = Fixture::new(&[("barrier.txt", "barrier\n")]);
    let (mut a, a_barrier) = window(&f, json!({}));
    let (mut b, b_barrier) = window(&f, json!({}));

    use_script(&mut a, &f, "a1.json", json!([done()]), &a_barrier);
    let first = a.request("workspace/executeCommand", ask("first", None));
    let thread = first["result"]["threadId"].as_str().unwrap().to_string();
    let thread_file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data/tandem/threads");
    let saved_bytes = || {
        std::fs::read_dir(&thread_file)
            .unwrap()
            .flatten()
            .map(|d| d.path().join(format!("{thread}.jsonl")))
            .find(|p| p.exists())
            .map(|p| std::fs::read(p).unwrap())
            .unwrap()
    };

    // A's follow-up asks before a command and waits for the answer.
    use_script(&mut a, &f, "a2.json", json!([turn(vec![shell("touch made.txt")]), done()]), &a_barrier);
    let asked = a.send_request("workspace/executeCommand", ask("run a command", Some(&thread)));
    let prompt = a.server_request("window/showMessageRequest");
    let before = saved_bytes();

    use_script(&mut b, &f, "b1.json", json!([done()]), &b_barrier);
    let refused = b.request("workspace/executeCommand", ask("me too", Some(&thread)));
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("this conversation is running in another window"), "{message}");
    assert!(message.contains("(pid "), "{message}");
    let forget = b.request("workspace/executeCommand", json!({"command": "tandem.forget", "arguments": [{"threadId": thread}]}));
    assert!(forget["error"]["message"].as_str().unwrap().contains("running in another window"), "{forget}");
    assert_eq!(saved_bytes(), before, "window B wrote to the thread window A is running");
    let other = b.request("workspace/executeCommand", ask("something else", None));
    assert_eq!(other["result"]["status"], "completed", "{other}");

    // A's run ends (the command denied): B may continue the thread.
    a.respond(&prompt["id"], json!({"title": "Deny"}));
    assert_eq!(a.response(asked)["result"]["status"], "completed");
    let continued = b.request("workspace/executeCommand", ask("now me", Some(&thread)));
    assert_eq!(continued["result"]["status"], "completed", "{continued}");

    // A runs it again and its server dies mid-run: B continues it.
    a.send_request("workspace/executeCommand", ask("run it again", Some(&thread)));
    a.server_request("window/showMessageRequest");
    let refused = b.request("workspace/executeCommand", ask("me too", Some(&thread)));
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    drop(a);
    let after_crash = b.request("workspace/executeCommand", ask("after the crash", Some(&thread)));
    assert_eq!(after_crash["result"]["status"], "completed", "{after_crash}");
    let prompts: Vec<String> = outline(&transcript(&mut b, &thread)).into_iter().filter(|l| l.starts_with("prompt: ")).collect();
    // (The run A's crash cut short may or may not have saved its prompt.)
    assert_eq!(prompts[..3], ["prompt: first", "prompt: run a command", "prompt: now me"]);
    assert_eq!(prompts.last().map(String::as_str), Some("prompt: after the crash"), "{prompts:?}");
    b.shutdown();
}

/// Each window's first run is `run-1`: window A's Undo of its `run-1`
/// takes back A's edit, not window B's later run of the same name.
#[test]
fn undo_of_a_run_id_takes_back_this_window_s_run_not_another_window_s_run_of_the_same_name() {
    let f = Fixture::new(&[("a.txt", "one\n"), ("c.txt", "x\n"), ("barrier.txt", "barrier\n")]);
    let options = json!({"tandem": {"permissionMode": "acceptEdits"}});
    let (mut a, a_barrier) = window(&f, options.clone());
    let (mut b, b_barrier) = window(&f, options);

    use_script(&mut a, &f, "a1.json", json!([turn(vec![read("a.txt")]), turn(vec![edit("a.txt", "one", "ONE")]), done()]), &a_barrier);
    let in_a = a.request("workspace/executeCommand", ask("shout a", None));
    assert_eq!(in_a["result"]["runId"], "run-1", "{in_a}");
    use_script(&mut b, &f, "b1.json", json!([turn(vec![read("c.txt")]), turn(vec![edit("c.txt", "x", "X")]), done()]), &b_barrier);
    let in_b = b.request("workspace/executeCommand", ask("shout c", None));
    assert_eq!(in_b["result"]["runId"], "run-1", "{in_b}");
    assert_eq!((std::fs::read_to_string(f.path("a.txt")).unwrap(), std::fs::read_to_string(f.path("c.txt")).unwrap()), ("ONE\n".into(), "X\n".into()));

    let undone = a.request("workspace/executeCommand", json!({"command": "tandem.undo", "arguments": [{"runId": "run-1"}]}));
    let files = undone["result"]["files"].as_array().unwrap_or_else(|| panic!("{undone}"));
    assert_eq!(files.len(), 1, "{undone}");
    assert!(files[0]["uri"].as_str().unwrap().ends_with("/a.txt") && files[0]["status"] == "restored", "{undone}");
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(f.path("c.txt")).unwrap(), "X\n", "window B's run was undone from window A");
    // B's Redo of its run-1 finds nothing undone there.
    let redo = b.request("workspace/executeCommand", json!({"command": "tandem.redo", "arguments": [{"runId": "run-1"}]}));
    assert!(redo["error"]["message"].as_str().unwrap_or_default().contains("is not undone"), "{redo}");
    a.shutdown();
    b.shutdown();
}
