//! MCP end to end: Tandem's client (rmcp) against small servers written for
//! these tests (`tests/mcp/test_server.py`: stdio, and streamable HTTP on
//! loopback) and the agent loop against the loopback model; plus a
//! reference server from npm when `.ci/run` installed it.

#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::lsp_client;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::turns::{self, last_results, tool_names};
use common::mock_model::MockModel;
use common::{request, run_agent};
use serde_json::{json, Value};
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::{RunEvent, RunStatus};
use tandem::consent::ConsentStore;
use tandem::mcp::config::McpConfig;
use tandem::consent::Approvals;
use tandem::mcp::{McpManager, ServerState};
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;

/// Generous bound for a python server to start on a busy machine.
const START_LIMIT: Duration = Duration::from_secs(60);

fn server_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/test_server.py").display().to_string()
}

fn stdio(extra: &[&str]) -> Value {
    let mut args = vec![server_script()];
    args.extend(extra.iter().map(|s| s.to_string()));
    json!({"command": "python3", "args": args})
}

/// A temp home and workspace; servers go in the user's `~/.tandem/mcp.json`.
struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let root = dir.path().join("project");
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let root = root.canonicalize().unwrap();
        Setup { _dir: dir, home, root }
    }

    fn user_servers(&self, servers: Value) -> &Self {
        std::fs::write(self.home.join(".tandem/mcp.json"), json!({"mcpServers": servers}).to_string()).unwrap();
        self
    }

    fn config(&self) -> McpConfig {
        McpConfig::load_with(Some(&self.home), &self.root, &|name| (name == "MCP_TEST_GREETING").then(|| "hello-from-env".to_string()))
    }

    fn manager(&self, config: McpConfig) -> Arc<McpManager> {
        let store = ConsentStore::at(self.home.join("consent.json"));
        let manager = McpManager::new(config, &self.root, Approvals { store: Some(store), command_line: vec![] });
        manager.start();
        manager
    }

    fn ctx(&self) -> ToolContext {
        ToolContext::new(Arc::new(Workspace::new(&self.root).unwrap()))
    }
}

fn executor(manager: &Arc<McpManager>) -> Executor {
    let mut registry = ToolRegistry::builtin();
    registry.add_source(Arc::clone(manager) as Arc<dyn tandem::tools::ToolSource>);
    Executor::new(registry).with_results_dir(None)
}

fn state(manager: &McpManager, name: &str) -> ServerState {
    manager.statuses().into_iter().find(|s| s.name == name).unwrap().state
}

/// Wait (bounded) until `ready` holds for the manager's statuses.
async fn wait_until(manager: &McpManager, what: &str, ready: impl Fn(&McpManager) -> bool) {
    let mut changes = manager.subscribe();
    let waited = tokio::time::timeout(START_LIMIT, async {
        while !ready(manager) {
            changes.changed().await.unwrap();
        }
    })
    .await;
    assert!(waited.is_ok(), "timed out waiting for {what}: {:?}", manager.statuses());
}

async fn call(executor: &Executor, ctx: &ToolContext, name: &str, input: Value) -> (bool, String) {
    ctx.run.activate(name);
    let result = executor.execute(&ToolCall::new("c", name, input), ctx).await.unwrap();
    (result.is_error, result.content)
}

fn anthropic(mock: &MockModel) -> AnthropicProvider {
    AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap()
}

#[tokio::test]
async fn tool_search_finds_an_mcp_tool_the_model_calls_and_the_result_reaches_the_next_request() {
    let setup = Setup::new();
    setup.user_servers(json!({"calc": stdio(&[])}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "calc ready", |m| state(m, "calc") == ServerState::Ready).await;

    let mock = MockModel::start(vec![
        turns::tools("Let me find a calculator.", &[("toolu_1", "tool_search", json!({"query": "add numbers"}))]),
        turns::tools("", &[("toolu_2", "mcp__calc__add", json!({"a": 2, "b": 3}))]),
        turns::text("2 + 3 = 5"),
    ])
    .await;
    let (outcome, _events) = run_agent(&anthropic(&mock), &executor(&manager), setup.ctx(), request("add 2 and 3")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    // First request: the MCP tools are only names in the deferred-tools line.
    let first = &requests[0].body;
    assert!(!tool_names(first).iter().any(|n| n.starts_with("mcp__")), "{:?}", tool_names(first));
    let system = first["system"][0]["text"].as_str().unwrap();
    let line = system.lines().find(|l| l.starts_with("The following deferred tools are available via tool_search: ")).unwrap();
    assert!(line.contains("mcp__calc__add") && line.contains("mcp__calc__crash"), "{line}");
    assert!(line.ends_with(". Use tool_search to fetch their full schemas when needed."), "{line}");

    // tool_search answered with the schema as the server wrote it, best match first.
    let search = &last_results(&requests[1].body)[0];
    assert!(!search.1, "{search:?}");
    let found: Value = serde_json::from_str(&search.2).unwrap();
    assert_eq!(found[0]["name"], "mcp__calc__add");
    assert_eq!(found[0]["description"], "Add two numbers and return the sum.");
    assert_eq!(found[0]["input_schema"]["required"], json!(["a", "b"]));

    // From the next request on, the activated tools follow the resident ones.
    let second = tool_names(&requests[1].body);
    let resident = tool_names(first);
    assert_eq!(second[..resident.len()], resident[..]);
    assert_eq!(second[resident.len()], "mcp__calc__add");
    let add = requests[1].body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "mcp__calc__add").unwrap().clone();
    assert_eq!(add["input_schema"]["properties"], json!({"a": {"type": "number"}, "b": {"type": "number"}}));

    // The server's answer is in the third request.
    assert_eq!(last_results(&requests[2].body), [("toolu_2".to_string(), false, "5".to_string())]);
    assert_eq!(tool_names(&requests[2].body), second, "the list stays stable");
    manager.shutdown().await;
}

/// Answers a server's question as told; `None`: never answers.
struct FakeUser(Option<tandem::mcp::elicit::Answer>, std::sync::Mutex<Vec<tandem::mcp::elicit::Elicitation>>);

#[async_trait::async_trait]
impl tandem::mcp::elicit::Elicitor for FakeUser {
    async fn elicit(&self, question: &tandem::mcp::elicit::Elicitation) -> tandem::mcp::elicit::Answer {
        self.1.lock().unwrap().push(question.clone());
        match &self.0 {
            Some(answer) => answer.clone(),
            None => std::future::pending().await,
        }
    }
}

/// A server asks the user mid-call (elicitation): the answer reaches it;
/// a question nobody answers is cancelled before the tool timeout and the
/// call fails cleanly with the server's own error.
#[tokio::test]
async fn an_elicitation_is_answered_by_the_user_and_one_never_answered_times_out_cleanly() {
    use tandem::mcp::elicit::{Answer, FieldKind};
    for (answer, expected) in [
        (Some(Answer::Accept(serde_json::Map::from_iter([("name".to_string(), json!("Ada"))]))), (false, "hello Ada".to_string())),
        (Some(Answer::Decline), (true, "the user did not answer (decline)".to_string())),
        (None, (true, "the user did not answer (cancel)".to_string())),
    ] {
        let setup = Setup::new();
        setup.user_servers(json!({"asker": stdio(&[])}));
        let mut config = setup.config();
        config.tool_timeout = Duration::from_secs(4);
        let store = ConsentStore::at(setup.home.join("consent.json"));
        let manager = McpManager::new(config, &setup.root, Approvals { store: Some(store), command_line: vec![] });
        let user = Arc::new(FakeUser(answer, Default::default()));
        manager.set_elicitor(Arc::clone(&user) as Arc<dyn tandem::mcp::elicit::Elicitor>);
        manager.start();
        wait_until(&manager, "asker ready", |m| state(m, "asker") == ServerState::Ready).await;
        let started = std::time::Instant::now();
        let result = call(&executor(&manager), &setup.ctx(), "mcp__asker__ask", json!({})).await;
        assert_eq!(result, expected);
        assert!(started.elapsed() < Duration::from_secs(4), "answered before the tool timeout: {:?}", started.elapsed());
        let asked = user.1.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!((asked[0].server.as_str(), asked[0].message.as_str()), ("asker", "What is your name?"));
        assert_eq!((asked[0].fields[0].label.as_str(), &asked[0].fields[0].kind, asked[0].fields[0].required), ("Your name", &FieldKind::Text, true));
        manager.shutdown().await;
    }
}

/// Without anyone to answer (no elicitor: no terminal, say), the
/// capability is not declared, and a question is declined at once.
#[tokio::test]
async fn without_an_elicitor_a_servers_question_is_declined_at_once() {
    let setup = Setup::new();
    setup.user_servers(json!({"asker": stdio(&[])}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "asker ready", |m| state(m, "asker") == ServerState::Ready).await;
    // A server that asks all the same is declined at once: nobody is waited for.
    let (is_error, text) = call(&executor(&manager), &setup.ctx(), "mcp__asker__ask", json!({})).await;
    assert_eq!((is_error, text.as_str()), (true, "the user did not answer (decline)"));
    manager.shutdown().await;
}

/// A server's instructions reach the system prompt under its name; one
/// over the bound is cut there, and the cut is said.
#[tokio::test]
async fn server_instructions_are_in_the_system_prompt_bounded_with_a_notice() {
    let setup = Setup::new();
    setup.user_servers(json!({
        "guide": stdio(&["--instructions", "Call add for sums, never echo."]),
        "chatty": stdio(&["--instructions", "0123456789", "--instructions-repeat", "500"]),
        "quiet": stdio(&[])
    }));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "all ready", |m| m.statuses().iter().all(|s| s.state == ServerState::Ready)).await;
    let mock = MockModel::start(vec![turns::text("ok")]).await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(&manager), setup.ctx(), request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let system = mock.requests()[0].body["system"].to_string();
    assert!(system.contains("# Instructions from the MCP server guide"), "{system}");
    assert!(system.contains("Call add for sums, never echo."), "{system}");
    assert!(system.contains("# Instructions from the MCP server chatty"), "{system}");
    assert!(system.contains("[The instructions of chatty are cut here: they are 5000 characters; the first 4000 are shown.]"), "{system}");
    assert!(!system.contains(&"0123456789".repeat(401)), "cut at 4000 characters");
    assert!(!system.contains("MCP server quiet"), "{system}");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_deferred_mcp_tool_called_before_tool_search_gets_the_error() {
    let setup = Setup::new();
    setup.user_servers(json!({"calc": stdio(&[])}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "calc ready", |m| state(m, "calc") == ServerState::Ready).await;
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_1", "mcp__calc__add", json!({"a": 1, "b": 1}))]),
        turns::text("ok"),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(&manager), setup.ctx(), request("add")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let results = last_results(&mock.requests()[1].body);
    assert!(results[0].1);
    assert!(results[0].2.contains("Call tool_search with query \"select:mcp__calc__add\" first"), "{results:?}");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_is_an_error_result_the_run_goes_on_and_the_next_call_restarts_the_server() {
    let setup = Setup::new();
    setup.user_servers(json!({"calc": stdio(&[])}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "calc ready", |m| state(m, "calc") == ServerState::Ready).await;
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_s", "tool_search", json!({"query": "select:mcp__calc__pid,mcp__calc__crash"}))]),
        turns::tools("", &[("toolu_p1", "mcp__calc__pid", json!({}))]),
        turns::tools("", &[("toolu_c", "mcp__calc__crash", json!({}))]),
        turns::tools("", &[("toolu_p2", "mcp__calc__pid", json!({}))]),
        turns::text("The server came back."),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(&manager), setup.ctx(), request("crash it")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    let first_pid = last_results(&requests[2].body)[0].clone();
    let crash = last_results(&requests[3].body)[0].clone();
    let second_pid = last_results(&requests[4].body)[0].clone();
    assert!(!first_pid.1 && !second_pid.1, "{first_pid:?} {second_pid:?}");
    assert!(crash.1, "{crash:?}");
    assert!(crash.2.starts_with("Error: the MCP server calc stopped during the call"), "{crash:?}");
    assert!(crash.2.ends_with("It is restarted on the next call to one of its tools."), "{crash:?}");
    assert_ne!(first_pid.2, second_pid.2, "a new server process answered");
    assert_eq!(state(&manager, "calc"), ServerState::Ready);
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_does_not_delay_the_others_and_times_out() {
    let setup = Setup::new();
    let marker = setup.root.join("hang.pid");
    let marker_arg = marker.display().to_string();
    setup.user_servers(json!({"hang": stdio(&["--hang", "--marker", &marker_arg]), "calc": stdio(&[])}));

    // A long start-up timeout: calc is ready and usable while hang still
    // starts (a call to calc's tool waits for nobody).
    let manager = setup.manager(setup.config());
    wait_until(&manager, "calc ready", |m| state(m, "calc") == ServerState::Ready).await;
    assert_eq!(state(&manager, "hang"), ServerState::Starting);
    let (is_error, sum) = call(&executor(&manager), &setup.ctx(), "mcp__calc__add", json!({"a": 40, "b": 2})).await;
    assert!(!is_error && sum == "42", "{sum}");
    assert_eq!(state(&manager, "hang"), ServerState::Starting, "still waiting for initialize");
    // Shutting down stops a server that is still starting, process and all.
    let pid = wait_for_marker(&marker).await;
    manager.shutdown().await;
    wait_dead(pid).await;

    // A short one: a run waits for the silent server as long as that
    // before its first turn, then goes on without it; the server fails
    // with the reason, and its process is gone.
    let marker = setup.root.join("hang2.pid");
    let marker_arg = marker.display().to_string();
    setup.user_servers(json!({"hang": stdio(&["--hang", "--marker", &marker_arg])}));
    let mut config = setup.config();
    config.startup_timeout = Duration::from_millis(700);
    let manager = setup.manager(config);
    let mock = MockModel::start(vec![turns::text("No such server.")]).await;
    let (outcome, events) = run_agent(&anthropic(&mock), &executor(&manager), setup.ctx(), request("add")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(events.contains(&RunEvent::Waiting { what: "MCP server hang".into() }), "{events:?}");
    assert_eq!(
        state(&manager, "hang"),
        ServerState::Failed { reason: "did not answer initialize and tools/list within 700 ms (the start-up timeout)".into() }
    );
    assert!(manager.statuses()[0].tools.is_empty());
    // On a slow machine the timeout may beat python to writing its pid;
    // when it got that far, the process must be gone.
    if let Ok(pid) = std::fs::read_to_string(&marker) {
        wait_dead(pid.trim().parse().unwrap()).await;
    }
}

/// A server that takes 2 s to answer initialize, as an `npx` one does.
fn slow_to_start() -> Value {
    stdio(&["--start-delay", "2"])
}

#[tokio::test]
async fn a_call_to_a_tool_of_a_server_still_starting_waits_for_it_instead_of_unknown_tool() {
    let setup = Setup::new();
    setup.user_servers(json!({"slow": slow_to_start()}));
    let manager = setup.manager(setup.config());
    assert_eq!(state(&manager, "slow"), ServerState::Starting);
    let executor = executor(&manager);
    let ctx = setup.ctx();
    let (is_error, sum) = call(&executor, &ctx, "mcp__slow__add", json!({"a": 40, "b": 2})).await;
    assert!(!is_error && sum == "42", "{sum}");
    // A name no starting server could bring is unknown at once.
    let (is_error, unknown) = call(&executor, &ctx, "mcp__other__add", json!({})).await;
    assert!(is_error && unknown.starts_with("Unknown tool: mcp__other__add."), "{unknown}");
    manager.shutdown().await;
}

/// `tandem ask --json PROMPT` in the setup's project, with the setup's
/// home (its `~/.tandem/mcp.json`) and the scripted model playing `turns`:
/// the events, and stderr.
async fn ask_with_servers(setup: &Setup, turns: Value) -> (Vec<Value>, String) {
    let (stdout, stderr) = ask_in_terminal(setup, turns, &["--json"]).await;
    // The run's first event, `provider` (which model), is not these tests' business.
    (stdout.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|e| e["type"] != "provider").collect(), stderr)
}

/// `tandem ask ARGS PROMPT` as [`ask_with_servers`] runs it: stdout and stderr.
async fn ask_in_terminal(setup: &Setup, turns: Value, args: &[&str]) -> (String, String) {
    let script = setup.home.join("script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(&setup.root).stdin(std::process::Stdio::null()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command
        .env("HOME", &setup.home)
        .env("XDG_DATA_HOME", setup.home.join("data"))
        .env("XDG_CONFIG_HOME", setup.home.join("config"))
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script)
        .arg("ask")
        .args(args)
        .args(["--permission-mode", "bypassPermissions", "use the server"]);
    let output = tokio::time::timeout(START_LIMIT, command.output()).await.unwrap().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// The content of the result of call `id`.
fn result_of<'a>(events: &'a [Value], id: &str) -> (bool, &'a str) {
    let result = events.iter().find(|e| e["type"] == "tool_result" && e["id"] == id).unwrap_or_else(|| panic!("no result {id}: {events:#?}"));
    (result["is_error"].as_bool().unwrap(), result["content"].as_str().unwrap())
}

#[tokio::test]
async fn tandem_ask_waits_for_a_server_that_takes_two_seconds_and_its_first_turn_finds_the_tools() {
    let setup = Setup::new();
    setup.user_servers(json!({"slow": slow_to_start()}));
    let (events, _) = ask_with_servers(
        &setup,
        json!([
            {"tool_calls": [{"id": "toolu_s", "name": "tool_search", "input": {"query": "select:mcp__slow__add"}}]},
            {"tool_calls": [{"id": "toolu_a", "name": "mcp__slow__add", "input": {"a": 40, "b": 2}}]},
            {"text": "42"}
        ]),
    )
    .await;
    assert_eq!(events[0], json!({"type": "waiting", "what": "MCP server slow"}), "the first event: {events:#?}");
    let (is_error, found) = result_of(&events, "toolu_s");
    assert!(!is_error && found.contains("\"name\": \"mcp__slow__add\""), "{found}");
    assert_eq!(result_of(&events, "toolu_a"), (false, "42"));

    // The terminal says what it waits for.
    let (transcript, stderr) = ask_in_terminal(&setup, json!([{"text": "Ready."}]), &[]).await;
    assert!(format!("{transcript}{stderr}").contains("waiting for MCP server slow…"), "{transcript}\n{stderr}");
}

#[tokio::test]
async fn tandem_ask_reports_a_server_that_fails_to_start_and_the_run_goes_on_without_it() {
    let setup = Setup::new();
    // A server that exits at once (a short start-up timeout would fail a
    // slow python start of calc on a busy machine too).
    let broken = json!({"command": "python3", "args": ["-c", "import sys; sys.exit(3)"]});
    setup.user_servers(json!({"broken": broken, "calc": stdio(&[])}));
    let (events, stderr) = ask_with_servers(
        &setup,
        json!([
            {"tool_calls": [{"id": "toolu_s", "name": "tool_search", "input": {"query": "add"}}]},
            {"tool_calls": [{"id": "toolu_a", "name": "mcp__calc__add", "input": {"a": 1, "b": 1}}]},
            {"text": "2"}
        ]),
    )
    .await;
    assert!(stderr.contains("tandem: MCP server broken failed: initialize failed"), "{stderr}");
    let (is_error, found) = result_of(&events, "toolu_s");
    assert!(!is_error && found.contains("mcp__calc__add") && !found.contains("mcp__broken__"), "{found}");
    assert_eq!(result_of(&events, "toolu_a"), (false, "2"));
    assert_eq!(events.last().unwrap()["status"], "completed");
}

/// Wait (bounded) for a test server's pid file.
async fn wait_for_marker(path: &Path) -> i32 {
    let deadline = tokio::time::Instant::now() + START_LIMIT;
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()) {
            return pid;
        }
        assert!(tokio::time::Instant::now() < deadline, "the server never wrote {}", path.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Wait (bounded) until a process is gone.
async fn wait_dead(pid: i32) {
    let deadline = tokio::time::Instant::now() + START_LIMIT;
    while common::process_alive(pid) {
        assert!(tokio::time::Instant::now() < deadline, "process {pid} is still alive");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_call_past_the_tool_timeout_is_cancelled_with_notifications_cancelled() {
    let setup = Setup::new();
    setup.user_servers(json!({"calc": stdio(&[])}));
    let mut config = setup.config();
    config.tool_timeout = Duration::from_millis(300);
    let manager = setup.manager(config);
    wait_until(&manager, "calc ready", |m| state(m, "calc") == ServerState::Ready).await;
    let executor = executor(&manager);
    let ctx = setup.ctx();
    let (is_error, text) = call(&executor, &ctx, "mcp__calc__slow", json!({"seconds": 30})).await;
    assert!(is_error);
    assert_eq!(text, "Error: the MCP tool slow (server calc) did not answer within 300 ms; the call was cancelled.");
    // The server was told (the notification may trail the timeout a little).
    let deadline = tokio::time::Instant::now() + START_LIMIT;
    loop {
        let (is_error, cancelled) = call(&executor, &ctx, "mcp__calc__cancelled", json!({})).await;
        assert!(!is_error, "{cancelled}");
        let ids: Vec<Value> = serde_json::from_str(&cancelled).unwrap();
        if !ids.is_empty() {
            assert_eq!(ids.len(), 1, "{ids:?}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no notifications/cancelled reached the server");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    manager.shutdown().await;
}

#[tokio::test]
async fn list_changed_refreshes_the_tools_and_var_expansion_reaches_the_server() {
    let setup = Setup::new();
    setup.user_servers(json!({"calc": stdio(&["--greeting", "${MCP_TEST_GREETING}"]), "other": stdio(&["--greeting", "${MCP_TEST_UNSET:-fallback}"])}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "both ready", |m| state(m, "calc") == ServerState::Ready && state(m, "other") == ServerState::Ready).await;
    let executor = executor(&manager);
    let ctx = setup.ctx();
    assert_eq!(call(&executor, &ctx, "mcp__calc__echo", json!({"text": "hi"})).await, (false, "hello-from-env: hi".to_string()));
    assert_eq!(call(&executor, &ctx, "mcp__other__echo", json!({"text": "hi"})).await, (false, "fallback: hi".to_string()));

    assert!(executor.registry().get("mcp__calc__late").is_none());
    assert_eq!(call(&executor, &ctx, "mcp__calc__grow", json!({})).await, (false, "grown".to_string()));
    wait_until(&manager, "the new tool", |m| m.statuses().iter().any(|s| s.tools.iter().any(|t| t == "mcp__calc__late"))).await;
    assert_eq!(call(&executor, &ctx, "mcp__calc__late", json!({})).await, (false, "late tool ran".to_string()));
    manager.shutdown().await;
}

/// The HTTP test server: started on a free loopback port, killed on drop.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start() -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new("python3")
            .arg(server_script())
            .arg("--http")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port: u16 = line.trim().parse().unwrap();
        HttpServer { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn streamable_http_server_on_loopback() {
    let http = HttpServer::start();
    let setup = Setup::new();
    setup.user_servers(json!({"web": {"type": "http", "url": http.url, "headers": {"X-Greeting": "${MCP_TEST_GREETING}"}}}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "web ready", |m| state(m, "web") != ServerState::Starting).await;
    assert_eq!(state(&manager, "web"), ServerState::Ready);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_1", "tool_search", json!({"query": "add two numbers"}))]),
        turns::tools("", &[("toolu_2", "mcp__web__add", json!({"a": 20, "b": 22}))]),
        turns::text("42"),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(&manager), setup.ctx(), request("add")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    assert!(tool_names(&requests[1].body).contains(&"mcp__web__add".to_string()));
    assert_eq!(last_results(&requests[2].body), [("toolu_2".to_string(), false, "42".to_string())]);
    let ctx = setup.ctx();
    // The configured header (with its variable expanded) reached the server.
    let echoed = call(&executor(&manager), &ctx, "mcp__web__echo", json!({"text": "hi"})).await;
    assert_eq!(echoed, (false, "hello-from-env: hi".to_string()));
    manager.shutdown().await;
}

/// `message` of a `window/logMessage` or `window/showMessage`, if it is one.
fn log_text(message: &Value) -> &str {
    match message["method"].as_str() {
        Some("window/logMessage") | Some("window/showMessage") => message["params"]["message"].as_str().unwrap_or(""),
        _ => "",
    }
}

#[test]
fn in_the_editor_project_servers_are_approved_by_prompt_and_non_read_only_tools_are_asked_about() {
    let setup = Setup::new();
    let marker = setup.root.join("proj.pid");
    setup.user_servers(json!({"calc": stdio(&[])}));
    std::fs::write(
        setup.root.join(".mcp.json"),
        json!({"mcpServers": {"proj": stdio(&["--marker", &marker.display().to_string()])}}).to_string(),
    )
    .unwrap();
    let script = setup.root.join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"tool_calls": [{"name": "tool_search", "input": {"query": "select:mcp__calc__add,mcp__calc__echo"}}]},
            {"tool_calls": [{"name": "mcp__calc__add", "input": {"a": 1, "b": 2}}]},
            {"tool_calls": [{"name": "mcp__calc__echo", "input": {"text": "hi"}}]},
            {"text": "Done."}
        ]})
        .to_string(),
    )
    .unwrap();
    let data = setup.home.join("data");
    let mut client = lsp_client::LspClient::start_trusted(
        &setup.root,
        &[
            ("TANDEM_PROVIDER", "scripted"),
            ("TANDEM_SCRIPT", &script.display().to_string()),
            ("HOME", &setup.home.display().to_string()),
            ("XDG_DATA_HOME", &data.display().to_string()),
        ],
    );
    let response = client.initialize(json!({}), json!({"tandem": {"timeouts": {"promptMs": 30000}}}));
    assert!(response.get("result").is_some(), "{response}");

    // The project's server waits for the user; it has not started.
    let approval = client.server_request("window/showMessageRequest");
    let text = approval["params"]["message"].as_str().unwrap();
    assert!(text.starts_with("Tandem: the project's MCP server \"proj\" (.mcp.json) wants to run: python3 "), "{text}");
    assert!(!marker.exists());
    let status = client.request("workspace/executeCommand", json!({"command": "tandem.mcpStatus", "arguments": []}));
    let proj = status["result"]["servers"].as_array().unwrap().iter().find(|s| s["name"] == "proj").unwrap().clone();
    assert_eq!((proj["state"].as_str(), proj["source"].as_str()), (Some("needs_approval"), Some(".mcp.json")), "{status}");
    client.respond(&approval["id"], json!({"title": "Allow"}));
    client.wait_for("proj ready", |m| log_text(m).contains("MCP server proj is ready"));
    client.wait_for("calc ready", |m| log_text(m).contains("MCP server calc is ready"));
    assert!(marker.exists());
    let status = client.request("workspace/executeCommand", json!({"command": "tandem.mcpStatus", "arguments": []}));
    let calc = status["result"]["servers"].as_array().unwrap().iter().find(|s| s["name"] == "calc").unwrap().clone();
    assert_eq!(calc["state"], "ready");
    assert!(calc["tools"].as_array().unwrap().contains(&json!("mcp__calc__echo")), "{calc}");

    // add is read-only (readOnlyHint): no prompt. echo is not: the user is asked.
    let ask = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "echo hi"}]}));
    let prompt = client.server_request("window/showMessageRequest");
    // The prompt names the call, why it is asked, and the rule "Always allow" would add.
    let message = prompt["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("Tandem wants to mcp__calc__echo {\"text\":\"hi\"}\n\nAsked because:"), "{prompt}");
    assert!(message.ends_with("\"Always allow\" adds: mcp__calc__echo"), "{prompt}");
    client.respond(&prompt["id"], json!({"title": "Allow once"}));
    let answer = client.response(ask);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    assert_eq!(results[1..], [(false, "3".to_string()), (false, "echo: hi".to_string())], "{results:?}");
    client.shutdown();

    // The approval is remembered for this workspace: `tandem mcp list` starts it without asking.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["mcp", "list", "--json", "--trust"])
        .current_dir(&setup.root)
        .env("HOME", &setup.home)
        .env("XDG_DATA_HOME", &data)
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let proj = listed["servers"].as_array().unwrap().iter().find(|s| s["name"] == "proj").unwrap().clone();
    assert_eq!(proj["state"], "ready", "{listed}");
}

#[test]
fn a_project_server_that_is_not_approved_does_not_start() {
    let setup = Setup::new();
    let marker = setup.root.join("proj.pid");
    let marker_arg = marker.display().to_string();
    std::fs::write(
        setup.root.join(".mcp.json"),
        json!({"mcpServers": {"proj": stdio(&["--marker", &marker_arg, "--greeting", "${MCP_TEST_GREETING:-plain}"])}}).to_string(),
    )
    .unwrap();
    let data = setup.home.join("data");
    let list = |extra: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["mcp", "list"])
            .args(extra)
            .current_dir(&setup.root)
            .env("HOME", &setup.home)
            .env("XDG_DATA_HOME", &data)
            .env("MCP_TEST_GREETING", "from-env")
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    // In a folder not trusted yet, its servers are not even offered.
    let untrusted = list(&[]);
    assert!(untrusted.contains(".mcp.json: mcpServers (proj)") && untrusted.contains("tandem trust"), "{untrusted}");
    assert!(!untrusted.contains("approve with"), "{untrusted}");
    // A folder's server gets none of the user's variables: its default,
    // not MCP_TEST_GREETING (issue 49).
    let first = list(&["--trust"]);
    let first = first.replace(&server_script(), "SCRIPT").replace(&marker_arg, "MARKER");
    expect_test::expect![[r#"
        proj  [.mcp.json]  python3 SCRIPT --marker MARKER --greeting plain
          needs approval
          approve with: tandem ask --mcp-approve proj …  (or in the editor's prompt)
    "#]]
    .assert_eq(&first);
    // `list` waited for every server to settle: the unapproved one never ran.
    assert!(!marker.exists());

    let approved = list(&["--trust", "--mcp-approve", "all"]);
    assert!(approved.contains("  ready\n") && approved.contains("  - mcp__proj__echo\n"), "{approved}");
    assert!(marker.exists());
    // Remembered for this workspace.
    assert!(list(&["--trust"]).contains("  ready\n"));
    // A changed entry needs a new approval.
    std::fs::write(setup.root.join(".mcp.json"), json!({"mcpServers": {"proj": stdio(&["--greeting", "changed"])}}).to_string()).unwrap();
    assert!(list(&["--trust"]).contains("  needs approval\n"));
}

/// `@modelcontextprotocol/server-everything`, installed by `.ci/run`.
fn reference_server() -> Option<PathBuf> {
    let path = crate::common::tools::ci_tools().join("mcp-reference/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("TANDEM_REQUIRE_MCP_REFERENCE").is_none(),
        "the reference MCP server is not installed at {} (.ci/run installs it)",
        path.display()
    );
    eprintln!("skipped: the reference MCP server is not installed (run .ci/run)");
    None
}

#[tokio::test]
async fn interoperates_with_the_reference_server_everything() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::new();
    setup.user_servers(json!({"everything": {"command": "node", "args": [server.display().to_string(), "stdio"]}}));
    let manager = setup.manager(setup.config());
    wait_until(&manager, "everything settled", |m| state(m, "everything") != ServerState::Starting).await;
    assert_eq!(state(&manager, "everything"), ServerState::Ready);
    let tools = manager.statuses()[0].tools.clone();
    for name in ["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"] {
        assert!(tools.iter().any(|t| t == name), "{name} missing from {tools:?}");
    }
    let executor = executor(&manager);
    let ctx = setup.ctx();
    let (is_error, echoed) = call(&executor, &ctx, "mcp__everything__echo", json!({"message": "interop"})).await;
    assert!(!is_error && echoed.contains("interop"), "{echoed}");
    let (is_error, sum) = call(&executor, &ctx, "mcp__everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert!(!is_error && sum.contains('5'), "{sum}");
    // Its image is passed through for the model to see, named in the text.
    ctx.run.activate("mcp__everything__get-tiny-image");
    let image = executor.execute(&ToolCall::new("c", "mcp__everything__get-tiny-image", json!({})), &ctx).await.unwrap();
    assert!(!image.is_error && image.content.contains("[image 1 image/png: attached]"), "{}", image.content);
    assert_eq!(image.images.len(), 1);
    assert_eq!(image.images[0].media_type, "image/png");
    // A schema the server wrote passes through unchanged.
    let echo = executor.registry().get("mcp__everything__echo").unwrap().definition();
    assert!(echo.input_schema["properties"]["message"].is_object(), "{}", echo.input_schema);
    manager.shutdown().await;
}

/// The reference server in a one-shot `tandem ask`: its tools are there
/// on the first turn (the run waited for it to start).
#[tokio::test]
async fn tandem_ask_uses_the_reference_server_from_its_first_turn() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::new();
    setup.user_servers(json!({"everything": {"command": "node", "args": [server.display().to_string(), "stdio"]}}));
    let (events, stderr) = ask_with_servers(
        &setup,
        json!([
            {"tool_calls": [{"id": "toolu_s", "name": "tool_search", "input": {"query": "select:mcp__everything__echo"}}]},
            {"tool_calls": [{"id": "toolu_e", "name": "mcp__everything__echo", "input": {"message": "first turn"}}]},
            {"text": "Echoed."}
        ]),
    )
    .await;
    let (is_error, found) = result_of(&events, "toolu_s");
    assert!(!is_error && found.contains("\"name\": \"mcp__everything__echo\""), "{found}\n{stderr}");
    let (is_error, echoed) = result_of(&events, "toolu_e");
    assert!(!is_error && echoed.contains("first turn"), "{echoed}");
}

/// A server that starts a program with `setsid` (out of its process group
/// and session, as a daemon does) before it serves: the program is gone
/// once `tandem ask` has exited, not left running for good.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn what_a_server_starts_with_setsid_is_gone_after_tandem_ask_exits() {
    let setup = Setup::new();
    let pid_file = setup.home.join("detached.pid");
    let sleep = crate::common::sleeper(4401);
    let start = format!(
        "setsid sh -c 'echo $$ > {}; exec {sleep}' </dev/null >/dev/null 2>&1 & exec python3 {}",
        pid_file.display(),
        server_script()
    );
    setup.user_servers(json!({"calc": {"command": "sh", "args": ["-c", start]}}));
    let (events, _) = ask_with_servers(
        &setup,
        json!([
            {"tool_calls": [{"id": "toolu_s", "name": "tool_search", "input": {"query": "select:mcp__calc__add"}}]},
            {"tool_calls": [{"id": "toolu_a", "name": "mcp__calc__add", "input": {"a": 1, "b": 2}}]},
            {"text": "3"}
        ]),
    )
    .await;
    assert_eq!(result_of(&events, "toolu_a"), (false, "3"));
    // It ran while the server did.
    let detached = wait_for_marker(&pid_file).await;
    wait_dead(detached).await;
    assert!(crate::common::processes_running(&sleep).is_empty(), "`{sleep}` outlived tandem ask");
}

/// `tandem lsp` killed outright (SIGKILL: no shutdown, no cleanup of its
/// own) while its server runs something that does not end at the end of
/// its input (the server's command goes on to sleep once the server
/// exits): that and what the server detached with `setsid` are gone all
/// the same.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_killed_tandem_lsp_leaves_no_server_nor_what_it_detached() {
    let setup = Setup::new();
    let pid_file = setup.home.join("detached.pid");
    let server_pid = setup.home.join("server.pid");
    let (sleep, after) = (crate::common::sleeper(4402), crate::common::sleeper(4403));
    let start = format!(
        "setsid sh -c 'echo $$ > {}; exec {sleep}' </dev/null >/dev/null 2>&1 & python3 {} --marker {}; exec {after}",
        pid_file.display(),
        server_script(),
        server_pid.display()
    );
    setup.user_servers(json!({"calc": {"command": "sh", "args": ["-c", start]}}));
    let data = setup.home.join("data");
    let script = setup.home.join("script.json");
    std::fs::write(&script, json!({"turns": [{"text": "Done."}]}).to_string()).unwrap();
    let mut client = lsp_client::LspClient::start_trusted(
        &setup.root,
        &[
            ("TANDEM_PROVIDER", "scripted"),
            ("TANDEM_SCRIPT", &script.display().to_string()),
            ("HOME", &setup.home.display().to_string()),
            ("XDG_DATA_HOME", &data.display().to_string()),
        ],
    );
    let response = client.initialize(json!({}), json!({}));
    assert!(response.get("result").is_some(), "{response}");
    client.wait_for("calc ready", |m| log_text(m).contains("MCP server calc is ready"));
    let (detached, server) = (wait_for_marker(&pid_file).await, wait_for_marker(&server_pid).await);
    assert!(common::process_alive(detached) && common::process_alive(server));
    // Dropping the client kills `tandem lsp` with SIGKILL.
    drop(client);
    wait_dead(server).await;
    wait_dead(detached).await;
    common::wait_until("what the server's command runs after it is gone", || common::processes_running(&after).is_empty());
    assert!(crate::common::processes_running(&sleep).is_empty(), "`{sleep}` outlived tandem lsp");
}
