//! The walk that `list_files` and `grep_search` share: the search folder,
//! `.gitignore`-aware parallel walking, the path glob, the cancellation
//! check, the bounded top-N collector, and the open buffers with no file on
//! disk yet.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;

use crate::tools::ToolError;
use crate::workspace::Workspace;

/// Resolve the optional `path` argument to an existing folder (or file).
pub(crate) fn search_folder(workspace: &Workspace, path: Option<&str>) -> Result<PathBuf, ToolError> {
    let path = match path.map(str::trim) {
        None | Some("") | Some(".") => return Ok(workspace.root().to_path_buf()),
        Some(p) => p,
    };
    let resolved = workspace.resolve(path).map_err(|e| ToolError::model(e.message()))?;
    if !resolved.exists() {
        return Err(ToolError::model(format!(
            "Error: path not found: {path}. Give a folder relative to the workspace root, or omit path to search the whole workspace."
        )));
    }
    Ok(resolved)
}

/// A glob with `.gitignore`-like anchoring: a pattern without `/` matches
/// the file name at any depth, a pattern with `/` the path relative to the
/// search folder.
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    /// A set of one glob, not a `GlobMatcher`: the set picks a fast
    /// strategy (`*.rs` is an extension lookup) where the matcher always
    /// runs a regex, and this runs once per file of the walk.
    matcher: GlobSet,
    basename_only: bool,
    names_hidden: bool,
    /// `**` or `**/*`: every file matches, so no path is looked at
    /// (`list_files` with `**/*` is the commonest call).
    pub(crate) everything: bool,
    /// The pattern's leading folders with no glob character in them
    /// (`crates/core` of `crates/core/**/*.rs`): nothing outside them can
    /// match, so the walk can start there.
    literal_folders: PathBuf,
}

impl PathGlob {
    /// Compile `pattern`. Absolute patterns inside `dir` or `root`, and a
    /// leading `./`, are made relative first (models often send them).
    pub(crate) fn new(pattern: &str, dir: &Path, root: &Path) -> Result<PathGlob, ToolError> {
        let trimmed = pattern.trim();
        if trimmed.is_empty() {
            return Err(ToolError::model("Error: the pattern is empty. Give a glob such as \"**/*.rs\"."));
        }
        let mut relative = trimmed;
        for prefix in [dir, root] {
            if let Some(rest) = prefix.to_str().and_then(|p| relative.strip_prefix(p)) {
                if rest.starts_with('/') {
                    relative = rest;
                    break;
                }
            }
        }
        let relative = relative.trim_start_matches("./").trim_start_matches('/');
        let relative = if relative.is_empty() { "**" } else { relative };
        let invalid = |e: globset::Error| ToolError::model(format!("Error: invalid glob pattern {pattern:?}: {}", e.kind()));
        let glob = GlobBuilder::new(relative).literal_separator(true).backslash_escape(true).build().map_err(invalid)?;
        let matcher = GlobSetBuilder::new().add(glob).build().map_err(invalid)?;
        let names_hidden = relative.split('/').any(|part| part.starts_with('.') && part != "." && part != "..");
        let everything = matches!(relative, "**" | "**/*");
        let mut parts: Vec<&str> = relative.split('/').collect();
        parts.pop(); // the last part names files
        let literal_folders: PathBuf = parts
            .into_iter()
            .take_while(|part| !part.is_empty() && *part != "." && *part != ".." && !part.contains(['*', '?', '[', ']', '{', '}', '\\']))
            .collect();
        Ok(PathGlob { matcher, basename_only: !relative.contains('/'), names_hidden, everything, literal_folders })
    }

    /// Where a walk of `dir` for this pattern can start: `dir` itself, or
    /// the pattern's leading literal folders below it when each is a real
    /// folder (not a link, which the walk would not have followed, and not
    /// hidden, which it would have skipped). Matching stays relative to
    /// `dir`, and the ignore rules of the folders above are read as from
    /// `dir` (the walker reads its parents' ignore files).
    pub(crate) fn walk_root(&self, dir: &Path) -> PathBuf {
        let mut root = dir.to_path_buf();
        for part in self.literal_folders.components() {
            let std::path::Component::Normal(name) = part else { return dir.to_path_buf() };
            let next = root.join(name);
            let is_real_folder = std::fs::symlink_metadata(&next).is_ok_and(|m| m.is_dir());
            if name.to_string_lossy().starts_with('.') || !is_real_folder {
                return dir.to_path_buf();
            }
            root = next;
        }
        root
    }

    /// True when the pattern names a hidden file or folder, so hidden
    /// entries must be walked.
    pub(crate) fn names_hidden(&self) -> bool {
        self.names_hidden
    }

    /// Does `path` (below `dir`) match?
    pub(crate) fn is_match(&self, path: &Path, dir: &Path) -> bool {
        if self.everything {
            return true;
        }
        if self.basename_only {
            return path.file_name().is_some_and(|name| self.matcher.is_match(name));
        }
        match path.strip_prefix(dir) {
            Ok(rel) if !rel.as_os_str().is_empty() => self.matcher.is_match(rel),
            // The search root itself (a single file given as path).
            _ => path.file_name().is_some_and(|name| self.matcher.is_match(name)),
        }
    }
}

/// A walker over `dir` with ripgrep's ignore rules; hidden entries are
/// walked only when `include_hidden`, and `.git` never.
pub(crate) fn walker_for(dir: &Path, include_hidden: bool) -> WalkBuilder {
    let mut builder = WalkBuilder::new(dir);
    builder.hidden(!include_hidden);
    if include_hidden {
        // With hidden entries on, `.git` would be walked: it is never wanted.
        builder.filter_entry(|entry| entry.file_name() != ".git");
    }
    builder
}

/// Asks "was the run cancelled?" once every [`CancelCheck::EVERY`] entries:
/// a `CancellationToken` answers behind a mutex, and asking on every entry
/// made the walker threads contend on it.
pub(crate) struct CancelCheck<'a> {
    cancelled: &'a (dyn Fn() -> bool + Sync),
    seen: u32,
}

impl<'a> CancelCheck<'a> {
    const EVERY: u32 = 256;

    pub(crate) fn new(cancelled: &'a (dyn Fn() -> bool + Sync)) -> Self {
        CancelCheck { cancelled, seen: 0 }
    }

    pub(crate) fn should_stop(&mut self) -> bool {
        self.seen = self.seen.wrapping_add(1);
        self.seen % Self::EVERY == 0 && (self.cancelled)()
    }
}

/// Keeps the `capacity` smallest items seen (by `Ord`), so a walk over a
/// huge tree holds a bounded number of results however many match.
#[derive(Debug)]
pub(crate) struct TopN<K: Ord> {
    capacity: usize,
    heap: BinaryHeap<K>,
}

impl<K: Ord> TopN<K> {
    pub(crate) fn new(capacity: usize) -> Self {
        TopN { capacity, heap: BinaryHeap::with_capacity(capacity.min(1024) + 1) }
    }

    /// True when nothing ordered after `key` can be kept any more.
    pub(crate) fn is_full(&self) -> bool {
        self.heap.len() >= self.capacity
    }

    /// The largest kept item: anything larger is not needed when full.
    pub(crate) fn worst(&self) -> Option<&K> {
        self.heap.peek()
    }

    pub(crate) fn push(&mut self, key: K) {
        if self.heap.len() < self.capacity {
            self.heap.push(key);
        } else if self.heap.peek().is_some_and(|worst| key.cmp(worst) == Ordering::Less) {
            self.heap.pop();
            self.heap.push(key);
        }
    }

    pub(crate) fn merge(&mut self, other: TopN<K>) {
        for key in other.heap {
            self.push(key);
        }
    }

    /// The kept items, smallest first.
    pub(crate) fn into_sorted(self) -> Vec<K> {
        self.heap.into_sorted_vec()
    }
}

/// Open editor buffers below `dir` with no file on disk (new, unsaved).
pub(crate) fn unsaved_buffers(workspace: &Workspace, dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> =
        workspace.open_buffers().into_iter().filter(|p| p.starts_with(dir) && !p.exists()).collect();
    paths.sort();
    paths
}

/// True when a component of `path` below `dir` starts with a dot.
pub(crate) fn is_hidden_below(path: &Path, dir: &Path) -> bool {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .components()
        .any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.') && s != "." && s != ".."))
}
