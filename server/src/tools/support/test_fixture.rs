//! A workspace in a temp folder with an in-memory editor, for the tools'
//! unit tests: every call goes through the real executor.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;

use crate::tools::{Executor, ToolCall, ToolContext, ToolRegistry, ToolResult};
use crate::workspace::{MemoryEditor, Workspace};

pub(crate) struct Fixture {
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ctx: ToolContext,
    pub editor: Arc<MemoryEditor>,
}

/// A workspace holding `files` (path relative to the root, bytes).
pub(crate) fn fixture(files: &[(&str, &[u8])]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (name, bytes) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let editor = Arc::new(MemoryEditor::default());
    let mut workspace = Workspace::with_roots(vec![root.clone()], Some(editor.clone())).unwrap();
    workspace.set_home(None);
    Fixture { _dir: dir, root, ctx: ToolContext::new(Arc::new(workspace)), editor }
}

/// [`fixture`] for text files.
pub(crate) fn text_fixture(files: &[(&str, &str)]) -> Fixture {
    let files: Vec<(&str, &[u8])> = files.iter().map(|(name, text)| (*name, text.as_bytes())).collect();
    fixture(&files)
}

impl Fixture {
    /// Run one call through every gate (large results are not persisted).
    pub(crate) async fn call(&self, name: &str, input: serde_json::Value) -> ToolResult {
        let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
        let call = ToolCall::new("t", name, input);
        executor.execute(&call, &self.ctx).await.unwrap()
    }
}
