//! The hook a run's checkpoint hangs on: every change the agent makes to a
//! file passes [`Workspace::write`](super::Workspace::write), and every
//! shell command the executor runs is announced before and after, so a
//! recorder above this layer (the `checkpoint` module) can keep what each
//! file held before the run and what the run left.
//!
//! The workspace owns the trait and knows nothing of how changes are kept.

use std::path::{Path, PathBuf};

use super::Splice;

/// A file a shell command changed (created, changed or deleted), as the
/// recorder's look before and after the command saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandChange {
    pub path: PathBuf,
    /// The command removed it.
    pub deleted: bool,
}

/// An edit of an open document, given as splices of the text it was made
/// on, once it landed.
pub struct SplicedEdit<'a> {
    pub path: &'a Path,
    /// The text the splices were made on, and its [`fingerprint`](super::fingerprint).
    pub before: &'a str,
    pub before_fingerprint: u64,
    /// In order, not overlapping: byte ranges of `before`.
    pub splices: &'a [Splice],
    /// The text they made, and its fingerprint.
    pub after: &'a str,
    pub after_fingerprint: u64,
}

/// Told about the changes one run makes. Calls never fail: a recorder that
/// cannot keep something notes it for the undo to report, and the run goes on.
#[async_trait::async_trait]
pub trait ChangeRecorder: Send + Sync {
    /// `path` is about to change. `current` gives its content now (`None`:
    /// it does not exist); it is only called when the recorder has not kept
    /// this file's earlier content yet.
    fn before_change(&self, path: &Path, current: &dyn Fn() -> Option<Vec<u8>>);
    /// The change landed: `path` now holds `content`.
    fn after_change(&self, path: &Path, content: &[u8]);
    /// An edit of an open document given as splices landed. A recorder may
    /// keep the edit itself rather than copies of the document; by default
    /// it is recorded as any change.
    fn buffer_edit(&self, edit: &SplicedEdit<'_>) {
        self.before_change(edit.path, &|| Some(edit.before.as_bytes().to_vec()));
        self.after_change(edit.path, edit.after.as_bytes());
    }
    /// A shell command is about to run in the workspace.
    async fn before_command(&self);
    /// The shell command has ended (however it ended): the files that
    /// changed while it ran, in path order.
    async fn after_command(&self) -> Vec<CommandChange>;
}
