//! The runs going on in an editor session: their ids, cancel tokens and
//! work-done progress tokens (`tandem.cancel`, a progress cancel, shutdown).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use crate::sync::MutexExt;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

struct ActiveRun {
    cancel: CancellationToken,
    progress_token: Option<Value>,
}

/// The runs going on: one per conversation thread at most (the threads
/// themselves refuse a second), several threads at once.
#[derive(Default)]
pub struct Runs {
    active: Mutex<BTreeMap<String, ActiveRun>>,
    next_id: AtomicU64,
    /// Told when the last run ends (shutdown waits for it).
    idle: tokio::sync::Notify,
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, ActiveRun>> {
        self.active.locked()
    }

    /// A new run id, registered as running.
    pub(super) fn claim(&self, cancel: CancellationToken) -> String {
        let id = format!("run-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        self.lock().insert(id.clone(), ActiveRun { cancel, progress_token: None });
        id
    }

    pub(super) fn release(&self, id: &str) {
        let mut active = self.lock();
        active.remove(id);
        if active.is_empty() {
            self.idle.notify_waiters();
        }
    }

    /// Wait until no run is going on, at most `bound`; whether none is.
    /// (Shutdown: a cancelled run still finishes the write it is in, its
    /// checkpoint and its thread's end before the process may exit.)
    pub async fn wait_idle(&self, bound: std::time::Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.idle.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.lock().is_empty() {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(bound, wait).await.is_ok()
    }

    pub(super) fn set_progress_token(&self, id: &str, token: Value) {
        if let Some(run) = self.lock().get_mut(id) {
            run.progress_token = Some(token);
        }
    }

    /// `tandem.cancel`: true when a run with that id was running.
    pub fn cancel(&self, id: &str) -> bool {
        match self.lock().get(id) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// `window/workDoneProgress/cancel`.
    pub fn cancel_progress(&self, token: &Value) -> bool {
        match self.lock().values().find(|run| run.progress_token.as_ref() == Some(token)) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancel every run (shutdown).
    pub fn cancel_all(&self) {
        for run in self.lock().values() {
            run.cancel.cancel();
        }
    }

    pub fn active_ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }
}
