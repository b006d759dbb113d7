//! The editor edit sink: [`Editor`] over the open documents, where a change
//! becomes a versioned `workspace/applyEdit` and is verified afterwards.
//!
//! The sink does not decide whether an edit may happen: the permission
//! policy (`permission.rs`) did, and may have left the review to the
//! editor's own preview (`BufferEdit::review`). The steps of
//! [`LspEditor::apply`], each of which can stop the edit with an outcome the
//! model reads:
//! 1. at the moment of sending, the document's version must still be the
//!    one the change was computed from (Invariant 2: we check; editors do
//!    not protect us);
//! 2. the change becomes a few minimal `TextEdit`s against that version;
//! 3. `workspace/applyEdit` with one `TextDocumentEdit {uri, version}`,
//!    carrying a `ChangeAnnotation` with `needsConfirmation` when the policy
//!    asked for a review in the editor (VS Code opens its refactor preview);
//! 4. after `applied: true`, wait (bounded, woken by `didChange`) until the
//!    buffer has held exactly the expected text: Neovim answers
//!    `applied: true` for an edit it skipped as stale;
//! 5. when the client can save on request and the buffer had no unsaved
//!    user changes before the edit, ask it to save (`tandem/saveDocuments`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{AnnotatedTextEdit, ApplyWorkspaceEditResponse, OneOf, TextEdit, Uri};

use super::client::{methods, request_with_timeout, ClientError, ClientLink};
use super::config::Settings;
use super::documents::{path_to_uri, Documents, ExpectGuard, Expectation};
use super::edits::{replacements, splices_to_text_edits};
use crate::protocol::{FileEffect, HunkComment};
use crate::sync::{MutexExt, RwLockExt};
use crate::workspace::{
    changed_lines, describe_change, fingerprint, holds_change, hunk_labels, landed_hunks, place_hunks, BufferEdit, DocumentSnapshot, EditOutcome, EditStatus,
    Editor, LateLanding, LineSpan, Splice, UnsavedBuffer,
};

/// Documents up to this size are checked at every change while an edit is
/// verified for holding it among the user's typing; larger ones once, when
/// the wait ends.
const MAX_MERGE_CHECK_BYTES: usize = 256 * 1024;

/// How an `applied: true` with no change seen in the buffer is reported.
const APPLIED_WITHOUT_CHANGE: &str = "applied: true but the buffer did not change";

/// An edit whose outcome is `unknown` that may still land (see
/// [`LspEditor::watch_late_change`]).
#[derive(Debug, Clone)]
struct LateEdit {
    run: Option<Arc<str>>,
    path: PathBuf,
    base: i32,
    expected: Arc<str>,
    /// The lines it changes once it has landed.
    ranges: Vec<LineSpan>,
    /// Where its call hears that it landed.
    told: Option<LateLanding>,
    /// Told already, or no longer watched (its run ended): said at most once.
    done: Arc<AtomicBool>,
}

impl LateEdit {
    /// The buffer holds the edited text, at a version after the edit's.
    fn landed(&self, documents: &Documents) -> bool {
        documents.snapshot(&self.path).is_some_and(|d| d.version > self.base && *d.text == *self.expected)
    }

    /// Its call hears that it landed (once).
    fn confirm(&self) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(told) = &self.told {
            (told.0)(FileEffect { ranges: self.ranges.clone(), ..FileEffect::new(self.path.clone(), EditStatus::Applied) });
        }
    }
}

/// Tells an edit's call that its outcome is unknown when the `apply`
/// future was dropped before it finished (the run stopped waiting).
struct PendingEdit<'a> {
    editor: &'a LspEditor,
    edit: &'a BufferEdit,
    watch_for: Duration,
    done: bool,
}

impl Drop for PendingEdit<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        tracing::info!(path = %self.edit.path.display(), "the run stopped waiting for an agent edit");
        if let Some(told) = &self.edit.landed_late {
            (told.0)(FileEffect::new(self.edit.path.clone(), EditStatus::Unknown));
        }
        if self.editor.documents.uri(&self.edit.path).is_some() {
            self.editor.watch_late_change(self.edit, edit_ranges(self.edit), self.watch_for);
        }
    }
}

/// An editor's refusal that says the document changed under the edit:
/// eglot's "Edits on `a.txt' require version 11, you have 21", VS Code's
/// "Cannot apply refactoring because … has changed in the meantime" (as
/// the extension passes it on), the Neovim plugin's "the document changed
/// while the edit was reviewed: it is at version 12, the edit is for
/// version 0" (docs/protocol.md). A user's rejection says neither word.
fn refused_as_changed(reason: &str) -> bool {
    let reason = reason.to_ascii_lowercase();
    reason.contains("version") || reason.contains("changed")
}

/// The change annotation ids of an edit's hunks in review: this, `/`, and
/// the hunk's number from 1 (`tandem.review/2`), each with its own label.
const REVIEW_ANNOTATION: &str = "tandem.review";

/// The `workspace/applyEdit` parameters: `edits` (one per hunk of `hunks`,
/// in order) against `uri` at the edit's version, annotated for review when
/// `review`: each hunk its own change annotation, whose label says where it
/// is and what it does (VS Code's Refactor Preview shows it with the hunk's
/// entry; the request's label names the call).
fn workspace_edit_params(uri: &Uri, edit: &BufferEdit, (edits, hunks): (Vec<TextEdit>, &[Splice]), display: &str, review: bool) -> Value {
    let count = edits.len();
    let labels = if review { hunk_labels(&edit.old_text, hunks) } else { Vec::new() };
    let mut annotations = serde_json::Map::new();
    let edits: Vec<OneOf<TextEdit, AnnotatedTextEdit>> = edits
        .into_iter()
        .enumerate()
        .map(|(n, text_edit)| {
            if !review {
                return OneOf::Left(text_edit);
            }
            let id = format!("{REVIEW_ANNOTATION}/{}", n + 1);
            let what = labels.get(n).cloned().unwrap_or_else(|| format!("hunk {}", n + 1));
            annotations.insert(
                id.clone(),
                json!({
                    "label": format!("Tandem: {display} {what}"),
                    "needsConfirmation": true,
                    "description": format!("change {} of {count} of {}, proposed by the Tandem agent", n + 1, edit.label),
                }),
            );
            OneOf::Right(AnnotatedTextEdit { text_edit, annotation_id: id })
        })
        .collect();
    let mut workspace_edit = json!({
        "documentChanges": [{
            "textDocument": {"uri": uri.as_str(), "version": edit.version},
            "edits": edits,
        }],
    });
    if review {
        workspace_edit["changeAnnotations"] = Value::Object(annotations);
    }
    json!({"label": format!("Tandem: {}", edit.label), "edit": workspace_edit})
}

/// The file at `path` holds `text` on disk.
async fn disk_holds(path: &Path, text: Option<&str>) -> bool {
    let Some(text) = text else { return false };
    tokio::fs::read(path).await.is_ok_and(|bytes| bytes == text.as_bytes())
}

/// The edit's hunks: replacements of byte ranges of its old text.
fn edit_hunks(edit: &BufferEdit) -> Vec<Splice> {
    match &edit.splices {
        Some(splices) => splices.clone(),
        None => replacements(&edit.old_text, &edit.new_text),
    }
}

/// The lines of the edited text that `edit` changes.
fn edit_ranges(edit: &BufferEdit) -> Vec<LineSpan> {
    changed_lines(&edit_hunks(edit), &edit.new_text)
}

/// How verification tells that the edit landed in the buffer.
enum Landed<'a> {
    /// Some version after the edit's had this fingerprint (whole-text
    /// changes: the text is hashed while the edit is verified).
    Fingerprint(u64),
    /// The document held the splices' expectation (O(edit) per change).
    Expected(&'a ExpectGuard<'a>),
}

/// What the client told us at `initialize` that changes how edits are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EditCapabilities {
    /// `workspace.workspaceEdit.changeAnnotationSupport` is present.
    pub change_annotations: bool,
}

/// A buffer a run changed (see [`LspEditor::save_for_command`]).
#[derive(Debug, Clone)]
struct Touched {
    run: Option<Arc<str>>,
    path: PathBuf,
    /// It held no unsaved changes when the run first edited it.
    clean_before: bool,
    /// The version the run's last edit left it at (`None`: none landed).
    agent_version: Option<i32>,
}

/// Buffers and late edits kept at most; the oldest go first. A run's go
/// when it ends ([`Editor::settle_late`]).
const MAX_EDIT_RECORDS: usize = 4096;

pub struct LspEditor {
    documents: Arc<Documents>,
    client: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    capabilities: EditCapabilities,
    roots: Vec<PathBuf>,
    /// Edits whose outcome is `unknown` that may still land.
    late: Mutex<Vec<LateEdit>>,
    /// The buffers each run changed, until the run ends.
    touched: Mutex<Vec<Touched>>,
    /// The comments the user left on an edit's hunks in the editor's
    /// review (the `comments` of its applyEdit answer), by file, until the
    /// edit's result takes them.
    comments: Mutex<HashMap<PathBuf, Vec<HunkComment>>>,
}

impl LspEditor {
    pub fn new(
        documents: Arc<Documents>,
        client: Arc<dyn ClientLink>,
        settings: Arc<RwLock<Settings>>,
        capabilities: EditCapabilities,
        roots: Vec<PathBuf>,
    ) -> Self {
        LspEditor { documents, client, settings, capabilities, roots, late: Mutex::new(Vec::new()), touched: Mutex::new(Vec::new()), comments: Mutex::default() }
    }

    fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    /// True when an edit to `path` can be reviewed in the editor's own
    /// preview: the document is open and the client supports change
    /// annotations (VS Code's refactor preview).
    pub fn previews_edit(&self, path: &Path) -> bool {
        self.capabilities.change_annotations && self.documents.state(path).is_some()
    }

    /// Open a file that is not open yet in the editor, without taking the
    /// focus (`window/showDocument`), so that an edit to it gets the same
    /// per-hunk review and editor undo as an open one. True once the
    /// editor's `didOpen` arrived (bounded wait); false for a client
    /// without change annotations, a file not on disk, or no `didOpen`.
    pub async fn open_for_review(&self, path: &Path) -> bool {
        if !self.capabilities.change_annotations || !path.is_file() {
            return false;
        }
        let Some(uri) = path_to_uri(path) else { return false };
        let settings = self.settings();
        let mut changes = self.documents.subscribe();
        let params = json!({"uri": uri.as_str(), "takeFocus": false});
        match request_with_timeout(&*self.client, methods::SHOW_DOCUMENT, params, settings.timeouts.request()).await {
            Ok(answer) if answer.get("success").and_then(Value::as_bool) == Some(true) => {}
            Ok(answer) => {
                tracing::info!(%answer, "the editor did not open the file for the review");
                return false;
            }
            Err(err) => {
                tracing::info!(%err, "window/showDocument failed; the edit is asked about instead");
                return false;
            }
        }
        let deadline = tokio::time::Instant::now() + settings.timeouts.request();
        while self.documents.state(path).is_none() {
            if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                return false;
            }
        }
        true
    }

    /// The path as the tools show it (see `Workspace::display_path`).
    pub(crate) fn display(&self, path: &Path) -> String {
        match self.roots.first() {
            Some(primary) => crate::workspace::display_relative(primary, path),
            None => path.display().to_string(),
        }
    }


    /// Re-check that the document still is at the version the agent read;
    /// returns it with its URI.
    fn check_current(&self, edit: &BufferEdit) -> Result<(Uri, DocumentSnapshot), EditOutcome> {
        let closed = || EditOutcome::NotApplied("the document was closed in the editor".into());
        let Some(document) = self.documents.snapshot(&edit.path) else { return Err(closed()) };
        let Some(uri) = self.documents.uri(&edit.path) else { return Err(closed()) };
        // The snapshot the edit was computed from is usually this very one
        // (shared, not copied): then there is nothing to compare.
        let same_text = Arc::ptr_eq(&document.text, &edit.old_text) || document.text == edit.old_text;
        if document.version != edit.version || !same_text {
            // Typed while the run flushed its events (or the edit waited):
            // the workspace rebases the edit onto this text.
            return Err(EditOutcome::Changed(format!(
                "the buffer is at version {} now, not {}: {}",
                document.version,
                edit.version,
                describe_change(&edit.old_text, &document.text)
            )));
        }
        Ok((uri, document))
    }

    /// Wait until the buffer has held `expected` at a version after
    /// `edit.version`. Woken by every document change; bounded by `timeout`.
    async fn verify(
        &self,
        edit: &BufferEdit,
        (landed, hunks): (Landed<'_>, &[Splice]),
        mut changes: tokio::sync::watch::Receiver<u64>,
        timeout: Duration,
    ) -> EditOutcome {
        let landed_at = || match &landed {
            Landed::Fingerprint(expected) => self.documents.version_with(&edit.path, edit.version, *expected),
            Landed::Expected(guard) => self.documents.version_holding(guard),
        };
        let deadline = tokio::time::Instant::now() + timeout;
        // The changes the client sent before it answered may still be
        // queued behind its answer: judge the buffer after them.
        self.documents.caught_up(deadline).await;
        loop {
            if let Some(version) = landed_at() {
                return EditOutcome::Applied { version, saved: false };
            }
            // The editor answered `applied: true` and has already applied
            // what it applies: a buffer that holds some of the hunks and
            // the old text elsewhere is a partly accepted edit, known now.
            if let Some(partial) = self.partly_applied(edit, hunks) {
                return partial;
            }
            if let Some(version) = self.landed_with_typing(edit, MAX_MERGE_CHECK_BYTES) {
                return EditOutcome::Applied { version, saved: false };
            }
            let Some((version, _)) = self.documents.state(&edit.path) else {
                return EditOutcome::NotApplied("the document was closed before the edit showed up in it".into());
            };
            let waited = tokio::time::timeout_at(deadline, changes.changed()).await;
            if !matches!(waited, Ok(Ok(()))) {
                if let Some(version) = landed_at().or_else(|| self.landed_with_typing(edit, usize::MAX)) {
                    return EditOutcome::Applied { version, saved: false };
                }
                return if version == edit.version {
                    // The change may still come (eglot sends it when the
                    // user is next idle): watched for, see `apply`.
                    EditOutcome::Unknown(format!("the editor answered {APPLIED_WITHOUT_CHANGE}"))
                } else {
                    let now = self.documents.snapshot(&edit.path);
                    let what = now.map(|d| describe_change(&edit.old_text, &d.text)).unwrap_or_default();
                    EditOutcome::Superseded(format!(
                        "the editor answered applied: true but the buffer never held the edited text; it changed otherwise ({what})"
                    ))
                };
            }
        }
    }

    /// The buffer after `edit.version` holds the edit's change and the
    /// user's typing apart from it: the editor applied the edit and the user
    /// typed before its `didChange` went out, so one `didChange` brought
    /// both (kak-lsp sends one when idle). Only for a document of at most
    /// `max_bytes` (this diffs the whole text).
    fn landed_with_typing(&self, edit: &BufferEdit, max_bytes: usize) -> Option<i32> {
        let now = self.documents.snapshot(&edit.path).filter(|d| d.version > edit.version && d.text.len() <= max_bytes)?;
        holds_change(&edit.old_text, &edit.new_text, &now.text).then_some(now.version)
    }

    /// The buffer after `edit.version`, when it is the old text with some
    /// (not all, not none) of `hunks` applied: the edit's partial outcome.
    fn partly_applied(&self, edit: &BufferEdit, hunks: &[Splice]) -> Option<EditOutcome> {
        if hunks.len() < 2 {
            return None;
        }
        let now = self.documents.snapshot(&edit.path).filter(|d| d.version > edit.version)?;
        let landed = landed_hunks(&edit.old_text, hunks, &now.text)?;
        let some = landed.iter().filter(|on| **on).count();
        if some == 0 || some == landed.len() {
            return None;
        }
        Some(EditOutcome::Partial(place_hunks(&edit.old_text, hunks, &landed, &now.text, now.version)))
    }

    /// Remember that `edit`'s run is changing its buffer, and whether the
    /// buffer was clean when the run first changed it.
    fn touch(&self, edit: &BufferEdit) {
        let Some((_, dirty)) = self.documents.state(&edit.path) else { return };
        let mut touched = self.touched.locked();
        if touched.iter().any(|t| t.run == edit.run && t.path == edit.path) {
            return;
        }
        if touched.len() >= MAX_EDIT_RECORDS {
            touched.remove(0);
        }
        touched.push(Touched { run: edit.run.clone(), path: edit.path.clone(), clean_before: !dirty, agent_version: None });
    }

    /// The run's edit left the buffer at `version`.
    fn touched_at(&self, edit: &BufferEdit, version: i32) {
        let mut touched = self.touched.locked();
        if let Some(entry) = touched.iter_mut().find(|t| t.run == edit.run && t.path == edit.path) {
            entry.agent_version = Some(version);
        }
    }

    /// Ask the client to save, and wait (bounded) for the `didSave`. When
    /// none comes (the document was closed meanwhile: VS Code's Refactor
    /// Preview took its tab, or the user closed it), the disk says: saved
    /// when it holds the buffer's text, so what the model is told of
    /// saved or unsaved is what a command run next sees.
    async fn save(&self, uri: &Uri, path: &Path, settings: &Settings) -> bool {
        let mut changes = self.documents.subscribe();
        let text = self.documents.snapshot(path).map(|d| d.text);
        let params = json!({"uris": [uri.as_str()]});
        if let Err(err) = request_with_timeout(&*self.client, methods::SAVE_DOCUMENTS, params, settings.timeouts.request()).await {
            tracing::warn!(%err, uri = uri.as_str(), "tandem/saveDocuments failed");
            return false;
        }
        let deadline = tokio::time::Instant::now() + settings.timeouts.request();
        self.documents.caught_up(deadline).await;
        loop {
            match self.documents.state(path) {
                Some((_, false)) => return true,
                None => return disk_holds(path, text.as_deref()).await,
                Some((_, true)) => {}
            }
            if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                return disk_holds(path, text.as_deref()).await;
            }
        }
    }

    async fn apply_inner(&self, edit: &BufferEdit) -> EditOutcome {
        let settings = self.settings();
        // The client should see the tool call before the edit arrives.
        if let Some(turn) = &edit.turn {
            turn.wait().await;
        }
        let annotate = edit.review && self.capabilities.change_annotations;
        // An edit given as splices of the very text at edit.version goes out
        // as those splices and is verified by them: O(edit), no copy, no
        // hash, no diff of the document.
        if let Some(splices) = edit.splices.as_deref() {
            if let Some(prepared) = self.documents.splice_edits(&edit.path, edit.version, &edit.old_text, splices) {
                let changes = self.documents.subscribe();
                let expected = self.documents.expect(&edit.path, edit.version, Expectation::after(edit.old_text.len(), splices));
                let params = workspace_edit_params(&prepared.uri, edit, (prepared.edits, splices), &self.display(&edit.path), annotate);
                if let Err(outcome) = self.send(edit, params, annotate, &settings).await {
                    return outcome;
                }
                let outcome = self.verify(edit, (Landed::Expected(&expected), splices), changes, settings.timeouts.verify()).await;
                return self.save_after(outcome, &prepared.uri, &edit.path, !prepared.dirty, &settings).await;
            }
        }
        // The diff and the hash of the new text are CPU work on texts of
        // any size: off the runtime, so the editor's other requests are
        // answered meanwhile, and before the version check, which must be
        // the last thing before sending.
        let (old_text, new_text) = (Arc::clone(&edit.old_text), Arc::clone(&edit.new_text));
        let diffed = crate::diff::off_runtime(move || {
            if Arc::ptr_eq(&old_text, &new_text) || old_text == new_text {
                return None;
            }
            Some((replacements(&old_text, &new_text), fingerprint(new_text.as_bytes())))
        })
        .await;
        // The one version check of the sink, at the moment of sending.
        let (uri, document) = match self.check_current(edit) {
            Ok(current) => current,
            Err(outcome) => return outcome,
        };
        let Some((hunks, expected)) = diffed else {
            return EditOutcome::Applied { version: document.version, saved: !document.dirty };
        };
        let changes = self.documents.subscribe();
        let _recording = self.documents.verifying();
        let text_edits = splices_to_text_edits(&edit.old_text, &hunks, self.documents.encoding());
        let params = workspace_edit_params(&uri, edit, (text_edits, &hunks), &self.display(&edit.path), annotate);
        if let Err(outcome) = self.send(edit, params, annotate, &settings).await {
            return outcome;
        }
        let outcome = self.verify(edit, (Landed::Fingerprint(expected), &hunks), changes, settings.timeouts.verify()).await;
        self.save_after(outcome, &uri, &edit.path, !document.dirty, &settings).await
    }

    /// Send `workspace/applyEdit`; `Err` holds the outcome when the editor
    /// did not apply it.
    async fn send(&self, edit: &BufferEdit, params: Value, annotate: bool, settings: &Settings) -> Result<(), EditOutcome> {
        // Comments of an earlier answer no edit result took (an undo's
        // restoring edit) are not this edit's.
        self.comments.locked().remove(&edit.path);
        let answer = request_with_timeout(&*self.client, methods::APPLY_EDIT, params, settings.timeouts.apply_edit()).await;
        if let Ok(value) = &answer {
            self.keep_comments(&edit.path, value);
        }
        let response: ApplyWorkspaceEditResponse = match answer.map(serde_json::from_value) {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return Err(EditOutcome::Unknown(format!("the editor's answer to applyEdit was malformed: {err}"))),
            // It may have applied it all the same (a review left open).
            Err(timeout @ ClientError::Timeout(_)) => {
                return Err(EditOutcome::Unknown(format!("the editor did not answer the applyEdit request: {timeout}")))
            }
            // The editor answered with a JSON-RPC error: say what it said
            // (eglot: "Edits on `a.txt' require version 11, you have 21").
            Err(ClientError::Failed(message)) => {
                self.settle(edit, &message, settings.timeouts.verify()).await;
                if self.changed_since(edit, &message) {
                    return Err(EditOutcome::Changed(format!("the editor refused the edit: {message}")));
                }
                return Err(EditOutcome::NotApplied(format!("the editor refused the edit: {message}")));
            }
        };
        if response.applied {
            return Ok(());
        }
        let reason = response.failure_reason.unwrap_or_default();
        self.settle(edit, &reason, settings.timeouts.verify()).await;
        if self.documents.state(&edit.path).is_none() {
            let reason = if reason.is_empty() { String::new() } else { format!(" ({reason})") };
            return Err(EditOutcome::NotApplied(format!("the document was closed in the editor while the edit waited{reason}")));
        }
        if self.changed_since(edit, &reason) {
            return Err(EditOutcome::Changed(reason));
        }
        if annotate {
            return Err(EditOutcome::Rejected(if reason.is_empty() { "declined in the editor's review".into() } else { reason }));
        }
        Err(EditOutcome::NotApplied(if reason.is_empty() {
            "the editor answered applied: false".into()
        } else {
            format!("the editor answered applied: false: {reason}")
        }))
    }

    /// Keep the `comments` of an applyEdit answer (Tandem's addition to
    /// `ApplyWorkspaceEditResult`: the user's words on the edit's hunks in
    /// the editor's review) for the edit's result. One that cannot be read
    /// is kept as what it says, so no words of the user's are lost.
    fn keep_comments(&self, path: &Path, answer: &Value) {
        let Some(list) = answer.get("comments").and_then(Value::as_array) else { return };
        let comments: Vec<HunkComment> = list
            .iter()
            .enumerate()
            .filter_map(|(index, item)| match serde_json::from_value::<HunkComment>(item.clone()) {
                Ok(comment) => Some(comment),
                Err(err) => {
                    tracing::warn!(%err, "a review comment in the applyEdit answer could not be read");
                    item.get("comment").and_then(Value::as_str).map(|text| HunkComment {
                        hunk: index + 1,
                        lines: None,
                        decision: crate::protocol::HunkDecision::Rejected,
                        comment: text.to_string(),
                    })
                }
            })
            .collect();
        if !comments.is_empty() {
            self.comments.locked().insert(path.to_path_buf(), comments);
        }
    }

    /// After a verified edit, save the buffer when it had no unsaved user
    /// changes before and the client saves on request.
    async fn save_after(&self, outcome: EditOutcome, uri: &Uri, path: &Path, was_clean: bool, settings: &Settings) -> EditOutcome {
        match outcome {
            EditOutcome::Applied { version, .. } => {
                let saved = settings.save_documents && was_clean && self.save(uri, path, settings).await;
                EditOutcome::Applied { version, saved }
            }
            other => other,
        }
    }

    /// The editor refused `edit` because its document changed: its reason
    /// says so ([`refused_as_changed`]) and the document is at another
    /// version than the edit's now.
    fn changed_since(&self, edit: &BufferEdit, reason: &str) -> bool {
        refused_as_changed(reason) && self.documents.state(&edit.path).is_some_and(|(version, _)| version != edit.version)
    }

    /// After the editor refused an edit for its version (its reason
    /// mentions the version, as eglot's "Edits on `a.txt' require version
    /// 11, you have 21" does), wait (bounded) for the `didChange` it has not
    /// sent yet, so the model's next read sees what the editor holds.
    /// Returns at once for other refusals, and when the server already
    /// knows a newer version.
    async fn settle(&self, edit: &BufferEdit, reason: &str, timeout: Duration) {
        if !refused_as_changed(reason) {
            return;
        }
        let mut changes = self.documents.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        while self.documents.state(&edit.path).is_some_and(|(version, _)| version == edit.version) {
            if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                return;
            }
        }
    }

    /// An edit whose outcome is uncertain — the editor said `applied: true`
    /// but no `didChange` showed it in time (eglot sends it when the user is
    /// next idle), or the run stopped waiting for the answer — is `unknown`;
    /// if the buffer then holds the edited text within `timeout` (or when
    /// its run ends, [`Editor::settle_late`]), its call hears it landed.
    fn watch_late_change(&self, edit: &BufferEdit, ranges: Vec<LineSpan>, timeout: Duration) {
        let late = LateEdit {
            run: edit.run.clone(),
            path: edit.path.clone(),
            base: edit.version,
            expected: Arc::clone(&edit.new_text),
            ranges,
            told: edit.landed_late.clone(),
            done: Arc::default(),
        };
        {
            let mut pending = self.late.locked();
            if pending.len() >= MAX_EDIT_RECORDS {
                pending.remove(0);
            }
            pending.push(late.clone());
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let documents = Arc::clone(&self.documents);
        runtime.spawn(async move {
            let mut changes = documents.subscribe();
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                if late.done.load(Ordering::SeqCst) || documents.snapshot(&late.path).is_none() {
                    return;
                }
                if late.landed(&documents) {
                    late.confirm();
                    tracing::info!(path = %late.path.display(), "a late didChange confirmed an agent edit");
                    return;
                }
                if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                    return;
                }
            }
        });
    }
}

#[async_trait]
impl Editor for LspEditor {
    fn document(&self, path: &Path) -> Option<DocumentSnapshot> {
        self.documents.snapshot(path)
    }

    fn open_documents(&self) -> Vec<PathBuf> {
        self.documents.paths()
    }

    fn fingerprint(&self, path: &Path, version: i32) -> Option<u64> {
        self.documents.fingerprint(path, version)
    }

    fn known_text(&self, path: &Path, version: i32, text: &Arc<str>, fingerprint: u64) {
        self.documents.known_text(path, version, text, fingerprint);
    }

    /// Save what the run left unsaved where the user loses nothing by it:
    /// the buffer was clean before the run's first edit and still holds
    /// the text of the run's last edit. Every other unsaved buffer of the
    /// run is named, with why.
    async fn save_for_command(&self, run: Option<&str>) -> Vec<UnsavedBuffer> {
        let settings = self.settings();
        let touched: Vec<Touched> =
            self.touched.locked().iter().filter(|t| t.run.as_deref() == run).cloned().collect();
        let mut unsaved = Vec::new();
        for entry in touched {
            // Closed since: the disk is the truth again.
            let (Some((version, true)), Some(uri)) = (self.documents.state(&entry.path), self.documents.uri(&entry.path)) else { continue };
            let reason = if !entry.clean_before {
                "it held unsaved changes of the user's before the run, so Tandem did not save it"
            } else if entry.agent_version != Some(version) {
                "it was changed in the editor after the agent's edit, so Tandem did not save it"
            } else if !settings.save_documents {
                "the editor does not save on request (saveDocuments)"
            } else if self.save(&uri, &entry.path, &settings).await {
                continue;
            } else {
                "the editor did not save it when asked"
            };
            unsaved.push(UnsavedBuffer { path: entry.path, reason: reason.to_string() });
        }
        unsaved
    }

    async fn apply(&self, edit: BufferEdit) -> EditOutcome {
        let watch_for = self.settings().timeouts.apply_edit();
        // If the run stops waiting (cancelled: this future is dropped, and
        // the client link withdraws the applyEdit), the edit is recorded
        // `unknown` unless the buffer then shows it.
        let mut pending = PendingEdit { editor: self, edit: &edit, watch_for, done: false };
        self.touch(&edit);
        let outcome = self.apply_inner(&edit).await;
        pending.done = true;
        match &outcome {
            EditOutcome::Applied { version, .. } => self.touched_at(&edit, *version),
            EditOutcome::Partial(partial) => self.touched_at(&edit, partial.version),
            _ => {}
        }
        if let EditOutcome::Unknown(reason) = &outcome {
            if reason.contains(APPLIED_WITHOUT_CHANGE) && self.documents.uri(&edit.path).is_some() {
                self.watch_late_change(&edit, edit_ranges(&edit), watch_for);
            }
        }
        tracing::info!(path = %edit.path.display(), ?outcome, "agent edit");
        outcome
    }

    /// The run's late edits that the buffer shows now are told landed; none
    /// is watched for after, and the run's buffers are forgotten.
    fn take_review_comments(&self, path: &Path) -> Vec<HunkComment> {
        self.comments.locked().remove(path).unwrap_or_default()
    }

    fn settle_late(&self, run: Option<&str>) {
        let is_run = |tag: &Option<Arc<str>>| tag.as_deref() == run;
        let late: Vec<LateEdit> = {
            let mut pending = self.late.locked();
            let (mine, others) = std::mem::take(&mut *pending).into_iter().partition(|late| is_run(&late.run));
            *pending = others;
            mine
        };
        for late in late {
            if late.landed(&self.documents) {
                late.confirm();
            }
            late.done.store(true, Ordering::SeqCst);
        }
        self.touched.locked().retain(|t| !is_run(&t.run));
    }
}
