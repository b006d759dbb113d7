//! Section of `bench/run` (through `bench/inline.sh`): what Tandem itself
//! adds to an inline completion (`textDocument/inlineCompletion`), and the
//! whole latency with a real local model.
//!
//! - **Server's own cost**: the real `tandem lsp` (bench/run's build) over
//!   stdio, asked for a completion at the cursor of a 10 KB and a 1 MB
//!   Python document after each keystroke (a `didChange`, so the cache never
//!   answers), against a loopback fill-in-the-middle mock in this process
//!   that answers at once. "Added" is the request's round trip minus the
//!   time the mock held the request (read → answer written); both clocks are
//!   this process's. The loopback HTTP connection and the stdio pipes count
//!   as added: the figure errs high. Target: 5 ms at p99.
//! - **End to end with a local model**: the same, against llama.cpp's
//!   `llama-server` serving Qwen2.5-Coder-0.5B on CPU (`TANDEM_LLAMA_SERVER`,
//!   `TANDEM_LLAMA_MODEL`, which `.ci/tools` installs), through `/infill`;
//!   each request at another place of a small Python file. Without them the
//!   row says so (and fails only when `TANDEM_REQUIRE_LLAMA` is set).
//!
//! - **Quick mode** (`bench/run --quick`, CI): the debug build, 20
//!   requests per document after 3 warm-up ones; fails when a document's
//!   median is over [`QUICK_MEDIAN_LIMIT_MS`] twice in a row (a gross
//!   regression, such as the whole document sent), never on the 5 ms
//!   target.
//!
//! Usage: `inline [--runs N] [--warm N] [--quick]`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem::wire::{frame_json as frame, FrameReader};

struct Options {
    runs: usize,
    warm: usize,
    quick: bool,
}

fn options() -> Options {
    let mut options = Options { runs: 10, warm: 2, quick: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => options.runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--warm" => options.warm = args.next().and_then(|v| v.parse().ok()).expect("--warm N"),
            "--quick" => options.quick = true,
            other => panic!("unknown argument {other}"),
        }
    }
    options
}

/// The instant mock: every request is answered with one short completion;
/// the time each request spent inside it is recorded.
fn start_mock() -> (String, Arc<Mutex<Vec<Duration>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let record = Arc::clone(&record);
            std::thread::spawn(move || serve_mock(stream, &record));
        }
    });
    (url, held)
}

fn serve_mock(mut stream: TcpStream, record: &Mutex<Vec<Duration>>) {
    let _ = stream.set_nodelay(true);
    let mut data = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    // Keep-alive: one request after another on the connection.
    loop {
        let header_end = loop {
            if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => data.extend_from_slice(&buf[..n]),
            }
        };
        let head = String::from_utf8_lossy(&data[..header_end]).to_ascii_lowercase();
        let length: usize = head.lines().find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))).unwrap_or(0);
        while data.len() < header_end + length {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => data.extend_from_slice(&buf[..n]),
            }
        }
        let arrived = Instant::now();
        data.drain(..header_end + length);
        let body = json!({"choices": [{"index": 0, "text": "value + 1", "finish_reason": "stop"}]}).to_string();
        let answer = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
        // Noted before the answer goes: once written, Tandem may answer the
        // editor, and the bench read `held`, before this thread runs again.
        // The write itself counts as added (the figure errs high).
        record.lock().unwrap().push(arrived.elapsed());
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    reader: FrameReader<std::process::ChildStdout>,
    next_id: i64,
    version: i32,
}

impl Server {
    fn start(tandem: &Path, root: &Path, inline: Value) -> Server {
        let mut child = Command::new(tandem)
            .arg("lsp")
            .current_dir(root)
            .env("TANDEM_LOG", std::env::var("TANDEM_LOG").unwrap_or_else(|_| "error".into()))
            .env("HOME", root.join(".home"))
            .env("XDG_DATA_HOME", root.join(".data"))
            .env("TANDEM_PROVIDER", "scripted")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start tandem lsp");
        let stdin = child.stdin.take().unwrap();
        let reader = FrameReader::new(child.stdout.take().unwrap());
        let mut server = Server { child, stdin, reader, next_id: 0, version: 1 };
        let root_uri = format!("file://{}", root.display());
        let init = server.request(
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "workspaceFolders": [{"uri": root_uri, "name": "bench"}], "capabilities": {},
                   "initializationOptions": {"tandem": {"inlineCompletions": inline}}}),
        );
        assert_eq!(init["result"]["capabilities"]["inlineCompletionProvider"], json!(true), "{init}");
        server.notify("initialized", json!({}));
        server
    }

    fn send(&mut self, message: &Value) {
        self.stdin.write_all(&frame(message)).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.reader.next_json_blocking().ok().flatten().expect("tandem lsp answered");
            if message.get("method").is_none() && message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Type one character at (line, character), as an editor sends it.
    fn type_char(&mut self, uri: &str, line: u32, character: u32, text: &str) {
        self.version += 1;
        let at = json!({"line": line, "character": character});
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [{"range": {"start": at, "end": at}, "text": text}]}),
        );
    }

    fn complete(&mut self, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            "textDocument/inlineCompletion",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}, "context": {"triggerKind": 1}}),
        )
    }

    fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

/// p50, p95, p99 (nearest rank) in ms.
fn percentiles(mut ms: Vec<f64>) -> (f64, f64, f64) {
    ms.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| ms[((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    (at(0.50), at(0.95), at(0.99))
}

fn fmt(v: f64) -> String {
    if v < 10.0 { format!("{v:.2}") } else { format!("{v:.0}") }
}

/// A Python document of about `bytes` bytes; the cursor goes on its middle line.
fn document(bytes: usize) -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&format!("def step_{i}(value):\n    total = value * {i} + 7\n    return total\n\n"));
        i += 1;
    }
    text
}

fn tandem_binary(quick: bool) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join(if quick { "debug" } else { "release" }).join("tandem")
}

/// The server's own cost on a document of `bytes`: (p50, p95, p99, n) of ms added.
fn own_cost(tandem: &Path, bytes: usize, samples: usize, warm: usize) -> (f64, f64, f64, usize) {
    let (url, held) = start_mock();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let text = document(bytes);
    std::fs::write(root.join("doc.py"), &text).unwrap();
    let mut server = Server::start(tandem, &root, json!({"enabled": true, "provider": "openai", "baseUrl": url, "debounceMs": 0}));
    let uri = format!("file://{}", root.join("doc.py").display());
    server.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}));
    let line = (text.lines().count() / 2) as u32;
    let mut added = Vec::new();
    for i in 0..warm + samples {
        // A keystroke at the end of the line's text: the prefix is new, the cache misses.
        let character = 4 + i as u32;
        server.type_char(&uri, line, character - 1, "x");
        let asked = Instant::now();
        let answer = server.complete(&uri, line, character);
        let total = asked.elapsed();
        assert!(answer["result"]["items"].as_array().is_some_and(|items| !items.is_empty()), "{answer}");
        let inside = held.lock().unwrap().pop().expect("the mock was asked");
        if i >= warm {
            added.push((total.saturating_sub(inside)).as_secs_f64() * 1000.0);
        }
    }
    server.stop();
    let (p50, p95, p99) = percentiles(added);
    (p50, p95, p99, samples)
}

/// The local model, when installed: its server and model file.
fn llama() -> Option<(PathBuf, PathBuf)> {
    let server = PathBuf::from(std::env::var_os("TANDEM_LLAMA_SERVER")?);
    let model = PathBuf::from(std::env::var_os("TANDEM_LLAMA_MODEL")?);
    (server.is_file() && model.is_file()).then_some((server, model))
}

/// A running llama-server; stopped on drop.
struct Llama(Child);

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start llama-server on a free port; its URL once /health answers.
fn start_llama(server: &Path, model: &Path) -> (Llama, String) {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // One thread and no weight repacking, as tests/common/llama.rs says why.
    let child = Llama(Command::new(server)
        .args(["-m"])
        .arg(model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", "4096", "-t", "1", "-np", "1", "--no-webui", "--no-repack"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start llama-server"));
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.write_all(b"GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 200") {
                return (child, url);
            }
        }
        assert!(Instant::now() < deadline, "llama-server did not answer /health within 300 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

const PYTHON: &str = "import math\n\n\ndef area_of_circle(radius):\n    return math.pi * radius ** 2\n\n\ndef perimeter_of_square(side):\n    return 4 * side\n\n\ndef mean(values):\n    return sum(values) / len(values)\n\n";

/// End to end with the local model: (p50, p95, n) of ms, and how many had an item.
fn end_to_end(tandem: &Path, server_bin: &Path, model: &Path, samples: usize, warm: usize) -> (f64, f64, usize, usize) {
    let (llama, url) = start_llama(server_bin, model);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("geometry.py"), PYTHON).unwrap();
    let mut server = Server::start(tandem, &root, json!({"enabled": true, "provider": "llama.cpp", "baseUrl": url, "debounceMs": 0, "maxTokens": 32, "timeoutMs": 120000}));
    let uri = format!("file://{}", root.join("geometry.py").display());
    server.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": PYTHON}}));
    let starts = ["def median(values):", "def cube(x):", "def area_of_rectangle(w, h):", "def is_even(n):", "def hypotenuse(a, b):", "def clamp(x, lo, hi):"];
    let mut times = Vec::new();
    let mut with_item = 0;
    let mut text = PYTHON.to_string();
    // The end of the text as an LSP position (ASCII text).
    let end = |text: &str| (text.matches('\n').count() as u32, text.rsplit('\n').next().unwrap_or("").len() as u32);
    // Warm-up first (llama.cpp loads the model's weights into the page cache).
    for i in 0..samples + warm {
        // A new function's first line and the indentation of its body.
        let typed = format!("{}\n    ", starts[i % starts.len()]);
        let (line, character) = end(&text);
        server.type_char(&uri, line, character, &typed);
        text.push_str(&typed);
        let (line, character) = end(&text);
        let asked = Instant::now();
        let answer = server.complete(&uri, line, character);
        let total = asked.elapsed().as_secs_f64() * 1000.0;
        if i >= warm {
            times.push(total);
            with_item += usize::from(answer["result"]["items"].as_array().is_some_and(|items| !items.is_empty()));
        }
        // The user writes the body otherwise; the next function goes below.
        server.type_char(&uri, line, character, "pass\n\n\n");
        text.push_str("pass\n\n\n");
    }
    server.stop();
    drop(llama);
    let (p50, p95, _) = percentiles(times);
    (p50, p95, samples, with_item)
}

/// Quick mode (CI: the debug build, one run, a shared machine) fails on a
/// gross regression only: a median over this, measured twice. Not the p99
/// and not the 5 ms target: the debug build's p99 moved between 2 and
/// 205 ms from run to run on a loaded two-core machine with nothing
/// changed, and its median between 1.3 and 15 ms; sending the whole 1 MB
/// document instead of a window made the median 58-155 ms. (A copy of
/// the whole document per request, under 2 ms in debug, is not seen.)
const QUICK_MEDIAN_LIMIT_MS: f64 = 30.0;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

fn main() {
    let options = options();
    let tandem = tandem_binary(options.quick);
    assert!(tandem.is_file(), "{} is not built (bench/run builds it)", tandem.display());
    let samples = if options.quick { 20 } else { options.runs * 20 };
    // Quick mode's first requests would time the server taking in the
    // document (didOpen), not a completion.
    let warm = if options.quick { options.warm.max(3) } else { options.warm };
    println!("## Inline completions: what the server adds, and a local model end to end");
    println!();
    println!("`textDocument/inlineCompletion` through the real `tandem lsp` over stdio ({}), a keystroke (`didChange`) before each request so the cache never answers (bench/inline.rs). Load average at the start: {}.", if options.quick { "debug build" } else { "release build" }, load_average());
    println!();
    println!("| what | requests | p50 ms | p95 ms | p99 ms |");
    println!("|---|---|---|---|---|");
    let mut failures = Vec::new();
    let mut regressed = false;
    for (name, bytes) in [("10 KB document, the model answering at once: added by Tandem", 10 * 1024), ("1 MB document, the model answering at once: added by Tandem", 1 << 20)] {
        let (mut p50, mut p95, mut p99, n) = own_cost(&tandem, bytes, samples, warm);
        if options.quick && p50 > QUICK_MEDIAN_LIMIT_MS {
            eprintln!("inline bench: {name}: median {p50:.1} ms, over {QUICK_MEDIAN_LIMIT_MS} ms; measuring again");
            (p50, p95, p99, _) = own_cost(&tandem, bytes, samples, warm);
            if p50 > QUICK_MEDIAN_LIMIT_MS {
                regressed = true;
                failures.push(format!("{name}: median {p50:.1} ms twice over {QUICK_MEDIAN_LIMIT_MS} ms in the debug build: a regression (a bounded window costs 1-15 ms here)"));
            }
        }
        println!("| {name} | {n} | {} | {} | {} |", fmt(p50), fmt(p95), fmt(p99));
        if !options.quick && p99 > 5.0 {
            failures.push(format!("{name}: p99 {p99:.2} ms is over the 5 ms target"));
        }
    }
    match llama() {
        Some((server, model)) => {
            // Quick mode (CI) asks the model once, only to see that the
            // path works: each answer takes seconds on a loaded CPU.
            let (n, warm) = if options.quick { (1, 0) } else { (20, 1) };
            let (p50, p95, n, with_item) = end_to_end(&tandem, &server, &model, n, warm);
            println!("| Qwen2.5-Coder-0.5B Q4_K_M in llama.cpp's llama-server on this machine's CPU (1 thread), /infill, 32 tokens at most: end to end ({with_item} of {n} with a suggestion) | {n} | {} | {} | – |", fmt(p50), fmt(p95));
        }
        None => {
            println!("| a local model end to end | – | not measured: TANDEM_LLAMA_SERVER and TANDEM_LLAMA_MODEL are not set (.ci/tools installs them) | | |");
            if std::env::var_os("TANDEM_REQUIRE_LLAMA").is_some() {
                failures.push("TANDEM_REQUIRE_LLAMA is set but the local model is not installed".into());
            }
        }
    }
    println!();
    for failure in &failures {
        eprintln!("inline bench: {failure}");
    }
    // The release target is reported, not enforced: a loaded machine is not
    // a defect of the server. Quick mode's gross limit is.
    if regressed || failures.iter().any(|f| f.contains("TANDEM_REQUIRE_LLAMA")) {
        std::process::exit(1);
    }
}
