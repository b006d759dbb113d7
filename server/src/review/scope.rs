//! What a review looks at: the scope's changes as one diff per file, from
//! git (the uncommitted changes, a branch against its base, a commit
//! range), from the last run's checkpoint, or the files named. Bounded:
//! a file whose diff is larger than [`MAX_FILE_DIFF_CHARS`] and the files
//! past [`MAX_TOTAL_CHARS`] or [`MAX_FILES`] are skipped, as are binary
//! and generated files; each skip is said with its reason.
//!
//! git runs with what a repository could make it run switched off
//! (external diff drivers, textconv filters, the fsmonitor hook): a
//! review reads, it never runs the repository's programs.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::checkpoint::Checkpoints;
use crate::workspace::{ReadError, Workspace};

/// A file's diff larger than this is skipped (review it alone, by name).
pub const MAX_FILE_DIFF_CHARS: usize = 40_000;
/// The diffs of one review, in all.
pub const MAX_TOTAL_CHARS: usize = 160_000;
/// Files one review looks at.
pub const MAX_FILES: usize = 200;
/// The most of git's output read.
const MAX_GIT_BYTES: u64 = 64 * 1024 * 1024;

/// Which changes to review.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// The working tree and the index against `HEAD`, untracked files too.
    #[default]
    Uncommitted,
    /// What the workspace's last run (not undone) changed.
    LastRun,
    /// The working tree against the point where it left `base`.
    Branch(String),
    /// A commit range, `A..B` (or `A...B`).
    Range(String),
    /// These files, whole.
    Files(Vec<String>),
}

impl Scope {
    /// How the prompt and the user name it.
    pub fn describe(&self) -> String {
        match self {
            Scope::Uncommitted => "the uncommitted changes".to_string(),
            Scope::LastRun => "the last run's changes".to_string(),
            Scope::Branch(base) => format!("the changes since the branch left {base}"),
            Scope::Range(range) => format!("the commits {range}"),
            Scope::Files(files) => format!("the files {}", files.join(", ")),
        }
    }
}

/// One file to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// As the workspace names it.
    pub path: String,
    /// Its unified diff; empty for a file reviewed whole.
    pub diff: String,
}

/// A file left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// The scope's files, what was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    pub files: Vec<FileDiff>,
    pub skipped: Vec<Skipped>,
}

/// Why there is no review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeError {
    /// The scope holds nothing to review (the sentence says what was looked at).
    NothingToReview(String),
    /// The scope cannot be read (no git repository, an unknown ref, a file not found).
    Unavailable(String),
}

impl std::fmt::Display for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScopeError::NothingToReview(why) | ScopeError::Unavailable(why) => f.write_str(why),
        }
    }
}

/// The files of `scope`, bounded.
pub fn collect(workspace: &Workspace, checkpoints: Option<&Checkpoints>, scope: &Scope) -> Result<Collected, ScopeError> {
    let candidates = match scope {
        Scope::Uncommitted => uncommitted(workspace)?,
        Scope::Branch(base) => {
            check_ref(base)?;
            let merge_base = text(&git(workspace.root(), &["merge-base", base, "HEAD"])?);
            git_diff(workspace.root(), &[merge_base.trim()])?
        }
        Scope::Range(range) => {
            check_ref(range)?;
            if !range.contains("..") {
                return Err(ScopeError::Unavailable(format!("--range {range}: give a range, A..B")));
            }
            git_diff(workspace.root(), &[range])?
        }
        Scope::LastRun => last_run(workspace, checkpoints)?,
        Scope::Files(files) => named(workspace, files)?,
    };
    let collected = bound(workspace, candidates);
    if collected.files.is_empty() {
        let mut why = format!("Nothing to review: {} hold no changes.", scope.describe());
        if !collected.skipped.is_empty() {
            why = format!("Nothing to review in {}: every file was skipped ({}).", scope.describe(), describe_skipped(&collected.skipped));
        }
        return Err(ScopeError::NothingToReview(why));
    }
    Ok(collected)
}

/// The skipped files, in one line: `a.png (binary), Cargo.lock (generated)`.
pub fn describe_skipped(skipped: &[Skipped]) -> String {
    skipped.iter().map(|s| format!("{} ({})", s.path, s.reason)).collect::<Vec<_>>().join(", ")
}

/// A file before the bounds: its diff, or why it is out already.
struct Candidate {
    path: String,
    diff: String,
    /// Why it is out whatever the bounds (binary, unreadable).
    out: Option<String>,
}

impl Candidate {
    fn new(path: String, diff: String) -> Self {
        Candidate { path, diff, out: None }
    }

    fn out(path: String, why: &str) -> Self {
        Candidate { path, diff: String::new(), out: Some(why.to_string()) }
    }
}

/// A ref or range the user typed, never taken for an option of git's.
fn check_ref(name: &str) -> Result<(), ScopeError> {
    if name.trim().is_empty() || name.starts_with('-') || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ScopeError::Unavailable(format!("\"{name}\" is not a git revision")));
    }
    Ok(())
}

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, ScopeError> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.fsmonitor=false", "-c", "core.quotepath=off"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| ScopeError::Unavailable(format!("cannot run git: {err}")))?;
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        stdout.take(MAX_GIT_BYTES).read_to_end(&mut out).map_err(|err| ScopeError::Unavailable(format!("reading git's output: {err}")))?;
    }
    let mut err = String::new();
    if let Some(stderr) = child.stderr.take() {
        let _ = stderr.take(64 * 1024).read_to_string(&mut err);
    }
    // Past the bound git may still be writing: it is stopped.
    let _ = child.kill();
    let status = child.wait().map_err(|err| ScopeError::Unavailable(format!("git: {err}")))?;
    if !status.success() && out.len() < MAX_GIT_BYTES as usize {
        let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed").trim().to_string();
        return Err(ScopeError::Unavailable(format!("git {}: {first}", args.first().copied().unwrap_or_default())));
    }
    Ok(out)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `git diff ARGS`, one candidate per file, paths relative to the workspace.
fn git_diff(root: &Path, revs: &[&str]) -> Result<Vec<Candidate>, ScopeError> {
    let common = ["--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--relative"];
    let mut numstat: Vec<&str> = vec!["diff", "--numstat", "-z"];
    numstat.extend(common);
    numstat.extend(revs);
    let listed = git(root, &numstat)?;
    let mut entries = Vec::new();
    for record in listed.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = text(record);
        let mut fields = record.splitn(3, '\t');
        let (added, _, path) = (fields.next().unwrap_or_default(), fields.next(), fields.next().unwrap_or_default());
        entries.push((path.to_string(), added == "-"));
    }
    let mut patch: Vec<&str> = vec!["diff"];
    patch.extend(common);
    patch.extend(revs);
    let whole = text(&git(root, &patch)?);
    let chunks = split_by_file(&whole);
    if chunks.len() != entries.len() {
        return Err(ScopeError::Unavailable(format!("git's diff names {} files and its list {}: the review cannot tell them apart", chunks.len(), entries.len())));
    }
    Ok(entries.into_iter().zip(chunks).map(|((path, binary), diff)| if binary { Candidate::out(path, "binary") } else { Candidate::new(path, diff) }).collect())
}

/// A whole `git diff` cut at each `diff --git` header.
fn split_by_file(whole: &str) -> Vec<String> {
    let mut chunks: Vec<String> = Vec::new();
    for line in whole.split_inclusive('\n') {
        if line.starts_with("diff --git ") || chunks.is_empty() {
            chunks.push(String::new());
        }
        if let Some(last) = chunks.last_mut() {
            last.push_str(line);
        }
    }
    chunks.retain(|c| !c.trim().is_empty());
    chunks
}

/// The working tree against `HEAD` (against nothing before the first
/// commit), and the untracked files as added whole.
fn uncommitted(workspace: &Workspace) -> Result<Vec<Candidate>, ScopeError> {
    let root = workspace.root();
    git(root, &["rev-parse", "--is-inside-work-tree"]).map_err(|_| ScopeError::Unavailable(format!("{} is not in a git repository: name the files to review, or --last-run", root.display())))?;
    // git's empty tree: what a repository without commits is compared to.
    const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    let head = if git(root, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_ok() { "HEAD" } else { EMPTY_TREE };
    let mut candidates = git_diff(root, &[head])?;
    let untracked = git(root, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    for path in untracked.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let path = text(path);
        candidates.push(added_whole(workspace, &path));
    }
    Ok(candidates)
}

/// A new file as a diff that adds it.
fn added_whole(workspace: &Workspace, path: &str) -> Candidate {
    match workspace.read(&workspace.root().join(path)) {
        Ok(file) => Candidate::new(path.to_string(), format!("new file {path}\n{}", crate::diff::unified("", &file.text, 0))),
        Err(ReadError::Binary) => Candidate::out(path.to_string(), "binary"),
        Err(ReadError::TooLarge { .. }) => Candidate::out(path.to_string(), "too large to read: review it alone, by name"),
        Err(_) => Candidate::out(path.to_string(), "unreadable"),
    }
}

/// What the workspace's last run not undone changed, from its checkpoint.
fn last_run(workspace: &Workspace, checkpoints: Option<&Checkpoints>) -> Result<Vec<Candidate>, ScopeError> {
    let checkpoints = checkpoints.ok_or_else(|| ScopeError::Unavailable("no runs are recorded here (threads are not saved)".to_string()))?;
    let (all, _) = checkpoints.list();
    let last = all.iter().rev().find(|(_, m)| m.undone_ms.is_none() && m.running_pid.is_none() && m.changed_files().next().is_some());
    let Some((_, manifest)) = last else {
        return Err(ScopeError::NothingToReview("Nothing to review: no run has changed a file here (or every one was undone).".to_string()));
    };
    let mut candidates = Vec::new();
    for change in checkpoints.run_texts(&manifest.id) {
        let path = workspace.display_path(&change.path);
        match change.after {
            Some(after) => {
                let before = change.before.unwrap_or_default();
                candidates.push(Candidate::new(path.clone(), format!("--- {path}\n+++ {path}\n{}", crate::diff::unified(&before, &after, 3))));
            }
            None => candidates.push(Candidate::out(path, "deleted by the run")),
        }
    }
    Ok(candidates)
}

/// Files named, reviewed whole: each must be a file of the workspace.
fn named(workspace: &Workspace, files: &[String]) -> Result<Vec<Candidate>, ScopeError> {
    let mut candidates = Vec::new();
    for name in files {
        let resolved = workspace.resolve(name).map_err(|err| ScopeError::Unavailable(format!("{name}: {}", err.message())))?;
        let path = workspace.display_path(&resolved);
        match workspace.read(&resolved) {
            Ok(_) => candidates.push(Candidate::new(path.clone(), format!("(the whole file {path})"))),
            Err(ReadError::Binary) => candidates.push(Candidate::out(path, "binary")),
            Err(err) => return Err(ScopeError::Unavailable(err.message(name).trim_start_matches("Error: ").to_string())),
        }
    }
    Ok(candidates)
}

/// A name generated files go by (lock files, minified bundles, source maps).
fn generated_by_name(path: &str) -> bool {
    const NAMES: &[&str] = &["Cargo.lock", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Gemfile.lock", "composer.lock", "go.sum", "uv.lock", "flake.lock"];
    const ENDINGS: &[&str] = &[".min.js", ".min.css", ".map", ".pb.go", "_pb2.py", ".snap"];
    let name = path.rsplit('/').next().unwrap_or(path);
    NAMES.contains(&name) || ENDINGS.iter().any(|e| name.ends_with(e)) || name.contains(".generated.")
}

/// The file says it is generated in its first lines (`@generated`,
/// "Code generated … DO NOT EDIT").
fn generated_by_marker(workspace: &Workspace, path: &str) -> bool {
    let Ok(file) = workspace.read(&workspace.root().join(path)) else { return false };
    let head: String = file.text.lines().take(5).collect::<Vec<_>>().join("\n");
    head.contains("@generated") || head.contains("DO NOT EDIT")
}

/// The candidates within the bounds, and what was skipped.
fn bound(workspace: &Workspace, candidates: Vec<Candidate>) -> Collected {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut total = 0;
    for candidate in candidates {
        let Candidate { path, diff, out } = candidate;
        let reason = if out.is_some() {
            out
        } else if generated_by_name(&path) || generated_by_marker(workspace, &path) {
            Some("generated".to_string())
        } else if diff.chars().count() > MAX_FILE_DIFF_CHARS {
            Some(format!("its diff is over {MAX_FILE_DIFF_CHARS} characters: review it alone, by name"))
        } else if files.len() >= MAX_FILES || total + diff.len() > MAX_TOTAL_CHARS {
            Some("past the review's size bound: review it in another review".to_string())
        } else {
            None
        };
        match reason {
            Some(reason) => skipped.push(Skipped { path, reason }),
            None => {
                total += diff.len();
                files.push(FileDiff { path, diff });
            }
        }
    }
    Collected { files, skipped }
}

// Unix only: they run git, which the Wine prefix of the Windows unit tests
// does not have.
#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| assert!(Command::new("git").arg("-C").arg(dir.path()).args(args).output().unwrap().status.success(), "{args:?}");
        run(&["init", "-q"]);
        run(&["config", "user.email", "t@example.com"]);
        run(&["config", "user.name", "t"]);
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        run(&["add", "."]);
        run(&["commit", "-qm", "one"]);
        dir
    }

    #[test]
    fn uncommitted_changes_are_split_by_file_and_binary_and_generated_files_are_skipped() {
        let dir = repo();
        std::fs::write(dir.path().join("a.rs"), "fn a() { b(); }\n").unwrap();
        std::fs::write(dir.path().join("new.rs"), "fn b() {}\n").unwrap();
        std::fs::write(dir.path().join("logo.png"), [0u8, 159, 146, 150, 0, 1]).unwrap();
        std::fs::write(dir.path().join("Cargo.lock"), "# lock\n").unwrap();
        std::fs::write(dir.path().join("gen.rs"), "// @generated by a tool\nfn g() {}\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let collected = collect(&workspace, None, &Scope::Uncommitted).unwrap();
        let paths: Vec<&str> = collected.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a.rs", "new.rs"]);
        assert!(collected.files[0].diff.contains("+fn a() { b(); }"), "{}", collected.files[0].diff);
        assert!(collected.files[1].diff.contains("+fn b() {}"), "{}", collected.files[1].diff);
        assert_eq!(describe_skipped(&collected.skipped), "Cargo.lock (generated), gen.rs (generated), logo.png (binary)");
    }

    #[test]
    fn a_clean_tree_has_nothing_to_review_and_a_huge_diff_is_bounded() {
        let dir = repo();
        let workspace = Workspace::new(dir.path()).unwrap();
        assert_eq!(collect(&workspace, None, &Scope::Uncommitted), Err(ScopeError::NothingToReview("Nothing to review: the uncommitted changes hold no changes.".to_string())));
        let huge: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("huge.txt"), huge).unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() { 1 }\n").unwrap();
        let collected = collect(&workspace, None, &Scope::Uncommitted).unwrap();
        assert_eq!(collected.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["a.rs"]);
        assert_eq!(collected.skipped.len(), 1);
        assert!(collected.skipped[0].reason.contains("review it alone"), "{:?}", collected.skipped);
    }

    #[test]
    fn refs_are_never_options_and_named_files_must_exist() {
        let dir = repo();
        let workspace = Workspace::new(dir.path()).unwrap();
        assert!(matches!(collect(&workspace, None, &Scope::Branch("--output=/tmp/x".into())), Err(ScopeError::Unavailable(_))));
        assert!(matches!(collect(&workspace, None, &Scope::Range("nope..HEAD".into())), Err(ScopeError::Unavailable(_))));
        assert!(matches!(collect(&workspace, None, &Scope::Files(vec!["missing.rs".into()])), Err(ScopeError::Unavailable(_))));
        let named = collect(&workspace, None, &Scope::Files(vec!["a.rs".into()])).unwrap();
        assert_eq!(named.files[0].path, "a.rs");
    }
}
