//! Edit scenarios as data, run through the real [`Executor`], plus the edit
//! behaviours that need more than files: the file watcher and open buffers.
//!
//! Each folder `tests/data/edit/NNN_name/` is one scenario:
//!
//! - `input/` — the workspace before the call (absent: an empty workspace);
//! - `args.json` — `{"tool": "edit_file", "input": {…}, "read": [...],
//!   "after_read": {"path": "text"}}`. `tool` defaults to `edit_file`;
//!   `read` lists the files read with `read_file` first (default: the
//!   input's `file_path`; `[]` reads nothing); `after_read` overwrites files
//!   on disk after those reads, as a user or another program would;
//! - `expected/` — the workspace after the call; absent when the call must
//!   leave the workspace as it was just before it;
//! - `expected_result.txt` or `expected_error.txt` — the exact result text
//!   (plus one final newline), and whether it is an error result. The temp
//!   workspace's absolute path is written `$ROOT`.
//!
//! `UPDATE_EXPECT=1 cargo test --test integration edit_scenarios::` rewrites the expected
//! files from what the tools do now; review the diff before committing.

#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::files;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry, ToolResult};
use tandem::workspace::{Editor as _, MemoryEditor, Workspace};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioArgs {
    #[serde(default = "default_tool")]
    tool: String,
    input: Value,
    #[serde(default)]
    read: Option<Vec<String>>,
    #[serde(default)]
    after_read: BTreeMap<String, String>,
}

fn default_tool() -> String {
    "edit_file".to_string()
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/edit")
}

async fn execute(ctx: &ToolContext, name: &str, input: Value) -> ToolResult {
    let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
    let call = ToolCall::new("toolu_test", name, input);
    executor.execute(&call, ctx).await.expect("no tool call in these scenarios is fatal")
}

/// Run one scenario; `Err` describes every way it differs from its
/// expectations.
async fn run_scenario(dir: &Path, update: bool) -> Result<(), String> {
    let args_text = std::fs::read_to_string(dir.join("args.json")).map_err(|e| format!("args.json: {e}"))?;
    let args: ScenarioArgs = serde_json::from_str(&args_text).map_err(|e| format!("args.json: {e}"))?;
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = temp.path().canonicalize().map_err(|e| e.to_string())?;
    files::copy_tree(&dir.join("input"), &root);
    let ctx = ToolContext::new(Arc::new(Workspace::new(&root).map_err(|e| e.to_string())?));

    let reads = match args.read {
        Some(paths) => paths,
        None => vec![args.input["file_path"].as_str().unwrap_or_default().to_string()],
    };
    for path in reads {
        let read = execute(&ctx, "read_file", json!({ "file_path": path })).await;
        if read.is_error {
            return Err(format!("the setup read of {path} failed: {}", read.content));
        }
    }
    for (rel, text) in &args.after_read {
        files::write_file(&root, rel, text.as_bytes());
    }
    let before = files::read_tree(&root);

    let mut result = execute(&ctx, &args.tool, args.input.clone()).await;
    let after = files::read_tree(&root);
    // Absolute paths in messages depend on where the temp folder is.
    result.content = result.content.replace(&root.display().to_string(), "$ROOT");
    if let Some(parent) = root.parent() {
        result.content = result.content.replace(&parent.display().to_string(), "$ROOT/..");
    }

    let (snapshot_name, other_name) =
        if result.is_error { ("expected_error.txt", "expected_result.txt") } else { ("expected_result.txt", "expected_error.txt") };
    let expected_dir = dir.join("expected");
    if update {
        let _ = std::fs::remove_file(dir.join(other_name));
        std::fs::write(dir.join(snapshot_name), format!("{}\n", result.content)).map_err(|e| e.to_string())?;
        if after == before {
            let _ = std::fs::remove_dir_all(&expected_dir);
        } else {
            files::write_tree(&expected_dir, &after);
        }
        return Ok(());
    }

    let mut problems = String::new();
    if dir.join(other_name).exists() {
        problems.push_str(&format!(
            "expected {} (is_error={}), got is_error={}\n",
            other_name,
            !result.is_error,
            result.is_error
        ));
    }
    match std::fs::read_to_string(dir.join(snapshot_name)) {
        Ok(expected) => {
            let expected = expected.strip_suffix('\n').unwrap_or(&expected);
            if expected != result.content {
                problems.push_str(&format!(
                    "{snapshot_name} differs:\n--- expected\n{expected}\n--- actual\n{}\n---\n",
                    result.content
                ));
            }
        }
        Err(_) if !dir.join(other_name).exists() => {
            problems.push_str(&format!("no {snapshot_name}; the result was:\n{}\n", result.content));
        }
        Err(_) => {}
    }
    let expected_tree = if expected_dir.exists() { files::read_tree(&expected_dir) } else { before };
    let tree_problems = files::tree_diff(&expected_tree, &after);
    if !tree_problems.is_empty() {
        problems.push_str(&format!("workspace after the call:\n{tree_problems}"));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems) }
}

#[tokio::test]
async fn edit_scenarios() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("tests/data/edit exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.join("args.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 15, "expected the scenario folders, found {}", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        if let Err(problems) = run_scenario(dir, update).await {
            let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            failures.push(format!("== {name}\n{problems}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} scenarios failed:\n\n{}", failures.len(), dirs.len(), failures.join("\n"));
}

/// A temp workspace with files on disk.
fn workspace_with(files: &[(&str, &str)], editor: Option<Arc<MemoryEditor>>) -> (tempfile::TempDir, PathBuf, ToolContext) {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    for (rel, text) in files {
        files::write_file(&root, rel, text.as_bytes());
    }
    let editor = editor.map(|e| e as Arc<dyn tandem::workspace::Editor>);
    let workspace = Workspace::with_roots(vec![root.clone()], editor).unwrap();
    (temp, root, ToolContext::new(Arc::new(workspace)))
}

/// Poll `condition` until it holds or `timeout` passes.
#[tokio::test]
async fn the_watcher_marks_a_read_file_changed_when_it_changes_on_disk() {
    let (_temp, root, ctx) = workspace_with(&[("notes.txt", "one\ntwo\n")], None);
    ctx.workspace.start_watcher().unwrap();
    let path = root.join("notes.txt");
    let read = execute(&ctx, "read_file", json!({"file_path": "notes.txt"})).await;
    assert!(!read.is_error, "{}", read.content);
    assert!(!ctx.workspace.ledger().get(&path).unwrap().changed_on_disk);

    std::fs::write(&path, "one\nTWO\n").unwrap();
    common::wait_until("the watcher marks notes.txt changed on disk", || ctx.workspace.ledger().get(&path).is_some_and(|e| e.changed_on_disk));

    let edit = execute(&ctx, "edit_file", json!({"file_path": "notes.txt", "old_string": "one", "new_string": "1"})).await;
    assert!(edit.is_error);
    assert_eq!(
        edit.content,
        "Error: notes.txt was modified externally since your last read (line 2 changed; the file watcher saw it change on disk). Read it again with read_file before editing it."
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\nTWO\n");

    // Reading again clears the mark, and the agent's own write is not
    // reported back as a foreign change.
    execute(&ctx, "read_file", json!({"file_path": "notes.txt"})).await;
    let edit = execute(&ctx, "edit_file", json!({"file_path": "notes.txt", "old_string": "one", "new_string": "1"})).await;
    assert!(!edit.is_error, "{}", edit.content);
    let second = execute(&ctx, "edit_file", json!({"file_path": "notes.txt", "old_string": "TWO", "new_string": "2"})).await;
    assert!(!second.is_error, "{}", second.content);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\n2\n");
}

#[tokio::test]
async fn editing_an_open_buffer_changes_the_buffer_not_the_disk() {
    let editor = Arc::new(MemoryEditor::default());
    let (_temp, root, ctx) = workspace_with(&[("app.py", "print('disk')\n")], Some(editor.clone()));
    let path = root.join("app.py");
    editor.open(&path, "print('unsaved')\nx = 1\n", 4);

    let read = execute(&ctx, "read_file", json!({"file_path": "app.py"})).await;
    assert_eq!(read.content, "   1 | print('unsaved')\n   2 | x = 1");
    let edit = execute(&ctx, "edit_file", json!({"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2"})).await;
    assert!(!edit.is_error, "{}", edit.content);
    expect_test::expect![[r#"
        Successfully edited app.py
        Note: the file is open in the editor; the change is in the editor, unsaved. Commands run with run_shell see the old content on disk until it is saved.
        @@ -1,2 +1,2 @@
           1   print('unsaved')
           2 - x = 1
           2 + x = 2"#]]
    .assert_eq(&edit.content);
    let buffer = editor.document(&path).unwrap();
    assert_eq!(buffer.text.as_ref(), "print('unsaved')\nx = 2\n");
    assert_eq!(buffer.version, 5);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "print('disk')\n");

    // The user types after the agent's edit: the next edit is refused.
    editor.open(&path, "print('typed')\nx = 2\n", 6);
    let superseded = execute(&ctx, "edit_file", json!({"file_path": "app.py", "old_string": "x = 2", "new_string": "x = 3"})).await;
    assert!(superseded.is_error);
    assert!(superseded.content.contains("was modified externally since your last read (line 1 changed)"), "{}", superseded.content);
    assert_eq!(editor.document(&path).unwrap().text.as_ref(), "print('typed')\nx = 2\n");
}

#[cfg(unix)]
#[tokio::test]
async fn editing_through_a_symlink_inside_the_workspace_keeps_the_link() {
    let (_temp, root, ctx) = workspace_with(&[("real/config.toml", "debug = false\n")], None);
    std::os::unix::fs::symlink("real/config.toml", root.join("config.toml")).unwrap();
    execute(&ctx, "read_file", json!({"file_path": "config.toml"})).await;
    let edit = execute(&ctx, "edit_file", json!({"file_path": "config.toml", "old_string": "false", "new_string": "true"})).await;
    assert!(!edit.is_error, "{}", edit.content);
    assert!(std::fs::symlink_metadata(root.join("config.toml")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(root.join("real/config.toml")).unwrap(), "debug = true\n");
}
