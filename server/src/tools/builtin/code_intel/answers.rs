//! What the servers answered, in every shape LSP allows
//! (`Location | Location[] | LocationLink[]`, `DocumentSymbol[] |
//! SymbolInformation[]`, `Hover`, call hierarchy calls), as
//! `path:line:col: snippet` lines: 1-based, columns in characters, bounded
//! like grep's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::position::lines;
use super::{truncate_chars, CodeIntelArgs, MAX_HOVER_CHARS, MAX_SHOWN_RESULTS, MAX_SNIPPET_CHARS};
use crate::tools::ports::code_intel::Operation;
use crate::workspace::Workspace;

/// One place in a file a result points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Place {
    pub(super) path: PathBuf,
    pub(super) line: u32,
    pub(super) character: u32,
    /// Symbol results: "function parse_config (in Config)".
    pub(super) label: Option<String>,
}

pub(super) fn uri_to_path(uri: &str) -> Option<PathBuf> {
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

pub(super) fn range_start(range: &Value) -> Option<(u32, u32)> {
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

/// Reads the lines of result files (each file once), inside the workspace only.
pub(super) struct Snippets<'a> {
    workspace: &'a Workspace,
    files: HashMap<PathBuf, Option<Arc<str>>>,
}

impl<'a> Snippets<'a> {
    pub(super) fn new(workspace: &'a Workspace) -> Self {
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
    pub(super) fn describe(&mut self, place: &Place) -> (String, Option<String>) {
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

pub(super) fn render_answers(workspace: &Workspace, args: &CodeIntelArgs, answers: &[Value]) -> String {
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
