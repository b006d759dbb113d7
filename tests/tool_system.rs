//! The tool system beyond the core tools, against the loopback model:
//! project instructions in the system prompt, skills, sub-agents and plan
//! mode, each shown by what the agent sends in its next request.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::mock_model::MockModel;
use common::{request, run_agent, turns};
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

fn setup(project: &[(&str, &str)], user: &[(&str, &str)]) -> Setup {
    let (root_dir, home_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_all(root_dir.path(), project);
    write_all(home_dir.path(), user);
    let mut workspace = Workspace::new(root_dir.path()).unwrap();
    workspace.set_home(Some(home_dir.path().to_path_buf()));
    let root = workspace.root().to_path_buf();
    Setup { _root: root_dir, _home: home_dir, root, ctx: ToolContext::new(Arc::new(workspace)) }
}

fn system(body: &Value) -> &str {
    body["system"].as_str().unwrap()
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
    let _ = &s.root;
}
