//! `list_files`: find files by glob, newest first. The glob semantics, the
//! ignore-aware walker setup and the bounded "best N" keeper it shares with
//! `grep_search` live in `walk.rs`.
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

use std::cmp::Reverse;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use async_trait::async_trait;
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::support::walk::{is_hidden_below, search_folder, unsaved_buffers, walker_for, CancelCheck, PathGlob, TopN};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};
use crate::sync::{IntoValue, MutexExt};
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
    const ONLY_READS: bool = true;

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
        let mut shared = self.shared.locked();
        shared.total += local.total;
        shared.top.merge(local.top);
    }
}

fn list(workspace: &Workspace, dir: &Path, glob: &PathGlob, cancelled: &(dyn Fn() -> bool + Sync)) -> Listing {
    let shared = Arc::new(Mutex::new(ListState { top: TopN::new(MAX_LISTED_FILES), total: 0 }));
    let mut builder =
        ListVisitorBuilder { workspace, dir, glob, cancelled, shared: Arc::clone(&shared) };
    // A pattern under literal folders (`crates/core/**`) walks only them.
    walker_for(&glob.walk_root(dir), glob.names_hidden()).build_parallel().visit(&mut builder);
    drop(builder);
    let mut state = match Arc::try_unwrap(shared) {
        Ok(mutex) => mutex.into_value(),
        Err(shared) => {
            let mut guard = shared.locked();
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
            ("**/*", "a", true),
            ("**/*", "x/y/z.rs", true),
            ("**", "x/y", true),
            ("./**/*", "x/y", true),
        ];
        let got: Vec<_> = cases.iter().map(|(p, path, _)| (*p, *path, glob_matches(p, path))).collect();
        let want: Vec<_> = cases.iter().map(|(p, path, m)| (*p, *path, *m)).collect();
        assert_eq!(got, want);
        // The match-everything shortcut agrees with the glob itself.
        let dir = Path::new("/ws");
        for pattern in ["**", "**/*"] {
            let mut glob = PathGlob::new(pattern, dir, dir).unwrap();
            assert!(glob.everything);
            glob.everything = false;
            for path in ["a", "x/y/z.rs", ".x/y"] {
                assert!(glob.is_match(&dir.join(path), dir), "{pattern} {path}");
            }
        }
        assert!(!PathGlob::new("**/*.rs", dir, dir).unwrap().everything);
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

    /// A pattern under literal folders walks only them, and lists what
    /// the whole walk lists there: the workspace's ignore rules still
    /// hold; a linked or hidden folder, or one with a glob in its name, is
    /// walked from the search folder as before.
    #[test]
    fn a_pattern_under_literal_folders_walks_only_them() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        for file in ["crates/a/x.rs", "crates/a/gen.rs", "crates/a/deep/y.rs", "crates/b/z.rs", ".hidden/a/h.rs"] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), "x\n").unwrap();
        }
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "crates/a/gen.rs\n").unwrap();
        crate::platform::symlink(root.join("crates/a"), root.join("linked")).unwrap();
        let glob = |p: &str| PathGlob::new(p, &root, &root).unwrap();
        assert_eq!(glob("crates/a/**").walk_root(&root), root.join("crates/a"));
        assert_eq!(glob("crates/a/deep/*.rs").walk_root(&root), root.join("crates/a/deep"));
        assert_eq!(glob("crates/*/x.rs").walk_root(&root), root.join("crates"));
        for walked_from_the_top in ["linked/**", ".hidden/a/**", "*.rs", "**/x.rs", "missing/**"] {
            assert_eq!(glob(walked_from_the_top).walk_root(&root), root, "{walked_from_the_top}");
        }
        let workspace = Workspace::new(root.clone()).unwrap();
        let listed = |p: &str| {
            let mut shown = list(&workspace, &root, &glob(p), &|| false).shown;
            shown.sort();
            shown
        };
        assert_eq!(listed("crates/a/**"), ["crates/a/deep/y.rs", "crates/a/x.rs"]);
        assert_eq!(listed("crates/a/**"), listed("**").into_iter().filter(|p| p.starts_with("crates/a/")).collect::<Vec<_>>());
        assert!(listed("linked/**").is_empty(), "a linked folder is not followed");
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
