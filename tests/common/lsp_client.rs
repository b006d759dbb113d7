//! A small LSP client for tests: starts the real `tandem lsp` binary, speaks
//! Content-Length framed JSON-RPC over its stdio, matches responses to
//! requests, keeps every other message (notifications, server → client
//! requests) in a backlog the test waits on, and keeps its own copy of open
//! documents so it can apply a `workspace/applyEdit` the way an editor does.
//!
//! The framing is the server's own ([`tandem::wire`]): one codec for
//! every LSP-style wire; a frame the server got wrong fails the wait.
//! Waits are on messages with a timeout, never sleeps. The position code
//! here is written independently of the server's (UTF-16, lines split at
//! `\n`, `\r\n`, `\r`), so a bug there is not mirrored here.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use tandem::wire::{frame, Frame, FrameReader};

/// The `workspace/executeCommand` parameters of a `tandem.ask` with this prompt.
pub fn ask_params(prompt: &str) -> Value {
    json!({"command": "tandem.ask", "arguments": [{"prompt": prompt}]})
}

/// Generous: debug builds on a busy two-core machine.
pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct LspClient {
    child: Child,
    /// `None` once the test closed it (the editor went away).
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    backlog: VecDeque<Value>,
    /// Every message received, in order (for assertions on run events).
    pub seen: Vec<Value>,
    next_id: i64,
    /// uri → (text, version): the client's copy of open documents.
    pub documents: HashMap<String, (String, i32)>,
    pub root: PathBuf,
}

/// The `file://` URI of a path (test paths are plain ASCII).
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}


/// A workspace folder for one test (`work/` inside a temp dir, so the
/// model's script can sit beside it), and the way to start the real
/// server on it with a scripted model.
pub struct Fixture {
    _temp: tempfile::TempDir,
    pub root: PathBuf,
}

impl Fixture {
    pub fn new(files: &[(&str, &str)]) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap().join("work");
        std::fs::create_dir(&root).unwrap();
        for (name, text) in files {
            std::fs::write(root.join(name), text).unwrap();
        }
        Fixture { _temp: temp, root }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Start the server with a model script and settings.
    pub fn start(&self, turns: Value, capabilities: Value, options: Value) -> LspClient {
        self.start_with_env(turns, capabilities, options, &[])
    }

    /// The same, with more environment (a test's own `HOME` or data folder).
    pub fn start_with_env(&self, turns: Value, capabilities: Value, options: Value, env: &[(&str, &str)]) -> LspClient {
        self.start_with_env_args(turns, capabilities, options, env, &[])
    }

    /// The same, `tandem lsp --trust`: the workspace's own settings apply.
    pub fn start_trusted(&self, turns: Value, capabilities: Value, options: Value, env: &[(&str, &str)]) -> LspClient {
        self.start_with_env_args(turns, capabilities, options, env, &["--trust"])
    }

    fn start_with_env_args(&self, turns: Value, capabilities: Value, options: Value, env: &[(&str, &str)], args: &[&str]) -> LspClient {
        let script = self.root.parent().unwrap().join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let script = script.to_string_lossy().to_string();
        let mut all = vec![("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", script.as_str())];
        all.extend_from_slice(env);
        let mut client = LspClient::start_with_args(&self.root, args, &all);
        let response = client.initialize(capabilities, options);
        assert!(response.get("result").is_some(), "{response}");
        client
    }
}

impl LspClient {
    /// Start `tandem lsp` in `root` with extra environment variables.
    pub fn start(root: &Path, env: &[(&str, &str)]) -> Self {
        Self::start_with_args(root, &[], env)
    }

    /// Start `tandem lsp --trust`: the workspace's own settings files apply.
    pub fn start_trusted(root: &Path, env: &[(&str, &str)]) -> Self {
        Self::start_with_args(root, &["--trust"], env)
    }

    /// Start `tandem lsp ARGS` in `root` with extra environment variables.
    pub fn start_with_args(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command
            .arg("lsp")
            .args(args)
            .current_dir(root)
            .env_remove("TANDEM_PROVIDER")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("TANDEM_LOG", "error")
            // Thread threads are saved in the tests' own data folder.
            .env("XDG_DATA_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("start tandem lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = FrameReader::new(stdout);
            while let Ok(Some(frame)) = reader.next_blocking() {
                let message = match frame {
                    Frame::Body(body) => match serde_json::from_slice(&body) {
                        Ok(message) => message,
                        Err(err) => {
                            eprintln!("tandem lsp wrote a message that is not JSON ({err}): {}", String::from_utf8_lossy(&body));
                            break;
                        }
                    },
                    Frame::Bad(why, _) => {
                        eprintln!("tandem lsp wrote a bad frame: {why}");
                        break;
                    }
                };
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        LspClient {
            child,
            stdin: Some(stdin),
            incoming,
            backlog: VecDeque::new(),
            seen: Vec::new(),
            next_id: 0,
            documents: HashMap::new(),
            root: root.to_path_buf(),
        }
    }

    pub fn send_raw(&mut self, body: &str) {
        self.send_bytes(&frame(body.as_bytes()));
    }

    /// Write bytes as they are: broken frames, fuzzed input.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the server's input is still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Close the server's input, as an editor that died does.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Wait (bounded) for the server process to exit.
    pub fn wait_exit(&mut self) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            // Polling the process table, bounded by the deadline.
            std::thread::sleep(Duration::from_millis(10));
        }
    }


    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request; returns its id without waiting.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Send a request and wait for its response (the whole message).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    pub fn response(&mut self, id: i64) -> Value {
        self.wait_for(&format!("the response to request {id}"), |m| m.get("method").is_none() && m["id"] == json!(id))
    }

    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Take the first message (backlog first) that matches; others wait in
    /// the backlog. Panics after [`TIMEOUT`].
    pub fn wait_for(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&matches) {
            return self.backlog.remove(i).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(message) => {
                    self.seen.push(message.clone());
                    if matches(&message) {
                        return message;
                    }
                    self.backlog.push_back(message);
                }
                Err(RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}; backlog: {:#?}", self.backlog),
                Err(RecvTimeoutError::Disconnected) => panic!("the server exited while waiting for {what}"),
            }
        }
    }

    /// Take every message of the backlog that matches, in order.
    pub fn take_all(&mut self, matches: impl Fn(&Value) -> bool) -> Vec<Value> {
        let (taken, kept): (VecDeque<Value>, VecDeque<Value>) = std::mem::take(&mut self.backlog).into_iter().partition(|m| matches(m));
        self.backlog = kept;
        taken.into()
    }

    /// Every message that arrives within `window` from now, in order (also
    /// kept for later waits).
    pub fn arriving_within(&mut self, window: Duration) -> Vec<Value> {
        let deadline = Instant::now() + window;
        let mut arrived = Vec::new();
        while let Ok(message) = self.incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            self.seen.push(message.clone());
            self.backlog.push_back(message.clone());
            arrived.push(message);
        }
        arrived
    }

    /// The next server → client request of `method`.
    pub fn server_request(&mut self, method: &str) -> Value {
        self.wait_for(method, |m| m["method"] == method && m.get("id").is_some())
    }

    /// The next message that is a server request or the response to `id`.
    pub fn next_request_or_response(&mut self, id: i64) -> Value {
        self.wait_for("a server request or the response", |m| {
            (m.get("method").is_some() && m.get("id").is_some()) || (m.get("method").is_none() && m["id"] == json!(id))
        })
    }

    pub fn initialize(&mut self, capabilities: Value, options: Value) -> Value {
        self.initialize_as(Value::Null, capabilities, options)
    }

    /// `initialize` with a `clientInfo` (`{"name", "version"}`, or null).
    pub fn initialize_as(&mut self, client_info: Value, capabilities: Value, options: Value) -> Value {
        let root_uri = uri(&self.root);
        let response = self.request(
            "initialize",
            json!({
                "processId": null,
                "clientInfo": client_info,
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "root"}],
                "capabilities": capabilities,
                "initializationOptions": options,
            }),
        );
        self.notify("initialized", json!({}));
        response
    }

    pub fn open(&mut self, path: &Path, text: &str) -> String {
        let uri = uri(path);
        self.documents.insert(uri.clone(), (text.to_string(), 1));
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}}),
        );
        uri
    }

    /// The user types `text` at the start of line `line` of an open document.
    pub fn type_at_line(&mut self, uri: &str, line: u32, text: &str) {
        let (content, version) = self.documents.get(uri).cloned().unwrap();
        let range = json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}});
        let new = apply_edits(&content, &[(range.clone(), text.to_string())]);
        self.documents.insert(uri.to_string(), (new, version + 1));
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [{"range": range, "text": text}]}),
        );
    }

    /// A round trip after notifications: the server dispatches messages in
    /// arrival order and document sync applies on the first poll, so once
    /// this answer is back, earlier `didChange`s have been applied.
    pub fn barrier(&mut self, uri: &str) {
        let zero = json!({"line": 0, "character": 0});
        let response = self.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": zero, "end": zero}, "context": {"diagnostics": []}}),
        );
        assert!(response.get("result").is_some(), "{response}");
    }

    /// Handle a `workspace/applyEdit` like a version-checking editor:
    /// apply the first TextDocumentEdit, send the `didChange`, answer true.
    pub fn apply_edit_request(&mut self, request: &Value) {
        self.apply_edit_answering(request, json!({}));
    }

    /// The same, with more fields in the answer (a review's `comments`).
    pub fn apply_edit_answering(&mut self, request: &Value, more: Value) {
        let uri = request["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"].as_str().unwrap().to_string();
        let (content, current) = self.documents.get(&uri).cloned().unwrap();
        match tandem::lsp::edits::apply_as_editor(&request["params"], &content, current, tandem::lsp::position::PositionEncoding::Utf16) {
            Ok(applied) => {
                self.documents.insert(uri, (applied.text.clone(), applied.version));
                self.notify("textDocument/didChange", applied.did_change());
                let mut answer = json!({"applied": true});
                if let (Some(answer), Some(more)) = (answer.as_object_mut(), more.as_object()) {
                    answer.extend(more.clone());
                }
                self.respond(&request["id"], answer);
            }
            Err(reason) => self.respond(&request["id"], json!({"applied": false, "failureReason": reason})),
        }
    }

    pub fn text(&self, uri: &str) -> String {
        self.documents[uri].0.clone()
    }

    /// The `tandem/runEvent` events received so far, in order.
    pub fn run_events(&self) -> Vec<Value> {
        self.seen.iter().filter(|m| m["method"] == "tandem/runEvent").map(|m| m["params"]["event"].clone()).collect()
    }

    /// The tool results the model got, as (is_error, content).
    pub fn tool_results(&self) -> Vec<(bool, String)> {
        self.run_events()
            .into_iter()
            .filter(|e| e["type"] == "tool_result")
            .map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().to_string()))
            .collect()
    }

    pub fn shutdown(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Byte offset of an LSP position (UTF-16 characters, clamped to the line).
fn offset_of(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    let bytes = text.as_bytes();
    let mut start = 0;
    for _ in 0..line {
        let Some(end) = bytes[start..].iter().position(|&b| b == b'\n' || b == b'\r') else { return text.len() };
        let at = start + end;
        start = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') { at + 2 } else { at + 1 };
    }
    let line_end = bytes[start..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(text.len(), |e| start + e);
    let mut units = 0;
    for (i, c) in text[start..line_end].char_indices() {
        if units >= character {
            return start + i;
        }
        units += c.len_utf16();
    }
    line_end
}

/// Apply edits that all refer to the original text (back to front).
pub fn apply_edits(text: &str, edits: &[(Value, String)]) -> String {
    let mut resolved: Vec<(usize, usize, &str)> =
        edits.iter().map(|(range, new)| (offset_of(text, &range["start"]), offset_of(text, &range["end"]), new.as_str())).collect();
    resolved.sort_by_key(|&(start, _, _)| std::cmp::Reverse(start));
    let mut out = text.to_string();
    for (start, end, new) in resolved {
        out.replace_range(start..end, new);
    }
    out
}
