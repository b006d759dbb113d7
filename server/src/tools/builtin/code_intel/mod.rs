//! `code_intel`: what the language servers know — definitions, references,
//! implementations, hover, symbols, call hierarchy and diagnostics — asked
//! through the [`CodeIntel`] port (`tools::ports::code_intel`), which the
//! layers above implement; the tool holds its provider.
//!
//! By concern: [`position`] turns the model's line and name into an LSP
//! position, [`answers`] normalises and renders what the servers said,
//! [`diagnostics`] renders a file's diagnostics, and [`observer`] adds the
//! diagnostics after an edit (and tells the provider what was read): a
//! call observer the executor runs around every call. The normalising of
//! LSP's shapes lives here, once:
//! `Location | Location[] | LocationLink[]`, `DocumentSymbol[] |
//! SymbolInformation[]`, `Hover`, call hierarchy calls, `Diagnostic`.
//!
//! Positions come from the model as a path, a 1-based line and a symbol
//! name (models are bad at columns): the name is found on the line and
//! turned into an LSP position (UTF-16 code units, LSP's default; the
//! providers convert for servers that negotiated another encoding).
//! Results are `path:line:col: snippet` lines, 1-based, columns in
//! characters, bounded like grep's.
//!

mod answers;
mod diagnostics;
mod observer;
mod position;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::ports::code_intel::{CodeIntel, CodeQuery, Operation};
use crate::tools::{Executor, Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::Workspace;
use answers::render_answers;
use diagnostics::render_diagnostics;
pub use observer::EditDiagnostics;
pub use position::resolve_position;

/// At most this many locations or symbols are shown; the rest are counted.
pub const MAX_SHOWN_RESULTS: usize = 100;
/// At most this many diagnostics are listed after an edit.
pub const MAX_SHOWN_DIAGNOSTICS: usize = 30;
/// A snippet line longer than this many characters is cut.
pub(super) const MAX_SNIPPET_CHARS: usize = 200;
/// Hover text is cut at this many characters.
pub(super) const MAX_HOVER_CHARS: usize = 4000;
/// Names listed when a symbol is not on the line.
pub(super) const MAX_NAMES_LISTED: usize = 30;

pub(super) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The executor with code intelligence from `provider`: the deferred
/// `code_intel` tool, and the diagnostics after an edit to a file the
/// provider follows ([`EditDiagnostics`]). Without it neither exists (an
/// editor plugin from before the feature, no `lspServers`).
pub fn install(executor: Executor, provider: Arc<dyn CodeIntel>) -> Executor {
    executor.with_tool(Arc::new(CodeIntelTool { provider: Arc::clone(&provider) })).with_observer(Arc::new(EditDiagnostics::new(provider)))
}

/// Ask the language servers what they know about the code: where a symbol is defined, its references, implementations, type and docs (hover), the symbols of a file or of the workspace, who calls a function and what it calls, and a file's errors and warnings (diagnostics).
///
/// These come from real language servers (the editor's own, or ones configured in lspServers), so they follow the language's rules: prefer them to grep_search for finding a function's callers or definition.
///
/// Point at a symbol with file_path, line (1-based) and symbol, its name as written on that line (e.g. line 12, symbol "parse_config"); column (1-based, in characters) picks one of several occurrences, or stands in for symbol. Results are `path:line:col: text` lines, at most 100, then the number of further results.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CodeIntelArgs {
    /// What to ask: "definition", "references", "implementation", "hover", "incoming_calls", "outgoing_calls" (these need file_path, line and symbol), "document_symbols" or "diagnostics" (file_path only), "workspace_symbols" (query).
    pub operation: Operation,
    /// The file, relative to the workspace root (or absolute).
    #[serde(default)]
    pub file_path: Option<String>,
    /// The 1-based line the symbol is on.
    #[serde(default)]
    pub line: Option<u32>,
    /// The symbol's name as it appears on the line, e.g. "parse_config".
    #[serde(default)]
    pub symbol: Option<String>,
    /// The 1-based column (in characters) of the symbol on the line, when the name appears there more than once or is not given.
    #[serde(default)]
    pub column: Option<u32>,
    /// For workspace_symbols: the name (or part of it) to look for.
    #[serde(default)]
    pub query: Option<String>,
}

/// The `code_intel` tool, over the provider it was installed with.
pub struct CodeIntelTool {
    provider: Arc<dyn CodeIntel>,
}

impl CodeIntelTool {
    pub const NAME: &'static str = "code_intel";
}

#[async_trait]
impl Tool for CodeIntelTool {
    type Args = CodeIntelArgs;
    type Plan = ();
    const NAME: &'static str = "code_intel";
    const ONLY_READS: bool = true;

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        let paths = match &args.file_path {
            Some(path) => vec![ctx.workspace.resolve_lenient(path)],
            None => ctx.workspace.roots().to_vec(),
        };
        ToolKind::Read { paths }
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    fn deferred(&self) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        let mut summary = args.operation.model_name().to_string();
        if let Some(path) = &args.file_path {
            summary.push(' ');
            summary.push_str(path);
            if let Some(line) = args.line {
                summary.push_str(&format!(":{line}"));
            }
        }
        if let Some(name) = args.symbol.as_ref().or(args.query.as_ref()) {
            summary.push_str(&format!(" {name}"));
        }
        summary
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, args: Self::Args, _plan: (), ctx: &ToolContext) -> Result<String, ToolError> {
        let provider = &self.provider;
        let query = build_query(&args, &ctx.workspace)?;
        if args.operation == Operation::Diagnostics {
            let (Some(path), Some(text)) = (&query.path, &query.text) else {
                return Err(ToolError::model("Error: diagnostics needs file_path."));
            };
            let found = tokio::select! {
                found = provider.diagnostics(path, text, None) => found,
                () = ctx.cancel.cancelled() => return Err(ToolError::model("Cancelled.")),
            };
            let found = found.map_err(|e| ToolError::model(format!("Error: {}", e.message())))?;
            return Ok(render_diagnostics(&ctx.workspace, path, &found.items, None, usize::MAX));
        }
        let answers = tokio::select! {
            answers = provider.query(&query) => answers,
            () = ctx.cancel.cancelled() => return Err(ToolError::model("Cancelled.")),
        };
        let answers = answers.map_err(|e| ToolError::model(format!("Error: {}", e.message())))?;
        Ok(render_answers(&ctx.workspace, &args, &answers))
    }
}

/// Resolve the call's file, text and position; errors are for the model.
fn build_query(args: &CodeIntelArgs, workspace: &Workspace) -> Result<CodeQuery, ToolError> {
    let operation = args.operation;
    let name = operation.model_name();
    if operation == Operation::WorkspaceSymbols {
        let query = args.query.clone().or_else(|| args.symbol.clone()).filter(|q| !q.trim().is_empty());
        let Some(query) = query else {
            return Err(ToolError::model("Error: workspace_symbols needs query: the name (or part of it) to look for."));
        };
        let (path, text) = match &args.file_path {
            Some(user_path) => {
                let (path, text) = read_target(workspace, user_path)?;
                (Some(path), Some(text))
            }
            None => (None, None),
        };
        return Ok(CodeQuery { operation, path, text, position: None, query: Some(query) });
    }
    let Some(user_path) = args.file_path.as_deref() else {
        return Err(ToolError::model(format!("Error: {name} needs file_path.")));
    };
    let (path, text) = read_target(workspace, user_path)?;
    let position = if operation.needs_position() {
        let display = workspace.display_path(&path);
        Some(resolve_position(&text, &display, args.line, args.symbol.as_deref(), args.column).map_err(ToolError::model)?)
    } else {
        None
    };
    Ok(CodeQuery { operation, path: Some(path), text: Some(text), position, query: None })
}

fn read_target(workspace: &Workspace, user_path: &str) -> Result<(PathBuf, Arc<str>), ToolError> {
    let path = workspace.resolve_for_read(user_path).map_err(|e| ToolError::model(e.message()))?;
    let display = workspace.display_path(&path);
    let file = workspace.read(&path).map_err(|e| ToolError::model(e.message(&display)))?;
    Ok((path, file.text))
}
