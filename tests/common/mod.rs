//! Shared test helpers: the mock model server, test tools, fixtures, and a
//! way to run the agent and collect its events.

#![allow(dead_code, clippy::unwrap_used)]

pub mod edit_cases;
pub mod files;
pub mod fim_mock;
pub mod llama;
pub mod lsp_client;
pub mod mock_model;
pub mod mock_responses;
pub mod notes;
pub mod review_fuzz;
pub mod screenshot;
pub mod script;
pub mod test_tools;
pub mod tmux;
pub mod tools;
pub mod turns;

use std::sync::Arc;

/// The variables that choose a model and where it is, which a test's
/// `tandem` process must not take from the machine running the tests: each
/// test sets the ones it means.
pub const MODEL_VARIABLES: [&str; 15] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "TANDEM_EFFORT",
    "TANDEM_MODELS",
    "TANDEM_CUSTOM_HEADERS",
    "TANDEM_MAX_TOKENS",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "TANDEM_PROVIDER",
    "TANDEM_MODEL",
    "TANDEM_SCRIPT",
    "TANDEM_CONTEXT_WINDOW",
    "TANDEM_THINKING",
    "NO_COLOR",
];

use tandem::agent::{self, Provider, RunEvent, RunOutcome, RunRequest};
use tandem::tools::{Executor, ToolContext};
use tandem::workspace::Workspace;

/// An SSE recording from `tests/data/sse/`.
pub fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A throwaway workspace and a tool context over it.
pub fn workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let mut workspace = Workspace::new(dir.path()).unwrap();
    // No user files (~/.tandem/AGENTS.md, skills, agents) from the machine running the tests.
    workspace.set_home(None);
    (dir, ToolContext::new(Arc::new(workspace)))
}

pub fn request(prompt: &str) -> RunRequest {
    RunRequest { prompt: prompt.into(), ..RunRequest::default() }
}

/// Run to the end; return the outcome and every event.
pub async fn run_agent(provider: &dyn Provider, executor: &Executor, ctx: ToolContext, request: RunRequest) -> (RunOutcome, Vec<RunEvent>) {
    let (tx, mut rx) = agent::event_channel();
    let outcome = agent::run(provider, executor, ctx, request, tx).await;
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    (outcome, events)
}

/// One line per event, for snapshots.
pub fn render_events(events: &[RunEvent]) -> String {
    events
        .iter()
        .map(|e| match e {
            RunEvent::Retry { attempt, reason, .. } => format!("retry attempt={attempt} reason={reason}"),
            other => serde_json::to_string(other).unwrap(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `messages` of a recorded request body, pretty.
pub fn messages_json(body: &serde_json::Value) -> String {
    serde_json::to_string_pretty(&body["messages"]).unwrap()
}

/// Wait (bounded) until a test's shell command has written its child's pid.
#[cfg(unix)]
pub async fn wait_for_pid(path: &std::path::Path) -> i32 {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()) {
            return pid;
        }
        assert!(tokio::time::Instant::now() < deadline, "the shell never wrote {}", path.display());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// How long a test waits for anything before it fails.
pub const WAIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Wait until `done` holds, failing the test after [`WAIT_LIMIT`]. For
/// conditions nothing announces (a file appearing, a process in `/proc`):
/// it looks every 10 ms, bounded by the limit.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + WAIT_LIMIT;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Alive and not a zombie (a zombie has exited; it only waits to be reaped).
#[cfg(unix)]
/// Is bubblewrap here and able to build a sandbox (background tasks and
/// the shell's walls need one)? Skips (or, with `TANDEM_REQUIRE_BWRAP`, as
/// `.ci/run` sets it, fails) when not.
pub fn bwrap_works() -> bool {
    let works = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev", "true"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        assert!(std::env::var_os("TANDEM_REQUIRE_BWRAP").is_none(), "TANDEM_REQUIRE_BWRAP is set but bwrap is missing or cannot build a sandbox");
        eprintln!("skipping: bubblewrap (bwrap) is missing or cannot build a sandbox here");
    }
    works
}

pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        // SAFETY: signal 0 only checks that the process exists.
        Err(_) => unsafe { libc::kill(pid, 0) == 0 },
    }
}


/// `sleep N…`, unique to this test process: a test that finds its processes
/// by command line ([`processes_running`]) then sees only its own, even when
/// two copies of the suite run at once (two worktrees). `n` tells a test's
/// sleeps apart; the process id follows it.
pub fn sleeper(n: u32) -> String {
    format!("sleep {n}{:07}", std::process::id())
}

/// The pids (as this test sees them) of live processes whose command line
/// is `command` (arguments joined by spaces): how a test finds a process that runs in a sandbox's pid
/// namespace, where the pid it prints is not ours.
#[cfg(target_os = "linux")]
pub fn processes_running(command: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| process_alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim_end() == command)
        })
        .collect()
}

/// The one process running `command`, waited for (bounded): a task's
/// shell is listed as soon as it forks, and under load the command it
/// starts may not be running yet.
#[cfg(target_os = "linux")]
pub fn only_process(command: &str) -> i32 {
    wait_until(&format!("`{command}` runs"), || !processes_running(command).is_empty());
    let found = processes_running(command);
    assert_eq!(found.len(), 1, "one `{command}` running: {found:?}");
    found[0]
}

/// Wait (bounded) for a process to be gone. A killed process closes its
/// pipes before the kernel marks it a zombie, so the tool that saw EOF can
/// return a moment before `/proc` shows it dead.
#[cfg(unix)]
pub async fn wait_until_dead(pid: i32) -> bool {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while process_alive(pid) {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    true
}
