//! One write per file at a time, across every conversation thread of a
//! workspace. A write checks that the file still holds what its thread read
//! and then changes it; two threads doing that at once could both pass the
//! check and the second would overwrite the first. Under the file's lock the
//! second finds the file changed and tells its model to read it again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use crate::sync::MutexExt;

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Locks kept for idle files before the map is pruned.
const PRUNE_ABOVE: usize = 256;

#[derive(Debug, Default)]
pub struct EditLocks {
    files: Mutex<HashMap<PathBuf, Arc<AsyncMutex<()>>>>,
}

impl EditLocks {
    /// Wait for the file's lock; it is held until the guard drops.
    pub async fn lock(&self, path: &Path) -> OwnedMutexGuard<()> {
        let lock = {
            let mut files = self.files.locked();
            if files.len() > PRUNE_ABOVE {
                // Only this map holds an idle file's lock.
                files.retain(|_, lock| Arc::strong_count(lock) > 1);
            }
            Arc::clone(files.entry(path.to_path_buf()).or_default())
        };
        lock.lock_owned().await
    }
}
