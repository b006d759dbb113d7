//! A file's diagnostics as lines for the model: most severe first, those
//! new since the edit marked.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::answers::{range_start, Place, Snippets};
use super::{truncate_chars, MAX_SHOWN_DIAGNOSTICS};
use crate::workspace::Workspace;

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
pub(super) fn render_diagnostics(workspace: &Workspace, path: &Path, items: &[Value], before: Option<&[Value]>, max_severity: usize) -> String {
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
