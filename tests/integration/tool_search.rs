//! Deferred tools and `tool_search` against the loopback model, shown by
//! the next request the agent sends.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;

use common::turns::{self, last_results, tool_names};
use common::mock_model::MockModel;
use common::{request, run_agent};
use serde_json::{json, Value};
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::RunStatus;
use tandem::tools::{Executor, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;

fn anthropic(mock: &MockModel) -> AnthropicProvider {
    AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap()
}

fn run_ctx(dir: &tempfile::TempDir) -> ToolContext {
    ToolContext::new(Arc::new(Workspace::new(dir.path()).unwrap()))
}

#[tokio::test]
async fn tool_search_makes_enter_plan_mode_appear_in_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_1", "tool_search", json!({"query": "plan mode"}))]),
        turns::tools("", &[("toolu_2", "enter_plan_mode", json!({}))]),
        turns::text("Planning."),
    ])
    .await;
    let (outcome, _) = run_agent(&anthropic(&mock), &executor, run_ctx(&dir), request("plan it")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = mock.requests();

    let first = tool_names(&requests[0].body);
    assert!(!first.iter().any(|n| n.ends_with("_plan_mode")), "{first:?}");
    let system = requests[0].body["system"][0]["text"].as_str().unwrap();
    assert!(
        system.contains("The following deferred tools are available via tool_search: enter_plan_mode, exit_plan_mode, remember. Use tool_search to fetch their full schemas when needed."),
        "{system}"
    );

    // The search returned the schemas, best first, and activated them.
    let found: Value = serde_json::from_str(&last_results(&requests[1].body)[0].2).unwrap();
    assert_eq!(found[0]["name"], "enter_plan_mode");
    assert!(found[0]["description"].as_str().unwrap().starts_with("Enter plan mode to switch to a read-only planning phase."));
    let second = tool_names(&requests[1].body);
    assert_eq!(second[..first.len()], first[..], "resident tools first, in the same order");
    assert_eq!(second[first.len()..], ["enter_plan_mode", "exit_plan_mode"]);

    // enter_plan_mode ran (it was active), and the list did not change order.
    let entered = &last_results(&requests[2].body)[0];
    assert!(!entered.1 && entered.2.starts_with("Entered plan mode. You are now in read-only mode."), "{entered:?}");
    assert_eq!(tool_names(&requests[2].body), second);
}

#[tokio::test]
async fn a_deferred_tool_called_without_tool_search_gets_the_error_and_activation_is_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
    let mock = MockModel::start(vec![
        turns::tools("", &[("toolu_1", "tool_search", json!({"query": "select:enter_plan_mode"}))]),
        turns::text("done"),
        // A second run on the same executor starts with nothing activated.
        turns::tools("", &[("toolu_2", "enter_plan_mode", json!({}))]),
        turns::text("ok"),
    ])
    .await;
    let (first, _) = run_agent(&anthropic(&mock), &executor, run_ctx(&dir), request("one")).await;
    let (second, _) = run_agent(&anthropic(&mock), &executor, run_ctx(&dir), request("two")).await;
    assert_eq!((first.status, second.status), (RunStatus::Completed, RunStatus::Completed));
    let requests = mock.requests();
    assert!(tool_names(&requests[1].body).contains(&"enter_plan_mode".to_string()));
    assert!(!tool_names(&requests[2].body).contains(&"enter_plan_mode".to_string()), "the second run's list");
    assert_eq!(
        last_results(&requests[3].body),
        [(
            "toolu_2".to_string(),
            true,
            "Error: enter_plan_mode is a deferred tool and its schema is not loaded. Call tool_search with query \"select:enter_plan_mode\" first, then call enter_plan_mode again.".to_string()
        )]
    );
}
