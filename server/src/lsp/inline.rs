//! `textDocument/inlineCompletion` (LSP 3.18): the protocol glue around
//! [`crate::completion::Engine`]. tower-lsp-server has no handler for it,
//! so it is routed as a custom method (`mod.rs`) with `ls-types`' 3.18
//! types. Here: positions ↔ char indices, the document's current rope and
//! version, diagnostics for next edits from the editor, and the items.
//!
//! Answers: a list of items for the request's version (perhaps empty,
//! which hides an older suggestion); `null` when the request went stale
//! (the document changed, a newer request came: Neovim 0.12 leaves its
//! current suggestion alone on `null`), when completions are off, the
//! document is not open or the position lies past its end. Never an
//! error: a failing model is a log line.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::watch;
use tower_lsp_server::ls_types::{
    Command, InlineCompletionItem, InlineCompletionList, InlineCompletionParams, InlineCompletionResponse, InlineCompletionTriggerKind,
    Range,
};

use super::code_intel::EditorCodeIntel;
use super::config::Settings;
use super::documents::Documents;
use super::position::{char_to_position, position_to_char};
use crate::completion::{Answer, DocumentState, Engine, Kind, Request, Suggestion, Trigger};
use crate::sync::{MutexExt, RwLockExt};
use crate::tools::ports::code_intel::CodeIntel;

/// The command an item runs once the editor inserted it (counted for
/// `tandem doctor`).
pub const ACCEPTED_COMMAND: &str = "tandem.inlineCompletionAccepted";

/// The client capability (`capabilities.experimental`) saying the editor
/// shows and applies an item whose range lies away from the cursor, or
/// spans lines (LSP 3.18 asks for one line): Neovim 0.12 does.
pub const EDITS_ANYWHERE_CAPABILITY: &str = "inlineCompletionEditsAnywhere";

/// How long next edits wait for the editor's diagnostics.
const DIAGNOSTICS_WAIT: Duration = Duration::from_millis(300);

pub struct InlineCompletions {
    pub engine: Arc<Engine>,
    documents: Arc<Documents>,
    settings: Arc<RwLock<Settings>>,
    code_intel: Option<Arc<EditorCodeIntel>>,
    edits_anywhere: bool,
    /// The settings problem last logged, so each is logged once.
    reported: std::sync::Mutex<Option<String>>,
}

struct State {
    documents: Arc<Documents>,
    path: PathBuf,
    code_intel: Option<Arc<EditorCodeIntel>>,
}

#[async_trait]
impl DocumentState for State {
    fn version(&self) -> Option<i32> {
        self.documents.version_of(&self.path)
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.documents.subscribe()
    }

    async fn diagnostics(&self, first: usize, last: usize) -> Vec<String> {
        let Some(code_intel) = &self.code_intel else { return Vec::new() };
        let text: Arc<str> = Arc::from("");
        let Ok(Ok(found)) = tokio::time::timeout(DIAGNOSTICS_WAIT, code_intel.diagnostics(&self.path, &text, None)).await else {
            return Vec::new();
        };
        found
            .items
            .iter()
            .filter_map(|d| {
                let line = d.pointer("/range/start/line")?.as_u64()? as usize;
                if line + 3 < first || line > last + 3 {
                    return None;
                }
                let severity = match d.get("severity").and_then(Value::as_u64) {
                    Some(1) => "error",
                    Some(2) => "warning",
                    _ => "note",
                };
                let message = d.get("message")?.as_str()?.lines().next().unwrap_or("");
                Some(format!("line {}: {severity}: {message}", line + 1))
            })
            .take(20)
            .collect()
    }
}

impl InlineCompletions {
    pub fn new(
        documents: Arc<Documents>,
        settings: Arc<RwLock<Settings>>,
        code_intel: Option<Arc<EditorCodeIntel>>,
        edits_anywhere: bool,
        stats_dir: Option<PathBuf>,
    ) -> Self {
        InlineCompletions {
            engine: Arc::new(Engine::new(stats_dir)),
            documents,
            settings,
            code_intel,
            edits_anywhere,
            reported: std::sync::Mutex::new(None),
        }
    }

    fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    pub async fn complete(&self, params: InlineCompletionParams) -> Option<InlineCompletionResponse> {
        let settings = self.settings();
        let config = match settings.inline_model() {
            Ok(Some(config)) => config,
            Ok(None) => return None,
            Err(problem) => {
                let mut reported = self.reported.locked();
                if reported.as_deref() != Some(problem.as_str()) {
                    tracing::warn!("inline completions are off: {problem}");
                    *reported = Some(problem);
                }
                return None;
            }
        };
        // The suggest widget's selected item would have to be extended;
        // no suggestion is better than one the editor does not show.
        if params.context.selected_completion_info.is_some() {
            return None;
        }
        let uri = &params.text_document_position.text_document.uri;
        let current = self.documents.current(uri)?;
        let encoding = self.documents.encoding();
        let cursor = position_to_char(&current.rope, params.text_document_position.position, encoding);
        if cursor.line_past_end {
            return None;
        }
        let trigger = if params.context.trigger_kind == InlineCompletionTriggerKind::INVOKED { Trigger::Invoked } else { Trigger::Automatic };
        let rope = current.rope.clone();
        let state = State { documents: Arc::clone(&self.documents), path: current.path.clone(), code_intel: self.code_intel.clone() };
        let request = Request { document: current.path, version: current.version, rope: current.rope, cursor: cursor.char_idx, trigger, edits: current.edits };
        let position = params.text_document_position.position;
        let suggestions = match self.engine.complete(&config, request, &state).await {
            Answer::Stale => {
                tracing::debug!(uri = uri.as_str(), line = position.line, character = position.character, "inline completion: stale, answered null");
                return None;
            }
            Answer::Suggestions(suggestions) => suggestions,
        };
        tracing::debug!(uri = uri.as_str(), line = position.line, character = position.character, suggestions = suggestions.len(), "inline completion answered");
        let items = suggestions.iter().filter_map(|s| self.item(&rope, cursor.char_idx, s, encoding)).collect();
        Some(InlineCompletionResponse::List(InlineCompletionList { items }))
    }

    fn item(&self, rope: &ropey::Rope, cursor: usize, suggestion: &Suggestion, encoding: super::position::PositionEncoding) -> Option<InlineCompletionItem> {
        let command = Some(Command {
            title: "Tandem: suggestion accepted".into(),
            command: ACCEPTED_COMMAND.into(),
            arguments: Some(vec![json!({"kind": suggestion.kind.name()})]),
        });
        let cursor_line = rope.char_to_line(cursor);
        let (start, text) = match suggestion.kind {
            // From the start of the line, repeating what it has before the
            // cursor: the spec prefers replacements, so the suggestion
            // survives the user deleting what they typed.
            Kind::Completion => {
                let line_start = rope.line_to_char(cursor_line);
                if cursor - line_start <= crate::completion::window::MAX_LINE_PREFIX_CHARS {
                    (line_start, format!("{}{}", rope.slice(line_start..cursor), suggestion.text))
                } else {
                    (cursor, suggestion.text.clone())
                }
            }
            Kind::NextEdit => {
                let one_line = rope.char_to_line(suggestion.start) == cursor_line && rope.char_to_line(suggestion.end) == cursor_line;
                if !one_line && !self.edits_anywhere {
                    return None;
                }
                (suggestion.start, suggestion.text.clone())
            }
        };
        let end = if suggestion.kind == Kind::Completion { cursor } else { suggestion.end };
        Some(InlineCompletionItem {
            insert_text: text,
            filter_text: None,
            range: Some(Range { start: char_to_position(rope, start, encoding), end: char_to_position(rope, end, encoding) }),
            command,
            insert_text_format: None,
        })
    }
}
