//! `code_intel`: what the language servers know — definitions, references,
//! implementations, hover, symbols, call hierarchy and diagnostics — asked
//! through a [`CodeIntel`] provider this module owns and the layers above
//! implement: the editor front end asks the editor's own language servers
//! (the `tandem/codeIntel` request its plugin answers), the headless one
//! asks servers Tandem starts itself (`lspServers`). `tools/` never knows
//! which one answers.
//!
//! The provider speaks LSP's own shapes (JSON), so both implementations hand
//! back what their servers said and the normalising lives here, once:
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
//! The tool is also where diagnostics after an edit are formatted
//! ([`EditWatch`]): the executor takes the file's diagnostics before an
//! edit to a followed file and asks again once the servers have settled.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::Workspace;

/// At most this many locations or symbols are shown; the rest are counted.
pub const MAX_SHOWN_RESULTS: usize = 100;
/// At most this many diagnostics are listed after an edit.
pub const MAX_SHOWN_DIAGNOSTICS: usize = 30;
/// A snippet line longer than this many characters is cut.
const MAX_SNIPPET_CHARS: usize = 200;
/// Hover text is cut at this many characters.
const MAX_HOVER_CHARS: usize = 4000;
/// Names listed when a symbol is not on the line.
const MAX_NAMES_LISTED: usize = 30;

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

pub struct CodeIntelTool;

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
        let Some(provider) = ctx.code_intel.clone() else {
            return Err(ToolError::model(
                "Error: no language servers answer here: the editor's plugin does not offer code intelligence and no lspServers are configured in .tandem/settings.json.",
            ));
        };
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

/// The lines of a text as LSP counts them (`\n`, `\r\n`; a lone `\r` too).
fn lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    lines.push(&text[start..]);
    lines
}

fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifiers on a line, each once, in order.
fn names_on(line: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for word in line.split(|c: char| !is_identifier_char(c)) {
        if !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()) && !names.contains(&word) {
            names.push(word);
        }
    }
    names
}

/// Byte offsets where `symbol` occurs on `line` as a whole name (falling
/// back to any occurrence when it never stands alone, e.g. `foo.bar`).
fn occurrences(line: &str, symbol: &str) -> Vec<usize> {
    let all: Vec<usize> = line.match_indices(symbol).map(|(i, _)| i).collect();
    let whole: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| {
            let before = line[..i].chars().next_back().is_none_or(|c| !is_identifier_char(c));
            let after = line[i + symbol.len()..].chars().next().is_none_or(|c| !is_identifier_char(c));
            before && after
        })
        .collect();
    if whole.is_empty() {
        all
    } else {
        whole
    }
}

/// The LSP position of a symbol the model named by line and name (or column).
pub fn resolve_position(text: &str, display: &str, line: Option<u32>, symbol: Option<&str>, column: Option<u32>) -> Result<Position, String> {
    let Some(line_no) = line.filter(|l| *l > 0) else {
        return Err("Error: give line (1-based) and symbol, the name as written on that line.".into());
    };
    let all = lines(text);
    let Some(line_text) = all.get(line_no as usize - 1) else {
        return Err(format!("Error: line {line_no} is past the end of {display}, which has {} lines.", all.len()));
    };
    let symbol = symbol.map(str::trim).filter(|s| !s.is_empty());
    let byte = match (symbol, column) {
        (Some(symbol), column) => {
            let found = occurrences(line_text, symbol);
            if found.is_empty() {
                let names = names_on(line_text);
                let listed = if names.is_empty() {
                    "no names".to_string()
                } else {
                    let shown: Vec<String> = names.iter().take(MAX_NAMES_LISTED).map(|n| format!("\"{n}\"")).collect();
                    shown.join(", ")
                };
                return Err(format!(
                    "Error: \"{symbol}\" is not on line {line_no} of {display}. That line has {listed}: {:?}. Check the line number (read_file shows them), or use grep_search to find the symbol.",
                    truncate_chars(line_text.trim(), MAX_SNIPPET_CHARS)
                ));
            }
            match column {
                // The occurrence that starts nearest the column the model gave.
                Some(column) => {
                    let wanted = column.saturating_sub(1) as usize;
                    found.iter().copied().min_by_key(|&b| line_text[..b].chars().count().abs_diff(wanted)).unwrap_or(found[0])
                }
                None => found[0],
            }
        }
        (None, Some(column)) if column > 0 => {
            let chars = line_text.chars().count();
            let wanted = column as usize - 1;
            if wanted > chars {
                return Err(format!("Error: column {column} is past the end of line {line_no} of {display}, which has {chars} characters."));
            }
            line_text.char_indices().nth(wanted).map_or(line_text.len(), |(b, _)| b)
        }
        _ => return Err("Error: give symbol, the name as written on the line (or column, 1-based).".into()),
    };
    let character = line_text[..byte].encode_utf16().count();
    Ok(Position { line: line_no - 1, character: u32::try_from(character).unwrap_or(u32::MAX) })
}

/// One place in a file a result points to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    path: PathBuf,
    line: u32,
    character: u32,
    /// Symbol results: "function parse_config (in Config)".
    label: Option<String>,
}

fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let url = url::Url::parse(uri).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    let path = url.to_file_path().ok()?;
    Some(path.canonicalize().unwrap_or(path))
}

fn position_of(value: &Value) -> Option<(u32, u32)> {
    let line = u32::try_from(value.get("line")?.as_u64()?).ok()?;
    let character = u32::try_from(value.get("character")?.as_u64()?).ok()?;
    Some((line, character))
}

fn range_start(range: &Value) -> Option<(u32, u32)> {
    position_of(range.get("start")?)
}

/// A `Location` or `LocationLink` as a place.
fn location_place(value: &Value) -> Option<Place> {
    let (uri, range) = match value.get("targetUri") {
        Some(uri) => (uri, value.get("targetSelectionRange").or_else(|| value.get("targetRange"))?),
        None => (value.get("uri")?, value.get("range")?),
    };
    let path = uri_to_path(uri.as_str()?)?;
    let (line, character) = range_start(range)?;
    Some(Place { path, line, character, label: None })
}

/// `Location | Location[] | LocationLink[] | null`, flattened.
fn locations(answer: &Value) -> Vec<Place> {
    match answer {
        Value::Array(items) => items.iter().filter_map(location_place).collect(),
        Value::Object(_) => location_place(answer).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// LSP's `SymbolKind` numbers, as words.
fn symbol_kind(kind: Option<u64>) -> &'static str {
    const KINDS: [&str; 26] = [
        "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum", "interface", "function",
        "variable", "constant", "string", "number", "boolean", "array", "object", "key", "null", "enum member", "struct", "event",
        "operator", "type parameter",
    ];
    kind.and_then(|k| usize::try_from(k).ok()).and_then(|k| k.checked_sub(1)).and_then(|i| KINDS.get(i)).copied().unwrap_or("symbol")
}

fn symbol_label(symbol: &Value, container: Option<&str>) -> String {
    let name = symbol.get("name").and_then(Value::as_str).unwrap_or("?");
    let kind = symbol_kind(symbol.get("kind").and_then(Value::as_u64));
    let container = container.or_else(|| symbol.get("containerName").and_then(Value::as_str)).filter(|c| !c.is_empty());
    match container {
        Some(container) => format!("{kind} {name} (in {container})"),
        None => format!("{kind} {name}"),
    }
}

/// `DocumentSymbol[]` (nested; `path` is the file asked about) or
/// `SymbolInformation[]` / `WorkspaceSymbol[]` (each with its location).
fn symbols(answer: &Value, path: Option<&Path>, out: &mut Vec<Place>, container: Option<&str>) {
    let Value::Array(items) = answer else { return };
    for symbol in items {
        let label = symbol_label(symbol, container);
        if let Some(location) = symbol.get("location") {
            let Some(file) = location.get("uri").and_then(Value::as_str).and_then(uri_to_path) else { continue };
            let (line, character) = location.get("range").and_then(range_start).unwrap_or((0, 0));
            out.push(Place { path: file, line, character, label: Some(label) });
        } else if let Some(path) = path {
            let range = symbol.get("selectionRange").or_else(|| symbol.get("range"));
            let Some((line, character)) = range.and_then(range_start) else { continue };
            out.push(Place { path: path.to_path_buf(), line, character, label: Some(label) });
            if let Some(children) = symbol.get("children") {
                let name = symbol.get("name").and_then(Value::as_str);
                symbols(children, Some(path), out, name);
            }
        }
    }
}

/// `CallHierarchyIncomingCall[]` (`from`) or `…OutgoingCall[]` (`to`).
fn calls(answer: &Value, field: &str, out: &mut Vec<Place>) {
    let Value::Array(items) = answer else { return };
    for call in items {
        let Some(item) = call.get(field) else { continue };
        let Some(path) = item.get("uri").and_then(Value::as_str).and_then(uri_to_path) else { continue };
        let range = item.get("selectionRange").or_else(|| item.get("range"));
        let (line, character) = range.and_then(range_start).unwrap_or((0, 0));
        let label = symbol_label(item, item.get("detail").and_then(Value::as_str));
        out.push(Place { path, line, character, label: Some(label) });
    }
}

/// Hover `contents`: `MarkedString | MarkedString[] | MarkupContent`.
fn hover_text(answer: &Value) -> String {
    fn marked(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => {
                let text = o.get("value")?.as_str()?;
                match o.get("language").and_then(Value::as_str) {
                    Some(language) => Some(format!("```{language}\n{text}\n```")),
                    None => Some(text.to_string()),
                }
            }
            _ => None,
        }
    }
    let Some(contents) = answer.get("contents") else { return String::new() };
    let parts: Vec<String> = match contents {
        Value::Array(items) => items.iter().filter_map(marked).collect(),
        other => marked(other).into_iter().collect(),
    };
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n")
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Reads the lines of result files (each file once), inside the workspace only.
struct Snippets<'a> {
    workspace: &'a Workspace,
    files: HashMap<PathBuf, Option<Arc<str>>>,
}

impl<'a> Snippets<'a> {
    fn new(workspace: &'a Workspace) -> Self {
        Snippets { workspace, files: HashMap::new() }
    }

    /// The file's text, when it is inside the workspace (results may point
    /// into a standard library elsewhere: those are named, not read).
    fn text(&mut self, path: &Path) -> Option<Arc<str>> {
        let workspace = self.workspace;
        self.files
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let confined = workspace.resolve_for_read(&path.to_string_lossy()).ok()?;
                workspace.read(&confined).ok().map(|f| f.text)
            })
            .clone()
    }

    /// `path:line:col` (1-based, the column in characters) and the line's text.
    fn describe(&mut self, place: &Place) -> (String, Option<String>) {
        let display = self.workspace.display_path(&place.path);
        let line_text = self.text(&place.path).and_then(|text| lines(&text).get(place.line as usize).map(|l| l.to_string()));
        let column = match &line_text {
            Some(line) => utf16_to_chars(line, place.character) + 1,
            None => place.character as usize + 1,
        };
        let snippet = line_text.map(|l| truncate_chars(l.trim(), MAX_SNIPPET_CHARS));
        (format!("{display}:{}:{column}", place.line + 1), snippet)
    }
}

/// Characters in the first `units` UTF-16 code units of `line` (clamped).
fn utf16_to_chars(line: &str, units: u32) -> usize {
    let mut seen = 0usize;
    for (count, c) in line.chars().enumerate() {
        if seen >= units as usize {
            return count;
        }
        seen += c.len_utf16();
    }
    line.chars().count()
}

fn render_places(workspace: &Workspace, places: Vec<Place>, what: &str) -> String {
    let mut unique: Vec<Place> = Vec::with_capacity(places.len().min(MAX_SHOWN_RESULTS * 2));
    // Several servers may give the same answer (and some list a place twice).
    let mut seen = std::collections::HashSet::new();
    let mut total = 0usize;
    for place in places {
        if !seen.insert((place.path.clone(), place.line, place.character, place.label.clone())) {
            continue;
        }
        total += 1;
        if unique.len() < MAX_SHOWN_RESULTS {
            unique.push(place);
        }
    }
    if total == 0 {
        return format!("No {what} found.");
    }
    let mut snippets = Snippets::new(workspace);
    let mut out = Vec::with_capacity(unique.len() + 1);
    for place in &unique {
        let (at, snippet) = snippets.describe(place);
        let line = match (&place.label, snippet) {
            (Some(label), Some(snippet)) => format!("{at}: {label}: {snippet}"),
            (Some(label), None) => format!("{at}: {label}"),
            (None, Some(snippet)) => format!("{at}: {snippet}"),
            (None, None) => at,
        };
        out.push(line);
    }
    if total > unique.len() {
        out.push(format!("... and {} more matches", total - unique.len()));
    }
    out.join("\n")
}

fn render_answers(workspace: &Workspace, args: &CodeIntelArgs, answers: &[Value]) -> String {
    let operation = args.operation;
    let mut places = Vec::new();
    match operation {
        Operation::Definition | Operation::References | Operation::Implementation => {
            answers.iter().for_each(|a| places.extend(locations(a)));
            let what = match operation {
                Operation::Definition => "definition",
                Operation::References => "references",
                _ => "implementations",
            };
            render_places(workspace, places, what)
        }
        Operation::Hover => {
            let text: Vec<String> = answers.iter().map(hover_text).filter(|t| !t.is_empty()).collect();
            if text.is_empty() {
                "No hover information at that position.".to_string()
            } else {
                truncate_chars(&text.join("\n\n---\n\n"), MAX_HOVER_CHARS)
            }
        }
        Operation::DocumentSymbols | Operation::WorkspaceSymbols => {
            let path = args.file_path.as_deref().and_then(|p| workspace.resolve_for_read(p).ok());
            let path = if operation == Operation::DocumentSymbols { path } else { None };
            answers.iter().for_each(|a| symbols(a, path.as_deref(), &mut places, None));
            render_places(workspace, places, "symbols")
        }
        Operation::IncomingCalls => {
            answers.iter().for_each(|a| calls(a, "from", &mut places));
            render_places(workspace, places, "callers")
        }
        Operation::OutgoingCalls => {
            answers.iter().for_each(|a| calls(a, "to", &mut places));
            render_places(workspace, places, "calls")
        }
        Operation::Diagnostics => String::new(),
    }
}

/// LSP severity as a word; a missing severity is an error (the spec leaves it
/// to the client, and VS Code shows it as one).
fn severity(diagnostic: &Value) -> (u64, &'static str) {
    match diagnostic.get("severity").and_then(Value::as_u64) {
        Some(2) => (2, "warning"),
        Some(3) => (3, "info"),
        Some(4) => (4, "hint"),
        _ => (1, "error"),
    }
}

/// What makes a diagnostic "the same" before and after an edit: not its
/// position (lines move), but what it says and who says it.
fn identity(diagnostic: &Value) -> (u64, String, String, String) {
    let code = match diagnostic.get("code") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let source = diagnostic.get("source").and_then(Value::as_str).unwrap_or_default().to_string();
    let message = diagnostic.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
    (severity(diagnostic).0, source, code, message)
}

/// Diagnostics as `path:line:col: severity [source code]: message` lines,
/// most severe first, those not in `before` marked `(new)`; at most
/// `max_severity` (1 error … 4 hint) are listed.
fn render_diagnostics(workspace: &Workspace, path: &Path, items: &[Value], before: Option<&[Value]>, max_severity: usize) -> String {
    let display = workspace.display_path(path);
    // A multiset: an error that was there twice and is there three times
    // now is new once.
    let mut old: HashMap<(u64, String, String, String), usize> = HashMap::new();
    for d in before.unwrap_or_default() {
        *old.entry(identity(d)).or_default() += 1;
    }
    let mut listed: Vec<(u64, u32, u32, bool, &Value)> = Vec::new();
    for d in items {
        let (rank, _) = severity(d);
        if rank as usize > max_severity {
            continue;
        }
        let is_new = match old.get_mut(&identity(d)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        };
        let (line, character) = d.get("range").and_then(range_start).unwrap_or((0, 0));
        listed.push((rank, line, character, is_new, d));
    }
    if listed.is_empty() {
        return match max_severity {
            2 => format!("No errors or warnings in {display}."),
            _ => format!("No diagnostics in {display}."),
        };
    }
    listed.sort_by_key(|(rank, line, character, _, _)| (*rank, *line, *character));
    let mut snippets = Snippets::new(workspace);
    let errors = listed.iter().filter(|d| d.0 == 1).count();
    let warnings = listed.iter().filter(|d| d.0 == 2).count();
    let new = listed.iter().filter(|d| d.3).count();
    let mut out = Vec::new();
    let mut counts = vec![plural(errors, "error"), plural(warnings, "warning")];
    let others = listed.len() - errors - warnings;
    if others > 0 {
        counts.push(plural(others, "info or hint"));
    }
    let marked = if before.is_some() { format!(" ({new} new)") } else { String::new() };
    out.push(format!("{display}: {}{marked}", counts.join(", ")));
    for (_, line, character, is_new, d) in listed.iter().take(MAX_SHOWN_DIAGNOSTICS) {
        let place = Place { path: path.to_path_buf(), line: *line, character: *character, label: None };
        let (at, _) = snippets.describe(&place);
        let (_, word) = severity(d);
        let (_, source, code, message) = identity(d);
        let by = match (source.is_empty(), code.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!(" [{source}]"),
            (true, false) => format!(" [{code}]"),
            (false, false) => format!(" [{source} {code}]"),
        };
        let mark = if *is_new && before.is_some() { " (new)" } else { "" };
        let message = truncate_chars(&message.replace('\n', " "), 500);
        out.push(format!("{at}: {word}{by}{mark}: {message}"));
    }
    if listed.len() > MAX_SHOWN_DIAGNOSTICS {
        out.push(format!("... and {} more", listed.len() - MAX_SHOWN_DIAGNOSTICS));
    }
    out.join("\n")
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Diagnostics around one edit: the file's set before, then the settled set
/// after, as a note for the edit's tool result. The executor starts one for
/// an `Edit` call to a file a provider follows.
pub struct EditWatch {
    provider: Arc<dyn CodeIntel>,
    path: PathBuf,
    before: Vec<Value>,
    timeout: Duration,
}

impl EditWatch {
    /// Take the file's diagnostics before the edit (bounded by the settle
    /// timeout); `None` when nobody follows the file.
    pub async fn before(ctx: &ToolContext, kind: &ToolKind) -> Option<EditWatch> {
        let ToolKind::Edit { path } = kind else { return None };
        let provider = ctx.code_intel.clone()?;
        let timeout = provider.settle_timeout()?;
        if !provider.follows(path) {
            return None;
        }
        let before = match ctx.workspace.read(path) {
            Ok(file) => {
                let found = tokio::time::timeout(timeout, provider.diagnostics(path, &file.text, None)).await;
                match found {
                    Ok(Ok(found)) => found.items,
                    _ => Vec::new(),
                }
            }
            // A file the edit creates has no diagnostics yet.
            Err(_) => Vec::new(),
        };
        Some(EditWatch { provider, path: path.clone(), before, timeout })
    }

    /// The note for the tool result, once the servers have settled.
    pub async fn after(self, ctx: &ToolContext) -> String {
        let display = ctx.workspace.display_path(&self.path);
        let Ok(file) = ctx.workspace.read(&self.path) else { return String::new() };
        let settle = Settle { version: file.stamp.version, timeout: self.timeout };
        let found = tokio::select! {
            found = self.provider.diagnostics(&self.path, &file.text, Some(settle)) => found,
            () = ctx.cancel.cancelled() => return String::new(),
        };
        match found {
            Ok(found) => {
                let mut note = format!("\n\nDiagnostics after the edit: {}", render_diagnostics(&ctx.workspace, &self.path, &found.items, Some(&self.before), 2));
                if !found.settled {
                    note.push_str(&format!(
                        "\n(The language servers had not settled within {} s; these may be incomplete. Call code_intel with operation \"diagnostics\" for {display} to look again.)",
                        self.timeout.as_secs_f32()
                    ));
                }
                note
            }
            Err(CodeIntelError::NoServer(_)) => String::new(),
            Err(err) => format!("\n\n(No diagnostics after the edit: {})", err.message()),
        }
    }
}

/// After a call that read files, tell the provider about the followed
/// ones (a provider with its own servers opens them there).
pub fn note_reads(ctx: &ToolContext, kind: &ToolKind) {
    let (Some(provider), ToolKind::Read { paths }) = (&ctx.code_intel, kind) else { return };
    for path in paths.iter().filter(|p| provider.follows(p) && p.is_file()) {
        if let Ok(file) = ctx.workspace.read(path) {
            provider.file_read(path, &file.text);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn positions_are_resolved_from_a_name_on_the_line() {
        let text = "fn main() {\n    let émoji = \"😀\"; parse(émoji, parse_all);\n}\r\nlast";
        // UTF-16: the emoji is two units, so "parse" after it is further right than its char index.
        assert_eq!(resolve_position(text, "a.rs", Some(2), Some("parse"), None).unwrap(), Position { line: 1, character: 22 });
        assert_eq!(resolve_position(text, "a.rs", Some(2), Some("parse_all"), None).unwrap(), Position { line: 1, character: 35 });
        // The occurrence nearest the column.
        assert_eq!(resolve_position(text, "a.rs", Some(2), Some("émoji"), Some(30)).unwrap(), Position { line: 1, character: 28 });
        assert_eq!(resolve_position(text, "a.rs", Some(4), Some("last"), None).unwrap(), Position { line: 3, character: 0 });
        assert_eq!(resolve_position(text, "a.rs", Some(1), None, Some(4)).unwrap(), Position { line: 0, character: 3 });
        expect_test::expect![[r#"Error: "parser" is not on line 2 of a.rs. That line has "let", "émoji", "parse", "parse_all": "let émoji = \"😀\"; parse(émoji, parse_all);". Check the line number (read_file shows them), or use grep_search to find the symbol."#]]
            .assert_eq(&resolve_position(text, "a.rs", Some(2), Some("parser"), None).unwrap_err());
        expect_test::expect!["Error: line 9 is past the end of a.rs, which has 4 lines."]
            .assert_eq(&resolve_position(text, "a.rs", Some(9), Some("x"), None).unwrap_err());
        expect_test::expect!["Error: column 40 is past the end of line 1 of a.rs, which has 11 characters."]
            .assert_eq(&resolve_position(text, "a.rs", Some(1), None, Some(40)).unwrap_err());
        assert!(resolve_position(text, "a.rs", None, Some("main"), None).is_err());
    }

    fn fixture() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "def greet(name):\n    return name\n\ngreet('x')\n").unwrap();
        let workspace = Workspace::new(dir.path().canonicalize().unwrap()).unwrap();
        (dir, workspace)
    }

    fn uri(workspace: &Workspace, name: &str) -> String {
        url::Url::from_file_path(workspace.root().join(name)).unwrap().to_string()
    }

    #[test]
    fn locations_of_every_shape_are_listed_with_snippets_and_capped() {
        let (_dir, workspace) = fixture();
        let a = uri(&workspace, "a.py");
        let args = CodeIntelArgs { operation: Operation::References, file_path: Some("a.py".into()), line: Some(1), symbol: Some("greet".into()), column: None, query: None };
        let answers = vec![
            json!([{"uri": a, "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}}]),
            // A second server with the same place, and a LocationLink, and a file outside the workspace.
            json!([{"uri": a, "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}},
                   {"targetUri": a, "targetRange": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 5}},
                    "targetSelectionRange": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 5}}},
                   {"uri": "file:///usr/lib/python3/builtins.pyi", "range": {"start": {"line": 9, "character": 2}, "end": {"line": 9, "character": 3}}}]),
            Value::Null,
        ];
        expect_test::expect![[r#"
            a.py:1:5: def greet(name):
            a.py:4:1: greet('x')
            /usr/lib/python3/builtins.pyi:10:3"#]]
        .assert_eq(&render_answers(&workspace, &args, &answers));
        let many: Vec<Value> = (0..100_000).map(|i| json!({"uri": a, "range": {"start": {"line": i % 4, "character": i / 4}, "end": {"line": 0, "character": 0}}})).collect();
        let rendered = render_answers(&workspace, &args, &[Value::Array(many)]);
        assert_eq!(rendered.lines().count(), MAX_SHOWN_RESULTS + 1);
        assert!(rendered.ends_with("... and 99900 more matches"), "{}", rendered.lines().last().unwrap());
        assert_eq!(render_answers(&workspace, &args, &[json!([])]), "No references found.");
    }

    #[test]
    fn symbols_hover_and_calls_are_flattened() {
        let (_dir, workspace) = fixture();
        let a = uri(&workspace, "a.py");
        let args = |operation| CodeIntelArgs { operation, file_path: Some("a.py".into()), line: Some(1), symbol: Some("greet".into()), column: None, query: None };
        let nested = json!([{"name": "greet", "kind": 12, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "selectionRange": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
            "children": [{"name": "name", "kind": 13, "range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 14}}}]}]);
        expect_test::expect![[r#"
            a.py:1:5: function greet: def greet(name):
            a.py:1:11: variable name (in greet): def greet(name):"#]]
        .assert_eq(&render_answers(&workspace, &args(Operation::DocumentSymbols), &[nested]));
        let hover = json!({"contents": {"kind": "markdown", "value": "```python\n(function) def greet(name) -> str\n```"}});
        let old_hover = json!({"contents": [{"language": "python", "value": "greet"}, "Says hello."]});
        expect_test::expect![[r#"
            ```python
            (function) def greet(name) -> str
            ```

            ---

            ```python
            greet
            ```

            Says hello."#]]
        .assert_eq(&render_answers(&workspace, &args(Operation::Hover), &[hover, old_hover]));
        let incoming = json!([{"from": {"name": "<module>", "kind": 2, "uri": a, "detail": "a",
            "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 10}},
            "selectionRange": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 5}}}, "fromRanges": []}]);
        expect_test::expect!["a.py:4:1: module <module> (in a): greet('x')"].assert_eq(&render_answers(&workspace, &args(Operation::IncomingCalls), &[incoming]));
    }

    #[test]
    fn diagnostics_say_which_are_new_since_the_edit() {
        let (_dir, workspace) = fixture();
        let path = workspace.root().join("a.py");
        let d = |line: u32, severity: u8, message: &str| {
            json!({"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 8}}, "severity": severity,
                   "source": "Pyright", "code": "reportUndefinedVariable", "message": message})
        };
        let before = vec![d(1, 1, "\"x\" is not defined"), d(3, 3, "just a note")];
        let after = vec![d(3, 2, "unused"), d(2, 1, "\"x\" is not defined"), d(0, 1, "\"y\" is not defined"), d(3, 4, "hint")];
        expect_test::expect![[r#"
            a.py: 2 errors, 1 warning (2 new)
            a.py:1:5: error [Pyright reportUndefinedVariable] (new): "y" is not defined
            a.py:3:1: error [Pyright reportUndefinedVariable]: "x" is not defined
            a.py:4:5: warning [Pyright reportUndefinedVariable] (new): unused"#]]
        .assert_eq(&render_diagnostics(&workspace, &path, &after, Some(&before), 2));
        expect_test::expect!["No errors or warnings in a.py."].assert_eq(&render_diagnostics(&workspace, &path, &[d(1, 4, "hint")], Some(&before), 2));
        // Without a "before" nothing is marked.
        expect_test::expect![[r#"
            a.py: 1 error, 0 warnings, 1 info or hint
            a.py:1:5: error [Pyright reportUndefinedVariable]: "y" is not defined
            a.py:4:5: hint [Pyright reportUndefinedVariable]: hint"#]]
        .assert_eq(&render_diagnostics(&workspace, &path, &[d(0, 1, "\"y\" is not defined"), d(3, 4, "hint")], None, usize::MAX));
    }
}
