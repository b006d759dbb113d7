//! One configured MCP server at run time: its connection (an rmcp client
//! over a child process or streamable HTTP), its state, its tools, and the
//! restart after a crash (on the next call, bounded, with a backoff).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::config::{ServerConfig, Transport};
use super::{elicit, oauth};
use super::tool::{result_output, tool_name, McpTool};
use crate::sync::MutexExt;
use crate::tools::{ToolContext, ToolError};

/// Restarts after crashes, at most, per server and process.
pub const MAX_RESTARTS: u32 = 3;
/// The wait before the first restart; it doubles with each restart.
const RESTART_BACKOFF: Duration = Duration::from_millis(500);
/// How long a stopping server gets before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
/// A server's stderr line longer than this is cut in the log.
const STDERR_LINE_MAX: usize = 4096;
/// Tools per server, at most (a server listing more is cut, with a log line).
const MAX_TOOLS_PER_SERVER: usize = 500;

/// What a server is doing, as `tandem mcp list` and `tandem.mcpStatus` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// From a project file, not approved: not started.
    NeedsApproval,
    Starting,
    Ready,
    /// Start-up failed, or the server stopped and cannot be restarted.
    Failed { reason: String },
    /// The server stopped; it is restarted on the next call to one of its tools.
    Stopped { reason: String },
}

impl ServerState {
    pub fn label(&self) -> String {
        match self {
            ServerState::NeedsApproval => "needs approval".into(),
            ServerState::Starting => "starting".into(),
            ServerState::Ready => "ready".into(),
            ServerState::Failed { reason } => format!("failed: {reason}"),
            ServerState::Stopped { reason } => format!("stopped ({reason}); restarts on the next call"),
        }
    }
}

struct Status {
    state: ServerState,
    tools: Vec<Arc<McpTool>>,
    resources: Vec<ResourceInfo>,
    prompts: Vec<PromptInfo>,
    /// What the server said to tell the model (`initialize`'s `instructions`).
    instructions: Option<String>,
}

/// A resource a server lists (`resources/list`), as `tandem mcp list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A prompt a server offers (`prompts/list`): a `/SERVER:PROMPT` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its arguments, in the server's order, and whether each is required.
    pub arguments: Vec<(String, bool)>,
}

type Service = RunningService<RoleClient, Handler>;

pub struct McpServer {
    pub(super) config: ServerConfig,
    root: PathBuf,
    /// Where its OAuth tokens are kept (`None`: never signed in).
    auth_dir: Option<PathBuf>,
    startup_timeout: Duration,
    tool_timeout: Duration,
    status: Mutex<Status>,
    /// The live connection; held while (re)connecting so one call restarts.
    connection: tokio::sync::Mutex<Option<Service>>,
    restarts: AtomicU32,
    stopped_at: Mutex<Option<Instant>>,
    shut_down: AtomicBool,
    /// Cancelled by `shutdown`: a start in progress gives up at once.
    stop: tokio_util::sync::CancellationToken,
    changed: Arc<watch::Sender<u64>>,
    elicitor: Arc<std::sync::OnceLock<Arc<dyn elicit::Elicitor>>>,
}

impl McpServer {
    // Only the manager builds servers, each from the manager's own fields.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        config: ServerConfig,
        root: PathBuf,
        auth_dir: Option<PathBuf>,
        startup_timeout: Duration,
        tool_timeout: Duration,
        initial: ServerState,
        changed: Arc<watch::Sender<u64>>,
        elicitor: Arc<std::sync::OnceLock<Arc<dyn elicit::Elicitor>>>,
    ) -> Arc<Self> {
        Arc::new(McpServer {
            config,
            root,
            auth_dir,
            startup_timeout,
            tool_timeout,
            status: Mutex::new(Status { state: initial, tools: Vec::new(), resources: Vec::new(), prompts: Vec::new(), instructions: None }),
            connection: tokio::sync::Mutex::new(None),
            restarts: AtomicU32::new(0),
            stopped_at: Mutex::new(None),
            shut_down: AtomicBool::new(false),
            stop: tokio_util::sync::CancellationToken::new(),
            changed,
            elicitor,
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    fn lock_status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.locked()
    }

    pub fn state(&self) -> ServerState {
        self.lock_status().state.clone()
    }

    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.lock_status().tools.clone()
    }

    pub fn instructions(&self) -> Option<String> {
        self.lock_status().instructions.clone()
    }

    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.lock_status().resources.clone()
    }

    pub fn prompts(&self) -> Vec<PromptInfo> {
        self.lock_status().prompts.clone()
    }

    pub(super) fn set_state(&self, state: ServerState) {
        self.lock_status().state = state;
        self.changed.send_modify(|generation| *generation += 1);
    }

    fn set_tools(self: &Arc<Self>, listed: Vec<rmcp::model::Tool>) {
        let mut tools: Vec<Arc<McpTool>> = Vec::new();
        for tool in listed.into_iter().take(MAX_TOOLS_PER_SERVER) {
            let Ok(json) = serde_json::to_value(&tool) else { continue };
            let remote_name = json.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let name = tool_name(&self.config.name, &remote_name);
            if remote_name.is_empty() || tools.iter().any(|t| t.name == name) {
                tracing::warn!(server = %self.config.name, tool = %remote_name, "MCP tool skipped: empty or duplicate name");
                continue;
            }
            tools.push(Arc::new(McpTool {
                server: Arc::downgrade(self),
                server_name: self.config.name.clone(),
                name,
                remote_name,
                description: json.get("description").and_then(Value::as_str).unwrap_or_default().to_string(),
                input_schema: json.get("inputSchema").cloned().unwrap_or_else(|| serde_json::json!({"type": "object"})),
                read_only: json.pointer("/annotations/readOnlyHint").and_then(Value::as_bool) == Some(true),
            }));
        }
        self.lock_status().tools = tools;
        self.changed.send_modify(|generation| *generation += 1);
    }

    /// The first start: connect, list the tools, report the outcome.
    pub(super) async fn start(self: &Arc<Self>) {
        let mut connection = self.connection.lock().await;
        if self.shut_down.load(Ordering::SeqCst) {
            return;
        }
        self.set_state(ServerState::Starting);
        match self.connect().await {
            Ok(service) => {
                *connection = Some(service);
                self.set_state(ServerState::Ready);
            }
            Err(reason) => {
                tracing::info!(server = %self.config.name, %reason, "MCP server failed to start");
                self.set_state(ServerState::Failed { reason });
            }
        }
    }

    /// Connect and list the tools, within the start-up timeout.
    async fn connect(self: &Arc<Self>) -> Result<Service, String> {
        let transport = self.config.transport.clone()?;
        let handler = Handler { server: Arc::downgrade(self) };
        let work = async {
            let service = match &transport {
                Transport::Stdio { command, args, env } => {
                    let child = self.spawn_child(command, args, env)?;
                    handler.serve(child).await.map_err(|e| format!("initialize failed: {e}"))?
                }
                Transport::Http { url, headers } => {
                    let config = http_config(url, headers)?;
                    let signed_in = match self.token_file(url) {
                        Some(store) if !headers.keys().any(|h| h.eq_ignore_ascii_case("authorization")) => oauth::client(url, store).await?,
                        _ => None,
                    };
                    let served = match signed_in {
                        Some(client) => handler.serve(StreamableHttpClientTransport::with_client(client, config)).await,
                        None => handler.serve(StreamableHttpClientTransport::from_config(config)).await,
                    };
                    served.map_err(|e| {
                        if e.is_authorization_required() {
                            format!("{}: run `tandem mcp login {}`", super::NEEDS_AUTHORIZATION, self.config.name)
                        } else {
                            format!("initialize failed: {e}")
                        }
                    })?
                }
            };
            let has_tools = service.peer().peer_info().is_none_or(|info| info.capabilities.tools.is_some());
            if has_tools {
                let tools = service.peer().list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
                self.set_tools(tools);
            }
            self.list_resources_and_prompts(service.peer()).await;
            Ok(service)
        };
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(self.startup_timeout, work) => outcome,
            _ = self.stop.cancelled() => return Err("shut down while starting".into()),
        };
        match outcome {
            Ok(result) => result,
            // Dropping the half-started service kills the child (its whole group).
            Err(_) => Err(format!(
                "did not answer initialize and tools/list within {} (the start-up timeout)",
                human_duration(self.startup_timeout)
            )),
        }
    }

    /// Where this server's OAuth tokens are (or would be) kept.
    pub(super) fn token_file(&self, url: &str) -> Option<oauth::TokenFile> {
        self.auth_dir.as_deref().map(|dir| oauth::TokenFile::for_server(dir, &self.config, &self.root, url))
    }

    fn spawn_child(&self, command: &str, args: &[String], env: &std::collections::BTreeMap<String, String>) -> Result<TokioChildProcess, String> {
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args).current_dir(&self.root);
        // Like shell commands, servers get the allow-listed environment
        // without credentials; a server that needs a token gets it through
        // its "env" entry (`"GITHUB_TOKEN": "${GITHUB_TOKEN}"`).
        cmd.env_clear();
        cmd.envs(crate::environment::ChildEnv::default().vars());
        cmd.envs(env);
        // What it starts ends with it and with Tandem, also what leaves
        // its process group (`setsid`).
        crate::sandbox::contain::contain(&mut cmd);
        let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
        // Its own process group, so stopping it stops whatever it started.
        crate::platform::own_process_tree(&mut wrapped);
        let (child, stderr) = TokioChildProcess::builder(wrapped)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{command}`: {e}"))?;
        if let Some(stderr) = stderr {
            let name = self.config.name.clone();
            tokio::spawn(async move {
                let codec = tokio_util::codec::LinesCodec::new_with_max_length(STDERR_LINE_MAX);
                let mut lines = tokio_util::codec::FramedRead::new(stderr, codec);
                while let Some(line) = lines.next().await {
                    match line {
                        Ok(line) => tracing::info!(server = %name, "mcp stderr: {line}"),
                        Err(tokio_util::codec::LinesCodecError::MaxLineLengthExceeded) => {
                            tracing::info!(server = %name, "mcp stderr: (a line longer than {STDERR_LINE_MAX} bytes, not shown)")
                        }
                        Err(_) => break,
                    }
                }
            });
        }
        Ok(child)
    }

    /// The server's resources and prompts, when it has them. A failure here
    /// is logged, not fatal: the tools still work.
    async fn list_resources_and_prompts(&self, peer: &Peer<RoleClient>) {
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
        let has = |which: fn(&rmcp::model::ServerCapabilities) -> bool| capabilities.as_ref().is_some_and(which);
        let mut resources = Vec::new();
        if has(|c| c.resources.is_some()) {
            match peer.list_all_resources().await {
                Ok(listed) => {
                    for resource in listed.into_iter().take(MAX_TOOLS_PER_SERVER) {
                        let Ok(json) = serde_json::to_value(&resource) else { continue };
                        let text = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_string);
                        let Some(uri) = text("uri") else { continue };
                        resources.push(ResourceInfo { name: text("name").unwrap_or_else(|| uri.clone()), uri, mime_type: text("mimeType") });
                    }
                }
                Err(err) => tracing::warn!(server = %self.config.name, %err, "MCP resources/list failed"),
            }
        }
        let mut prompts = Vec::new();
        if has(|c| c.prompts.is_some()) {
            match peer.list_all_prompts().await {
                Ok(listed) => {
                    for prompt in listed.into_iter().take(MAX_TOOLS_PER_SERVER) {
                        let arguments = prompt.arguments.unwrap_or_default().into_iter().map(|a| (a.name, a.required == Some(true))).collect();
                        prompts.push(PromptInfo { name: prompt.name, description: prompt.description.unwrap_or_default(), arguments });
                    }
                }
                Err(err) => tracing::warn!(server = %self.config.name, %err, "MCP prompts/list failed"),
            }
        }
        let mut status = self.lock_status();
        status.resources = resources;
        status.prompts = prompts;
        status.instructions = peer.peer_info().and_then(|info| info.instructions.clone()).filter(|i| !i.trim().is_empty());
    }

    /// `resources/read`: the resource's text (a binary one is described).
    pub(super) async fn read_resource(self: &Arc<Self>, uri: &str, cancel: &CancellationToken) -> Result<String, String> {
        let peer = self.peer(cancel).await?;
        let request = peer.read_resource(rmcp::model::ReadResourceRequestParams::new(uri));
        let result = self.bounded(request, cancel).await?.map_err(|err| service_error(&self.config.name, err))?;
        let json = serde_json::to_value(&result).map_err(|err| format!("unreadable resources/read result: {err}"))?;
        let contents = json.get("contents").and_then(Value::as_array).cloned().unwrap_or_default();
        if contents.is_empty() {
            return Err(format!("the server {} has nothing at {uri}", self.config.name));
        }
        Ok(contents.iter().map(content_text).collect::<Vec<_>>().join("\n"))
    }

    /// `prompts/get`: the prompt's messages as one text.
    pub(super) async fn get_prompt(
        self: &Arc<Self>,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let peer = self.peer(cancel).await?;
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        params.arguments = Some(arguments);
        let result = self.bounded(peer.get_prompt(params), cancel).await?.map_err(|err| service_error(&self.config.name, err))?;
        let json = serde_json::to_value(&result).map_err(|err| format!("unreadable prompts/get result: {err}"))?;
        let messages = json.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
        let texts: Vec<String> = messages.iter().filter_map(|m| m.get("content")).map(content_text).collect();
        if texts.is_empty() {
            return Err(format!("the prompt {name} of {} is empty", self.config.name));
        }
        Ok(texts.join("\n\n"))
    }

    /// Run a request within the tool timeout, or until cancelled.
    async fn bounded<T>(&self, request: impl std::future::Future<Output = T>, cancel: &CancellationToken) -> Result<T, String> {
        tokio::select! {
            outcome = tokio::time::timeout(self.tool_timeout, request) => {
                outcome.map_err(|_| format!("the MCP server {} did not answer within {}", self.config.name, human_duration(self.tool_timeout)))
            }
            _ = cancel.cancelled() => Err("cancelled".into()),
        }
    }

    /// `notifications/tools/list_changed`: list again.
    async fn refresh_tools(self: &Arc<Self>, peer: &Peer<RoleClient>) {
        match tokio::time::timeout(self.startup_timeout, peer.list_all_tools()).await {
            Ok(Ok(tools)) => {
                tracing::info!(server = %self.config.name, count = tools.len(), "MCP tools refreshed");
                self.set_tools(tools);
            }
            Ok(Err(err)) => tracing::warn!(server = %self.config.name, %err, "MCP tools/list failed after list_changed"),
            Err(_) => tracing::warn!(server = %self.config.name, "MCP tools/list timed out after list_changed"),
        }
    }

    /// A live peer: the current connection, or a restart of a server that stopped.
    async fn peer(self: &Arc<Self>, cancel: &CancellationToken) -> Result<Peer<RoleClient>, String> {
        let mut connection = self.connection.lock().await;
        if let Some(service) = connection.as_ref() {
            if !service.peer().is_transport_closed() {
                return Ok(service.peer().clone());
            }
            self.mark_stopped("the server process exited".into());
            *connection = None;
        }
        if self.shut_down.load(Ordering::SeqCst) {
            return Err(format!("the MCP server {} is shut down", self.config.name));
        }
        if let ServerState::Failed { reason } = self.state() {
            return Err(format!("the MCP server {} is not running ({reason})", self.config.name));
        }
        if self.state() == ServerState::NeedsApproval {
            return Err(format!("the MCP server {} needs the user's approval before it can start", self.config.name));
        }
        let restarts = self.restarts.fetch_add(1, Ordering::SeqCst);
        if restarts >= MAX_RESTARTS {
            let reason = format!("stopped {} times; not restarted again", restarts + 1);
            self.set_state(ServerState::Failed { reason: reason.clone() });
            return Err(format!("the MCP server {} {reason}. Tell the user; do not call its tools again.", self.config.name));
        }
        let backoff = RESTART_BACKOFF * 2u32.saturating_pow(restarts);
        let since_stop = self.stopped_at.locked().map(|t| t.elapsed()).unwrap_or(backoff);
        if let Some(wait) = backoff.checked_sub(since_stop) {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = cancel.cancelled() => return Err("the call was cancelled".into()),
            }
        }
        tracing::info!(server = %self.config.name, attempt = restarts + 1, "restarting MCP server");
        self.set_state(ServerState::Starting);
        match self.connect().await {
            Ok(service) => {
                let peer = service.peer().clone();
                *connection = Some(service);
                self.set_state(ServerState::Ready);
                Ok(peer)
            }
            Err(reason) => {
                self.mark_stopped(reason.clone());
                Err(format!("the MCP server {} could not be restarted: {reason}", self.config.name))
            }
        }
    }

    fn mark_stopped(&self, reason: String) {
        *self.stopped_at.locked() = Some(Instant::now());
        self.set_state(ServerState::Stopped { reason });
    }

    /// Call one tool. A call past the tool timeout is dropped, which makes
    /// rmcp send `notifications/cancelled` for it.
    pub(super) async fn call_tool(
        self: &Arc<Self>,
        remote_name: &str,
        arguments: serde_json::Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<crate::tools::ToolOutput, ToolError> {
        let server = &self.config.name;
        let peer = self.peer(&ctx.cancel).await.map_err(|e| ToolError::model(format!("Error: {e}")))?;
        let mut params = CallToolRequestParams::new(remote_name.to_string());
        params.arguments = Some(arguments);
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(self.tool_timeout, peer.call_tool(params)) => outcome,
            _ = ctx.cancel.cancelled() => return Err(ToolError::model("Error: the call was cancelled.")),
        };
        match outcome {
            Err(_) => Err(ToolError::model(format!(
                "Error: the MCP tool {remote_name} (server {server}) did not answer within {}; the call was cancelled.",
                human_duration(self.tool_timeout)
            ))),
            Ok(Ok(result)) => {
                let json = serde_json::to_value(&result).map_err(|e| ToolError::model(format!("Error: unreadable MCP result: {e}")))?;
                result_output(&json).map_err(ToolError::Model)
            }
            Ok(Err(err)) if peer.is_transport_closed() || matches!(err, ServiceError::TransportClosed) => {
                let mut connection = self.connection.lock().await;
                if connection.as_ref().is_some_and(|s| s.peer().is_transport_closed()) {
                    *connection = None;
                }
                drop(connection);
                self.mark_stopped(format!("it stopped during a call to {remote_name}"));
                Err(ToolError::model(format!(
                    "Error: the MCP server {server} stopped during the call ({err}). It is restarted on the next call to one of its tools."
                )))
            }
            Ok(Err(ServiceError::McpError(error))) => {
                Err(ToolError::model(format!("Error from the MCP server {server}: {}", error.message)))
            }
            Ok(Err(err)) => Err(ToolError::model(format!("Error: the MCP call to {remote_name} (server {server}) failed: {err}"))),
        }
    }

    /// Stop the server (its process group, for stdio) and never restart it.
    pub(super) async fn shutdown(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
        self.stop.cancel();
        let service = self.connection.lock().await.take();
        if let Some(service) = service {
            let mut service = service;
            if let Err(err) = service.close_with_timeout(SHUTDOWN_GRACE).await {
                tracing::debug!(server = %self.config.name, %err, "MCP server did not close cleanly");
            }
            // Dropping the transport kills what is left of the child's group.
            drop(service);
        }
    }
}

fn http_config(url: &str, headers: &std::collections::BTreeMap<String, String>) -> Result<StreamableHttpClientTransportConfig, String> {
    use reqwest::header::{HeaderName, HeaderValue};
    let mut custom = HashMap::new();
    let mut bearer = None;
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            if let Some(token) = value.strip_prefix("Bearer ") {
                bearer = Some(token.to_string());
                continue;
            }
        }
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|e| format!("bad header name \"{name}\": {e}"))?;
        let value = HeaderValue::from_str(value).map_err(|e| format!("bad value for header \"{name}\": {e}"))?;
        custom.insert(header, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(custom);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    Ok(config)
}

/// One content item (a resource's, a prompt message's) as text: text as
/// it is, an embedded resource's text, other kinds in a line.
fn content_text(content: &Value) -> String {
    let text = |v: &Value| v.get("text").and_then(Value::as_str).map(str::to_string);
    if let Some(text) = text(content) {
        return text;
    }
    if let Some(resource) = content.get("resource") {
        return text(resource).unwrap_or_else(|| content_text(resource));
    }
    let kind = content.get("type").and_then(Value::as_str).unwrap_or("binary");
    let mime = content.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type");
    let uri = content.get("uri").and_then(Value::as_str).map(|u| format!(" {u}")).unwrap_or_default();
    format!("[{kind}{uri} ({mime}): not text, not shown]")
}

fn service_error(server: &str, err: ServiceError) -> String {
    match err {
        ServiceError::McpError(error) => format!("the MCP server {server} answered: {}", error.message),
        other => format!("the request to the MCP server {server} failed: {other}"),
    }
}

fn human_duration(duration: Duration) -> String {
    if duration.as_millis() % 1000 == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// The client side of the protocol: who we are, and what to do when the
/// server says its tools changed.
struct Handler {
    server: Weak<McpServer>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // Roots: the workspace root, which the server may ask for (`roots/list`);
        // elicitation (forms) when someone can answer.
        let mut capabilities = serde_json::json!({"roots": {}});
        if self.server.upgrade().is_some_and(|server| server.elicitor.get().is_some()) {
            capabilities["elicitation"] = serde_json::json!({"form": {}});
        }
        let capabilities: ClientCapabilities = serde_json::from_value(capabilities).unwrap_or_default();
        ClientConfig::new(capabilities, Implementation::new("tandem", env!("CARGO_PKG_VERSION")))
    }

    /// A server's question: asked through the front end's elicitor, within
    /// three quarters of the tool timeout (then cancelled, so the call
    /// can end on its own terms before it times out). URL mode is declined.
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let result = |action, content| {
            let mut result: ElicitResult = serde_json::from_value(serde_json::json!({"action": "decline"})).map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
            result.action = action;
            result.content = content;
            Ok(result)
        };
        let Some(server) = self.server.upgrade() else { return result(ElicitationAction::Cancel, None) };
        let Some(elicitor) = server.elicitor.get().cloned() else { return result(ElicitationAction::Decline, None) };
        let json = serde_json::to_value(&request).unwrap_or_default();
        if json.get("mode").and_then(Value::as_str) == Some("url") {
            return result(ElicitationAction::Decline, None);
        }
        let question = elicit::Elicitation {
            server: server.config.name.clone(),
            message: json.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
            fields: elicit::fields(json.get("requestedSchema").unwrap_or(&Value::Null)),
        };
        let wait = server.tool_timeout * 3 / 4;
        match tokio::time::timeout(wait, elicitor.elicit(&question)).await {
            Ok(elicit::Answer::Accept(content)) => result(ElicitationAction::Accept, Some(Value::Object(content))),
            Ok(elicit::Answer::Decline) => result(ElicitationAction::Decline, None),
            Ok(elicit::Answer::Cancel) => result(ElicitationAction::Cancel, None),
            Err(_) => {
                tracing::info!(server = %server.config.name, "an elicitation was not answered in time; cancelled");
                result(ElicitationAction::Cancel, None)
            }
        }
    }

    /// The workspace root as a `file://` URI (the one folder Tandem works
    /// in; the protocol marks roots deprecated, but servers still ask).
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let Some(server) = self.server.upgrade() else { return Ok(rmcp::model::ListRootsResult::new(Vec::new())) };
        let roots = url::Url::from_directory_path(&server.root)
            .map(|uri| {
                let mut root = rmcp::model::Root::new(uri.to_string());
                root.name = server.root.file_name().map(|n| n.to_string_lossy().into_owned());
                vec![root]
            })
            .unwrap_or_default();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.refresh_tools(&context.peer).await;
        }
    }
}
