//! The outbox: the editor sink's applyEdit waits behind the run events
//! sent before it. Beside the runs, not inside them: the editor sink uses
//! it, and the runs use the sink. (Prompts and plan reviews need none:
//! they wait their turn as questions in the run's events, reached by the
//! forwarder in order.)

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::host::EventSender;
use crate::sync::MutexExt;

/// Keeps the editor sink's applyEdit behind the run events that led to
/// it. Events reach the client through a forwarder task, so without this
/// an edit allowed without a question could reach the buffer before the
/// `tool_call` event of the edit. The run's
/// [`EventSender`] counts the events sent and the forwarder counts the
/// events it has passed on; [`RunOutbox::flush`] waits (bounded) until the
/// second count reaches the first.
///
/// With several threads running, a flush waits for every running run's
/// events: an applyEdit never overtakes any event sent before it.
#[derive(Default)]
pub struct RunOutbox {
    current: Mutex<BTreeMap<String, Counted>>,
}

/// A running run's counts: the events its sender sent, and those the
/// forwarder passed on to the client.
struct Counted {
    events: EventSender,
    forwarded: watch::Receiver<u64>,
}

impl RunOutbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Counted>> {
        self.current.locked()
    }

    pub(super) fn start(&self, run_id: &str, events: EventSender, forwarded: watch::Receiver<u64>) {
        self.lock().insert(run_id.to_string(), Counted { events, forwarded });
    }

    pub(super) fn finish(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// Wait until the events sent so far have gone out (at most 2 s).
    pub async fn flush(&self) {
        let pending: Vec<(u64, watch::Receiver<u64>)> =
            self.lock().values().map(|c| (c.events.sent(), c.forwarded.clone())).collect();
        let all = futures::future::join_all(pending.into_iter().map(|(target, mut forwarded)| async move {
            let _ = forwarded.wait_for(|n| *n >= target).await;
        }));
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), all).await;
    }
}
