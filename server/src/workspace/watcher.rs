//! The file watcher: `notify` events for files in the read ledger make the
//! ledger compare the file's new fingerprint with what the agent saw.
//!
//! Only the folders of files the agent has read are watched (not the whole
//! tree recursively): a big repository would exhaust inotify watches, and
//! only ledger entries can be marked changed on disk.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use crate::sync::MutexExt;

use notify::{RecursiveMode, Watcher as _};

use super::ledger::{fingerprint, ReadLedger};

/// The ledgers a watcher reports to: the workspace's own and each
/// conversation thread's. Dropped threads fall out by themselves.
type Ledgers = Arc<Mutex<Vec<Weak<ReadLedger>>>>;

pub struct DiskWatcher {
    watcher: Mutex<notify::RecommendedWatcher>,
    watched: Mutex<HashSet<PathBuf>>,
    ledgers: Ledgers,
}

impl DiskWatcher {
    pub fn start(ledger: Arc<ReadLedger>) -> anyhow::Result<Self> {
        let ledgers: Ledgers = Arc::new(Mutex::new(vec![Arc::downgrade(&ledger)]));
        let seen_by = Arc::clone(&ledgers);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if event.kind.is_access() {
                return;
            }
            let live: Vec<Arc<ReadLedger>> = {
                let mut ledgers = seen_by.locked();
                ledgers.retain(|l| l.strong_count() > 0);
                ledgers.iter().filter_map(Weak::upgrade).collect()
            };
            for path in event.paths {
                let readers: Vec<&Arc<ReadLedger>> = live.iter().filter(|l| l.get(&path).is_some()).collect();
                if readers.is_empty() {
                    continue;
                }
                let current = std::fs::read(&path).ok().map(|bytes| fingerprint(&bytes));
                for ledger in readers {
                    if ledger.observe_disk(&path, current) {
                        tracing::debug!(path = %path.display(), "file changed on disk since the agent read it");
                    }
                }
            }
        })?;
        Ok(DiskWatcher { watcher: Mutex::new(watcher), watched: Mutex::new(HashSet::new()), ledgers })
    }

    /// Report changes to this ledger too (a conversation thread's).
    pub fn add_ledger(&self, ledger: &Arc<ReadLedger>) {
        let mut ledgers = self.ledgers.locked();
        ledgers.retain(|l| l.strong_count() > 0);
        if !ledgers.iter().any(|l| l.as_ptr() == Arc::as_ptr(ledger)) {
            ledgers.push(Arc::downgrade(ledger));
        }
    }

    /// Watch the folder holding `file` (once).
    pub fn watch_parent(&self, file: &Path) {
        let Some(dir) = file.parent() else { return };
        let mut watched = self.watched.locked();
        if watched.contains(dir) {
            return;
        }
        let mut watcher = self.watcher.locked();
        match watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                watched.insert(dir.to_path_buf());
            }
            Err(err) => tracing::warn!(dir = %dir.display(), %err, "cannot watch folder"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::ledger::ReadStamp;

    /// A file changed by another program is seen: the ledger entry of what
    /// the agent read is marked changed on disk. On Windows this is
    /// `notify` on ReadDirectoryChangesW (the test runs under Wine in
    /// tests/windows/unit), on Linux inotify.
    #[test]
    fn a_file_changed_by_another_program_is_marked_changed_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "as read\n").unwrap();
        let ledger = Arc::new(ReadLedger::default());
        ledger.record(&file, ReadStamp { version: None, fingerprint: fingerprint(b"as read\n") }, Arc::from("as read\n"));
        let watcher = DiskWatcher::start(Arc::clone(&ledger)).unwrap();
        watcher.watch_parent(&file);
        // Another program rewrites it in place.
        std::fs::write(&file, "changed by someone else\n").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ledger.get(&file).unwrap().changed_on_disk && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(ledger.get(&file).unwrap().changed_on_disk, "the watcher never saw the change");
        drop(watcher);
    }
}
