//! What the tools that change files share: the "existing, read and
//! unchanged since" check with its refusals, and the note for a change that
//! reached an editor buffer but not the disk.

use std::path::Path;
use std::sync::Arc;

use crate::tools::ToolError;
use crate::workspace::{DECLINED_HUNKS, FileText, ReadError, Workspace, WriteOutcome, MAX_TEXT_FILE_BYTES};

/// What to tell the model about where the change went: that it was
/// applied around the user's change made while it was reviewed (its line
/// numbers moved), and that it reached an editor buffer but not the disk
/// (the next shell command, a build or the tests, still sees the old file).
pub(crate) fn applied_note(outcome: &WriteOutcome) -> Option<String> {
    let WriteOutcome::AppliedToBuffer { saved, rebased } = outcome else { return None };
    let mut notes = Vec::new();
    if let Some(what) = rebased {
        notes.push(format!(
            "Note: the file changed in the editor while the edit waited to be applied ({what}); the edit was applied to the new text, around that change, which is kept. Line numbers below are from before it."
        ));
    }
    if !saved {
        notes.push(
            "Note: the file is open in the editor; the change is in the editor, unsaved. Commands run with run_shell see the old content on disk until it is saved."
                .to_string(),
        );
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// `text` (an edit's result) with the user's review comments on the
/// edit, when there are any ([`Workspace::take_review_note`]), after its
/// first line: before a long diff, so a transcript that cuts results
/// keeps them, and the model reads them with what became of the edit.
pub(crate) fn with_review_note(text: String, note: Option<String>) -> String {
    let Some(note) = note else { return text };
    match text.split_once('\n') {
        Some((first, rest)) => format!("{first}\n{note}\n{rest}"),
        None => format!("{text}\n{note}"),
    }
}

/// The part of a change the user took at the terminal's per-hunk review.
pub(crate) struct ChosenPart {
    /// What to write instead of the whole change.
    pub text: Arc<str>,
    /// The diff of what it changes.
    pub diff: String,
    /// "hunks 1 and 3 of 3 applied, hunk 2 declined", for the result's
    /// first line.
    pub summary: String,
    /// For the model: the declined hunks with their headers, and what to do.
    pub note: String,
}

/// The part of a change from `old` to `new` the user took (`chosen`: the
/// preview's hunks to write); `Ok(None)` when the whole change was
/// approved.
/// `shown` is the diff the user reviewed (its `@@` lines name the hunks).
pub(crate) fn chosen_part(old: &str, new: &str, shown: &str, chosen: Option<&[bool]>, display: &str) -> Result<Option<ChosenPart>, ToolError> {
    let Some(keep) = chosen else { return Ok(None) };
    let Some(text) = super::text::select_hunks(old, new, keep) else {
        return Err(ToolError::model(format!(
            "Error: the edit to {display} was not applied: the hunks the user chose no longer match the change, so nothing was written. Make the change again; the user will review it again."
        )));
    };
    let headers: Vec<&str> = shown.lines().filter(|l| l.starts_with("@@")).collect();
    let numbers = |kept: bool| -> Vec<usize> { keep.iter().enumerate().filter(|(_, k)| **k == kept).map(|(i, _)| i + 1).collect() };
    let (taken, left) = (numbers(true), numbers(false));
    let list = |n: &[usize]| {
        let words: Vec<String> = n.iter().map(ToString::to_string).collect();
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("s {} and {last}", rest.join(", ")),
            _ => format!(" {}", words.join("")),
        }
    };
    let summary = format!("hunk{} of {} applied, hunk{} declined", list(&taken), keep.len(), list(&left));
    let declined: Vec<String> = left.iter().map(|n| format!("{n} ({})", headers.get(n - 1).copied().unwrap_or("?"))).collect();
    let note = format!(
        "Note: the user applied {} of the {} hunks; {DECLINED_HUNKS}{} {} (numbered as in the change shown, with their old and new lines). The file holds only the applied hunks: do not make the declined ones again unless the user asks, and read the file before editing near them.",
        taken.len(),
        keep.len(),
        if left.len() == 1 { "" } else { "s" },
        declined.join(", ")
    );
    let diff = super::text::render_diff(old, &text);
    Ok(Some(ChosenPart { text: Arc::from(text), diff, summary, note }))
}

/// The current text of an existing file that the agent has read and that has
/// not changed since; `None` when there is no such file yet. Every other case
/// is a refusal written for the model. `verb` is "editing" or "writing".
pub(crate) fn fresh_existing(workspace: &Workspace, path: &Path, verb: &str) -> Result<Option<FileText>, ToolError> {
    let display = workspace.display_path(path);
    match workspace.read(path) {
        Ok(current) => {
            workspace.check_fresh(&current, verb).map_err(ToolError::Model)?;
            Ok(Some(current))
        }
        // Read in this run, gone now: deleted or renamed behind the agent's
        // back. Say so once instead of quietly creating it again; a second
        // call (the agent deleted it itself and means to re-create it) goes on.
        Err(ReadError::NotFound) if workspace.ledger().get(path).is_some() => {
            workspace.ledger().forget(path);
            Err(ToolError::model(format!(
                "Error: {display} was deleted or renamed after you read it, so it was not changed. Check with list_files where it went, or ask the user; if you mean to create it anew, call write_file again."
            )))
        }
        Err(ReadError::NotFound) => Ok(None),
        Err(ReadError::IsDirectory) => Err(ToolError::model(format!(
            "Error: {display} is a directory, not a file. Give the path of a file."
        ))),
        Err(ReadError::Binary) => Err(ToolError::model(format!(
            "Error: {display} is a binary file (or is not UTF-8 text); only text files can be changed with edit_file or write_file."
        ))),
        Err(ReadError::TooLarge { bytes }) => Err(ToolError::model(format!(
            "Error: {display} is {bytes} bytes, over the {MAX_TEXT_FILE_BYTES}-byte limit for edit_file and write_file. Change it with a command through run_shell instead."
        ))),
        Err(err @ (ReadError::Io(_) | ReadError::Editor(_))) => Err(ToolError::model(err.message(&display))),
    }
}
