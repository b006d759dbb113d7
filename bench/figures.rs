//! Section of `bench/run`: the figures that have no reference tool — the
//! edit path on a big open document, document sync over stdio, the agent
//! loop's own overhead, parallel read-only calls, and `tandem lsp` start-up
//! and memory. Prints one Markdown section on stdout; exits 1 when a check
//! fails (a count that does not agree, an edit that did not land).
//!
//! Usage: `cargo run --release --example bench -- --tandem PATH [--runs N] [--quick]`
//! (`bench/run` does this). `--quick` uses small sizes and one run: it checks
//! that every figure runs and its counts agree, not the timings.
//!
//! Each figure says what its clock covers. In-process figures use the
//! library exactly as `tandem lsp` wires it; the stdio figures spawn the
//! real binary.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mock_model.rs"]
#[allow(dead_code)]
mod mock_model;

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::scripted::ScriptedProvider;
use tandem::agent::{Provider, RunEvent, RunRequest, RunStatus};
use tandem::lsp::client::{methods, ClientError, ClientLink};
use tandem::lsp::config::SettingsLayers;
use tandem::lsp::documents::{path_to_uri, Documents};
use tandem::lsp::editor::{EditCapabilities, LspEditor};
use tandem::tools::{Executor, Tool, ToolCall, ToolContext, ToolError, ToolKind, ToolRegistry};
use tandem::workspace::Workspace;

use tandem::wire::{frame_json as frame, FrameReader};
use tower_lsp_server::ls_types::{Range, TextDocumentContentChangeEvent};

use mock_model::{MockModel, MockResponse};

/// A bound on every wait for the server (debug builds on a busy machine).
const WAIT: Duration = Duration::from_secs(60);

struct Options {
    tandem: PathBuf,
    runs: usize,
    quick: bool,
    /// Run only the figures whose name contains this (edit, didchange, loop, parallel, lsp).
    only: Option<String>,
}

impl Options {
    fn wants(&self, name: &str) -> bool {
        self.only.as_deref().is_none_or(|only| name.contains(only))
    }
}

fn options() -> Options {
    let mut tandem = None;
    let mut runs = 10;
    let mut quick = false;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tandem" => tandem = args.next().map(PathBuf::from),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--quick" => quick = true,
            "--only" => only = args.next(),
            other => {
                eprintln!("bench: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let Some(tandem) = tandem else {
        eprintln!("bench: --tandem PATH (the binary to measure) is required");
        std::process::exit(2);
    };
    if quick {
        runs = 1;
    }
    // The servers run in temporary folders: a relative path would not resolve there.
    let tandem = tandem.canonicalize().unwrap_or_else(|e| {
        eprintln!("bench: {}: {e}", tandem.display());
        std::process::exit(2);
    });
    Options { tandem, runs, quick, only }
}

/// Median, min and max in milliseconds.
#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

fn stats(samples: &[Duration]) -> Stats {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    let n = ms.len();
    let median = if n % 2 == 1 { ms[n / 2] } else { (ms[n / 2 - 1] + ms[n / 2]) / 2.0 };
    Stats { median, min: ms[0], max: ms[n - 1] }
}

fn fmt_ms(s: Stats) -> String {
    format!("{} ({}–{})", ms(s.median), ms(s.min), ms(s.max))
}

fn ms(v: f64) -> String {
    if v < 10.0 { format!("{v:.2}") } else { format!("{v:.1}") }
}

/// One row of the table; `ok` false marks a failed check.
struct Row {
    figure: String,
    value: String,
    target: &'static str,
    meets: Option<bool>,
    note: String,
}

struct Report {
    rows: Vec<Row>,
    failures: Vec<String>,
}

impl Report {
    fn check(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.failures.push(what.into());
        }
    }
}

fn main() {
    let options = options();
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let mut report = Report { rows: Vec::new(), failures: Vec::new() };
    if options.wants("edit") {
        runtime.block_on(edit_on_big_document(&options, &mut report));
    }
    if options.wants("didchange") {
        did_change_throughput(&options, &mut report);
    }
    if options.wants("loop") {
        runtime.block_on(loop_overhead(&options, &mut report));
    }
    if options.wants("parallel") {
        runtime.block_on(parallel_calls(&options, &mut report));
    }
    if options.wants("lsp") {
        lsp_start_and_memory(&options, &mut report);
    }

    println!("## Editor, loop and server figures");
    println!();
    println!(
        "Median (min–max) of {} runs unless the row says otherwise; {}.",
        options.runs,
        if options.quick { "quick mode: small sizes, timings not meaningful" } else { "release build" }
    );
    println!();
    println!("| figure | measured | target | meets | what the clock covers |");
    println!("|---|---|---|---|---|");
    for row in &report.rows {
        let meets = match row.meets {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        println!("| {} | {} | {} | {} | {} |", row.figure, row.value, row.target, meets, row.note);
    }
    println!();
    if !report.failures.is_empty() {
        println!("**Checks that failed:**");
        for failure in &report.failures {
            println!("- {failure}");
        }
        println!();
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------------------
// edit_file on a big open document, server-side.

/// Plays the editor for the LSP edit sink: notes when `workspace/applyEdit`
/// is sent, applies it to the documents as a client would (the `didChange`
/// that verification waits for) and answers `applied: true`.
struct EditorLink {
    documents: Arc<Documents>,
    sent: Mutex<Option<Instant>>,
    /// (number of TextEdits, bytes of new text) of the last applyEdit.
    shape: Mutex<(usize, usize)>,
}

#[async_trait]
impl ClientLink for EditorLink {
    async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError> {
        if method != methods::APPLY_EDIT {
            return Ok(Value::Null);
        }
        *self.sent.lock().unwrap() = Some(Instant::now());
        let change = &params["edit"]["documentChanges"][0];
        let uri = serde_json::from_value(change["textDocument"]["uri"].clone()).map_err(|e| ClientError::Failed(e.to_string()))?;
        let version = change["textDocument"]["version"].as_i64().unwrap_or_default() as i32;
        let mut edits: Vec<(Range, String)> = change["edits"]
            .as_array()
            .map(|edits| {
                edits
                    .iter()
                    .filter_map(|e| Some((serde_json::from_value(e["range"].clone()).ok()?, e["newText"].as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        *self.shape.lock().unwrap() = (edits.len(), edits.iter().map(|(_, t)| t.len()).sum());
        edits.sort_by_key(|(range, _)| (range.start.line, range.start.character));
        let changes: Vec<TextDocumentContentChangeEvent> = edits
            .into_iter()
            .rev()
            .map(|(range, text)| TextDocumentContentChangeEvent { range: Some(range), range_length: None, text })
            .collect();
        match self.documents.change(&uri, version + 1, &changes) {
            Ok(_) => Ok(json!({"applied": true})),
            Err(err) => Ok(json!({"applied": false, "failureReason": err})),
        }
    }

    async fn notify(&self, _method: &'static str, _params: Value) {}
}

/// About `bytes` of source-like text, with a marker every `every` lines.
fn big_document(bytes: usize, every: usize) -> (String, usize) {
    let mut text = String::with_capacity(bytes + 128);
    let mut line = 0;
    let mut markers = 0;
    while text.len() < bytes {
        if line % every == 0 {
            text.push_str(&format!("    let value_{line} = marker_{markers}_here(value_{});\n", line.saturating_sub(1)));
            markers += 1;
        } else {
            text.push_str(&format!("    let value_{line} = compute(value_{}, \"filler text\");\n", line.saturating_sub(1)));
        }
        line += 1;
    }
    (text, markers)
}

async fn edit_on_big_document(options: &Options, report: &mut Report) {
    let size = if options.quick { 200_000 } else { 10_000_000 };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    let path = root.join("big.rs");
    let (text, markers) = big_document(size, 1000);
    std::fs::write(&path, &text).expect("write big.rs");

    let documents = Arc::new(Documents::default());
    let link = Arc::new(EditorLink { documents: Arc::clone(&documents), sent: Mutex::new(None), shape: Mutex::new((0, 0)) });
    let settings = SettingsLayers { init: json!({"permissionMode": "acceptEdits"}), configuration: Value::Null }.resolve();
    let editor = LspEditor::new(
        Arc::clone(&documents),
        link.clone(),
        Arc::new(RwLock::new(settings)),
        EditCapabilities::default(),
        vec![root.clone()],
    );
    let workspace = Arc::new(Workspace::with_roots(vec![root.clone()], Some(Arc::new(editor))).expect("workspace"));
    documents.open(&path_to_uri(&path).expect("uri"), &text, 1).expect("open");
    drop(text);
    let executor = Executor::new(ToolRegistry::builtin());
    let ctx = ToolContext::new(workspace);

    let runs = options.runs.min(markers);
    let (mut to_send, mut total) = (Vec::new(), Vec::new());
    let mut shapes = Vec::new();
    for i in 0..runs {
        let read = call("read_file", json!({"file_path": "big.rs", "offset": 1, "limit": 5}));
        let result = executor.execute(&read, &ctx).await.expect("read_file");
        report.check(!result.is_error, format!("edit figure: read_file failed: {}", result.content));
        *link.sent.lock().unwrap() = None;
        let edit = call(
            "edit_file",
            json!({"file_path": "big.rs", "old_string": format!("marker_{i}_here"), "new_string": format!("edited_{i}_done")}),
        );
        let start = Instant::now();
        let result = executor.execute(&edit, &ctx).await.expect("edit_file");
        let end = Instant::now();
        report.check(!result.is_error, format!("edit figure: edit_file failed: {}", result.content));
        match *link.sent.lock().unwrap() {
            Some(sent) => to_send.push(sent - start),
            None => report.check(false, "edit figure: no workspace/applyEdit was sent"),
        }
        total.push(end - start);
        shapes.push(*link.shape.lock().unwrap());
    }
    let now = documents.snapshot(&path).expect("document still open");
    let landed = (0..runs).filter(|i| now.text.contains(&format!("edited_{i}_done"))).count();
    report.check(landed == runs, format!("edit figure: {landed} of {runs} edits are in the document"));
    let minimal = shapes.iter().all(|&(edits, bytes)| edits == 1 && bytes < 64);
    report.check(minimal, format!("edit figure: applyEdits were not one small TextEdit each: {shapes:?}"));
    if to_send.is_empty() {
        return;
    }
    let label = format!("{:.1} MB", size as f64 / 1e6);
    let send = stats(&to_send);
    report.rows.push(Row {
        figure: format!("`edit_file`, one-word edit on an open {label} document: tool call → `applyEdit` sent"),
        value: format!("{} ms", fmt_ms(send)),
        target: "< 5 ms",
        meets: Some(send.median < 5.0),
        note: "in-process: `Executor::execute` (parse, read-before-edit check, match, plan) until the editor sink hands the request to the client".into(),
    });
    report.rows.push(Row {
        figure: "the same, until the edit is verified in the buffer".into(),
        value: format!("{} ms", fmt_ms(stats(&total))),
        target: "—",
        meets: None,
        note: "adds the client applying it (in-process, instant) and the check after `applied: true`".into(),
    });
}

fn call(name: &str, input: Value) -> ToolCall {
    ToolCall::new(format!("toolu_{name}"), name, input)
}

// ---------------------------------------------------------------------------
// `tandem lsp` over stdio.

struct Server {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    backlog: VecDeque<Value>,
    next_id: i64,
}



impl Server {
    fn start(tandem: &Path, root: &Path, script: Option<&Path>) -> Server {
        let mut command = Command::new(tandem);
        command
            .arg("lsp")
            .current_dir(root)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("TANDEM_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        match script {
            Some(script) => command.env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", script),
            None => command.env_remove("TANDEM_PROVIDER"),
        };
        let mut child = command.spawn().expect("start tandem lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = FrameReader::new(stdout);
            while let Ok(Some(message)) = reader.next_json_blocking() {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Server { child, stdin, incoming, backlog: VecDeque::new(), next_id: 0 }
    }

    fn send(&mut self, message: &Value) {
        self.stdin.write_all(&frame(message)).expect("write to tandem lsp");
        self.stdin.flush().expect("flush to tandem lsp");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message that matches; server → client requests are answered
    /// with `null` on the way, other messages are kept.
    fn wait_for(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&matches) {
            return self.backlog.remove(i).expect("backlog entry");
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.incoming.recv_timeout(left).unwrap_or_else(|_| panic!("no {what} from tandem lsp within {WAIT:?}"));
            if matches(&message) {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                let id = message["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            self.backlog.push_back(message);
        }
    }

    fn response(&mut self, id: i64) -> Value {
        self.wait_for(&format!("answer to request {id}"), |m| m.get("method").is_none() && m["id"] == json!(id))
    }

    fn initialize(&mut self, root: &Path) -> Value {
        let id = self.send_request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": {},
                   "workspaceFolders": [{"uri": uri(root), "name": "bench"}]}),
        );
        let answer = self.response(id);
        self.notify("initialized", json!({}));
        answer
    }

    /// A round trip: the server dispatches in arrival order and applies
    /// document sync on the first poll, so earlier notifications are applied
    /// once this is answered.
    fn barrier(&mut self, uri: &str) {
        let zero = json!({"line": 0, "character": 0});
        let id = self.send_request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": zero, "end": zero}, "context": {"diagnostics": []}}),
        );
        self.response(id);
    }

    /// Run `tandem.ask` (the scripted model given at start) and return the
    /// content of the first tool result.
    fn ask_first_tool_result(&mut self) -> String {
        let id = self.send_request(
            "workspace/executeCommand",
            json!({"command": "tandem.ask", "arguments": [{"prompt": "bench"}]}),
        );
        let answer = self.response(id);
        assert!(answer.get("result").is_some(), "tandem.ask failed: {answer}");
        let event = self.wait_for("tool_result run event", |m| {
            m["method"] == "tandem/runEvent" && m["params"]["event"]["type"] == "tool_result"
        });
        event["params"]["event"]["content"].as_str().unwrap_or_default().to_string()
    }

    fn rss_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    fn stop(mut self) {
        let id = self.send_request("shutdown", Value::Null);
        self.response(id);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The total a tool result reports: lines shown plus "... and N more".
fn result_count(content: &str) -> usize {
    if content.starts_with("No ") {
        return 0;
    }
    let mut shown = 0;
    let mut more = 0;
    for line in content.lines() {
        if let Some(rest) = line.strip_prefix("... and ") {
            more = rest.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
        } else {
            shown += 1;
        }
    }
    shown + more
}

/// A temporary folder and the workspace root inside it (the script lives
/// beside the root, where the tools do not see it).
fn workspace_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir").join("ws");
    std::fs::create_dir(&root).expect("create workspace root");
    (dir, root)
}

fn grep_script(dir: &Path, pattern: &str) -> PathBuf {
    let script = dir.join("script.json");
    let body = json!({"turns": [
        {"tool_calls": [{"name": "grep_search", "input": {"pattern": pattern}}]},
        {"text": "done"}
    ]});
    std::fs::write(&script, body.to_string()).expect("write script");
    script
}

fn did_change_throughput(options: &Options, report: &mut Report) {
    let changes: usize = if options.quick { 1_000 } else { 20_000 };
    let (dir, root) = workspace_dir();
    let script = grep_script(dir.path(), "^@");
    // About 1 MB in lines of ~50 bytes: one change per line fits.
    let text: String = (0..20_000).map(|i| format!("    let value_{i:05} = compute(value, \"filler\");\n")).collect();
    let path = root.join("doc.rs");
    std::fs::write(&path, &text).expect("write doc.rs");
    let mut samples = Vec::new();
    let mut ok = true;
    for _ in 0..options.runs.min(5) {
        let mut server = Server::start(&options.tandem, &root, Some(&script));
        server.initialize(&root);
        let doc = uri(&path);
        server.notify("textDocument/didOpen", json!({"textDocument": {"uri": doc, "languageId": "rust", "version": 1, "text": text}}));
        server.barrier(&doc);
        // Typed one character at a time: each change is its own message.
        let mut wire = Vec::with_capacity(changes * 200);
        for i in 0..changes {
            let at = json!({"line": i, "character": 0});
            wire.extend(frame(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": doc, "version": i + 2},
                "contentChanges": [{"range": {"start": at, "end": at}, "text": "@"}]}})));
        }
        let start = Instant::now();
        server.stdin.write_all(&wire).expect("write changes");
        server.stdin.flush().expect("flush");
        server.barrier(&doc);
        samples.push(start.elapsed());
        let count = result_count(&server.ask_first_tool_result());
        ok &= count == changes;
        report.check(count == changes, format!("didChange figure: grep_search sees {count} changed lines, not {changes}"));
        server.stop();
    }
    let s = stats(&samples);
    let rate = |d: f64| changes as f64 / (d / 1000.0);
    report.rows.push(Row {
        figure: format!("`didChange`: {changes} one-character changes to a {:.1} MB document, over stdio", text.len() as f64 / 1e6),
        value: format!("{:.0}/s ({:.0}–{:.0}/s)", rate(s.median), rate(s.max), rate(s.min)),
        target: "≥ 50,000/s",
        meets: Some(rate(s.median) >= 50_000.0),
        note: format!(
            "client writes the changes as separate messages, then one request; until its answer. Checked: grep_search sees all {}",
            if ok { "changes" } else { "changes (FAILED)" }
        ),
    });
}

fn lsp_start_and_memory(options: &Options, report: &mut Report) {
    let (dir, root) = workspace_dir();
    let script = grep_script(dir.path(), "open_in_editor_marker");
    let mut starts = Vec::new();
    for _ in 0..options.runs {
        let start = Instant::now();
        let mut server = Server::start(&options.tandem, &root, Some(&script));
        let answer = server.initialize(&root);
        starts.push(start.elapsed());
        report.check(answer.get("result").is_some(), format!("lsp figure: initialize failed: {answer}"));
        server.stop();
    }
    let s = stats(&starts);
    report.rows.push(Row {
        figure: "`tandem lsp` start-up: spawn → `initialize` answered".into(),
        value: format!("{} ms", fmt_ms(s)),
        target: "< 50 ms",
        meets: Some(s.median < 50.0),
        note: "the client spawns the process and sends `initialize` at once".into(),
    });

    let documents = 100;
    let mut server = Server::start(&options.tandem, &root, Some(&script));
    server.initialize(&root);
    let (idle, _) = server.rss_kib();
    let mut last = String::new();
    for i in 0..documents {
        let path = root.join(format!("doc_{i:03}.rs"));
        // 100 KB; on disk without the marker, so only the buffers have it.
        let body: String = (0..2_000).map(|l| format!("    let value_{l:04} = compute(value, {i});\n")).collect();
        std::fs::write(&path, &body).expect("write doc");
        let text = format!("// open_in_editor_marker\n{}", &body[..body.len().min(100_000 - 25)]);
        last = uri(&path);
        server.notify("textDocument/didOpen", json!({"textDocument": {"uri": last, "languageId": "rust", "version": 1, "text": text}}));
    }
    server.barrier(&last);
    let (rss, peak) = server.rss_kib();
    let seen = result_count(&server.ask_first_tool_result());
    report.check(seen == documents, format!("memory figure: grep_search sees {seen} open buffers, not {documents}"));
    server.stop();
    let mb = |kib: u64| kib as f64 / 1024.0;
    report.rows.push(Row {
        figure: format!("`tandem lsp` memory with {documents} open documents of 100 KB"),
        value: format!("{:.1} MB resident (peak {:.1} MB; {:.1} MB before opening)", mb(rss), mb(peak), mb(idle)),
        target: "< 100 MB",
        meets: Some(mb(rss) < 100.0),
        note: "VmRSS / VmHWM from /proc after the opens were applied; checked: grep_search sees every buffer".into(),
    });
}

// ---------------------------------------------------------------------------
// The agent loop.

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap_or("message"), e))
        .collect()
}

fn tool_use_turn(id: &str, name: &str, input: &Value) -> String {
    sse(&[
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "model": "m",
               "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ])
}

fn text_turn(text: &str) -> String {
    sse(&[
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "model": "m",
               "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ])
}

/// Run the agent to the end; (status, turns, tool results, wall time).
async fn run_agent(provider: &dyn Provider, executor: &Executor, ctx: ToolContext) -> (RunStatus, usize, usize, Duration) {
    let (events, mut rx) = tandem::agent::event_channel();
    // Room for every scripted turn (the default limit is 100).
    let request = RunRequest { prompt: "bench".into(), max_turns: Some(1_000), ..RunRequest::default() };
    let start = Instant::now();
    let outcome = tandem::agent::run(provider, executor, ctx, request, events).await;
    let elapsed = start.elapsed();
    let mut results = 0;
    while let Ok(event) = rx.try_recv() {
        if matches!(event, RunEvent::ToolResult { is_error: false, .. }) {
            results += 1;
        }
    }
    (outcome.status, outcome.turns, results, elapsed)
}

fn small_workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("small.txt"), "one line\n").expect("write small.txt");
    let workspace = Workspace::new(dir.path()).expect("workspace");
    (dir, ToolContext::new(Arc::new(workspace)))
}

async fn loop_overhead(options: &Options, report: &mut Report) {
    let turns = if options.quick { 5 } else { 200 };
    let executor = Executor::new(ToolRegistry::builtin());
    // A different limit each turn (the file has one line, so the same
    // result): the same call with the same result over and over is a loop,
    // which the run's loop detector stops after a few turns.
    let input = |turn: usize| json!({"file_path": "small.txt", "limit": 1_000 + turn});
    let mut per_turn_http = Vec::new();
    let mut per_turn_scripted = Vec::new();
    for _ in 0..options.runs.min(5) {
        // Loopback HTTP model speaking Anthropic's SSE, answering at once.
        let mut responses: Vec<MockResponse> =
            (0..turns - 1).map(|i| MockResponse::sse(&tool_use_turn(&format!("toolu_{i}"), "read_file", &input(i)))).collect();
        responses.push(MockResponse::sse(&text_turn("done")));
        let model = MockModel::start(responses).await;
        let provider = AnthropicProvider::new(HttpProviderConfig::for_tests(model.url.clone(), "m")).expect("provider");
        let (_dir, ctx) = small_workspace();
        let (status, used, results, elapsed) = run_agent(&provider, &executor, ctx).await;
        report.check(
            status == RunStatus::Completed && used == turns && results == turns - 1 && model.requests().len() == turns,
            format!("loop figure: {status:?} after {used} turns, {results} tool results, {} requests; expected {turns} turns", model.requests().len()),
        );
        per_turn_http.push(elapsed / turns as u32);

        // The same turns from the scripted provider: no HTTP, no SSE.
        let mut script: Vec<Value> =
            (0..turns - 1).map(|i| json!({"tool_calls": [{"name": "read_file", "input": input(i)}]})).collect();
        script.push(json!({"text": "done"}));
        let provider = ScriptedProvider::from_json(&json!({"turns": script}).to_string(), "bench").expect("script");
        let (_dir, ctx) = small_workspace();
        let (status, used, results, elapsed) = run_agent(&provider, &executor, ctx).await;
        report.check(
            status == RunStatus::Completed && used == turns && results == turns - 1,
            format!("loop figure (scripted): {status:?} after {used} turns, {results} tool results"),
        );
        per_turn_scripted.push(elapsed / turns as u32);
    }
    let http = stats(&per_turn_http);
    report.rows.push(Row {
        figure: format!("agent loop overhead per model turn ({turns} turns, loopback HTTP model answering at once)"),
        value: format!("{} ms", fmt_ms(http)),
        target: "< 5 ms",
        meets: Some(http.median < 5.0),
        note: "whole run ÷ turns; each turn: request over loopback HTTP, SSE parse, one `read_file` of a one-line file (a different limit each turn, so it is no loop), history grows".into(),
    });
    report.rows.push(Row {
        figure: "the same with the scripted model (no HTTP)".into(),
        value: format!("{} ms", fmt_ms(stats(&per_turn_scripted))),
        target: "—",
        meets: None,
        note: "what the loop and the tool call cost without the wire".into(),
    });
}

/// A read-only, concurrency-safe tool that waits: a slow read (a network
/// file system, an MCP server) without using the CPU.
struct SlowRead;

/// Wait, then answer.
#[derive(Debug, Deserialize, JsonSchema)]
struct SlowReadArgs {
    delay_ms: u64,
}

#[async_trait]
impl Tool for SlowRead {
    type Args = SlowReadArgs;
    type Plan = ();
    const NAME: &'static str = "slow_read";

    fn kind(&self, _: &Self::Args, _: &ToolContext) -> ToolKind {
        ToolKind::Read { paths: Vec::new() }
    }

    async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn is_read_only(&self, _: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        format!("{} ms", args.delay_ms)
    }

    async fn call(&self, args: Self::Args, _plan: (), _ctx: &ToolContext) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.delay_ms)).await;
        Ok(format!("waited {} ms", args.delay_ms))
    }
}

async fn parallel_calls(options: &Options, report: &mut Report) {
    let unit = if options.quick { 5 } else { 50 };
    // Ten calls of 1.0–1.9 units: the slowest is 1.9 units.
    let delays: Vec<u64> = (0..10).map(|i| unit + unit * i / 10).collect();
    let slowest = Duration::from_millis(*delays.iter().max().unwrap_or(&0));
    let mut registry = ToolRegistry::builtin();
    registry.register(SlowRead);
    let executor = Executor::new(registry);
    let calls: Vec<Value> = delays.iter().map(|d| json!({"name": "slow_read", "input": {"delay_ms": d}})).collect();
    let together = json!({"turns": [{"tool_calls": calls}, {"text": "done"}]});
    let mut series: Vec<Value> = calls.iter().map(|c| json!({"tool_calls": [c]})).collect();
    series.push(json!({"text": "done"}));
    let series = json!({"turns": series});
    let (mut parallel, mut serial) = (Vec::new(), Vec::new());
    for _ in 0..options.runs.min(5) {
        for (script, samples) in [(&together, &mut parallel), (&series, &mut serial)] {
            let provider = ScriptedProvider::from_json(&script.to_string(), "bench").expect("script");
            let (_dir, ctx) = small_workspace();
            let (status, _, results, elapsed) = run_agent(&provider, &executor, ctx).await;
            report.check(status == RunStatus::Completed && results == 10, format!("parallel figure: {status:?}, {results} of 10 results"));
            samples.push(elapsed);
        }
    }
    let p = stats(&parallel);
    let s = stats(&serial);
    let slowest_ms = slowest.as_secs_f64() * 1000.0;
    report.rows.push(Row {
        figure: format!("ten read-only calls of {}–{} ms in one turn", delays[0], slowest.as_millis()),
        value: format!("{} ms = {:.2}× the slowest call (in series: {} ms)", fmt_ms(p), p.median / slowest_ms, fmt_ms(s)),
        target: "≤ 1.3× the slowest",
        meets: Some(p.median / slowest_ms <= 1.3),
        note: "whole scripted run (two turns) vs the same calls one per turn; the tool sleeps (I/O-bound)".into(),
    });
}
