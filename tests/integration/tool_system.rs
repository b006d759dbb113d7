//! The tool system beyond the core tools, against the loopback model:
//! project instructions in the system prompt, skills, sub-agents and plan
//! mode, each shown by what the agent sends in its next request.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::mock_model::MockModel;
use common::turns::{self, last_results, tool_names};
use common::{request, run_agent};
use serde_json::Value;
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::RunStatus;
use tandem::tools::{Executor, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;

fn anthropic(mock: &MockModel) -> AnthropicProvider {
    AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap()
}

fn executor() -> Executor {
    Executor::new(ToolRegistry::builtin()).with_results_dir(None)
}

/// A workspace and a home folder, each holding `(path, text)` files.
struct Setup {
    _root: tempfile::TempDir,
    _home: tempfile::TempDir,
    root: std::path::PathBuf,
    ctx: ToolContext,
}

fn write_all(base: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = base.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The folder's files are trusted (`tandem trust` was run).
fn setup(project: &[(&str, &str)], user: &[(&str, &str)]) -> Setup {
    setup_trusting(project, user, true)
}

/// `trusted`: the user ran `tandem trust` in the folder after writing its
/// files (a store in the home folder); otherwise nothing of it is trusted.
fn setup_trusting(project: &[(&str, &str)], user: &[(&str, &str)], trusted: bool) -> Setup {
    let (root_dir, home_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_all(root_dir.path(), project);
    write_all(home_dir.path(), user);
    let mut workspace = Workspace::new(root_dir.path()).unwrap();
    workspace.set_home(Some(home_dir.path().to_path_buf()));
    let store = tandem::trust::TrustStore::at(home_dir.path().join("data/trust.json"));
    if trusted {
        store.trust(workspace.root()).unwrap();
    }
    workspace.set_trust(tandem::trust::TrustSource::At(store.path().to_path_buf()));
    let root = workspace.root().to_path_buf();
    Setup { _root: root_dir, _home: home_dir, root, ctx: ToolContext::new(Arc::new(workspace)) }
}

fn system(body: &Value) -> &str {
    // Anthropic's system prompt is a text block carrying a cache breakpoint.
    body["system"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn agents_md_with_an_include_reaches_the_system_prompt() {
    let s = setup(
        &[("AGENTS.md", "Run the tests with `make check`.\n@docs/conventions.md\n"), ("docs/conventions.md", "Name tests after the behaviour.\n")],
        &[(".tandem/AGENTS.md", "Answer briefly.\n")],
    );
    let mock = MockModel::start(vec![turns::text("ok")]).await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("hi")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let body = &mock.requests()[0].body;
    let prompt = system(body);
    let section = &prompt[prompt.find("# Project instructions").expect(prompt)..];
    expect_test::expect![[r#"
        # Project instructions
        The user and the project maintainers wrote these instructions for agents working here. Follow them; where they conflict with the guidance above, they win.

        ## ~/.tandem/AGENTS.md
        Answer briefly.

        ## AGENTS.md
        Run the tests with `make check`.
        Name tests after the behaviour.
    "#]]
    .assert_eq(section);
}

/// The tool_result blocks of a request's last message, as (content, is_error).
fn results(body: &Value) -> Vec<(String, bool)> {
    last_results(body).into_iter().map(|(_, is_error, content)| (content, is_error)).collect()
}

const REVIEW_SKILL: &str = "---\nname: review\ndescription: Review a change for bugs\nwhen-to-use: after editing code\n---\nReview $ARGUMENTS carefully. Checklists live in ${CLAUDE_SKILL_DIR}/lists.\n";

#[tokio::test]
async fn an_inline_skill_is_listed_and_its_prompt_comes_back() {
    let s = setup(&[(".tandem/skills/review/SKILL.md", REVIEW_SKILL)], &[]);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_1", "skill", serde_json::json!({"skill_name": "review", "args": "src/lib.rs"}))]),
        turns::tools("", &[("toolu_2", "skill", serde_json::json!({"skill_name": "nope"}))]),
        turns::text("done"),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("review my change")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    let prompt = system(&requests[0].body);
    assert!(
        prompt.contains("# Available Skills\n") && prompt.contains("\n- review: Review a change for bugs When to use: after editing code\n"),
        "{prompt}"
    );
    let dir = s.root.join(".tandem/skills/review");
    assert_eq!(
        results(&requests[1].body),
        [(format!("[Skill \"review\" activated]\n\nReview src/lib.rs carefully. Checklists live in {}/lists.\n", dir.display()), false)]
    );
    assert_eq!(results(&requests[2].body), [("Unknown skill: nope".to_string(), true)]);
}

#[tokio::test]
async fn a_forked_skill_runs_as_a_sub_agent_limited_to_its_tools() {
    let skill = "---\ndescription: Summarize the notes\ncontext: fork\nallowed-tools: Read, grep_search\n---\nYou summarize notes. Focus: $ARGUMENTS\n";
    let s = setup(&[(".claude/skills/summarize/SKILL.md", skill), ("notes.txt", "buy milk\n")], &[]);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_p", "skill", serde_json::json!({"skill_name": "summarize", "args": "groceries"}))]),
        // The sub-agent: reads, tries a tool it does not have, answers.
        turns::tools("", &[("toolu_c1", "read_file", serde_json::json!({"file_path": "notes.txt"})), ("toolu_c2", "run_shell", serde_json::json!({"command": "rm notes.txt"}))]),
        turns::text("Groceries: milk."),
        turns::text("The notes say to buy milk."),
    ])
    .await;
    let (outcome, events) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("summarize")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let child = &requests[1].body;
    assert!(system(child).starts_with("You summarize notes. Focus: groceries\n"), "{}", system(child));
    assert_eq!(tool_names(child), ["read_file", "grep_search"]);
    let child_results = results(&requests[2].body);
    assert!(child_results[0].0.contains("buy milk"), "{child_results:?}");
    assert!(child_results[1].1 && child_results[1].0.starts_with("Unknown tool: run_shell"), "{child_results:?}");
    assert!(s.root.join("notes.txt").exists());
    assert_eq!(results(&requests[3].body), [("Groceries: milk.".to_string(), false)]);
    // The child's calls reach the transcript nested under the skill call.
    let nested: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            tandem::agent::RunEvent::Nested { parent, event } => Some(format!("{parent} {}", serde_json::to_value(event).unwrap()["type"].as_str().unwrap())),
            _ => None,
        })
        .collect();
    assert!(nested.contains(&"toolu_p tool_call".to_string()) && nested.contains(&"toolu_p tool_result".to_string()), "{nested:?}");
    // Its tokens count in the run's usage: four requests of 10 input tokens each.
    assert_eq!(outcome.usage.input_tokens, 40);
}

#[tokio::test]
async fn a_custom_agent_gets_only_its_tools_and_is_listed_in_the_agent_tool() {
    let agent = "---\nname: finder\ndescription: Finds code by content\ntools: grep_search\n---\nYou find code. Report file:line for each hit.\n";
    let s = setup(&[(".tandem/agents/finder.md", agent), ("src/a.rs", "fn needle() {}\n")], &[("/.claude/agents/broken.md", "---\nname: [oops\n---\nbody")]);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_p", "agent", serde_json::json!({"description": "find needle", "prompt": "Where is needle defined?", "type": "finder"}))]),
        turns::tools("", &[("toolu_c1", "grep_search", serde_json::json!({"pattern": "fn needle"})), ("toolu_c2", "read_file", serde_json::json!({"file_path": "src/a.rs"}))]),
        turns::text("src/a.rs:1"),
        turns::text("It is in src/a.rs."),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("find needle")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    let agent_tool = requests[0].body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "agent").unwrap().clone();
    assert!(agent_tool["description"].as_str().unwrap().ends_with("\n\nCustom agents (give the name as type):\n- finder: Finds code by content (tools: grep_search)"), "{agent_tool}");
    let child = &requests[1].body;
    assert_eq!(tool_names(child), ["grep_search"]);
    assert!(system(child).starts_with("You find code. Report file:line for each hit.\n"));
    assert_eq!(child["messages"][0]["content"][0]["text"], "Where is needle defined?");
    let child_results = results(&requests[2].body);
    assert!(child_results[0].0.contains("src/a.rs"), "{child_results:?}");
    assert!(child_results[1].1 && child_results[1].0.starts_with("Unknown tool: read_file"), "{child_results:?}");
    assert_eq!(results(&requests[3].body), [("src/a.rs:1".to_string(), false)]);
}

/// A custom agent's `model` field is the model its requests ask for: a
/// family alias becomes that family's model on Anthropic, any other value
/// is passed through; without the field (or with `inherit`) the session's
/// model is asked for.
#[tokio::test]
async fn a_custom_agent_asks_for_its_own_model_and_otherwise_the_sessions() {
    let agent = |name: &str, model: &str| format!("---\nname: {name}\n{model}tools: read_file\n---\nYou are {name}.\n");
    let (fast, pinned, plain, inherit) =
        (agent("fast", "model: haiku\n"), agent("pinned", "model: my-model-2\n"), agent("plain", ""), agent("same", "model: inherit\n"));
    let s = setup(
        &[(".tandem/agents/fast.md", &fast), (".tandem/agents/pinned.md", &pinned), (".tandem/agents/plain.md", &plain), (".tandem/agents/same.md", &inherit)],
        &[],
    );
    let call = |id: &'static str, agent_type: &str| (id, "agent", serde_json::json!({"description": "look", "prompt": "Look.", "type": agent_type}));
    let mock = MockModel::start(vec![
        // Custom agents may edit, so the four calls run one after the other, in order.
        turns::tools("", &[call("toolu_1", "fast"), call("toolu_2", "pinned"), call("toolu_3", "plain"), call("toolu_4", "same")]),
        turns::text("fast done"),
        turns::text("pinned done"),
        turns::text("plain done"),
        turns::text("same done"),
        turns::text("All done."),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("look around")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let asked: Vec<(String, String)> = mock
        .requests()
        .iter()
        .map(|r| (system(&r.body).lines().next().unwrap_or_default().to_string(), r.body["model"].as_str().unwrap().to_string()))
        .collect();
    let children: Vec<(&str, &str)> = asked[1..5].iter().map(|(system, model)| (system.as_str(), model.as_str())).collect();
    assert_eq!(
        children,
        [("You are fast.", "claude-haiku-5-5"), ("You are pinned.", "my-model-2"), ("You are plain.", "claude-test"), ("You are same.", "claude-test")]
    );
    assert_eq!((asked[0].1.as_str(), asked[5].1.as_str()), ("claude-test", "claude-test"));
}

/// The models a run's requests ask for, when it calls the agents `fast`
/// and `mine` one after the other.
async fn asked_models(s: &Setup) -> Vec<String> {
    let call = |id: &'static str, agent_type: &str| (id, "agent", serde_json::json!({"description": "look", "prompt": "Look.", "type": agent_type}));
    let mock = MockModel::start(vec![
        turns::tools("", &[call("toolu_1", "fast"), call("toolu_2", "mine")]),
        turns::text("fast done"),
        turns::text("mine done"),
        turns::text("All done."),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("look around")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    mock.requests().iter().map(|r| r.body["model"].as_str().unwrap().to_string()).collect()
}

/// A project agent's `model` field is a cloned repository choosing what the
/// user pays for: until the folder is trusted its sub-agent runs on the
/// session's model, the trust notice names the field, and the trusted
/// folder's agent gets its model — until its file changes.
#[tokio::test]
async fn an_untrusted_project_agent_runs_on_the_sessions_model_and_the_notice_says_so() {
    let fast = "---\nname: fast\nmodel: opus\ntools: read_file\n---\nYou are fast.\n";
    let mine = "---\nname: mine\nmodel: haiku\ntools: read_file\n---\nYou are mine.\n";
    // The user's own agent (in the home folder) is theirs: its model applies either way.
    let untrusted = setup_trusting(&[(".tandem/agents/fast.md", fast)], &[(".tandem/agents/mine.md", mine)], false);
    assert_eq!(asked_models(&untrusted).await, ["claude-test", "claude-test", "claude-haiku-5-5", "claude-test"]);
    let agents = tandem::tools::builtin::agent::AgentSet::discover(&untrusted.ctx.workspace);
    assert_eq!(agents.get("fast").unwrap().model_untrusted.as_deref(), Some("opus"));
    let trust = tandem::settings::TrustSource::At(untrusted._home.path().join("data/trust.json"));
    let files = tandem::settings::SettingsFiles::with_home(&untrusted.root, None).with_trust(trust);
    let (_, problems) = tandem::settings::load(&files, &[]);
    let notice = tandem::settings::trust_notice(&problems).unwrap();
    assert!(notice.contains("agents/fast.md") && notice.contains("model") && notice.contains("opus"), "{notice}");

    let trusted = setup_trusting(&[(".tandem/agents/fast.md", fast)], &[(".tandem/agents/mine.md", mine)], true);
    assert_eq!(asked_models(&trusted).await, ["claude-test", "claude-opus-5-5", "claude-haiku-5-5", "claude-test"]);
    // The file changes after the trust: its model is left out again.
    std::fs::write(trusted.root.join(".tandem/agents/fast.md"), fast.replace("You are fast.", "You are faster.")).unwrap();
    assert_eq!(asked_models(&trusted).await, ["claude-test", "claude-test", "claude-haiku-5-5", "claude-test"]);
}

/// A sub-agent on another model is priced as that model in the run's cost.
#[tokio::test]
async fn a_sub_agent_on_another_model_is_priced_as_that_model() {
    use tandem::agent::Usage;
    use tandem::thread::pricing::PriceTable;
    let s = setup(&[(".tandem/agents/fast.md", "---\nname: fast\nmodel: haiku\ntools: read_file\n---\nYou are fast.\n")], &[]);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_1", "agent", serde_json::json!({"description": "look", "prompt": "Look.", "type": "fast"}))]),
        turns::text("fast done"),
        turns::text("All done."),
    ])
    .await;
    let provider = AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-sonnet-4-5")).unwrap();
    let (outcome, _) = run_agent(&provider, &executor(), s.ctx.clone(), request("look around")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let models: Vec<String> = mock.requests().iter().map(|r| r.body["model"].as_str().unwrap().to_string()).collect();
    assert_eq!(models, ["claude-sonnet-4-5", "claude-haiku-5-5", "claude-sonnet-4-5"]);
    // Each request of the mock reports 10 input and 5 output tokens.
    let (parent, child) = (Usage::new(20, 10), Usage::new(10, 5));
    let prices = PriceTable::default();
    let expected = prices.cost("claude-sonnet-4-5", &parent).unwrap() + prices.cost("claude-haiku-5-5", &child).unwrap();
    let all_sonnet = prices.cost("claude-sonnet-4-5", &Usage::new(30, 15)).unwrap();
    assert!((expected - all_sonnet).abs() > 1e-9, "the two models' prices differ");
    let cost = outcome.cost_usd.unwrap();
    assert!((cost - expected).abs() < 1e-12, "cost {cost}, expected {expected} (all at the parent's price: {all_sonnet})");
    assert_eq!((outcome.usage.input_tokens, outcome.usage.output_tokens), (30, 15));
}

#[tokio::test]
async fn two_explore_sub_agents_overlap_in_time() {
    use common::mock_model::{MockResponse, Part};
    let s = setup(&[("a.txt", "a\n")], &[]);
    let explore = |id: &'static str, what: &str| (id, "agent", serde_json::json!({"description": what, "prompt": what, "type": "explore"}));
    // Whichever sub-agent asks first gets an answer held until the other
    // one's request has arrived too: only sub-agents running at the same
    // time release it.
    let first_answer = turns::text("first");
    let Part::Bytes(bytes) = first_answer.parts.into_iter().next().unwrap() else { unreachable!() };
    let held = MockResponse::sse_parts(vec![Part::WaitForRequests(3, "first sub-agent"), Part::Bytes(bytes)]);
    let mock = MockModel::start(vec![
        turns::tools("", &[explore("toolu_a", "look at a"), explore("toolu_b", "look at b")]),
        held,
        turns::text("second"),
        turns::text("both done"),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("explore")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert!(mock.log().contains(&"mock: first sub-agent released".to_string()), "{:?}", mock.log());
    let requests = mock.requests();
    for child in &requests[1..3] {
        assert_eq!(tool_names(&child.body), ["read_file", "list_files", "grep_search", "web_fetch"]);
    }
    let mut answers: Vec<String> = results(&requests[3].body).into_iter().map(|(c, _)| c).collect();
    answers.sort();
    assert_eq!(answers, ["first", "second"]);
}

struct RefuseEdits;

#[async_trait::async_trait]
impl tandem::tools::executor::PermissionGate for RefuseEdits {
    async fn decide(&self, request: &tandem::tools::executor::PermissionRequest) -> tandem::tools::executor::PermissionDecision {
        use tandem::tools::executor::PermissionDecision;
        if matches!(request.tool.as_str(), "write_file" | "edit_file") {
            PermissionDecision::Deny("this mode refuses edits".to_string())
        } else {
            PermissionDecision::Allow
        }
    }
}

#[tokio::test]
async fn a_sub_agent_gets_no_more_permission_than_its_parent() {
    let s = setup(&[], &[]);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_p", "agent", serde_json::json!({"description": "write it", "prompt": "Create out.txt", "type": "general"}))]),
        turns::tools("", &[("toolu_c", "write_file", serde_json::json!({"file_path": "out.txt", "content": "x"}))]),
        turns::text("I could not write it."),
        turns::text("The sub-agent was refused."),
    ])
    .await;
    // A mode that refuses edits (and allows the rest): the parent's policy object is the child's.
    let executor = executor().with_gate(Arc::new(RefuseEdits));
    let (outcome, _) = run_agent(&anthropic(&mock), &executor, s.ctx.clone(), request("go")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    assert!(!tool_names(&requests[1].body).contains(&"agent".to_string()), "no nesting");
    let refused = results(&requests[2].body);
    assert!(refused[0].1 && refused[0].0.starts_with("Permission denied for write_file"), "{refused:?}");
    assert!(!s.root.join("out.txt").exists());
}

#[tokio::test]
async fn cancelling_the_parent_cancels_the_sub_agent() {
    use common::mock_model::{MockResponse, Part};
    let s = setup(&[], &[]);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_p", "agent", serde_json::json!({"description": "slow", "prompt": "think", "type": "explore"}))]),
        MockResponse::sse_parts(vec![Part::Hang]),
    ])
    .await;
    let cancel = s.ctx.cancel.clone();
    let log = Arc::clone(&mock.log);
    let provider = anthropic(&mock);
    let executor = executor();
    let run = run_agent(&provider, &executor, s.ctx.clone(), request("go"));
    let canceller = async {
        // Cancel once the sub-agent's request is in flight.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while !log.lock().unwrap().contains(&"mock: request 2".to_string()) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        cancel.cancel();
    };
    let ((outcome, events), ()) = tokio::join!(run, canceller);
    assert_eq!(outcome.status, RunStatus::Cancelled, "{outcome:?}");
    let wait = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !mock.log().contains(&"mock: client closed".to_string()) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
    assert!(wait.await.is_ok(), "the sub-agent's request was not dropped: {:?}", mock.log());
    assert!(events.iter().all(|e| !matches!(e, tandem::agent::RunEvent::Nested { event, .. } if matches!(**event, tandem::agent::RunEvent::End { .. }))));
}

#[tokio::test]
async fn plan_mode_refuses_edits_and_shell_but_allows_the_plan_file() {
    use serde_json::json;
    use tandem::tools::plan_mode::PlanMode;
    let s = setup(&[("src/app.rs", "fn main() {}\n")], &[]);
    // The run's plan file, chosen ahead so the script can name it.
    let plan_file = s.root.join(".tandem/plans/plan-test.md");
    *s.ctx.run.plan.lock().unwrap() = PlanMode { file: Some(plan_file.clone()), ..PlanMode::default() };
    let plan_path = ".tandem/plans/plan-test.md";
    // As if tool_search had loaded it (tests/integration/tool_search.rs shows that part);
    // exit_plan_mode comes with entering plan mode.
    s.ctx.run.activate("enter_plan_mode");
    let mock = MockModel::start(vec![
        turns::tools("", &[("t1", "enter_plan_mode", json!({}))]),
        turns::tools(
            "",
            &[
                ("t2", "read_file", json!({"file_path": "src/app.rs"})),
                ("t3", "write_file", json!({"file_path": "notes.md", "content": "x"})),
                ("t4", "edit_file", json!({"file_path": "src/app.rs", "old_string": "main", "new_string": "start"})),
                ("t5", "run_shell", json!({"command": "touch hacked"})),
                ("t6", "write_file", json!({"file_path": "src/../.tandem/plans/plan-test.md", "content": "1. Rename main.\n"})),
                ("t7", "enter_plan_mode", json!({})),
            ],
        ),
        turns::tools("", &[("t8", "exit_plan_mode", json!({}))]),
        turns::tools("", &[("t9", "exit_plan_mode", json!({})), ("t10", "write_file", json!({"file_path": "notes.md", "content": "x"}))]),
        turns::text("done"),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor(), s.ctx.clone(), request("plan it")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();
    // Deferred: exit_plan_mode is not sent until plan mode is entered.
    let first_tools = tool_names(&requests[0].body);
    assert!(!first_tools.contains(&"exit_plan_mode".to_string()), "{first_tools:?}");
    assert!(tool_names(&requests[1].body).contains(&"exit_plan_mode".to_string()));
    assert!(!system(&requests[0].body).contains("# Plan Mode Active"));
    assert_eq!(
        results(&requests[1].body),
        [(format!("Entered plan mode. You are now in read-only mode.\n\nYour plan file is {plan_path}: it is the only file you can edit. Explore the code, write your plan there (context, steps, verification), then call exit_plan_mode."), false)]
    );
    assert!(system(&requests[1].body).contains("# Plan Mode Active\n") && system(&requests[1].body).contains(&format!("Write the plan to {plan_path}")));
    let in_plan = results(&requests[2].body);
    assert!(!in_plan[0].1, "{in_plan:?}");
    assert_eq!(in_plan[1], ("Blocked in plan mode: write_file".to_string(), true));
    assert_eq!(in_plan[2], ("Blocked in plan mode: edit_file".to_string(), true));
    assert_eq!(in_plan[3], ("Shell commands blocked in plan mode".to_string(), true));
    assert!(!in_plan[4].1 && in_plan[4].0.starts_with("Successfully wrote to"), "{in_plan:?}");
    assert_eq!(in_plan[5], ("Already in plan mode.".to_string(), false));
    // Nobody to ask (no reviewer): the plan comes back and plan mode ends.
    assert_eq!(results(&requests[3].body), [("Exited plan mode. Permission mode restored to: default\n\n## Your Plan:\n1. Rename main.\n".to_string(), false)]);
    assert!(!system(&requests[3].body).contains("# Plan Mode Active"));
    let after = results(&requests[4].body);
    assert_eq!(after[0], ("Not in plan mode.".to_string(), false));
    assert!(!after[1].1, "{after:?}");
    assert!(!s.root.join("hacked").exists());
    assert_eq!(std::fs::read_to_string(s.root.join("src/app.rs")).unwrap(), "fn main() {}\n");
}

fn tandem_cli(dir: &Path, home: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("TANDEM_LOG", "off")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn tandem_tools_marks_deferred_ones_and_skills_and_agents_list_what_was_found_and_skipped() {
    let (root, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_all(root.path(), &[
        (".tandem/skills/review/SKILL.md", REVIEW_SKILL),
        (".claude/skills/broken/SKILL.md", "---\nname: [oops\n---\nbody\n"),
        (".claude/agents/finder.md", "---\ndescription: Finds code\ntools: Grep, Read\n---\nYou find code.\n"),
    ]);
    write_all(home.path(), &[(".tandem/skills/review/SKILL.md", "---\ndescription: the user's review\n---\nmine\n"), (".tandem/agents/explore.md", "---\ndescription: x\n---\nbody\n")]);
    let tools = tandem_cli(root.path(), home.path(), &["tools"]);
    let lines: Vec<&str> = tools.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("web_fetch ")) && lines.iter().any(|l| l.starts_with("agent ")), "{tools}");
    assert!(lines.iter().any(|l| l.starts_with("enter_plan_mode  (deferred: load it with tool_search) Enter plan mode")), "{tools}");
    assert!(lines.iter().any(|l| l.starts_with("exit_plan_mode   (deferred: load it with tool_search) Exit plan mode")), "{tools}");
    let json: Value = serde_json::from_str(&tandem_cli(root.path(), home.path(), &["tools", "--json"])).unwrap();
    let sent: Vec<&str> = json.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!sent.contains(&"enter_plan_mode") && sent.contains(&"skill"), "{sent:?}");

    let skills = tandem_cli(root.path(), home.path(), &["skills"]);
    let root_path = root.path().canonicalize().unwrap();
    let home_path = home.path().to_path_buf();
    let shown = skills.replace(&root_path.display().to_string(), "ROOT").replace(&home_path.display().to_string(), "HOME");
    expect_test::expect![[r#"
        review (project, inline) ROOT/.tandem/skills/review/SKILL.md
            Review a change for bugs
            when to use: after editing code

        Skipped:
          ROOT/.claude/skills/broken/SKILL.md: the front matter is not valid YAML: did not find expected ',' or ']' at line 2 column 1, while parsing a flow sequence at line 1 column 7
          HOME/.tandem/skills/review/SKILL.md: a skill named "review" was found first (the project's win over the user's)
    "#]]
    .assert_eq(&shown);
    let agents = tandem_cli(root.path(), home.path(), &["agents"]);
    let shown = agents.replace(&root_path.display().to_string(), "ROOT").replace(&home_path.display().to_string(), "HOME");
    expect_test::expect![[r#"
        explore (built-in) read-only tools: fast search
        plan (built-in) read-only tools: structured planning
        general (built-in) every tool but agent
        finder (project) ROOT/.claude/agents/finder.md
            Finds code
            tools: grep_search, read_file

        Skipped:
          HOME/.tandem/agents/explore.md: an agent named "explore" exists already (built-in, or found first)
    "#]]
    .assert_eq(&shown);
}
