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

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit_match::{self, FindError, MatchRung};
use super::write_file::{fresh_existing, unsaved_note};
use super::{Tool, ToolContext, ToolError};
use crate::workspace::{FileChange, ReadStamp, Workspace};

/// Diff lines shown after a successful edit before the rest is summarised.
const MAX_DIFF_LINES: usize = 200;

/// Characters of one diff line before it is cut.
const MAX_DIFF_LINE_CHARS: usize = 500;

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
#[derive(Debug, Deserialize, JsonSchema)]
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
    const NAME: &'static str = "edit_file";

    fn summary(&self, args: &Self::Args) -> String {
        args.file_path.clone()
    }

    async fn validate(&self, args: &Self::Args, ctx: &ToolContext) -> Result<(), ToolError> {
        // Refuse before the permission prompt: no one should approve an edit
        // that cannot apply.
        plan_edit(&ctx.workspace, args).map(|_| ())
    }

    async fn call(&self, args: Self::Args, ctx: &ToolContext) -> Result<String, ToolError> {
        // Plan again: the file may have changed while the user was asked.
        let plan = plan_edit(&ctx.workspace, &args)?;
        let display = ctx.workspace.display_path(&plan.path);
        let change = FileChange {
            path: plan.path.clone(),
            new_text: plan.new_text.clone(),
            base: plan.base,
            label: format!("edit_file {display}"),
        };
        let outcome = ctx.workspace.write(change).await.map_err(|e| ToolError::model(e.message()))?;
        let mut out = match (plan.old_text.is_none(), plan.rung.describe()) {
            (true, _) => format!("Successfully created {display}"),
            (false, Some(how)) => format!("Successfully edited {display} (matched {how})"),
            (false, None) => format!("Successfully edited {display}"),
        };
        if plan.replacements > 1 {
            out.push_str(&format!("\nReplaced {} occurrences.", plan.replacements));
        }
        if let Some(note) = unsaved_note(&outcome) {
            out.push('\n');
            out.push_str(note);
        }
        let diff = render_diff(plan.old_text.as_deref().unwrap_or(""), &plan.new_text);
        if !diff.is_empty() {
            out.push('\n');
            out.push_str(&diff);
        }
        Ok(out)
    }
}

/// Everything `call` needs, computed without side effects.
struct EditPlan {
    path: std::path::PathBuf,
    /// The text the edit starts from; `None` when the file is created.
    old_text: Option<String>,
    new_text: String,
    base: Option<ReadStamp>,
    rung: MatchRung,
    replacements: usize,
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
                old_text: None,
                new_text: args.new_string.clone(),
                base: None,
                rung: MatchRung::Exact,
                replacements: 1,
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
            old_text: Some(String::new()),
            new_text: args.new_string.clone(),
            base: Some(current.stamp),
            rung: MatchRung::Exact,
            replacements: 1,
        });
    }
    let found = edit_match::find(&current.text, &args.old_string, args.replace_all)
        .map_err(|err| ToolError::model(find_error_message(err, &display, &current.text, &args.old_string)))?;
    let replacements = edit_match::plan(&current.text, &found, &args.old_string, &args.new_string);
    let new_text = edit_match::apply(&current.text, &replacements);
    if new_text == current.text {
        return Err(ToolError::model(format!(
            "Error: this edit would leave {display} unchanged: new_string differs from the matched text only in ways the edit writes as the file has them (line endings, quotes, dashes, spacing, indentation or line-number prefixes)."
        )));
    }
    Ok(EditPlan {
        path,
        old_text: Some(current.text),
        new_text,
        base: Some(current.stamp),
        rung: found.rung,
        replacements: replacements.len(),
    })
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

/// Lines of unchanged context around each change in the diff.
const DIFF_CONTEXT: usize = 3;

/// A unified diff with line numbers: `-` lines carry their old number,
/// context and `+` lines their new one (what read_file will show next).
fn render_diff(old: &str, new: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    // Only the region between the common first and last lines can differ:
    // diffing just that (plus context) keeps a small edit to a big file as
    // cheap as the edit itself.
    let window = DiffWindow::new(old, new);
    // A deadline keeps a pathological diff bounded; similar then falls back
    // to a coarser (still correct) diff.
    let diff = TextDiff::configure().timeout(Duration::from_millis(500)).diff_lines(window.old, window.new);
    let groups = diff.grouped_ops(DIFF_CONTEXT);
    let skipped = window.skipped_lines;
    let width = digits(skipped + window.old.lines().count().max(window.new.lines().count())).max(4);
    let mut lines: Vec<String> = Vec::new();
    for group in &groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_len = last.old_range().end - old_start;
        let new_len = last.new_range().end - new_start;
        lines.push(format!("@@ -{},{old_len} +{},{new_len} @@", skipped + old_start + 1, skipped + new_start + 1));
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, number) = match change.tag() {
                    ChangeTag::Delete => ('-', change.old_index()),
                    ChangeTag::Insert => ('+', change.new_index()),
                    ChangeTag::Equal => (' ', change.new_index()),
                };
                let number = number.map_or(0, |n| skipped + n + 1);
                let text = change.value().trim_end_matches(['\n', '\r']);
                let mut text = match text.char_indices().nth(MAX_DIFF_LINE_CHARS) {
                    Some((end, _)) => format!("{} [...]", &text[..end]),
                    None => text.to_string(),
                };
                // Else "- b" / "+ b" would look like a change to nothing.
                if change.tag() != ChangeTag::Equal && !change.value().ends_with('\n') {
                    text.push_str(" [no newline at end of file]");
                }
                lines.push(format!("{number:>width$} {sign} {text}").trim_end().to_string());
            }
        }
    }
    if lines.len() > MAX_DIFF_LINES {
        let more = lines.len() - MAX_DIFF_LINES;
        lines.truncate(MAX_DIFF_LINES);
        lines.push(format!("... (diff cut: {more} more lines; read the file to see the rest)"));
    }
    lines.join("\n")
}

/// The parts of two texts a diff needs to look at: everything but their
/// common leading and trailing lines, keeping [`DIFF_CONTEXT`] of each.
struct DiffWindow<'a> {
    old: &'a str,
    new: &'a str,
    /// Whole lines cut from the front of both texts.
    skipped_lines: usize,
}

impl<'a> DiffWindow<'a> {
    fn new(old: &'a str, new: &'a str) -> Self {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        let common_prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
        let max_suffix = old_lines.len().min(new_lines.len()) - common_prefix;
        let common_suffix =
            old_lines.iter().rev().zip(new_lines.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
        let skipped_lines = common_prefix.saturating_sub(DIFF_CONTEXT);
        let tail_cut = common_suffix.saturating_sub(DIFF_CONTEXT);
        let slice = |text: &'a str, lines: &[&str]| -> &'a str {
            let start: usize = lines[..skipped_lines].iter().map(|l| l.len()).sum();
            let end: usize = text.len() - lines[lines.len() - tail_cut..].iter().map(|l| l.len()).sum::<usize>();
            &text[start..end]
        };
        DiffWindow { old: slice(old, &old_lines), new: slice(new, &new_lines), skipped_lines }
    }
}

fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
