//! A review's findings as diagnostics (`source: "tandem review"`, the
//! finding's kind as `code`, other places as `relatedInformation`), kept
//! per thread (a new review on a thread replaces its findings), and in
//! step with the user's typing: an edit above a finding moves it, an edit
//! touching its lines drops it (rewritten, or fixed), and before each
//! publication every finding is checked against the text its lines hold
//! now, so none is ever shown on lines that changed. A finding on a file
//! closed since stays (checked against the disk); on a file deleted since
//! it is dropped. "Dismiss" drops one and remembers its kind, file and
//! title: the same finding from a later review is not shown again.
//! A new session publishes the findings the workspace's most recent
//! thread with findings saved ([`Findings::restore`]), placed the same way.
//!
//! Publications go out in order from one task: each says what the store
//! holds when it is sent, so a late one never shows findings since gone.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ropey::Rope;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Command, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, OptionalVersionedTextDocumentIdentifier, Position, Range, TextDocumentContentChangeEvent, TextDocumentEdit, TextEdit, Uri,
    WorkspaceEdit, OneOf, DocumentChanges,
};

use super::client::{methods, ClientLink};
use super::documents::{path_to_uri, Documents};
use super::position::PositionEncoding;
use crate::protocol::{Finding, Severity};
use crate::sync::MutexExt;
use crate::workspace::Workspace;

/// The diagnostics' `source`.
pub const SOURCE: &str = "tandem review";
/// `tandem.dismissFinding`, `[{"key"}]`: drop a finding, and remember it.
pub const DISMISS_COMMAND: &str = "tandem.dismissFinding";

/// One finding where it is now.
#[derive(Debug, Clone)]
struct Tracked {
    finding: Finding,
    thread_id: String,
    /// Its lines now, from 0.
    start: u32,
    end: u32,
    /// What those lines hold (without line breaks, joined by `\n`).
    text: String,
    /// Its id in this session: the diagnostic's `data.key`.
    key: String,
}

impl Tracked {
    /// What a dismissal remembers: the same kind of finding, on the same
    /// file, saying the same thing.
    fn dismissal(&self) -> String {
        dismissal(&self.finding)
    }
}

fn dismissal(finding: &Finding) -> String {
    format!("{}\u{0}{}\u{0}{}", finding.kind, finding.file_path, finding.title)
}

#[derive(Default)]
struct State {
    by_path: HashMap<PathBuf, Vec<Tracked>>,
    dismissed: HashSet<String>,
    next_key: u64,
}

/// The session's findings.
pub struct Findings {
    state: Mutex<State>,
    documents: Arc<Documents>,
    workspace: Arc<Workspace>,
    publish: mpsc::UnboundedSender<PathBuf>,
}

impl Findings {
    /// The store, and what publishes it: [`Publisher::run`] on the session's client.
    pub fn new(documents: Arc<Documents>, workspace: Arc<Workspace>) -> (Arc<Findings>, Publisher) {
        let (publish, queue) = mpsc::unbounded_channel::<PathBuf>();
        let findings = Arc::new(Findings { state: Mutex::new(State::default()), documents, workspace, publish });
        let publisher = Publisher { findings: Arc::downgrade(&findings), queue };
        (findings, publisher)
    }

    /// A new review on `thread_id` begins: its earlier findings go.
    pub fn clear_thread(&self, thread_id: &str) {
        let mut touched = Vec::new();
        {
            let mut state = self.state.locked();
            for (path, tracked) in state.by_path.iter_mut() {
                let before = tracked.len();
                tracked.retain(|t| t.thread_id != thread_id);
                if tracked.len() != before {
                    touched.push(path.clone());
                }
            }
        }
        touched.into_iter().for_each(|path| self.queue(path));
    }

    /// A finding the review on `thread_id` reported: placed on the text as
    /// it is now (where its lines moved, if they did), or dropped.
    pub fn add(&self, thread_id: &str, finding: Finding) {
        let Ok(path) = self.workspace.resolve(&finding.file_path) else { return };
        if self.state.locked().dismissed.contains(&dismissal(&finding)) {
            return;
        }
        let Some(current) = self.current_lines(&path) else { return };
        let (start, end) = (finding.start_line.saturating_sub(1), finding.end_line.saturating_sub(1));
        let wanted = finding.lines_text.clone().unwrap_or_else(|| lines_at(&current, start, end).unwrap_or_default());
        let Some(start) = place(&current, start, &wanted) else {
            tracing::info!(file = %finding.file_path, id = %finding.id, "a finding's lines changed since it was reported; dropped");
            return;
        };
        let end = start + (end - finding.start_line.saturating_sub(1));
        {
            let mut state = self.state.locked();
            state.next_key += 1;
            let key = format!("{}:{}", state.next_key, finding.id);
            state.by_path.entry(path.clone()).or_default().push(Tracked { finding, thread_id: thread_id.to_string(), start, end, text: wanted, key });
        }
        self.queue(path);
    }

    /// A new session's start: the findings `thread_id` saved (its last
    /// review's), each placed as [`Self::add`] places it, on the text its
    /// lines held when it was reported, or dropped. Nothing when the
    /// thread has findings here already (a review of this session's came
    /// first, and replaced them).
    pub fn restore(&self, thread_id: &str, saved: Vec<Finding>) {
        if self.state.locked().by_path.values().flatten().any(|t| t.thread_id == thread_id) {
            return;
        }
        saved.into_iter().for_each(|finding| self.add(thread_id, finding));
    }

    /// `didChange` of `path`: each finding below an edit moves with it, one
    /// whose lines an edit touched is dropped. Called before any `.await`.
    pub fn changed(&self, path: &Path, changes: &[TextDocumentContentChangeEvent]) {
        let mut touched = false;
        {
            let mut state = self.state.locked();
            let Some(tracked) = state.by_path.get_mut(path) else { return };
            for change in changes {
                let Some(range) = change.range else {
                    // The whole text replaced: each finding is checked
                    // against it where it was.
                    touched = true;
                    continue;
                };
                let added = change.text.matches('\n').count() as i64;
                let removed = i64::from(range.end.line) - i64::from(range.start.line);
                let before = tracked.len();
                tracked.retain_mut(|t| {
                    let above = range.end.line < t.start || (range.end.line == t.start && range.end.character == 0 && (change.text.is_empty() || change.text.ends_with('\n')));
                    if above {
                        let shift = added - removed;
                        t.start = (i64::from(t.start) + shift).max(0) as u32;
                        t.end = (i64::from(t.end) + shift).max(0) as u32;
                        touched |= shift != 0;
                        true
                    } else {
                        // Below the finding: it stays; on its lines: dropped.
                        range.start.line > t.end
                    }
                });
                touched |= tracked.len() != before;
            }
        }
        if touched {
            self.queue(path.to_path_buf());
        }
    }

    /// `didOpen`: the findings of the file are checked against its buffer.
    pub fn opened(&self, path: &Path) {
        if self.state.locked().by_path.contains_key(path) {
            self.queue(path.to_path_buf());
        }
    }

    /// `tandem.dismissFinding`: the finding goes, and the same finding is
    /// not shown again this session. False: no such finding.
    pub fn dismiss(&self, key: &str) -> bool {
        let mut found = None;
        {
            let mut state = self.state.locked();
            for (path, tracked) in state.by_path.iter_mut() {
                if let Some(at) = tracked.iter().position(|t| t.key == key) {
                    found = Some((path.clone(), tracked.remove(at)));
                    break;
                }
            }
            if let Some((_, tracked)) = &found {
                state.dismissed.insert(tracked.dismissal());
            }
        }
        match found {
            Some((path, _)) => {
                self.queue(path);
                true
            }
            None => false,
        }
    }

    fn queue(&self, path: PathBuf) {
        let _ = self.publish.send(path);
    }

    /// The file's lines now (an open buffer's, else the disk's); `None`:
    /// it is gone.
    fn current_lines(&self, path: &Path) -> Option<Vec<String>> {
        let text = self.workspace.read(path).ok()?.text;
        Some(text.lines().map(str::to_string).collect())
    }

    /// The file's findings as diagnostics, each checked against the text
    /// its lines hold now (those that no longer match are dropped).
    fn diagnostics(&self, path: &Path) -> Vec<Diagnostic> {
        let current = self.current_lines(path);
        let encoding = self.documents.encoding();
        let mut state = self.state.locked();
        let Some(tracked) = state.by_path.get_mut(path) else { return Vec::new() };
        match &current {
            Some(lines) => tracked.retain(|t| lines_at(lines, t.start, t.end).as_deref() == Some(t.text.as_str())),
            None => tracked.clear(),
        }
        let diagnostics = tracked.iter().map(|t| diagnostic(t, encoding, &self.workspace)).collect();
        if tracked.is_empty() {
            state.by_path.remove(path);
        }
        diagnostics
    }

    /// The code actions on the diagnostics of ours among `diagnostics`:
    /// fix with Tandem, apply the suggested change, dismiss.
    pub fn actions(&self, uri: &Uri, path: &Path, diagnostics: &[Diagnostic], ask_command: &str) -> Vec<CodeActionOrCommand> {
        let mut actions = Vec::new();
        for diagnostic in diagnostics.iter().filter(|d| d.source.as_deref() == Some(SOURCE)) {
            let Some(key) = diagnostic.data.as_ref().and_then(|d| d.get("key")).and_then(Value::as_str) else { continue };
            let tracked = {
                let state = self.state.locked();
                state.by_path.get(path).and_then(|list| list.iter().find(|t| t.key == key)).cloned()
            };
            let Some(tracked) = tracked else { continue };
            actions.extend(finding_actions(&tracked, uri, diagnostic, &self.documents, ask_command));
        }
        actions
    }

    /// No finding is shown (a `didChange` has nothing to move).
    pub fn is_empty(&self) -> bool {
        self.state.locked().by_path.is_empty()
    }

    /// The findings of `thread_id` shown now, where they are now.
    pub fn of_thread(&self, thread_id: &str) -> Vec<Finding> {
        let state = self.state.locked();
        let mut found: Vec<Finding> = state
            .by_path
            .values()
            .flatten()
            .filter(|t| t.thread_id == thread_id)
            .map(|t| Finding { start_line: t.start + 1, end_line: t.end + 1, ..t.finding.clone() })
            .collect();
        found.sort_by_key(|f| f.id.trim_start_matches('F').parse::<u32>().unwrap_or(u32::MAX));
        found
    }
}

/// Sends the store's publications, in order, while the store lives.
pub struct Publisher {
    findings: std::sync::Weak<Findings>,
    queue: mpsc::UnboundedReceiver<PathBuf>,
}

impl Publisher {
    pub async fn run(mut self, client: Arc<dyn ClientLink>) {
        while let Some(first) = self.queue.recv().await {
            // Files queued meanwhile go once each: each publication says
            // what the store holds when it is sent.
            let mut paths = vec![first];
            while let Ok(path) = self.queue.try_recv() {
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
            for path in paths {
                let Some(findings) = self.findings.upgrade() else { return };
                let Some(uri) = path_to_uri(&path) else { continue };
                let diagnostics = findings.diagnostics(&path);
                drop(findings);
                client.notify(methods::PUBLISH_DIAGNOSTICS, json!({"uri": uri, "diagnostics": diagnostics})).await;
            }
        }
    }
}

/// Lines `start..=end` (from 0) of `lines`, joined by `\n`; `None` past the end.
fn lines_at(lines: &[String], start: u32, end: u32) -> Option<String> {
    let (start, end) = (start as usize, end as usize);
    (end < lines.len() && start <= end).then(|| lines[start..=end].join("\n"))
}

/// Where the lines `wanted` are now: at `start` if they still are, else
/// their one place in the file; `None`: nowhere, or in more than one
/// place (a guess could be the wrong lines).
fn place(lines: &[String], start: u32, wanted: &str) -> Option<u32> {
    let count = wanted.split('\n').count() as u32;
    let at = |s: u32| lines_at(lines, s, s + count - 1).as_deref() == Some(wanted);
    if at(start) {
        return Some(start);
    }
    let mut found = (0..lines.len() as u32).filter(|s| at(*s));
    match (found.next(), found.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The length of `line` in the session's position units.
fn units(line: &str, encoding: PositionEncoding) -> u32 {
    let n = match encoding {
        PositionEncoding::Utf8 => line.len(),
        PositionEncoding::Utf16 => line.encode_utf16().count(),
        PositionEncoding::Utf32 => line.chars().count(),
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The range of a finding's lines: from the start of its first line to
/// the end of its last.
fn lines_range(tracked: &Tracked, encoding: PositionEncoding) -> Range {
    let last = tracked.text.rsplit('\n').next().unwrap_or_default();
    Range { start: Position { line: tracked.start, character: 0 }, end: Position { line: tracked.end, character: units(last, encoding) } }
}

fn diagnostic(tracked: &Tracked, encoding: PositionEncoding, workspace: &Workspace) -> Diagnostic {
    let finding = &tracked.finding;
    let severity = match finding.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    };
    let related: Vec<DiagnosticRelatedInformation> = finding
        .related
        .iter()
        .filter_map(|place| {
            let path = workspace.resolve(&place.file_path).ok()?;
            let line = place.line.saturating_sub(1);
            let range = Range { start: Position { line, character: 0 }, end: Position { line: line + 1, character: 0 } };
            Some(DiagnosticRelatedInformation { location: Location { uri: path_to_uri(&path)?, range }, message: place.message.clone() })
        })
        .collect();
    Diagnostic {
        range: lines_range(tracked, encoding),
        severity: Some(severity),
        code: Some(NumberOrString::String(finding.kind.clone())),
        source: Some(SOURCE.to_string()),
        message: format!("{}\n\n{}", finding.title, finding.body),
        related_information: (!related.is_empty()).then_some(related),
        data: Some(json!({"key": tracked.key, "threadId": tracked.thread_id, "id": finding.id})),
        ..Default::default()
    }
}

/// The prompt of "Fix with Tandem": the finding, where it is, what to do.
fn fix_prompt(tracked: &Tracked) -> String {
    let finding = &tracked.finding;
    let mut prompt = format!(
        "Fix this review finding in {} (lines {}-{}): {}\n\n{}",
        finding.file_path,
        tracked.start + 1,
        tracked.end + 1,
        finding.title,
        finding.body
    );
    if let Some(suggestion) = &finding.suggestion {
        prompt.push_str(&format!("\n\nThe review suggested these lines instead:\n```\n{suggestion}\n```"));
    }
    prompt
}

fn finding_actions(tracked: &Tracked, uri: &Uri, diagnostic: &Diagnostic, documents: &Documents, ask_command: &str) -> Vec<CodeActionOrCommand> {
    let title: String = tracked.finding.title.chars().take(60).collect();
    let mut actions = Vec::new();
    let fix = format!("Tandem: fix with Tandem ({title})");
    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
        title: fix.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diagnostic.clone()]),
        command: Some(Command {
            title: fix,
            command: ask_command.to_string(),
            arguments: Some(vec![json!({"prompt": fix_prompt(tracked), "textDocument": {"uri": uri}, "range": diagnostic.range, "wait": false})]),
        }),
        ..Default::default()
    }));
    // The suggestion as a plain edit, for the version the editor has now:
    // an editor applies it only to that version.
    if let (Some(suggestion), Some(current)) = (&tracked.finding.suggestion, documents.current(uri)) {
        if lines_of_rope(&current.rope, tracked.start, tracked.end).as_deref() == Some(tracked.text.as_str()) {
            let new_text = suggestion.strip_suffix('\n').unwrap_or(suggestion).to_string();
            let edit = TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version: Some(current.version) },
                edits: vec![OneOf::Left(TextEdit { range: lines_range(tracked, documents.encoding()), new_text })],
            };
            let apply = "Tandem: apply suggested change".to_string();
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: apply,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic.clone()]),
                edit: Some(WorkspaceEdit { document_changes: Some(DocumentChanges::Edits(vec![edit])), ..Default::default() }),
                is_preferred: Some(true),
                ..Default::default()
            }));
        }
    }
    let dismiss = "Tandem: dismiss this finding".to_string();
    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
        title: dismiss.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diagnostic.clone()]),
        command: Some(Command { title: dismiss, command: DISMISS_COMMAND.to_string(), arguments: Some(vec![json!({"key": tracked.key})]) }),
        ..Default::default()
    }));
    actions
}

/// Lines `start..=end` (from 0) of an open document, as [`lines_at`] gives them.
fn lines_of_rope(rope: &Rope, start: u32, end: u32) -> Option<String> {
    let (start, end) = (start as usize, end as usize);
    if end >= rope.len_lines() {
        return None;
    }
    let lines: Vec<String> = (start..=end).map(|i| rope.line(i).to_string().trim_end_matches('\n').trim_end_matches('\r').to_string()).collect();
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_finding_is_placed_where_its_lines_are_now_or_nowhere() {
        let now = lines("a\nb\nc\nd\n");
        // Still there.
        assert_eq!(place(&now, 1, "b\nc"), Some(1));
        // Moved (the user added a line above meanwhile): found once, placed there.
        assert_eq!(place(&lines("new\na\nb\nc\n"), 1, "b\nc"), Some(2));
        // Rewritten: nowhere.
        assert_eq!(place(&now, 1, "B"), None);
        // In two places: a guess could be wrong, so nowhere.
        assert_eq!(place(&lines("x\ny\nx\n"), 1, "x"), None);
        // Past the end.
        assert_eq!(lines_at(&now, 3, 4), None);
    }
}
