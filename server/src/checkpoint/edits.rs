//! A run's edits to an open document, kept as the edits themselves: for
//! each, the text it replaced and what replaced it, where. A checkpoint of
//! a buffer edit costs the size of the edit, not a copy of the document
//! after it.
//!
//! Undo applies the edits backwards to the text the run left, and redo
//! forwards to the text before it, each only when the document's
//! fingerprint is the one the run left there (every replaced span is
//! checked too, and the result's fingerprint); otherwise the restore takes
//! the copies ([`super::restore`]): the file's content before the run,
//! kept once at its first change, and the edits applied to it for what the
//! run left.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::blobs::BlobId;
use crate::workspace::{fingerprint, fingerprint_scheme, Splice};

/// One replacement of an edit: at byte `at` of the text before the edit,
/// `old` became `new`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Replaced {
    pub at: usize,
    pub old: String,
    pub new: String,
}

/// The edits a run made to one open document, in order, each given as
/// replacements of the text before it, in order and not overlapping.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EditChain {
    pub path: PathBuf,
    /// The file entry's `after` when the chain was made: a change recorded
    /// since in another way (a shell command's look) moves it, and the
    /// chain no longer says what the run left.
    pub base: Option<BlobId>,
    /// The [`fingerprint_scheme`] of the build that recorded it: another
    /// build's fingerprints are not compared.
    pub scheme: u64,
    /// The [`fingerprint`] of the text before the first edit.
    pub before: u64,
    /// The [`fingerprint`] of the text after the last edit.
    pub after: u64,
    pub steps: Vec<Vec<Replaced>>,
}

impl EditChain {
    /// One edit: `splices` of `before`, `None` when they do not fit it.
    pub fn step(before: &str, splices: &[Splice]) -> Option<Vec<Replaced>> {
        let mut end = 0;
        splices
            .iter()
            .map(|splice| {
                if splice.range.start < end {
                    return None;
                }
                end = splice.range.end;
                Some(Replaced { at: splice.range.start, old: before.get(splice.range.clone())?.to_string(), new: splice.text.clone() })
            })
            .collect()
    }

    /// Made by this build (its fingerprints compare with ours).
    pub fn comparable(&self) -> bool {
        self.scheme == fingerprint_scheme()
    }

    /// The text before the edits, from `after`, the text after them; `None`
    /// when `after` is not what the edits left.
    pub fn undo(&self, after: &str) -> Option<String> {
        if !self.comparable() || fingerprint(after.as_bytes()) != self.after {
            return None;
        }
        let mut text = None::<String>;
        for step in self.steps.iter().rev() {
            text = Some(backward(text.as_deref().unwrap_or(after), step)?);
        }
        let text = text.unwrap_or_else(|| after.to_string());
        (fingerprint(text.as_bytes()) == self.before).then_some(text)
    }

    /// The text after the edits, from `before`, the text before them;
    /// `None` when `before` is not what they were made on.
    pub fn redo(&self, before: &str) -> Option<String> {
        if !self.comparable() || fingerprint(before.as_bytes()) != self.before {
            return None;
        }
        let mut text = None::<String>;
        for step in &self.steps {
            text = Some(forward(text.as_deref().unwrap_or(before), step)?);
        }
        let text = text.unwrap_or_else(|| before.to_string());
        (fingerprint(text.as_bytes()) == self.after).then_some(text)
    }
}

/// `text` with one edit made: each `old` must be where it says.
fn forward(text: &str, step: &[Replaced]) -> Option<String> {
    let grows: usize = step.iter().map(|r| r.new.len()).sum();
    let mut out = String::with_capacity(text.len() + grows);
    let mut copied = 0;
    for replaced in step {
        let end = replaced.at.checked_add(replaced.old.len())?;
        if replaced.at < copied || text.get(replaced.at..end)? != replaced.old {
            return None;
        }
        out.push_str(text.get(copied..replaced.at)?);
        out.push_str(&replaced.new);
        copied = end;
    }
    out.push_str(text.get(copied..)?);
    Some(out)
}

/// `text` with one edit taken back: each `new` must be where the edit put it.
fn backward(text: &str, step: &[Replaced]) -> Option<String> {
    let grows: usize = step.iter().map(|r| r.old.len()).sum();
    let mut out = String::with_capacity(text.len() + grows);
    let mut copied = 0;
    // Where a replacement's `at` is in the text after the edit: moved by
    // what the replacements before it added or took away.
    let mut shift: isize = 0;
    for replaced in step {
        let at = replaced.at.checked_add_signed(shift)?;
        let end = at.checked_add(replaced.new.len())?;
        if at < copied || text.get(at..end)? != replaced.new {
            return None;
        }
        out.push_str(text.get(copied..at)?);
        out.push_str(&replaced.old);
        copied = end;
        shift += replaced.new.len() as isize - replaced.old.len() as isize;
    }
    out.push_str(text.get(copied..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn splice(range: std::ops::Range<usize>, text: &str) -> Splice {
        Splice { range, text: text.into() }
    }

    fn chain(texts: &[&str], steps: Vec<Vec<Replaced>>) -> EditChain {
        EditChain {
            path: "a.txt".into(),
            base: None,
            scheme: fingerprint_scheme(),
            before: fingerprint(texts[0].as_bytes()),
            after: fingerprint(texts[texts.len() - 1].as_bytes()),
            steps,
        }
    }

    #[test]
    fn edits_go_back_and_forth_exactly() {
        let texts = ["one two three\n", "one 2 three and more\n", "ONE 2 three and more\n"];
        let steps = vec![
            EditChain::step(texts[0], &[splice(4..7, "2"), splice(13..13, " and more")]).unwrap(),
            EditChain::step(texts[1], &[splice(0..3, "ONE")]).unwrap(),
        ];
        let chain = chain(&texts, steps);
        assert_eq!(chain.undo(texts[2]).as_deref(), Some(texts[0]));
        assert_eq!(chain.redo(texts[0]).as_deref(), Some(texts[2]));
        // Not the text the edits left (or were made on): nothing.
        assert_eq!(chain.undo(texts[1]), None);
        assert_eq!(chain.redo("one two three!\n"), None);
    }

    #[test]
    fn splices_that_do_not_fit_make_no_step() {
        assert_eq!(EditChain::step("abc", &[splice(1..5, "x")]), None);
        assert_eq!(EditChain::step("abc", &[splice(1..2, "x"), splice(0..1, "y")]), None);
        assert_eq!(EditChain::step("é", &[splice(1..2, "x")]), None, "not on a character boundary");
    }

    proptest! {
        /// Any in-order, non-overlapping splices of any text: the edit's
        /// inverse gives the text back, and the edit the text after.
        #[test]
        fn any_edit_is_undone_and_redone_byte_for_byte(
            before in "[a-c\\né]{0,40}",
            cuts in proptest::collection::vec((0usize..48, 0usize..6, "[x-zé\\n]{0,5}"), 0..6),
        ) {
            let mut splices = Vec::new();
            let mut from = 0;
            for (gap, len, text) in cuts {
                let start = from + gap;
                let end = start + len;
                if end > before.len() || !before.is_char_boundary(start) || !before.is_char_boundary(end) {
                    continue;
                }
                splices.push(splice(start..end, &text));
                from = end;
            }
            let after = crate::tools::support::edit_match::apply(&before, &splices);
            let step = EditChain::step(&before, &splices).unwrap();
            let chain = chain(&[&before, &after], vec![step]);
            prop_assert_eq!(chain.undo(&after), Some(before.clone()));
            prop_assert_eq!(chain.redo(&before), Some(after.clone()));
        }
    }
}
