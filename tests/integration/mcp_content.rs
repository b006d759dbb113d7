//! MCP beyond tools, against the reference server (`server-everything`,
//! installed by `.ci/run`): its resources attached with `@SERVER:URI` and
//! its prompts run as `/SERVER:PROMPT` in `tandem ask`, as the model's
//! request shows them; `tandem mcp list` lists both.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::common::mock_model::MockModel;
use crate::common::turns;

const LIMIT: Duration = Duration::from_secs(90);

pub(crate) fn reference_server() -> Option<PathBuf> {
    let path = crate::common::tools::ci_tools().join("mcp-reference/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.exists() {
        return Some(path);
    }
    assert!(std::env::var_os("TANDEM_REQUIRE_MCP_REFERENCE").is_none(), "the reference MCP server is not installed at {}", path.display());
    eprintln!("skipped: the reference MCP server is not installed (run .ci/run)");
    None
}

struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
}

impl Setup {
    fn with_everything(server: &std::path::Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let root = dir.path().join("project");
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let servers = json!({"mcpServers": {"everything": {"command": "node", "args": [server.display().to_string(), "stdio"]}}});
        std::fs::write(home.join(".tandem/mcp.json"), servers.to_string()).unwrap();
        Setup { _dir: dir, home, root }
    }

    /// `tandem ARGS` against the mock model: (success, stdout, stderr).
    async fn tandem(&self, mock: Option<&MockModel>, args: &[&str]) -> (bool, String, String) {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).stdin(std::process::Stdio::null()).kill_on_drop(true);
        for var in crate::common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        command.env("HOME", &self.home).env("XDG_DATA_HOME", self.home.join("data")).env("XDG_CONFIG_HOME", self.home.join("config"));
        if let Some(mock) = mock {
            command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
        }
        let output = tokio::time::timeout(LIMIT, command.args(args).output()).await.unwrap().unwrap();
        (output.status.success(), String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
    }
}

#[tokio::test]
async fn an_at_mention_of_a_resource_puts_its_text_in_the_request() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let mock = MockModel::start(vec![turns::text("Read it.")]).await;
    let (ok, out, err) = setup.tandem(Some(&mock), &["ask", "Summarize @everything:demo://resource/dynamic/text/7, briefly"]).await;
    assert!(ok, "{out}\n{err}");
    let requests = mock.requests();
    let body = requests[0].body.to_string();
    assert!(body.contains("Resource 7: This is a plaintext resource"), "{body}");
    assert!(body.contains("uri=\\\"demo://resource/dynamic/text/7\\\""), "{body}");
    assert!(body.contains("Summarize @everything:demo://resource/dynamic/text/7, briefly"), "{body}");
}

#[tokio::test]
async fn a_resource_that_cannot_be_read_is_an_error_and_nothing_is_sent() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let mock = MockModel::start(vec![turns::text("never")]).await;
    let (ok, _, err) = setup.tandem(Some(&mock), &["ask", "Read @everything:demo://no/such/thing"]).await;
    assert!(!ok);
    assert!(err.contains("@everything:demo://no/such/thing: the MCP server everything answered:"), "{err}");
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn a_slash_prompt_runs_the_servers_prompt_with_its_arguments() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let mock = MockModel::start(vec![turns::text("Sunny.")]).await;
    let (ok, out, err) = setup.tandem(Some(&mock), &["ask", "/everything:args-prompt Paris state=Texas"]).await;
    assert!(ok, "{out}\n{err}");
    let body = mock.requests()[0].body.to_string();
    assert!(body.contains("What's weather in Paris, Texas?"), "{body}");
    assert!(!body.contains("/everything:args-prompt"), "{body}");
}

#[tokio::test]
async fn a_slash_prompt_missing_a_required_argument_is_an_error_and_nothing_is_sent() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let mock = MockModel::start(vec![turns::text("never")]).await;
    let (ok, _, err) = setup.tandem(Some(&mock), &["ask", "/everything:args-prompt"]).await;
    assert!(!ok);
    assert!(err.contains("/everything:args-prompt: the prompt args-prompt needs: city"), "{err}");
    let (ok, _, err) = setup.tandem(Some(&mock), &["ask", "/everything:no-such-prompt"]).await;
    assert!(!ok);
    assert!(err.contains("the MCP server everything has no prompt named no-such-prompt"), "{err}");
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn mcp_list_shows_the_resources_and_prompts() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let (ok, out, err) = setup.tandem(None, &["mcp", "list"]).await;
    assert!(ok, "{err}");
    assert!(out.contains("  resource @everything:demo://resource/static/document/"), "{out}");
    assert!(out.contains("  prompt /everything:args-prompt city [state]"), "{out}");
    assert!(out.contains("  prompt /everything:simple-prompt"), "{out}");
}

/// The workspace root reaches the server as its root (`roots/list`), and
/// a result's resource links are kept whole.
#[tokio::test]
async fn the_server_sees_the_workspace_root_and_resource_links_are_kept() {
    use std::sync::Arc;
    use tandem::consent::Approvals;
    use tandem::mcp::config::McpConfig;
    use tandem::mcp::McpManager;
    use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let root = setup.root.canonicalize().unwrap();
    let config = McpConfig::load_with(Some(&setup.home), &root, &|_| None);
    let manager = McpManager::new(config, &root, Approvals { store: None, command_line: vec![] });
    manager.start();
    assert!(manager.wait_settled(LIMIT).await);
    let mut registry = ToolRegistry::builtin();
    registry.add_source(Arc::clone(&manager) as Arc<dyn tandem::tools::ToolSource>);
    let executor = Executor::new(registry).with_results_dir(None);
    let ctx = ToolContext::new(Arc::new(tandem::workspace::Workspace::new(&root).unwrap()));
    let call = async |name: &str, input: serde_json::Value| {
        ctx.run.activate(name);
        let result = executor.execute(&ToolCall::new("c", name, input), &ctx).await.unwrap();
        assert!(!result.is_error, "{name}: {}", result.content);
        result.content
    };
    // The server asks for the roots when it starts; its tool tells what it got.
    let mut roots = String::new();
    for _ in 0..50 {
        roots = call("mcp__everything__get-roots-list", json!({})).await;
        if roots.contains("file://") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let uri = url::Url::from_directory_path(&root).unwrap().to_string();
    assert!(roots.contains(uri.trim_end_matches('/')), "{roots}");
    let links = call("mcp__everything__get-resource-links", json!({"count": 2})).await;
    assert!(links.contains("[resource link demo://resource/"), "{links}");
    assert!(links.contains("(Text Resource 2; text/plain; Resource 2: plaintext resource)]"), "{links}");
    manager.shutdown().await;
}

/// The model lists and reads the servers' resources with `mcp_resource`,
/// a read-only tool (as an MCP tool marked `readOnlyHint` is); an unknown
/// server or resource is an error the model reads.
#[tokio::test]
async fn the_model_lists_and_reads_resources_with_a_read_only_tool() {
    use std::sync::Arc;
    use tandem::consent::Approvals;
    use tandem::mcp::config::McpConfig;
    use tandem::mcp::McpManager;
    use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry, ToolSource};
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let root = setup.root.canonicalize().unwrap();
    let config = McpConfig::load_with(Some(&setup.home), &root, &|_| None);
    let manager = McpManager::new(config, &root, Approvals { store: None, command_line: vec![] });
    manager.start();
    assert!(manager.wait_settled(LIMIT).await);
    let ctx = ToolContext::new(Arc::new(tandem::workspace::Workspace::new(&root).unwrap()));
    let tool = manager.tools().into_iter().find(|t| t.name() == "mcp_resource").expect("offered while a server has resources");
    assert!(tool.deferred());
    let prepared = Arc::clone(&tool).prepare(&json!({"server": "everything", "uri": "demo://x"}), &ctx).unwrap();
    assert!(prepared.traits.read_only && prepared.traits.concurrency_safe);
    assert!(tool.prepare(&json!({"uri": "demo://x"}), &ctx).unwrap_err().contains("needs `server` too"));
    let mut registry = ToolRegistry::builtin();
    registry.add_source(Arc::clone(&manager) as Arc<dyn ToolSource>);
    let executor = Executor::new(registry).with_results_dir(None);
    let call = async |input: serde_json::Value| {
        ctx.run.activate("mcp_resource");
        let result = executor.execute(&ToolCall::new("c", "mcp_resource", input), &ctx).await.unwrap();
        (result.is_error, result.content)
    };
    let (error, listed) = call(json!({})).await;
    assert!(!error, "{listed}");
    assert!(listed.contains("everything demo://resource/static/document/features.md features.md"), "{listed}");
    let (error, text) = call(json!({"server": "everything", "uri": "demo://resource/static/document/features.md"})).await;
    assert!(!error, "{text}");
    assert!(text.contains("Static Documents"), "{text}");
    let (error, text) = call(json!({"server": "nowhere"})).await;
    assert!(error && text.contains("no MCP server named nowhere has resources; these do: everything"), "{text}");
    let (error, text) = call(json!({"server": "everything", "uri": "demo://no/such/thing"})).await;
    assert!(error && text.contains("the MCP server everything answered:"), "{text}");
    manager.shutdown().await;
}

/// `tandem.ask` (the VS Code panel, Neovim chat) against `server-everything`
/// through `tandem lsp`, the model being the mock: the answer to each ask
/// and the model's requests.
async fn lsp_asks(setup: &Setup, mock: &MockModel, prompts: &[&str]) -> Vec<serde_json::Value> {
    use crate::common::lsp_client::{ask_params, LspClient};
    let (home, root, url) = (setup.home.display().to_string(), setup.root.clone(), mock.url.clone());
    let prompts: Vec<String> = prompts.iter().map(|p| p.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let config = format!("{home}/config");
        let data = format!("{home}/data");
        let env = [
            ("HOME", home.as_str()),
            ("XDG_CONFIG_HOME", config.as_str()),
            ("XDG_DATA_HOME", data.as_str()),
            ("TANDEM_PROVIDER", "anthropic"),
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "test-key"),
        ];
        let mut client = LspClient::start(&root, &env);
        let init = client.initialize(json!({}), json!({}));
        assert!(init.get("result").is_some(), "{init}");
        let answers = prompts.iter().map(|prompt| client.request("workspace/executeCommand", ask_params(prompt))).collect();
        client.shutdown();
        answers
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn tandem_ask_in_the_editor_expands_a_slash_prompt_and_an_at_mention() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let mock = MockModel::start(vec![turns::text("Sunny."), turns::text("Read it.")]).await;
    let prompts = ["/everything:args-prompt Paris state=Texas", "Summarize @everything:demo://resource/dynamic/text/7, briefly"];
    let answers = lsp_asks(&setup, &mock, &prompts).await;
    for answer in &answers {
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
    }
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body.to_string();
    assert!(first.contains("What's weather in Paris, Texas?"), "{first}");
    assert!(!first.contains("/everything:args-prompt"), "{first}");
    let second = requests[1].body.to_string();
    assert!(second.contains("Resource 7: This is a plaintext resource"), "{second}");
    assert!(second.contains("uri=\\\"demo://resource/dynamic/text/7\\\""), "{second}");
    assert!(second.contains("Summarize @everything:demo://resource/dynamic/text/7, briefly"), "{second}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tandem_ask_in_the_editor_with_a_prompt_or_resource_the_server_lacks_is_an_error_and_nothing_is_sent() {
    let Some(server) = reference_server() else { return };
    let setup = Setup::with_everything(&server);
    let mock = MockModel::start(vec![turns::text("never")]).await;
    let answers = lsp_asks(&setup, &mock, &["/everything:no-such-prompt now", "Read @everything:demo://no/such/thing"]).await;
    let message = |answer: &serde_json::Value| answer["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(message(&answers[0]).contains("/everything:no-such-prompt: the MCP server everything has no prompt named no-such-prompt"), "{}", answers[0]);
    assert!(message(&answers[1]).contains("@everything:demo://no/such/thing: the MCP server everything answered:"), "{}", answers[1]);
    assert!(mock.requests().is_empty(), "nothing reached the model");
}
