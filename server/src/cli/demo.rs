//! `tandem demo`: the agent's tour of the tool system with the scripted
//! model, offline, in a throwaway workspace. It prints the transcript, then
//! checks each outcome on disk and in the results and prints
//! `✓ verified: …` (or `✗ …`) for each; any failed check makes the exit
//! code non-zero.
//!
//! The tour: create a file, read it, an edit matched via quote
//! normalization, an edit refused because the file was never read, a file
//! changed on disk after the read (the harness changes it between two model
//! turns, as a user saving in another window would), the edit after a
//! re-read, a grep, two reads in one turn, plan mode (a refused edit and
//! shell command, the plan file written, the plan handed back), and an
//! explore sub-agent whose calls show nested under its parent call.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tandem::tools::permission_mode::PermissionMode;
use tandem::host::{ModelRequest, ModelResponse, Provider, ProviderError, RunEvent, RunHandle, RunOutcome, RunParts, RunStatus, ScriptedProvider, StreamEvent, ThreadChoice};
use tandem::tools::{Executor, ToolCall, ToolContext};
use tandem::workspace::Workspace;
use tokio::sync::mpsc;

use super::ask::{print_run, Note};
use super::printer::Printer;
use super::terminal::outln;

const GREET_RS: &str = "/// The greeting shown on start.\npub fn greet() -> &'static str {\n    \"Hello, world\"\n}\n\n// TODO: localise the greeting\n";
const LIB_RS: &str = "//! A tiny crate for the demo.\npub mod greet;\n\n// TODO: add a farewell\n";
const CARGO_TOML: &str = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
/// What the harness appends to src/greet.rs after the agent read it.
const EXTERNAL_LINE: &str = "// a line the user saved from another window\n";
/// The run's plan file (chosen ahead, so the script can name it) and the plan written there.
const DEMO_PLAN_FILE: &str = ".tandem/plans/demo-plan.md";
const DEMO_PLAN: &str = "1. Add farewell() to src/greet.rs.\n2. Export it from src/lib.rs.\n3. Verify: cargo test.\n";
/// The model turn before which the harness changes src/greet.rs (0-based).
const EXTERNAL_CHANGE_BEFORE_TURN: usize = 5;

fn script() -> serde_json::Value {
    json!({"turns": [
        {"text": "I'll start by creating a notes file.",
         "tool_calls": [{"id": "toolu_demo_write", "name": "write_file", "input": {"file_path": "notes.md", "content": "# Notes\n\nThe greeting says \"hello\".\n"}}]},
        {"text": "Let me read it back.",
         "tool_calls": [{"id": "toolu_demo_read_notes", "name": "read_file", "input": {"file_path": "notes.md"}}]},
        {"text": "I'll extend the quoted word, typing curly quotes as a model often does.",
         "tool_calls": [{"id": "toolu_demo_edit_quotes", "name": "edit_file", "input": {"file_path": "notes.md", "old_string": "The greeting says \u{201c}hello\u{201d}.", "new_string": "The greeting says \u{201c}hello, world\u{201d}."}}]},
        {"text": "Now the greeting itself, straight away.",
         "tool_calls": [{"id": "toolu_demo_edit_unread", "name": "edit_file", "input": {"file_path": "src/greet.rs", "old_string": "Hello, world", "new_string": "Hi, world"}}]},
        {"text": "Right, I must read it first.",
         "tool_calls": [{"id": "toolu_demo_read_greet", "name": "read_file", "input": {"file_path": "src/greet.rs"}}]},
        {"text": "Now the edit.",
         "tool_calls": [{"id": "toolu_demo_edit_stale", "name": "edit_file", "input": {"file_path": "src/greet.rs", "old_string": "Hello, world", "new_string": "Hello, Tandem"}}]},
        {"text": "The file changed since I read it; reading it again.",
         "tool_calls": [{"id": "toolu_demo_reread_greet", "name": "read_file", "input": {"file_path": "src/greet.rs"}}]},
        {"text": "The new line is yours; my edit does not touch it.",
         "tool_calls": [{"id": "toolu_demo_edit_fresh", "name": "edit_file", "input": {"file_path": "src/greet.rs", "old_string": "Hello, world", "new_string": "Hello, Tandem"}}]},
        {"text": "Let me find the open TODOs.",
         "tool_calls": [{"id": "toolu_demo_grep", "name": "grep_search", "input": {"pattern": "TODO"}}]},
        {"text": "Both files, at once.",
         "tool_calls": [
            {"id": "toolu_demo_read_lib", "name": "read_file", "input": {"file_path": "src/lib.rs"}},
            {"id": "toolu_demo_read_cargo", "name": "read_file", "input": {"file_path": "Cargo.toml"}}
         ]},
        {"text": "Before the next change, a plan. Plan mode is a deferred tool: load it first.",
         "tool_calls": [{"id": "toolu_demo_tool_search", "name": "tool_search", "input": {"query": "select:enter_plan_mode"}}]},
        {"text": "",
         "tool_calls": [{"id": "toolu_demo_plan_enter", "name": "enter_plan_mode", "input": {}}]},
        {"text": "In plan mode only the plan file can change; trying the code and the shell anyway.",
         "tool_calls": [
            {"id": "toolu_demo_plan_edit", "name": "edit_file", "input": {"file_path": "src/lib.rs", "old_string": "// TODO: add a farewell", "new_string": "pub fn farewell() {}"}},
            {"id": "toolu_demo_plan_shell", "name": "run_shell", "input": {"command": "cargo build"}},
            {"id": "toolu_demo_plan_write", "name": "write_file", "input": {"file_path": DEMO_PLAN_FILE, "content": DEMO_PLAN}}
         ]},
        {"text": "The plan is written.",
         "tool_calls": [{"id": "toolu_demo_plan_exit", "name": "exit_plan_mode", "input": {}}]},
        {"text": "A read-only sub-agent can explore meanwhile.",
         "tool_calls": [{"id": "toolu_demo_agent", "name": "agent", "input": {"description": "find the greeting", "prompt": "Where is the greeting defined?", "type": "explore"}}]},
        // The sub-agent's own turns: the same model, its own history.
        {"text": "", "tool_calls": [{"id": "toolu_demo_child_grep", "name": "grep_search", "input": {"pattern": "fn greet"}}]},
        {"text": "greet() is defined in src/greet.rs, line 2."},
        {"text": "Done: notes.md is written, the greeting says \"Hello, Tandem\" with your new line kept, there are two TODOs left, and the farewell is planned in .tandem/plans/demo-plan.md."}
    ]})
}

/// The scripted model, plus the harness's change on disk between two turns.
struct DemoModel {
    script: ScriptedProvider,
    root: std::path::PathBuf,
    turn: std::sync::atomic::AtomicUsize,
    notes: mpsc::UnboundedSender<Note>,
}

impl DemoModel {
    /// Print a harness line between the transcript's events (see [`Note`]).
    async fn note(&self, text: String) {
        let (ack, printed) = tokio::sync::oneshot::channel();
        if self.notes.send((text, ack)).is_ok() {
            let _ = printed.await;
        }
    }
}

#[async_trait]
impl Provider for DemoModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "demo script"
    }

    async fn stream(&self, request: &ModelRequest<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let turn = self.turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if turn == EXTERNAL_CHANGE_BEFORE_TURN {
            let path = self.root.join("src/greet.rs");
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            text.push_str(EXTERNAL_LINE);
            match std::fs::write(&path, text) {
                Ok(()) => self.note("[demo] src/greet.rs changes on disk, as if you saved it in another window".into()).await,
                Err(err) => self.note(format!("[demo] could not change src/greet.rs: {err}")).await,
            }
        }
        self.script.stream(request, events).await
    }
}

fn build_workspace(root: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(root.join("src/greet.rs"), GREET_RS)?;
    std::fs::write(root.join("src/lib.rs"), LIB_RS)?;
    std::fs::write(root.join("Cargo.toml"), CARGO_TOML)?;
    Ok(())
}

pub async fn demo() -> anyhow::Result<ExitCode> {
    let dir = tempfile::Builder::new().prefix("tandem-demo-").tempdir()?;
    build_workspace(dir.path())?;
    let workspace = Arc::new(Workspace::new(dir.path())?);
    let _ = workspace.start_watcher();
    let root = workspace.root().to_path_buf();
    outln!("Tandem demo: a scripted model works in a throwaway workspace at {}\n", root.display());

    let (notes_tx, notes_rx) = mpsc::unbounded_channel();
    let model = DemoModel {
        script: ScriptedProvider::from_json(&script().to_string(), "the demo script").map_err(|e| anyhow::anyhow!("{e}"))?,
        root: root.clone(),
        turn: Default::default(),
        notes: notes_tx,
    };
    // The demo's model is scripted and its edits are the show: they apply
    // without asking (acceptEdits), in a throwaway folder.
    // The demo's own settings (none of the machine's), no MCP servers, and
    // nothing saved: the run's context from the host. Nobody answers plan
    // reviews in the demo: exit_plan_mode hands the plan back.
    let (host, _) = tandem::host::Host::open(tandem::host::FrontEnd {
        workspace,
        settings: Default::default(),
        prompter: None,
        mode: Some(PermissionMode::AcceptEdits),
        rules_in_project: false,
        hooks: tandem::host::shared_hooks(Default::default()),
        mcp: None,
        code_intel: tandem::host::CodeIntelFrom::None,
        record: false,
    });
    let executor = host.executor().clone();
    // The host drives the run with the demo's model; a context of the
    // same workspace serves the checks (which calls were concurrency-safe).
    let check_ctx = host.prepare(RunParts::default()).ctx;
    let parts = RunParts { provider: Some(Box::new(model)), plan_file: Some(root.join(DEMO_PLAN_FILE)), ..RunParts::default() };
    let handle = host.start(&ThreadChoice::New, "Show me around the tool system.", parts).map_err(|err| anyhow::anyhow!("{err}"))?;

    let printer = Printer::for_terminal();
    let (outcome, events) = run_and_record(handle, host.workspace(), printer, notes_rx).await;

    outln!("");
    let mut checks = verify(&root, &executor, &check_ctx, outcome.status, &events);
    checks.extend(editor_act().await);
    outln!("");
    let mut failed = 0;
    for (ok, text) in &checks {
        if *ok {
            outln!("✓ verified: {text}");
        } else {
            failed += 1;
            outln!("✗ FAILED: {text}");
        }
    }
    outln!("");
    if failed == 0 {
        outln!("All {} checks passed.", checks.len());
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("{failed} of {} checks failed.", checks.len());
        Ok(ExitCode::from(1))
    }
}

/// The second act: the same agent inside an editor. An in-process LSP
/// client opens a file, types an unsaved change, and the agent's stale edit
/// is refused, re-read and applied without losing the typed text.
async fn editor_act() -> Vec<(bool, String)> {
    outln!("── Act 2: in the editor (tandem lsp with an in-process editor)\n");
    let dir = match tempfile::Builder::new().prefix("tandem-demo-editor-").tempdir() {
        Ok(dir) => dir,
        Err(err) => return vec![(false, format!("the editor act could not make its workspace: {err}"))],
    };
    match tandem::lsp::demo::editor_act(dir.path(), |line| outln!("{line}")).await {
        Ok(checks) => checks,
        Err(err) => vec![(false, format!("the editor act stopped: {err:#}"))],
    }
}

/// Print the run, and keep a copy of every event for the checks.
async fn run_and_record(handle: RunHandle, workspace: &Workspace, printer: Printer, notes: mpsc::UnboundedReceiver<Note>) -> (RunOutcome, Vec<RunEvent>) {
    let tee = Arc::new(std::sync::Mutex::new(Vec::new()));
    let printer = printer.with_tee(Arc::clone(&tee));
    let RunHandle { events, ending, cancel, .. } = handle;
    let run = async move { ending.finished().await.outcome };
    let outcome = print_run(run, cancel, events, workspace, Ok(printer), Some(notes)).await;
    let events = tee.lock().map(|e| e.clone()).unwrap_or_default();
    (outcome, events)
}

/// Each check: passed, and what it shows.
fn verify(root: &Path, executor: &Executor, ctx: &ToolContext, status: RunStatus, events: &[RunEvent]) -> Vec<(bool, String)> {
    let results: HashMap<&str, (bool, &str)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult { id, is_error, content, .. } => Some((id.as_str(), (*is_error, content.as_str()))),
            _ => None,
        })
        .collect();
    let ok = |id: &str| results.get(id).map(|(is_error, _)| !is_error).unwrap_or(false);
    let says = |id: &str, needle: &str| results.get(id).map(|(_, c)| c.contains(needle)).unwrap_or(false);
    let error_says = |id: &str, needle: &str| results.get(id).map(|(e, c)| *e && c.contains(needle)).unwrap_or(false);
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap_or_default();
    let notes = read("notes.md");
    let greet = read("src/greet.rs");
    let position = |pred: &dyn Fn(&RunEvent) -> bool| events.iter().position(pred);
    let call_at = |id: &'static str| position(&move |e| matches!(e, RunEvent::ToolCall { id: i, .. } if i == id));
    let result_at = |id: &'static str| position(&move |e| matches!(e, RunEvent::ToolResult { id: i, .. } if i == id));
    let safe = |id: &str| {
        events.iter().any(|e| match e {
            RunEvent::ToolCall { id: i, name, input, .. } if i == id => executor
                .prepare(&ToolCall::new(i.clone(), name.clone(), input.clone()), ctx)
                .is_ok_and(|call| call.traits.concurrency_safe),
            _ => false,
        })
    };
    let nested_call = |parent: &str, tool: &str| {
        events.iter().any(|e| matches!(e, RunEvent::Nested { parent: p, event } if p == parent && matches!(&**event, RunEvent::ToolCall { name, .. } if name == tool)))
    };
    let parallel = safe("toolu_demo_read_lib") && safe("toolu_demo_read_cargo") && match (call_at("toolu_demo_read_lib"), call_at("toolu_demo_read_cargo"), result_at("toolu_demo_read_lib"), result_at("toolu_demo_read_cargo")) {
        (Some(c1), Some(c2), Some(r1), Some(r2)) => c1 < c2 && c2 < r1 && r1 < r2,
        _ => false,
    };

    vec![
        (
            ok("toolu_demo_write") && notes.starts_with("# Notes\n"),
            "write_file created notes.md, and it is on disk".into(),
        ),
        (
            ok("toolu_demo_read_notes") && says("toolu_demo_read_notes", "The greeting says"),
            "read_file returned the text just written".into(),
        ),
        (
            ok("toolu_demo_edit_quotes")
                && says("toolu_demo_edit_quotes", "(matched via quote normalization)")
                && notes.contains("The greeting says \"hello, world\"."),
            "the edit with curly quotes matched via quote normalization, and the file kept its straight quotes".into(),
        ),
        (
            error_says("toolu_demo_edit_unread", "You must read this file before editing") && !greet.contains("Hi, world"),
            "editing src/greet.rs before reading it was refused, and the file was not touched".into(),
        ),
        (
            error_says("toolu_demo_edit_stale", "modified externally since your last read") && greet.contains(EXTERNAL_LINE),
            "the edit after the file changed on disk was refused, and the change on disk survived".into(),
        ),
        (
            ok("toolu_demo_edit_fresh") && greet.contains("\"Hello, Tandem\"") && greet.contains(EXTERNAL_LINE),
            "after a re-read the edit applied, keeping the line saved from another window".into(),
        ),
        (
            ok("toolu_demo_grep") && says("toolu_demo_grep", "src/greet.rs:6:") && says("toolu_demo_grep", "src/lib.rs:4:"),
            "grep_search found both TODOs with their paths and line numbers".into(),
        ),
        (
            parallel && ok("toolu_demo_read_lib") && ok("toolu_demo_read_cargo") && says("toolu_demo_read_cargo", "name = \"demo\""),
            "two reads in one turn ran as one concurrent batch (both concurrency-safe), results in call order".into(),
        ),
        (
            says("toolu_demo_plan_enter", "Entered plan mode. You are now in read-only mode.")
                && error_says("toolu_demo_plan_edit", "Blocked in plan mode: edit_file")
                && error_says("toolu_demo_plan_shell", "Shell commands blocked in plan mode")
                && read("src/lib.rs") == LIB_RS,
            "plan mode refused the code edit and the shell command, and src/lib.rs is untouched".into(),
        ),
        (
            ok("toolu_demo_plan_write")
                && read(DEMO_PLAN_FILE) == DEMO_PLAN
                && says("toolu_demo_plan_exit", "Exited plan mode. Permission mode restored to: default")
                && says("toolu_demo_plan_exit", DEMO_PLAN),
            "only the plan file could be written, and exit_plan_mode handed the plan back".into(),
        ),
        (
            ok("toolu_demo_agent") && says("toolu_demo_agent", "src/greet.rs, line 2") && nested_call("toolu_demo_agent", "grep_search"),
            "an explore sub-agent searched on its own (its call nested under the agent call) and its answer came back".into(),
        ),
        (status == RunStatus::Completed, format!("the run completed (status: {})", status.as_str())),
    ]
}
