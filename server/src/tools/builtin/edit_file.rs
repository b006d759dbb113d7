//! `edit_file`: replace an exact string in a file.
//!
//! String replacement fails loudly when the string is not in the file,
//! instead of writing somewhere wrong. The work is split by phase:
//!
//! 1. **find** — locate `old_string` with decreasing strictness and say which
//!    rung matched ([`MatchRung`], the ladder in [`edit_match`]): exact bytes,
//!    line endings, quotes, Unicode punctuation and spaces, then whole lines
//!    ignoring trailing whitespace, line-number prefixes, tabs against spaces
//!    and a uniform indentation offset. A miss names the closest text.
//! 2. **plan** — compute each replacement so it fits where it lands, in the
//!    file's style (see [`edit_match::plan`]). `new_string` is inserted
//!    literally (`$1`, `$&`, `\n` are just text).
//! 3. **apply** — splice the replacements into the text and hand the whole
//!    new text to [`Workspace::write`], which reaches the editor for an open
//!    document and the disk otherwise.
//!
//! An empty `old_string` creates a file that does not exist yet, or fills an
//! empty one (as Claude Code allows); on a file with content it is refused,
//! since it would match everywhere.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::support::change::{applied_note, chosen_part, fresh_existing, with_review_note};
use crate::tools::support::edit_match::{self, FindError, MatchRung};
use crate::tools::support::text::{render_diff, render_splice_diff};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::{FileChange, ReadStamp, Splice, Workspace};

/// Replace text in a file: `old_string` becomes `new_string`.
///
/// `old_string` must match the file's text exactly, including whitespace and
/// indentation, and without the line-number prefix (`  12 | `) that
/// read_file shows. It must occur exactly once, unless `replace_all` is true:
/// if it occurs several times, include more surrounding lines to make it
/// unique. Near-misses still match when the match stays unique: quote,
/// dash and space style, trailing whitespace, tabs for spaces, a block
/// indented one level off, copied line-number prefixes. The new text is then
/// written in the file's own style (its quotes, indentation, line endings).
///
/// Rules: read the file with `read_file` in this session before editing it,
/// and read it again if it changed since (the edit is refused otherwise).
/// Paths are relative to the workspace root. `new_string` is inserted
/// literally. An empty `old_string` creates a new file with `new_string` as
/// its content. If the file is open in the user's editor, the edit is made
/// in the editor. The result shows a diff of the change with line numbers.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EditFileArgs {
    /// The file to change, relative to the workspace root.
    pub file_path: String,
    /// The exact text to replace (must be unique in the file unless
    /// replace_all is true).
    pub old_string: String,
    /// The text to put in its place (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence of old_string instead of exactly one.
    /// Default false.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditFile;

#[async_trait]
impl Tool for EditFile {
    type Args = EditFileArgs;
    type Plan = EditPlan;
    const NAME: &'static str = "edit_file";

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        ToolKind::Edit { path: ctx.workspace.resolve_lenient(&args.file_path) }
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.file_path.clone()
    }

    /// Refuse before the permission prompt: no one should approve an edit
    /// that cannot apply.
    /// Off the async runtime: matching in and diffing a large file is CPU
    /// work the editor's requests must not wait behind.
    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<EditPlan, ToolError> {
        let (workspace, args) = (Arc::clone(&ctx.workspace), args.clone());
        crate::diff::off_runtime(move || plan_edit(&workspace, &args)).await
    }

    fn preview(&self, _args: &Self::Args, plan: &EditPlan) -> Option<String> {
        Some(plan.diff.clone())
    }

    async fn call(&self, _args: Self::Args, plan: EditPlan, ctx: &ToolContext) -> Result<String, ToolError> {
        // The workspace checks again, at the moment of writing, that the
        // file is still what the plan was computed from.
        let display = ctx.workspace.display_path(&plan.path);
        let old = plan.old_text.as_deref().unwrap_or("");
        let part = chosen_part(old, &plan.new_text, &plan.diff, ctx.chosen_hunks.as_deref(), &display)?;
        let change = FileChange {
            path: plan.path.clone(),
            new_text: part.as_ref().map_or_else(|| Arc::clone(&plan.new_text), |part| Arc::clone(&part.text)),
            base: plan.base,
            label: format!("edit_file {display}"),
            review: ctx.approval.review_in_editor(),
            splices: if part.is_some() { None } else { plan.splices.clone() },
        };
        let written = ctx.workspace.write(change).await;
        let review_note = ctx.workspace.take_review_note(&plan.path);
        let outcome = written.map_err(|e| ToolError::model(with_review_note(e.message(), review_note.clone())))?;
        let mut out = match (plan.created, plan.rung.describe()) {
            (true, _) => format!("Successfully created {display}"),
            (false, Some(how)) => format!("Successfully edited {display} (matched {how})"),
            (false, None) => format!("Successfully edited {display}"),
        };
        if let Some(part) = &part {
            out.push_str(&format!(" in part: {}", part.summary));
        }
        if plan.replacements > 1 {
            out.push_str(&format!("\nReplaced {} occurrences.", plan.replacements));
        }
        if let Some(note) = applied_note(&outcome) {
            out.push('\n');
            out.push_str(&note);
        }
        let diff = match &part {
            Some(part) => {
                out.push('\n');
                out.push_str(&part.note);
                &part.diff
            }
            None => &plan.diff,
        };
        if !diff.is_empty() {
            out.push('\n');
            out.push_str(diff);
        }
        Ok(with_review_note(out, review_note))
    }
}

/// Everything `call` needs, computed without side effects.
pub struct EditPlan {
    path: std::path::PathBuf,
    /// The file does not exist yet.
    created: bool,
    new_text: Arc<str>,
    /// The text the change was planned on (`None`: the file is new), for
    /// writing only the hunks the user chose.
    old_text: Option<Arc<str>>,
    /// The diff shown for review and in the result, rendered once.
    diff: String,
    base: Option<ReadStamp>,
    rung: MatchRung,
    replacements: usize,
    /// The change's hunks as byte ranges of `old_text` (whole lines or
    /// within one line, see [`crate::workspace::minimal_splices`]), so an
    /// open document gets exactly these edits (no diff of the whole text).
    splices: Option<Vec<Splice>>,
}

fn plan_edit(workspace: &Workspace, args: &EditFileArgs) -> Result<EditPlan, ToolError> {
    if args.old_string == args.new_string {
        return Err(ToolError::model(
            "Error: old_string and new_string are identical, so there is nothing to change. Put the new text in new_string.",
        ));
    }
    let path = workspace.resolve(&args.file_path).map_err(|e| ToolError::model(e.message()))?;
    let display = workspace.display_path(&path);
    let current = fresh_existing(workspace, &path, "editing")?;
    let Some(current) = current else {
        if args.old_string.is_empty() {
            return Ok(EditPlan {
                path,
                created: true,
                new_text: Arc::from(args.new_string.as_str()),
                old_text: None,
                diff: render_diff("", &args.new_string),
                base: None,
                rung: MatchRung::Exact,
                replacements: 1,
                splices: None,
            });
        }
        return Err(ToolError::model(format!(
            "Error: file not found: {display}. Check the path (relative to the workspace root), or create the file with write_file."
        )));
    };
    if args.old_string.is_empty() {
        if !current.text.is_empty() {
            return Err(ToolError::model(format!(
                "Error: old_string is empty, but {display} already has content. Give the exact text to replace, or use write_file to replace the whole file."
            )));
        }
        return Ok(EditPlan {
            path,
            created: false,
            new_text: Arc::from(args.new_string.as_str()),
            old_text: Some(Arc::clone(&current.text)),
            diff: render_diff("", &args.new_string),
            base: Some(current.stamp),
            rung: MatchRung::Exact,
            replacements: 1,
            splices: Some(vec![Splice { range: 0..0, text: args.new_string.clone() }]),
        });
    }
    let found = edit_match::find(&current.text, &args.old_string, args.replace_all)
        .map_err(|err| ToolError::model(find_error_message(err, &display, &current.text, &args.old_string)))?;
    let replacements = edit_match::plan(&current.text, &found, &args.old_string, &args.new_string);
    // Everything here is O(edit) but the new text itself (one copy): the
    // check for no change and the diff look only at what the splices touch.
    if leaves_unchanged(&current.text, &replacements) {
        return Err(ToolError::model(format!(
            "Error: this edit would leave {display} unchanged: new_string differs from the matched text only in ways the edit writes as the file has them (line endings, quotes, dashes, spacing, indentation or line-number prefixes)."
        )));
    }
    let new_text = crate::workspace::spliced(&current.text, &replacements);
    // The editor gets the change's hunks, not the matched range: an
    // old_string of twenty lines that changes two is two hunks to review.
    let hunks = crate::workspace::minimal_splices(&current.text, &replacements);
    Ok(EditPlan {
        path,
        created: false,
        new_text,
        old_text: Some(Arc::clone(&current.text)),
        diff: render_splice_diff(&current.text, &replacements),
        base: Some(current.stamp),
        rung: found.rung,
        replacements: replacements.len(),
        splices: Some(hunks),
    })
}

/// True when splicing `splices` (in order, not overlapping) into `text`
/// gives `text` back. Only the span from the first splice to the last is
/// compared, so the answer costs O(edit) for a small edit in a big file.
fn leaves_unchanged(text: &str, splices: &[Splice]) -> bool {
    let (Some(first), Some(last)) = (splices.first(), splices.last()) else { return true };
    let span = first.range.start..last.range.end;
    if crate::workspace::len_after(span.len(), splices) != span.len() {
        return false;
    }
    let mut spliced = String::with_capacity(span.len());
    let mut copied = span.start;
    for splice in splices {
        spliced.push_str(&text[copied..splice.range.start]);
        spliced.push_str(&splice.text);
        copied = splice.range.end;
    }
    spliced == text[span]
}

fn find_error_message(err: FindError, display: &str, text: &str, old: &str) -> String {
    match err {
        FindError::NotFound => {
            let mut message = format!("Error: old_string not found in {display}.");
            match edit_match::nearest(text, old) {
                Some(candidate) => {
                    let lines = if candidate.lines.len() == 1 {
                        format!("line {}", candidate.lines.start + 1)
                    } else {
                        format!("lines {}\u{2013}{}", candidate.lines.start + 1, candidate.lines.end)
                    };
                    let differ = match candidate.differing {
                        0 => "it differs only in spacing or indentation".to_string(),
                        1 => "1 line differs".to_string(),
                        n => format!("{n} lines differ"),
                    };
                    message.push_str(&format!(
                        " The closest text is at {lines} ({differ}):\n{}\nCopy old_string from the file exactly, or read it again with read_file.",
                        candidate.shown
                    ));
                }
                None => {
                    message.push_str(
                        " Read the file again with read_file and copy the text exactly, including whitespace and indentation.",
                    );
                    if old.lines().any(|line| edit_match::split_number_prefix(line).is_some()) {
                        message.push_str(
                            " old_string seems to include the line-number prefixes that read_file shows (\"  12 | \"); leave them out.",
                        );
                    }
                }
            }
            message
        }
        FindError::NotUnique { count, rung, lines } => {
            let mut message = format!("Error: old_string found {count} times in {display}. Must be unique.");
            let at = lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
            let more = if count > lines.len() { ", \u{2026}" } else { "" };
            match rung.describe() {
                Some(how) => message.push_str(&format!(" It matched {how}, at lines {at}{more}.")),
                None => message.push_str(&format!(" It is at lines {at}{more}.")),
            }
            message.push_str(
                " Include more surrounding lines in old_string to pick one occurrence, or set replace_all to true to replace every one.",
            );
            message
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_is_decided_on_the_spliced_span() {
        let splice = |range: std::ops::Range<usize>, text: &str| Splice { range, text: text.into() };
        assert!(leaves_unchanged("abc", &[splice(1..2, "b")]));
        assert!(!leaves_unchanged("abc", &[splice(1..2, "B")]));
        // Each splice changes something, together nothing: "aab" -> "" + "a" + "ab".
        assert!(leaves_unchanged("aab", &[splice(0..1, ""), splice(1..1, "a")]));
        assert!(!leaves_unchanged("aab", &[splice(0..1, ""), splice(1..1, "b")]));
        assert!(!leaves_unchanged("abc", &[splice(0..3, "ab")]));
    }

    #[test]
    fn diff_of_a_small_edit_in_a_long_file_has_the_right_line_numbers() {
        let old: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 500\n", "line 500\ninserted\n").replace("line 502\n", "");
        expect_test::expect![[r#"
            @@ -498,8 +498,8 @@
             498   line 498
             499   line 499
             500   line 500
             501 + inserted
             502   line 501
             502 - line 502
             503   line 503
             504   line 504
             505   line 505"#]]
        .assert_eq(&render_diff(&old, &new));
        assert_eq!(render_diff("a\n", "a\n"), "");
        assert_eq!(render_diff("", "x\n"), "@@ -1,0 +1,1 @@\n   1 + x");
        assert_eq!(render_diff("x\ny\n", "x\nz\n"), "@@ -1,2 +1,2 @@\n   1   x\n   2 - y\n   2 + z");
        assert_eq!(render_diff("x\ny", "x\ny\n"), "@@ -1,2 +1,2 @@\n   1   x\n   2 - y [no newline at end of file]\n   2 + y");
    }
}
