//! The event forwarder: a run's events go to the client as
//! `tandem/runEvent` notifications (and tool calls as progress reports),
//! an edit call's result with the edit's outcome, counted for the outbox.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};

use super::super::client::{methods, ClientLink};
use super::super::documents::{path_to_uri, uri_to_path};
use super::super::editor::{EditRecord, LspEditor};
use crate::host::RunEvent;
use crate::protocol::RunEdit;
use crate::sync::MutexExt;
use crate::tools::ToolKind;
use crate::workspace::{CommandEffect, DiskWrite, EditStatus, EditSummaryItem, LineSpan, Workspace};

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

/// What the forwarder learnt that the run's answer needs: the files `Edit`
/// calls changed, and which tool call made each edit record (by the
/// record's number) and each disk write (by its number).
#[derive(Debug, Default)]
pub(super) struct Forwarded {
    pub written: Vec<PathBuf>,
    pub record_calls: BTreeMap<u64, String>,
    pub disk_write_calls: BTreeMap<u64, String>,
    /// Every edit call, in order: its id and the URI of its file. A record
    /// made where the forwarder could not see it (an edit that may still
    /// land, taken as the run ends) is matched to its call by file.
    pub edit_calls: Vec<(String, String)>,
}

/// An edit of the answer as the end summary counts it.
pub(super) fn summary_item(workspace: &Workspace, edit: &RunEdit) -> Option<EditSummaryItem> {
    let uri: tower_lsp_server::ls_types::Uri = edit.uri.parse().ok()?;
    let display = uri_to_path(&uri).map(|path| workspace.display_path(&path)).unwrap_or_else(|| uri.as_str().to_string());
    let by_command = edit.command.as_ref().map(|_| if edit.deleted { CommandEffect::Deleted } else { CommandEffect::Written });
    Some(EditSummaryItem { display, status: edit.status, ranges: edit.ranges.clone(), declined: edit.declined.clone().unwrap_or_default(), by_command })
}

/// One edit as the answer and the run events show it.
pub(crate) fn run_edit(record: &EditRecord) -> RunEdit {
    RunEdit {
        uri: record.uri.clone(),
        status: record.status,
        ranges: record.ranges.clone(),
        declined: (record.status == EditStatus::Partial).then(|| record.declined.clone()),
        command: record.command.clone(),
        deleted: record.command.is_some() && record.deleted,
        tool_call_id: None,
    }
}

/// `event` with `edit` on its `tool_result` (the inner event of a nested one).
fn with_edit(event: &RunEvent, edit: RunEdit) -> RunEvent {
    match event {
        RunEvent::ToolResult { id, is_error, content, effects, .. } => {
            RunEvent::ToolResult { id: id.clone(), is_error: *is_error, content: content.clone(), effects: effects.clone(), edit: Some(edit) }
        }
        RunEvent::Nested { parent, event } => RunEvent::Nested { parent: parent.clone(), event: Box::new(with_edit(event, edit)) },
        other => other.clone(),
    }
}

/// Send each event as `tandem/runEvent` (and tool calls as progress
/// reports), counting them in `forwarded` for [`RunOutbox::flush`].
///
/// Two stages: what the answer needs (which call made which edit, the
/// files `Edit` calls changed) is learnt as each event arrives and counted
/// in `learnt_count`, never waiting on the client; a second task sends the
/// notifications in order. A client that stops reading (a window
/// reloading) slows the second, never the first: the run's edits are
/// listed with their calls all the same.
pub(super) async fn forward_events(
    client: Arc<dyn ClientLink>,
    (editor, workspace, checkpoint): (Arc<LspEditor>, Arc<Workspace>, Option<Arc<crate::checkpoint::RunRecorder>>),
    (run_id, thread_id): (String, String),
    mut events: mpsc::UnboundedReceiver<RunEvent>,
    progress: Option<Value>,
    (forwarded, learnt_count): (watch::Sender<u64>, watch::Sender<u64>),
    learnt: Arc<std::sync::Mutex<Forwarded>>,
) {
    let mut forwarder = Forwarder { editor, workspace, checkpoint, run_id, thread_id, progress, seq: 0, tools_called: false, edit_calls: BTreeMap::new(), shown_records: BTreeMap::new(), shown_disk_writes: BTreeMap::new(), learnt };
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<(&'static str, Value)>>();
    let sender = tokio::spawn(async move {
        while let Some(notifications) = out_rx.recv().await {
            for (method, params) in notifications {
                client.notify(method, params).await;
            }
            forwarded.send_modify(|n| *n += 1);
        }
    });
    while let Some(event) = events.recv().await {
        let notifications = forwarder.forward(&event);
        learnt_count.send_modify(|n| *n += 1);
        let _ = out_tx.send(notifications);
    }
    drop(out_tx);
    let _ = sender.await;
}

struct Forwarder {
    /// Sent with every event, so a client knows the thread from the start.
    thread_id: String,
    /// Where each edit's outcome is recorded, for the edit's tool result.
    editor: Arc<LspEditor>,
    /// Where files written on disk are recorded.
    workspace: Arc<Workspace>,
    /// The run's checkpoint, completed at the run's `end` event.
    checkpoint: Option<Arc<crate::checkpoint::RunRecorder>>,
    run_id: String,
    progress: Option<Value>,
    seq: u64,
    /// A tool was called in this run: a `sandbox` event from now on is news
    /// of the run (a host the network lists refused), not the notice the
    /// run starts with, which the ask's handler shows itself.
    tools_called: bool,
    /// Edit calls waiting for their result, by call id.
    edit_calls: BTreeMap<String, PathBuf>,
    /// Per URI, the last edit record shown with a tool result.
    shown_records: BTreeMap<String, u64>,
    /// Per path, the last disk write shown with a tool result.
    shown_disk_writes: BTreeMap<PathBuf, u64>,
    /// Read by the run's task once the events are out.
    learnt: Arc<std::sync::Mutex<Forwarded>>,
}

impl Forwarder {
    /// An edit call's result (or the run's end before it): which record and
    /// disk write the call made, learnt for the answer; the edit's outcome
    /// for its `tool_result` event.
    fn learn_result(&mut self, id: &str, is_error: bool) -> Option<RunEdit> {
        let path = self.edit_calls.remove(id)?;
        let mut edit = None;
        // The record this call made, if it got as far: one made after the
        // last that an earlier call showed.
        if let Some(uri) = path_to_uri(&path).map(|uri| uri.as_str().to_string()) {
            let seen = self.shown_records.get(&uri).copied().unwrap_or(0);
            let mut learnt = self.learnt.locked();
            if let Some((seq, record)) = self.editor.record_since(Some(&self.run_id), &uri, seen) {
                self.shown_records.insert(uri, seq);
                learnt.record_calls.insert(seq, id.to_string());
                edit = Some(run_edit(&record));
            }
            let seen = self.shown_disk_writes.get(&path).copied().unwrap_or(0);
            if let Some(write) = self.workspace.disk_write_since(Some(&self.run_id), &path, seen) {
                self.shown_disk_writes.insert(path.clone(), write.seq);
                learnt.disk_write_calls.insert(write.seq, id.to_string());
                edit = written_record(&path, write.ranges).map(|record| run_edit(&record));
            }
        }
        if !is_error {
            self.learnt.locked().written.push(path);
        }
        edit
    }

    /// Learn what `event` tells of the run's edits; the notifications
    /// that show it to the client, in order.
    fn forward(&mut self, event: &RunEvent) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        // The outcome of an edit call's change (`applied`, `partial`, …),
        // added to its `tool_result` event.
        let mut edit = None;
        // A sub-agent's calls count too: its edits are the run's edits.
        match event.unnest().0 {
            RunEvent::ToolCall { id, name, kind, summary, .. } => {
                self.tools_called = true;
                if let ToolKind::Edit { path } = kind {
                    self.edit_calls.insert(id.clone(), path.clone());
                    if let Some(uri) = path_to_uri(path) {
                        self.learnt.locked().edit_calls.push((id.clone(), uri.as_str().to_string()));
                    }
                }
                if let Some(token) = &self.progress {
                    let report = json!({"token": token, "value": {"kind": "report", "message": format!("{name} {summary}")}});
                    out.push((methods::PROGRESS, report));
                }
            }
            RunEvent::ToolResult { id, is_error, .. } => edit = self.learn_result(id, *is_error),
            // Where the user looks, as the run's first notice is shown.
            RunEvent::Sandbox { message } if self.tools_called => {
                out.push((methods::SHOW_MESSAGE, json!({"type": 2, "message": format!("Tandem: {message}")})));
            }
            RunEvent::Waiting { what } => {
                tracing::info!(run = %self.run_id, "waiting for {what}");
                if let Some(token) = &self.progress {
                    let report = json!({"token": token, "value": {"kind": "report", "message": format!("waiting for {what}…")}});
                    out.push((methods::PROGRESS, report));
                }
            }
            // The progress ends here, in the forwarder, so it ends even when
            // the ask's handler was dropped by a `$/cancelRequest`.
            RunEvent::End { status, .. } => {
                // An edit call the run ended during (cancelled while the
                // editor had its edit) has no result: its record is still
                // its own, for the answer and the thread.
                for id in self.edit_calls.keys().cloned().collect::<Vec<_>>() {
                    self.learn_result(&id, true);
                }
                if let Some(token) = &self.progress {
                    let end = json!({"token": token, "value": {"kind": "end", "message": status.as_str()}});
                    out.push((methods::PROGRESS, end));
                }
            }
            _ => {}
        }
        if let (RunEvent::End { .. }, Some(checkpoint)) = (event, &self.checkpoint) {
            checkpoint.finish();
        }
        self.seq += 1;
        let event = match edit {
            Some(edit) => with_edit(event, edit),
            None => event.clone(),
        };
        match serde_json::to_value(&event) {
            Ok(event) => {
                let params = json!({"runId": self.run_id, "threadId": self.thread_id, "seq": self.seq, "event": event});
                out.push((methods::RUN_EVENT, params));
            }
            Err(err) => tracing::error!(%err, "cannot serialize a run event"),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::sync::RwLock;

    use async_trait::async_trait;

    use super::*;
    use crate::lsp::client::ClientError;
    use crate::lsp::config::Settings;
    use crate::lsp::editor::EditCapabilities;

    /// A client that reads nothing: every notification waits for ever.
    struct Stuck;

    #[async_trait]
    impl ClientLink for Stuck {
        async fn request(&self, _method: &'static str, _params: Value) -> Result<Value, ClientError> {
            std::future::pending().await
        }
        async fn notify(&self, _method: &'static str, _params: Value) {
            std::future::pending().await
        }
    }

    /// A window reloading reads no notification: the forwarder learns from
    /// every event all the same, so the run's answer (and the thread's
    /// record of its edits) still names each edit's call.
    #[tokio::test]
    async fn a_client_that_reads_nothing_does_not_stop_the_learning() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let client: Arc<dyn ClientLink> = Arc::new(Stuck);
        let editor = Arc::new(LspEditor::new(
            Arc::default(),
            Arc::clone(&client),
            Arc::new(RwLock::new(Settings::default())),
            EditCapabilities::default(),
            vec![root.clone()],
            Arc::default(),
        ));
        let workspace = Arc::new(Workspace::new(&root).unwrap());
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (forwarded_tx, forwarded_rx) = watch::channel(0);
        let (learnt_tx, mut learnt_rx) = watch::channel(0);
        let learnt = Arc::new(std::sync::Mutex::new(Forwarded::default()));
        let path = root.join("a.txt");
        events_tx.send(RunEvent::ToolCall { id: "toolu_1".into(), name: "edit_file".into(), input: json!({}), kind: ToolKind::Edit { path: path.clone() }, summary: "a.txt".into() }).unwrap();
        events_tx.send(RunEvent::ToolResult { id: "toolu_1".into(), is_error: false, content: "ok".into(), effects: Vec::new(), edit: None }).unwrap();
        let task = tokio::spawn(forward_events(
            client,
            (editor, workspace, None),
            ("run-1".into(), "thread-1".into()),
            events_rx,
            Some(json!("token")),
            (forwarded_tx, learnt_tx),
            Arc::clone(&learnt),
        ));
        tokio::time::timeout(std::time::Duration::from_secs(10), learnt_rx.wait_for(|n| *n >= 2)).await.expect("learnt from both events").unwrap();
        assert_eq!(learnt.locked().written, vec![path]);
        assert_eq!(*forwarded_rx.borrow(), 0, "nothing reached the client");
        task.abort();
    }
}
