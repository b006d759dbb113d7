//! `write_file`: create a file, or replace an existing file's whole text.
//!
//! An existing file must have been read in this run and be unchanged since
//! ([`Workspace::check_fresh`]); a new file skips that check. The change goes
//! through [`Workspace::write`], so a file open in the editor becomes an
//! editor edit and a closed file an atomic disk write.
//!
//! Also home to the helpers `edit_file` shares: the "existing, read and
//! fresh" check with its refusals, and line-ending detection (an existing
//! CRLF file stays CRLF when the model writes `\n`).

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::support::change::{applied_note, chosen_part, fresh_existing, with_review_note};
use crate::tools::support::text::{digits, line_ending_of, numbered_line, render_diff, with_line_ending};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::{FileChange, ReadStamp, Workspace, WriteOutcome};

/// Lines of the written text shown back to the model.
const PREVIEW_LINES: usize = 30;

/// Characters of one preview line before it is cut.
const PREVIEW_LINE_CHARS: usize = 200;

/// Write a whole file: create it (and its parent folders) or replace all of
/// its text with `content`.
///
/// Use it for new files and for complete rewrites. To change part of an
/// existing file, prefer `edit_file`: it is cheaper and cannot drop lines by
/// accident. Overwriting an existing file requires having read it with
/// `read_file` in this session, and the file must not have changed since
/// (otherwise read it again). A file that uses CRLF line endings keeps them.
/// Paths are relative to the workspace root. If the file is open in the
/// user's editor, the change is made in the editor.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WriteFileArgs {
    /// The file to write, relative to the workspace root.
    pub file_path: String,
    /// The complete new text of the file.
    pub content: String,
}

pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    type Args = WriteFileArgs;
    type Plan = WritePlan;
    const NAME: &'static str = "write_file";

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        ToolKind::Edit { path: ctx.workspace.resolve_lenient(&args.file_path) }
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.file_path.clone()
    }

    /// Off the async runtime: reading, hashing and diffing a large file
    /// is CPU work the editor's requests must not wait behind.
    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<WritePlan, ToolError> {
        let (workspace, args) = (Arc::clone(&ctx.workspace), args.clone());
        crate::diff::off_runtime(move || plan_write(&workspace, &args)).await
    }

    fn preview(&self, _args: &Self::Args, plan: &WritePlan) -> Option<String> {
        Some(plan.diff.clone())
    }

    async fn call(&self, args: Self::Args, plan: WritePlan, ctx: &ToolContext) -> Result<String, ToolError> {
        // The workspace checks again, at the moment of writing, that the
        // file is still what the plan was computed from.
        let display = ctx.workspace.display_path(&plan.path);
        let old = plan.old_text.as_deref().unwrap_or("");
        let part = chosen_part(old, &plan.new_text, &plan.diff, ctx.chosen_hunks.as_deref(), &display)?;
        let path = plan.path.clone();
        let change = FileChange {
            path: plan.path,
            new_text: part.as_ref().map_or(plan.new_text, |part| Arc::clone(&part.text)),
            base: plan.base,
            label: format!("write_file {display}"),
            review: ctx.approval.review_in_editor(),
            // A whole new text: the editor sink diffs it.
            splices: None,
        };
        let written = ctx.workspace.write(change).await;
        let review_note = ctx.workspace.take_review_note(&path);
        let outcome = written.map_err(|e| ToolError::model(with_review_note(e.message(), review_note.clone())))?;
        let result = match part {
            // What was written is not the content asked for: say what it is.
            Some(part) => {
                let total = part.text.lines().count();
                let lines = if total == 1 { "line" } else { "lines" };
                let mut out = format!("Wrote part of the change to {display} ({total} {lines}): {}", part.summary);
                if let Some(note) = applied_note(&outcome) {
                    out.push('\n');
                    out.push_str(&note);
                }
                Ok(format!("{out}\n{}\n{}", part.note, part.diff))
            }
            None => Ok(render_success(&display, &args.content, &outcome)),
        };
        result.map(|out| with_review_note(out, review_note))
    }
}

/// What `write_file` will do, computed before permission is asked.
pub struct WritePlan {
    path: std::path::PathBuf,
    new_text: std::sync::Arc<str>,
    /// The file's text the change was planned on (`None`: a new file).
    old_text: Option<Arc<str>>,
    base: Option<ReadStamp>,
    /// The diff shown for review, rendered once, with the plan.
    diff: String,
}

fn plan_write(workspace: &Workspace, args: &WriteFileArgs) -> Result<WritePlan, ToolError> {
    let path = workspace.resolve(&args.file_path).map_err(|e| ToolError::model(e.message()))?;
    match fresh_existing(workspace, &path, "writing")? {
        Some(current) => {
            let new_text: Arc<str> = match line_ending_of(&current.text) {
                Some(ending) => with_line_ending(&args.content, ending).into(),
                None => args.content.as_str().into(),
            };
            let diff = render_diff(&current.text, &new_text);
            Ok(WritePlan { path, new_text, old_text: Some(Arc::clone(&current.text)), base: Some(current.stamp), diff })
        }
        None => Ok(WritePlan { path, diff: render_diff("", &args.content), new_text: args.content.as_str().into(), old_text: None, base: None }),
    }
}

fn render_success(display: &str, content: &str, outcome: &WriteOutcome) -> String {
    let total = content.lines().count();
    let mut out = format!("Successfully wrote to {display} ({total} {})", if total == 1 { "line" } else { "lines" });
    if let Some(note) = applied_note(outcome) {
        out.push('\n');
        out.push_str(&note);
    }
    let width = digits(total.min(PREVIEW_LINES)).max(4);
    for (index, line) in content.lines().take(PREVIEW_LINES).enumerate() {
        out.push('\n');
        let line = line.strip_suffix('\r').unwrap_or(line);
        match line.char_indices().nth(PREVIEW_LINE_CHARS) {
            Some((end, _)) => out.push_str(&format!("{} [...]", numbered_line(index + 1, width, &line[..end]))),
            None => out.push_str(&numbered_line(index + 1, width, line)),
        }
    }
    if total > PREVIEW_LINES {
        out.push_str(&format!("\n... ({total} lines total)"));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tools::support::test_fixture::{text_fixture as fixture, Fixture};
    use expect_test::expect;

    async fn run(f: &Fixture, name: &str, input: serde_json::Value) -> String {
        let result = f.call(name, input).await;
        format!("is_error={}\n{}", result.is_error, result.content)
    }

    /// A user who takes the hunks marked `true` of every edit.
    struct TakesHunks(Vec<bool>);

    #[async_trait::async_trait]
    impl crate::tools::PermissionGate for TakesHunks {
        async fn decide(&self, _request: &crate::tools::PermissionRequest) -> crate::tools::PermissionDecision {
            crate::tools::PermissionDecision::ApprovedHunks(self.0.clone().into())
        }
    }

    async fn run_taking(f: &Fixture, keep: &[bool], name: &str, input: serde_json::Value) -> String {
        let executor = crate::tools::Executor::new(crate::tools::ToolRegistry::builtin())
            .with_results_dir(None)
            .with_gate(std::sync::Arc::new(TakesHunks(keep.to_vec())));
        let result = executor.execute(&crate::tools::ToolCall::new("t", name, input), &f.ctx).await.unwrap();
        format!("is_error={}\n{}", result.is_error, result.content)
    }

    #[tokio::test]
    async fn only_the_hunks_the_user_took_are_written_and_the_model_is_told() {
        let old: String = (1..=20).map(|i| format!("row {i:02}\n")).collect();
        let f = fixture(&[("rows.txt", &old)]);
        run(&f, "read_file", serde_json::json!({"file_path": "rows.txt"})).await;
        let new = old.replace("row 02\n", "ROW 02\n").replace("row 18\n", "ROW 18\n");
        let out = run_taking(&f, &[false, true], "write_file", serde_json::json!({"file_path": "rows.txt", "content": new})).await;
        assert_eq!(std::fs::read_to_string(f.root.join("rows.txt")).unwrap(), old.replace("row 18\n", "ROW 18\n"));
        expect![[r#"
            is_error=false
            Wrote part of the change to rows.txt (20 lines): hunk 2 of 2 applied, hunk 1 declined
            Note: the user applied 1 of the 2 hunks; the user declined hunk 1 (@@ -1,5 +1,5 @@) (numbered as in the change shown, with their old and new lines). The file holds only the applied hunks: do not make the declined ones again unless the user asks, and read the file before editing near them.
            @@ -15,6 +15,6 @@
              15   row 15
              16   row 16
              17   row 17
              18 - row 18
              18 + ROW 18
              19   row 19
              20   row 20"#]]
        .assert_eq(&out);
        // edit_file's replace_all, the same way; the file was written by
        // the agent, so it is fresh.
        let out = run_taking(&f, &[true, false], "edit_file", serde_json::json!({"file_path": "rows.txt", "old_string": "0\n", "new_string": "0!\n", "replace_all": true})).await;
        assert!(out.starts_with("is_error=false\nSuccessfully edited rows.txt in part: hunk 1 of 2 applied, hunk 2 declined"), "{out}");
        let now = std::fs::read_to_string(f.root.join("rows.txt")).unwrap();
        assert!(now.contains("row 09\nrow 10!\nrow 11\n") && now.ends_with("row 19\nrow 20\n"), "{now}");
        // A selection for another number of hunks writes nothing.
        let before = std::fs::read_to_string(f.root.join("rows.txt")).unwrap();
        let out = run_taking(&f, &[true, false, true], "write_file", serde_json::json!({"file_path": "rows.txt", "content": "one\n"})).await;
        assert!(out.contains("is_error=true") && out.contains("nothing was written"), "{out}");
        assert_eq!(std::fs::read_to_string(f.root.join("rows.txt")).unwrap(), before);
    }

    #[tokio::test]
    async fn creates_a_new_file_with_parent_folders() {
        let f = fixture(&[]);
        let out = run(&f, "write_file", serde_json::json!({"file_path": "src/deep/new.rs", "content": "fn main() {}\n"})).await;
        expect![[r#"
            is_error=false
            Successfully wrote to src/deep/new.rs (1 line)
               1 | fn main() {}"#]]
        .assert_eq(&out);
        assert_eq!(std::fs::read_to_string(f.root.join("src/deep/new.rs")).unwrap(), "fn main() {}\n");
    }

    #[tokio::test]
    async fn previews_the_first_30_lines() {
        let f = fixture(&[]);
        let content: String = (1..=45).map(|i| format!("row {i}\n")).collect();
        let out = run(&f, "write_file", serde_json::json!({"file_path": "long.txt", "content": content})).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[1], "Successfully wrote to long.txt (45 lines)");
        assert_eq!(lines[2], "   1 | row 1");
        assert_eq!(lines[31], "  30 | row 30");
        assert_eq!(lines[32], "... (45 lines total)");
        assert_eq!(lines.len(), 33);
    }

    #[tokio::test]
    async fn overwriting_requires_a_fresh_read() {
        let f = fixture(&[("a.txt", "old\n")]);
        let write = serde_json::json!({"file_path": "a.txt", "content": "new\n"});
        let mut out = run(&f, "write_file", write.clone()).await;
        run(&f, "read_file", serde_json::json!({"file_path": "a.txt"})).await;
        std::fs::write(f.root.join("a.txt"), "changed by the user\n").unwrap();
        out.push_str("\n\n");
        out.push_str(&run(&f, "write_file", write.clone()).await);
        run(&f, "read_file", serde_json::json!({"file_path": "a.txt"})).await;
        out.push_str("\n\n");
        out.push_str(&run(&f, "write_file", write).await);
        expect![[r#"
            is_error=true
            Error: You must read this file before writing it. Call read_file on a.txt first.

            is_error=true
            Error: a.txt was modified externally since your last read (line 1 changed). Read it again with read_file before writing it.

            is_error=false
            Successfully wrote to a.txt (1 line)
               1 | new"#]]
        .assert_eq(&out);
        assert_eq!(std::fs::read_to_string(f.root.join("a.txt")).unwrap(), "new\n");
    }

    #[tokio::test]
    async fn keeps_crlf_line_endings_of_an_existing_file() {
        let f = fixture(&[("win.txt", "one\r\ntwo\r\n")]);
        run(&f, "read_file", serde_json::json!({"file_path": "win.txt"})).await;
        run(&f, "write_file", serde_json::json!({"file_path": "win.txt", "content": "uno\ndos\ntres\n"})).await;
        assert_eq!(std::fs::read_to_string(f.root.join("win.txt")).unwrap(), "uno\r\ndos\r\ntres\r\n");
    }

    #[tokio::test]
    async fn an_open_buffer_changes_in_the_editor_and_says_it_is_unsaved() {
        let f = fixture(&[("a.txt", "disk\n")]);
        let path = f.root.join("a.txt");
        f.editor.open(&path, "buffer\n", 1);
        run(&f, "read_file", serde_json::json!({"file_path": "a.txt"})).await;
        let out = run(&f, "write_file", serde_json::json!({"file_path": "a.txt", "content": "agent\n"})).await;
        expect![[r#"
            is_error=false
            Successfully wrote to a.txt (1 line)
            Note: the file is open in the editor; the change is in the editor, unsaved. Commands run with run_shell see the old content on disk until it is saved.
               1 | agent"#]]
        .assert_eq(&out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "disk\n");
        use crate::workspace::Editor as _;
        assert_eq!(f.editor.document(&path).unwrap().text.as_ref(), "agent\n");
    }

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[tokio::test]
    async fn refuses_folders_binary_files_and_paths_outside() {
        let f = fixture(&[("bin.dat", "a\0b")]);
        std::fs::create_dir(f.root.join("dir")).unwrap();
        let mut out = String::new();
        for path in ["dir", "bin.dat", "../escape.txt", "/etc/tandem-escape.txt"] {
            let result = run(&f, "write_file", serde_json::json!({"file_path": path, "content": "x"})).await;
            out.push_str(&result.replace(&f.root.parent().unwrap().display().to_string(), "$TMP"));
            out.push('\n');
        }
        expect![[r#"
            is_error=true
            Error: dir is a directory, not a file. Give the path of a file.
            is_error=true
            Error: bin.dat is a binary file (or is not UTF-8 text); only text files can be changed with edit_file or write_file.
            is_error=true
            Error: ../escape.txt resolves to $TMP/escape.txt, which is outside the workspace. Only files inside the workspace can be accessed.
            is_error=true
            Error: /etc/tandem-escape.txt resolves to /etc/tandem-escape.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        "#]]
        .assert_eq(&out);
    }
}
