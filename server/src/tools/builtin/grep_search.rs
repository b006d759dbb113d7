//! `grep_search`: regex search over the workspace with ripgrep's own crates
//! (`ignore` for the parallel walk, `grep-regex` + `grep-searcher` for the
//! search), in-process: no `rg` binary, no process per file.
//!
//! What the model gets is deterministic however the walker threads race:
//! matching lines sorted by path then line number, the first
//! [`MAX_SHOWN_MATCHES`] shown and the exact total counted. Each walker
//! thread keeps only its own first 100 (a bounded `TopN` from `walk.rs`), merged when it
//! ends, so memory stays bounded on a tree with millions of matches.
//!
//! Tools see what the user sees (invariant 4): a file open in the editor is
//! searched in its buffer text, unsaved changes included, and a new file that
//! exists only in the editor is searched too. Binary files (a NUL byte, as
//! ripgrep decides it) are skipped whole, matches before the NUL included.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::support::walk::{is_hidden_below, search_folder, unsaved_buffers, walker_for, CancelCheck, PathGlob, TopN};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};
use crate::sync::{IntoValue, MutexExt};
use crate::workspace::Workspace;

/// At most this many matching lines are shown; the rest are counted.
pub const MAX_SHOWN_MATCHES: usize = 100;

/// A matched line longer than this many characters is cut to a window
/// around the match.
pub const MAX_LINE_CHARS: usize = 300;

/// How much of the window goes before the match when a line is cut.
const CHARS_BEFORE_MATCH: usize = 100;

/// Search file contents with a regular expression (Rust regex syntax, like ripgrep).
///
/// Prints matching lines as `path:line:text`, sorted by path then line, paths relative to
/// the workspace root. At most 100 lines are shown, then the number of further matches.
/// Files ignored by .gitignore/.ignore, hidden files and binary files are skipped. Files
/// open in the editor are searched as the user sees them, unsaved changes included.
///
/// Use this instead of `grep` or `rg` in run_shell.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepSearchArgs {
    /// The regular expression, e.g. `fn\s+main`, `TODO|FIXME`, `struct Workspace\b`.
    pub pattern: String,
    /// The folder (or file) to search, relative to the workspace root. Defaults to the workspace root.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. "*.rs", "*.{ts,tsx}", "src/**/*.py".
    #[serde(default)]
    pub include: Option<String>,
    /// Match letters regardless of case. Defaults to false.
    #[serde(default)]
    pub case_insensitive: bool,
}

pub struct GrepSearch;

#[async_trait]
impl Tool for GrepSearch {
    type Args = GrepSearchArgs;
    type Plan = ();
    const NAME: &'static str = "grep_search";
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
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| ToolError::model(format!("Error: invalid regex: {e}")))?;
        let dir = grep_target(&ctx.workspace, args.path.as_deref())?;
        let include = match args.include.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(glob) => Some(PathGlob::new(glob, &dir, ctx.workspace.root())?),
        };
        let search = GrepSpec { dir, matcher, include };
        let workspace = Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let found = tokio::task::spawn_blocking(move || grep(&workspace, &search, &|| cancel.is_cancelled()))
            .await
            .map_err(|e| ToolError::model(format!("Error: the search stopped unexpectedly: {e}")))?;
        Ok(render(found))
    }
}

/// The search folder, or a single file; a file that exists only as an
/// open editor buffer counts.
fn grep_target(workspace: &Workspace, path: Option<&str>) -> Result<PathBuf, ToolError> {
    if let Some(p) = path {
        if let Ok(resolved) = workspace.resolve(p) {
            if !resolved.exists() && workspace.buffer(&resolved).is_some() {
                return Ok(resolved);
            }
        }
    }
    search_folder(workspace, path)
}

struct GrepSpec {
    dir: PathBuf,
    matcher: RegexMatcher,
    include: Option<PathGlob>,
}

impl GrepSpec {
    fn includes(&self, path: &Path) -> bool {
        self.include.as_ref().is_none_or(|glob| glob.is_match(path, &self.dir))
    }

    fn walks_hidden(&self) -> bool {
        self.include.as_ref().is_some_and(PathGlob::names_hidden)
    }
}

/// A shown line: path (relative to the root), line number, text. Ordered by
/// path, then line.
type MatchKey = (String, u64, String);

#[derive(Debug)]
struct GrepMatches {
    shown: Vec<MatchKey>,
    total: u64,
}

struct GrepState {
    top: TopN<MatchKey>,
    total: u64,
}

impl GrepState {
    fn new() -> Self {
        GrepState { top: TopN::new(MAX_SHOWN_MATCHES), total: 0 }
    }
}

fn grep(workspace: &Workspace, spec: &GrepSpec, cancelled: &(dyn Fn() -> bool + Sync)) -> GrepMatches {
    let buffers: HashSet<PathBuf> = workspace.open_buffers().into_iter().collect();
    let shared = Arc::new(Mutex::new(GrepState::new()));
    let mut builder = GrepVisitorBuilder { workspace, spec, buffers: &buffers, cancelled, shared: Arc::clone(&shared) };
    walker_for(&spec.dir, spec.walks_hidden()).build_parallel().visit(&mut builder);

    // Files that exist only in the editor: the walker cannot see them.
    let mut visitor = builder.visitor();
    for path in unsaved_buffers(workspace, &spec.dir) {
        if spec.includes(&path) && (spec.walks_hidden() || !is_hidden_below(&path, &spec.dir)) {
            visitor.search_file(&path);
        }
    }
    drop(visitor);
    drop(builder);

    let state = match Arc::try_unwrap(shared) {
        Ok(mutex) => mutex.into_value(),
        Err(shared) => std::mem::replace(&mut *shared.locked(), GrepState::new()),
    };
    GrepMatches { shown: state.top.into_sorted(), total: state.total }
}

struct GrepVisitorBuilder<'a> {
    workspace: &'a Workspace,
    spec: &'a GrepSpec,
    buffers: &'a HashSet<PathBuf>,
    cancelled: &'a (dyn Fn() -> bool + Sync),
    shared: Arc<Mutex<GrepState>>,
}

impl<'a> GrepVisitorBuilder<'a> {
    fn visitor(&self) -> GrepVisitor<'a> {
        GrepVisitor {
            workspace: self.workspace,
            spec: self.spec,
            buffers: self.buffers,
            cancel: CancelCheck::new(self.cancelled),
            shared: Arc::clone(&self.shared),
            // ripgrep's settings for files found by walking: line numbers,
            // and stop at the first NUL byte (a binary file).
            searcher: SearcherBuilder::new()
                .line_number(true)
                .binary_detection(BinaryDetection::quit(b'\x00'))
                .build(),
            matcher: self.spec.matcher.clone(),
            local: GrepState::new(),
        }
    }
}

impl<'s> ParallelVisitorBuilder<'s> for GrepVisitorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(self.visitor())
    }
}

/// One walker thread: its own searcher, matcher and bounded results,
/// merged into the shared state when the thread is done.
struct GrepVisitor<'a> {
    workspace: &'a Workspace,
    spec: &'a GrepSpec,
    buffers: &'a HashSet<PathBuf>,
    cancel: CancelCheck<'a>,
    shared: Arc<Mutex<GrepState>>,
    searcher: Searcher,
    matcher: RegexMatcher,
    local: GrepState,
}

impl GrepVisitor<'_> {
    fn search_file(&mut self, path: &Path) {
        let display = self.workspace.display_path(path);
        // Lines of this file can make the list only if its path does not
        // sort after everything this thread already keeps.
        let may_keep =
            !self.local.top.is_full() || self.local.top.worst().is_some_and(|(worst, _, _)| display <= *worst);
        let mut sink = FileSink { matcher: &self.matcher, keep: may_keep, kept: Vec::new(), count: 0, binary: false };
        let searched = if self.buffers.contains(path) {
            match self.workspace.buffer(path) {
                Some(buffer) => self.searcher.search_slice(&self.matcher, buffer.text.as_bytes(), &mut sink),
                None => self.searcher.search_path(&self.matcher, path, &mut sink),
            }
        } else {
            self.searcher.search_path(&self.matcher, path, &mut sink)
        };
        // An unreadable file is skipped, as ripgrep does; the search goes on.
        if searched.is_err() || sink.binary || sink.count == 0 {
            return;
        }
        self.local.total += sink.count;
        for (line, text) in sink.kept {
            self.local.top.push((display.clone(), line, text));
        }
    }
}

impl ParallelVisitor for GrepVisitor<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.should_stop() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else { return WalkState::Continue };
        if entry.file_type().is_some_and(|t| t.is_file()) && self.spec.includes(entry.path()) {
            self.search_file(entry.path());
        }
        WalkState::Continue
    }
}

impl Drop for GrepVisitor<'_> {
    fn drop(&mut self) {
        let local = std::mem::replace(&mut self.local, GrepState { top: TopN::new(0), total: 0 });
        let mut shared = self.shared.locked();
        shared.total += local.total;
        shared.top.merge(local.top);
    }
}

/// Receives one file's matching lines: counts all of them, keeps (cut)
/// text only for the first [`MAX_SHOWN_MATCHES`], and only when the file
/// can make the list at all.
struct FileSink<'m> {
    matcher: &'m RegexMatcher,
    keep: bool,
    kept: Vec<(u64, String)>,
    count: u64,
    binary: bool,
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        if self.keep && self.kept.len() < MAX_SHOWN_MATCHES {
            let line = String::from_utf8_lossy(mat.bytes());
            let line = line.trim_end_matches(['\n', '\r']);
            let text = cut_line(line, self.matcher);
            self.kept.push((mat.line_number().unwrap_or(0), text));
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Cut a long line to [`MAX_LINE_CHARS`] characters around its first match.
fn cut_line(line: &str, matcher: &RegexMatcher) -> String {
    let total_chars = line.chars().count();
    if total_chars <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let match_start = matcher.find(line.as_bytes()).ok().flatten().map(|m| m.start()).unwrap_or(0);
    let chars_before = line.get(..match_start).map(|s| s.chars().count()).unwrap_or(0);
    let start_char = chars_before.saturating_sub(CHARS_BEFORE_MATCH).min(total_chars - MAX_LINE_CHARS);
    let end_char = start_char + MAX_LINE_CHARS;
    let byte_at = |n: usize| line.char_indices().nth(n).map(|(i, _)| i).unwrap_or(line.len());
    let (start, end) = (byte_at(start_char), byte_at(end_char));
    let mut out = String::with_capacity(end - start + 32);
    if start_char > 0 {
        out.push_str("[...] ");
    }
    out.push_str(&line[start..end]);
    if end_char < total_chars {
        out.push_str(&format!(" [... line cut, {total_chars} chars]"));
    }
    out
}

fn render(found: GrepMatches) -> String {
    if found.total == 0 {
        return "No matches found.".to_string();
    }
    let mut out = String::new();
    for (path, line, text) in &found.shown {
        out.push_str(&format!("{path}:{line}:{text}\n"));
    }
    let more = found.total.saturating_sub(found.shown.len() as u64);
    if more > 0 {
        out.push_str(&format!(
            "... and {more} more matches (narrow the pattern, or give path or include to see them)"
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn matcher(pattern: &str) -> RegexMatcher {
        RegexMatcherBuilder::new().line_terminator(Some(b'\n')).build(pattern).unwrap()
    }

    #[test]
    fn short_lines_are_kept_whole() {
        assert_eq!(cut_line("let x = 1;", &matcher("x")), "let x = 1;");
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let line = format!("{}NEEDLE{}", "a".repeat(1000), "b".repeat(1000));
        let cut = cut_line(&line, &matcher("NEEDLE"));
        let expected = format!("[...] {}NEEDLE{} [... line cut, 2006 chars]", "a".repeat(100), "b".repeat(194));
        assert_eq!(cut, expected);
    }

    #[test]
    fn a_match_near_the_end_keeps_a_full_window() {
        let line = format!("{}NEEDLE", "é".repeat(1000));
        let cut = cut_line(&line, &matcher("NEEDLE"));
        assert_eq!(cut, format!("[...] {}NEEDLE", "é".repeat(294)));
    }
}
