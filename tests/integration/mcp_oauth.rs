//! OAuth 2.1 for remote MCP servers, end to end over loopback: the test
//! server (`tests/mcp/test_server.py --http --oauth`) is both a protected
//! MCP server and its authorization server; `tandem mcp login` and
//! `logout` run as the user runs them, this test playing the browser.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tandem::consent::{Approvals, ConsentStore};
use tandem::mcp::config::McpConfig;
use tandem::mcp::{McpManager, ServerState};
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

const LIMIT: Duration = Duration::from_secs(60);

/// The test server with `--http --oauth` and `extra` options; its events
/// in a log this test reads.
struct OAuthServer {
    child: std::process::Child,
    url: String,
    log: PathBuf,
}

impl OAuthServer {
    fn start(dir: &Path, extra: &[&str]) -> Self {
        use std::io::BufRead;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/test_server.py");
        let log = dir.join("oauth.log");
        let mut child = std::process::Command::new("python3")
            .arg(script)
            .args(["--http", "--oauth", "--oauth-log"])
            .arg(&log)
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port: u16 = line.trim().parse().unwrap();
        OAuthServer { child, url: format!("http://127.0.0.1:{port}/mcp"), log }
    }

    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn events_named(&self, name: &str) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["event"] == name).collect()
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Setup {
    dir: tempfile::TempDir,
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
        Setup { dir, home, root }
    }

    fn server(&self, extra: &[&str]) -> OAuthServer {
        let server = OAuthServer::start(self.dir.path(), extra);
        std::fs::write(self.home.join(".tandem/mcp.json"), json!({"mcpServers": {"web": {"type": "http", "url": server.url}}}).to_string())
            .unwrap();
        server
    }

    fn tandem(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
        command
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// `tandem mcp login web`, this test as the browser: it opens the
    /// printed address and follows the redirect back to Tandem's listener.
    /// Returns the address, whether it succeeded, and stderr.
    async fn login(&self) -> (String, bool, String) {
        let mut child = self.tandem(&["mcp", "login", "web"]).spawn().unwrap();
        let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
        let mut stderr = child.stderr.take().unwrap();
        let mut address = String::new();
        tokio::time::timeout(LIMIT, stdout.read_line(&mut address)).await.unwrap().unwrap();
        let address = address.trim().to_string();
        if address.starts_with("http") {
            let page = reqwest::get(&address).await.unwrap().text().await.unwrap();
            assert!(page.contains("Tandem"), "{page}");
        }
        let status = tokio::time::timeout(LIMIT, child.wait()).await.unwrap().unwrap();
        let mut errors = String::new();
        stderr.read_to_string(&mut errors).await.unwrap();
        (address, status.success(), errors)
    }

    async fn logout(&self) -> String {
        let output = tokio::time::timeout(LIMIT, self.tandem(&["mcp", "logout", "web"]).output()).await.unwrap().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    fn token_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.home.join(".tandem/mcp-auth")) {
            Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }

    fn manager(&self, approve: &[&str]) -> Arc<McpManager> {
        let config = McpConfig::load_with(Some(&self.home), &self.root, &|_| None);
        let store = ConsentStore::at(self.home.join("consent.json"));
        let command_line = approve.iter().map(|s| s.to_string()).collect();
        let manager = McpManager::new(config, &self.root, Approvals { store: Some(store), command_line });
        manager.start();
        manager
    }
}

async fn settled(manager: &McpManager) -> ServerState {
    assert!(manager.wait_settled(LIMIT).await);
    manager.statuses().into_iter().find(|s| s.name == "web").unwrap().state
}

async fn echo(manager: &Arc<McpManager>, root: &Path) -> (bool, String) {
    let mut registry = ToolRegistry::builtin();
    registry.add_source(Arc::clone(manager) as Arc<dyn tandem::tools::ToolSource>);
    let executor = Executor::new(registry).with_results_dir(None);
    let ctx = ToolContext::new(Arc::new(Workspace::new(root).unwrap()));
    ctx.run.activate("mcp__web__echo");
    let result = executor.execute(&ToolCall::new("c", "mcp__web__echo", json!({"text": "hi"})), &ctx).await.unwrap();
    (result.is_error, result.content)
}

fn needs_login() -> ServerState {
    ServerState::Failed { reason: "needs authorization: run `tandem mcp login web`".into() }
}

#[tokio::test]
async fn login_discovers_registers_signs_in_with_pkce_the_server_is_reached_with_the_token_and_logout_revokes() {
    let setup = Setup::new();
    let server = setup.server(&[]);

    // Not signed in: the server's 401 becomes a state that says what to do.
    let manager = setup.manager(&[]);
    assert_eq!(settled(&manager).await, needs_login());
    manager.shutdown().await;

    let (address, ok, stderr) = setup.login().await;
    assert!(ok, "{stderr}");
    let base = server.url.trim_end_matches("/mcp");
    assert!(address.starts_with(&format!("{base}/authorize?")), "{address}");
    assert!(address.contains("code_challenge_method=S256"), "{address}");
    assert!(stderr.contains("Signed in to web"), "{stderr}");
    // Registered (RFC 7591) under Tandem's name; the code exchanged with
    // the PKCE verifier (the server checks it) for a token.
    assert_eq!(server.events_named("register")[0]["client_name"], "Tandem");
    assert!(server.events_named("pkce_failed").is_empty());
    let token = server.events_named("token")[0]["access_token"].as_str().unwrap().to_string();

    let files = setup.token_files();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(files[0].parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    }

    // Signed in: the server is ready and its tool answers, with the token.
    let manager = setup.manager(&[]);
    assert_eq!(settled(&manager).await, ServerState::Ready);
    assert_eq!(echo(&manager, &setup.root).await, (false, "echo: hi".to_string()));
    manager.shutdown().await;
    assert!(server.events_named("mcp").iter().any(|e| e["token"] == token.as_str() && e["ok"] == true));

    // Logout revokes the refresh token (then the access token) and deletes the file.
    let out = setup.logout().await;
    assert!(out.contains("revoked and deleted"), "{out}");
    let revoked: Vec<String> = server.events_named("revoke").iter().map(|e| e["hint"].as_str().unwrap().to_string()).collect();
    assert_eq!(revoked, ["refresh_token", "access_token"]);
    assert!(setup.token_files().is_empty());
    let manager = setup.manager(&[]);
    assert_eq!(settled(&manager).await, needs_login());
    manager.shutdown().await;
    assert!(setup.logout().await.contains("Not signed in"));
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_before_use() {
    let setup = Setup::new();
    let server = setup.server(&["--access-ttl", "2"]);
    let (_, ok, stderr) = setup.login().await;
    assert!(ok, "{stderr}");
    let before = std::fs::read_to_string(&setup.token_files()[0]).unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let manager = setup.manager(&[]);
    assert_eq!(settled(&manager).await, ServerState::Ready);
    manager.shutdown().await;
    let refreshed = server.events_named("refresh");
    assert!(!refreshed.is_empty(), "{:?}", server.events());
    // The new tokens are kept.
    let after = std::fs::read_to_string(&setup.token_files()[0]).unwrap();
    assert_ne!(before, after);
    assert!(after.contains(refreshed[0]["access_token"].as_str().unwrap()));
}

#[tokio::test]
async fn an_expired_refresh_token_asks_to_sign_in_again() {
    let setup = Setup::new();
    let server = setup.server(&["--access-ttl", "2", "--reject-refresh"]);
    let (_, ok, stderr) = setup.login().await;
    assert!(ok, "{stderr}");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let manager = setup.manager(&[]);
    assert_eq!(settled(&manager).await, needs_login());
    manager.shutdown().await;
    assert!(!server.events_named("refresh_rejected").is_empty());
}

#[tokio::test]
async fn metadata_naming_another_host_as_the_resource_is_refused() {
    let setup = Setup::new();
    let server = setup.server(&["--prm-resource", "http://other.test/mcp"]);
    let (address, ok, stderr) = setup.login().await;
    assert!(!ok, "{address}");
    assert!(address.is_empty(), "no address to open: {address}");
    assert!(stderr.contains("cannot sign in to web: the server's OAuth metadata names another resource (http://other.test/mcp)"), "{stderr}");
    // Nothing was registered, nothing kept.
    assert!(server.events_named("register").is_empty());
    assert!(setup.token_files().is_empty());
}

#[tokio::test]
async fn a_token_endpoint_answering_garbage_is_a_clear_error_and_keeps_nothing() {
    let setup = Setup::new();
    let _server = setup.server(&["--token-garbage"]);
    let (_, ok, stderr) = setup.login().await;
    assert!(!ok);
    assert!(stderr.contains("cannot sign in to web: the token endpoint's answer is not a token"), "{stderr}");
    assert!(setup.token_files().is_empty());
}

#[tokio::test]
async fn a_folders_server_at_the_same_address_does_not_get_the_users_tokens() {
    let setup = Setup::new();
    let server = setup.server(&[]);
    let (_, ok, stderr) = setup.login().await;
    assert!(ok, "{stderr}");
    // The repository names the user's server, same name, same address.
    std::fs::write(setup.root.join(".mcp.json"), json!({"mcpServers": {"web": {"type": "http", "url": server.url}}}).to_string()).unwrap();
    let manager = setup.manager(&["web"]);
    assert_eq!(settled(&manager).await, needs_login());
    manager.shutdown().await;
    // Every request it made went without a token.
    let requests = server.events_named("mcp");
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|e| e["token"].is_null()), "{requests:?}");
}

/// In the editor, a server that needs signing in is offered; on "Sign in"
/// the editor opens the authorization address in the browser
/// (`window/showDocument`, external), and once signed in the server starts.
#[test]
fn in_the_editor_the_sign_in_page_opens_in_the_browser_and_the_server_then_starts() {
    use crate::common::lsp_client::LspClient;
    let setup = Setup::new();
    let server = setup.server(&[]);
    let script = setup.root.join("script.json");
    std::fs::write(&script, json!({"turns": [{"text": "ok"}]}).to_string()).unwrap();
    let data = setup.home.join("data");
    let mut client = LspClient::start_trusted(
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
    let offer = client.server_request("window/showMessageRequest");
    let text = offer["params"]["message"].as_str().unwrap();
    assert_eq!(text, "Tandem: the MCP server \"web\" needs you to sign in. Open the sign-in page in your browser?");
    client.respond(&offer["id"], json!({"title": "Sign in"}));
    let open = client.server_request("window/showDocument");
    assert_eq!(open["params"]["external"], true, "{open}");
    let address = open["params"]["uri"].as_str().unwrap().to_string();
    assert!(address.starts_with(&format!("{}/authorize?", server.url.trim_end_matches("/mcp"))), "{address}");
    client.respond(&open["id"], json!({"success": true}));
    // The browser.
    let page = tokio::runtime::Runtime::new().unwrap().block_on(async { reqwest::get(&address).await.unwrap().text().await.unwrap() });
    assert!(page.contains("signed in"), "{page}");
    client.wait_for("web ready", |m| m["params"]["message"].as_str().is_some_and(|t| t.contains("MCP server web is ready")));
    assert_eq!(setup.token_files().len(), 1);
    client.shutdown();
}
