//! The threads of one editor session: each is idle (ready to continue) or
//! busy with exactly one run. A second ask on a busy thread is refused;
//! different threads run at once (their writes to one file are serialised
//! by the workspace's edit locks).
//!
//! Other processes share the saved threads (another editor window on the
//! workspace runs its own server): a run holds its thread's lock in the
//! store, so a thread running elsewhere is refused here
//! ([`ThreadError::Elsewhere`]) and never written to by two processes at
//! once; and a thread kept idle in memory that another process continued
//! since is read again from its file before it runs, so nothing that
//! process added is lost or written over.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use crate::sync::MutexExt;

use super::store::{LoadError, LockError, RunLock, ThreadStore, ThreadSummary};
use super::transcript::Transcript;
use super::{new_thread_id, valid_thread_id, Thread};

enum Slot {
    Idle(Box<Thread>),
    /// Running; `_lock`, held until the slot is replaced, keeps other
    /// processes from running it meanwhile.
    Busy { run_id: String, _lock: Option<RunLock> },
}

/// Why a thread could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadError {
    Busy { thread_id: String, run_id: String },
    /// Another process (another editor window's server, a `tandem chat`,
    /// a `tandem ask -c`) is running it.
    Elsewhere { thread_id: String, pid: Option<u32> },
    Unknown(String),
}

impl std::fmt::Display for ThreadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThreadError::Busy { thread_id, run_id } => write!(
                f,
                "thread {thread_id} is busy with run {run_id}: wait for it to finish, cancel it with tandem.cancel, or start a new thread (omit threadId)"
            ),
            ThreadError::Elsewhere { thread_id, pid } => {
                let process = pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
                write!(
                    f,
                    "this conversation is running in another window: thread {thread_id} has a run going in another Tandem process{process} on this workspace; wait for it to end there, or start a new conversation"
                )
            }
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
        self.slots.locked()
    }

    /// Take a thread for a run: the given one (from memory, or from disk
    /// when another process wrote to it since), or a new one. It stays
    /// busy, here and for other processes, until [`Threads::check_in`].
    pub fn check_out(&self, thread_id: Option<&str>, run_id: &str) -> Result<Thread, ThreadError> {
        let mut slots = self.lock();
        let Some(id) = thread_id else {
            let mut thread = Thread::new(new_thread_id(), self.workspace.clone());
            let mut lock = None;
            if let Some(store) = &self.store {
                match store.create(&mut thread) {
                    Ok(()) => lock = self.lock_run(store, &thread.id)?,
                    Err(err) => tracing::warn!(%err, "cannot save the new thread; it is kept in memory only"),
                }
            }
            slots.insert(thread.id.clone(), Slot::Busy { run_id: run_id.to_string(), _lock: lock });
            return Ok(thread);
        };
        if let Some(Slot::Busy { run_id: holder, .. }) = slots.get(id) {
            return Err(ThreadError::Busy { thread_id: id.to_string(), run_id: holder.clone() });
        }
        let lock = match &self.store {
            Some(store) => self.lock_run(store, id)?,
            None => None,
        };
        let kept = match slots.remove(id) {
            Some(Slot::Idle(thread)) if !self.store.as_ref().is_some_and(|store| store.is_stale(&thread)) => Some(*thread),
            Some(Slot::Idle(thread)) => {
                tracing::info!(thread = %id, "another process continued this thread: reading it again");
                drop(thread);
                None
            }
            _ => None,
        };
        let thread = match kept {
            Some(thread) => thread,
            None => {
                let store = self.store.as_ref().ok_or_else(|| ThreadError::Unknown(format!("no thread \"{id}\" in this session")))?;
                store.load(id).map_err(|e| match e {
                    // The same words in every front end: `tandem threads`
                    // and the editors' thread lists show the same threads.
                    LoadError::NotFound(_) => ThreadError::Unknown(format!("no saved thread \"{id}\" in this workspace (see `tandem threads`, or tandem.threads in the editor)")),
                    other => ThreadError::Unknown(other.to_string()),
                })?
            }
        };
        slots.insert(id.to_string(), Slot::Busy { run_id: run_id.to_string(), _lock: lock });
        Ok(thread)
    }

    /// The run lock of a saved thread; a lock that cannot be taken for
    /// another reason than a holder (a read-only folder) is logged, and
    /// the run goes on without it.
    fn lock_run(&self, store: &ThreadStore, id: &str) -> Result<Option<RunLock>, ThreadError> {
        match store.lock_run(id) {
            Ok(lock) => Ok(Some(lock)),
            Err(LockError::Held { pid }) => Err(ThreadError::Elsewhere { thread_id: id.to_string(), pid }),
            Err(LockError::Io(err)) => {
                tracing::warn!(%err, "cannot lock the thread; other processes are not kept from running it");
                Ok(None)
            }
        }
    }

    /// The run is over: the thread is idle again.
    pub fn check_in(&self, thread: Thread) {
        self.lock().insert(thread.id.clone(), Slot::Idle(Box::new(thread)));
    }

    /// An idle thread this process holds: its title and last activity
    /// (`None` while it runs, or when it is not held here).
    pub fn held(&self, id: &str) -> Option<ThreadSummary> {
        match self.lock().get(id) {
            Some(Slot::Idle(c)) => Some(ThreadSummary { id: id.to_string(), title: c.title.clone(), updated_ms: c.updated_ms, totals: c.totals }),
            _ => None,
        }
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
            // A saved thread's file is the truth: another process may have
            // continued it since this one held it.
            if let Slot::Idle(c) = slot {
                by_id.entry(id.clone()).or_insert_with(|| ThreadSummary { id: id.clone(), title: c.title.clone(), updated_ms: c.updated_ms, totals: c.totals });
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
            Some(Slot::Busy { run_id, .. }) => Err(ThreadError::Busy { thread_id: id.to_string(), run_id: run_id.clone() }),
            None => Err(ThreadError::Unknown(format!("no saved thread \"{id}\" in this workspace (see `tandem threads`, or tandem.threads in the editor)"))),
        }
    }

    /// Drop a thread (and its file); refused while it runs, here or in
    /// another process.
    pub fn forget(&self, id: &str) -> Result<bool, ThreadError> {
        let mut slots = self.lock();
        if let Some(Slot::Busy { run_id, .. }) = slots.get(id) {
            return Err(ThreadError::Busy { thread_id: id.to_string(), run_id: run_id.clone() });
        }
        // Held while the files go, so no other process starts a run of it meanwhile.
        let _lock = match &self.store {
            Some(store) if valid_thread_id(id) => self.lock_run(store, id)?,
            _ => None,
        };
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

    /// Two sessions on one store, as two editor windows' servers on one
    /// workspace (each opens the lock file itself, so their locks exclude
    /// each other as two processes' do).
    #[test]
    fn two_sessions_on_one_store_never_run_a_thread_at_once_and_each_reads_what_the_other_added() {
        use crate::model::Message;
        let dir = tempfile::tempdir().unwrap();
        let store = || Some(ThreadStore::at(dir.path(), std::path::Path::new("/w")));
        let (a, b) = (Threads::new(PathBuf::from("/w"), store()), Threads::new(PathBuf::from("/w"), store()));
        let texts = |t: &Thread| t.messages.iter().map(|m| m.text()).collect::<Vec<_>>();

        let mut thread = a.check_out(None, "run-1").unwrap();
        let id = thread.id.clone();
        assert!(matches!(b.check_out(Some(&id), "run-1"), Err(ThreadError::Elsewhere { thread_id, pid: Some(_) }) if thread_id == id));
        assert!(matches!(b.forget(&id), Err(ThreadError::Elsewhere { .. })));
        thread.push(Message::user_text("from a"));
        thread.commit();
        a.check_in(thread);

        let mut thread = b.check_out(Some(&id), "run-1").unwrap();
        assert_eq!(texts(&thread), ["from a"]);
        assert!(matches!(a.check_out(Some(&id), "run-2"), Err(ThreadError::Elsewhere { .. })));
        thread.push(Message::user_text("from b"));
        thread.commit();
        b.check_in(thread);

        // A's copy in memory is out of date: it is read again.
        let mut thread = a.check_out(Some(&id), "run-2").unwrap();
        assert_eq!(texts(&thread), ["from a", "from b"]);
        thread.push(Message::user_text("from a again"));
        thread.commit();
        a.check_in(thread);
        let reloaded = store().unwrap().load(&id).unwrap();
        assert_eq!(texts(&reloaded), ["from a", "from b", "from a again"]);
        assert!(b.forget(&id).unwrap());
    }
}
