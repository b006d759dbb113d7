//! Project instructions: `AGENTS.md`, `CLAUDE.md` and `.tandem/AGENTS.md` at
//! the workspace root, the rules without `paths:` (see [`rules`]), and the
//! user's own `~/.tandem/AGENTS.md`, go into the system prompt, each under a
//! heading that names the file. The files of the folders below the root,
//! and the rules scoped to paths, come later, when the run first touches
//! a file there ([`scoped`]).
//!
//! - They are read through [`Workspace::read_confined`], so in the editor
//!   an open buffer's text counts, unsaved changes included, and only a
//!   regular file is read. A project's file is read only when it resolves
//!   inside the workspace after symlinks, like its includes: a repository's
//!   `CLAUDE.md` that links to `~/.aws/credentials` is skipped (with a
//!   warning in the log), never put in the prompt. The user's own
//!   `~/.tandem/AGENTS.md` may link anywhere: it is theirs.
//! - In a folder holding `AGENTS.override.md`, that file is read instead of
//!   the folder's `AGENTS.md` and `CLAUDE.md`.
//! - A line holding only `@relative/path` is replaced by that file (relative
//!   to the file that names it). Includes nest at most
//!   [`MAX_INCLUDE_DEPTH`] levels, must resolve inside the workspace (for the
//!   user's file: inside `~/.tandem/`), and never repeat a file already being
//!   included. Lines inside code fences are left alone. An include that
//!   cannot be followed stays as it is, with a warning in the log.
//! - Sizes are bounded: a file over [`MAX_FILE_BYTES`] is not read,
//!   [`MAX_FILE_CHARS`] are kept per file, [`MAX_TOTAL_CHARS`] in all. What
//!   a bound left out is said where the file would have been (so the model
//!   knows) and in the file's `notice` (`tandem doctor` shows it).
//! - `CLAUDE.md` that is a link to `AGENTS.md` is read once.
//!
//! Instructions only add words to the prompt: nothing in them changes a
//! permission, so a folder's files need no trust (unlike its settings).

pub mod rules;
pub mod scoped;

use std::path::{Path, PathBuf};

use crate::workspace::{resolve_confined, Workspace};

/// The file read instead of a folder's `AGENTS.md` and `CLAUDE.md`.
pub const OVERRIDE_FILE: &str = "AGENTS.override.md";
/// How deep `@path` includes may nest.
pub const MAX_INCLUDE_DEPTH: usize = 5;
/// A file larger than this is not read at all.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Characters kept from one file.
pub const MAX_FILE_CHARS: usize = 20_000;
/// Characters of instructions in the system prompt in all.
pub const MAX_TOTAL_CHARS: usize = 60_000;

/// One instruction file with its includes expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// How the heading names it: `AGENTS.md`, `~/.tandem/AGENTS.md`.
    pub name: String,
    pub text: String,
    /// What a bound left out of it, for the user (`None`: nothing).
    pub notice: Option<String>,
}

#[cfg(test)]
impl InstructionFile {
    fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        InstructionFile { name: name.into(), text: text.into(), notice: None }
    }
}

/// A folder's own files, in prompt order: `AGENTS.override.md` alone when
/// the folder has one (it wins there), else `AGENTS.md` then `CLAUDE.md`.
pub fn folder_files(dir: &Path) -> &'static [&'static str] {
    if std::fs::symlink_metadata(dir.join(OVERRIDE_FILE)).is_ok() {
        &[OVERRIDE_FILE]
    } else {
        &["AGENTS.md", "CLAUDE.md"]
    }
}

/// Every instruction file of the system prompt that exists: the user's
/// first (the most general), then the root folder's, then
/// `.tandem/AGENTS.md`, then the rules that name no paths.
pub fn load(workspace: &Workspace) -> Vec<InstructionFile> {
    let mut files = Vec::new();
    let mut expander = Expander::new(workspace, MAX_TOTAL_CHARS, MAX_TOTAL_CHARS);
    if let Some(home) = workspace.home() {
        let dir = home.join(".tandem");
        let path = dir.join("AGENTS.md");
        let confine = vec![dir.canonicalize().unwrap_or(dir)];
        files.extend(expander.top(&path, "~/.tandem/AGENTS.md", None, &confine));
    }
    let root = workspace.root();
    let names = folder_files(root).iter().copied().chain([".tandem/AGENTS.md"]);
    for name in names {
        files.extend(expander.top(&root.join(name), name, Some(workspace.roots()), workspace.roots()));
    }
    for rule in rules::load(workspace).rules.iter().filter(|rule| rule.paths.is_none()) {
        files.extend(expander.rule(rule));
    }
    // The user is told in the log; the model, in the file's place.
    for notice in files.iter().filter_map(|file| file.notice.as_deref()) {
        tracing::warn!("{notice}");
    }
    files
}

/// The system-prompt section for the files (empty when there are none).
pub fn prompt_section(files: &[InstructionFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Project instructions\nThe user and the project maintainers wrote these instructions for agents working here. Follow them; where they conflict with the guidance above, they win.\n",
    );
    for file in files {
        out.push_str(&format!("\n## {}\n{}\n", file.name, file.text.trim_end()));
    }
    out
}

/// Reads top-level files and their includes within one budget.
pub(crate) struct Expander<'a> {
    workspace: &'a Workspace,
    /// The limit the budget comes from, to name in a notice.
    limit: usize,
    /// Characters still allowed in all.
    remaining: usize,
    /// Top-level files read so far (resolved), so a link is read once.
    seen_top: Vec<PathBuf>,
    /// What the file being read lost to a bound.
    cuts: Vec<String>,
}

impl<'a> Expander<'a> {
    /// `remaining` of `limit` characters may still be added.
    pub(crate) fn new(workspace: &'a Workspace, limit: usize, remaining: usize) -> Self {
        Expander { workspace, limit, remaining: remaining.min(limit), seen_top: Vec::new(), cuts: Vec::new() }
    }

    /// A top-level file named `name`: `inside`, the folders it must resolve
    /// into (`None`: the user's own); `confine`, those of its includes.
    /// `None`: no such file, an empty one, or one refused (logged); a file
    /// a bound keeps out is said in its place.
    pub(crate) fn top(&mut self, path: &Path, name: &str, inside: Option<&[PathBuf]>, confine: &[PathBuf]) -> Option<InstructionFile> {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if self.seen_top.contains(&real) {
            return None;
        }
        if let Some(left_out) = self.left_out(path, name) {
            self.seen_top.push(real);
            return Some(left_out);
        }
        let mut chain = Vec::new();
        let read = self.workspace.read_confined(path, inside, MAX_FILE_BYTES).map_err(|reason| format!("{}: {reason}", self.workspace.display_path(path)));
        let text = match read {
            Ok(Some(text)) => self.expand(path, &text, confine, 0, &mut chain),
            Ok(None) => return None,
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "instructions skipped");
                return None;
            }
        };
        self.seen_top.push(real);
        self.finish(name, text)
    }

    /// A rule's body, its includes expanded, under the rule file's name.
    pub(crate) fn rule(&mut self, rule: &rules::Rule) -> Option<InstructionFile> {
        if self.remaining == 0 {
            return Some(self.over_budget(&rule.name));
        }
        let mut chain = Vec::new();
        let text = self.expand(&rule.path, &rule.body, self.workspace.roots(), 0, &mut chain);
        self.finish(&rule.name, text)
    }

    fn finish(&mut self, name: &str, text: String) -> Option<InstructionFile> {
        let notice = (!self.cuts.is_empty()).then(|| std::mem::take(&mut self.cuts).join("; "));
        if text.trim().is_empty() {
            return None;
        }
        Some(InstructionFile { name: name.to_string(), text, notice })
    }

    /// The file in place of one a bound keeps out whole: too large, or
    /// the budget is spent.
    fn left_out(&self, path: &Path, name: &str) -> Option<InstructionFile> {
        // The link's own size says nothing; a link is measured when read.
        let bytes = std::fs::symlink_metadata(path).ok().filter(|m| m.is_file()).map(|m| m.len()).unwrap_or(0);
        if bytes > MAX_FILE_BYTES {
            let said = format!("{name} was not read: it is {bytes} bytes, over the limit of {MAX_FILE_BYTES} bytes (1 MB) for an instruction file");
            return Some(InstructionFile { name: name.to_string(), text: format!("[{said}. Read the parts you need with read_file.]"), notice: Some(said) });
        }
        if self.remaining == 0 && std::fs::symlink_metadata(path).is_ok() {
            return Some(self.over_budget(name));
        }
        None
    }

    fn over_budget(&self, name: &str) -> InstructionFile {
        let said = format!("{name} was not read: the instructions reached their limit of {} characters", self.limit);
        InstructionFile { name: name.to_string(), text: format!("[{said}. Read it with read_file if you need it.]"), notice: Some(said) }
    }

    /// `file_text` (of the file at `path`) with its includes expanded.
    /// `chain` holds the files being expanded (a file that includes
    /// itself, directly or not, stops).
    fn expand(&mut self, path: &Path, file_text: &str, confine: &[PathBuf], depth: usize, chain: &mut Vec<PathBuf>) -> String {
        let shown = self.workspace.display_path(path);
        let text = match file_text.char_indices().nth(MAX_FILE_CHARS) {
            Some((end, _)) => {
                self.cuts.push(format!("{shown} was cut at {MAX_FILE_CHARS} characters"));
                format!("{}\n[... {shown} cut at {MAX_FILE_CHARS} characters]", &file_text[..end])
            }
            None => file_text.to_string(),
        };
        chain.push(path.to_path_buf());
        let mut out = String::with_capacity(text.len());
        let mut fence: Option<&str> = None;
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let trimmed = line.trim_start();
            let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
            match (fence, marker) {
                (None, Some(m)) => fence = Some(m),
                (Some(open), Some(m)) if open == m => fence = None,
                _ => {}
            }
            if fence.is_none() && marker.is_none() {
                if let Some(target) = include_target(line) {
                    match self.include(path, target, confine, depth, chain) {
                        Ok(included) => {
                            out.push_str(included.trim_end_matches('\n'));
                            out.push('\n');
                            continue;
                        }
                        Err(reason) => tracing::warn!(file = %shown, include = target, %reason, "include not followed"),
                    }
                }
            }
            let kept: String = line.chars().take(self.remaining).collect();
            let whole = kept.len() == line.len();
            self.remaining = self.remaining.saturating_sub(kept.chars().count() + 1);
            out.push_str(&kept);
            out.push('\n');
            // Said where the text stops, so the model knows it is not all.
            if !whole || (self.remaining == 0 && lines.peek().is_some()) {
                self.cuts.push(format!("{shown} was cut: the instructions reached their limit of {} characters", self.limit));
                out.push_str(&format!("[... instructions cut: over {} characters in all]\n", self.limit));
                break;
            }
        }
        chain.pop();
        out
    }

    fn include(&mut self, from: &Path, target: &str, confine: &[PathBuf], depth: usize, chain: &mut Vec<PathBuf>) -> Result<String, String> {
        if depth + 1 > MAX_INCLUDE_DEPTH {
            return Err(format!("includes nest deeper than {MAX_INCLUDE_DEPTH} levels"));
        }
        let base = from.parent().unwrap_or(from);
        let joined = base.join(target);
        let resolved = resolve_confined(confine, &[], &joined.to_string_lossy()).map_err(|e| e.message())?;
        if chain.contains(&resolved) {
            return Err("the file is already being included (a cycle)".to_string());
        }
        let shown = self.workspace.display_path(&resolved);
        match self.workspace.read_confined(&resolved, Some(confine), MAX_FILE_BYTES).map_err(|reason| format!("{shown}: {reason}"))? {
            Some(text) => Ok(self.expand(&resolved, &text, confine, depth + 1, chain)),
            None => Err("no such file".to_string()),
        }
    }
}

/// `docs/style.md` for a line that is only `@docs/style.md`.
fn include_target(line: &str) -> Option<&str> {
    let target = line.trim().strip_prefix('@')?;
    let plausible = !target.is_empty() && !target.contains(char::is_whitespace) && !target.starts_with('@') && !target.starts_with('/');
    plausible.then_some(target)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workspace::MemoryEditor;
    use std::sync::Arc;

    struct Setup {
        _dirs: (tempfile::TempDir, tempfile::TempDir),
        root: PathBuf,
        home: PathBuf,
        editor: Arc<MemoryEditor>,
    }

    fn setup(project: &[(&str, &str)], user: &[(&str, &str)]) -> Setup {
        let (root_dir, home_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let root = root_dir.path().canonicalize().unwrap();
        let home = home_dir.path().canonicalize().unwrap();
        for (base, files) in [(&root, project), (&home, user)] {
            for (name, text) in files {
                let path = base.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
        }
        Setup { _dirs: (root_dir, home_dir), root, home, editor: Arc::new(MemoryEditor::default()) }
    }

    impl Setup {
        fn load(&self) -> Vec<InstructionFile> {
            let mut workspace = Workspace::with_roots(vec![self.root.clone()], Some(self.editor.clone())).unwrap();
            workspace.set_home(Some(self.home.clone()));
            load(&workspace)
        }
    }

    #[test]
    fn every_file_under_its_own_heading_user_first() {
        let s = setup(
            &[("AGENTS.md", "Use tabs.\n"), ("CLAUDE.md", "Run `make test`.\n"), (".tandem/AGENTS.md", "Tandem only.\n")],
            &[(".tandem/AGENTS.md", "Answer in French.\n")],
        );
        expect_test::expect![[r#"
            # Project instructions
            The user and the project maintainers wrote these instructions for agents working here. Follow them; where they conflict with the guidance above, they win.

            ## ~/.tandem/AGENTS.md
            Answer in French.

            ## AGENTS.md
            Use tabs.

            ## CLAUDE.md
            Run `make test`.

            ## .tandem/AGENTS.md
            Tandem only.
        "#]]
        .assert_eq(&prompt_section(&s.load()));
    }

    #[test]
    fn includes_are_expanded_relative_to_the_including_file() {
        let s = setup(
            &[
                ("AGENTS.md", "Intro.\n@docs/style.md\nOutro.\n"),
                ("docs/style.md", "Style rules.\n  @../shared/common.md\n"),
                ("shared/common.md", "Common rule.\n"),
            ],
            &[],
        );
        let files = s.load();
        assert_eq!(files, vec![InstructionFile::new("AGENTS.md", "Intro.\nStyle rules.\nCommon rule.\nOutro.\n")]);
    }

    #[test]
    fn includes_stop_at_five_levels_cycles_and_the_workspace_edge() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "SECRET").unwrap();
        let escape = format!("@../{}/secret.md", outside.path().file_name().unwrap().to_string_lossy());
        let s = setup(
            &[
                ("AGENTS.md", "@l1.md\n@AGENTS.md\n"),
                ("l1.md", "one\n@l2.md"),
                ("l2.md", "two\n@l3.md"),
                ("l3.md", "three\n@l4.md"),
                ("l4.md", "four\n@l5.md"),
                ("l5.md", "five\n@l6.md"),
                ("l6.md", "six"),
                ("CLAUDE.md", &format!("{escape}\n@/etc/passwd\n@missing.md\n```\n@l1.md\n```\n")),
            ],
            &[],
        );
        let files = s.load();
        assert_eq!(files[0].text, "one\ntwo\nthree\nfour\nfive\n@l6.md\n@AGENTS.md\n");
        // Outside the workspace (through a symlink-free `..`), absolute, missing, fenced: kept as written.
        assert_eq!(files[1].text, format!("{escape}\n@/etc/passwd\n@missing.md\n```\n@l1.md\n```\n"));
    }

    #[test]
    fn the_open_buffer_counts_and_a_linked_claude_md_is_read_once() {
        let s = setup(&[("AGENTS.md", "on disk\n")], &[]);
        #[cfg(unix)]
        crate::platform::symlink(s.root.join("AGENTS.md"), s.root.join("CLAUDE.md")).unwrap();
        s.editor.open(&s.root.join("AGENTS.md"), "unsaved in the editor\n", 3);
        let files = s.load();
        assert_eq!(files, vec![InstructionFile::new("AGENTS.md", "unsaved in the editor\n")]);
    }

    /// Issue 49: a repository's instruction files linking out of it went
    /// into the system prompt. They are skipped, the editor is not asked
    /// for them (it would follow the link), and the user's own file still
    /// may link anywhere.
    #[cfg(unix)]
    #[test]
    fn project_files_linking_out_of_the_workspace_are_skipped_the_users_own_are_not() {
        let s = setup(&[("shared.md", "In the workspace.\n")], &[(".aws/credentials", "AWS-SECRET\n"), ("dotfiles/AGENTS.md", "Mine.\n"), ("ssh/id", "SSH-SECRET\n")]);
        let link = |target: &Path, at: &Path| crate::platform::symlink(target, at).unwrap();
        link(&s.home.join(".aws/credentials"), &s.root.join("CLAUDE.md"));
        link(&s.home.join("ssh"), &s.root.join(".tandem"));
        std::fs::rename(s.home.join("ssh/id"), s.home.join("ssh/AGENTS.md")).unwrap();
        link(&s.root.join("shared.md"), &s.root.join("AGENTS.md"));
        std::fs::create_dir_all(s.home.join(".tandem")).unwrap();
        link(&s.home.join("dotfiles/AGENTS.md"), &s.home.join(".tandem/AGENTS.md"));
        // An editor holding the linked file open is not asked for it.
        s.editor.open(&s.root.join("CLAUDE.md"), "AWS-SECRET in a buffer\n", 1);
        let section = prompt_section(&s.load());
        assert!(!section.contains("SECRET"), "{section}");
        assert!(section.contains("## ~/.tandem/AGENTS.md\nMine.") && section.contains("## AGENTS.md\nIn the workspace."), "{section}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_device_is_not_read() {
        let s = setup(&[("AGENTS.md", "Fine.\n")], &[]);
        crate::platform::symlink("/dev/zero", s.home.join("zero")).unwrap();
        std::fs::create_dir_all(s.home.join(".tandem")).unwrap();
        crate::platform::symlink(s.home.join("zero"), s.home.join(".tandem/AGENTS.md")).unwrap();
        let fifo = std::ffi::CString::new(s.root.join("CLAUDE.md").display().to_string()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(s.load(), vec![InstructionFile::new("AGENTS.md", "Fine.\n")]);
    }

    #[test]
    fn the_user_file_includes_only_from_its_own_folder() {
        let s = setup(&[("notes.md", "project note")], &[(".tandem/AGENTS.md", "mine\n@style.md\n@../../notes.md\n"), (".tandem/style.md", "my style")]);
        let files = s.load();
        assert_eq!(files[0].text, "mine\nmy style\n@../../notes.md\n");
    }

    #[test]
    fn sizes_are_bounded() {
        let big = "x".repeat(MAX_FILE_CHARS + 10);
        let s = setup(&[("AGENTS.md", &big), ("CLAUDE.md", &big), (".tandem/AGENTS.md", &big)], &[(".tandem/AGENTS.md", &big)]);
        let files = s.load();
        assert!(files[0].text.contains("cut at 20000 characters"), "{}", &files[0].text[MAX_FILE_CHARS - 10..]);
        let total: usize = files.iter().map(|f| f.text.chars().count()).sum();
        assert!(total <= MAX_TOTAL_CHARS + 500, "{total}");
        // The last file does not fit: said in its place, and to the user.
        assert_eq!(files.len(), 4);
        assert!(files[3].text.contains(".tandem/AGENTS.md was not read: the instructions reached their limit of 60000 characters"), "{}", files[3].text);
        assert!(files[0].notice.as_deref().unwrap().contains("cut at 20000 characters"), "{:?}", files[0].notice);
    }

    #[test]
    fn the_roots_override_replaces_its_agents_and_claude_md() {
        let s = setup(&[("AGENTS.md", "shared"), ("CLAUDE.md", "claude"), ("AGENTS.override.md", "mine here"), (".tandem/AGENTS.md", "tandem")], &[]);
        let names: Vec<String> = s.load().into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["AGENTS.override.md", ".tandem/AGENTS.md"]);
    }

    #[test]
    fn no_files_no_section() {
        let s = setup(&[], &[]);
        assert_eq!(prompt_section(&s.load()), "");
    }
}
