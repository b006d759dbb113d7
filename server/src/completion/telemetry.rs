//! Local counts, for tuning `debounceMs`: per language-server session,
//! how many suggestions were shown and how many accepted (the item's
//! command runs when the editor inserts it), with the requests, cache hits,
//! answers dropped as stale and model failures. Kept in the user's data
//! folder (`tandem/completions/<workspace>/<session>.json`), read by
//! `tandem doctor`; nothing is sent anywhere.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use crate::sync::MutexExt;

use serde::{Deserialize, Serialize};

/// Sessions kept per workspace (older files are removed).
pub const SESSIONS_KEPT: usize = 10;
/// Counts are written at most this often (and when the session ends).
const WRITE_EVERY: Duration = Duration::from_secs(2);

/// One session's counts, as saved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCounts {
    /// Seconds since the Unix epoch.
    pub started: u64,
    pub pid: u32,
    pub requests: u64,
    pub shown: u64,
    pub accepted: u64,
    pub cache_hits: u64,
    pub stale: u64,
    pub failures: u64,
}

/// What a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Request,
    Shown,
    Accepted,
    CacheHit,
    Stale,
    Failure,
}

/// The live counts of this session.
#[derive(Debug)]
pub struct Stats {
    started: u64,
    counters: [AtomicU64; 6],
    file: Option<PathBuf>,
    last_write: Mutex<Option<std::time::Instant>>,
}

impl Stats {
    /// Counts saved under `dir` (`None`: kept in memory only).
    pub fn new(dir: Option<PathBuf>) -> Self {
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let file = dir.map(|dir| dir.join(format!("{started}-{}.json", std::process::id())));
        Stats { started, counters: Default::default(), file, last_write: Mutex::new(None) }
    }

    /// The folder of a workspace's session counts in the user's data folder.
    pub fn dir_for(root: &Path) -> Option<PathBuf> {
        let data = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(dirs::data_dir)?;
        Some(data.join("tandem").join("completions").join(crate::thread::store::workspace_hash(root)))
    }

    pub fn add(&self, count: Count) {
        self.counters[count as usize].fetch_add(1, Ordering::Relaxed);
        if matches!(count, Count::Shown | Count::Accepted) {
            self.save(false);
        }
    }

    pub fn get(&self, count: Count) -> u64 {
        self.counters[count as usize].load(Ordering::Relaxed)
    }

    pub fn counts(&self) -> SessionCounts {
        SessionCounts {
            started: self.started,
            pid: std::process::id(),
            requests: self.get(Count::Request),
            shown: self.get(Count::Shown),
            accepted: self.get(Count::Accepted),
            cache_hits: self.get(Count::CacheHit),
            stale: self.get(Count::Stale),
            failures: self.get(Count::Failure),
        }
    }

    /// Write the counts (at most every few seconds unless `now`).
    pub fn save(&self, now: bool) {
        let Some(file) = &self.file else { return };
        {
            let mut last = self.last_write.locked();
            if !now && last.is_some_and(|at| at.elapsed() < WRITE_EVERY) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        let Some(dir) = file.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let Ok(text) = serde_json::to_string(&self.counts()) else { return };
        let temp = file.with_extension("json.tmp");
        if std::fs::write(&temp, text).is_ok() && std::fs::rename(&temp, file).is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        prune(dir);
    }
}

/// Keep the newest [`SESSIONS_KEPT`] files.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    if files.len() <= SESSIONS_KEPT {
        return;
    }
    files.sort_by_key(|p| std::cmp::Reverse(started_of(p)));
    for old in &files[SESSIONS_KEPT..] {
        let _ = std::fs::remove_file(old);
    }
}

fn started_of(path: &Path) -> u64 {
    path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.split('-').next()).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The saved sessions of a workspace, newest first.
pub fn sessions(root: &Path) -> Vec<SessionCounts> {
    let Some(dir) = Stats::dir_for(root) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut sessions: Vec<SessionCounts> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
        .collect();
    sessions.sort_by_key(|s| std::cmp::Reverse((s.started, s.pid)));
    sessions
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_saved_and_old_sessions_pruned() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..SESSIONS_KEPT + 2 {
            std::fs::write(dir.path().join(format!("{i}-1.json")), "{}").unwrap();
        }
        let stats = Stats::new(Some(dir.path().to_path_buf()));
        stats.add(Count::Request);
        stats.add(Count::Shown);
        stats.add(Count::Accepted);
        stats.save(true);
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, SESSIONS_KEPT);
        let text = std::fs::read_to_string(stats.file.as_ref().unwrap()).unwrap();
        let saved: SessionCounts = serde_json::from_str(&text).unwrap();
        assert_eq!((saved.requests, saved.shown, saved.accepted), (1, 1, 1));
    }
}
