//! The agent's view of files: the workspace roots, path confinement, open
//! editor buffers overlaid on the disk, the read ledger, and the two edit
//! sinks (editor and disk) behind one `write` call.
//!
//! Tools never know whether a file is open in an editor: they call
//! [`Workspace::read`] and [`Workspace::write`], and this module routes the
//! call to the buffer (through [`Editor`]) or to the disk.

mod disk;
mod edit_locks;
mod effects;
mod ledger;
pub mod memory;
mod merge;
mod overlay;
mod paths;
mod recorder;
mod replacements;
mod review;
mod watcher;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use crate::sync::MutexExt;
use crate::protocol::FileEffect;

pub use disk::{atomic_write, atomic_write_journaled, DiskWriteError, WriteJournal};
pub use edit_locks::EditLocks;
pub use merge::{holds_change, merge3, merge3_keeping_ours};
pub use ledger::{describe_change, fingerprint, fingerprint_scheme, LedgerEntry, ReadLedger, ReadStamp, SavedRead};
pub use overlay::{EditTurn, HunkInBuffer, LateLanding, PartialEdit, len_after, spliced, BufferEdit, DocumentSnapshot, EditOutcome, Editor, MemoryEditor, Splice, UnsavedBuffer};
pub use replacements::{minimal_splices, replacements};
pub use review::{changed_lines, DECLINED_HUNKS, edits_summary, hunk_labels, landed_hunks, CommandEffect, EditSummaryItem, place_hunks, EditStatus, LineSpan};
pub use paths::{display_relative, normalize_lexically, resolve_confined, resolve_symlinks, PathError};
pub use recorder::{ChangeRecorder, CommandChange, SplicedEdit};
pub use watcher::DiskWatcher;

/// How many times an edit is offered to the editor at most, when the
/// buffer keeps changing while it waits for its review (each time rebased
/// onto the new text).
pub const MAX_OFFERS: usize = 3;

/// Files larger than this are refused for whole-file reads and edits.
/// `read_file` pages through bigger files without loading them whole.
pub const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The text of a file as the agent sees it, with where it came from.
#[derive(Debug, Clone)]
pub struct FileText {
    pub path: PathBuf,
    /// Shared, not copied: an open buffer's text is the editor's snapshot
    /// of this version itself.
    pub text: Arc<str>,
    pub stamp: ReadStamp,
}

impl FileText {
    /// True when this text came from an open editor buffer.
    pub fn is_buffer(&self) -> bool {
        self.stamp.version.is_some()
    }
}

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    NotFound,
    IsDirectory,
    Binary,
    TooLarge { bytes: u64 },
    Io(std::io::Error),
    /// The editor holds the file but could not give its text (an ACP
    /// client's `fs/read_text_file` failed): the disk may not be what the
    /// user sees, so it is not read instead.
    Editor(String),
}

impl ReadError {
    /// A sentence for the model, naming the file and what to do next.
    pub fn message(&self, display: &str) -> String {
        match self {
            ReadError::NotFound => format!("Error: file not found: {display}"),
            ReadError::IsDirectory => format!(
                "Error: {display} is a directory, not a file. Use list_files to see what it contains."
            ),
            ReadError::Binary => format!(
                "Error: {display} appears to be a binary file (or is not UTF-8 text) and cannot be shown as text."
            ),
            ReadError::TooLarge { bytes } => format!(
                "Error: {display} is too large ({bytes} bytes; the limit is {MAX_TEXT_FILE_BYTES}). Use read_file with offset/limit to page through it, or grep_search to find the part you need."
            ),
            ReadError::Io(err) => format!("Error: cannot read {display}: {err}"),
            ReadError::Editor(reason) => format!(
                "Error: cannot read {display}: the editor could not give its text ({reason}). It may hold unsaved changes, so the file on disk is not read in its place; try again, or ask the user to check the file."
            ),
        }
    }
}

/// A requested change to one file's whole text.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: PathBuf,
    pub new_text: Arc<str>,
    /// The stamp of the text the change was computed from; `None` for a file
    /// that did not exist when the agent looked.
    pub base: Option<ReadStamp>,
    /// A short human label ("edit_file src/app.rs") for the editor's undo
    /// stack and review UI.
    pub label: String,
    /// The permission policy left the review of this change to the editor's
    /// own preview (see `PermissionDecision::ReviewInEditor`).
    pub review: bool,
    /// The change as byte-range replacements of the base text, when the
    /// tool knows them (see [`BufferEdit::splices`]); `None`: whole text.
    pub splices: Option<Vec<Splice>>,
}

/// What a write really did, as the tool result will tell the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written to disk atomically.
    WrittenToDisk,
    /// Applied to the open editor buffer; `saved` tells whether it reached
    /// disk; `rebased` what the user changed meanwhile, when the edit was
    /// applied around that change (see [`Workspace::write`]).
    AppliedToBuffer { saved: bool, rebased: Option<String> },
}

/// Why a write did not happen. Every variant is something the model can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// The file changed since the agent read it (a user edit in the editor,
    /// a change on disk): the agent's change is superseded. The string says
    /// what changed.
    Superseded(String),
    /// The user declined the edit.
    Rejected(String),
    /// The editor did not apply it (or applied something else).
    NotApplied(String),
    /// The editor applied some hunks and the user declined the others; the
    /// string names both, with their lines, for the model; the hunks
    /// themselves, for words to the user.
    PartlyApplied(String, Box<PartialEdit>),
    /// Whether it landed is not known (the editor never answered); the
    /// string says what is known, and the file must be read again.
    Unknown(String),
    /// Disk error.
    Io(String),
}

impl WriteError {
    pub fn message(&self) -> String {
        match self {
            WriteError::Superseded(m)
            | WriteError::Rejected(m)
            | WriteError::NotApplied(m)
            | WriteError::PartlyApplied(m, _)
            | WriteError::Unknown(m)
            | WriteError::Io(m) => m.clone(),
        }
    }
}

/// The agent's view of the workspace. Shared by every tool call of a run
/// (and by runs in the same editor session), so it is `Sync`.
///
/// Each conversation thread has its own read ledger: [`Workspace::with_ledger`]
/// gives a view of the same roots, editor, watcher and edit locks with the
/// thread's ledger, so two threads never see each other's reads, while their
/// writes to one file are still serialised ([`EditLocks`]).
pub struct Workspace {
    roots: Vec<PathBuf>,
    editor: Option<Arc<dyn Editor>>,
    ledger: Arc<ReadLedger>,
    /// Folders outside the roots that tools may read (the persisted
    /// large-result folder).
    readable_extra: Vec<PathBuf>,
    watcher: Arc<Mutex<Option<DiskWatcher>>>,
    /// Shared by every view: one write per file at a time.
    edit_locks: Arc<EditLocks>,
    /// How many times a file's text was taken (read, or looked at to write),
    /// through this workspace or any of its views.
    text_reads: Arc<std::sync::atomic::AtomicUsize>,
    /// The user's home folder, where `~/.tandem/` (instructions, skills,
    /// agents) lives; `None` reads no user files.
    home: Option<PathBuf>,
    /// Where the user's trust of the folder's files is read
    /// ([`crate::trust`]): the user's store by default, as the settings
    /// loader's; tests point it elsewhere.
    trust: crate::trust::TrustSource,
    /// The temp files of writes in progress, for cleaning up after a kill.
    journal: Option<Arc<WriteJournal>>,
    /// The run this view writes for (an editor run's id): its edits to open
    /// documents carry it, so the editor reports each run's own edits.
    run_tag: Option<Arc<str>>,
    /// The run's checkpoint: told before and after every change this view
    /// (and the views made from it) writes.
    recorder: Option<Arc<dyn ChangeRecorder>>,
    /// What each call did to files: shared by every view.
    effects: Arc<effects::EffectLog>,
    /// The call this view writes for ([`Workspace::for_call`]): what its
    /// writes do is recorded under it.
    call: Option<Arc<str>>,
    /// Where a change of a call's effect after its result is said (the
    /// run's events): an edit the editor confirms late.
    effect_changes: Option<EffectChanges>,
    /// Where an edit to the user's buffer waits its turn behind the run's
    /// events ([`BufferEdit::turn`]).
    edit_turn: Option<EditTurn>,
    /// Per open document, the version the last edit written through any
    /// view left it at: a buffer that moved past a read because another
    /// thread's edit landed is no user's typing to rebase around.
    edited_versions: Arc<Mutex<std::collections::HashMap<PathBuf, i32>>>,
}

/// Told when what a call did to a file changes after the call's result
/// went out: the call's id and the effect now ([`Workspace::reporting_changes`]).
pub type EffectChanges = Arc<dyn Fn(&str, FileEffect) + Send + Sync>;

/// Tandem's own folder for one workspace, outside it:
/// `<cache>/tandem/workspaces/<folder name>-<hash of its path>`. Large tool
/// results and the write journal live there, apart from every other
/// workspace's.
pub fn state_dir(root: &Path) -> Option<PathBuf> {
    dirs::cache_dir().map(|cache| state_dir_in(&cache, root))
}

/// [`state_dir`] under a given cache folder.
pub fn state_dir_in(cache: &Path, root: &Path) -> PathBuf {
    cache.join("tandem").join("workspaces").join(project_dir_name(root))
}

/// How a per-user folder of the workspace at `root` is named: the
/// folder's name (for people) and a hash of its whole path (so two
/// folders of one name differ), `app-1a2b…`.
pub fn project_dir_name(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.')).take(40).collect())
        .unwrap_or_default();
    let hash = fingerprint(root.as_os_str().as_encoded_bytes());
    format!("{name}-{hash:016x}")
}

/// Where one workspace's large tool results are saved.
pub fn results_dir(root: &Path) -> Option<PathBuf> {
    state_dir(root).map(|dir| dir.join("tool-results"))
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace").field("roots", &self.roots).finish_non_exhaustive()
    }
}

impl Workspace {
    /// A workspace with one root and no editor (headless mode and tests).
    pub fn new(root: impl AsRef<Path>) -> anyhow::Result<Self> {
        Self::with_roots(vec![root.as_ref().to_path_buf()], None)
    }

    /// A workspace over several roots; the first is the primary one, against
    /// which relative paths resolve. `editor` supplies open buffers.
    pub fn with_roots(roots: Vec<PathBuf>, editor: Option<Arc<dyn Editor>>) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        anyhow::ensure!(!roots.is_empty(), "a workspace needs at least one root folder");
        let roots = roots
            .iter()
            .map(|r| r.canonicalize().with_context(|| format!("workspace root {}", r.display())))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let state = state_dir(&roots[0]);
        let journal = state.as_ref().map(|dir| Arc::new(WriteJournal::new(dir.join("pending-writes"))));
        if let Some(journal) = &journal {
            let removed = journal.clean();
            if removed > 0 {
                tracing::info!(removed, "removed temp files left by interrupted writes");
            }
        }
        // This workspace's saved results, and no other's, are readable.
        let readable_extra = results_dir(&roots[0]).into_iter().collect();
        Ok(Workspace {
            roots,
            editor,
            ledger: Arc::new(ReadLedger::default()),
            readable_extra,
            watcher: Arc::new(Mutex::new(None)),
            edit_locks: Arc::new(EditLocks::default()),
            text_reads: Default::default(),
            home: dirs::home_dir(),
            trust: crate::trust::TrustSource::User,
            journal,
            run_tag: None,
            recorder: None,
            effects: Arc::default(),
            call: None,
            effect_changes: None,
            edit_turn: None,
            edited_versions: Arc::default(),
        })
    }

    /// The same workspace seen through another read ledger (a conversation
    /// thread's): same roots, editor, file watcher and per-file edit locks.
    pub fn with_ledger(&self, ledger: Arc<ReadLedger>) -> Workspace {
        if let Some(watcher) = self.watcher.locked().as_ref() {
            watcher.add_ledger(&ledger);
            for path in ledger.paths() {
                watcher.watch_parent(&path);
            }
        }
        Workspace {
            roots: self.roots.clone(),
            editor: self.editor.clone(),
            ledger,
            readable_extra: self.readable_extra.clone(),
            watcher: Arc::clone(&self.watcher),
            edit_locks: Arc::clone(&self.edit_locks),
            home: self.home.clone(),
            trust: self.trust.clone(),
            text_reads: Arc::clone(&self.text_reads),
            journal: self.journal.clone(),
            run_tag: self.run_tag.clone(),
            recorder: self.recorder.clone(),
            effects: Arc::clone(&self.effects),
            call: self.call.clone(),
            effect_changes: self.effect_changes.clone(),
            edit_turn: self.edit_turn.clone(),
            edited_versions: Arc::clone(&self.edited_versions),
        }
    }

    /// The same view writing for the call `id` of its run: what the call's
    /// writes, checks and commands do to files is recorded as the call's
    /// effects, for [`take_call_effects`](Self::take_call_effects). The
    /// executor gives each call its own.
    pub fn for_call(&self, id: &str) -> Workspace {
        Workspace {
            roots: self.roots.clone(),
            editor: self.editor.clone(),
            ledger: Arc::clone(&self.ledger),
            readable_extra: self.readable_extra.clone(),
            watcher: Arc::clone(&self.watcher),
            edit_locks: Arc::clone(&self.edit_locks),
            home: self.home.clone(),
            trust: self.trust.clone(),
            text_reads: Arc::clone(&self.text_reads),
            journal: self.journal.clone(),
            run_tag: self.run_tag.clone(),
            recorder: self.recorder.clone(),
            effects: Arc::clone(&self.effects),
            call: Some(Arc::from(id)),
            effect_changes: self.effect_changes.clone(),
            edit_turn: self.edit_turn.clone(),
            edited_versions: Arc::clone(&self.edited_versions),
        }
    }

    /// What this view's call did to files so far, in order, taken.
    pub fn take_call_effects(&self) -> Vec<FileEffect> {
        match &self.call {
            Some(call) => self.effects.take(self.run_tag.as_deref(), call),
            None => Vec::new(),
        }
    }

    /// Record what this view's call did to files (nothing outside a call).
    pub fn record_effects(&self, effects: impl IntoIterator<Item = FileEffect>) {
        if let Some(call) = &self.call {
            self.effects.record(self.run_tag.clone(), Arc::clone(call), effects);
        }
    }

    /// The same workspace (and ledger), saying through `changes` what a
    /// call's effect became after its result went out (views made from it
    /// keep it).
    pub fn reporting_changes(&self, changes: EffectChanges) -> Workspace {
        Workspace { effect_changes: Some(changes), ..self.with_ledger(Arc::clone(&self.ledger)) }
    }

    /// The same workspace (and ledger), its edits to the user's buffers
    /// waiting for `turn` first (views made from it keep it).
    pub fn ordered_by(&self, turn: EditTurn) -> Workspace {
        Workspace { edit_turn: Some(turn), ..self.with_ledger(Arc::clone(&self.ledger)) }
    }

    /// Where this view's call hears that its edit of `path`, whose outcome
    /// was unknown, landed after all (`None`: outside a call, or nobody
    /// listens).
    fn late_landing(&self) -> Option<LateLanding> {
        let (call, changes) = (self.call.clone()?, self.effect_changes.clone()?);
        Some(LateLanding(Arc::new(move |effect: FileEffect| changes(&call, effect))))
    }

    /// The run is ending: an edit of its whose outcome was unknown and that
    /// the editor shows now is said at once (see [`Editor::settle_late`]).
    pub fn settle_late_edits(&self) {
        if let Some(editor) = &self.editor {
            editor.settle_late(self.run_tag.as_deref());
        }
    }

    /// The same workspace (and ledger) writing for the run `tag`: edits to
    /// open documents are recorded as that run's. Views made from it
    /// ([`with_ledger`](Self::with_ledger), [`fork_view`](Self::fork_view):
    /// a thread's, a sub-agent's) keep the tag.
    pub fn for_run(&self, tag: &str) -> Workspace {
        Workspace { run_tag: Some(Arc::from(tag)), ..self.with_ledger(Arc::clone(&self.ledger)) }
    }

    /// The same workspace (and ledger) with `recorder` told about every
    /// change written through it and the views made from it.
    pub fn with_recorder(&self, recorder: Arc<dyn ChangeRecorder>) -> Workspace {
        Workspace { recorder: Some(recorder), ..self.with_ledger(Arc::clone(&self.ledger)) }
    }

    /// The run's checkpoint recorder, if any (the executor announces shell
    /// commands to it).
    pub fn recorder(&self) -> Option<&Arc<dyn ChangeRecorder>> {
        self.recorder.as_ref()
    }

    /// Before a shell command: let it see the agent's edits. The buffers
    /// this view's run changed are saved where they held no unsaved user
    /// changes before the run; the answer is a note for the model naming
    /// the files whose editor text the command will not see (`None`: all
    /// on disk).
    pub async fn save_for_command(&self) -> Option<String> {
        let editor = self.editor.as_ref()?;
        let unsaved = editor.save_for_command(self.run_tag.as_deref()).await;
        if unsaved.is_empty() {
            return None;
        }
        let files: Vec<String> = unsaved.iter().map(|u| format!("{} ({})", self.display_path(&u.path), u.reason)).collect();
        Some(format!(
            "Note: the command ran against the files on disk, but these files hold unsaved text in the editor that it did not see: {}. Its output may describe the old content; ask the user to save them, or take that into account.",
            files.join("; ")
        ))
    }

    /// A shell command of this view's call changed these files on disk:
    /// they are the call's effects, marked with the command.
    pub fn note_command_changes(&self, command: &str, changes: &[CommandChange]) {
        self.record_effects(changes.iter().map(|change| FileEffect {
            by_command: Some(command.to_string()),
            deleted: change.deleted,
            ..FileEffect::new(change.path.clone(), EditStatus::Written)
        }));
    }

    /// The run this view writes for, if any.
    pub fn run_tag(&self) -> Option<&Arc<str>> {
        self.run_tag.as_ref()
    }

    /// The ledger itself, to keep it beyond this view (a thread's ledger).
    pub fn ledger_handle(&self) -> Arc<ReadLedger> {
        Arc::clone(&self.ledger)
    }

    /// Remove the temp files of interrupted writes (a kill -9 mid-write):
    /// those of Tandem processes that are gone, and this one's own when no
    /// write is in flight. Done at start-up and after each run.
    pub fn clean_interrupted_writes(&self) -> usize {
        self.journal.as_ref().map_or(0, |journal| journal.clean())
    }

    /// Allow reads (never writes) below `dir`, e.g. the persisted-results folder.
    pub fn allow_reading(&mut self, dir: PathBuf) {
        let dir = dir.canonicalize().unwrap_or(dir);
        self.readable_extra.push(dir);
    }

    /// The same files, buffers and sinks with a read ledger of its own: a
    /// sub-agent's view. It must read a file itself before editing it, and
    /// what it changes, the parent sees as changed since its own read.
    /// (Its writes share the per-file edit locks, like a thread's.)
    pub fn fork_view(&self) -> Workspace {
        self.with_ledger(Arc::new(ReadLedger::default()))
    }

    /// Where the user's own files (`~/.tandem/…`) are looked up: the home
    /// folder by default; tests point it elsewhere, `None` reads none.
    pub fn set_home(&mut self, home: Option<PathBuf>) {
        self.home = home;
    }

    /// Where the trust of the folder's files is read from (the user's
    /// store unless a test says otherwise).
    pub fn set_trust(&mut self, trust: crate::trust::TrustSource) {
        self.trust = trust;
    }

    pub fn trust(&self) -> &crate::trust::TrustSource {
        &self.trust
    }

    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The primary root: relative paths resolve against it, shell commands run in it.
    pub fn root(&self) -> &Path {
        &self.roots[0]
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    pub fn editor(&self) -> Option<&Arc<dyn Editor>> {
        self.editor.as_ref()
    }

    pub fn ledger(&self) -> &ReadLedger {
        &self.ledger
    }

    /// Start the file watcher that marks ledger entries changed on disk when their file
    /// changes on disk. Safe to call more than once.
    pub fn start_watcher(&self) -> anyhow::Result<()> {
        let mut guard = self.watcher.locked();
        if guard.is_none() {
            let watcher = DiskWatcher::start(Arc::clone(&self.ledger))?;
            for path in self.ledger.paths() {
                watcher.watch_parent(&path);
            }
            *guard = Some(watcher);
        } else if let Some(watcher) = guard.as_ref() {
            watcher.add_ledger(&self.ledger);
        }
        Ok(())
    }

    fn watch(&self, path: &Path) {
        if let Some(watcher) = self.watcher.locked().as_ref() {
            watcher.watch_parent(path);
        }
    }

    /// Resolve a path the model gave (relative to the primary root, or
    /// absolute) to an absolute path inside the workspace. `..` and symlinks
    /// are resolved before the confinement check.
    pub fn resolve(&self, user_path: &str) -> Result<PathBuf, PathError> {
        paths::resolve_confined(&self.roots, &[], user_path)
    }

    /// The absolute path a call names, for describing the call: resolved
    /// when it can be, else joined to the primary root as written (the
    /// tool's own checks refuse such a path before anything happens).
    pub fn resolve_lenient(&self, user_path: &str) -> PathBuf {
        self.resolve_for_read(user_path).unwrap_or_else(|_| normalize_lexically(&self.root().join(user_path)))
    }

    /// Like [`resolve`](Self::resolve), but also allows the read-only extra folders.
    pub fn resolve_for_read(&self, user_path: &str) -> Result<PathBuf, PathError> {
        paths::resolve_confined(&self.roots, &self.readable_extra, user_path)
    }

    /// The path as the model and the user should see it: relative to the
    /// primary root when inside it, else absolute.
    /// The user's comments on the hunks of the last edit of `path` in the
    /// editor's review, worded for the model (taken: said once).
    pub fn take_review_note(&self, path: &Path) -> Option<String> {
        let comments = self.editor.as_ref()?.take_review_comments(path);
        crate::protocol::review_comments_note(&self.display_path(path), &comments)
    }

    pub fn display_path(&self, path: &Path) -> String {
        paths::display_relative(self.root(), path)
    }

    fn count_text_read(&self) {
        self.text_reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many times a file's text was read or looked at to write it, in
    /// this workspace's life: the figure that shows each gate reads once.
    pub fn text_reads(&self) -> usize {
        self.text_reads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The open editor buffer for `path`, if any.
    pub fn buffer(&self, path: &Path) -> Option<DocumentSnapshot> {
        self.editor.as_ref().and_then(|e| e.document(path))
    }

    /// Paths of all open editor buffers inside the workspace.
    pub fn open_buffers(&self) -> Vec<PathBuf> {
        self.editor.as_ref().map(|e| e.open_documents()).unwrap_or_default()
    }

    /// The current text of a file: the open buffer if there is one (with its
    /// unsaved changes), else the disk. Does not touch the ledger.
    pub fn read(&self, path: &Path) -> Result<FileText, ReadError> {
        self.count_text_read();
        let buffer = match &self.editor {
            Some(editor) => editor.read_document(path).map_err(ReadError::Editor)?,
            None => None,
        };
        if let Some(buffer) = buffer {
            // The editor keeps one fingerprint per version: hashing a big
            // document on every read would cost more than the read.
            let fingerprint = self
                .editor
                .as_ref()
                .and_then(|editor| editor.fingerprint(path, buffer.version))
                .unwrap_or_else(|| fingerprint(buffer.text.as_bytes()));
            let stamp = ReadStamp { version: Some(buffer.version), fingerprint };
            return Ok(FileText { path: path.to_path_buf(), text: buffer.text, stamp });
        }
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound,
            _ => ReadError::Io(e),
        })?;
        if meta.is_dir() {
            return Err(ReadError::IsDirectory);
        }
        // Reading a FIFO would block the tool forever, and a device or
        // socket is no text file either.
        if !meta.is_file() {
            return Err(ReadError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a pipe, socket or device)",
            )));
        }
        if meta.len() > MAX_TEXT_FILE_BYTES {
            return Err(ReadError::TooLarge { bytes: meta.len() });
        }
        let bytes = std::fs::read(path).map_err(ReadError::Io)?;
        let text = bytes_to_text(bytes)?;
        let stamp = ReadStamp { version: None, fingerprint: fingerprint(text.as_bytes()) };
        Ok(FileText { path: path.to_path_buf(), text: Arc::from(text), stamp })
    }

    /// A file Tandem reads for itself that the folder may have brought
    /// (project instructions, a skill, an agent): its text as the agent
    /// would see it (an open buffer counts), only when the file on disk is
    /// a regular file of at most `max_bytes` and, `inside` given, resolves
    /// into those folders after every symlink ([`crate::confined_file`]).
    /// The disk is looked at first, so an editor or ACP client is never
    /// asked for a file that links out (it would follow the link).
    /// `Ok(None)`: no such file; `Err`: why it was not read.
    pub fn read_confined(&self, path: &Path, inside: Option<&[PathBuf]>, max_bytes: u64) -> Result<Option<Arc<str>>, String> {
        let on_disk = crate::confined_file::check(path, inside, max_bytes).map_err(|refusal| refusal.to_string())?;
        if !on_disk {
            // Only an unsaved buffer: its name, with the links of the
            // folders on its way followed, must be inside too.
            if let Some(folders) = inside {
                resolve_confined(folders, &[], &path.to_string_lossy()).map_err(|err| err.message())?;
            }
            return self.buffer(path).map(|buffer| bounded_text(buffer.text, max_bytes)).transpose();
        }
        self.count_text_read();
        let buffer = match &self.editor {
            Some(editor) => editor.read_document(path).map_err(|reason| format!("the editor could not give its text ({reason})"))?,
            None => None,
        };
        if let Some(buffer) = buffer {
            return bounded_text(buffer.text, max_bytes).map(Some);
        }
        let Some(bytes) = crate::confined_file::read(path, inside, max_bytes).map_err(|refusal| refusal.to_string())? else { return Ok(None) };
        let text = bytes_to_text(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
        Ok(Some(Arc::from(text)))
    }

    /// Remember that the agent has seen `file` as it is now.
    pub fn record_read(&self, file: &FileText) {
        self.ledger.record(&file.path, file.stamp, Arc::clone(&file.text));
        if !file.is_buffer() {
            self.watch(&file.path);
        }
    }

    /// The read-before-edit and unchanged-since-read checks on `current`,
    /// the file's text as [`read`](Self::read) just returned it: the agent
    /// must have read the file, and it must not have changed since. `verb`
    /// is "editing" or "writing" for the message. This is the check at
    /// planning; [`write`](Self::write) checks again at the moment of writing.
    pub fn check_fresh(&self, current: &FileText, verb: &str) -> Result<(), String> {
        let display = self.display_path(&current.path);
        let Some(entry) = self.ledger.get(&current.path) else {
            return Err(format!(
                "Error: You must read this file before {verb} it. Call read_file on {display} first."
            ));
        };
        if let Some(what) = ledger::change_since_read(&entry, &current.stamp, &current.text) {
            self.record_effects([FileEffect { untried: true, ..FileEffect::new(current.path.clone(), EditStatus::Superseded) }]);
            return Err(format!(
                "Error: {display} was modified externally since your last read ({what}). Read it again with read_file before {verb} it."
            ));
        }
        if entry.seen_text.is_none() {
            // Read in an earlier run of the thread and unchanged since: from
            // now on the entry knows the text (for the diff of the write) and
            // the open document's version (for the editor sink's check).
            self.ledger.confirm(&current.path, current.stamp, Arc::clone(&current.text));
        }
        Ok(())
    }

    /// Write a file's new text through the right sink: the editor for an open
    /// document, the disk otherwise. On success the ledger records the new
    /// text as seen, so the agent can edit again without re-reading.
    ///
    /// Writes to one file are serialised across every view of the workspace
    /// (conversation threads running at once): the base check and the write
    /// happen under the file's lock, so a second writer computed from the
    /// same old text finds the file changed instead of overwriting the first.
    pub async fn write(&self, change: FileChange) -> Result<WriteOutcome, WriteError> {
        let path = change.path.clone();
        // Set once the change is offered to the editor.
        let offered = std::sync::atomic::AtomicBool::new(false);
        let result = self.write_unrecorded(change, &offered).await;
        match &result {
            // A disk write records itself with the lines it changed, an
            // edit that landed in a buffer with the lines it changed there.
            Ok(_) => {}
            Err(_) => {
                // Refused before the editor saw it, or nothing written to disk.
                let untried = !offered.load(std::sync::atomic::Ordering::SeqCst);
                self.record_effects([FileEffect { untried, ..write_effect(path, &result) }]);
            }
        }
        result
    }

    /// [`write`](Self::write) but for recording its effect.
    async fn write_unrecorded(&self, change: FileChange, offered: &std::sync::atomic::AtomicBool) -> Result<WriteOutcome, WriteError> {
        let _file_lock = self.edit_locks.lock(&change.path).await;
        let display = self.display_path(&change.path);
        self.count_text_read();
        let buffer = match &self.editor {
            // Never the disk in place of a file the editor may hold.
            Some(editor) => editor.read_document(&change.path).map_err(|reason| {
                WriteError::NotApplied(format!(
                    "Error: the edit to {display} was not applied: the editor could not give the file's text ({reason}), so nothing was written. Read it again with read_file before retrying."
                ))
            })?,
            None => None,
        };
        if let (Some(editor), None) = (&self.editor, &buffer) {
            if editor.creates_files() && !change.path.exists() {
                return self.create_through_editor(Arc::clone(editor), change, &display, offered).await;
            }
        }
        if let (Some(editor), Some(buffer)) = (self.editor.as_ref(), buffer) {
            return self.write_to_buffer(editor.as_ref(), buffer, change, &display, offered).await;
        }
        self.write_to_disk(&change, &display).await
    }

    /// [`write`](Self::write) to an open document: a versioned edit through
    /// the editor. When the buffer changed after the agent's text was read
    /// and checked (the user typed while the edit waited for its review, in
    /// Tandem's prompt or in the editor's own), the edit is rebased: the
    /// agent's change and the user's are merged by lines
    /// ([`merge3`]), and the merged text is offered again (reviewed again
    /// where the editor reviews it), up to [`MAX_OFFERS`] times; when they
    /// touch the same lines or lines right beside each other, it is refused,
    /// saying so. The user's text is never changed by a rebase.
    async fn write_to_buffer(&self, editor: &dyn Editor, buffer: DocumentSnapshot, change: FileChange, display: &str, offered: &std::sync::atomic::AtomicBool) -> Result<WriteOutcome, WriteError> {
        let Some(base) = change.base else {
            return Err(WriteError::Superseded(format!(
                "Error: {display} is open in the editor; read it with read_file before writing it."
            )));
        };
        // Read from the disk, and opened in the editor since (for the
        // review) with that very text: the buffer is what was read.
        let opened_as_read = base.version.is_none() && !buffer.dirty && fingerprint(buffer.text.as_bytes()) == base.fingerprint;
        let edited_since = self
            .edited_versions
            .locked()
            .get(&change.path)
            .is_some_and(|&version| base.version.is_none_or(|read| version > read));
        // The text the agent's change was computed from.
        let mut base_text = if base.version == Some(buffer.version) || opened_as_read {
            Arc::clone(&buffer.text)
        } else {
            match self.ledger.get(&change.path) {
                // The user typed after the read was checked: rebased below.
                Some(LedgerEntry { seen_text: Some(seen), stamp, .. }) if stamp == base && !edited_since => seen,
                Some(LedgerEntry { seen_text: Some(seen), .. }) => {
                    let what = ledger::describe_change(&seen, &buffer.text);
                    return Err(WriteError::Superseded(format!(
                        "Error: {display} was modified externally since your last read (the user edited it in the editor: {what}). Read it again with read_file before editing it."
                    )));
                }
                _ => {
                    return Err(WriteError::Superseded(format!(
                        "Error: {display} was modified externally since your last read (the user edited it in the editor). Read it again with read_file before editing it."
                    )))
                }
            }
        };
        let mut now = buffer;
        let mut new_text = Arc::clone(&change.new_text);
        let mut splices = change.splices.clone();
        // The user's changes the edit was rebased around, in order.
        let mut rebased: Vec<String> = Vec::new();
        let mut offers = 0;
        let waited = if change.review { "while the edit was in the editor's review" } else { "while the edit waited for its review or to be sent" };
        // Why the editor refused the last offer, when it did.
        let mut refusal: Option<String> = None;
        let outcome = loop {
            if !(Arc::ptr_eq(&now.text, &base_text) || *now.text == *base_text) {
                let what = ledger::describe_change(&base_text, &now.text);
                let said = refusal.take().filter(|r| !r.is_empty()).map(|r| format!("; the editor said: {r}")).unwrap_or_default();
                let Some(merged) = merge3(&base_text, &now.text, &new_text) else {
                    return Err(WriteError::Superseded(format!(
                        "Error: the edit to {display} was not applied: the file changed in the editor {waited} ({what}{said}), in the lines the edit changes or right beside them, so it cannot be applied around that change. Read {display} again with read_file before editing it."
                    )));
                };
                if offers >= MAX_OFFERS {
                    return Err(WriteError::Superseded(format!(
                        "Error: the edit to {display} was not applied: the file kept changing in the editor {waited} ({what}); it was offered {offers} times. Read {display} again with read_file before editing it."
                    )));
                }
                rebased.push(what);
                base_text = Arc::clone(&now.text);
                new_text = Arc::from(merged);
                splices = None;
            }
            offers += 1;
            offered.store(true, std::sync::atomic::Ordering::SeqCst);
            let outcome = editor
                .apply(BufferEdit {
                    path: change.path.clone(),
                    version: now.version,
                    old_text: Arc::clone(&now.text),
                    new_text: Arc::clone(&new_text),
                    // Computed from the text at `now.version` (dropped once rebased).
                    splices: splices.clone(),
                    label: change.label.clone(),
                    review: change.review,
                    run: self.run_tag.clone(),
                    reoffer: offers > 1,
                    landed_late: self.late_landing(),
                    turn: self.edit_turn.clone(),
                })
                .await;
            let EditOutcome::Changed(reason) = outcome else { break outcome };
            match self.buffer(&change.path) {
                Some(latest) if latest.version != now.version => {
                    now = latest;
                    refusal = Some(reason);
                }
                Some(_) => break EditOutcome::NotApplied(reason),
                None => break EditOutcome::NotApplied(format!("the document was closed in the editor while the edit waited for its review ({reason})")),
            }
        };
        // The text the last offer was made on: what the checkpoint keeps as
        // the file's before (the user's typing during a review included),
        // recorded once the edit landed, so nothing of it stands between
        // the tool call and the edit sent.
        let before = Arc::clone(&now.text);
        match outcome {
            EditOutcome::Applied { version, saved } => {
                // The one fingerprint of this version, handed to the
                // editor with the text so the next read neither copies
                // nor hashes the document again.
                let (recorder, path, text) = (self.recorder.clone(), change.path.clone(), Arc::clone(&new_text));
                // Splices left (no rebase): made on the text the stamp
                // was taken of, so its fingerprint is the text before's.
                let (splices, before_fingerprint) = (splices, base.fingerprint);
                let (fingerprint, ranges) = crate::diff::off_runtime(move || {
                    let fingerprint = fingerprint(text.as_bytes());
                    // The lines it changed, as the hunks the editor was sent.
                    let hunks = match &splices {
                        Some(splices) => changed_lines(splices, &text),
                        None => changed_lines(&replacements(&before, &text), &text),
                    };
                    match (recorder, splices) {
                        (Some(recorder), Some(splices)) => recorder.buffer_edit(&SplicedEdit {
                            path: &path,
                            before: &before,
                            before_fingerprint,
                            splices: &splices,
                            after: &text,
                            after_fingerprint: fingerprint,
                        }),
                        (Some(recorder), None) => {
                            recorder.before_change(&path, &|| Some(before.as_bytes().to_vec()));
                            recorder.after_change(&path, text.as_bytes());
                        }
                        (None, _) => {}
                    }
                    (fingerprint, hunks)
                })
                .await;
                self.record_effects([FileEffect { ranges, ..FileEffect::new(change.path.clone(), EditStatus::Applied) }]);
                editor.known_text(&change.path, version, &new_text, fingerprint);
                let stamp = ReadStamp { version: Some(version), fingerprint };
                self.ledger.record(&change.path, stamp, new_text);
                self.edited_versions.locked().insert(change.path.clone(), version);
                Ok(WriteOutcome::AppliedToBuffer { saved, rebased: (!rebased.is_empty()).then(|| rebased.join("; then ")) })
            }
            EditOutcome::Rejected(reason) => Err(WriteError::Rejected(format!(
                "Error: the user rejected the edit to {display}{}. The file is unchanged.",
                if reason.is_empty() { String::new() } else { format!(": {reason}") }
            ))),
            EditOutcome::NotApplied(reason) => Err(WriteError::NotApplied(format!(
                "Error: the editor did not apply the edit to {display} ({reason}). Read the file again before retrying."
            ))),
            EditOutcome::Partial(partial) => {
                // The model is told exactly what the buffer holds now
                // (which hunks, where), so it may edit again without
                // reading first; the ledger remembers that text.
                if let Some(now) = self.buffer(&change.path).filter(|d| d.version == partial.version) {
                    // What landed is the run's change, for its checkpoint;
                    // copies and hashes of the document, off the runtime.
                    let (recorder, path, text) = (self.recorder.clone(), change.path.clone(), Arc::clone(&now.text));
                    let fingerprint = crate::diff::off_runtime(move || {
                        if let Some(recorder) = recorder {
                            recorder.before_change(&path, &|| Some(before.as_bytes().to_vec()));
                            recorder.after_change(&path, text.as_bytes());
                        }
                        fingerprint(text.as_bytes())
                    })
                    .await;
                    let stamp = ReadStamp { version: Some(now.version), fingerprint };
                    self.ledger.record(&change.path, stamp, now.text);
                    self.edited_versions.locked().insert(change.path.clone(), now.version);
                }
                Err(WriteError::PartlyApplied(partial.message(display), Box::new(partial)))
            }
            EditOutcome::Superseded(reason) => Err(WriteError::Superseded(format!(
                "Error: the edit to {display} was superseded by a user edit ({reason}). Read the file again before retrying."
            ))),
            EditOutcome::Unknown(reason) => Err(self.unknown_outcome(&change.path, display, &reason)),
            EditOutcome::Changed(reason) => Err(WriteError::Superseded(format!(
                "Error: the edit to {display} was not applied: the file changed in the editor {waited} ({reason}). Read {display} again with read_file before editing it."
            ))),
        }
    }

    /// An edit whose outcome nobody knows: what the agent read of the file
    /// no longer counts, so its next edit reads the file again first.
    fn unknown_outcome(&self, path: &Path, display: &str, reason: &str) -> WriteError {
        self.ledger.forget(path);
        WriteError::Unknown(format!(
            "Error: whether the edit to {display} was applied is unknown: {reason}. Read {display} again with read_file before editing it."
        ))
    }

    /// A new file, created through an editor that takes every write (an ACP
    /// client's `fs/write_text_file`), reviewed there when `change.review`.
    async fn create_through_editor(&self, editor: Arc<dyn Editor>, change: FileChange, display: &str, offered: &std::sync::atomic::AtomicBool) -> Result<WriteOutcome, WriteError> {
        if change.base.is_some() {
            self.ledger.forget(&change.path);
            return Err(WriteError::Superseded(format!(
                "Error: {display} was deleted since your last read. Check with list_files before writing it again."
            )));
        }
        if let Some(recorder) = &self.recorder {
            recorder.before_change(&change.path, &|| None);
        }
        offered.store(true, std::sync::atomic::Ordering::SeqCst);
        let outcome = editor
            .apply(BufferEdit {
                path: change.path.clone(),
                version: 0,
                old_text: Arc::from(""),
                new_text: Arc::clone(&change.new_text),
                splices: None,
                label: change.label.clone(),
                review: change.review,
                run: self.run_tag.clone(),
                reoffer: false,
                landed_late: self.late_landing(),
                turn: self.edit_turn.clone(),
            })
            .await;
        match outcome {
            EditOutcome::Applied { version, saved } => {
                let fingerprint = fingerprint(change.new_text.as_bytes());
                editor.known_text(&change.path, version, &change.new_text, fingerprint);
                if let Some(recorder) = &self.recorder {
                    recorder.after_change(&change.path, change.new_text.as_bytes());
                }
                let ranges = changed_lines(&replacements("", &change.new_text), &change.new_text);
                self.record_effects([FileEffect { ranges, ..FileEffect::new(change.path.clone(), EditStatus::Applied) }]);
                self.ledger.record(&change.path, ReadStamp { version: Some(version), fingerprint }, change.new_text);
                Ok(WriteOutcome::AppliedToBuffer { saved, rebased: None })
            }
            EditOutcome::Rejected(reason) => Err(WriteError::Rejected(format!(
                "Error: the user rejected creating {display}{}. Nothing was written.",
                if reason.is_empty() { String::new() } else { format!(": {reason}") }
            ))),
            EditOutcome::Superseded(reason) => Err(WriteError::Superseded(format!("Error: {display} was not created: {reason}."))),
            EditOutcome::NotApplied(reason) => Err(WriteError::NotApplied(format!("Error: the editor did not create {display} ({reason})."))),
            EditOutcome::Partial(partial) => Err(WriteError::PartlyApplied(partial.message(display), Box::new(partial))),
            EditOutcome::Unknown(reason) => Err(self.unknown_outcome(&change.path, display, &reason)),
            EditOutcome::Changed(reason) => Err(WriteError::Superseded(format!("Error: {display} was not created: {reason}."))),
        }
    }

    async fn write_to_disk(&self, change: &FileChange, display: &str) -> Result<WriteOutcome, WriteError> {
        let expected = change.base.map(|base| base.fingerprint);
        let changed_on_disk = self.ledger.get(&change.path).is_some_and(|e| e.changed_on_disk);
        if changed_on_disk && change.base.is_some() {
            return Err(WriteError::Superseded(format!(
                "Error: {display} was modified externally since your last read (the file watcher saw it change on disk). Read it again with read_file first."
            )));
        }
        let old_text = match (&change.base, self.ledger.get(&change.path)) {
            (Some(_), Some(LedgerEntry { seen_text: Some(seen), .. })) => seen,
            _ => Arc::from(""),
        };
        // The checkpoint's copy, the write, the diff of the lines it changed
        // and the new text's hash cost time in the file's size: off the
        // async runtime, so the editor's requests are answered meanwhile.
        let (path, new_text) = (change.path.clone(), Arc::clone(&change.new_text));
        let (recorder, journal) = (self.recorder.clone(), self.journal.clone());
        let written = crate::diff::off_runtime(move || {
            if let Some(recorder) = &recorder {
                recorder.before_change(&path, &|| std::fs::read(&path).ok());
            }
            atomic_write_journaled(&path, new_text.as_bytes(), expected, journal.as_deref())?;
            if let Some(recorder) = &recorder {
                recorder.after_change(&path, new_text.as_bytes());
            }
            let ranges = changed_lines(&replacements(&old_text, &new_text), &new_text);
            Ok((fingerprint(new_text.as_bytes()), ranges))
        })
        .await;
        match written {
            Ok((fingerprint, ranges)) => {
                self.record_effects([FileEffect { ranges, ..FileEffect::new(change.path.clone(), EditStatus::Written) }]);
                let stamp = ReadStamp { version: None, fingerprint };
                self.ledger.record(&change.path, stamp, Arc::clone(&change.new_text));
                self.watch(&change.path);
                Ok(WriteOutcome::WrittenToDisk)
            }
            Err(DiskWriteError::Changed) => Err(WriteError::Superseded(format!(
                "Error: {display} was modified externally since your last read (its content on disk no longer matches). Read it again with read_file first."
            ))),
            Err(DiskWriteError::Exists) => Err(WriteError::Superseded(format!(
                "Error: {display} was created by someone else after you looked. Read it with read_file before writing it."
            ))),
            Err(DiskWriteError::Io(err)) => Err(WriteError::Io(format!("Error: cannot write {display}: {err}"))),
        }
    }
}

/// What a write that did not go to the disk did to its file: its outcome
/// through the editor, or why it was refused.
fn write_effect(path: PathBuf, result: &Result<WriteOutcome, WriteError>) -> FileEffect {
    let status = match result {
        Ok(WriteOutcome::WrittenToDisk) => EditStatus::Written,
        Ok(WriteOutcome::AppliedToBuffer { .. }) => EditStatus::Applied,
        Err(WriteError::Superseded(_)) => EditStatus::Superseded,
        Err(WriteError::Rejected(_)) => EditStatus::Rejected,
        Err(WriteError::NotApplied(_) | WriteError::Io(_)) => EditStatus::NotApplied,
        Err(WriteError::Unknown(_)) => EditStatus::Unknown,
        Err(WriteError::PartlyApplied(_, partial)) => {
            let lines = |hunks: &[HunkInBuffer]| hunks.iter().map(|h| h.lines).collect();
            return FileEffect { ranges: lines(&partial.landed), declined: lines(&partial.declined), ..FileEffect::new(path, EditStatus::Partial) };
        }
    };
    FileEffect::new(path, status)
}

/// An editor's text for [`Workspace::read_confined`], held to its limit.
fn bounded_text(text: Arc<str>, max_bytes: u64) -> Result<Arc<str>, String> {
    match text.len() as u64 {
        bytes if bytes > max_bytes => Err(format!("it is {bytes} bytes; the limit is {max_bytes}")),
        _ => Ok(text),
    }
}

/// Decode file bytes as text: NUL bytes or invalid UTF-8 mean binary.
pub fn bytes_to_text(bytes: Vec<u8>) -> Result<String, ReadError> {
    let sniff = &bytes[..bytes.len().min(8192)];
    if sniff.contains(&0) {
        return Err(ReadError::Binary);
    }
    String::from_utf8(bytes).map_err(|_| ReadError::Binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An editor that, like Kakoune, applies an edit without checking its
    /// version, and takes a while doing it: a second writer that checked
    /// the version meanwhile would overwrite the first.
    struct NaiveSlowEditor {
        document: Mutex<DocumentSnapshot>,
        path: PathBuf,
        entered: tokio::sync::Notify,
    }

    #[async_trait::async_trait]
    impl Editor for NaiveSlowEditor {
        fn document(&self, path: &Path) -> Option<DocumentSnapshot> {
            (path == self.path).then(|| self.document.lock().unwrap().clone())
        }
        fn open_documents(&self) -> Vec<PathBuf> {
            vec![self.path.clone()]
        }
        async fn apply(&self, edit: BufferEdit) -> EditOutcome {
            self.entered.notify_waiters();
            // Give a concurrent writer the chance to get here too (bounded).
            let _ = tokio::time::timeout(std::time::Duration::from_millis(300), self.entered.notified()).await;
            let mut doc = self.document.lock().unwrap();
            doc.version += 1;
            doc.text = edit.new_text;
            EditOutcome::Applied { version: doc.version, saved: false }
        }
    }

    #[tokio::test]
    async fn two_threads_editing_one_file_are_serialised_and_no_edit_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("a.txt");
        let editor = Arc::new(NaiveSlowEditor {
            document: Mutex::new(DocumentSnapshot { text: Arc::from("one\n"), version: 1, dirty: false }),
            path: path.clone(),
            entered: tokio::sync::Notify::new(),
        });
        let base = Workspace::with_roots(vec![dir.path().to_path_buf()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
        // Two threads, each with its own ledger, both read version 1.
        let threads = [base.with_ledger(Arc::default()), base.with_ledger(Arc::default())];
        let changes: Vec<FileChange> = threads
            .iter()
            .zip(["one\nfrom A\n", "one\nfrom B\n"])
            .map(|(w, new_text)| {
                let file = w.read(&path).unwrap();
                w.record_read(&file);
                FileChange { path: path.clone(), new_text: new_text.into(), base: Some(file.stamp), label: "edit".into(), review: Default::default(), splices: None }
            })
            .collect();
        let [a, b] = &threads;
        let (ra, rb) = tokio::join!(a.write(changes[0].clone()), b.write(changes[1].clone()));
        let outcomes = [ra.is_ok(), rb.is_ok()];
        assert_eq!(outcomes.iter().filter(|ok| **ok).count(), 1, "{ra:?} {rb:?}");
        let refused = if ra.is_ok() { rb } else { ra };
        assert!(matches!(&refused, Err(WriteError::Superseded(m)) if m.contains("modified externally")), "{refused:?}");
        let text = editor.document(&path).unwrap().text.to_string();
        assert_eq!(editor.document(&path).unwrap().version, 2, "{text}");
    }

    /// A command that changes more files than the effect log holds: the
    /// newest stay, in order, and the call takes them.
    #[test]
    fn a_command_changing_more_files_than_the_effect_log_holds_keeps_the_newest_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::with_roots(vec![dir.path().to_path_buf()], None).unwrap().for_run("run-1").for_call("toolu_1");
        workspace.note_command_changes("first", &[CommandChange { path: dir.path().join("early"), deleted: false }]);
        let changes: Vec<CommandChange> =
            (0..effects::MAX_EFFECTS + 100).map(|i| CommandChange { path: dir.path().join(format!("f{i}")), deleted: i % 2 == 0 }).collect();
        workspace.note_command_changes("big", &changes);
        let taken = workspace.take_call_effects();
        assert_eq!(taken.len(), effects::MAX_EFFECTS);
        let paths: Vec<PathBuf> = taken.iter().map(|w| w.path.clone()).collect();
        let newest: Vec<PathBuf> = changes[100..].iter().map(|c| c.path.clone()).collect();
        assert_eq!(paths, newest);
        assert!(taken.iter().all(|w| w.by_command.as_deref() == Some("big") && w.deleted == w.path.to_string_lossy().ends_with(['0', '2', '4', '6', '8'])));
        assert!(workspace.take_call_effects().is_empty());
    }

    /// Each call's effects are recorded under it and taken with its
    /// result: a disk write with the lines it changed, a refusal because
    /// the file changed since the read, the files a command changed. Another
    /// call, and a view of no call, see nothing of them.
    #[tokio::test]
    async fn each_call_records_what_it_did_to_files_under_its_own_id() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("a.txt");
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let run = Workspace::with_roots(vec![root.clone()], None).unwrap().for_run("run-1");
        let (first, second) = (run.for_call("toolu_1"), run.for_call("toolu_2"));
        let file = first.read(&path).unwrap();
        first.record_read(&file);
        let change = FileChange { path: path.clone(), new_text: "one\nTWO\nthree\n".into(), base: Some(file.stamp), label: "edit".into(), review: false, splices: None };
        assert_eq!(first.write(change).await, Ok(WriteOutcome::WrittenToDisk));
        // The file changes behind the agent's back: the next check refuses.
        std::fs::write(&path, "changed\n").unwrap();
        let now = second.read(&path).unwrap();
        assert!(second.check_fresh(&now, "editing").is_err());
        second.note_command_changes("make clean", &[CommandChange { path: root.join("out.o"), deleted: true }]);
        run.note_command_changes("unseen", &[CommandChange { path: root.join("x"), deleted: false }]);

        assert_eq!(first.take_call_effects(), vec![FileEffect { ranges: vec![LineSpan { start: 2, end: 2 }], ..FileEffect::new(path.clone(), EditStatus::Written) }]);
        assert_eq!(
            second.take_call_effects(),
            vec![
                FileEffect { untried: true, ..FileEffect::new(path.clone(), EditStatus::Superseded) },
                FileEffect { by_command: Some("make clean".into()), deleted: true, ..FileEffect::new(root.join("out.o"), EditStatus::Written) },
            ]
        );
        assert!(first.take_call_effects().is_empty(), "taken once");
        assert!(run.take_call_effects().is_empty(), "a view of no call records nothing");
    }

    /// A path shown to the model must resolve back to the same file.
    #[test]
    fn displayed_paths_resolve_back_in_every_root() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let workspace =
            Workspace::with_roots(vec![first.path().to_path_buf(), second.path().to_path_buf()], None).unwrap();
        for root in workspace.roots().to_vec() {
            let file = root.join("src/lib.rs");
            let shown = workspace.display_path(&file);
            assert_eq!(workspace.resolve(&shown).unwrap(), file, "shown as {shown}");
        }
    }
}
