//! The file watcher: `notify` events for files in the read ledger make the
//! ledger compare the file's new fingerprint with what the agent saw.
//!
//! Only the folders of files the agent has read are watched (not the whole
//! tree recursively): a big repository would exhaust inotify watches, and
//! only ledger entries can go stale.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use notify::{RecursiveMode, Watcher as _};

use super::ledger::{fingerprint, ReadLedger};

pub struct DiskWatcher {
    watcher: Mutex<notify::RecommendedWatcher>,
    watched: Mutex<HashSet<PathBuf>>,
}

impl DiskWatcher {
    pub fn start(ledger: Arc<ReadLedger>) -> anyhow::Result<Self> {
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if event.kind.is_access() {
                return;
            }
            for path in event.paths {
                if ledger.get(&path).is_none() {
                    continue;
                }
                let current = std::fs::read(&path).ok().map(|bytes| fingerprint(&bytes));
                if ledger.observe_disk(&path, current) {
                    tracing::debug!(path = %path.display(), "file changed on disk since the agent read it");
                }
            }
        })?;
        Ok(DiskWatcher { watcher: Mutex::new(watcher), watched: Mutex::new(HashSet::new()) })
    }

    /// Watch the folder holding `file` (once).
    pub fn watch_parent(&self, file: &Path) {
        let Some(dir) = file.parent() else { return };
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        if watched.contains(dir) {
            return;
        }
        let mut watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        match watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                watched.insert(dir.to_path_buf());
            }
            Err(err) => tracing::warn!(dir = %dir.display(), %err, "cannot watch folder"),
        }
    }
}
