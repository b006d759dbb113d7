//! Language servers Tandem starts itself (`lspServers`), for where no
//! editor answers code intelligence questions: `tandem ask`, and editors
//! whose plugin does not offer `tandem/codeIntel` (eglot, Kakoune).
//! [`LanguageServers`] implements the tools' [`CodeIntel`] as an LSP
//! client: each configured server starts on first use (a question about a
//! file it handles, or the agent reading one), is shared by every run of
//! the workspace, is shut down with Tandem, and opens the files it is asked
//! about (with the text the agent sees). A server that fails to start is
//! reported in the tool result, never fatal; one that crashed is started
//! again on the next call, at most [`MAX_RESTARTS`] times.
//!
//! ```json
//! {"lspServers": {"python": {"command": ["pyright-langserver", "--stdio"], "filetypes": ["py"]}}}
//! ```
//!
//! A server from a project's settings file (`.tandem/settings.json`,
//! `.tandem/settings.local.json`) runs a command the repository chose: it
//! starts only once the user approved it for this workspace
//! (`tandem ask --lsp-approve NAME|all`, remembered in the consent store).

mod connection;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::consent::Approvals;
use crate::scope::Scope;
use crate::sync::MutexExt;
use crate::tools::ports::code_intel::{CodeIntel, CodeIntelError, CodeQuery, FileDiagnostics, Operation, Settle};
use connection::{Connection, RequestError};

/// A crashed server is started again at most this many times per process.
pub const MAX_RESTARTS: u32 = 3;
/// Without versioned publishes, diagnostics count as settled once none
/// came for this long after the first one following the change.
const QUIET: Duration = Duration::from_millis(300);
/// The consent store's kind for project language servers.
pub const CONSENT_KIND: &str = "lsp";

/// One `lspServers` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The language name (the entry's key), also its `languageId`.
    pub name: String,
    pub command: Vec<String>,
    /// File name extensions without the dot (`py`, `pyi`).
    pub filetypes: Vec<String>,
    pub initialization_options: Option<Value>,
    pub env: Vec<(String, String)>,
    pub scope: Scope,
    /// The entry as written, for consent.
    pub raw: Value,
}

impl ServerConfig {
    fn handles(&self, path: &Path) -> bool {
        let Some(extension) = path.extension().and_then(|e| e.to_str()) else { return false };
        self.filetypes.iter().any(|f| f.eq_ignore_ascii_case(extension))
    }

    fn label(&self) -> String {
        let program = self.command.first().map(|p| Path::new(p).file_name().map_or(p.clone(), |n| n.to_string_lossy().into_owned()));
        format!("{} (lspServers.{})", program.unwrap_or_default(), self.name)
    }
}

/// Parse the merged `lspServers` settings; each unusable entry is a problem.
pub fn parse(servers: &BTreeMap<String, (Scope, Value)>) -> (Vec<ServerConfig>, Vec<String>) {
    let mut configs = Vec::new();
    let mut problems = Vec::new();
    for (name, (scope, raw)) in servers {
        match parse_one(name, *scope, raw) {
            Ok(config) => configs.push(config),
            Err(message) => problems.push(format!("lspServers.{name}: {message}; the server is ignored")),
        }
    }
    (configs, problems)
}

fn parse_one(name: &str, scope: Scope, raw: &Value) -> Result<ServerConfig, String> {
    let Value::Object(fields) = raw else { return Err("expected {\"command\": [...], \"filetypes\": [...]}".into()) };
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match fields.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or_else(|| format!("\"{key}\" must be a list of strings")))
                .collect(),
            Some(Value::String(s)) if key == "command" => Ok(s.split_whitespace().map(str::to_string).collect()),
            Some(_) => Err(format!("\"{key}\" must be a list of strings")),
            None => Err(format!("\"{key}\" is missing")),
        }
    };
    let command = strings("command")?;
    if command.first().is_none_or(|p| p.trim().is_empty()) {
        return Err("\"command\" is empty".into());
    }
    let filetypes: Vec<String> = strings("filetypes")?.into_iter().map(|f| f.trim_start_matches('.').to_string()).filter(|f| !f.is_empty()).collect();
    if filetypes.is_empty() {
        return Err("\"filetypes\" is empty: list the file extensions it handles, e.g. [\"py\"]".into());
    }
    let env = match fields.get("env") {
        None => Vec::new(),
        Some(Value::Object(vars)) => vars.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect(),
        Some(_) => return Err("\"env\" must be an object of NAME: \"value\"".into()),
    };
    Ok(ServerConfig {
        name: name.to_string(),
        command,
        filetypes,
        initialization_options: fields.get("initializationOptions").cloned(),
        env,
        scope,
        raw: raw.clone(),
    })
}

/// A server's life in this process.
enum Slot {
    NotStarted,
    Running(Arc<Server>),
    /// Failed to start or crashed; tried `restarts + 1` times already.
    Failed { message: String, restarts: u32 },
}

/// A running server and the documents it has open.
struct Server {
    connection: Arc<Connection>,
    /// Open documents: URI → (version, fingerprint of the text sent).
    documents: Mutex<HashMap<String, (i64, u64)>>,
    restarts: u32,
}

/// The language servers of one workspace.
pub struct LanguageServers {
    root: PathBuf,
    configs: Vec<ServerConfig>,
    approvals: Approvals,
    slots: Vec<tokio::sync::Mutex<Slot>>,
    code_intel_timeout: Duration,
    diagnostics_timeout: Option<Duration>,
    /// Itself, for the background work `file_read` starts.
    me: std::sync::Weak<LanguageServers>,
}

impl LanguageServers {
    pub fn new(root: PathBuf, configs: Vec<ServerConfig>, approvals: Approvals, code_intel_timeout: Duration, diagnostics_timeout: Option<Duration>) -> Arc<Self> {
        let servers = Arc::new_cyclic(|me| {
            let slots = configs.iter().map(|_| tokio::sync::Mutex::new(Slot::NotStarted)).collect();
            LanguageServers { root, configs, approvals, slots, code_intel_timeout, diagnostics_timeout, me: me.clone() }
        });
        servers.remember_command_line_approvals();
        servers
    }

    /// From the merged `lspServers` settings, or `None` when no server is
    /// configured (problems are returned for the front end to report).
    pub fn configure(
        root: &Path,
        servers: &BTreeMap<String, (Scope, Value)>,
        approvals: Approvals,
        code_intel_timeout: Duration,
        diagnostics_timeout: Option<Duration>,
    ) -> (Option<Arc<LanguageServers>>, Vec<String>) {
        let (configs, problems) = parse(servers);
        if configs.is_empty() {
            return (None, problems);
        }
        (Some(LanguageServers::new(root.to_path_buf(), configs, approvals, code_intel_timeout, diagnostics_timeout)), problems)
    }

    fn remember_command_line_approvals(&self) {
        let Some(store) = &self.approvals.store else { return };
        for config in self.configs.iter().filter(|c| c.scope.is_project()) {
            if self.approvals.on_command_line(&config.name) {
                if let Err(err) = store.approve(&self.root, CONSENT_KIND, &config.name, &config.raw.to_string()) {
                    tracing::warn!(%err, "cannot remember the approval of lspServers.{}", config.name);
                }
            }
        }
    }

    fn approved(&self, config: &ServerConfig) -> bool {
        if !config.scope.is_project() {
            return true;
        }
        if self.approvals.on_command_line(&config.name) {
            return true;
        }
        self.approvals.store.as_ref().is_some_and(|s| s.is_approved(&self.root, CONSENT_KIND, &config.name, &config.raw.to_string()))
    }

    fn index_for(&self, path: &Path) -> Option<usize> {
        self.configs.iter().position(|c| c.handles(path))
    }

    fn no_server(&self, path: &Path) -> CodeIntelError {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let what = if extension.is_empty() { "files without an extension".to_string() } else { format!(".{extension} files") };
        let configured: Vec<String> = self.configs.iter().map(|c| format!("{} ({})", c.name, c.filetypes.join(", "))).collect();
        CodeIntelError::NoServer(format!(
            "no language server is configured for {what}. Configured in lspServers: {}. Add one to \"lspServers\" in .tandem/settings.json, e.g. {{\"lspServers\": {{\"rust\": {{\"command\": [\"rust-analyzer\"], \"filetypes\": [\"rs\"]}}}}}}.",
            configured.join(", ")
        ))
    }

    /// The running server at `index`, started (or restarted) if need be.
    async fn server(&self, index: usize) -> Result<Arc<Server>, CodeIntelError> {
        let config = &self.configs[index];
        if !self.approved(config) {
            return Err(CodeIntelError::NoServer(format!(
                "lspServers.{name} comes from the project's settings and runs a command the repository chose ({command}); it starts only once you approve it: run `tandem ask --lsp-approve {name} …` once (remembered for this workspace), or configure it in ~/.tandem/settings.json.",
                name = config.name,
                command = config.command.join(" ")
            )));
        }
        let mut slot = self.slots[index].lock().await;
        let restarts = match &*slot {
            Slot::Running(server) if server.connection.is_alive() => return Ok(Arc::clone(server)),
            Slot::Running(server) => {
                let reason = server.connection.death().unwrap_or_default();
                if server.restarts >= MAX_RESTARTS {
                    let message = format!("{} crashed {} times ({reason}); it is not started again until Tandem restarts", config.label(), server.restarts + 1);
                    *slot = Slot::Failed { message: message.clone(), restarts: server.restarts };
                    return Err(CodeIntelError::Failed(message));
                }
                tracing::info!(server = %config.name, %reason, "restarting a language server that stopped");
                server.restarts + 1
            }
            Slot::Failed { message, restarts } if *restarts >= MAX_RESTARTS => return Err(CodeIntelError::Failed(message.clone())),
            // Failed to start: try again (a server installed meanwhile), bounded.
            Slot::Failed { restarts, .. } => restarts + 1,
            Slot::NotStarted => 0,
        };
        match self.start(config).await {
            Ok(connection) => {
                let server = Arc::new(Server { connection, documents: Mutex::new(HashMap::new()), restarts });
                *slot = Slot::Running(Arc::clone(&server));
                Ok(server)
            }
            Err(message) => {
                *slot = Slot::Failed { message: message.clone(), restarts };
                Err(CodeIntelError::Failed(message))
            }
        }
    }

    async fn start(&self, config: &ServerConfig) -> Result<Arc<Connection>, String> {
        let label = config.label();
        let connection = Connection::spawn(&config.command, &self.root, &config.env)
            .map_err(|err| format!("{label} could not be started ({}): {err}", config.command.join(" ")))?;
        let root_uri = url::Url::from_directory_path(&self.root).map(|u| u.to_string()).unwrap_or_default();
        let name = self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "tandem", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": self.root,
            "workspaceFolders": [{"uri": root_uri, "name": name}],
            "initializationOptions": config.initialization_options,
            "capabilities": client_capabilities(),
        });
        // Servers answer `initialize` at once and index afterwards.
        let answer = connection.request("initialize", params, self.code_intel_timeout).await.map_err(|err| {
            let why = match err {
                RequestError::Timeout => format!("did not answer initialize within {} s", self.code_intel_timeout.as_secs_f32()),
                RequestError::Server(m) => format!("refused initialize: {m}"),
                RequestError::Gone(m) => m,
            };
            format!("{label} failed to start: {why}")
        })?;
        *connection.capabilities.locked() = answer.get("capabilities").cloned().unwrap_or(Value::Null);
        connection.notify("initialized", json!({})).await.map_err(|err| format!("{label} failed to start: {err}"))?;
        tracing::info!(server = %config.name, "language server started");
        Ok(connection)
    }

    /// Open `path` in `server` with `text`, or send the new text if it
    /// changed; returns the URI and the version the server now has.
    async fn sync(&self, index: usize, server: &Server, path: &Path, text: &str) -> Result<(String, i64), CodeIntelError> {
        let uri = url::Url::from_file_path(path).map_err(|()| CodeIntelError::Failed(format!("{} has no file: URI", path.display())))?.to_string();
        let fingerprint = crate::workspace::fingerprint(text.as_bytes());
        let known = server.documents.locked().get(&uri).copied();
        let sent = match known {
            Some((version, sent)) if sent == fingerprint => return Ok((uri, version)),
            Some((version, _)) => {
                let version = version + 1;
                let params = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
                server.connection.notify("textDocument/didChange", params).await.map(|()| version)
            }
            None => {
                let params = json!({"textDocument": {"uri": uri, "languageId": self.configs[index].name, "version": 1, "text": text}});
                server.connection.notify("textDocument/didOpen", params).await.map(|()| 1)
            }
        };
        let version = sent.map_err(|err| CodeIntelError::Failed(format!("cannot send {} to {}: {err}", path.display(), self.configs[index].label())))?;
        server.documents.locked().insert(uri.clone(), (version, fingerprint));
        Ok((uri, version))
    }

    async fn request(&self, index: usize, server: &Server, method: &str, params: Value, what: &str) -> Result<Value, CodeIntelError> {
        let label = self.configs[index].label();
        server.connection.request(method, params, self.code_intel_timeout).await.map_err(|err| match err {
            RequestError::Timeout => CodeIntelError::Timeout(format!(
                "{label} did not answer {what} within {} s (timeouts.codeIntelMs). Try again, or use grep_search.",
                self.code_intel_timeout.as_secs_f32()
            )),
            RequestError::Server(m) => CodeIntelError::Failed(format!("{label} could not answer {what}: {m}")),
            RequestError::Gone(m) => CodeIntelError::Failed(format!("{label} stopped while answering {what} ({m}); it is started again on the next call")),
        })
    }

    /// Wait for diagnostics of `uri` at `version`: a publish tagged with
    /// that version (or later), or — from a server that does not tag them —
    /// the first publish after `seen`, then [`QUIET`] with no other.
    async fn wait_published(&self, server: &Server, uri: &str, version: i64, seen: u64, bound: Duration) -> bool {
        let mut changes = server.connection.subscribe();
        let deadline = tokio::time::Instant::now() + bound;
        let mut quiet_until: Option<tokio::time::Instant> = None;
        loop {
            if let Some(published) = server.connection.published(uri) {
                match published.version {
                    Some(v) if v >= version => return true,
                    Some(_) => {}
                    None if published.seq > seen => {
                        let now = tokio::time::Instant::now();
                        if quiet_until.is_some_and(|q| now >= q) {
                            return true;
                        }
                        quiet_until.get_or_insert(now + QUIET);
                    }
                    None => {}
                }
            }
            if !server.connection.is_alive() {
                return false;
            }
            let wake = quiet_until.map_or(deadline, |q| q.min(deadline));
            match tokio::time::timeout_at(wake, changes.changed()).await {
                Ok(Ok(())) => {
                    // A new publish restarts the quiet time.
                    if quiet_until.is_some() {
                        quiet_until = Some(tokio::time::Instant::now() + QUIET);
                    }
                }
                Ok(Err(_)) => return false,
                Err(_) if tokio::time::Instant::now() >= deadline => return false,
                Err(_) => {}
            }
        }
    }

    /// Shut every running server down (at Tandem's exit).
    pub async fn shutdown(&self) {
        for slot in &self.slots {
            let mut slot = slot.lock().await;
            if let Slot::Running(server) = &*slot {
                server.connection.shutdown().await;
            }
            *slot = Slot::NotStarted;
        }
    }

    /// The servers' states for a front end to show.
    pub fn describe(&self) -> Vec<String> {
        self.configs.iter().map(|c| format!("{}: {} for .{}", c.name, c.command.join(" "), c.filetypes.join(", ."))).collect()
    }
}

/// What Tandem's LSP client supports (positions in UTF-16, LSP's default).
fn client_capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {"configuration": true, "workspaceFolders": true, "symbol": {"dynamicRegistration": false}},
        "textDocument": {
            "synchronization": {"dynamicRegistration": false, "didSave": false},
            "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
            "definition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            "callHierarchy": {"dynamicRegistration": false}
        }
    })
}

/// The LSP method of an operation (the call hierarchy's first step).
fn method_of(operation: Operation) -> Option<&'static str> {
    Some(match operation {
        Operation::Definition => "textDocument/definition",
        Operation::References => "textDocument/references",
        Operation::Implementation => "textDocument/implementation",
        Operation::Hover => "textDocument/hover",
        Operation::DocumentSymbols => "textDocument/documentSymbol",
        Operation::WorkspaceSymbols => "workspace/symbol",
        Operation::IncomingCalls | Operation::OutgoingCalls => "textDocument/prepareCallHierarchy",
        Operation::Diagnostics => return None,
    })
}

#[async_trait]
impl CodeIntel for LanguageServers {
    async fn query(&self, query: &CodeQuery) -> Result<Vec<Value>, CodeIntelError> {
        let Some(method) = method_of(query.operation) else { return Ok(Vec::new()) };
        let what = query.operation.model_name();
        // workspace_symbols without a file asks every server.
        let (Some(path), Some(text)) = (&query.path, &query.text) else {
            let mut results = Vec::new();
            let mut failures = Vec::new();
            for index in 0..self.configs.len() {
                let answer = match self.server(index).await {
                    Ok(server) => self.request(index, &server, method, json!({"query": query.query.clone().unwrap_or_default()}), what).await,
                    Err(err) => Err(err),
                };
                match answer {
                    Ok(answer) => results.push(answer),
                    Err(err) => failures.push(err),
                }
            }
            if results.is_empty() {
                if let Some(err) = failures.into_iter().next() {
                    return Err(err);
                }
            }
            return Ok(results);
        };
        let index = self.index_for(path).ok_or_else(|| self.no_server(path))?;
        let server = self.server(index).await?;
        let (uri, _) = self.sync(index, &server, path, text).await?;
        let mut params = json!({"textDocument": {"uri": uri}});
        if let Some(position) = query.position {
            params["position"] = json!(position);
        }
        match query.operation {
            Operation::References => params["context"] = json!({"includeDeclaration": true}),
            Operation::WorkspaceSymbols => params = json!({"query": query.query.clone().unwrap_or_default()}),
            _ => {}
        }
        let answer = self.request(index, &server, method, params, what).await?;
        if !matches!(query.operation, Operation::IncomingCalls | Operation::OutgoingCalls) {
            return Ok(vec![answer]);
        }
        let calls_method = if query.operation == Operation::IncomingCalls { "callHierarchy/incomingCalls" } else { "callHierarchy/outgoingCalls" };
        let mut results = Vec::new();
        for item in answer.as_array().into_iter().flatten() {
            results.push(self.request(index, &server, calls_method, json!({"item": item}), what).await?);
        }
        Ok(results)
    }

    async fn diagnostics(&self, path: &Path, text: &Arc<str>, settle: Option<Settle>) -> Result<FileDiagnostics, CodeIntelError> {
        let index = self.index_for(path).ok_or_else(|| self.no_server(path))?;
        let server = self.server(index).await?;
        let uri = url::Url::from_file_path(path).map(|u| u.to_string()).unwrap_or_default();
        let seen = server.connection.published(&uri).map_or(0, |p| p.seq);
        let (uri, version) = self.sync(index, &server, path, text).await?;
        // Without `settle` (before an edit, or the diagnostics operation)
        // the document may just have been opened: wait for its first
        // publish within the same bound.
        let bound = settle.map(|s| s.timeout).or(self.diagnostics_timeout).unwrap_or(self.code_intel_timeout);
        let settled = self.wait_published(&server, &uri, version, seen, bound).await;
        let items = server.connection.published(&uri).map(|p| p.items).unwrap_or_default();
        if !server.connection.is_alive() {
            return Err(CodeIntelError::Failed(format!(
                "{} stopped ({}); it is started again on the next call",
                self.configs[index].label(),
                server.connection.death().unwrap_or_default()
            )));
        }
        Ok(FileDiagnostics { items, settled })
    }

    fn follows(&self, path: &Path) -> bool {
        self.index_for(path).is_some_and(|index| self.approved(&self.configs[index]))
    }

    /// Start the file's server (if need be) and open the file there, in the
    /// background, so it is analysed before the agent edits it.
    fn file_read(&self, path: &Path, text: &Arc<str>) {
        let (Some(me), Some(index)) = (self.me.upgrade(), self.index_for(path)) else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (path, text) = (path.to_path_buf(), Arc::clone(text));
        runtime.spawn(async move {
            match me.server(index).await {
                Ok(server) => {
                    if let Err(err) = me.sync(index, &server, &path, &text).await {
                        tracing::debug!(error = err.message(), "cannot open a read file in its language server");
                    }
                }
                Err(err) => tracing::debug!(error = err.message(), "a language server did not start"),
            }
        });
    }

    fn settle_timeout(&self) -> Option<Duration> {
        self.diagnostics_timeout
    }
}
