//! The event forwarder: a run's events go to the client as
//! `tandem/runEvent` notifications (and tool calls as progress reports),
//! an edit call's result with what became of its edit; the run's end gives
//! the answer what the run changed. Each event is told reached once it is
//! out: a question in the events is no notification, and once reached the
//! prompter asks; an applyEdit waits until the events before it are out.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::super::client::{methods, ClientLink};
use super::super::documents::path_to_uri;
use crate::host::{QuestionTurns, RunEvent};
use crate::protocol::{ChangedFile, RunEdit};
use crate::sync::MutexExt;

/// A file as the answer and the run events name it: its URI.
pub(crate) fn file_uri(path: &Path) -> String {
    path_to_uri(path).map(|uri| uri.as_str().to_string()).unwrap_or_else(|| path.display().to_string())
}

/// What the run changed, as its end listed it (`None` until the end came).
pub(super) type Changed = Arc<std::sync::Mutex<Option<Vec<ChangedFile>>>>;

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
/// reports); each event is told reached (`questions`) once it and every
/// event before it are out, by the second stage, as it sends: a question's
/// asking and an applyEdit wait for that.
///
/// Two stages: what the answer needs (the run's changed files, from its
/// end) is taken as each event arrives, never waiting on the client; a
/// second task sends the notifications in order. A client that stops
/// reading (a window reloading) slows the second, never the first.
pub(super) async fn forward_events(
    client: Arc<dyn ClientLink>,
    checkpoint: Option<Arc<crate::checkpoint::RunRecorder>>,
    (run_id, thread_id): (String, String),
    mut events: mpsc::UnboundedReceiver<RunEvent>,
    progress: Option<Value>,
    questions: QuestionTurns,
    changed: Changed,
) {
    let mut forwarder = Forwarder { checkpoint, run_id, thread_id, progress, seq: 0, tools_called: false, changed };
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<(RunEvent, Vec<(&'static str, Value)>)>();
    let sender = tokio::spawn(async move {
        while let Some((event, notifications)) = out_rx.recv().await {
            for (method, params) in notifications {
                client.notify(method, params).await;
            }
            questions.reached(&event);
        }
    });
    while let Some(event) = events.recv().await {
        // A question is answered, not shown: it has no notification.
        let notifications = match event.unnest().0 {
            RunEvent::Question { .. } => Vec::new(),
            _ => forwarder.forward(&event),
        };
        let _ = out_tx.send((event, notifications));
    }
    drop(out_tx);
    let _ = sender.await;
}

struct Forwarder {
    /// Sent with every event, so a client knows the thread from the start.
    thread_id: String,
    /// The run's checkpoint, completed at the run's `end` event.
    checkpoint: Option<Arc<crate::checkpoint::RunRecorder>>,
    run_id: String,
    progress: Option<Value>,
    seq: u64,
    /// A tool was called in this run: a `sandbox` event from now on is news
    /// of the run (a host the network lists refused), not the notice the
    /// run starts with, which the ask's handler shows itself.
    tools_called: bool,
    /// Read by the run's task once the events are out.
    changed: Changed,
}

impl Forwarder {
    /// The notifications that show `event` to the client, in order.
    fn forward(&mut self, event: &RunEvent) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        // What became of an edit call's change (`applied`, `partial`, …),
        // added to its `tool_result` event: its effect on the file, not a
        // command's.
        let mut edit = None;
        match event.unnest().0 {
            RunEvent::ToolCall { name, summary, .. } => {
                self.tools_called = true;
                if let Some(token) = &self.progress {
                    let report = json!({"token": token, "value": {"kind": "report", "message": format!("{name} {summary}")}});
                    out.push((methods::PROGRESS, report));
                }
            }
            RunEvent::ToolResult { effects, .. } => {
                edit = effects.iter().rev().find(|e| e.by_command.is_none() && !e.untried).map(|effect| RunEdit::new(file_uri(&effect.path), effect));
            }
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
            RunEvent::End { status, effects, .. } => {
                *self.changed.locked() = Some(effects.clone());
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
    use async_trait::async_trait;

    use super::*;
    use crate::lsp::client::ClientError;
    use crate::protocol::{EditStatus, FileEffect, RunStatus};

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

    /// A client that takes its time over the first notification, and
    /// keeps the order in which what it was sent arrived.
    #[derive(Default)]
    struct Slow {
        seen: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl ClientLink for Slow {
        async fn request(&self, method: &'static str, _params: Value) -> Result<Value, ClientError> {
            self.seen.locked().push(method.to_string());
            Ok(Value::Null)
        }
        async fn notify(&self, method: &'static str, params: Value) {
            // Longer than the bounded wait the prompts had before (2 s).
            if self.seen.locked().is_empty() {
                tokio::time::sleep(std::time::Duration::from_secs(3)).await;
            }
            let event = params["event"]["type"].as_str().unwrap_or_default().to_string();
            self.seen.locked().push(format!("{method} {event}"));
        }
    }

    /// A prompt about a call never reaches the client before the call's
    /// event, however long that event takes to go out: its question is
    /// reached behind it in the stream. The question itself is no
    /// `tandem/runEvent`.
    #[tokio::test]
    async fn a_question_never_overtakes_the_events_before_it() {
        let client = Arc::new(Slow::default());
        let (events, events_rx) = crate::host::event_channel();
        let task = tokio::spawn(forward_events(
            Arc::clone(&client) as Arc<dyn ClientLink>,
            None,
            ("run-1".into(), "thread-1".into()),
            events_rx,
            None,
            events.question_turns(),
            Arc::default(),
        ));
        events.send(RunEvent::ToolCall { id: "toolu_1".into(), name: "run_shell".into(), input: json!({}), kind: Default::default(), summary: String::new() });
        let asker = Arc::clone(&client);
        let question = crate::protocol::QuestionKind::Permission { tool: "run_shell".into(), kind: Default::default(), question: "run it?".into() };
        let turn = events.question_turn();
        let prompt = tokio::spawn(async move {
            turn.wait(question).await;
            let _ = asker.request(methods::SHOW_MESSAGE_REQUEST, json!({})).await;
        });
        tokio::time::timeout(std::time::Duration::from_secs(20), prompt).await.expect("the prompt went out").unwrap();
        events.send(RunEvent::Text { text: "after".into() });
        drop(events);
        tokio::time::timeout(std::time::Duration::from_secs(20), task).await.expect("the forwarder ended").unwrap();
        let seen = client.seen.locked().clone();
        assert_eq!(seen, ["tandem/runEvent tool_call", "window/showMessageRequest", "tandem/runEvent text"]);
    }

    /// The editor sink's applyEdit never reaches the client before the
    /// events sent before it (the call's `tool_call`), however long they
    /// take to go out: the edit's turn in the stream comes once the
    /// forwarder has passed them on (there is no outbox beside the stream).
    #[tokio::test]
    async fn an_apply_edit_never_overtakes_the_events_before_it() {
        let client = Arc::new(Slow::default());
        let (events, events_rx) = crate::host::event_channel();
        let task = tokio::spawn(forward_events(
            Arc::clone(&client) as Arc<dyn ClientLink>,
            None,
            ("run-1".into(), "thread-1".into()),
            events_rx,
            None,
            events.question_turns(),
            Arc::default(),
        ));
        events.send(RunEvent::ToolCall { id: "toolu_1".into(), name: "edit_file".into(), input: json!({}), kind: Default::default(), summary: String::new() });
        let editor = Arc::clone(&client);
        let turn = events.edit_turn();
        let edit = tokio::spawn(async move {
            turn.wait().await;
            let _ = editor.request(methods::APPLY_EDIT, json!({})).await;
        });
        tokio::time::timeout(std::time::Duration::from_secs(20), edit).await.expect("the edit went out").unwrap();
        events.send(RunEvent::Text { text: "after".into() });
        drop(events);
        tokio::time::timeout(std::time::Duration::from_secs(20), task).await.expect("the forwarder ended").unwrap();
        let seen = client.seen.locked().clone();
        assert_eq!(seen, ["tandem/runEvent tool_call", "workspace/applyEdit", "tandem/runEvent text"]);
    }

    /// A window reloading reads no notification: the forwarder takes the
    /// run's changed files from its end all the same, so the run's answer
    /// (and the thread's record of its edits) lists them.
    #[tokio::test]
    async fn a_client_that_reads_nothing_does_not_stop_the_answer() {
        let client: Arc<dyn ClientLink> = Arc::new(Stuck);
        let (events_tx, events_rx) = crate::host::event_channel();
        let changed: Changed = Arc::default();
        let effect = FileEffect::new("/w/a.txt".into(), EditStatus::Written);
        events_tx.send(RunEvent::ToolResult { id: "toolu_1".into(), is_error: false, content: "ok".into(), effects: vec![effect.clone()], edit: None });
        let end = RunEvent::End {
            status: RunStatus::Completed,
            text: "done".into(),
            usage: Default::default(),
            cost_usd: None,
            thread_id: None,
            run_id: Some("run-1".into()),
            changed_files: vec!["a.txt".into()],
            effects: vec![ChangedFile { call_id: "toolu_1".into(), effect }],
        };
        events_tx.send(end);
        let task = tokio::spawn(forward_events(client, None, ("run-1".into(), "thread-1".into()), events_rx, Some(json!("token")), events_tx.question_turns(), Arc::clone(&changed)));
        let taken = async {
            loop {
                if let Some(changed) = changed.locked().clone() {
                    return changed;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        };
        let changed = tokio::time::timeout(std::time::Duration::from_secs(10), taken).await.expect("the end was taken");
        assert_eq!(changed.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(), ["toolu_1"]);
        let out = tokio::time::timeout(std::time::Duration::from_millis(300), events_tx.caught_up()).await;
        assert!(out.is_err(), "nothing reached the client, so an edit still waits its turn");
        task.abort();
    }
}
