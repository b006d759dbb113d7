//! `tandem.undo` / `tandem.redo` over LSP (the real `tandem lsp`, the test
//! client of tests/common, the scripted model): an editor run records its
//! checkpoint; undo restores the open buffer (a minimal, versioned
//! `applyEdit`, keeping a line the user typed since) and the closed file;
//! redo puts both back; a buffer changed in the run's own lines is a
//! conflict left as it is; a restoring edit the user declines says so; a
//! run still going is refused and nothing recorded is a clear error.

#![allow(clippy::unwrap_used)]

use crate::common::lsp_client;
use crate::common::script;

use lsp_client::{ask_params, uri, Fixture, LspClient};
use script::{done, edit, read, shell, turn};
use serde_json::{json, Value};

const APP: &str = "one\ntwo\nthree\nfour\n";
const CLOSED: &str = "closed\nfile\n";

fn undo_params(command: &str, run_id: Option<&str>) -> Value {
    match run_id {
        Some(id) => json!({"command": command, "arguments": [{"runId": id}]}),
        None => json!({"command": command, "arguments": []}),
    }
}

/// The run: edits the open app.txt's second line and the closed closed.txt.
fn editing_run() -> Value {
    json!([
        turn(vec![read("app.txt"), read("closed.txt")]),
        turn(vec![edit("app.txt", "two", "TWO"), edit("closed.txt", "file", "FILE")]),
        done()
    ])
}

/// Start the server, open app.txt, run [`editing_run`] to its end
/// (applying its edit to the buffer); returns the client, the buffer's uri
/// and the run id.
fn after_a_run(f: &Fixture, options: Value, capabilities: Value) -> (LspClient, String, String) {
    let mut client = f.start(editing_run(), capabilities, options);
    let uri = client.open(&f.path("app.txt"), APP);
    let ask = client.send_request("workspace/executeCommand", ask_params("shout"));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(client.text(&uri), "one\nTWO\nthree\nfour\n");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), "closed\nFILE\n");
    let run_id = answer["result"]["runId"].as_str().unwrap().to_string();
    (client, uri, run_id)
}

/// The edits of a `workspace/applyEdit` to one document.
fn edits_of(apply: &Value) -> Vec<Value> {
    apply["params"]["edit"]["documentChanges"][0]["edits"].as_array().unwrap().clone()
}

fn statuses(answer: &Value) -> Vec<(String, String)> {
    answer["result"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files in {answer}"))
        .iter()
        .map(|f| (f["uri"].as_str().unwrap().to_string(), f["status"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn undo_restores_the_buffer_keeping_the_user_s_line_and_the_closed_file_and_redo_puts_them_back() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let (mut client, app, run_id) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), json!({}));
    let closed = uri(&f.path("closed.txt"));
    // The user types a line elsewhere in the buffer after the run.
    client.type_at_line(&app, 3, "mine\n");
    client.barrier(&app);

    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", None));
    let apply = client.server_request("workspace/applyEdit");
    // Versioned, and only the run's line: the user's line is not rewritten.
    assert_eq!(apply["params"]["edit"]["documentChanges"][0]["textDocument"], json!({"uri": app, "version": 3}), "{apply}");
    let edits = edits_of(&apply);
    assert_eq!(edits.len(), 1, "{apply}");
    assert_eq!(edits[0]["range"]["start"]["line"], 1, "{apply}");
    assert!(edits[0]["range"]["end"]["line"].as_u64().unwrap() <= 2, "{apply}");
    client.apply_edit_request(&apply);
    let answer = client.response(undo);
    assert_eq!(answer["result"]["runId"], run_id.as_str(), "{answer}");
    let mut got = statuses(&answer);
    got.sort();
    let mut want = vec![(app.clone(), "restored".to_string()), (closed.clone(), "restored".to_string())];
    want.sort();
    assert_eq!(got, want, "{answer}");
    assert_eq!(client.text(&app), "one\ntwo\nthree\nmine\nfour\n");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), CLOSED);

    // Undoing again: nothing left to undo in this workspace.
    let again = client.request("workspace/executeCommand", undo_params("tandem.undo", None));
    assert!(again["error"]["message"].as_str().unwrap().starts_with("nothing to undo"), "{again}");

    let redo = client.send_request("workspace/executeCommand", undo_params("tandem.redo", Some(&run_id)));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(edits_of(&apply).len(), 1, "{apply}");
    client.apply_edit_request(&apply);
    let answer = client.response(redo);
    let mut got = statuses(&answer);
    got.sort();
    assert_eq!(got, want, "{answer}");
    assert_eq!(client.text(&app), "one\nTWO\nthree\nmine\nfour\n");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), "closed\nFILE\n");
    client.shutdown();
}

/// A thread's transcript (what a panel shows after a window reload)
/// names each past run's checkpoint and its usage: `tandem.undo` takes the
/// checkpoint's id, and the transcript then says the run is undone.
#[test]
fn the_transcript_names_the_runs_checkpoint_which_undo_takes_and_its_usage() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let (mut client, app, run_id) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), json!({}));
    let thread = client.request("workspace/executeCommand", json!({"command": "tandem.threads", "arguments": []}))["result"]["threads"][0]["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    let transcript = |client: &mut LspClient| {
        let answer = client.request("workspace/executeCommand", json!({"command": "tandem.transcript", "arguments": [{"threadId": thread}]}));
        answer["result"]["events"].as_array().unwrap().clone()
    };
    let events = transcript(&mut client);
    let end = events.iter().find(|e| e["type"] == "end").unwrap();
    assert!(end["usage"]["input_tokens"].as_u64().is_some(), "the run's usage: {end}");
    let edits = events.iter().find(|e| e["type"] == "edits").unwrap();
    let checkpoint = edits["checkpoint"].as_str().unwrap_or_else(|| panic!("no checkpoint in {edits}")).to_string();
    assert_ne!(checkpoint, run_id, "the checkpoint's own id, not the session's run id");
    assert_eq!(edits["undone"], false, "{edits}");

    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", Some(&checkpoint)));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(undo);
    assert_eq!((answer["result"]["runId"].as_str(), answer["result"]["checkpoint"].as_str()), (Some(run_id.as_str()), Some(checkpoint.as_str())), "{answer}");
    assert_eq!(client.text(&app), APP);
    let events = transcript(&mut client);
    assert_eq!(events.iter().find(|e| e["type"] == "edits").unwrap()["undone"], true);
    client.shutdown();
}

/// Issue 53: a run undone from another process (`tandem undo` in a
/// terminal, on the same workspace) is shown undone in the thread's
/// transcript, which a panel replays after a reload.
#[test]
fn the_transcript_shows_a_run_undone_from_the_terminal_as_undone() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let (mut client, _app, _run_id) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), json!({}));
    let thread = client.request("workspace/executeCommand", json!({"command": "tandem.threads", "arguments": []}))["result"]["threads"][0]["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    let edits_event = |client: &mut LspClient| {
        let answer = client.request("workspace/executeCommand", json!({"command": "tandem.transcript", "arguments": [{"threadId": thread}]}));
        answer["result"]["events"].as_array().unwrap().iter().find(|e| e["type"] == "edits").cloned().unwrap_or_else(|| panic!("no edits event in {answer}"))
    };
    assert_eq!(edits_event(&mut client)["undone"], false);

    let undo = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("undo")
        .current_dir(&f.root)
        .env("XDG_DATA_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"))
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&undo.stdout), String::from_utf8_lossy(&undo.stderr));
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), CLOSED, "{said}");
    let edits = edits_event(&mut client);
    assert_eq!(edits["undone"], true, "{edits}\n{said}");
    assert!(edits["checkpoint"].is_string(), "Redo still offered: {edits}");
    client.shutdown();
}

#[test]
fn a_buffer_changed_in_the_run_s_lines_is_a_conflict_and_keeps_the_user_s_text() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let (mut client, app, _) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), json!({}));
    // The user rewrites the very line the run changed.
    client.type_at_line(&app, 1, "user: ");
    client.barrier(&app);
    let answer = client.request("workspace/executeCommand", undo_params("tandem.undo", None));
    let files = answer["result"]["files"].as_array().unwrap();
    let app_file = files.iter().find(|f| f["uri"] == app.as_str()).unwrap();
    assert_eq!(app_file["status"], "conflict", "{answer}");
    assert!(app_file["reason"].as_str().unwrap().contains("in the lines the run changed"), "{answer}");
    let closed = uri(&f.path("closed.txt"));
    let closed_file = files.iter().find(|file| file["uri"] == closed.as_str()).unwrap();
    assert_eq!(closed_file["status"], "restored", "{answer}");
    // No applyEdit was sent: the user's text stays.
    assert_eq!(client.seen.iter().filter(|m| m["method"] == "workspace/applyEdit").count(), 1, "an undo edit was sent");
    assert_eq!(client.text(&app), "one\nuser: TWO\nthree\nfour\n");
    client.shutdown();
}

/// In `default` mode the restoring edit is reviewed in the editor's
/// preview like any edit; the user declining it leaves the buffer as it is
/// and the answer says why.
#[test]
fn a_restoring_edit_the_user_declines_in_the_review_is_reported_and_changes_nothing() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let annotations = json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}});
    let (mut client, app, run_id) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), annotations);
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"permissionMode": "default"}}}));
    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", Some(&run_id)));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(apply["params"]["edit"]["changeAnnotations"]["tandem.review/1"]["needsConfirmation"], true, "{apply}");
    assert_eq!(apply["params"]["label"], format!("Tandem: undo {run_id}"), "{apply}");
    client.respond(&apply["id"], json!({"applied": false}));
    let answer = client.response(undo);
    let files = answer["result"]["files"].as_array().unwrap();
    let app_file = files.iter().find(|f| f["uri"] == app.as_str()).unwrap();
    assert_eq!(app_file["status"], "conflict", "{answer}");
    assert!(app_file["reason"].as_str().unwrap().contains("rejected"), "{answer}");
    assert_eq!(client.text(&app), "one\nTWO\nthree\nfour\n");
    client.shutdown();
}

/// Issue 53: an undo is all or nothing per file by default: the restoring
/// edit of a run that changed two distant lines reaches the editor's review
/// as one change, which it takes or declines whole; per hunk only when
/// asked (`perHunk`), here for the redo: one change per hunk.
#[test]
fn an_undo_is_reviewed_whole_per_file_unless_asked_hunk_by_hunk() {
    let f = Fixture::new(&[("app.txt", APP)]);
    let changed = "ONE\ntwo\nthree\nFOUR\n";
    let annotations = json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}});
    let mut client = f.start(
        json!([turn(vec![read("app.txt")]), turn(vec![edit("app.txt", APP, changed)]), done()]),
        annotations,
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let app = client.open(&f.path("app.txt"), APP);
    let ask = client.send_request("workspace/executeCommand", ask_params("shout the ends"));
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(edits_of(&apply).len(), 2, "the run's edit is two hunks: {apply}");
    client.apply_edit_request(&apply);
    let run_id = client.response(ask)["result"]["runId"].as_str().unwrap().to_string();
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"permissionMode": "default"}}}));
    // Undo, as asked by default: one change, reviewed whole.
    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", Some(&run_id)));
    let apply = client.server_request("workspace/applyEdit");
    let whole = edits_of(&apply);
    assert_eq!(whole.len(), 1, "one change for the whole file: {apply}");
    assert_eq!((whole[0]["range"]["start"]["line"].as_u64(), whole[0]["range"]["end"]["line"].as_u64()), (Some(0), Some(3)), "{apply}");
    assert_eq!(apply["params"]["edit"]["changeAnnotations"]["tandem.review/1"]["needsConfirmation"], true, "reviewed: {apply}");
    client.apply_edit_request(&apply);
    assert_eq!(statuses(&client.response(undo)), vec![(app.clone(), "restored".to_string())]);
    assert_eq!(client.text(&app), APP);
    // Redo hunk by hunk, as asked.
    let params = json!({"command": "tandem.redo", "arguments": [{"runId": run_id, "perHunk": true}]});
    let redo = client.send_request("workspace/executeCommand", params);
    let apply = client.server_request("workspace/applyEdit");
    assert_eq!(edits_of(&apply).len(), 2, "one change per hunk: {apply}");
    client.apply_edit_request(&apply);
    assert_eq!(statuses(&client.response(redo)), vec![(app.clone(), "restored".to_string())]);
    assert_eq!(client.text(&app), changed);
    client.shutdown();
}

#[test]
fn undo_of_a_run_still_going_is_refused_and_nothing_recorded_is_a_clear_error() {
    let f = Fixture::new(&[("closed.txt", CLOSED)]);
    let mut client = f.start(
        // A command the sandbox would not contain (a name known only when
        // it runs), so that acceptEdits still asks and the run waits.
        json!([turn(vec![read("closed.txt")]), turn(vec![edit("closed.txt", "file", "FILE")]), turn(vec![shell("rm -rf \"$BUILD_DIR\"")]), done()]),
        json!({}),
        json!({"tandem": {"permissionMode": "acceptEdits"}}),
    );
    let nothing = client.request("workspace/executeCommand", undo_params("tandem.undo", None));
    assert!(nothing["error"]["message"].as_str().unwrap().starts_with("nothing to undo"), "{nothing}");
    let no_redo = client.request("workspace/executeCommand", undo_params("tandem.redo", None));
    assert!(no_redo["error"]["message"].as_str().unwrap().starts_with("nothing to redo"), "{no_redo}");
    let ask = client.send_request("workspace/executeCommand", ask_params("edit, then clean"));
    // The run waits on the command's prompt, its edit made.
    let prompt = client.server_request("window/showMessageRequest");
    let going = client.request("workspace/executeCommand", undo_params("tandem.undo", None));
    let message = going["error"]["message"].as_str().unwrap_or_else(|| panic!("{going}"));
    assert!(message.contains("is still going"), "{going}");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), "closed\nFILE\n");
    client.respond(&prompt["id"], json!({"title": "Deny"}));
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let undone = client.request("workspace/executeCommand", undo_params("tandem.undo", None));
    assert_eq!(statuses(&undone), vec![(uri(&f.path("closed.txt")), "restored".to_string())], "{undone}");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), CLOSED);
    let unknown = client.request("workspace/executeCommand", undo_params("tandem.undo", Some("run-99")));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    client.shutdown();
}

/// A closed file deleted since the run is a conflict (nothing recreated);
/// the open buffer is still restored.
#[test]
fn a_file_deleted_since_the_run_is_a_conflict_and_the_rest_is_restored() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let (mut client, app, _) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), json!({}));
    std::fs::remove_file(f.path("closed.txt")).unwrap();
    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", None));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(undo);
    let files = answer["result"]["files"].as_array().unwrap();
    let closed = uri(&f.path("closed.txt"));
    let closed_file = files.iter().find(|file| file["uri"] == closed.as_str()).unwrap();
    assert_eq!(closed_file["status"], "conflict", "{answer}");
    assert!(closed_file["reason"].as_str().unwrap().contains("deleted or renamed since the run"), "{answer}");
    assert!(!f.path("closed.txt").exists(), "nothing is recreated");
    assert_eq!(client.text(&app), APP);
    client.shutdown();
}

/// The saved thread `id`'s file (under the tests' data folder), its JSON
/// strings' escapes undone: what the model was sent is in it.
fn thread_file(id: &str) -> String {
    let mut stack = vec![std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n.to_string_lossy() == format!("{id}.jsonl")) {
                return std::fs::read_to_string(&path).unwrap().replace("\\n", "\n").replace("\\\"", "\"");
            }
        }
    }
    panic!("no thread file for {id}");
}

/// Issue 53: after `tandem.undo`, the thread's next request tells the
/// model which run was taken back, its files, and to read them again; after
/// `tandem.redo`, that the run is back; each once, not again in the
/// request after.
#[test]
fn the_model_is_told_of_an_undo_and_a_redo_in_its_next_request() {
    let f = Fixture::new(&[("app.txt", APP), ("closed.txt", CLOSED)]);
    let (mut client, _app, run_id) = after_a_run(&f, json!({"tandem": {"permissionMode": "acceptEdits"}}), json!({}));
    let threads = client.request("workspace/executeCommand", json!({"command": "tandem.threads", "arguments": []}));
    let thread_id = threads["result"]["threads"][0]["threadId"].as_str().unwrap().to_string();
    let script = f.root.parent().unwrap().join("script.json");
    let follow_up = |client: &mut LspClient, prompt: &str| {
        std::fs::write(&script, json!({"turns": [done()]}).to_string()).unwrap();
        let answer = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": prompt, "threadId": thread_id}]}));
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
        let saved = thread_file(&thread_id);
        let at = saved.rfind(prompt).unwrap_or_else(|| panic!("{prompt} is not in the thread:\n{saved}"));
        // The user message that carries the prompt, with what came before it.
        let start = saved[..at].rfind("{\"type\":\"message\"").unwrap_or(0);
        saved[start..at].to_string()
    };

    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", None));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    assert_eq!(client.response(undo)["result"]["runId"], run_id.as_str());
    let told = follow_up(&mut client, "what did you change?");
    assert!(told.contains(&format!("The user undid an earlier run of yours ({run_id}): its changes to ")), "{told}");
    assert!(told.contains("app.txt") && told.contains("closed.txt") && told.contains("read those files again"), "{told}");

    let again = follow_up(&mut client, "and now?");
    assert!(!again.contains("The user undid") && !again.contains("The user redid"), "said once: {again}");

    let redo = client.send_request("workspace/executeCommand", undo_params("tandem.redo", Some(&run_id)));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    client.response(redo);
    let told = follow_up(&mut client, "and after the redo?");
    assert!(told.contains(&format!("The user redid an earlier run of yours ({run_id}) they had undone: its changes to ")), "{told}");
    client.shutdown();
}

const SIX: &str = "a\nb\nc\nd\ne\nf\n";

/// A run that changes lines 2 and 6 of the open six.txt (two hunks) and
/// the closed closed.txt, applied; returns the client and six.txt's uri.
fn after_a_two_hunk_run(f: &Fixture, closed: &str, closed_edit: (&str, &str)) -> (LspClient, String) {
    let turns = json!([
        turn(vec![read("six.txt"), read("closed.txt")]),
        turn(vec![edit("six.txt", "b\nc\nd\ne\nf", "B\nc\nd\ne\nF"), edit("closed.txt", closed_edit.0, closed_edit.1)]),
        done()
    ]);
    let mut client = f.start(turns, json!({}), json!({"tandem": {"permissionMode": "acceptEdits"}}));
    let six = client.open(&f.path("six.txt"), SIX);
    let ask = client.send_request("workspace/executeCommand", ask_params("shout"));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(client.text(&six), "a\nB\nc\nd\ne\nF\n");
    assert_ne!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), closed);
    (client, six)
}

/// Issue 53, bad input: the user changed one of the run's two hunks in
/// the buffer since. By default a file is undone all or nothing, so it is
/// a conflict left as it is (the closed file is still restored); asked
/// hunk by hunk, the untouched hunk is taken back, the user's is kept,
/// and the answer says which.
#[test]
fn undo_after_the_user_edited_one_of_the_run_s_hunks_keeps_that_hunk_and_says_so() {
    let f = Fixture::new(&[("six.txt", SIX), ("closed.txt", CLOSED)]);
    let (mut client, six) = after_a_two_hunk_run(&f, CLOSED, ("file", "FILE"));
    client.type_at_line(&six, 5, "user: ");
    client.barrier(&six);
    let answer = client.request("workspace/executeCommand", undo_params("tandem.undo", None));
    let files = answer["result"]["files"].as_array().unwrap_or_else(|| panic!("{answer}"));
    let six_file = files.iter().find(|f| f["uri"] == six.as_str()).unwrap();
    assert_eq!(six_file["status"], "conflict", "{answer}");
    assert!(six_file["reason"].as_str().unwrap().contains("your text is left as it is"), "{answer}");
    assert_eq!(client.text(&six), "a\nB\nc\nd\ne\nuser: F\n");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), CLOSED);
    client.shutdown();

    let f = Fixture::new(&[("six.txt", SIX), ("closed.txt", CLOSED)]);
    let (mut client, six) = after_a_two_hunk_run(&f, CLOSED, ("file", "FILE"));
    client.type_at_line(&six, 5, "user: ");
    client.barrier(&six);
    let undo = client.send_request("workspace/executeCommand", json!({"command": "tandem.undo", "arguments": [{"perHunk": true}]}));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(undo);
    let files = answer["result"]["files"].as_array().unwrap_or_else(|| panic!("{answer}"));
    let six_file = files.iter().find(|f| f["uri"] == six.as_str()).unwrap();
    assert_eq!(six_file["status"], "restored", "{answer}");
    assert_eq!(six_file["reason"], "undid 1 of its 2 changes; kept 1 where you changed the lines since", "{answer}");
    assert_eq!(client.text(&six), "a\nb\nc\nd\ne\nuser: F\n", "the untouched hunk taken back, the user's line kept");
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), CLOSED);
    client.shutdown();
}

/// Issue 53, bad input: a file the run changed was deleted since. The
/// undo restores the rest and reports that file clearly; nothing is lost.
#[test]
fn undo_of_a_run_whose_file_was_deleted_since_restores_the_rest_and_says_which() {
    let f = Fixture::new(&[("six.txt", SIX), ("closed.txt", CLOSED)]);
    let (mut client, six) = after_a_two_hunk_run(&f, CLOSED, ("file", "FILE"));
    std::fs::remove_file(f.path("closed.txt")).unwrap();
    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", None));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(undo);
    assert_eq!(
        statuses(&answer),
        vec![(six.clone(), "restored".to_string()), (uri(&f.path("closed.txt")), "conflict".to_string())],
        "{answer}"
    );
    assert_eq!(answer["result"]["files"][1]["reason"], "deleted or renamed since the run; left as it is", "{answer}");
    assert_eq!(client.text(&six), SIX);
    assert!(!f.path("closed.txt").exists(), "a deleted file is not made again");
    client.shutdown();
}

/// Issue 53, bad input: a CRLF file comes back byte for byte.
#[test]
fn undo_restores_a_crlf_file_byte_for_byte() {
    let crlf = "closed\r\nfile\r\nend\r\n";
    let f = Fixture::new(&[("six.txt", SIX), ("closed.txt", crlf)]);
    let (mut client, _six) = after_a_two_hunk_run(&f, crlf, ("file", "FILE"));
    assert_eq!(std::fs::read_to_string(f.path("closed.txt")).unwrap(), "closed\r\nFILE\r\nend\r\n");
    let undo = client.send_request("workspace/executeCommand", undo_params("tandem.undo", None));
    let apply = client.server_request("workspace/applyEdit");
    client.apply_edit_request(&apply);
    let answer = client.response(undo);
    assert!(statuses(&answer).iter().all(|(_, status)| status == "restored"), "{answer}");
    assert_eq!(std::fs::read(f.path("closed.txt")).unwrap(), crlf.as_bytes());
    client.shutdown();
}
