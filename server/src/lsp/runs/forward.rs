//! The event forwarder: a run's events go to the client as
//! `tandem/runEvent` notifications (and tool calls as progress reports),
//! an edit call's result with the edit's outcome, counted for the outbox.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};

use super::super::client::{methods, ClientLink};
use super::super::documents::path_to_uri;
use super::super::editor::{EditRecord, LspEditor};
use crate::host::RunEvent;
use crate::tools::ToolKind;
use crate::workspace::{DiskWrite, EditStatus, LineSpan, Workspace};

/// A file written on disk, as an edit record.
pub(super) fn written_record(path: &std::path::Path, ranges: Vec<LineSpan>) -> Option<EditRecord> {
    let uri = path_to_uri(path)?;
    Some(EditRecord { ranges, ..EditRecord::new(uri.as_str().to_string(), EditStatus::Written) })
}

/// A disk write of the run (by an edit tool, or by a shell command), as an
/// edit record.
pub(super) fn disk_write_record(write: &DiskWrite) -> Option<EditRecord> {
    let record = written_record(&write.path, write.ranges.clone())?;
    Some(EditRecord { command: write.command.as_deref().map(String::from), deleted: write.deleted, ..record })
}

/// One edit as the answer and the run events show it: `{"uri", "status",
/// "ranges": [{"startLine", "endLine"}]}` (1-based lines of the text after
/// it), and a partial edit's `"declined"` ranges.
pub(crate) fn edit_json(record: &EditRecord) -> Value {
    let lines = |spans: &[LineSpan]| -> Vec<Value> { spans.iter().map(|s| json!({"startLine": s.start, "endLine": s.end})).collect() };
    let mut out = json!({"uri": record.uri, "status": record.status.as_str(), "ranges": lines(&record.ranges)});
    if record.status == EditStatus::Partial {
        out["declined"] = json!(lines(&record.declined));
    }
    if let Some(command) = &record.command {
        out["command"] = json!(command);
        if record.deleted {
            out["deleted"] = json!(true);
        }
    }
    out
}

/// Send each event as `tandem/runEvent` (and tool calls as progress
/// reports), counting them in `forwarded` for [`RunOutbox::flush`]. Returns
/// the paths of files successfully changed by `Edit` calls.
pub(super) async fn forward_events(
    client: Arc<dyn ClientLink>,
    (editor, workspace, checkpoint): (Arc<LspEditor>, Arc<Workspace>, Option<Arc<crate::checkpoint::RunRecorder>>),
    (run_id, thread_id): (String, String),
    mut events: mpsc::UnboundedReceiver<RunEvent>,
    progress: Option<Value>,
    forwarded: watch::Sender<u64>,
) -> Vec<PathBuf> {
    let mut forwarder = Forwarder { client, editor, workspace, checkpoint, run_id, thread_id, progress, seq: 0, edit_calls: BTreeMap::new(), shown_records: BTreeMap::new(), shown_disk_writes: BTreeMap::new(), written: Vec::new() };
    while let Some(event) = events.recv().await {
        forwarder.forward(&event).await;
        forwarded.send_modify(|n| *n += 1);
    }
    forwarder.written
}

struct Forwarder {
    /// Sent with every event, so a client knows the thread from the start.
    thread_id: String,
    client: Arc<dyn ClientLink>,
    /// Where each edit's outcome is recorded, for the edit's tool result.
    editor: Arc<LspEditor>,
    /// Where files written on disk are recorded.
    workspace: Arc<Workspace>,
    /// The run's checkpoint, completed at the run's `end` event.
    checkpoint: Option<Arc<crate::checkpoint::RunRecorder>>,
    run_id: String,
    progress: Option<Value>,
    seq: u64,
    /// Edit calls waiting for their result, by call id.
    edit_calls: BTreeMap<String, PathBuf>,
    /// Per URI, the last edit record shown with a tool result.
    shown_records: BTreeMap<String, u64>,
    /// Per path, the last disk write shown with a tool result.
    shown_disk_writes: BTreeMap<PathBuf, u64>,
    written: Vec<PathBuf>,
}

impl Forwarder {
    async fn forward(&mut self, event: &RunEvent) {
        // The outcome of an edit call's change (`applied`, `partial`, …),
        // added to its `tool_result` event.
        let mut edit = None;
        // A sub-agent's calls count too: its edits are the run's edits.
        match event.unnest().0 {
            RunEvent::ToolCall { id, name, kind, summary, .. } => {
                if let ToolKind::Edit { path } = kind {
                    self.edit_calls.insert(id.clone(), path.clone());
                }
                if let Some(token) = &self.progress {
                    let report = json!({"token": token, "value": {"kind": "report", "message": format!("{name} {summary}")}});
                    self.client.notify(methods::PROGRESS, report).await;
                }
            }
            RunEvent::ToolResult { id, is_error, .. } => {
                if let Some(path) = self.edit_calls.remove(id) {
                    let uri = path_to_uri(&path).map(|uri| uri.as_str().to_string());
                    // The record this call made, if it got as far: one
                    // made after the last that an earlier call showed.
                    if let Some(uri) = uri {
                        let seen = self.shown_records.get(&uri).copied().unwrap_or(0);
                        if let Some((seq, record)) = self.editor.record_since(Some(&self.run_id), &uri, seen) {
                            self.shown_records.insert(uri, seq);
                            edit = Some(edit_json(&record));
                        }
                        let seen = self.shown_disk_writes.get(&path).copied().unwrap_or(0);
                        if let Some(write) = self.workspace.disk_write_since(Some(&self.run_id), &path, seen) {
                            self.shown_disk_writes.insert(path.clone(), write.seq);
                            edit = written_record(&path, write.ranges).map(|record| edit_json(&record));
                        }
                    }
                    if !is_error {
                        self.written.push(path);
                    }
                }
            }
            RunEvent::Waiting { what } => {
                tracing::info!(run = %self.run_id, "waiting for {what}");
                if let Some(token) = &self.progress {
                    let report = json!({"token": token, "value": {"kind": "report", "message": format!("waiting for {what}…")}});
                    self.client.notify(methods::PROGRESS, report).await;
                }
            }
            // The progress ends here, in the forwarder, so it ends even when
            // the ask's handler was dropped by a `$/cancelRequest`.
            RunEvent::End { status, .. } => {
                if let Some(token) = &self.progress {
                    let end = json!({"token": token, "value": {"kind": "end", "message": status.as_str()}});
                    self.client.notify(methods::PROGRESS, end).await;
                }
            }
            _ => {}
        }
        if let (RunEvent::End { .. }, Some(checkpoint)) = (event, &self.checkpoint) {
            checkpoint.finish();
        }
        self.seq += 1;
        match serde_json::to_value(event) {
            Ok(mut event) => {
                if let Some(edit) = edit {
                    event["edit"] = edit;
                }
                let params = json!({"runId": self.run_id, "threadId": self.thread_id, "seq": self.seq, "event": event});
                self.client.notify(methods::RUN_EVENT, params).await;
            }
            Err(err) => tracing::error!(%err, "cannot serialize a run event"),
        }
    }
}
