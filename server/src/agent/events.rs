//! The channel of a run's events (the events themselves are
//! [`crate::protocol::RunEvent`]): one stream for the terminal printer,
//! `tandem ask --json` and the editor's `tandem/runEvent`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::tools::ports::tasks::TaskNews;

pub use crate::protocol::{RunEvent, RunStatus, Usage};

/// A task's start or end as the run's event.
pub fn task_event(news: &TaskNews) -> RunEvent {
    match news {
        TaskNews::Started(task) => RunEvent::TaskStarted { task_id: task.id.clone(), command: task.command.clone() },
        TaskNews::Ended(ending) => RunEvent::TaskEnded {
            task_id: ending.task.id.clone(),
            command: ending.task.command.clone(),
            status: ending.task.status,
            exit_code: ending.task.exit_code,
            last_lines: ending.last_lines.clone(),
        },
    }
}

/// The sending end of a run's events. It counts what it has sent, so that a
/// front end can wait until every event sent so far has gone out before it
/// asks the user something about them (see `lsp::runs::RunOutbox`).
#[derive(Debug, Clone)]
pub struct EventSender {
    tx: mpsc::UnboundedSender<RunEvent>,
    sent: Arc<AtomicU64>,
}

/// A channel for one run's events.
pub fn event_channel() -> (EventSender, mpsc::UnboundedReceiver<RunEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (EventSender { tx, sent: Arc::default() }, rx)
}

impl EventSender {
    /// Send one event; false when nobody listens any more.
    pub fn send(&self, event: RunEvent) -> bool {
        self.sent.fetch_add(1, Ordering::SeqCst);
        self.tx.send(event).is_ok()
    }

    /// How many events were sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }
}
