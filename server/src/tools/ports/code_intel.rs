//! The code intelligence port: what the `code_intel` tool (and the
//! diagnostics after an edit) ask of whoever answers — the editor's own
//! language servers (the LSP front end's `tandem/codeIntel` request its
//! plugin answers) or servers Tandem starts itself (`lspServers`). `tools/`
//! never knows which one answers.
//!
//! The provider speaks LSP's own shapes (JSON): both implementations hand
//! back what their servers said, and the tool normalises them, once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What to ask the language servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Errors, warnings and hints for a file, from every language server.
    Diagnostics,
    /// Where the symbol is defined.
    Definition,
    /// Every use of the symbol.
    References,
    /// Implementations of an interface, trait or abstract method.
    Implementation,
    /// The type and documentation of the symbol.
    Hover,
    /// The symbols (functions, classes, …) defined in a file.
    DocumentSymbols,
    /// Symbols anywhere in the workspace whose name matches `query`.
    WorkspaceSymbols,
    /// The functions that call the function at the position.
    IncomingCalls,
    /// The functions the function at the position calls.
    OutgoingCalls,
}

impl Operation {
    /// The name in the `tandem/codeIntel` request (LSP's own spelling).
    pub fn wire_name(self) -> &'static str {
        match self {
            Operation::Diagnostics => "diagnostics",
            Operation::Definition => "definition",
            Operation::References => "references",
            Operation::Implementation => "implementation",
            Operation::Hover => "hover",
            Operation::DocumentSymbols => "documentSymbols",
            Operation::WorkspaceSymbols => "workspaceSymbols",
            Operation::IncomingCalls => "incomingCalls",
            Operation::OutgoingCalls => "outgoingCalls",
        }
    }

    /// The name the model uses.
    pub fn model_name(self) -> &'static str {
        match self {
            Operation::Diagnostics => "diagnostics",
            Operation::Definition => "definition",
            Operation::References => "references",
            Operation::Implementation => "implementation",
            Operation::Hover => "hover",
            Operation::DocumentSymbols => "document_symbols",
            Operation::WorkspaceSymbols => "workspace_symbols",
            Operation::IncomingCalls => "incoming_calls",
            Operation::OutgoingCalls => "outgoing_calls",
        }
    }

    /// The operation asks about the symbol at a position.
    pub fn needs_position(self) -> bool {
        !matches!(self, Operation::Diagnostics | Operation::DocumentSymbols | Operation::WorkspaceSymbols)
    }
}

/// A position as LSP has it: 0-based line, UTF-16 code units into the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

/// One question to the language servers.
#[derive(Debug, Clone)]
pub struct CodeQuery {
    pub operation: Operation,
    /// The file asked about (absolute, resolved; for `workspace_symbols`
    /// the file whose language decides which server is asked, if any).
    pub path: Option<PathBuf>,
    /// The file's text as the agent sees it (its open buffer, else the
    /// disk), for providers that must open the file in their server.
    pub text: Option<Arc<str>>,
    pub position: Option<Position>,
    /// The `workspace_symbols` query.
    pub query: Option<String>,
}

/// How long to wait for diagnostics to settle after an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    /// The document version the edit produced (editor buffers); `None`
    /// when the provider numbers the versions itself.
    pub version: Option<i32>,
    /// The bound on the whole wait.
    pub timeout: Duration,
}

/// A file's diagnostics as a provider reports them.
#[derive(Debug, Clone, Default)]
pub struct FileDiagnostics {
    /// LSP `Diagnostic` objects.
    pub items: Vec<Value>,
    /// False when the wait for the servers to settle hit its bound.
    pub settled: bool,
}

/// Why a provider has no answer. Each message is written for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeIntelError {
    /// No language server handles this file (the message names the setting).
    NoServer(String),
    /// A server did not answer in time.
    Timeout(String),
    /// A server failed or crashed; the message says what happened.
    Failed(String),
}

impl CodeIntelError {
    pub fn message(&self) -> &str {
        match self {
            CodeIntelError::NoServer(m) | CodeIntelError::Timeout(m) | CodeIntelError::Failed(m) => m,
        }
    }
}

/// Who answers code intelligence questions: the editor's language servers
/// (LSP front end) or servers Tandem started itself (`lspServers`).
#[async_trait]
pub trait CodeIntel: Send + Sync {
    /// The answer of each language server that answered, in LSP's shape
    /// for the operation (for the call hierarchy: the incoming or outgoing
    /// calls of the items at the position).
    async fn query(&self, query: &CodeQuery) -> Result<Vec<Value>, CodeIntelError>;

    /// The diagnostics of `path`, whose text is now `text`; with `settle`,
    /// once the servers have settled after an edit (bounded).
    async fn diagnostics(&self, path: &Path, text: &Arc<str>, settle: Option<Settle>) -> Result<FileDiagnostics, CodeIntelError>;

    /// True when an edit to `path` is followed by diagnostics: the file is
    /// open in an editor that answers, or a configured server handles it.
    fn follows(&self, path: &Path) -> bool;

    /// The agent read `path` (a provider that runs its own servers opens it
    /// there, so the edit that follows has a baseline). Must not block.
    fn file_read(&self, _path: &Path, _text: &Arc<str>) {}

    /// The bound on the wait for diagnostics after an edit (`None`: none
    /// are added after edits).
    fn settle_timeout(&self) -> Option<Duration>;
}
