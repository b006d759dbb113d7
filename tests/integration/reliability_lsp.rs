//! The reliability suite, language-server half: the real `tandem lsp`
//! binary over stdio, fed broken frames, a client that dies mid-run, a
//! client that never answers, and the lifecycle's edge cases. Each test is
//! named for the fault it injects; RELIABILITY.md lists them.

#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::lsp_client;
use crate::common::script;


use common::mock_model::{MockModel, MockResponse};
use common::{process_alive, wait_until};
use lsp_client::{ask_params, Fixture, LspClient};
use script::{done, turn};
use serde_json::{json, Value};

/// A request the server answers at once, to prove it still listens.
fn still_answers(client: &mut LspClient) {
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": "file:///nowhere.rs"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "context": {"diagnostics": []}}),
    );
    assert!(actions["result"].is_array(), "{actions}");
}

fn parse_error(client: &mut LspClient, what: &str) -> Value {
    let error = client.wait_for(what, |m| m.get("error").is_some() && m["error"]["code"] == -32700);
    error["error"]["message"].clone()
}

// ---------------------------------------------------------------- framing

#[test]
fn header_line_that_is_not_utf8_gets_a_parse_error_and_the_session_goes_on() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    client.send_bytes(b"X-Editor: caf\xe9 \xff\xfe\r\n");
    let body = json!({"jsonrpc": "2.0", "id": 900, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "file:///a.rs"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}}).to_string();
    client.send_bytes(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    assert_eq!(parse_error(&mut client, "the parse error"), "Parse error: a header line that is not UTF-8");
    // The message after the broken header is found and answered.
    let answer = client.response(900);
    assert!(answer["result"].is_array(), "{answer}");
    still_answers(&mut client);
    client.shutdown();
}

#[test]
fn content_length_one_byte_short_gets_a_parse_error_and_the_next_message_is_answered() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    // A client that counted characters, not bytes: "é" is two bytes.
    let body = json!({"jsonrpc": "2.0", "id": 901, "method": "tandem/noSuchMethod", "params": {"note": "café"}}).to_string();
    client.send_bytes(format!("Content-Length: {}\r\n\r\n{body}", body.chars().count()).as_bytes());
    still_answers(&mut client);
    let message = parse_error(&mut client, "the parse error");
    assert!(message.as_str().unwrap().starts_with("Parse error: EOF while parsing"), "{message}");
    still_answers(&mut client);
    client.shutdown();
}

#[test]
fn content_length_too_long_gets_a_parse_error_and_the_next_message_is_answered() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 902, "method": "tandem/noSuchMethod", "params": {}}).to_string();
    client.send_bytes(format!("Content-Length: {}\r\n\r\n{body}", body.len() + 40).as_bytes());
    // The next message follows at once: its header is inside the first
    // message's declared length.
    still_answers(&mut client);
    let error = client.response(902);
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["error"]["message"], format!("Parse error: the Content-Length {} is longer than the message ({} bytes); it was dropped", body.len() + 40, body.len()));
    client.shutdown();
}

#[test]
fn content_length_too_long_on_the_last_message_is_answered_when_the_input_pauses() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 903, "method": "tandem/noSuchMethod", "params": {}}).to_string();
    client.send_bytes(format!("Content-Length: {}\r\n\r\n{body}", body.len() + 1).as_bytes());
    // Nothing follows; the client waits for its answer.
    let error = client.response(903);
    assert_eq!(error["error"]["code"], -32700, "{error}");
    still_answers(&mut client);
    client.shutdown();
}

/// Every frame goes to the editor in one `write`. An editor can read a
/// header whose body is written apart from it on its own, and the body a
/// moment later; Emacs 28's jsonrpc, reading while eglot's "Proceed?"
/// showed, put such a late body ahead of its header and found no message
/// again. The server's standard output is a datagram socket here, so each
/// read is one write.
#[test]
fn each_frame_goes_to_the_editor_in_one_write() {
    use std::io::Write as _;
    use std::os::unix::net::UnixDatagram;
    let f = Fixture::new(&[]);
    let (ours, theirs) = UnixDatagram::pair().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("lsp")
        .current_dir(&f.root)
        .env("TANDEM_LOG", "error")
        .env("XDG_DATA_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .spawn()
        .unwrap();
    let framed = |message: Value| {
        let body = message.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let root = lsp_client::uri(&f.root);
    let mut input = child.stdin.take().unwrap();
    ours.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
    let mut buffer = vec![0; 1 << 20];
    // The next answer, checking that every read until it is one whole frame.
    let mut answer = |id: u64| loop {
        let n = ours.recv(&mut buffer).expect("the server's next write");
        let read = String::from_utf8_lossy(&buffer[..n]).to_string();
        let (header, body) = read.split_once("\r\n\r\n").unwrap_or_else(|| panic!("a read without a whole header: {read:?}"));
        let length: usize = header.strip_prefix("Content-Length: ").and_then(|l| l.parse().ok()).unwrap_or_else(|| panic!("{header:?}"));
        assert_eq!(body.len(), length, "one read, one whole frame: {read:?}");
        let message: Value = serde_json::from_str(body).unwrap();
        if message.get("method").is_none() {
            assert_eq!(message["id"], id, "{message}");
            assert!(message.get("error").is_none(), "{message}");
            break;
        }
    };
    let mut send = |message: Value| {
        input.write_all(framed(message).as_bytes()).unwrap();
        input.flush().unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": root, "capabilities": {}}}));
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let zero = json!({"line": 0, "character": 0});
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "file:///a.rs"}, "range": {"start": zero, "end": zero}, "context": {"diagnostics": []}}}));
    answer(2);
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    answer(3);
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    drop(input);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn unknown_dollar_request_gets_method_not_found() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    let answer = client.request("$/tandem/unknownRequest", json!({}));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    // A `$/` notification is still ignored quietly.
    client.notify("$/unknownNotification", json!({}));
    still_answers(&mut client);
    client.shutdown();
}

// ---------------------------------------------------------------- lifecycle

#[test]
fn exit_without_shutdown_exits_with_status_1() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    client.notify("exit", Value::Null);
    let status = client.wait_exit().expect("the server exits after exit");
    assert_eq!(status.code(), Some(1));

    // With shutdown first, the same exit is clean.
    let mut client = f.start(json!([done()]), json!({}), json!({}));
    let _ = client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let status = client.wait_exit().expect("the server exits after exit");
    assert_eq!(status.code(), Some(0));
}

fn sse_event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

fn shell_call_response(command: &str) -> MockResponse {
    let input = json!({"command": command}).to_string();
    MockResponse::sse(
        &(sse_event("message_start", json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "usage": {"input_tokens": 5, "output_tokens": 1}}}))
            + &sse_event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_sleep", "name": "run_shell", "input": {}}}))
            + &sse_event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input}}))
            + &sse_event("content_block_stop", json!({"type": "content_block_stop", "index": 0}))
            + &sse_event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}))
            + &sse_event("message_stop", json!({"type": "message_stop"}))),
    )
}

#[test]
fn stdin_closed_mid_run_kills_the_shell_makes_no_further_model_request_and_the_server_exits() {
    let sleeper = format!("sleep 60.{}", std::process::id());
    // The model mock lives on its own runtime; this test blocks on the client.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockModel::start(vec![
        shell_call_response(&format!("echo started > shell.pid; exec {sleeper}")),
        MockResponse::sse(&common::fixture("anthropic/verbatim_basic_text.sse")),
    ]));
    let f = Fixture::new(&[]);
    let mut client = LspClient::start(
        &f.root,
        &[("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", &mock.url), ("ANTHROPIC_API_KEY", "test-key")],
    );
    let response = client.initialize(json!({}), json!({"tandem": {"permissionMode": "bypassPermissions"}}));
    assert!(response.get("result").is_some(), "{response}");
    let ask = client.send_request("workspace/executeCommand", ask_params("wait a minute"));
    let pid_file = f.path("shell.pid");
    wait_until("the shell started", || std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')));
    // In the sandbox's pid namespace its pid is not ours: found by its command line.
    wait_until("the sleeper runs", || common::processes_running(&sleeper).len() == 1);
    let pid = common::processes_running(&sleeper)[0];
    assert!(process_alive(pid));

    client.close_input();
    // The run is cancelled, not merely cut off when the process ends: its
    // answer and its end event say `cancelled` (a server that only exited
    // after its wind-down would leave the ask unanswered).
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    let status = client.wait_exit().expect("the server exits once its editor is gone");
    assert_eq!(status.code(), Some(1), "no shutdown came first");
    wait_until("the shell command is gone", || !process_alive(pid));
    assert_eq!(mock.requests().len(), 1, "no model request after the editor went away");
}

/// `shutdown` while a run is in flight: the run is cancelled, and the
/// answer comes once it has wound down — its command killed, its thread's
/// end written — so the `exit` right behind it loses nothing.
#[test]
fn shutdown_mid_run_answers_once_the_cancelled_run_has_wound_down() {
    let sleeper = format!("sleep 60.{}", std::process::id() + 1);
    let f = Fixture::new(&[]);
    let data = tempfile::tempdir().unwrap();
    let shell = json!({"name": "run_shell", "input": {"command": format!("echo started > shell.pid; exec {sleeper}")}});
    let options = json!({"tandem": {"permissionMode": "bypassPermissions"}});
    let mut client = f.start_with_env(json!([turn(vec![shell]), done()]), json!({}), options, &[("XDG_DATA_HOME", data.path().to_str().unwrap())]);
    let _ask = client.send_request("workspace/executeCommand", ask_params("wait a minute"));
    let pid_file = f.path("shell.pid");
    wait_until("the shell started", || std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')));
    wait_until("the sleeper runs", || common::processes_running(&sleeper).len() == 1);
    let pid = common::processes_running(&sleeper)[0];
    let shutdown = client.request("shutdown", Value::Null);
    assert!(shutdown.get("result").is_some(), "{shutdown}");
    // Read right after the answer, before `exit`: the run is over.
    assert!(!process_alive(pid), "the command still runs after shutdown was answered");
    let threads: Vec<std::path::PathBuf> = crate::common::files::walk(&data.path().join("tandem/threads")).into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.components().any(|c| c.as_os_str() == "checkpoints")).collect();
    assert_eq!(threads.len(), 1, "{threads:?}");
    let transcript = std::fs::read_to_string(&threads[0]).unwrap();
    let ends: Vec<Value> = transcript.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|e| e["type"] == "run").collect();
    assert_eq!(ends.len(), 1, "the run's record is written before shutdown is answered:\n{transcript}");
    assert_eq!(ends[0]["status"], "cancelled", "{}", ends[0]);
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit().and_then(|s| s.code()), Some(0));
}


// ---------------------------------------------------------------- a client that never answers

#[test]
fn client_that_never_answers_show_message_request_or_apply_edit_gets_a_denial_after_a_bounded_wait() {
    let f = Fixture::new(&[("a.txt", "one\n")]);
    let read = json!({"name": "read_file", "input": {"file_path": "a.txt"}});
    let edit = json!({"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "one", "new_string": "two"}});
    let shell = json!({"name": "run_shell", "input": {"command": "touch never.txt"}});
    let mut client = f.start(
        json!([turn(vec![shell]), turn(vec![read]), turn(vec![edit]), done()]),
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {"groupsOnLabel": true}}}}),
        json!({"tandem": {"timeouts": {"promptMs": 1000, "applyEditMs": 300}}}),
    );
    let uri = client.open(&f.path("a.txt"), "one\n");
    let ask = client.send_request("workspace/executeCommand", ask_params("go"));
    // The prompt and the edit arrive, and are never answered.
    let _prompt = client.server_request("window/showMessageRequest");
    let _apply = client.server_request("workspace/applyEdit");
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    expect_test::expect![[r#"
        (true, "Permission denied for run_shell: the user did not answer within 1 s. Do not retry the same call; ask the user or take another approach.")
        (true, "Error: whether the edit to a.txt was applied is unknown: the editor did not answer the applyEdit request: no answer within 0.3 s. Read a.txt again with read_file before editing it.")"#]]
    .assert_eq(&format!("{:?}\n{:?}", results[0], results[2]));
    assert!(!f.path("never.txt").exists());
    assert_eq!(client.text(&uri), "one\n");
    client.shutdown();
}

/// The server's log goes to stderr, which an editor shows as text (VS
/// Code's "Tandem" output channel): a message that is no JSON-RPC is
/// logged there in plain words, with no terminal colour codes.
#[test]
fn the_server_log_has_no_colour_codes_when_stderr_is_no_terminal() {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("lsp")
        .env("TANDEM_LOG", "warn")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"Content-Length: 2\r\n\r\n{}").unwrap();
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(log.contains("WARN") && log.contains("not a JSON-RPC message"), "{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in the log: {log:?}");
}
