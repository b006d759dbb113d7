//! The editor's code intelligence: [`EditorCodeIntel`] answers the tools'
//! [`CodeIntel`] questions with the server → client request
//! `tandem/codeIntel`, which the editor plugin answers from the editor's
//! other language servers (VS Code's `vscode.execute…Provider` commands and
//! `vscode.languages.getDiagnostics`; Neovim's attached clients and
//! `vim.diagnostic.get`). Offered only when the client said
//! `"codeIntel": true` in its `initializationOptions`: an older plugin
//! would answer "method not found", so the tool is not offered at all.
//!
//! Positions on the wire are LSP positions in UTF-16 code units (LSP's
//! default), whatever encoding Tandem's own connection negotiated: the
//! plugin converts for each of its servers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::client::{methods, request_with_timeout, ClientError, ClientLink};
use super::config::Settings;
use super::documents::{path_to_uri, Documents};
use crate::sync::RwLockExt;
use crate::tools::ports::code_intel::{CodeIntel, CodeIntelError, CodeQuery, FileDiagnostics, Settle};

/// Diagnostics are "settled" once none changed for this long after the
/// first change the edit caused (VS Code's TypeScript publishes syntax and
/// semantic diagnostics one after the other).
pub const QUIET_MS: u64 = 300;

pub struct EditorCodeIntel {
    client: Arc<dyn ClientLink>,
    documents: Arc<Documents>,
    settings: Arc<RwLock<Settings>>,
    roots: Vec<PathBuf>,
}

impl EditorCodeIntel {
    pub fn new(client: Arc<dyn ClientLink>, documents: Arc<Documents>, settings: Arc<RwLock<Settings>>, roots: Vec<PathBuf>) -> Self {
        EditorCodeIntel { client, documents, settings, roots }
    }

    fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    fn uri(&self, path: &Path) -> Result<String, CodeIntelError> {
        match self.documents.uri(path).or_else(|| path_to_uri(path)) {
            Some(uri) => Ok(uri.as_str().to_string()),
            None => Err(CodeIntelError::Failed(format!("{} has no file: URI", path.display()))),
        }
    }

    fn display(&self, path: &Path) -> String {
        match self.roots.first() {
            Some(root) => crate::workspace::display_relative(root, path),
            None => path.display().to_string(),
        }
    }

    async fn ask(&self, params: Value, timeout: Duration, what: &str) -> Result<Value, CodeIntelError> {
        match request_with_timeout(&*self.client, methods::CODE_INTEL, params, timeout).await {
            Ok(answer) => Ok(answer),
            Err(ClientError::Timeout(t)) => Err(CodeIntelError::Timeout(format!(
                "the editor's language servers did not answer {what} within {} s (timeouts.codeIntelMs). Try again, or use grep_search.",
                t.as_secs_f32()
            ))),
            Err(ClientError::Failed(message)) => Err(CodeIntelError::Failed(format!("the editor could not answer {what}: {message}"))),
        }
    }

    /// The plugin says how many language servers it asked (Neovim knows;
    /// VS Code's commands do not tell): none is a clear answer.
    fn no_server(&self, answer: &Value, path: Option<&Path>) -> Option<CodeIntelError> {
        if answer.get("servers").and_then(Value::as_u64) != Some(0) {
            return None;
        }
        let file = path.map(|p| self.display(p)).unwrap_or_else(|| "this workspace".into());
        Some(CodeIntelError::NoServer(format!(
            "no language server in the editor handles {file} (none besides Tandem is attached). Start one for this language in the editor, or configure lspServers in .tandem/settings.json."
        )))
    }
}

#[async_trait]
impl CodeIntel for EditorCodeIntel {
    async fn query(&self, query: &CodeQuery) -> Result<Vec<Value>, CodeIntelError> {
        let mut params = json!({"operation": query.operation.wire_name()});
        if let Some(path) = &query.path {
            params["uri"] = json!(self.uri(path)?);
        }
        if let Some(position) = query.position {
            params["position"] = json!(position);
        }
        if let Some(text) = &query.query {
            params["query"] = json!(text);
        }
        let timeout = self.settings().timeouts.code_intel();
        let answer = self.ask(params, timeout, query.operation.model_name()).await?;
        if let Some(err) = self.no_server(&answer, query.path.as_deref()) {
            return Err(err);
        }
        match answer.get("results") {
            Some(Value::Array(results)) => Ok(results.clone()),
            // A Lua plugin's empty table goes out as `{}`.
            Some(Value::Object(empty)) if empty.is_empty() => Ok(Vec::new()),
            _ => Err(CodeIntelError::Failed("the editor's answer to tandem/codeIntel has no \"results\" list".into())),
        }
    }

    async fn diagnostics(&self, path: &Path, _text: &Arc<str>, settle: Option<Settle>) -> Result<FileDiagnostics, CodeIntelError> {
        let mut params = json!({"operation": "diagnostics", "uri": self.uri(path)?});
        let settings = self.settings();
        let mut timeout = settings.timeouts.code_intel();
        if let Some(settle) = settle {
            let bound = u64::try_from(settle.timeout.as_millis()).unwrap_or(u64::MAX);
            params["settle"] = json!({"version": settle.version, "quietMs": QUIET_MS, "timeoutMs": bound});
            // The plugin waits up to the bound itself; the request's own
            // timeout leaves it room to answer after that.
            timeout = settle.timeout + settings.timeouts.request();
        }
        let answer = self.ask(params, timeout, "diagnostics").await?;
        if let Some(err) = self.no_server(&answer, Some(path)) {
            return Err(err);
        }
        let items = match answer.get("diagnostics") {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::Object(empty)) if empty.is_empty() => Vec::new(),
            _ => return Err(CodeIntelError::Failed("the editor's answer to tandem/codeIntel has no \"diagnostics\" list".into())),
        };
        let settled = answer.get("settled").and_then(Value::as_bool).unwrap_or(true);
        Ok(FileDiagnostics { items, settled })
    }

    /// An edit to a document open in the editor: its language servers
    /// follow the buffer (a closed file is not theirs to check).
    fn follows(&self, path: &Path) -> bool {
        self.documents.state(path).is_some()
    }

    fn settle_timeout(&self) -> Option<Duration> {
        self.settings().timeouts.diagnostics()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
    use crate::workspace::Workspace;

    /// Answers `tandem/codeIntel` as a plugin would, and keeps the requests.
    struct Plugin {
        answer: Value,
        requests: Mutex<Vec<Value>>,
    }

    #[async_trait]
    impl ClientLink for Plugin {
        async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError> {
            assert_eq!(method, methods::CODE_INTEL);
            self.requests.lock().unwrap().push(params);
            if self.answer.is_null() {
                // A plugin whose language server never answers.
                std::future::pending::<()>().await;
            }
            Ok(self.answer.clone())
        }
        async fn notify(&self, _method: &'static str, _params: Value) {}
    }

    fn workspace_dir() -> (tempfile::TempDir, PathBuf, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // As Tandem names it to the editor (`file:///C%3A/…` on Windows).
        let uri = crate::lsp::documents::path_to_uri(&root.join("app.ts")).unwrap().to_string();
        (dir, root, uri)
    }

    async fn run(root: &Path, answer: Value, settings: Settings, calls: &[Value]) -> (Vec<String>, Vec<Value>) {
        let root = root.to_path_buf();
        std::fs::write(root.join("app.ts"), "export function add(a: number, b: number) { return a + b; }\nconst s = add(1, 2) + add(3, 4);\n").unwrap();
        let plugin = Arc::new(Plugin { answer, requests: Mutex::new(Vec::new()) });
        let provider = EditorCodeIntel::new(plugin.clone(), Arc::new(Documents::default()), Arc::new(RwLock::new(settings)), vec![root.clone()]);
        let executor = crate::tools::builtin::code_intel::install(Executor::new(ToolRegistry::builtin()), Arc::new(provider)).with_results_dir(None);
        let ctx = ToolContext::new(Arc::new(Workspace::new(&root).unwrap()));
        let select = ToolCall::new("t0", "tool_search", json!({"query": "select:code_intel"}));
        assert!(!executor.execute(&select, &ctx).await.unwrap().is_error);
        let mut results = Vec::new();
        for (i, input) in calls.iter().enumerate() {
            let call = ToolCall::new(format!("t{}", i + 1), "code_intel", input.clone());
            results.push(executor.execute(&call, &ctx).await.unwrap().content);
        }
        let requests = plugin.requests.lock().unwrap().clone();
        (results, requests)
    }

    #[tokio::test]
    async fn references_are_asked_of_the_editor_at_the_named_symbol() {
        let (_dir, root, uri) = workspace_dir();
        let answer = json!({"results": [[
                {"uri": uri, "range": {"start": {"line": 0, "character": 16}, "end": {"line": 0, "character": 19}}},
                {"uri": uri, "range": {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 13}}},
                {"uri": uri, "range": {"start": {"line": 1, "character": 22}, "end": {"line": 1, "character": 25}}}
            ]]});
        let (results, requests) = run(&root, answer, Settings::default(), &[json!({"operation": "references", "file_path": "app.ts", "line": 2, "symbol": "add"})]).await;
        assert_eq!(requests[0], json!({"operation": "references", "uri": uri, "position": {"line": 1, "character": 10}}));
        expect_test::expect![[r#"
            app.ts:1:17: export function add(a: number, b: number) { return a + b; }
            app.ts:2:11: const s = add(1, 2) + add(3, 4);
            app.ts:2:23: const s = add(1, 2) + add(3, 4);"#]]
        .assert_eq(&results[0]);
    }

    #[tokio::test]
    async fn faults_are_results_the_model_reads() {
        let calls = [
            json!({"operation": "definition", "file_path": "app.ts", "line": 2, "symbol": "sub"}),
            json!({"operation": "definition", "file_path": "app.ts", "line": 9, "symbol": "add"}),
            json!({"operation": "definition", "file_path": "../outside.ts", "line": 1, "symbol": "add"}),
            json!({"operation": "definition", "file_path": "app.ts", "line": 2, "symbol": "add"}),
        ];
        let (_dir, root, _) = workspace_dir();
        let (results, requests) = run(&root, json!({"results": [], "servers": 0}), Settings::default(), &calls).await;
        assert!(results[0].starts_with("Error: \"sub\" is not on line 2 of app.ts. That line has \"const\", \"s\", \"add\""), "{}", results[0]);
        assert_eq!(results[1], "Error: line 9 is past the end of app.ts, which has 3 lines.");
        assert!(results[2].contains("outside"), "{}", results[2]);
        assert!(results[3].contains("no language server in the editor handles app.ts"), "{}", results[3]);
        assert_eq!(requests.len(), 1, "only the good position reached the editor");

        let mut settings = Settings::default();
        settings.timeouts.code_intel_ms = 50;
        let (results, _) = run(&root, Value::Null, settings, &calls[3..]).await;
        expect_test::expect!["Error: the editor's language servers did not answer definition within 0.05 s (timeouts.codeIntelMs). Try again, or use grep_search."]
            .assert_eq(&results[0]);
    }
}
