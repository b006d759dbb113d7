//! The workspace every real-editor test starts from: a temp folder marked
//! as a project root holding `notes.txt`, and the scripted model's usual
//! run over it. Standalone (no crate imports), so an editor test includes
//! it with `#[path = "common/notes.rs"] mod notes;`.

#![allow(dead_code)]

use std::path::PathBuf;

/// `notes.txt` on disk before the run.
pub const ON_DISK: &str = "line one\nline two\nline three\n";

/// A temp workspace marked as a project root, holding `notes.txt` as [`ON_DISK`].
pub struct NotesWorkspace {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub file: PathBuf,
}

impl NotesWorkspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        std::fs::create_dir(root.join(".git")).expect("mark the root");
        let file = root.join("notes.txt");
        std::fs::write(&file, ON_DISK).expect("write notes.txt");
        NotesWorkspace { _dir: dir, root, file }
    }

    /// Writes the scripted model's script (`.git/script.json`) and returns
    /// its path, for `TANDEM_SCRIPT`.
    pub fn write_script(&self, script: &str) -> PathBuf {
        let path = self.root.join(".git/script.json");
        std::fs::write(&path, script).expect("write script");
        path
    }

    /// What the editor left on disk.
    pub fn disk(&self) -> String {
        std::fs::read_to_string(&self.file).expect("read notes.txt")
    }
}

/// The model reads `notes.txt`, capitalises line three, and is done.
pub fn read_then_edit() -> serde_json::Value {
    serde_json::json!([
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
        {"text": "Editing.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}}]},
        {"text": "Done."}
    ])
}
