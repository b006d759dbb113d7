//! Section of `bench/run` (through `bench/code_intel.sh`): what Tandem adds
//! to a warm language server's answer, with pyright where no editor
//! answers (the headless `lspServers` client that `tandem ask` uses).
//!
//! The server is started through this same binary in `--proxy` mode: a
//! pass-through on the LSP connection that notes when each message crossed
//! it (one monotonic clock for both processes). So the server's own time is
//! read on the very connection Tandem uses:
//!
//! - **references**: a `code_intel` call through the real executor, timed
//!   from the call to its result, against the `textDocument/references`
//!   request → its answer at the proxy;
//! - **diagnostics after an edit**: an `edit_file` call that changes a
//!   type error in the file (made and fixed in turn), timed from the call to
//!   its result (which lists the new diagnostics), against the
//!   `textDocument/didChange` of that version → pyright's
//!   `publishDiagnostics` for it at the proxy; and the same edit in a
//!   workspace with no language server, for what the edit itself costs.
//!
//! "Added" is the call's time minus the server's. The proxy's own hops
//! (two pipe copies each way) count as added: the figure errs high.
//!
//! Usage: `code_intel [--runs N] [--warm N] [--quick]`; pyright from
//! `TANDEM_PYRIGHT` (the `pyright-langserver` script). Without it the
//! section says so and passes, unless `TANDEM_REQUIRE_PYRIGHT` is set.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]


use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tandem::consent::Approvals;
use tandem::language_servers::LanguageServers;
use tandem::scope::Scope;
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;

use tandem::wire::{frame_json as frame, FrameReader};

#[path = "stats.rs"]
mod stats;
use stats::{cell, ms, stats};

/// Files that call `greet`, and calls in each: the references answer.
const CALLERS: usize = 8;
const CALLS_PER_FILE: usize = 3;

const LIB_OK: &str = "def greet(name: str) -> str:\n    return \"Hello, \" + name\n";
const BROKEN: &str = "    return 1 + name\n";
const FIXED: &str = "    return \"Hello, \" + name\n";

/// Nanoseconds on the monotonic clock, the same in every process.
fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

// ---------------------------------------------------------------------------
// The proxy: `code_intel --proxy LOG -- COMMAND...`.

fn proxy(log: &Path, command: &[String]) -> ! {
    let mut child = std::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the language server");
    let log = Arc::new(Mutex::new(std::fs::File::create(log).expect("proxy log")));
    let (mut to_server, from_server) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let note = |log: &Mutex<std::fs::File>, direction: &str, message: &Value| {
        let entry = json!({
            "t": now_ns(),
            "dir": direction,
            "id": message.get("id"),
            "method": message.get("method"),
            "uri": message["params"]["uri"].as_str().or(message["params"]["textDocument"]["uri"].as_str()),
            "version": message["params"]["version"].as_i64().or(message["params"]["textDocument"]["version"].as_i64()),
            "result": message.get("result").map(|r| r.as_array().map_or(1, Vec::len)),
        });
        let mut file = log.lock().unwrap();
        let _ = writeln!(file, "{entry}");
        let _ = file.flush();
    };
    let server_log = Arc::clone(&log);
    let back = std::thread::spawn(move || {
        let mut reader = FrameReader::new(from_server);
        let mut out = std::io::stdout().lock();
        while let Ok(Some(message)) = reader.next_json_blocking() {
            // Noted before it is passed on: the line is there when Tandem has it.
            note(&server_log, "s2c", &message);
            if out.write_all(&frame(&message)).and_then(|()| out.flush()).is_err() {
                break;
            }
        }
    });
    let mut reader = FrameReader::new(std::io::stdin().lock());
    while let Ok(Some(message)) = reader.next_json_blocking() {
        note(&log, "c2s", &message);
        if to_server.write_all(&frame(&message)).and_then(|()| to_server.flush()).is_err() {
            break;
        }
    }
    drop(to_server);
    let _ = back.join();
    let status = child.wait().map(|s| s.code().unwrap_or(1)).unwrap_or(1);
    std::process::exit(status)
}

// ---------------------------------------------------------------------------
// The measurement.

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
            "--runs" => options.runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(options.runs),
            "--warm" => options.warm = args.next().and_then(|n| n.parse().ok()).unwrap_or(options.warm),
            "--quick" => options.quick = true,
            other => {
                eprintln!("code_intel bench: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    options.runs = options.runs.max(1);
    options
}

/// The proxy's log lines written since `from` (a byte offset).
fn log_since(log: &Path, from: usize) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.get(from..).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn log_len(log: &Path) -> usize {
    std::fs::metadata(log).map(|m| m.len() as usize).unwrap_or(0)
}

/// A project: lib.py defines `greet`, callers call it.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join("lib.py"), LIB_OK).unwrap();
    for i in 0..CALLERS {
        let mut text = "from lib import greet\n\n".to_string();
        for j in 0..CALLS_PER_FILE {
            text.push_str(&format!("print(greet(\"caller {i} call {j}\"))\n"));
        }
        std::fs::write(root.join(format!("caller_{i}.py")), text).unwrap();
    }
    (dir, root)
}

async fn call(executor: &Executor, ctx: &ToolContext, name: &str, input: Value) -> (String, bool, f64) {
    let call = ToolCall::new("toolu_bench", name, input);
    let start = now_ns();
    let result = executor.execute(&call, ctx).await.expect("tool call");
    (result.content, result.is_error, (now_ns() - start) as f64 / 1e6)
}

fn edit_input(run: usize) -> Value {
    // Even runs break the function, odd runs fix it again.
    let (old, new) = if run % 2 == 0 { (FIXED, BROKEN) } else { (BROKEN, FIXED) };
    json!({"file_path": "lib.py", "old_string": old, "new_string": new})
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--proxy") {
        let log = PathBuf::from(args.next().expect("--proxy LOG"));
        let rest: Vec<String> = args.skip_while(|a| a == "--").collect();
        proxy(&log, &rest);
    }
    let options = options();
    println!("## Code intelligence: what Tandem adds to a warm language server");
    println!();
    let pyright = std::env::var_os("TANDEM_PYRIGHT").map(PathBuf::from).filter(|p| p.is_file());
    let Some(pyright) = pyright else {
        println!("Not measured: no pyright-langserver (set TANDEM_PYRIGHT to it; `.ci/run` installs pyright from npm).");
        println!();
        if std::env::var_os("TANDEM_REQUIRE_PYRIGHT").is_some() {
            eprintln!("code_intel bench: TANDEM_REQUIRE_PYRIGHT is set but TANDEM_PYRIGHT names no file");
            std::process::exit(1);
        }
        return;
    };
    let mut failures: Vec<String> = Vec::new();
    let (_dir, root) = project();
    let log = root.join(".git/lsp-proxy.log");
    let me = std::env::current_exe().expect("this binary");
    let command = json!([me, "--proxy", log, "--", pyright, "--stdio"]);
    let servers_setting: BTreeMap<String, (Scope, Value)> =
        [("python".to_string(), (Scope::User, json!({"command": command, "filetypes": ["py"]})))].into_iter().collect();
    let (servers, problems) = LanguageServers::configure(&root, &servers_setting, Approvals::default(), Duration::from_secs(60), Some(Duration::from_secs(60)));
    assert!(problems.is_empty(), "{problems:?}");
    let servers = servers.expect("a configured server");
    let executor = tandem::tools::builtin::code_intel::install(Executor::new(ToolRegistry::builtin()), Arc::clone(&servers) as Arc<dyn tandem::tools::ports::code_intel::CodeIntel>);
    let ctx = ToolContext::new(Arc::new(Workspace::new(&root).expect("workspace")));
    ctx.run.activate("code_intel");

    // Open the files (reads tell the server) and wait until pyright has
    // analysed them: the first answers of a cold server take seconds.
    let (text, _, _) = call(&executor, &ctx, "read_file", json!({"file_path": "lib.py"})).await;
    assert!(text.contains("def greet"), "{text}");
    let references = json!({"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "greet"});
    let expected_refs = CALLERS * (CALLS_PER_FILE + 1) + 1;
    let count = |text: &str| text.lines().filter(|l| l.contains(".py:")).count();
    let (text, _, cold) = call(&executor, &ctx, "code_intel", references.clone()).await;
    // A cold pyright answers from the files it has analysed so far: ask
    // until it knows every caller (bounded), then it is warm.
    let warm_by = now_ns() + 60_000_000_000;
    let mut text = text;
    while count(&text) != expected_refs && now_ns() < warm_by {
        text = call(&executor, &ctx, "code_intel", references.clone()).await.0;
    }
    if count(&text) != expected_refs {
        failures.push(format!("references: expected {expected_refs} places, got {} within 60 s: {text}", count(&text)));
    }

    // References, warm.
    let mut total = Vec::new();
    let mut server = Vec::new();
    for run in 0..options.warm + options.runs {
        let from = log_len(&log);
        let (text, is_error, took) = call(&executor, &ctx, "code_intel", references.clone()).await;
        if is_error || count(&text) != expected_refs {
            failures.push(format!("references (run {run}): {text}"));
        }
        let lines = log_since(&log, from);
        let request = lines.iter().find(|l| l["dir"] == "c2s" && l["method"] == "textDocument/references");
        let answer = request.and_then(|r| lines.iter().find(|l| l["dir"] == "s2c" && l["id"] == r["id"] && l["method"].is_null()));
        let (Some(request), Some(answer)) = (request, answer) else {
            failures.push(format!("references (run {run}): the proxy saw no request and answer"));
            continue;
        };
        if run >= options.warm {
            total.push(took);
            server.push((answer["t"].as_u64().unwrap() - request["t"].as_u64().unwrap()) as f64 / 1e6);
        }
    }
    let refs = (stats(&total), stats(&server), stats(&total.iter().zip(&server).map(|(t, s)| t - s).collect::<Vec<_>>()));

    // Diagnostics after an edit, warm; and the same edits with no server.
    let (plain_dir, plain_root) = project();
    let plain = ToolContext::new(Arc::new(Workspace::new(&plain_root).expect("workspace")));
    let plain_executor = Executor::new(ToolRegistry::builtin());
    call(&plain_executor, &plain, "read_file", json!({"file_path": "lib.py"})).await;
    let mut total = Vec::new();
    let mut server = Vec::new();
    let mut alone = Vec::new();
    for run in 0..options.warm + options.runs {
        let from = log_len(&log);
        let (text, is_error, took) = call(&executor, &ctx, "edit_file", edit_input(run)).await;
        let breaks = run % 2 == 0;
        let listed = text.contains("Diagnostics after the edit") && (text.contains("Operator \"+\" not supported") == breaks);
        if is_error || !listed {
            failures.push(format!("edit (run {run}): the result does not list the {} error: {text}", if breaks { "new" } else { "fixed" }));
        }
        let lines = log_since(&log, from);
        let change = lines.iter().rev().find(|l| l["dir"] == "c2s" && l["method"] == "textDocument/didChange" && l["uri"].as_str().is_some_and(|u| u.ends_with("/lib.py")));
        let publish = change.and_then(|c| {
            lines.iter().find(|l| {
                l["dir"] == "s2c"
                    && l["method"] == "textDocument/publishDiagnostics"
                    && l["uri"] == c["uri"]
                    && l["version"].as_i64() >= c["version"].as_i64()
                    && l["t"].as_u64() >= c["t"].as_u64()
            })
        });
        let (Some(change), Some(publish)) = (change, publish) else {
            failures.push(format!("edit (run {run}): the proxy saw no didChange and its publishDiagnostics"));
            continue;
        };
        let (_, plain_error, plain_took) = call(&plain_executor, &plain, "edit_file", edit_input(run)).await;
        if plain_error {
            failures.push(format!("edit without a server (run {run}) failed"));
        }
        if run >= options.warm {
            total.push(took);
            server.push((publish["t"].as_u64().unwrap() - change["t"].as_u64().unwrap()) as f64 / 1e6);
            alone.push(plain_took);
        }
    }
    drop(plain_dir);
    let diags = (stats(&total), stats(&server), stats(&total.iter().zip(&server).map(|(t, s)| t - s).collect::<Vec<_>>()), stats(&alone));
    servers.shutdown().await;

    println!(
        "pyright ({}) started by Tandem from `lspServers` (the headless client of `tandem ask`), {} files, `greet` referenced {expected_refs} times; the first references call (cold server, before it had read the callers) took {} ms. Median (min–max) of {} runs after {} warm-up runs{}. The server's own time is read at a pass-through on the same connection (request → answer; `didChange` → `publishDiagnostics` of that version); \"added\" is the call minus the server, per run.",
        pyright_version(&pyright),
        CALLERS + 1,
        ms(cold),
        options.runs,
        options.warm,
        if options.quick { "; quick mode: timings not meaningful" } else { "" }
    );
    println!();
    println!("| request | call → result ms | pyright's own ms | added by Tandem ms | the same edit with no server ms |");
    println!("|---|---|---|---|---|");
    println!("| `code_intel` references (the answer rendered as `path:line:col` lines) | {} | {} | {} | — |", cell(refs.0), cell(refs.1), cell(refs.2));
    println!(
        "| `edit_file` with diagnostics after it (made or fixed a type error; the result lists what is new) | {} | {} | {} | {} |",
        cell(diags.0),
        cell(diags.1),
        cell(diags.2),
        cell(diags.3)
    );
    println!();
    println!("What \"added\" covers: for references, opening nothing new (the file is open), the request's JSON both ways, resolving the symbol on the line and rendering the places with their snippets; for the edit, the edit itself (the last column), the diagnostics taken before it, the `didChange`, and waiting for the publish of the edited version (pyright tags its publishes with the version, so the wait ends on it).");
    println!();
    if !failures.is_empty() {
        println!("**Checks that failed:**");
        for failure in &failures {
            println!("- {}", failure.chars().take(400).collect::<String>());
        }
        println!();
        std::process::exit(1);
    }
}

fn pyright_version(pyright: &Path) -> String {
    // node_modules/.bin/pyright-langserver → node_modules/pyright/package.json
    let package = pyright.parent().and_then(Path::parent).map(|modules| modules.join("pyright/package.json"));
    package
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v["version"].as_str().map(|v| format!("pyright {v}")))
        .unwrap_or_else(|| pyright.display().to_string())
}
