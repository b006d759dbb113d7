//! `list_files`: find files by glob, newest first. Also owns what
//! `grep_search` shares with it: the glob semantics ([`PathGlob`]), the
//! ignore-aware walker setup ([`walker_for`]) and a bounded "best N" keeper
//! ([`TopN`]).
//!
//! Decisions, in one place:
//! - Ignore rules are ripgrep's defaults: `.gitignore` (and `.git/info/exclude`,
//!   the global gitignore) inside a git repository, `.ignore` everywhere,
//!   parent folders' ignore files included. `.git` itself is never listed.
//! - Hidden files and folders are skipped unless the pattern names one
//!   (`.github/**`, `**/.env`, `.*`).
//! - A pattern without `/` matches the file name at any depth (`*.rs` finds
//!   every Rust file), as in `.gitignore` and `rg -g`; a pattern with `/` is
//!   matched against the path relative to the search folder (`src/**/*.rs`).
//! - Files open in the editor that exist only there (new, unsaved) are
//!   listed too: `read_file` and `grep_search` see them, so `list_files` must
//!   not hide them. They count as the newest files.
//! - Paths are printed relative to the workspace root.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::Workspace;

/// At most this many paths are listed; the rest are counted.
pub const MAX_LISTED_FILES: usize = 200;

/// Find files whose path matches a glob pattern, newest first (by modification time).
///
/// - `*.rs` matches file names at any depth; `src/**/*.ts` matches paths relative to the
///   search folder; `*.{ts,tsx}` matches either extension.
/// - Files ignored by .gitignore/.ignore are skipped, and so are hidden files unless the
///   pattern names them (`.github/**`, `**/.env`).
/// - At most 200 paths are shown, relative to the workspace root; narrow the pattern or
///   the path to see the rest.
///
/// Use this instead of `find` or `ls -R` in run_shell.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListFilesArgs {
    /// The glob pattern, e.g. "**/*.rs", "src/**/*.test.ts", "Cargo.toml".
    pub pattern: String,
    /// The folder to search, relative to the workspace root. Defaults to the workspace root.
    #[serde(default)]
    pub path: Option<String>,
}

pub struct ListFiles;

#[async_trait]
impl Tool for ListFiles {
    type Args = ListFilesArgs;
    type Plan = ();
    const NAME: &'static str = "list_files";

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        ToolKind::Read { paths: vec![ctx.workspace.resolve_lenient(args.path.as_deref().unwrap_or("."))] }
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        match &args.path {
            Some(path) => format!("{} in {path}", args.pattern),
            None => args.pattern.clone(),
        }
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, args: Self::Args, _plan: (), ctx: &ToolContext) -> Result<String, ToolError> {
        let dir = search_folder(&ctx.workspace, args.path.as_deref())?;
        if dir.is_file() {
            return Err(ToolError::model(format!(
                "Error: {} is a file, not a folder. Give a folder as path, or use read_file to read it.",
                ctx.workspace.display_path(&dir)
            )));
        }
        let glob = PathGlob::new(&args.pattern, &dir, ctx.workspace.root())?;
        let workspace = Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let listing = tokio::task::spawn_blocking(move || list(&workspace, &dir, &glob, &|| cancel.is_cancelled()))
            .await
            .map_err(|e| ToolError::model(format!("Error: the file listing stopped unexpectedly: {e}")))?;
        Ok(render(listing))
    }
}

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
        Ok(PathGlob { matcher, basename_only: !relative.contains('/'), names_hidden })
    }

    /// True when the pattern names a hidden file or folder, so hidden
    /// entries must be walked.
    pub(crate) fn names_hidden(&self) -> bool {
        self.names_hidden
    }

    /// Does `path` (below `dir`) match?
    pub(crate) fn is_match(&self, path: &Path, dir: &Path) -> bool {
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

/// Sorts newest first, then by path.
type ListKey = (Reverse<SystemTime>, String);

#[derive(Debug)]
struct Listing {
    shown: Vec<String>,
    total: usize,
}

struct ListState {
    top: TopN<ListKey>,
    total: usize,
}

struct ListVisitorBuilder<'a> {
    workspace: &'a Workspace,
    dir: &'a Path,
    glob: &'a PathGlob,
    cancelled: &'a (dyn Fn() -> bool + Sync),
    shared: Arc<Mutex<ListState>>,
}

impl<'s> ParallelVisitorBuilder<'s> for ListVisitorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(ListVisitor {
            workspace: self.workspace,
            dir: self.dir,
            glob: self.glob,
            cancel: CancelCheck::new(self.cancelled),
            shared: Arc::clone(&self.shared),
            local: ListState { top: TopN::new(MAX_LISTED_FILES), total: 0 },
        })
    }
}

/// One walker thread's share: its own bounded top list, merged on drop so
/// threads never contend while walking.
struct ListVisitor<'a> {
    workspace: &'a Workspace,
    dir: &'a Path,
    glob: &'a PathGlob,
    cancel: CancelCheck<'a>,
    shared: Arc<Mutex<ListState>>,
    local: ListState,
}

impl ParallelVisitor for ListVisitor<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.should_stop() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else { return WalkState::Continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) || !self.glob.is_match(entry.path(), self.dir) {
            return WalkState::Continue;
        }
        self.local.total += 1;
        let mtime = entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
        // Skip building the path string when this file cannot make the list.
        if self.local.top.is_full() && self.local.top.worst().is_some_and(|(Reverse(worst), _)| mtime < *worst) {
            return WalkState::Continue;
        }
        let display = self.workspace.display_path(entry.path());
        self.local.top.push((Reverse(mtime), display));
        WalkState::Continue
    }
}

impl Drop for ListVisitor<'_> {
    fn drop(&mut self) {
        let local = std::mem::replace(&mut self.local, ListState { top: TopN::new(0), total: 0 });
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        shared.total += local.total;
        shared.top.merge(local.top);
    }
}

fn list(workspace: &Workspace, dir: &Path, glob: &PathGlob, cancelled: &(dyn Fn() -> bool + Sync)) -> Listing {
    let shared = Arc::new(Mutex::new(ListState { top: TopN::new(MAX_LISTED_FILES), total: 0 }));
    let mut builder =
        ListVisitorBuilder { workspace, dir, glob, cancelled, shared: Arc::clone(&shared) };
    walker_for(dir, glob.names_hidden()).build_parallel().visit(&mut builder);
    drop(builder);
    let mut state = match Arc::try_unwrap(shared) {
        Ok(mutex) => mutex.into_inner().unwrap_or_else(|e| e.into_inner()),
        Err(shared) => {
            let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *guard, ListState { top: TopN::new(0), total: 0 })
        }
    };
    for path in unsaved_buffers(workspace, dir) {
        if glob.is_match(&path, dir) && (glob.names_hidden() || !is_hidden_below(&path, dir)) {
            state.total += 1;
            state.top.push((Reverse(SystemTime::now()), workspace.display_path(&path)));
        }
    }
    Listing { shown: state.top.into_sorted().into_iter().map(|(_, path)| path).collect(), total: state.total }
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

fn render(listing: Listing) -> String {
    if listing.total == 0 {
        return "No files found matching the pattern.".to_string();
    }
    let mut out = listing.shown.join("\n");
    let more = listing.total.saturating_sub(listing.shown.len());
    if more > 0 {
        out.push_str(&format!("\n... and {more} more (narrow the pattern or the path to see them)"));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn glob_matches(pattern: &str, path: &str) -> bool {
        let dir = Path::new("/ws");
        PathGlob::new(pattern, dir, dir).unwrap().is_match(&dir.join(path), dir)
    }

    #[test]
    fn glob_semantics() {
        let cases = [
            ("*.rs", "a.rs", true),
            ("*.rs", "src/deep/a.rs", true),
            ("src/*.rs", "src/a.rs", true),
            ("src/*.rs", "src/deep/a.rs", false),
            ("src/**/*.rs", "src/deep/a.rs", true),
            ("**/*.rs", "a.rs", true),
            ("*.{ts,tsx}", "web/x.tsx", true),
            ("./src/*.rs", "src/a.rs", true),
            ("/ws/src/*.rs", "src/a.rs", true),
            ("Cargo.toml", "crates/x/Cargo.toml", true),
            ("*.rs", "a.rsx", false),
        ];
        let got: Vec<_> = cases.iter().map(|(p, path, _)| (*p, *path, glob_matches(p, path))).collect();
        let want: Vec<_> = cases.iter().map(|(p, path, m)| (*p, *path, *m)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn hidden_is_named() {
        let dir = Path::new("/ws");
        let named = |p: &str| PathGlob::new(p, dir, dir).unwrap().names_hidden();
        assert!(named(".github/**"));
        assert!(named("**/.env"));
        assert!(named(".*"));
        assert!(!named("**/*.rs"));
        assert!(!named("./src/*.rs"));
    }

    #[test]
    fn bad_glob_is_a_model_error() {
        let dir = Path::new("/ws");
        let err = PathGlob::new("src/[a", dir, dir).unwrap_err();
        assert!(matches!(err, ToolError::Model(m) if m.starts_with("Error: invalid glob pattern")));
    }

    #[test]
    fn top_n_keeps_the_smallest() {
        let mut a = TopN::new(3);
        let mut b = TopN::new(3);
        for k in [9, 1, 7, 3] {
            a.push(k);
        }
        for k in [2, 8, 0] {
            b.push(k);
        }
        a.merge(b);
        assert_eq!(a.into_sorted(), vec![0, 1, 2]);
    }
}
