//! The threads of one editor session: each is idle (ready to continue) or
//! busy with exactly one run. A second ask on a busy thread is refused;
//! different threads run at once (their writes to one file are serialised
//! by the workspace's edit locks).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::store::{LoadError, ThreadStore, ThreadSummary};
use super::transcript::Transcript;
use super::{new_thread_id, Thread};

enum Slot {
    Idle(Box<Thread>),
    Busy { run_id: String },
}

/// Why a thread could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadError {
    Busy { thread_id: String, run_id: String },
    Unknown(String),
}

impl std::fmt::Display for ThreadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThreadError::Busy { thread_id, run_id } => write!(
                f,
                "thread {thread_id} is busy with run {run_id}: wait for it to finish, cancel it with tandem.cancel, or start a new thread (omit threadId)"
            ),
            ThreadError::Unknown(message) => f.write_str(message),
        }
    }
}

pub struct Threads {
    store: Option<ThreadStore>,
    workspace: PathBuf,
    slots: Mutex<HashMap<String, Slot>>,
}

impl Threads {
    /// `store`: where threads are saved (`None`: kept in memory only).
    pub fn new(workspace: PathBuf, store: Option<ThreadStore>) -> Self {
        Threads { store, workspace, slots: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take a thread for a run: the given one (from memory or disk), or a
    /// new one. It stays busy until [`Threads::check_in`].
    pub fn check_out(&self, thread_id: Option<&str>, run_id: &str) -> Result<Thread, ThreadError> {
        let mut slots = self.lock();
        let busy = Slot::Busy { run_id: run_id.to_string() };
        let Some(id) = thread_id else {
            let mut thread = Thread::new(new_thread_id(), self.workspace.clone());
            if let Some(store) = &self.store {
                if let Err(err) = store.create(&mut thread) {
                    tracing::warn!(%err, "cannot save the new thread; it is kept in memory only");
                }
            }
            slots.insert(thread.id.clone(), busy);
            return Ok(thread);
        };
        match slots.remove(id) {
            Some(Slot::Idle(thread)) => {
                slots.insert(id.to_string(), busy);
                Ok(*thread)
            }
            Some(Slot::Busy { run_id: holder }) => {
                slots.insert(id.to_string(), Slot::Busy { run_id: holder.clone() });
                Err(ThreadError::Busy { thread_id: id.to_string(), run_id: holder })
            }
            None => {
                let store = self.store.as_ref().ok_or_else(|| ThreadError::Unknown(format!("no thread \"{id}\" in this session")))?;
                let thread = store.load(id).map_err(|e| match e {
                    LoadError::NotFound(_) => ThreadError::Unknown(format!("no thread \"{id}\" (see tandem.threads)")),
                    other => ThreadError::Unknown(other.to_string()),
                })?;
                slots.insert(id.to_string(), busy);
                Ok(thread)
            }
        }
    }

    /// The run is over: the thread is idle again.
    pub fn check_in(&self, thread: Thread) {
        self.lock().insert(thread.id.clone(), Slot::Idle(Box::new(thread)));
    }

    /// Every thread: this session's and the saved ones, most recent first.
    pub fn list(&self) -> Vec<ThreadSummary> {
        let mut by_id: HashMap<String, ThreadSummary> = HashMap::new();
        if let Some(store) = &self.store {
            let (saved, problems) = store.list();
            for problem in problems {
                tracing::warn!("{problem}");
            }
            by_id.extend(saved.into_iter().map(|t| (t.id.clone(), t)));
        }
        for (id, slot) in self.lock().iter() {
            if let Slot::Idle(c) = slot {
                by_id.insert(id.clone(), ThreadSummary { id: id.clone(), title: c.title.clone(), updated_ms: c.updated_ms, totals: c.totals });
            }
        }
        let mut list: Vec<ThreadSummary> = by_id.into_values().collect();
        list.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| b.id.cmp(&a.id)));
        list
    }

    /// A thread's past as run events, for a transcript view: from its
    /// session file (the whole thread, even while it runs), else from the
    /// history kept in memory.
    pub fn transcript(&self, id: &str) -> Result<Transcript, ThreadError> {
        if let Some(store) = &self.store {
            match store.transcript(id) {
                Ok(transcript) => return Ok(transcript),
                Err(LoadError::NotFound(_)) => {}
                Err(other) => return Err(ThreadError::Unknown(other.to_string())),
            }
        }
        match self.lock().get(id) {
            Some(Slot::Idle(thread)) => Ok(super::transcript::from_messages(&thread.messages)),
            Some(Slot::Busy { run_id }) => Err(ThreadError::Busy { thread_id: id.to_string(), run_id: run_id.clone() }),
            None => Err(ThreadError::Unknown(format!("no thread \"{id}\" (see tandem.threads)"))),
        }
    }

    /// Drop a thread (and its file); refused while it runs.
    pub fn forget(&self, id: &str) -> Result<bool, ThreadError> {
        let mut slots = self.lock();
        if let Some(Slot::Busy { run_id }) = slots.get(id) {
            return Err(ThreadError::Busy { thread_id: id.to_string(), run_id: run_id.clone() });
        }
        let in_memory = slots.remove(id).is_some();
        let on_disk = match &self.store {
            Some(store) => store.forget(id).unwrap_or_else(|err| {
                tracing::warn!(%err, "cannot delete the session file");
                false
            }),
            None => false,
        };
        Ok(in_memory || on_disk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_per_thread_and_forget_refuses_a_busy_one() {
        let threads = Threads::new(PathBuf::from("/w"), None);
        let first = threads.check_out(None, "run-1").unwrap();
        let id = first.id.clone();
        assert_eq!(threads.check_out(Some(&id), "run-2").unwrap_err(), ThreadError::Busy { thread_id: id.clone(), run_id: "run-1".into() });
        assert!(threads.forget(&id).is_err());
        let other = threads.check_out(None, "run-3").unwrap();
        assert_ne!(other.id, id);
        threads.check_in(first);
        let again = threads.check_out(Some(&id), "run-4").unwrap();
        assert_eq!(again.id, id);
        threads.check_in(again);
        assert!(threads.forget(&id).unwrap());
        assert!(matches!(threads.check_out(Some(&id), "run-5"), Err(ThreadError::Unknown(_))));
    }
}
