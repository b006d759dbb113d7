//! The model's todo list (`todo_write`) and background tasks (`run_shell`
//! with `"background": true`, `task_list`, `task_output`, `task_stop`),
//! through the real `tandem ask` and `tandem lsp` with the scripted model:
//!
//! - the list is a `todo` event in `tandem ask --json` and `tandem/runEvent`,
//!   a checklist in the terminal transcript, and it survives `--resume` and
//!   a compaction (the model's next request after the compaction holds it);
//! - background tasks: checked by effect against `/proc` (a task's
//!   processes are the ones the list names; none is left once Tandem
//!   ended, was killed, or the task was stopped).
//!
//! The ACP `plan` updates are tested in `acp.rs` with the ACP SDK's client.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;

use serde_json::{json, Value};
use tokio::process::Command;

use crate::common::{fixture, only_process, sleeper};
use crate::common::lsp_client::{ask_params, Fixture};
use crate::common::mock_model::{MockModel, MockResponse};
use crate::common::script::done;

fn tandem(dir: &Path, data: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command.env("XDG_DATA_HOME", data).env("HOME", data);
    command
}

fn scripted(mut command: Command, dir: &Path, turns: Vec<Value>) -> Command {
    let path = dir.join(".script.json");
    std::fs::write(&path, json!({ "turns": turns }).to_string()).unwrap();
    command.env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", path);
    command
}

fn todo_write(items: &[(&str, &str)]) -> Value {
    let todos: Vec<Value> = items.iter().map(|(content, status)| json!({"content": content, "status": status})).collect();
    json!({"name": "todo_write", "input": {"todos": todos}})
}

/// Plan two steps, finish the first, then answer.
fn planning_turns() -> Vec<Value> {
    vec![
        json!({"text": "Planning.", "tool_calls": [todo_write(&[("Read the code", "in_progress"), ("Fix the bug", "pending")])]}),
        json!({"text": "", "tool_calls": [todo_write(&[("Read the code", "completed"), ("Fix the bug", "in_progress")])]}),
        done(),
    ]
}

async fn events_of(mut command: Command) -> Vec<Value> {
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Each `todo` event as one line: `[x] a | [~] b`.
fn todo_lines(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "todo")
        .map(|e| {
            e["todos"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| format!("{}:{} {}", t["id"].as_str().unwrap(), t["status"].as_str().unwrap(), t["content"].as_str().unwrap()))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

#[tokio::test]
async fn the_todo_list_is_an_event_in_ask_json_and_a_checklist_in_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut command = scripted(tandem(dir.path(), data.path()), dir.path(), planning_turns());
    command.args(["ask", "--json", "fix the bug"]);
    let events = events_of(command).await;
    assert_eq!(
        todo_lines(&events),
        ["1:in_progress Read the code | 2:pending Fix the bug", "1:completed Read the code | 2:in_progress Fix the bug"],
        "{events:#?}"
    );
    // Each list comes before the result of the call that wrote it.
    let first_todo = events.iter().position(|e| e["type"] == "todo").unwrap();
    let first_result = events.iter().position(|e| e["type"] == "tool_result").unwrap();
    assert!(first_todo < first_result, "{events:#?}");

    let mut command = scripted(tandem(dir.path(), data.path()), dir.path(), planning_turns());
    command.args(["ask", "fix the bug"]);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    let checklist: Vec<&str> = stdout.lines().filter(|l| l.trim_start().starts_with("todo (") || l.trim_start().starts_with('[')).map(str::trim).collect();
    assert_eq!(checklist, ["todo (0/2):", "[~] Read the code", "[ ] Fix the bug", "todo (1/2):", "[x] Read the code", "[~] Fix the bug"], "{stdout}");
}

#[tokio::test]
async fn a_bad_todo_list_is_an_error_the_model_reads_and_the_list_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let turns = vec![
        json!({"text": "", "tool_calls": [todo_write(&[("Read the code", "in_progress")])]}),
        json!({"text": "", "tool_calls": [todo_write(&[("  ", "pending")])]}),
        json!({"text": "", "tool_calls": [{"name": "todo_write", "input": {"todos": [{"content": "x", "status": "half_done"}]}}]}),
        done(),
    ];
    let mut command = scripted(tandem(dir.path(), data.path()), dir.path(), turns);
    command.args(["ask", "--json", "go"]);
    let events = events_of(command).await;
    let results: Vec<(bool, String)> =
        events.iter().filter(|e| e["type"] == "tool_result").map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().to_string())).collect();
    assert_eq!(results.len(), 3, "{events:#?}");
    assert!(!results[0].0);
    assert!(results[1].0 && results[1].1.contains("has no content"), "{results:?}");
    assert!(results[2].0 && results[2].1.contains("half_done"), "{results:?}");
    // Only the good list was shown.
    assert_eq!(todo_lines(&events), ["1:in_progress Read the code"]);
}

#[tokio::test]
async fn the_todo_list_survives_resume_and_the_model_is_reminded_of_it_after_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut command = scripted(tandem(dir.path(), data.path()), dir.path(), planning_turns());
    command.args(["ask", "--json", "fix the bug"]);
    let events = events_of(command).await;
    let thread = events.last().unwrap()["thread_id"].as_str().unwrap().to_string();

    // A new process resumes the thread and compacts it first: the summary,
    // then the run's request.
    let text = fixture("anthropic/verbatim_basic_text.sse");
    let mock = MockModel::start(vec![MockResponse::sse(&text), MockResponse::sse(&text)]).await;
    let mut command = tandem(dir.path(), data.path());
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
    command.args(["ask", "--json", "--resume", &thread, "--compact", "go on"]);
    events_of(command).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the summary and the run");
    let after = requests[1].body["messages"].to_string();
    assert!(after.contains("This conversation was compacted"), "{after}");
    assert!(after.contains("Your todo list") && after.contains("[x] Read the code\\n[~] Fix the bug"), "{after}");
}

#[test]
fn the_todo_list_is_a_run_event_in_the_editor() {
    let f = Fixture::new(&[]);
    let mut client = f.start(json!(planning_turns()), json!({}), json!({}));
    let answer = client.request("workspace/executeCommand", ask_params("fix the bug"));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(todo_lines(&client.run_events()), ["1:in_progress Read the code | 2:pending Fix the bug", "1:completed Read the code | 2:in_progress Fix the bug"]);
    client.shutdown();
}

// ---- background tasks -------------------------------------------------


/// A turn that starts `command` in the background.
fn background(command: &str) -> Value {
    call("run_shell", json!({"command": command, "background": true}))
}

fn call(name: &str, input: Value) -> Value {
    json!({"text": "", "tool_calls": [{"name": name, "input": input}]})
}

/// `tandem ask --json` with approved commands, its events read as they come.
struct Streaming {
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    events: Vec<Value>,
}

impl Streaming {
    fn start(dir: &Path, data: &Path, turns: Vec<Value>) -> Streaming {
        let mut command = scripted(tandem(dir, data), dir, turns);
        command.args(["ask", "--json", "--permission-mode", "bypassPermissions", "work"]);
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        use tokio::io::AsyncBufReadExt;
        Streaming { child, lines: tokio::io::BufReader::new(stdout).lines(), events: Vec::new() }
    }

    /// The next event that `want` picks (bounded), keeping all.
    async fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + crate::common::WAIT_LIMIT * 3;
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line()).await.unwrap_or_else(|_| panic!("no {what}: {:#?}", self.events));
            let Some(line) = line.unwrap() else { panic!("the run ended before {what}: {:#?}", self.events) };
            let event: Value = serde_json::from_str(&line).unwrap();
            self.events.push(event.clone());
            if want(&event) {
                return event;
            }
        }
    }

    /// The result of the call with this id.
    async fn result(&mut self, id: &str) -> String {
        let event = self.until(&format!("the result of {id}"), |e| e["type"] == "tool_result" && e["id"] == id).await;
        event["content"].as_str().unwrap().to_string()
    }

    /// Every event to the end; the run's exit status.
    async fn finish(mut self) -> (Vec<Value>, std::process::ExitStatus) {
        while let Some(line) = self.lines.next_line().await.unwrap() {
            self.events.push(serde_json::from_str(&line).unwrap());
        }
        let status = self.child.wait().await.unwrap();
        (self.events, status)
    }
}

/// A turn that holds the run until the test writes `name` in the workspace.
fn hold(name: &str) -> Value {
    call("run_shell", json!({"command": format!("while [ ! -e {name} ]; do sleep 0.05; done")}))
}

/// The pids a `task_list` line names: `…; 3 processes (pids 1 2 3)`.
fn listed_pids(listing: &str, task: &str) -> Vec<i32> {
    let line = listing.lines().find(|l| l.starts_with(&format!("task {task}: "))).unwrap_or_else(|| panic!("no task {task} in {listing}"));
    let Some((_, pids)) = line.rsplit_once("(pid") else { return Vec::new() };
    pids.trim_start_matches('s').trim_end_matches(')').split_whitespace().map(|p| p.parse().unwrap()).collect()
}

#[tokio::test]
async fn a_background_task_lists_its_real_processes_and_task_stop_ends_every_one() {
    if !crate::common::bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let turns = vec![
        call("run_shell", json!({"command": format!("echo started; {} & {} & wait", sleeper(3101), sleeper(3102)), "background": true})),
        call("task_output", json!({"task_id": "1", "block": 20})),
        call("task_list", json!({})),
        hold("listed.flag"),
        call("task_stop", json!({"task_id": "1"})),
        call("task_list", json!({})),
        call("task_output", json!({"task_id": "7"})),
        done(),
    ];
    let mut run = Streaming::start(dir.path(), data.path(), turns);
    let started = run.result("toolu_script_1_1").await;
    assert!(started.starts_with("task_id: 1\n"), "{started}");
    let output = run.result("toolu_script_2_1").await;
    assert!(output.contains("running") && output.ends_with(":\nstarted\n"), "{output}");
    let listing = run.result("toolu_script_3_1").await;
    // The list is the machine's truth: the shell and both sleeps, each alive.
    let pids = listed_pids(&listing, "1");
    let (first, second) = (only_process(&sleeper(3101)), only_process(&sleeper(3102)));
    assert_eq!(pids.len(), 3, "{listing}");
    assert!(pids.contains(&first) && pids.contains(&second), "{listing}: sleeps {first} {second}");
    assert!(pids.iter().all(|pid| crate::common::process_alive(*pid)), "{listing}");
    std::fs::write(dir.path().join("listed.flag"), "").unwrap();
    let stopped = run.result("toolu_script_5_1").await;
    assert!(stopped.starts_with("Stopped task 1"), "{stopped}");
    for pid in &pids {
        assert!(crate::common::wait_until_dead(*pid).await, "process {pid} of the stopped task is still running");
    }
    let listing = run.result("toolu_script_6_1").await;
    assert!(listing.starts_with("task 1: stopped after "), "{listing}");
    let unknown = run.until("the unknown task's result", |e| e["type"] == "tool_result" && e["id"] == "toolu_script_7_1").await;
    assert_eq!(unknown["is_error"], true);
    assert!(unknown["content"].as_str().unwrap().contains("there is no task \"7\". The tasks are: 1"), "{unknown}");
    let (events, status) = run.finish().await;
    assert!(status.success(), "{events:#?}");
    let news: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "task_started" || e["type"] == "task_ended")
        .map(|e| format!("{} {} {}", e["type"].as_str().unwrap(), e["task_id"].as_str().unwrap(), e["status"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(news, ["task_started 1 ", "task_ended 1 stopped"]);
}

#[tokio::test]
async fn daemons_and_a_task_that_ignores_sigterm_end_with_task_stop() {
    if !crate::common::bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // Ignored signals are inherited: nothing here ends on a SIGTERM.
    let names = [sleeper(3201), sleeper(3202), sleeper(3203)];
    let command = format!("trap '' TERM; setsid {} & nohup {} >/dev/null 2>&1 & ({} &); echo up; while true; do sleep 1; done", names[0], names[1], names[2]);
    let turns = vec![
        background(&command),
        hold("daemons.flag"),
        call("task_list", json!({})),
        hold("listed.flag"),
        call("task_stop", json!({"task_id": "1"})),
        done(),
    ];
    let mut run = Streaming::start(dir.path(), data.path(), turns);
    run.until("the hold", |e| e["type"] == "tool_call" && e["id"] == "toolu_script_2_1").await;
    crate::common::wait_until("the daemons run", || {
        names.iter().all(|c| crate::common::processes_running(c).len() == 1)
    });
    std::fs::write(dir.path().join("daemons.flag"), "").unwrap();
    let listing = run.result("toolu_script_3_1").await;
    let pids = listed_pids(&listing, "1");
    let daemons: Vec<i32> = names.iter().map(|c| only_process(c)).collect();
    for daemon in &daemons {
        assert!(pids.contains(daemon), "the double-forked and setsid daemons are the task's: {listing} {daemons:?}");
    }
    std::fs::write(dir.path().join("listed.flag"), "").unwrap();
    let stopped = run.result("toolu_script_5_1").await;
    assert!(stopped.starts_with("Stopped task 1"), "{stopped}");
    for pid in pids.iter().chain(&daemons) {
        assert!(crate::common::wait_until_dead(*pid).await, "process {pid} survived task_stop");
    }
    let (_, status) = run.finish().await;
    assert!(status.success());
}

#[tokio::test]
async fn tasks_end_with_tandem_ask_and_with_a_sigkill_of_tandem() {
    if !crate::common::bwrap_works() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    // The run ends with the task still running: the session ends it.
    let dir = tempfile::tempdir().unwrap();
    let mut run = Streaming::start(dir.path(), data.path(), vec![background(&sleeper(3301)), call("task_list", json!({})), hold("seen.flag"), done()]);
    run.result("toolu_script_2_1").await;
    let sleeping = only_process(&sleeper(3301));
    std::fs::write(dir.path().join("seen.flag"), "").unwrap();
    let (_, status) = run.finish().await;
    assert!(status.success());
    assert!(crate::common::wait_until_dead(sleeping).await, "the task outlived `tandem ask`");

    // Tandem is killed while a task (and a foreground command) runs.
    let dir = tempfile::tempdir().unwrap();
    let turns = vec![background(&format!("{} & {}", sleeper(3302), sleeper(3303))), call("task_list", json!({})), call("run_shell", json!({"command": sleeper(3304)})), done()];
    let mut run = Streaming::start(dir.path(), data.path(), turns);
    run.result("toolu_script_2_1").await;
    run.until("the foreground command", |e| e["type"] == "tool_call" && e["id"] == "toolu_script_3_1").await;
    crate::common::wait_until("the foreground command runs", || crate::common::processes_running(&sleeper(3304)).len() == 1);
    let task = [only_process(&sleeper(3302)), only_process(&sleeper(3303)), only_process(&sleeper(3304))];
    run.child.start_kill().unwrap();
    run.child.wait().await.unwrap();
    for pid in task {
        assert!(crate::common::wait_until_dead(pid).await, "process {pid} outlived a SIGKILL of Tandem");
    }
}

#[tokio::test]
async fn a_task_that_ends_by_itself_is_announced_to_the_model_once() {
    if !crate::common::bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // The task ends when the test says so, while a foreground command
    // holds the run; the command ends once Tandem has seen the end, so the
    // notice goes with that command's result.
    let task = "echo one; echo two; while [ ! -e first.flag ]; do sleep 0.05; done; exit 3";
    let turns = vec![background(task), call("run_shell", json!({"command": "while [ ! -e second.flag ]; do sleep 0.05; done"})), done()];
    let mut run = Streaming::start(dir.path(), data.path(), turns);
    run.until("the foreground command", |e| e["type"] == "tool_call" && e["id"] == "toolu_script_2_1").await;
    std::fs::write(dir.path().join("first.flag"), "").unwrap();
    let ended = run.until("the task's end", |e| e["type"] == "task_ended").await;
    assert_eq!((ended["status"].as_str(), ended["exit_code"].as_i64()), (Some("exited"), Some(3)), "{ended}");
    assert_eq!(ended["last_lines"], json!(["one", "two"]));
    std::fs::write(dir.path().join("second.flag"), "").unwrap();
    let (events, status) = run.finish().await;
    assert!(status.success(), "{events:#?}");
    // What the model read is the thread: the notice is in it once, after
    // the foreground command's result.
    let thread = events.last().unwrap()["thread_id"].as_str().unwrap().to_string();
    let saved = find_file(&data.path().join("tandem/threads"), &format!("{thread}.jsonl"));
    let history = std::fs::read_to_string(saved).unwrap();
    let notice = format!("[Background task 1 (`{task}`) exited with code 3. Its last lines:\\none\\ntwo");
    assert_eq!(history.matches(&notice).count(), 1, "{history}");
    let line = history.lines().find(|l| l.contains(&notice)).unwrap();
    assert!(line.contains("toolu_script_2_1"), "the notice comes with the next result: {line}");
}

fn find_file(dir: &Path, name: &str) -> std::path::PathBuf {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Ok(found) = std::panic::catch_unwind(|| find_file(&path, name)) {
                return found;
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return path;
        }
    }
    panic!("no {name} under {}", dir.display());
}

/// A server a task starts on the loopback: reachable from the machine
/// when the command has the network, not otherwise (its loopback is its own).
#[tokio::test]
async fn a_tasks_server_is_reachable_from_the_machines_loopback_only_with_the_network() {
    if !crate::common::bwrap_works() || crate::common::tools::which("python3").is_none() {
        return;
    }
    for network in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(data.path().join(".tandem")).unwrap();
        std::fs::write(data.path().join(".tandem/settings.json"), json!({"sandbox": {"network": network}}).to_string()).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let turns = vec![
            background(&format!("exec python3 -u -m http.server {port} --bind 127.0.0.1")),
            call("task_output", json!({"task_id": "1", "block": 20})),
            call("run_shell", json!({"command": "while [ ! -e go.flag ]; do sleep 0.05; done"})),
            done(),
        ];
        let mut run = Streaming::start(dir.path(), data.path(), turns);
        let started = run.result("toolu_script_1_1").await;
        assert_eq!(started.contains("reachable from this machine's loopback"), network, "{started}");
        let output = run.result("toolu_script_2_1").await;
        assert!(output.contains("Serving HTTP"), "{output}");
        let reached = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok();
        std::fs::write(dir.path().join("go.flag"), "").unwrap();
        let (events, status) = run.finish().await;
        assert!(status.success(), "{events:#?}");
        assert_eq!(reached, network, "with network {network}, the server was reached: {reached}");
    }
}

/// A thread resumed by a new process lists the earlier session's task
/// as ended with it, and the model is told so once.
#[tokio::test]
async fn a_resumed_thread_lists_the_earlier_sessions_task_as_ended() {
    if !crate::common::bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let run = Streaming::start(dir.path(), data.path(), vec![background("sleep 3401"), done()]);
    let (events, status) = run.finish().await;
    assert!(status.success(), "{events:#?}");
    let thread = events.last().unwrap()["thread_id"].as_str().unwrap().to_string();
    let mut command = scripted(tandem(dir.path(), data.path()), dir.path(), vec![call("task_list", json!({})), done()]);
    command.args(["ask", "--json", "--resume", &thread, "and now?"]);
    let events = events_of(command).await;
    let listing = events.iter().find(|e| e["type"] == "tool_result").unwrap()["content"].as_str().unwrap().to_string();
    assert!(listing.starts_with("task 1: ended with the Tandem process that ran it"), "{listing}");
    let saved = find_file(&data.path().join("tandem/threads"), &format!("{thread}.jsonl"));
    let history = std::fs::read_to_string(saved).unwrap();
    assert_eq!(history.matches("[Background task 1 (`sleep 3401`) ended with the Tandem session that ran it").count(), 1, "{history}");
}

/// A compaction keeps the thread's tasks in view: the model's next request
/// lists them as they stand (here one the earlier session ran).
#[tokio::test]
async fn a_compaction_keeps_the_threads_tasks_in_the_models_view() {
    if !crate::common::bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (events, status) = Streaming::start(dir.path(), data.path(), vec![background("sleep 3601"), done()]).finish().await;
    assert!(status.success(), "{events:#?}");
    let thread = events.last().unwrap()["thread_id"].as_str().unwrap().to_string();
    let text = fixture("anthropic/verbatim_basic_text.sse");
    let mock = MockModel::start(vec![MockResponse::sse(&text), MockResponse::sse(&text)]).await;
    let mut command = tandem(dir.path(), data.path());
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
    command.args(["ask", "--json", "--resume", &thread, "--compact", "go on"]);
    events_of(command).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the summary and the run");
    let after = requests[1].body["messages"].to_string();
    assert!(after.contains("This conversation was compacted"), "{after}");
    assert!(after.contains("Background tasks of this conversation") && after.contains("- task 1: ended with the Tandem process that ran it: `sleep 3601`"), "{after}");
}

/// In the editor: `tandem.tasks` lists the session's background tasks, and
/// `tandem.stopTask` stops one at the user's word (an unknown id is an
/// error that names the known ones); the list then says it stopped.
#[test]
fn the_editor_lists_the_sessions_tasks_and_stops_one() {
    if !crate::common::bwrap_works() {
        return;
    }
    let f = Fixture::new(&[]);
    let sleep = sleeper(3207);
    let turns = json!([background(&sleep), {"text": "Started."}]);
    let mut client = f.start(turns, json!({}), json!({"permissionMode": "bypassPermissions"}));
    let answer = client.request("workspace/executeCommand", ask_params("start the server"));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let listed = client.request("workspace/executeCommand", json!({"command": "tandem.tasks", "arguments": []}));
    let tasks = listed["result"]["tasks"].as_array().unwrap_or_else(|| panic!("{listed}")).clone();
    assert_eq!(tasks.len(), 1, "{listed}");
    assert_eq!((tasks[0]["id"].as_str(), tasks[0]["command"].as_str(), tasks[0]["status"].as_str()), (Some("1"), Some(sleep.as_str()), Some("running")), "{listed}");
    let pid = only_process(&sleep);

    let unknown = client.request("workspace/executeCommand", json!({"command": "tandem.stopTask", "arguments": [{"taskId": "7"}]}));
    assert!(unknown["error"]["message"].as_str().is_some_and(|m| m.contains('7') && m.contains('1')), "{unknown}");
    let stopped = client.request("workspace/executeCommand", json!({"command": "tandem.stopTask", "arguments": [{"taskId": "1"}]}));
    assert_eq!(stopped["result"]["task"]["status"], "stopped", "{stopped}");
    assert!(!crate::common::process_alive(pid), "{sleep} still runs");
    let listed = client.request("workspace/executeCommand", json!({"command": "tandem.tasks", "arguments": []}));
    assert_eq!(listed["result"]["tasks"][0]["status"], "stopped", "{listed}");
    client.shutdown();
}

/// How long after Tandem's end the last process of a task may still show
/// in `/proc` (the kernel ends a pid namespace once its init is gone).
fn ended_within(pid: i32, limit: std::time::Duration) -> Option<std::time::Duration> {
    let start = std::time::Instant::now();
    while crate::common::process_alive(pid) {
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Some(start.elapsed())
}

/// An editor restart: the editor that goes away closes the server's input
/// without `shutdown` (a crash or a killed window), or the server itself is
/// SIGKILLed. Either way the session's background tasks end with it, every
/// process of them within a second.
#[test]
fn an_editor_that_goes_away_ends_the_sessions_tasks() {
    if !crate::common::bwrap_works() {
        return;
    }
    for (ending, task) in [("input closed", format!("{} & {}", sleeper(3211), sleeper(3212))), ("SIGKILL", format!("{} & {}", sleeper(3213), sleeper(3214)))] {
        let f = Fixture::new(&[]);
        let turns = json!([background(&task), {"text": "Started."}]);
        let mut client = f.start(turns, json!({}), json!({"permissionMode": "bypassPermissions"}));
        let answer = client.request("workspace/executeCommand", ask_params("start the servers"));
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
        let names: Vec<String> = task.split(" & ").map(str::to_string).collect();
        crate::common::wait_until("both processes of the task run", || names.iter().all(|n| crate::common::processes_running(n).len() == 1));
        let pids: Vec<i32> = names.iter().map(|n| only_process(n)).collect();
        if ending == "SIGKILL" {
            drop(client);
        } else {
            client.close_input();
            assert!(client.wait_exit().is_some(), "tandem lsp did not exit when its input closed");
        }
        for pid in pids {
            let took = ended_within(pid, std::time::Duration::from_secs(1));
            assert!(took.is_some(), "process {pid} of the task outlived tandem lsp ({ending}) by more than 1 s");
            eprintln!("{ending}: process {pid} of the task ended {took:?} after tandem lsp");
        }
    }
}
